"""A data-parallel training loop reading its samples through the node's ferry daemon.

torchrun starts one process per GPU; each finds its daemon (FERRY_ENDPOINT, else 127.0.0.1:9099) and its place
(torchrun's WORLD_SIZE, RANK, LOCAL_WORLD_SIZE, GROUP_RANK) with no arguments. Every rank registers the job with
the same arguments; the daemon runs it once and prefetches each node's share of every epoch. Rank 0 writes a
checkpoint each epoch through the daemon's write-back and waits on the flush fence before going on.

Environment: FERRY_JOB, FERRY_MANIFEST_KEY (bucket/key of the manifest `ferry index` wrote), CHECKPOINTS
(bucket/prefix), EPOCHS, BATCH_SIZE, LOADER_WORKERS, SEED. Replace decode() and the model with your own.
"""

import io
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

from ferry_client import FerryClient, StepReporter, placement
from ferry_client.torch import FerryIterableDataset

FEATURES = 16


def decode(data):
    """A sample's bytes as the model's input: here its first bytes, scaled (a real job decodes an image)."""
    head = bytearray(data[:FEATURES]).ljust(FEATURES, b"\0")
    return torch.frombuffer(head, dtype=torch.uint8).float() / 255


def main():
    job = os.environ["FERRY_JOB"]
    epochs = int(os.environ.get("EPOCHS", "3"))
    batch_size = int(os.environ.get("BATCH_SIZE", "32"))
    workers = int(os.environ.get("LOADER_WORKERS", "4"))
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    here = placement()
    device = torch.device("cuda", here.local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)

    client = FerryClient()
    plan = client.register_job(job, manifest_key=os.environ["FERRY_MANIFEST_KEY"], seed=int(os.environ.get("SEED", "0")),
                               batch_size=batch_size)
    if here.rank == 0:
        print(f"{job}: {plan['samples']} samples, {plan['ranks']} ranks, {plan['steps_per_epoch']} steps per epoch "
              f"({plan['registration']} on {client.url})", flush=True)

    model = DistributedDataParallel(torch.nn.Linear(FEATURES, 1).to(device), device_ids=[here.local_rank] if cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(1, epochs + 1):
        data = FerryIterableDataset(client.url, job, epoch, decode=decode)  # this rank's samples, in plan order
        loader = DataLoader(data, batch_size=batch_size, num_workers=workers)
        with StepReporter(client, job, here.rank, epoch=epoch, batch_size=batch_size, ranks=plan["ranks"]) as steps:
            for inputs in steps.timed(loader, count=len):  # count=len: the last batch may be short
                loss = model(inputs.to(device)).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        if here.rank == 0:
            bucket, _, prefix = os.environ["CHECKPOINTS"].partition("/")
            buffer = io.BytesIO()
            torch.save(model.module.state_dict(), buffer)
            client.put(bucket, f"{prefix}/epoch-{epoch}.pt", buffer.getvalue())
            client.flush(timeout_s=600)  # durable in the object store before anyone is told
            print(f"{job}: epoch {epoch} done, checkpoint {bucket}/{prefix}/epoch-{epoch}.pt stored", flush=True)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
