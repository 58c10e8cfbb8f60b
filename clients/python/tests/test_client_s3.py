"""FerryClient's S3 side against a real S3 server: moto's, started as a subprocess."""

import concurrent.futures
import hashlib
import io
import json
import socket
import unittest

from ferry_client import FerryClient, FerryConnectionError, FerryError

import support

BUCKET = "ferry-test"
BLOB = bytes(range(256)) * 40  # 10 KiB, every byte's position is recognisable


class S3Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = support.MotoServer()
        cls.s3 = cls.server.boto3()
        cls.s3.create_bucket(Bucket=BUCKET)
        cls.s3.put_object(Bucket=BUCKET, Key="blob.bin", Body=BLOB)
        cls.etag = cls.s3.head_object(Bucket=BUCKET, Key="blob.bin")["ETag"]
        # moto serves private objects to signed requests only; without its auth checks any key will do.
        cls.client = FerryClient(cls.server.url, access_key="testing", secret_key="testing")

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()

    def test_get_whole_object(self):
        self.assertEqual(self.client.get(BUCKET, "blob.bin"), BLOB)

    def test_get_range(self):
        self.assertEqual(self.client.get(BUCKET, "blob.bin", offset=300, length=1000), BLOB[300:1300])
        self.assertEqual(self.client.get(BUCKET, "blob.bin", offset=0, length=1), BLOB[:1])
        self.assertEqual(self.client.get(BUCKET, "blob.bin", offset=10000), BLOB[10000:])
        self.assertEqual(self.client.get(BUCKET, "blob.bin", length=7), BLOB[:7])
        self.assertEqual(self.client.get(BUCKET, "blob.bin", offset=5, length=0), b"")

    def test_range_past_the_end_returns_what_exists(self):
        self.assertEqual(self.client.get(BUCKET, "blob.bin", offset=len(BLOB) - 10, length=100), BLOB[-10:])

    def test_bad_range_arguments(self):
        with self.assertRaises(ValueError):
            self.client.get(BUCKET, "blob.bin", offset=-1, length=3)

    def test_if_match(self):
        self.assertEqual(self.client.get(BUCKET, "blob.bin", 0, 16, etag=self.etag), BLOB[:16])
        self.assertEqual(self.client.get(BUCKET, "blob.bin", 0, 16, etag=self.etag.strip('"')), BLOB[:16])
        with self.assertRaises(FerryError) as caught:
            self.client.get(BUCKET, "blob.bin", 0, 16, etag='"0123456789abcdef0123456789abcdef"')
        self.assertEqual((caught.exception.status, caught.exception.code), (412, "PreconditionFailed"))

    def test_missing_key_is_an_s3_error(self):
        with self.assertRaises(FerryError) as caught:
            self.client.get(BUCKET, "no/such/key")
        e = caught.exception
        self.assertEqual((e.status, e.code), (404, "NoSuchKey"))
        self.assertTrue(e.message)
        self.assertIn("GET /ferry-test/no/such/key", str(e))

    def test_missing_bucket(self):
        with self.assertRaises(FerryError) as caught:
            self.client.get("no-such-bucket", "k")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "NoSuchBucket"))

    def test_head(self):
        meta = self.client.head(BUCKET, "blob.bin")
        self.assertEqual(meta["size"], len(BLOB))
        self.assertEqual(meta["etag"], self.etag)
        self.assertIsNone(meta["durability"])  # moto is not ferry
        self.assertIn("last-modified", meta["headers"])

    def test_head_missing(self):
        with self.assertRaises(FerryError) as caught:
            self.client.head(BUCKET, "missing")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "NotFound"))

    def test_put_bytes(self):
        data = b"checkpoint " * 1000
        answer = self.client.put(BUCKET, "ckpt/step-1.pt", data)
        self.assertEqual(answer["etag"], f'"{hashlib.md5(data).hexdigest()}"')
        self.assertIn("durability", answer)
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key="ckpt/step-1.pt")["Body"].read(), data)

    def test_put_file(self):
        data = bytes(reversed(BLOB)) * 3
        self.client.put(BUCKET, "ckpt/from-file.pt", io.BytesIO(data), content_type="application/octet-stream")
        head = self.s3.head_object(Bucket=BUCKET, Key="ckpt/from-file.pt")
        self.assertEqual(head["ContentLength"], len(data))
        self.assertEqual(self.client.get(BUCKET, "ckpt/from-file.pt"), data)

    def test_put_refuses_text(self):
        with self.assertRaises(TypeError):
            self.client.put(BUCKET, "k", "text")

    def test_odd_keys_round_trip(self):
        for key in ["with space/and+plus", "dollar$and&amp", "unicode/é世界", "tilde~star*paren()", "a//b"]:
            with self.subTest(key=key):
                self.client.put(BUCKET, key, key.encode("utf-8"))
                self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read(), key.encode("utf-8"))
                self.assertEqual(self.client.get(BUCKET, key), key.encode("utf-8"))

    def test_threads_share_one_client(self):
        def read(i):
            return self.client.get(BUCKET, "blob.bin", offset=i * 10, length=10)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            results = list(pool.map(read, range(200)))
        self.assertEqual(results, [BLOB[i * 10:i * 10 + 10] for i in range(200)])

    def test_reconnects_once_when_the_connection_dropped(self):
        client = FerryClient(self.server.url, access_key="testing", secret_key="testing")
        self.assertEqual(client.get(BUCKET, "blob.bin", 0, 4), BLOB[:4])
        conn = client._connection()
        conn.connect()
        conn.sock.shutdown(socket.SHUT_RDWR)  # the kept-alive connection is dead when the next request goes out
        self.assertEqual(client.get(BUCKET, "blob.bin", 4, 4), BLOB[4:8])
        client.close()

    def test_api_error_from_a_non_ferry_server_is_a_ferry_error(self):
        with self.assertRaises(FerryError):
            self.client.status()

    def test_unreachable_daemon(self):
        client = FerryClient(f"http://127.0.0.1:{support.free_port()}", access_key="", secret_key="", timeout=5)
        with self.assertRaises(FerryConnectionError) as caught:
            client.get(BUCKET, "blob.bin")
        self.assertIsNone(caught.exception.status)
        self.assertIn("cannot talk to http://127.0.0.1:", str(caught.exception))


