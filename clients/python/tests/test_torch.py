"""The PyTorch adapter's pieces that need no daemon (skipped when torch is not installed).

The adapter's whole path (daemon order per worker -> DataLoader -> plan order) runs in
``daemon_e2e.py`` against a live daemon.
"""

import importlib.util
import pickle
import unittest
import warnings

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

    def test_state_dict_round_trips_mid_epoch(self):  # MosaicML Streaming's convention, no daemon needed
        from ferry_client.torch import FerryIterableDataset
        dataset = FerryIterableDataset("http://127.0.0.1:9099", "resnet", epoch=2, rank=1, start=64)
        state = dataset.state_dict(96)  # 96 samples consumed by the whole job since start
        self.assertEqual(state, {"job": "resnet", "epoch": 2, "sample_in_epoch": 160})
        self.assertEqual(dataset.state_dict(160, from_beginning=True), state)

        resumed = FerryIterableDataset("http://127.0.0.1:9099", "resnet", rank=1)
        resumed.load_state_dict(state)
        self.assertEqual((resumed.epoch, resumed.start), (2, 160))
        resumed = pickle.loads(pickle.dumps(resumed))  # what a DataLoader worker gets under spawn
        resumed.set_epoch(2)  # the loop's set_epoch of the saved epoch keeps its position
        self.assertEqual((resumed.epoch, resumed.start), (2, 160))
        resumed.set_epoch(3)  # the next epoch starts at its beginning
        self.assertEqual((resumed.epoch, resumed.start), (3, 0))
        resumed.set_epoch(2)  # and the saved position is spent
        self.assertEqual((resumed.epoch, resumed.start), (2, 0))

    def test_a_checkpoint_resumes_the_dataset_too(self):
        from ferry_client import Checkpoint
        from ferry_client.torch import FerryIterableDataset
        dataset = FerryIterableDataset("http://127.0.0.1:9099", "resnet", rank=0)
        dataset.load_state_dict(Checkpoint({"job": "resnet", "epoch": 3, "position": 48, "canonical_nodes": 2}))
        self.assertEqual((dataset.epoch, dataset.start), (3, 48))

    def test_a_state_that_does_not_fit_is_one_sentence(self):
        from ferry_client.torch import FerryIterableDataset
        dataset = FerryIterableDataset("http://127.0.0.1:9099", "resnet", rank=0)
        cases = [
            ({"job": "bert", "epoch": 1, "sample_in_epoch": 0}, "The state is job 'bert''s, not 'resnet''s."),
            ({"epoch": 0, "sample_in_epoch": 0}, "epoch must be an integer of at least 1, not 0."),
            ({"epoch": 1}, "sample_in_epoch must be an integer of at least 0, not None."),
        ]
        for state, message in cases:
            with self.subTest(state=state):
                with self.assertRaises(ValueError) as e:
                    dataset.load_state_dict(state)
                self.assertEqual(str(e.exception), message)
        with self.assertRaises(ValueError):
            dataset.state_dict(-1)

    def test_settings_and_keywords(self):
        from ferry_client import ReadSettings
        from ferry_client.torch import FerryIterableDataset
        dataset = FerryIterableDataset("http://127.0.0.1:9099", "resnet", rank=0, settings=ReadSettings(prefetch=4),
                                       window=32)
        self.assertEqual((dataset.prefetch, dataset.window, dataset.threads), (4, 32, None))

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
