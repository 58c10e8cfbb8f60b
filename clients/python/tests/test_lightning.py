"""Lightning's checkpoints through a real ``ferry serve --write-back``: a Trainer saves with FerryCheckpointIO, a
second Trainer resumes from the object, and bad input gets one sentence."""

import os
import shutil
import tempfile
import unittest

from support import FerryDaemon, require

require("lightning", "the Lightning test trains a small model with lightning.pytorch")
import torch  # noqa: E402
from lightning.pytorch import LightningModule, Trainer  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from ferry_client import FerryClient  # noqa: E402
from ferry_client.lightning import FerryCheckpointIO  # noqa: E402


class _Tiny(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _data():
    g = torch.Generator().manual_seed(3)
    return DataLoader(TensorDataset(torch.randn(64, 8, generator=g), torch.randn(64, 1, generator=g)), batch_size=16)


def _trainer(io, steps):
    return Trainer(plugins=[io], max_steps=steps, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                   enable_progress_bar=False, enable_model_summary=False)


class LightningCheckpointTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ferry-lightning-")
        cls.store = os.path.join(cls.tmp, "store")
        os.makedirs(os.path.join(cls.store, "ckpt"))
        cls.daemon = FerryDaemon(cls.store, os.path.join(cls.tmp, "cache"), "--write-back")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_trainer_saves_through_the_daemon_and_another_resumes_from_it(self):
        io = FerryCheckpointIO(endpoint=self.daemon.url)
        model = _Tiny()
        trainer = _trainer(io, 3)
        trainer.fit(model, _data())
        trainer.save_checkpoint("s3://ckpt/lightning/run-1/step-3.ckpt")
        self.assertEqual(["local"], io.levels)  # peer asked; a daemon in no group answers local

        resumed = _Tiny()
        again = _trainer(FerryCheckpointIO(endpoint=self.daemon.url), 5)
        again.fit(resumed, _data(), ckpt_path="s3://ckpt/lightning/run-1/step-3.ckpt")
        self.assertEqual(5, again.global_step)  # went on from step 3, not from 0
        loaded = FerryCheckpointIO(endpoint=self.daemon.url).load_checkpoint("s3://ckpt/lightning/run-1/step-3.ckpt")
        self.assertEqual(3, loaded["global_step"])
        self.assertTrue(torch.equal(loaded["state_dict"]["layer.weight"], model.layer.weight.detach()))

        FerryClient(self.daemon.url).flush(60, bucket="ckpt", prefix="lightning/")
        self.assertTrue(os.path.exists(os.path.join(self.store, "ckpt", "lightning", "run-1", "step-3.ckpt")))
        io.remove_checkpoint("s3://ckpt/lightning/run-1/step-3.ckpt")
        with self.assertRaises(FileNotFoundError) as e:
            io.load_checkpoint("s3://ckpt/lightning/run-1/step-3.ckpt")
        self.assertIn("does not exist", str(e.exception))

    def test_bad_input_gets_one_sentence(self):
        with self.assertRaises(ValueError) as e:
            FerryCheckpointIO(endpoint=self.daemon.url, durability="twice")
        self.assertIn("local, peer or durable", str(e.exception))
        with self.assertRaises(ValueError) as e:
            FerryCheckpointIO(endpoint=self.daemon.url).save_checkpoint({}, "/tmp/step-1.ckpt")
        self.assertIn("s3://BUCKET/KEY", str(e.exception))


if __name__ == "__main__":
    unittest.main()
