"""tar_sample and tar_samples against what Python's tarfile reads from the same bytes."""

import io
import os
import tarfile
import unittest

from ferry_client import tar_sample, tar_samples


def shard(members, fmt=tarfile.USTAR_FORMAT):
    """A tar of (name, bytes) members, and where each member's header starts (and the archive's data ends)."""
    buf = io.BytesIO()
    starts = []
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data in members:
            starts.append(buf.tell())
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        starts.append(buf.tell())
    return buf.getvalue(), starts


class TarSampleTest(unittest.TestCase):
    def setUp(self):
        self.members = []
        for i in range(5):
            self.members += [(f"train/s{i:04d}.jpg", os.urandom(1000 * i + 7)), (f"train/s{i:04d}.cls", str(i).encode()),
                             (f"train/s{i:04d}.seg.png", os.urandom(600))]

    def test_each_samples_range_parses_as_tarfile_reads_it(self):
        data, starts = shard(self.members)
        for i in range(5):
            # a manifest's range: the sample's first header to the end of its last member's data (not padded)
            first, last = starts[3 * i], starts[3 * i + 2]
            end = last + 512 + len(self.members[3 * i + 2][1])
            got = tar_sample(data[first:end])
            self.assertEqual(got["__key__"], f"train/s{i:04d}")
            self.assertEqual(got["jpg"], self.members[3 * i][1])
            self.assertEqual(got["cls"], str(i).encode())
            self.assertEqual(got["seg.png"], self.members[3 * i + 2][1], "the field is what follows the first dot")

    def test_a_whole_shard_gives_every_sample_in_order(self):
        data, _ = shard(self.members)
        samples = list(tar_samples(data))
        self.assertEqual([s["__key__"] for s in samples], [f"train/s{i:04d}" for i in range(5)])
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            expected = {m.name: t.extractfile(m).read() for m in t}
        for s in samples:
            for field in ("jpg", "cls", "seg.png"):
                self.assertEqual(s[field], expected[f"{s['__key__']}.{field}"])

    def test_long_names_in_every_format(self):
        long = "a/" + "d" * 120 + "/sample0001"
        members = [(long + ".jpg", b"x" * 2000), (long + ".json", b"{}")]
        for fmt in (tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
            data, _ = shard(members, fmt)
            got = tar_sample(data)
            self.assertEqual((got["__key__"], got["jpg"], got["json"]), (long, b"x" * 2000, b"{}"), fmt)

    def test_bytes_that_are_no_tar_are_refused_in_one_sentence(self):
        data, _ = shard(self.members)
        with self.assertRaisesRegex(ValueError, "not a tar member at byte 0: its checksum field"):
            tar_sample(b"\1" * 1024)
        with self.assertRaisesRegex(ValueError, "cut short"):
            tar_sample(data[:512 + 3])
        corrupt = bytearray(data)
        corrupt[10] ^= 0xFF
        with self.assertRaisesRegex(ValueError, "not a tar member at byte 0: the header.s checksum is"):
            tar_sample(bytes(corrupt))
        with self.assertRaisesRegex(ValueError, "no tar member"):
            tar_sample(b"\0" * 1024)
        # a pax record whose length does not move past itself: refused, not read forever
        pax = tarfile.TarInfo("././@PaxHeader")
        pax.type = tarfile.XHDTYPE
        record = b"0 path=x\n"
        pax.size = len(record)
        buf = io.BytesIO()
        buf.write(pax.tobuf(format=tarfile.USTAR_FORMAT))
        buf.write(record + b"\0" * (512 - len(record)))
        buf.write(data)
        with self.assertRaisesRegex(ValueError, "pax header's record at byte 0 has no valid length"):
            tar_sample(buf.getvalue())

    def test_folder_members_are_no_fields(self):
        folder = tarfile.TarInfo("train/")
        folder.type = tarfile.REGTYPE  # an old-style folder: a regular member whose name ends in /
        buf = io.BytesIO()
        buf.write(folder.tobuf(format=tarfile.USTAR_FORMAT))
        data, _ = shard(self.members[:3])
        buf.write(data)
        self.assertEqual(tar_sample(buf.getvalue())["__key__"], "train/s0000")


if __name__ == "__main__":
    unittest.main()
