"""Reading the ledger back: the runs list, finding a run, its metrics and events."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from workbench.core.atomic_files import read_jsonl
from workbench.core.events import (
    EpochMetrics,
    LayerHealth,
    StepMetrics,
    WeightHistograms,
    event_from_record,
)
from workbench.core.runs.folder import (
    EVENTS_FILE,
    METRICS_FILE,
    RUN_FILE,
    RunFolder,
    runs_dir,
    still_training,
)
from workbench.core.runs.run_file import read_run_file
from workbench.core.train.class_scores import recorded_average

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One line of the runs list."""

    folder: RunFolder
    id: str
    name: str
    tags: tuple[str, ...]
    created: str
    dataset: str
    model: str
    status: str
    best_val_accuracy: float | None
    seconds: float
    global_step: int
    config: dict[str, Any]
    started_from: str | None = None  # not the seed's weights (a fine-tune)
    changed: tuple[str, ...] = ()  # settings changed after it began
    world_size: int = 1  # processes that trained it (older runs: 1)
    prepare_seconds: float = 0.0  # from Start to the first step, apart from seconds
    problem: str | None = None  # why its run.json is damaged (then all defaults)
    sweep: str = ""  # "STUDY #N": the sweep trial it is, if any
    early_stop: str = ""  # "after epoch N: why", when it stopped early
    # Its last validation's F1 averaged over the classes (run.json's class_scores)
    macro_f1: float | None = None  # every class counts the same
    weighted_f1: float | None = None  # each class by its images
    # A cross-validation's fold run: its group's id and "fold 2 of 5" ("" if not)
    fold_group: str = ""
    fold: str = ""

    @property
    def title(self) -> str:
        """The name the user gave, else the id."""
        return self.name or self.id


def shown_status(info: dict[str, Any]) -> str:
    """The run's status as the list shows it: a dead "running" run is interrupted.

    ``run.json`` keeps "running" (only a resume changes it): a killed run, one
    whose process died of an error it could not record, reads "interrupted".
    """
    status = info.get("status") or "?"
    if status == "running" and not still_training(info):
        return "interrupted"
    return status


def summarize(folder: RunFolder) -> RunSummary | None:
    """The runs-list line of ``folder``; None without a ``run.json``.

    A damaged ``run.json`` gives a line with status "damaged" and its
    ``problem``: the run stays in the list, marked, and its file untouched.
    """
    data, problem = read_run_file(folder.path / RUN_FILE)
    if data is None:
        return None
    info = {} if problem else data
    cfg = info.get("config") or {}
    return RunSummary(
        folder=folder,
        id=info.get("id") or folder.path.name,
        name=info.get("name") or "",
        tags=tuple(info.get("tags") or ()),
        created=info.get("created") or "",
        dataset=str(cfg.get("dataset", "?")),
        model=str(cfg.get("model", "?")),
        status="damaged" if problem else shown_status(info),
        best_val_accuracy=info.get("best_val_accuracy"),
        seconds=float(info.get("seconds") or 0.0),
        global_step=info.get("global_step") or 0,
        config=cfg,
        started_from=info.get("started_from") or None,
        changed=tuple(info.get("changed_on_resume") or ()),
        world_size=info.get("world_size") or 1,
        prepare_seconds=float(info.get("prepare_seconds") or 0.0),
        problem=problem,
        sweep=_sweep_label(info.get("sweep")),
        early_stop=_early_stop_text(info.get("early_stop")),
        macro_f1=recorded_average(info.get("class_scores"), "macro"),
        weighted_f1=recorded_average(info.get("class_scores"), "weighted"),
        **_fold_fields(info.get("folds")),
    )


def _early_stop_text(value: Any) -> str:
    """``"after epoch 9: why"`` from run.json's early_stop entry; "" if none."""
    if not isinstance(value, dict) or not isinstance(value.get("epoch"), int):
        return ""
    return f"after epoch {value['epoch']}: {value.get('why') or 'no improvement'}"


def _fold_fields(value: Any) -> dict[str, str]:
    """``fold_group`` and ``fold`` ("fold 2 of 5") from run.json's folds entry."""
    if not isinstance(value, dict):
        return {}
    group, fold, of = value.get("group"), value.get("fold"), value.get("of")
    if (
        not isinstance(group, str)
        or not isinstance(fold, int)
        or not isinstance(of, int)
    ):
        return {}
    return {"fold_group": group, "fold": f"fold {fold + 1} of {of}"}


def _sweep_label(value: Any) -> str:
    """``"STUDY #N"`` from run.json's sweep entry; "" for other runs or a bad one."""
    if not isinstance(value, dict):
        return ""
    study, trial = value.get("study"), value.get("trial")
    if not isinstance(study, str) or not isinstance(trial, int):
        return ""
    return f"{study} #{trial}"


def list_runs(root: Path | None = None) -> list[RunSummary]:
    """Every run folder with a readable ``run.json``, newest first."""
    root = root or runs_dir()
    try:
        paths = sorted((p for p in root.iterdir() if p.is_dir()), reverse=True)
    except OSError:
        return []
    return [s for s in map(summarize, map(RunFolder, paths)) if s is not None]


def find_run(key: str, root: Path | None = None) -> RunFolder:
    """The run whose id (or a unique prefix of it, or name) is ``key``.

    Raises
    ------
    KeyError
        With a message listing what matched (none or several).
    """
    runs = list_runs(root)
    exact = [r for r in runs if key in (r.id, r.name)]
    matches = exact or [r for r in runs if r.id.startswith(key)]
    if len(matches) == 1:
        return matches[0].folder
    if not matches:
        raise KeyError(f"no run {key!r} in {root or runs_dir()}")
    ids = ", ".join(r.id for r in matches[:5])
    raise KeyError(f"{key!r} matches {len(matches)} runs ({ids}): give more of the id")


class RunMetrics(TypedDict):
    """A run's logged events by kind (the ``kind`` of their ledger lines)."""

    step: list[StepMetrics]
    epoch: list[EpochMetrics]
    health: list[LayerHealth]
    histograms: list[WeightHistograms]


def read_metrics(folder: RunFolder) -> RunMetrics:
    """A run's logged events, typed, by kind, in the order they were logged.

    Each line is read by its event's ``from_record``, so ledgers written by
    earlier versions load too. A torn last line (a crash), a line of a kind
    this version does not know and a line it cannot read are skipped.
    """
    out = RunMetrics(step=[], epoch=[], health=[], histograms=[])
    unreadable = 0
    for record in read_jsonl(folder.path / METRICS_FILE):
        try:
            event = event_from_record(record)
        except (KeyError, TypeError, ValueError):
            unreadable += 1
            continue
        if isinstance(event, StepMetrics):
            out["step"].append(event)
        elif isinstance(event, EpochMetrics):
            out["epoch"].append(event)
        elif isinstance(event, LayerHealth):
            out["health"].append(event)
        elif isinstance(event, WeightHistograms):
            out["histograms"].append(event)
    if unreadable:
        log.warning("skipped %d unreadable lines of %s", unreadable, folder.path)
    return out


def read_events(folder: RunFolder) -> list[dict[str, Any]]:
    """What the user did during the run, oldest first."""
    return read_jsonl(folder.path / EVENTS_FILE)
