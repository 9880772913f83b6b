"""What Start does with a config: continue the run, resume it, or begin anew.

:func:`plan_start` is the one policy both front-ends follow (through
:meth:`~workbench.core.session.Session.plan`): a run **continues** unchanged,
**resumes** with settings that are safe to change mid-run (:data:`RESUME_SAFE`),
or a **new** run begins because a setting that shapes the model or the
optimisation changed, or nothing is left to train.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum

import torch

from workbench.core.config import TrainConfig
from workbench.core.model_offer import ModelKey
from workbench.core.train.best_epoch import run_stop_reason
from workbench.core.train.devices import DeviceError, resolve_device
from workbench.core.training_run import TrainingRun

# Settings a run can change and still continue from where it is: they change
# how or how long it trains, not the model or the optimisation it continues.
RESUME_SAFE = frozenset(
    {
        "epochs",
        "max_steps",
        "device",
        "precision",
        "loader",
        "workers",
        "pin_memory",
        "compile",
        "compile_mode",
        "channels_last",
        "log_every",
        "download",
        "data_dir",
        "autosave_every",
        # How BatchNorm statistics are computed across processes, not the model.
        "sync_bn",
        # When to stop and which epoch to keep: judged on the history as it is.
        "early_stop",
        "early_stop_delta",
        "best_metric",
    }
)


class StartKind(StrEnum):
    """What Start does with the current run."""

    NEW = "new"
    CONTINUE = "continue"
    RESUME = "resume"


@dataclass(frozen=True)
class InitialWeights:
    """Weights the next new run of this architecture starts from ("Load weights")."""

    model_key: ModelKey  # (architecture, classes, input shape)
    state: dict[str, torch.Tensor]
    source: str  # the file's name
    summary: str  # what was loaded, e.g. "all 8 tensors loaded"


@dataclass(frozen=True)
class Plan:
    """What Start will do, decided by :func:`plan_start`.

    ``changed``: settings that differ from the current run's (the freeze mask
    aside). ``why_new``: why a run exists but a new one begins. ``started_from``:
    what the run folder records as its origin (weights, a fine-tune).
    """

    kind: StartKind
    config: TrainConfig
    changed: tuple[str, ...] = ()
    why_new: str = ""
    finished: bool = False  # NEW because the run reached its last step
    initial_weights: InitialWeights | None = None
    fine_tune_from: dict[str, torch.Tensor] | None = None
    started_from: str | None = None


def changed_settings(before: TrainConfig, after: TrainConfig) -> set[str]:
    """Names of the config fields whose values differ (``frozen`` ignored)."""
    return {
        f.name
        for f in dataclasses.fields(TrainConfig)
        if f.name != "frozen" and getattr(before, f.name) != getattr(after, f.name)
    }


def plan_start(run: TrainingRun | None, cfg: TrainConfig) -> Plan:
    """The one policy for Start: continue, resume with safe changes, or new."""
    if run is None:
        return Plan(StartKind.NEW, cfg)
    changed = tuple(sorted(changed_settings(run.config, cfg)))
    unsafe = sorted(set(changed) - RESUME_SAFE)
    if unsafe:
        why = f"{', '.join(unsafe)} changed: a run continues only with its settings"
        return Plan(StartKind.NEW, cfg, changed, why)
    total = cfg.resolved_epochs * run.steps_per_epoch
    if cfg.max_steps is not None:
        total = min(total, cfg.max_steps)
    if run.global_step >= total:
        why = (
            f"nothing left to train: the run is at step {run.global_step:,} and "
            f"these settings end it at step {total:,} (raise max steps or epochs "
            "to train on)"
        )
        return Plan(StartKind.NEW, cfg, changed, why, finished=True)
    early = run_stop_reason(run, cfg)
    if early is not None:
        why = (
            f"the run stopped early: {early} (raise the patience or turn early "
            "stopping off to train on)"
        )
        return Plan(StartKind.NEW, cfg, changed, why, finished=True)
    kind = StartKind.RESUME if changed else StartKind.CONTINUE
    return Plan(kind, cfg, changed)


def usable_here(cfg: TrainConfig) -> tuple[TrainConfig, list[str]]:
    """``cfg`` with the device and precision swapped if this machine lacks them."""
    notes = []
    try:
        device = resolve_device(cfg.device)
    except DeviceError as exc:
        notes.append(f"{exc}; training on the best available device instead")
        cfg = cfg.replace(device="auto")
        device = resolve_device("auto")
    if cfg.precision == "fp16" and device.type != "cuda":
        notes.append("fp16 needs CUDA; this checkpoint continues in fp32")
        cfg = cfg.replace(precision="fp32")
    return cfg, notes
