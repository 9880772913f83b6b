"""One run on several processes: DistributedDataParallel around the engine's model.

``--batch-size`` stays the global batch. Every rank draws the same seeded epoch
order and cuts it into the same global batches; rank r trains on the r-th
contiguous chunk of each (``loaders._EpochOrder.shard``), so together the ranks
see exactly what one process sees. DDP averages the gradients; the loss each
rank backpropagates is scaled so that average is the full batch's mean
gradient (:func:`backward_loss`). Logged metrics are summed over the ranks.

Validation is not sharded: every rank evaluates the whole validation set with
the same weights, so all get the same numbers with no collective (and no rank
waits on another's evaluation). It costs the speed-up on validation only.
"""

from __future__ import annotations

from typing import Protocol

import torch
from torch.nn.parallel import DistributedDataParallel

from workbench.core.config import ConfigError
from workbench.core.distributed import env as distributed
from workbench.core.distributed.sync_bn import batchnorm_setup
from workbench.core.training_run import TrainingRun


class Sums(Protocol):
    """What :func:`reduce_sums` reads and writes (the engine's ``_Interval``)."""

    loss_sum: torch.Tensor
    correct: torch.Tensor
    samples: int


def check_batch(batch_size: int, world: int, num_samples: int | None = None) -> None:
    """Raise :class:`ConfigError` unless ``batch_size`` splits over ``world`` ranks."""
    if world <= 1:
        return
    if batch_size % world:
        raise ConfigError(
            f"batch size {batch_size} does not split evenly over {world} processes: "
            f"give a multiple of {world} (--batch-size is the global batch)"
        )
    last = num_samples % batch_size if num_samples else 0
    if 0 < last < world:
        # A rank with no sample has no mean loss to scale.
        raise ConfigError(
            f"the last batch of an epoch has {last} sample(s), fewer than the "
            f"{world} processes: choose another batch size"
        )


def attach(run: TrainingRun) -> None:
    """Shard the training batches and wrap the model in DDP (world size > 1).

    Call after freezing: DDP registers gradient hooks on the parameters that
    require grad when it is built and leaves frozen ones out, so
    ``find_unused_parameters`` is not needed.
    """
    if not distributed.active():
        return
    world = distributed.world_size()
    train = run.loaders.train
    check_batch(train.batch_size, world, train.num_samples)
    train.shard = (distributed.rank(), world)
    device_ids = [run.device.index] if run.device.type == "cuda" else None
    run.model, notice = batchnorm_setup(
        run.model, run.device, sync_bn=run.config.sync_bn, world=world
    )
    run.ddp = DistributedDataParallel(run.model, device_ids=device_ids)
    if notice is not None:
        run.notices.append(notice)


def backward_loss(
    run: TrainingRun,
    loss: torch.Tensor,
    local_n: int,
    local_weight: torch.Tensor | None = None,
) -> torch.Tensor:
    """The loss this rank backpropagates for its chunk of the current batch.

    DDP averages gradients over ranks: grad = (1/W) sum_r grad(L_r). The full
    batch's mean loss is (1/G) sum_r n_r mean_r, so L_r = mean_r * n_r * W / G.
    With equal chunks the factor is 1; the last partial batch of an epoch may
    split unevenly (29 samples: 15 and 14), and without the factor its two
    halves would weigh the same.

    With class weights each mean is over summed weights, not samples:
    ``local_weight`` is this rank's sum S_r, and G the sum over the ranks (one
    small all-reduce), so L_r = mean_r * S_r * W / G.
    """
    if run.ddp is None:
        return loss
    if local_weight is not None:
        weight = local_weight.detach().double().reshape(1)
        total = distributed.all_reduce_sum(weight)
        factor = weight * distributed.world_size() / total
        return loss * factor.to(loss.dtype).squeeze(0)
    train = run.loaders.train
    start = run.batch_in_epoch * train.batch_size
    global_n = min(train.batch_size, train.num_samples - start)
    return loss * (local_n * distributed.world_size() / global_n)


def reduce_sums(sums: Sums) -> None:
    """Replace the rank's loss sum, correct and sample counts by the global ones."""
    if not distributed.active():
        return
    # float64 keeps the counts exact and the loss sum no less precise.
    local = torch.stack(
        [
            sums.loss_sum.double(),
            sums.correct.double(),
            torch.tensor(
                sums.samples, device=sums.loss_sum.device, dtype=torch.float64
            ),
        ]
    )
    loss_sum, correct, samples = distributed.all_reduce_sum(local).tolist()
    device = sums.loss_sum.device
    sums.loss_sum = torch.tensor(loss_sum, device=device, dtype=torch.float32)
    sums.correct = torch.tensor(round(correct), device=device, dtype=torch.long)
    sums.samples = round(samples)


def step_loss(
    loss: torch.Tensor, local_n: int, local_weight: torch.Tensor | None = None
) -> float:
    """The mean loss of the whole (global) batch of this step, as a float.

    ``local_weight``: this rank's summed class weights, when the loss is a
    weighted mean (see :func:`backward_loss`).
    """
    if not distributed.active():
        return loss.item()
    share = float(local_n) if local_weight is None else local_weight.item()
    pair = torch.tensor([loss.item() * share, share], dtype=torch.float64)
    total, count = distributed.all_reduce_sum(pair).tolist()
    return total / count


def stop_agreed(requested: bool) -> bool:
    """True on every rank once any rank was asked to stop (Ctrl+C, Stop).

    One tiny all-reduce per step: a signal reaches the ranks at different
    moments, and a rank that left alone would leave the others waiting in
    DDP's gradient all-reduce until the collective timeout.
    """
    if not distributed.active():
        return requested
    flag = torch.tensor([1.0 if requested else 0.0])
    return distributed.all_reduce_sum(flag).item() > 0


def gather_rng(run: TrainingRun) -> None:
    """Keep every rank's RNG state in ``run.rank_rng`` (all ranks must call).

    A checkpoint holds one process's RNG; dropout on the other ranks would
    resume from rank 0's state. Called where saves happen (epoch ends and
    the end of a run), which every rank reaches at the same step.
    """
    if not distributed.active():
        return
    mine = {"torch": torch.get_rng_state()}
    if run.device.type == "cuda":
        mine["cuda"] = torch.cuda.get_rng_state(run.device)
    gathered = {key: distributed.all_gather(state) for key, state in mine.items()}
    world = distributed.world_size()
    run.rank_rng = [{key: gathered[key][r] for key in mine} for r in range(world)]


def restore_rank_rng(states: object) -> bool:
    """Set this rank's RNG from a checkpoint's ``rank_rng``; False if it has none.

    Only when it was saved by as many processes as run now: on another count
    there is no state that belongs to this rank.
    """
    world = distributed.world_size()
    if world <= 1 or not isinstance(states, list) or len(states) != world:
        return False
    mine = states[distributed.rank()]
    torch.set_rng_state(mine["torch"])
    if "cuda" in mine and torch.cuda.is_available():
        device = distributed.rank_device(torch.device("cuda"))
        torch.cuda.set_rng_state(mine["cuda"], device)
    return True
