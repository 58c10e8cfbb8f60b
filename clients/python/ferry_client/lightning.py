"""Lightning's checkpoints through the node's ferry daemon: a ``CheckpointIO`` for ``Trainer(plugins=[...])``.

::

    from ferry_client.lightning import FerryCheckpointIO

    trainer = Trainer(plugins=[FerryCheckpointIO()])          # the node's daemon: FerryClient()'s rules, or endpoint=
    trainer.save_checkpoint("s3://ckpt/run-7/step-1000.ckpt")  # returns once the daemon acknowledged it
    trainer.fit(model, ckpt_path="s3://ckpt/run-7/step-1000.ckpt")

A checkpoint is one object: ``torch.save`` streams it to the daemon as it serializes (nothing is spooled on the
trainer's side), at the durability asked (``peer`` by default: on the node's disk and a group member's before the
answer; a daemon in no group answers ``local``); ``levels`` lists what the daemon answered. Loading reads it back
through the daemon, from its tier when it is there. See docs/checkpoints.md.
"""

from __future__ import annotations

import io
import os
from typing import IO, Any, cast

import torch
from lightning.pytorch.plugins.io import CheckpointIO

from .client import FerryClient
from .errors import FerryError
from .s3 import durability_level

__all__ = ["FerryCheckpointIO"]


def _object(path: str | os.PathLike[str]) -> tuple[str, str]:
    text = str(path)
    if not text.startswith("s3://"):
        raise ValueError(f"A checkpoint through ferry is an object: give s3://BUCKET/KEY, not {text!r}.")
    bucket, _, key = text[len("s3://"):].partition("/")
    if not bucket or not key or key.endswith("/"):
        raise ValueError(f"A checkpoint path names a bucket and a key in it (s3://BUCKET/KEY), not {text!r}.")
    return bucket, key


class FerryCheckpointIO(CheckpointIO):
    """Lightning's ``CheckpointIO`` over objects behind the node's daemon (``FerryClient()``'s endpoint, or
    ``endpoint``), each checkpoint written at ``durability`` (``local``, ``peer`` or ``durable``)."""

    def __init__(self, endpoint: str | None = None, durability: str = "peer", client: FerryClient | None = None) -> None:
        super().__init__()
        self.client = client or FerryClient(endpoint)
        self.durability = durability_level(durability, "checkpoint")
        self.levels: list[str] = []

    def save_checkpoint(self, checkpoint: dict[str, Any], path: str | os.PathLike[str],
                        storage_options: Any | None = None) -> None:
        if storage_options is not None:
            raise TypeError(f"FerryCheckpointIO takes no storage_options (given {storage_options!r}); "
                            "set durability= when making it.")
        bucket, key = _object(path)
        stream = self.client.put_stream(bucket, key, durability=self.durability)
        try:
            torch.save(checkpoint, cast(IO[bytes], stream))
        except BaseException:
            stream.abort()  # a partial checkpoint is never an object
            raise
        stream.close()
        answered = stream.result.durability if stream.result is not None else None
        self.levels.append(answered or "durable")  # a server that does not say has stored it

    def load_checkpoint(self, path: str | os.PathLike[str], map_location: Any | None = None,
                        weights_only: bool | None = None) -> dict[str, Any]:
        bucket, key = _object(path)
        try:
            data = self.client.get(bucket, key)
        except FerryError as e:
            if e.status == 404:
                raise FileNotFoundError(f"The checkpoint {path} does not exist.") from None
            raise
        # a Lightning checkpoint holds more than tensors (hyperparameters, loop state): Lightning's own loader reads
        # it whole unless told weights_only
        loaded: dict[str, Any] = torch.load(io.BytesIO(data), map_location=map_location,
                                            weights_only=bool(weights_only))
        return loaded

    def remove_checkpoint(self, path: str | os.PathLike[str]) -> None:
        bucket, key = _object(path)
        self.client.delete(bucket, key)
