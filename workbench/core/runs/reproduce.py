"""Run a finished run again and say whether it came out the same.

Same config, same seed, same data: on the CPU the loss of every logged step
must repeat exactly. Anything else (another device, another library version,
a nondeterministic kernel) shows as the first step where the losses differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.events import StepMetrics
from workbench.core.models.source import SHA_KEY, model_file_change
from workbench.core.runs.data_record import data_change
from workbench.core.runs.folder import RUN_FILE, RunFolder
from workbench.core.runs.listing import RunSummary, read_metrics, summarize


@dataclass(frozen=True, slots=True)
class Reproduction:
    """The verdict of comparing a repeat with the original run.

    Attributes
    ----------
    reproduced : bool
        True when every logged loss is identical.
    compared : int
        Logged steps compared.
    first_difference : int or None
        The first global step whose losses differ, or (with no losses) the
        original's first step the repeat did not log at that place; None when
        one history is the other's beginning.
    original, repeated : float or None
        The two losses at that step (None when the steps differ).
    """

    reproduced: bool
    compared: int
    first_difference: int | None = None
    original: float | None = None
    repeated: float | None = None

    def describe(self) -> str:
        """One line for the user."""
        if self.reproduced:
            return f"reproduced: all {self.compared} logged losses are identical"
        if self.compared == 0 and self.first_difference is None:
            return "not reproduced: no logged losses to compare"
        if self.first_difference is None:
            return (
                "not reproduced: one run logged more steps than the other (the "
                f"same first {self.compared:,})"
            )
        if self.original is None or self.repeated is None:
            return (
                "not reproduced: the runs logged different steps, from the "
                f"original's step {self.first_difference:,} on"
            )
        return (
            f"not reproduced: the losses first differ at step {self.first_difference:,}"
            f" ({self.original!r} vs {self.repeated!r})"
        )


def reproducible(run: RunSummary) -> str | None:
    """Why ``run`` cannot be reproduced, or None when it can.

    The one decision behind :func:`original_config` (so ``Session.reproduce``)
    and the Runs tab's Reproduce button: what one refuses, the other disables.

    Parameters
    ----------
    run : RunSummary
        A line of :func:`~workbench.core.runs.listing.list_runs`.

    Returns
    -------
    str or None
        A sentence for the user, e.g. "run X is still training...".
    """
    if run.problem:
        return f"run {run.id} is damaged: {run.problem}"
    if run.started_from:
        return (
            f"run {run.id} started from {run.started_from}, not from its seed: "
            "its config alone cannot repeat it"
        )
    if "frozen" in run.changed:
        return (
            f"run {run.id} changed its freeze mask while it trained: its starting "
            "config would train other layers, so it cannot repeat it"
        )
    if run.changed:
        return (
            f"run {run.id} was resumed with other settings "
            f"({', '.join(run.changed)}): no single config repeats it"
        )
    if run.status == "running":
        return (
            f"run {run.id} is still training (or was interrupted): only a finished "
            "run can be reproduced step for step"
        )
    if run.status != "finished":
        return (
            f"run {run.id} did not finish ({run.status}): only a finished run can "
            "be reproduced step for step"
        )
    if not run.config:
        return f"run {run.id} has no config in its {RUN_FILE}"
    try:
        TrainConfig.from_dict(run.config)
    except (ConfigError, KeyError, TypeError, ValueError) as exc:
        return f"run {run.id} has no usable config: {exc}"
    return None


def original_config(folder: RunFolder) -> TrainConfig:
    """The config of a finished run, ready to run again.

    Raises
    ------
    ConfigError
        With :func:`reproducible`'s reason when the run cannot be repeated
        (it did not finish, changed settings midway, has no config...), or
        naming the difference when its image folder changed since.
    """
    run = summarize(folder)
    if run is None:
        raise ConfigError(f"run {folder.id} has no readable {RUN_FILE}")
    reason = reproducible(run)
    if reason is not None:
        raise ConfigError(reason)
    cfg = TrainConfig.from_dict(run.config)
    changed = data_change(folder, cfg)
    if changed is None:
        recorded = folder.info().get(SHA_KEY)
        changed = model_file_change(cfg.model, recorded, f"run {folder.id}")
    if changed is not None:
        raise ConfigError(changed)
    return cfg


def compare(
    original: Sequence[StepMetrics], repeated: list[tuple[int, float]]
) -> Reproduction:
    """Compare the logged steps with a repeat's ``(step, loss)`` history."""
    first = [(s.global_step, s.loss) for s in original]
    if not first or not repeated:  # nothing logged proves nothing
        return Reproduction(False, 0)
    if [s for s, _ in first] != [s for s, _ in repeated]:
        mismatch = next(
            (a for (a, _), (b, _) in zip(first, repeated, strict=False) if a != b), None
        )
        return Reproduction(False, min(len(first), len(repeated)), mismatch)
    for (step, a), (_, b) in zip(first, repeated, strict=True):
        if a != b:
            return Reproduction(False, len(first), step, a, b)
    return Reproduction(True, len(first))


def compare_with_folder(
    folder: RunFolder, repeated: list[tuple[int, float]]
) -> Reproduction:
    """Compare a repeat's history with the losses ``folder`` logged."""
    return compare(read_metrics(folder)["step"], repeated)


def judge_repeat(original: RunFolder, repeat: RunFolder) -> Reproduction:
    """Compare a repeat that logged into its own run folder (a run on several
    processes) with ``original``, and record the verdict in both folders."""
    steps = [(s.global_step, s.loss) for s in read_metrics(repeat)["step"]]
    verdict = compare(read_metrics(original)["step"], steps)
    original.update(last_reproduction=verdict.describe())
    repeat.update(reproduction_of=original.id)
    return verdict
