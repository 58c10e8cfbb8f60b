"""The errors the client raises, and how they are read off an error response."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from typing import Any

_MAX_ERROR_BODY = 1 << 20  # an error body larger than this is not parsed


class FerryError(Exception):
    """The daemon (or an S3 server) answered with an error.

    ``status`` is the HTTP status (``None`` when no answer came), ``code`` the S3 or ferry error code
    (``NoSuchKey``, ``PreconditionFailed``...), ``message`` the server's sentence, ``request`` the
    method and path that failed, ``answer`` the error body when it was JSON (``flush()`` puts the
    fence's result there). ``FerryError("sentence")`` alone is allowed too: that is how PyTorch's
    DataLoader re-raises a worker's error in the main process (the worker's traceback as the message).
    """

    def __init__(self, status: int | str | None, code: str | None = None, message: str | None = None,
                 request: str | None = None, answer: Any = None) -> None:
        if code is None and message is None and isinstance(status, str):
            status, code, message = None, "Error", status
        self.status: int | None = status if isinstance(status, int) else None
        self.code = code
        self.message = message
        self.request = request
        self.answer = answer
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" ({self.request})" if self.request else ""
        status = f"{self.status} " if self.status is not None else ""
        return f"{status}{self.code}: {self.message}{where}"

    def __reduce__(self) -> tuple[type[FerryError], tuple[Any, ...]]:
        # picklable, so an error in a DataLoader worker reaches the main process
        return (type(self), (self.status, self.code, self.message, self.request, self.answer))


class FerryConnectionError(FerryError):
    """No answer: the daemon could not be reached, dropped the connection twice, or timed out."""


def _reason_code(status: int, reason: str | None) -> str:
    """A code from the status line when the body has none: ``404 Not Found`` -> ``NotFound``."""
    words = (reason or "").split()
    return "".join(w[:1].upper() + w[1:].lower() for w in words) or f"Http{status}"


def _xml_error(body: bytes) -> tuple[str, str] | None:
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        return None
    fields: dict[str, str] = {}
    for element in root.iter():
        name = element.tag.rsplit("}", 1)[-1]  # drop a namespace, if any
        if name in ("Code", "Message") and name not in fields:
            fields[name] = (element.text or "").strip()
    if "Code" not in fields:
        return None
    return fields["Code"], fields.get("Message", "")


def _json_body(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _json_error(doc: Any) -> tuple[str, str] | None:
    error = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(error, dict) and error.get("code"):
        return str(error["code"]), str(error.get("message", ""))
    if isinstance(error, str):  # {"error": "sentence"}
        return "Error", error
    return None


def error_from_response(status: int, reason: str | None, body: bytes | None, request: str | None = None) -> FerryError:
    """A FerryError from an error response: S3 XML, ferry's JSON, or the status line alone."""
    parsed = answer = None
    if body and len(body) <= _MAX_ERROR_BODY:
        text = body.lstrip()
        if text.startswith(b"<"):
            parsed = _xml_error(text)
        elif text.startswith(b"{"):
            answer = _json_body(text)
            parsed = _json_error(answer)
    if parsed is None:
        snippet = body[:200].decode("utf-8", "replace").strip() if body else ""
        parsed = (_reason_code(status, reason), snippet or f"the server answered {status} {reason}".strip())
    code, message = parsed
    return FerryError(status, code, message, request, answer)
