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
from workbench.core.runs import RunFolder, read_metrics


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
        The first global step whose losses differ.
    original, repeated : float or None
        The two losses at that step.
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
        if self.first_difference is None:
            return f"not reproduced: the runs logged different steps ({self.compared})"
        return (
            f"not reproduced: the losses first differ at step {self.first_difference:,}"
            f" ({self.original!r} vs {self.repeated!r})"
        )


def original_config(folder: RunFolder) -> TrainConfig:
    """The config of a finished run, ready to run again.

    Raises
    ------
    ConfigError
        When the run did not finish (its length is unknown) or has no config.
    """
    info = folder.info()
    if info.get("started_from"):
        raise ConfigError(
            f"run {folder.id} started from {info['started_from']}, not from its "
            "seed: its config alone cannot repeat it"
        )
    changed = info.get("changed_on_resume") or []
    if "frozen" in changed:
        raise ConfigError(
            f"run {folder.id} changed its freeze mask while it trained: its "
            "starting config would train other layers, so it cannot repeat it"
        )
    if changed:
        raise ConfigError(
            f"run {folder.id} was resumed with other settings "
            f"({', '.join(changed)}): no single config repeats it"
        )
    if info.get("status") != "finished":
        raise ConfigError(
            f"run {folder.id} did not finish ({info.get('status', 'unknown')}): only "
            "a finished run can be reproduced step for step"
        )
    try:
        return TrainConfig.from_dict(info["config"])
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"run {folder.id} has no usable config: {exc}") from exc


def compare(
    original: Sequence[StepMetrics], repeated: list[tuple[int, float]]
) -> Reproduction:
    """Compare the logged steps with a repeat's ``(step, loss)`` history."""
    first = [(s.global_step, s.loss) for s in original]
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