class SignedS3Test(unittest.TestCase):
    """Signed requests against moto with its signature checks on (after the setup requests)."""

    @classmethod
    def setUpClass(cls):
        # create_user, create_access_key, put_user_policy and create_bucket run unchecked; then every
        # request must be signed with the user's key.
        cls.server = support.MotoServer(no_auth_actions=4)
        iam = cls.server.boto3("iam")
        iam.create_user(UserName="trainer")
        key = iam.create_access_key(UserName="trainer")["AccessKey"]
        iam.put_user_policy(UserName="trainer", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        cls.server.boto3().create_bucket(Bucket=BUCKET)
        cls.access_key, cls.secret_key = key["AccessKeyId"], key["SecretAccessKey"]

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_signed_put_get_head(self):
        client = FerryClient(self.server.url, self.access_key, self.secret_key)
        # moto's own check mis-encodes keys with characters such as '$' or non-ASCII (boto3's signatures
        # fail there too), so this test keeps to letters, digits, '-', '_', '.', '/' and spaces.
        for key in ["plain.bin", "dir/with space/x_y-z.bin"]:
            with self.subTest(key=key):
                self.client_round_trip(client, key)
        client.close()

    def client_round_trip(self, client, key):
        data = b"signed " * 500
        etag = client.put(BUCKET, key, data)["etag"]
        self.assertEqual(client.get(BUCKET, key), data)
        self.assertEqual(client.get(BUCKET, key, offset=7, length=6, etag=etag), data[7:13])
        self.assertEqual(client.head(BUCKET, key)["size"], len(data))

    def test_keys_from_the_environment(self):
        import os
        saved = {k: os.environ.get(k) for k in ("FERRY_ACCESS_KEY", "FERRY_SECRET_KEY")}
        os.environ["FERRY_ACCESS_KEY"], os.environ["FERRY_SECRET_KEY"] = self.access_key, self.secret_key
        try:
            client = FerryClient(self.server.url)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.client_round_trip(client, "from-env.bin")

    def test_wrong_secret_is_refused(self):
        client = FerryClient(self.server.url, self.access_key, "not-the-secret")
        with self.assertRaises(FerryError) as caught:
            client.get(BUCKET, "plain.bin")
        self.assertEqual((caught.exception.status, caught.exception.code), (403, "SignatureDoesNotMatch"))

    def test_unsigned_is_refused(self):
        client = FerryClient(self.server.url, access_key="", secret_key="")
        with self.assertRaises(FerryError) as caught:
            client.get(BUCKET, "plain.bin")
        self.assertEqual(caught.exception.status, 403)

    def test_one_key_alone_is_a_mistake(self):
        with self.assertRaises(ValueError):
            FerryClient(self.server.url, access_key="AKIA", secret_key="")


if __name__ == "__main__":
    unittest.main()
