"""Reading errors off S3 XML, ferry's JSON, and bare status lines."""

import pickle
import unittest

from ferry_client import FerryConnectionError, FerryError
from ferry_client.errors import error_from_response


class ErrorParsingTest(unittest.TestCase):
    def test_s3_xml(self):
        body = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code>'
                b'<Message>The specified key does not exist.</Message><Key>a/b</Key></Error>')
        e = error_from_response(404, "Not Found", body, "GET /b/a/b")
        self.assertEqual((e.status, e.code, e.message), (404, "NoSuchKey", "The specified key does not exist."))
        self.assertEqual(str(e), "404 NoSuchKey: The specified key does not exist. (GET /b/a/b)")

    def test_s3_xml_with_namespace(self):
        body = (b'<Error xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                b'<Code>SlowDown</Code><Message>Reduce</Message></Error>')
        e = error_from_response(503, "Service Unavailable", body)
        self.assertEqual((e.code, e.message), ("SlowDown", "Reduce"))

    def test_ferry_json(self):
        body = b'{"error": {"code": "NoSuchJob", "message": "no job named resnet is registered"}}'
        e = error_from_response(404, "Not Found", body)
        self.assertEqual((e.status, e.code, e.message), (404, "NoSuchJob", "no job named resnet is registered"))

    def test_a_json_answer_without_an_error_is_kept(self):  # the flush fence's 504 and 502
        body = b'{"complete": false, "write_back": true, "first_error": null, "writes": []}'
        e = error_from_response(504, "Gateway Timeout", body)
        self.assertEqual(e.code, "GatewayTimeout")
        self.assertEqual(e.answer, {"complete": False, "write_back": True, "first_error": None, "writes": []})

    def test_dataloader_style_reraise(self):  # DataLoader re-raises a worker's error as type(e)(text)
        e = FerryError("Caught FerryError in DataLoader worker process 0.")
        self.assertEqual((e.status, e.code), (None, "Error"))
        self.assertIn("worker process 0", str(e))

    def test_no_body(self):
        e = error_from_response(412, "Precondition Failed", b"")
        self.assertEqual((e.code, e.message), ("PreconditionFailed", "the server answered 412 Precondition Failed"))

    def test_plain_text_body(self):
        e = error_from_response(500, "Internal Server Error", b"boom\n")
        self.assertEqual((e.code, e.message), ("InternalServerError", "boom"))

    def test_xml_without_code_falls_back_to_status(self):
        e = error_from_response(400, "Bad Request", b"<html>bad</html>")
        self.assertEqual(e.code, "BadRequest")

    def test_errors_pickle(self):  # they cross from DataLoader workers to the main process
        for e in (FerryError(404, "NoSuchKey", "gone", "GET /b/k"), FerryConnectionError(None, "Timeout", "slow")):
            copy = pickle.loads(pickle.dumps(e))
            self.assertIs(type(copy), type(e))
            self.assertEqual(str(copy), str(e))


if __name__ == "__main__":
    unittest.main()
