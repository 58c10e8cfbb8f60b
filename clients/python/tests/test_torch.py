"""The PyTorch adapter's pieces that need no daemon (skipped when torch is not installed).

The adapter's whole path (daemon order per worker -> DataLoader -> plan order) runs in
``daemon_e2e.py`` against a live daemon.
"""

import importlib.util
import pickle
import unittest
import warnings

import support  # noqa: F401  (puts ferry_client on the path)

HAVE_TORCH = importlib.util.find_spec("torch") is not None


@unittest.skipUnless(HAVE_TORCH, "torch is not installed (pip install -r scripts/requirements-torch.txt)")
class TorchAdapterTest(unittest.TestCase):
    def test_outside_a_worker_it_is_worker_0_of_1(self):
        from ferry_client.torch import worker_split
        self.assertEqual(worker_split(), (0, 1))

    def test_dataset_pickles_without_connections(self):  # DataLoader workers under spawn/forkserver
        from ferry_client.torch import FerryIterableDataset
        dataset = FerryIterableDataset("http://127.0.0.1:9099", "resnet", epoch=2, rank=1, with_sample=True,
                                       access_key="AKIA", secret_key="secret")
        copy = pickle.loads(pickle.dumps(dataset))
        self.assertEqual((copy.url, copy.job, copy.epoch, copy.rank, copy.with_sample),
                         ("http://127.0.0.1:9099", "resnet", 2, 1, True))
        copy.set_epoch(3, start=64)
        self.assertEqual((copy.epoch, copy.start), (3, 64))

    def test_sample_meta_collates(self):
        from torch.utils.data import default_collate
        from ferry_client.torch import _sample_meta
        metas = [_sample_meta({"index": 4, "bucket": "b", "key": "k", "offset": 10, "length": 3, "etag": "e"}, b"abc"),
                 _sample_meta({"bucket": "b", "key": "whole"}, b"abcdef")]
        batch = default_collate([(m, b"x") for m in metas])
        self.assertEqual(batch[0]["index"].tolist(), [4, -1])
        self.assertEqual(batch[0]["length"].tolist(), [3, 6])
        self.assertEqual(batch[0]["key"], ["k", "whole"])
        self.assertEqual(list(batch[1]), [b"x", b"x"])

    def test_the_dataloader_takes_worker_batches_round_robin(self):
        """The premise the daemon's order endpoint relies on: with an IterableDataset, DataLoader(batch_size=B,
        num_workers=N) yields worker 0's first batch, worker 1's first, ..., then each worker's second, and
        skips workers that ran out. Dealing a rank's order that way to the workers gives it back in order."""
        from torch.utils.data import DataLoader
        # More workers than this 2-core machine has cores is the point here, not a mistake.
        warnings.filterwarnings("ignore", message="This DataLoader will create")
        for total, batch, workers in ((37, 4, 4), (8, 4, 4), (3, 2, 3), (50, 5, 2)):
            with self.subTest(total=total, batch=batch, workers=workers):
                loader = DataLoader(_DealtRange(total, batch), batch_size=batch, num_workers=workers)
                got = [int(x) for b in loader for x in b]
                self.assertEqual(got, list(range(total)))


if HAVE_TORCH:
    import torch.utils.data

    class _DealtRange(torch.utils.data.IterableDataset):
        """range(total) dealt to the workers in batches of ``batch``, round robin: the daemon's rule."""

        def __init__(self, total, batch):
            super().__init__()
            self.total, self.batch = total, batch

        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
            for first in range(worker * self.batch, self.total, workers * self.batch):
                yield from range(first, min(first + self.batch, self.total))


if __name__ == "__main__":
    unittest.main()
