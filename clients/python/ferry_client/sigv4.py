"""AWS Signature Version 4 for S3 requests, in the standard library only.

The signer works on a request as it will be sent: the path already percent-encoded (S3 does not
encode it a second time), the query as a list of raw ``(name, value)`` pairs, the headers the
client sends, and the hex SHA-256 of the body. It returns the headers to add.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from urllib.parse import quote

ALGORITHM = "AWS4-HMAC-SHA256"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

# Headers a proxy may rewrite or drop: never signed.
_UNSIGNED_HEADERS = frozenset({"content-length", "transfer-encoding", "user-agent", "connection", "expect",
                               "accept-encoding"})


def uri_encode(text: str, safe: str = "") -> str:
    """Percent-encode ``text`` as SigV4 wants: everything but ``A-Za-z0-9-_.~`` (and ``safe``)."""
    return quote(text, safe="-_.~" + safe)


def canonical_query(params: Iterable[tuple[object, object]]) -> str:
    """The canonical (and sent) query string of ``(name, value)`` pairs: encoded, sorted, ``&``-joined."""
    pairs = sorted((uri_encode(str(k)), uri_encode("" if v is None else str(v))) for k, v in params)
    return "&".join(f"{k}={v}" for k, v in pairs)


def _trim(value: object) -> str:
    return " ".join(str(value).split())


def canonical_request(method: str, path: str, params: Iterable[tuple[object, object]], headers: Mapping[str, object],
                      payload_hash: str) -> tuple[str, str]:
    """Returns ``(canonical_request, signed_headers)`` for a request.

    ``path`` is the encoded path as sent; ``params`` the raw query pairs; ``headers`` a mapping of the
    headers sent (names in any case); ``payload_hash`` the hex SHA-256 of the body.
    """
    signed: dict[str, str] = {}
    for name, value in headers.items():
        low = name.lower()
        if low not in _UNSIGNED_HEADERS:
            signed[low] = _trim(value)
    names = sorted(signed)
    canonical_headers = "".join(f"{n}:{signed[n]}\n" for n in names)
    signed_headers = ";".join(names)
    text = "\n".join([method.upper(), path or "/", canonical_query(params), canonical_headers,
                      signed_headers, payload_hash])
    return text, signed_headers


def string_to_sign(amz_date: str, scope: str, creq: str) -> str:
    """The string to sign: algorithm, timestamp, credential scope and the hash of the canonical request."""
    digest = hashlib.sha256(creq.encode("utf-8")).hexdigest()
    return "\n".join([ALGORITHM, amz_date, scope, digest])


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    """The derived key for one day, region and service."""
    key = _hmac(("AWS4" + secret_key).encode("utf-8"), date)
    key = _hmac(key, region)
    key = _hmac(key, service)
    return _hmac(key, "aws4_request")


def amz_now() -> str:
    """The current UTC time as ``YYYYMMDDTHHMMSSZ``."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


class Signer:
    """Signs requests with one access key for one region and service (``s3`` by default)."""

    def __init__(self, access_key: str, secret_key: str, region: str = "us-east-1", service: str = "s3") -> None:
        if not access_key or not secret_key:
            raise ValueError("Signing needs both an access key and a secret key.")
        self.access_key = access_key
        self._secret_key = secret_key
        self.region = region
        self.service = service
        self._key_cache: tuple[str, bytes] | None = None

    def _key(self, date: str) -> bytes:
        if self._key_cache is not None and self._key_cache[0] == date:
            key = self._key_cache[1]
        else:
            key = signing_key(self._secret_key, date, self.region, self.service)
            self._key_cache = (date, key)
        return key

    def sign(self, method: str, path: str, params: Iterable[tuple[object, object]], headers: Mapping[str, object],
             payload_hash: str = EMPTY_SHA256, amz_date: str | None = None) -> dict[str, str]:
        """Returns the headers to add to the request: ``x-amz-date``, ``x-amz-content-sha256``, ``authorization``.

        ``headers`` must hold every header that will be sent (``host`` included), except those
        added here; they are all signed but for ``content-length`` and a few hop-by-hop ones.
        """
        amz_date = amz_date or amz_now()
        date = amz_date[:8]
        added = {"x-amz-date": amz_date, "x-amz-content-sha256": payload_hash}
        all_headers = {k.lower(): v for k, v in headers.items()}
        all_headers.update(added)
        creq, signed_headers = canonical_request(method, path, params, all_headers, payload_hash)
        scope = f"{date}/{self.region}/{self.service}/aws4_request"
        to_sign = string_to_sign(amz_date, scope, creq)
        signature = hmac.new(self._key(date), to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
        added["authorization"] = (f"{ALGORITHM} Credential={self.access_key}/{scope},"
                                  f"SignedHeaders={signed_headers},Signature={signature}")
        return added
