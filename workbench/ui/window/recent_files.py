"""File > Open recent: a label per file that tells the user which it is."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.runs.folder import CHECKPOINT_FILE, RUN_FILE, RunFolder
from workbench.ui.formatting import local_time


def run_label(path: Path) -> str:
    """The run ``path`` is the checkpoint of ("" when it is no run's)."""
    if path.name != CHECKPOINT_FILE or not (path.parent / RUN_FILE).is_file():
        return ""
    try:
        info = RunFolder(path.parent).info()
    except (OSError, ValueError):
        return ""
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    what = f"{config.get('model', '?')} on {config.get('dataset', '?')}"
    when = local_time(str(info.get("created") or ""))
    name = info.get("name")
    return f"{name} ({what})" if name else f"{what}, {when}"


def recent_entries(paths: list[str]) -> list[tuple[str, str]]:
    """``(label, path)`` per distinct file of ``paths``, in their order.

    The same file reached by two paths (a symlink, ``..``) is listed once, at
    its first place. A label is the file name, followed when several files share
    that name by as many of its folders as tell them apart:
    ``checkpoint.pt — 20261201-120011-digits-mlp-ee9c``. A run folder's
    checkpoint is named by its run instead: ``mlp on digits, 2026-12-01 12:00 —
    checkpoint.pt`` (its name when it has one).
    """
    unique: list[Path] = []
    for text in paths:
        path = Path(os.path.realpath(Path(text).expanduser()))
        if path not in unique:
            unique.append(path)
    labels = {}
    for name in {p.name for p in unique}:
        same = [p for p in unique if p.name == name]
        if len(same) == 1:
            labels[same[0]] = name
            continue
        depth = 1
        while depth < max(len(p.parent.parts) for p in same):
            wheres = [Path(*p.parent.parts[-depth:]) for p in same]
            if len(set(wheres)) == len(same):
                break
            depth += 1
        for p in same:
            labels[p] = f"{name} — {Path(*p.parent.parts[-depth:])}"
    for p in unique:  # a run's checkpoint: the run first, then the file
        run = run_label(p)
        if run:
            labels[p] = f"{run} — {p.name}"
    shown = [labels[p] for p in unique]
    for p in unique:  # two runs alike, started the same minute: their ids
        if shown.count(labels[p]) > 1:
            labels[p] = f"{labels[p]} ({p.parent.name})"
    return [(labels[p], str(p)) for p in unique]
