"""The recompiles an epoch makes torch.compile do, found before training.

A compiled run compiles again when something its graphs were traced for
changes: the epoch's partial last batch, validation's eval mode without
gradients, validation's own partial batch. :func:`epoch_recompiles` walks a
copy of the run's model through two epochs' worth of those inputs and modes,
in the order the engine meets them, and reads Dynamo's ``recompiles`` log.

Guards, and so recompiles, are Dynamo's and do not depend on the backend: the
copy is compiled with one that runs each graph eagerly, in a cache region of
its own (as :func:`~workbench.core.perf.graph_breaks.explain_graph_breaks`
does), so the walk takes seconds, not a compile each, and never touches the
trainer's compiled code. Dynamo's per-code notes of which sizes change
(automatic dynamic) are shared by every model of a class: the walk starts
without any, as a new process does, and puts them back afterwards, so a later
training compiles as if the walk never happened.
"""

from __future__ import annotations

import copy

import torch

from workbench.core.perf.graph_breaks import (
    Recompile,
    dynamo_notes_kept,
    watch_recompiles,
)
from workbench.core.train.probes import autocast_context
from workbench.core.training_run import TrainingRun


def epoch_recompiles(run: TrainingRun) -> tuple[Recompile, ...]:
    """The recompiles two epochs of ``run`` would cause, oldest first.

    The walk, as the engine trains: a full training batch, validation's first
    batch (the engine compiles it with the first step), the epoch's next full
    batch, its partial last batch when the training split has one,
    validation's full and partial batches in eval mode without gradients;
    then the next epoch's first batch.
    Numbers a user's ``forward`` reads and changes between steps (a scheduler
    value) are the run's own doing: the trainer says those as they happen.

    Do not call it while another thread compiles: Dynamo's logging settings and
    its notes of sizes seen are process-wide.
    """
    source = getattr(run.model, "_orig_mod", run.model)
    # nn.Module's __getstate__ drops an in-place model.compile(): the copy is plain.
    twin = copy.deepcopy(source)
    compiled = torch.compile(twin, backend="eager", isolate_recompiles=True)
    train_x = _first_batch(run.loaders.train)
    val_x = _first_batch(run.loaders.val)
    full, train_rest = divmod(
        run.loaders.train.num_samples, run.loaders.train.batch_size
    )
    val_rest = run.loaders.val.num_samples % run.loaders.val.batch_size

    def train(x: torch.Tensor) -> None:
        twin.train()
        with autocast_context(run.precision, run.device):
            compiled(x)

    def validate(x: torch.Tensor) -> None:
        twin.eval()  # validation reads in full precision (probes.evaluate)
        with torch.no_grad():
            compiled(x)

    # As a new process trains: no sizes seen before (the doctor's own arms).
    with dynamo_notes_kept(start_empty=True), watch_recompiles() as watch:
        train(train_x)
        validate(val_x)
        if full > 1:  # Dynamo tries the entry used last first: the training one
            train(train_x)
        if train_rest:
            train(train_x[:train_rest])
        validate(val_x)
        if val_rest:
            validate(val_x[:val_rest])
        train(train_x)
    return watch.recompiles


def _first_batch(loader: object) -> torch.Tensor:
    x, _y = next(iter(loader))  # type: ignore[call-overload]
    return x
