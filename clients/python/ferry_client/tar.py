"""WebDataset tar samples from the bytes ferry reads: a sample's members parsed straight from their headers.

A job's manifest (``ferry index``) gives each sample of a tar shard as a byte range, from its first member's
header to the end of its last member's data, and ``Samples`` and ``FerryIterableDataset`` hand those bytes over
(``decode=``). ``tar_sample(data)`` turns them into ``{"__key__": "shard/0001", "jpg": b"...", "cls": b"3"}``,
as WebDataset names them: a sample is the run of members whose names share everything before the first ``.``
of the file name, the rest being the field's name. It reads the 512-byte headers itself: building a
``tarfile`` object per sample costs far more, and on a loaded machine that bounds the loader. ustar's name prefix,
GNU long names (``L``) and pax ``path`` records are understood; members that are not regular files are skipped.
Bytes that are not tar members (a header whose checksum is wrong, a member cut short) raise ``ValueError`` naming
where.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["tar_sample", "tar_samples"]

_BLOCK = 512


def _octal(field: memoryview | bytes, what: str, at: int) -> int:
    if field and field[0] & 0x80:  # base-256, for sizes of 8 GiB and more
        n = field[0] & 0x7F
        for b in field[1:]:
            n = (n << 8) | b
        return n
    digits = bytes(field).split(b"\0", 1)[0].strip()
    try:
        return int(digits or b"0", 8)
    except ValueError:
        raise ValueError(f"not a tar member at byte {at}: its {what} field is {digits!r}, not an octal number") from None


def _checked(header: memoryview, at: int) -> None:
    stored = _octal(header[148:156], "checksum", at)
    total = sum(header[:148]) + 8 * 32 + sum(header[156:])
    if stored != total:
        raise ValueError(f"not a tar member at byte {at}: the header's checksum is {stored}, its bytes sum to {total}")


def _pax_path(records: bytes) -> str | None:
    path = None
    i = 0
    while i < len(records):
        space = records.find(b" ", i)
        if space < 0:
            break
        try:
            length = int(records[i:space])
        except ValueError:
            length = 0
        if length <= space - i:
            raise ValueError(f"a pax header's record at byte {i} has no valid length: {bytes(records[i:space])!r}")
        record = records[space + 1:i + length - 1]  # "key=value", without the newline
        key, _, value = record.partition(b"=")
        if key == b"path":
            path = value.decode("utf-8")
        i += length
    return path


def _members(data: bytes | bytearray | memoryview) -> Iterator[tuple[str, memoryview]]:
    """(name, bytes) of each regular file member of ``data``, in order."""
    view = memoryview(data)
    n = len(data)
    at = 0
    long_name = None
    while at + _BLOCK <= n:
        header = view[at:at + _BLOCK]
        if header[0] == 0 and not any(header):
            break  # the archive's end
        _checked(header, at)
        size = _octal(header[124:136], "size", at)
        kind = bytes(header[156:157])
        start = at + _BLOCK
        if start + size > n:
            raise ValueError(f"the tar member at byte {at} is cut short: {size} bytes of data, {n - start} left")
        body = view[start:start + size]
        at = start + (size + _BLOCK - 1) // _BLOCK * _BLOCK
        if kind == b"L":  # GNU: the next member's name
            long_name = bytes(body).split(b"\0", 1)[0].decode("utf-8")
            continue
        if kind in (b"x", b"g"):  # pax: a path record names the next member (a global one is ignored)
            path = _pax_path(bytes(body)) if kind == b"x" else None
            long_name = path if path is not None else long_name
            continue
        if long_name is not None:
            name, long_name = long_name, None
        else:
            name = bytes(header[0:100]).split(b"\0", 1)[0].decode("utf-8")
            if bytes(header[257:263]) == b"ustar\0":  # POSIX ustar; GNU's "ustar  " keeps times there
                prefix = bytes(header[345:500]).split(b"\0", 1)[0].decode("utf-8")
                name = f"{prefix}/{name}" if prefix else name
        if kind in (b"0", b"\0", b"7") and not name.endswith("/"):  # an old-style folder is a "\0" ending in /
            yield name, body


def _split(name: str) -> tuple[str, str]:
    slash = name.rfind("/")
    dot = name.find(".", slash + 1)
    return (name, "") if dot < 0 else (name[:dot], name[dot + 1:])


def tar_samples(data: bytes | bytearray | memoryview) -> Iterator[dict[str, Any]]:
    """Each sample in ``data`` (consecutive tar members), as ``{"__key__": key, field: bytes, ...}``, in order."""
    sample: dict[str, Any] | None = None
    key = None
    for name, body in _members(data):
        k, field = _split(name)
        if sample is not None and k != key:
            yield sample
            sample = None
        if sample is None:
            sample, key = {"__key__": k}, k
        sample[field] = bytes(body)
    if sample is not None:
        yield sample


def tar_sample(data: bytes | bytearray | memoryview) -> dict[str, Any]:
    """The one sample ``data`` holds (a manifest's byte range of a tar shard); ``ValueError`` when it holds none."""
    for sample in tar_samples(data):
        return sample
    raise ValueError(f"no tar member in these {len(data)} bytes")
