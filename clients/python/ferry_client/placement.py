"""Where this training process sits in its job, from its launcher's environment variables.

``placement()`` reads what torchrun, a Kubeflow PyTorchJob and a plain ``WORLD_SIZE``/``RANK`` launcher set,
as the Java loader does (``dev.ferry.plan.Placement``; the same cases are tested on both sides). In order:

1. ``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE``: torchrun (its processes also have ``RANK``, ``LOCAL_RANK``,
   ``GROUP_RANK``, ``GROUP_WORLD_SIZE``), and launchers that copy its variables. The node is ``GROUP_RANK``,
   else ``NODE_RANK``, else ``RANK // LOCAL_WORLD_SIZE``.
2. ``PET_NNODES``: a Kubeflow PyTorchJob's pod outside torchrun (the training operator sets ``PET_NNODES``,
   ``PET_NPROC_PER_NODE``, ``PET_NODE_RANK`` for torchrun, and ``RANK`` to the pod's index). The rank is known
   only with one process per node, or from ``LOCAL_RANK``. ``PET_NPROC_PER_NODE=auto`` (the operator's default)
   counts as the operator counts it in ``WORLD_SIZE``: one process per pod.
3. ``WORLD_SIZE`` alone: one rank per node (a PyTorchJob without ``nprocPerNode``: ``RANK`` is the pod's index).
4. ``JOB_COMPLETION_INDEX`` alone (an Indexed Job's or a JobSet's pod: they say no world size): refused, since
   guessing one node would have every node read the whole corpus.
5. Nothing: one process (one node, one rank).

ferry's plans number ranks node by node, with as many on every node; an environment that says otherwise is
refused with a ``ValueError`` naming the variables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["Placement", "placement"]


class Placement(NamedTuple):
    """``nodes`` x ``ranks_per_node`` ranks; this process is ``rank`` (-1: the environment does not say) on
    ``node``, ``local_rank`` there (-1: unknown); ``source`` names what was read: ``torchrun``, ``kubeflow``,
    ``WORLD_SIZE`` or ``none``."""

    nodes: int
    ranks_per_node: int
    node: int
    rank: int
    local_rank: int
    source: str

    @property
    def world_size(self) -> int:
        return self.nodes * self.ranks_per_node


def _integer(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name)
    if value is None or not value.strip():
        return None
    try:
        number = int(value.strip())
    except ValueError:
        number = -1
    if number < 0:
        raise ValueError(f"{name} must be a whole number of at least 0, not {value!r}.")
    return number


def _first(env: Mapping[str, str], *names: str) -> int | None:
    for name in names:
        value = _integer(env, name)
        if value is not None:
            return value
    return None


def _checked(nodes: int, per_node: int, node: int, rank: int, local_rank: int, source: str) -> Placement:
    if not 0 <= node < nodes:
        raise ValueError(f"The node rank {node} is not one of the world's {nodes} nodes ({source}'s variables).")
    if rank >= nodes * per_node:
        raise ValueError(f"RANK {rank} is not one of the world's {nodes * per_node} ranks.")
    if local_rank >= per_node:
        raise ValueError(f"LOCAL_RANK {local_rank} is not one of the node's {per_node} ranks.")
    if rank >= 0 and rank // per_node != node:
        raise ValueError(f"Rank {rank} is not on node {node} of {nodes} nodes of {per_node} ranks: ferry's plans "
                         "number ranks node by node.")
    return Placement(nodes, per_node, node, rank, local_rank, source)


def placement(environ: Mapping[str, str] | None = None) -> Placement:
    """This process's :class:`Placement`, from ``environ`` (default ``os.environ``); see the module's comment."""
    env = os.environ if environ is None else environ
    world_size = _integer(env, "WORLD_SIZE")
    local_world_size = _integer(env, "LOCAL_WORLD_SIZE")
    rank = _integer(env, "RANK")
    local_rank = _integer(env, "LOCAL_RANK")

    if world_size is not None and local_world_size is not None:
        if world_size < 1 or local_world_size < 1 or world_size % local_world_size:
            raise ValueError(f"WORLD_SIZE {world_size} is not a whole number of nodes of LOCAL_WORLD_SIZE "
                             f"{local_world_size} ranks: ferry's plans need the same number of ranks on every node.")
        nodes = world_size // local_world_size
        groups = _integer(env, "GROUP_WORLD_SIZE")
        if groups is not None and groups != nodes:
            raise ValueError(f"GROUP_WORLD_SIZE {groups} nodes, but WORLD_SIZE {world_size} / LOCAL_WORLD_SIZE "
                             f"{local_world_size} is {nodes}: ferry's plans need the same number of ranks on every node.")
        node = _first(env, "GROUP_RANK", "NODE_RANK")
        if node is None:
            if rank is None:
                raise ValueError("WORLD_SIZE and LOCAL_WORLD_SIZE are set but neither GROUP_RANK, NODE_RANK nor RANK "
                                 "says which node this is.")
            node = rank // local_world_size
        local = local_rank if local_rank is not None else (rank % local_world_size if rank is not None else -1)
        if rank is None:
            rank = node * local_world_size + local if local >= 0 else -1
        source = "torchrun" if "TORCHELASTIC_RUN_ID" in env else "WORLD_SIZE"
        return _checked(nodes, local_world_size, node, rank, local, source)

    nnodes = env.get("PET_NNODES")
    if nnodes is not None and nnodes.strip():
        if ":" in nnodes:
            raise ValueError(f"PET_NNODES is the range {nnodes.strip()} (an elastic PyTorchJob): the world is known only "
                             "once torchrun's rendezvous has run; register from the processes torchrun starts.")
        nodes = _integer(env, "PET_NNODES") or 0  # not None: the variable is set
        per_node = 1
        nproc = env.get("PET_NPROC_PER_NODE")
        if nproc is not None and nproc.strip():
            try:
                per_node = int(nproc.strip())
            except ValueError:
                # "auto" (the operator's default) or "gpu": the operator counted one process per pod in WORLD_SIZE,
                # which a process started in the pod without torchrun is
                if world_size is None or nodes == 0 or world_size % nodes:
                    raise ValueError(f"PET_NPROC_PER_NODE is {nproc.strip()!r}: the ranks per node are known only inside "
                                     "torchrun; register from the processes torchrun starts.") from None
                per_node = world_size // nodes
        node = _first(env, "PET_NODE_RANK", "NODE_RANK", "GROUP_RANK", "RANK")
        if node is None:
            raise ValueError("PET_NNODES is set but neither PET_NODE_RANK nor RANK says which node this is.")
        local = local_rank if local_rank is not None else (0 if per_node == 1 else -1)
        return _checked(nodes, per_node, node, node * per_node + local if local >= 0 else -1, local, "kubeflow")

    if world_size is not None:
        if rank is None:
            raise ValueError("WORLD_SIZE is set but RANK is not.")
        node = _first(env, "GROUP_RANK", "NODE_RANK")
        if node is not None and node != rank:
            raise ValueError(f"RANK {rank} on node {node} with WORLD_SIZE {world_size} but no LOCAL_WORLD_SIZE: set "
                             "LOCAL_WORLD_SIZE (the ranks per node), as torchrun does.")
        if world_size < 1:
            raise ValueError(f"WORLD_SIZE must be at least 1: {world_size}.")
        return _checked(world_size, 1, rank, rank, 0, "WORLD_SIZE")

    index = _integer(env, "JOB_COMPLETION_INDEX")
    if index is not None:
        raise ValueError(f"This process is index {index} of an Indexed Job or JobSet (JOB_COMPLETION_INDEX), but no "
                         "WORLD_SIZE says how many nodes the job has: start it with torchrun (--nnodes N --node-rank "
                         "$JOB_COMPLETION_INDEX), or give world= and node= explicitly.")
    return Placement(1, 1, 0, 0, 0, "none")
