"""``ptcore-workbench runs``: the run ledger on the command line."""

from __future__ import annotations

import argparse
from typing import Any

from workbench.cli.console import percent, say
from workbench.core import config as C
from workbench.core import events as E
from workbench.core.runs import folder as R
from workbench.core.runs import listing
from workbench.core.session import Session
from workbench.core.train.class_scores import recorded_average
from workbench.core.train.engine import TrainControl


def run_command(args: argparse.Namespace) -> int:
    """``runs list``, ``runs show ID`` and ``runs reproduce ID``."""

    if args.runs_command == "list":
        summaries = listing.list_runs()
        if not summaries:
            say(f"no runs yet in {R.runs_dir()}")
            return 0
        say(
            f"{'id':40} {'dataset':10} {'model':10} {'best val':>8} {'time':>7}  status"
        )
        for r in summaries:
            best = (
                "n/a" if r.best_val_accuracy is None else percent(r.best_val_accuracy)
            )
            tags = f"  [{', '.join(r.tags)}]" if r.tags else ""
            name = f"  {r.name}" if r.name else ""
            name += f"  sweep {r.sweep}" if r.sweep else ""
            say(
                f"{r.id:40} {r.dataset:10} {r.model:10} {best:>8} "
                f"{r.seconds:6.1f}s  {r.status}{name}{tags}"
            )
        return 0
    try:
        folder = listing.find_run(args.id)
    except KeyError as exc:
        raise C.ConfigError(str(exc.args[0])) from None
    if args.runs_command == "show":
        for line in _run_report(folder):
            say(line)
        return 0
    return _reproduce(folder)


def _run_report(folder: Any) -> list[str]:
    info = folder.info()
    metrics = listing.read_metrics(folder)
    lines = [f"run {folder.id}" + (f" ({info['name']})" if info.get("name") else "")]
    lines.append(f"folder: {folder.path}")
    summary = listing.summarize(folder)
    if summary is not None and summary.problem:
        lines.append(f"damaged: {summary.problem} (the file was left as it is)")
    lines.append(
        f"status: {info.get('status')}, created {info.get('created')} from the "
        f"{info.get('origin')}, {float(info.get('seconds') or 0):.1f} s of training"
    )
    if info.get("tags"):
        lines.append(f"tags: {', '.join(info['tags'])}")
    versions = info.get("versions") or {}
    lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    lines.append(f"device: {info.get('device')}")
    cfg = dict(info.get("config") or {})
    cfg.pop("schema_version", None)
    lines.append("config: " + ", ".join(f"{k}={v}" for k, v in cfg.items()))
    for epoch in metrics["epoch"]:
        lines.append(
            f"epoch {epoch.epoch + 1}: step {epoch.global_step:,}, train loss "
            f"{epoch.train_loss:.4f} acc {percent(epoch.train_accuracy)} | "
            f"val loss {epoch.val_loss:.4f} acc {percent(epoch.val_accuracy)}"
        )
    lines += _scores_line(info.get("class_scores"))
    steps = metrics["step"]
    if steps:
        lines.append(
            f"logged steps: {len(steps)}, last loss {steps[-1].loss:.4f} at step "
            f"{steps[-1].global_step:,}"
        )
    for event in listing.read_events(folder):
        extra = {k: v for k, v in event.items() if k not in ("time", "kind")}
        detail = ", ".join(f"{k}={v}" for k, v in extra.items())
        lines.append(
            f"event {event.get('time')}: {event.get('kind')} {detail}".rstrip()
        )
    checkpoint = folder.checkpoint_path
    if checkpoint.is_file():
        lines.append(
            f"checkpoint: {checkpoint} ({checkpoint.stat().st_size / 1e6:.2f} MB)"
        )
    return lines


def _scores_line(scores: Any) -> list[str]:
    """The macro and weighted F1 run.json keeps of the last validation, if any."""
    macro = recorded_average(scores, "macro")
    weighted = recorded_average(scores, "weighted")
    if macro is None or weighted is None:
        return []
    epoch = scores.get("epoch")
    which = f" (epoch {epoch})" if isinstance(epoch, int) else ""
    return [
        f"class scores{which}: macro F1 {percent(macro)}, weighted F1 "
        f"{percent(weighted)}"
    ]


def _reproduce(folder: Any) -> int:
    """Train ``folder``'s run again and print the verdict (exit 1: not the same).

    The repeat is a check, not a run of its own: it opens no run folder (so
    ``runs list`` does not list it); the verdict goes into the original's
    ``run.json`` (``last_reproduction``).
    """
    summary = listing.summarize(folder)
    if summary is not None and summary.world_size > 1:
        raise C.ConfigError(
            f"run {folder.id} trained on {summary.world_size} processes: here a "
            "repeat trains on one, which is not the same run; reproduce it from "
            f"the window's Runs tab, which trains it on {summary.world_size}"
        )
    session = Session(origin="command line")
    cfg = session.reproduce(folder)
    say(f"training {folder.id} again: {cfg.model} on {cfg.dataset}, seed {cfg.seed}")
    plan = session.plan(cfg)  # not session.begin(plan): no folder, no ledger
    result = None
    for event in session.train(plan, TrainControl()):
        if isinstance(event, E.TrainResult):
            result = event
    verdict = session.finish(result).reproduction
    if verdict is None:
        say("the repeat stopped before the end")
        return 1
    say(verdict.describe())
    return 0 if verdict.reproduced else 1
