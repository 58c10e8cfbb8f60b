"""The SigV4 signer against AWS's published example, and against botocore's signer where it is installed."""

import importlib.util
import unittest

from ferry_client import sigv4

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AMZ_DATE = "20130524T000000Z"


class AwsExampleTest(unittest.TestCase):
    """The GET Object example of the S3 docs ("Signature Calculations for the Authorization Header:
    Transferring Payload in a Single Chunk"): the first 10 bytes of examplebucket/test.txt."""

    HEADERS = {
        "Host": "examplebucket.s3.amazonaws.com",
        "Range": "bytes=0-9",
        "x-amz-content-sha256": sigv4.EMPTY_SHA256,
        "x-amz-date": AMZ_DATE,
    }

    def test_canonical_request(self):
        creq, signed = sigv4.canonical_request("GET", "/test.txt", [], self.HEADERS, sigv4.EMPTY_SHA256)
        self.assertEqual(creq, "\n".join([
            "GET",
            "/test.txt",
            "",
            "host:examplebucket.s3.amazonaws.com",
            "range:bytes=0-9",
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "x-amz-date:20130524T000000Z",
            "",
            "host;range;x-amz-content-sha256;x-amz-date",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ]))
        self.assertEqual(signed, "host;range;x-amz-content-sha256;x-amz-date")

    def test_string_to_sign(self):
        creq, _ = sigv4.canonical_request("GET", "/test.txt", [], self.HEADERS, sigv4.EMPTY_SHA256)
        self.assertEqual(sigv4.string_to_sign(AMZ_DATE, "20130524/us-east-1/s3/aws4_request", creq), "\n".join([
            "AWS4-HMAC-SHA256",
            "20130524T000000Z",
            "20130524/us-east-1/s3/aws4_request",
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
        ]))

    def test_authorization_header(self):
        signer = sigv4.Signer(ACCESS_KEY, SECRET_KEY, "us-east-1")
        headers = {"Host": "examplebucket.s3.amazonaws.com", "Range": "bytes=0-9"}
        added = signer.sign("GET", "/test.txt", [], headers, sigv4.EMPTY_SHA256, amz_date=AMZ_DATE)
        self.assertEqual(added["x-amz-date"], AMZ_DATE)
        self.assertEqual(added["x-amz-content-sha256"], sigv4.EMPTY_SHA256)
        self.assertEqual(added["authorization"],
                         "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                         "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                         "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")

    def test_content_length_and_user_agent_are_not_signed(self):
        signer = sigv4.Signer(ACCESS_KEY, SECRET_KEY, "us-east-1")
        headers = {"Host": "examplebucket.s3.amazonaws.com", "Range": "bytes=0-9", "Content-Length": "0",
                   "User-Agent": "x"}
        added = signer.sign("GET", "/test.txt", [], headers, sigv4.EMPTY_SHA256, amz_date=AMZ_DATE)
        self.assertTrue(added["authorization"].endswith(
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"))


class CanonicalFormTest(unittest.TestCase):
    def test_query_is_encoded_and_sorted(self):
        self.assertEqual(sigv4.canonical_query([("prefix", "J"), ("max-keys", 2)]), "max-keys=2&prefix=J")
        self.assertEqual(sigv4.canonical_query([("uploads", "")]), "uploads=")
        self.assertEqual(sigv4.canonical_query([("k", "a b/c~*")]), "k=a%20b%2Fc~%2A")

    def test_header_values_are_trimmed(self):
        creq, _ = sigv4.canonical_request("GET", "/", [], {"Host": "h", "X-Amz-Meta-A": "  a   b  "},
                                          sigv4.EMPTY_SHA256)
        self.assertIn("x-amz-meta-a:a b\n", creq)

    def test_key_encoding_keeps_slashes_only(self):
        self.assertEqual(sigv4.uri_encode("test$file.text"), "test%24file.text")
        self.assertEqual(sigv4.uri_encode("a b/é+~", safe="/"), "a%20b/%C3%A9%2B~")

    def test_signer_needs_both_keys(self):
        with self.assertRaises(ValueError):
            sigv4.Signer(ACCESS_KEY, "")


@unittest.skipUnless(importlib.util.find_spec("botocore"), "botocore is not installed")
class BotocoreAgreesTest(unittest.TestCase):
    """botocore's S3 signer is an independent implementation: both must sign the same request alike."""

    def botocore_signature(self, method, url, headers, payload_hash):
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        request = AWSRequest(method=method, url=url, headers=dict(headers))
        request.headers["X-Amz-Date"] = AMZ_DATE
        request.headers["X-Amz-Content-SHA256"] = payload_hash
        request.context["timestamp"] = AMZ_DATE
        auth = S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", "eu-west-1")
        creq = auth.canonical_request(request)
        return auth.signature(auth.string_to_sign(request, creq), request)

    def check(self, method, path, params, headers, body=b""):
        import hashlib
        payload_hash = hashlib.sha256(body).hexdigest()
        signer = sigv4.Signer(ACCESS_KEY, SECRET_KEY, "eu-west-1")
        added = signer.sign(method, path, params, headers, payload_hash, amz_date=AMZ_DATE)
        ours = added["authorization"].rsplit("Signature=", 1)[1]
        query = sigv4.canonical_query(params)
        url = "http://" + headers["host"] + path + ("?" + query if query else "")
        self.assertEqual(ours, self.botocore_signature(method, url, headers, payload_hash))

    def test_put_with_odd_key_and_body(self):
        self.check("PUT", "/bucket/" + sigv4.uri_encode("dir/test$file é+x.text", safe="/"), [],
                   {"host": "127.0.0.1:9099", "content-type": "application/octet-stream",
                    "x-amz-storage-class": "REDUCED_REDUNDANCY"}, b"Welcome to Amazon S3.")

    def test_get_with_range_and_if_match(self):
        self.check("GET", "/bucket/shard-0001.tar", [],
                   {"host": "127.0.0.1:9099", "range": "bytes=512-1535", "if-match": '"abc123"'})

    def test_api_request_with_query(self):
        self.check("GET", "/_ferry/v1/jobs/resnet/order",
                   [("epoch", 1), ("rank", 0), ("worker", 2), ("workers", 4), ("start", 0)],
                   {"host": "127.0.0.1:9099", "accept": "application/json"})

    def test_post_with_json_body(self):
        self.check("POST", "/_ferry/v1/flush", [("timeout_ms", 60000)],
                   {"host": "127.0.0.1:9099", "content-type": "application/json"}, b'{"a":1}')


if __name__ == "__main__":
    unittest.main()
