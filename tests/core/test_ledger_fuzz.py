"""Damaged run ledgers: the run stays listed, marked; the others are untouched.

Issue 17. The variants come from ``tests/fuzz_ledgers.py`` (seeded): a
damaged ``run.json`` (invalid JSON, not a dict, wrong types, missing fields,
huge numbers), ``metrics.jsonl`` and ``events.jsonl`` (torn last lines,
garbage lines, binary junk, wrong types, huge numbers). Every reader the Runs
tab, the window's resume offer and ``runs show`` use is called on each; none
may raise, and no file's bytes may change. The window itself is checked in
``tests/ui/test_damaged_files_ui.py``.
"""

from __future__ import annotations

import logging
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.fuzz_ledgers import healthy_run, variants
from workbench.cli.commands import main
from workbench.core.config import ConfigError
from workbench.core.runs.folder import METRICS_FILE, RunFolder, interrupted_runs
from workbench.core.runs.listing import list_runs, read_events, read_metrics
from workbench.core.runs.reproduce import original_config, reproducible
from workbench.core.runs.run_file import DamagedRunFile, forget_after
from workbench.core.runs.tail import AppendedLines, ledger_events

# Variants of each kind (418 in all).
KINDS = {
    "run.json invalid": 14,
    "run.json not a dict": 4,
    "run.json wrong type": 75,
    "run.json field missing": 25,
    "run.json huge number": 36,
    "metrics.jsonl truncated": 5,
    "metrics.jsonl garbage line": 8,
    "metrics.jsonl binary junk": 5,
    "metrics.jsonl wrong type": 72,
    "metrics.jsonl huge number": 126,
    "events.jsonl truncated": 5,
    "events.jsonl garbage line": 8,
    "events.jsonl binary junk": 5,
    "events.jsonl wrong type": 18,
    "events.jsonl huge number": 12,
}


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return root, healthy_run(root), healthy_run(root)


def _files(folder: RunFolder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.path.iterdir() if p.is_file()}


def _read_everything(root: Path, folder: RunFolder, capsys) -> list[str]:
    """Every reader over the damaged run; the problems found."""
    problems = []
    runs = {r.folder.path: r for r in list_runs(root)}
    if len(runs) != 2:
        return [f"{len(runs)} runs listed, not 2"]
    damaged = runs[folder.path]
    why = reproducible(damaged)
    if damaged.problem and (why is None or damaged.problem not in why):
        problems.append(f"reproducible() does not say why: {why}")
    try:
        original_config(folder)
    except ConfigError as exc:
        if not str(exc).strip() or "\n" in str(exc):
            problems.append(f"original_config: {exc!r}")
    read_events(folder)
    ledger_events(AppendedLines(folder.path / METRICS_FILE).read())
    interrupted_runs(root)
    if main(["runs", "show", folder.id]) != 0:
        problems.append("runs show failed")
    if damaged.problem and f"damaged: {damaged.problem}" not in capsys.readouterr().out:
        problems.append("runs show does not say it is damaged")
    capsys.readouterr()
    return problems


@pytest.mark.slow
def test_every_damaged_ledger_is_listed_marked_and_left_as_it_is(
    ledger, capsys, monkeypatch
):
    logging.disable(logging.WARNING)  # every skipped line logs one
    root, folder, healthy = ledger
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(root))  # for runs show
    original, healthy_files = _files(folder), _files(healthy)
    steps = len(read_metrics(folder)["step"])
    healthy_summary = next(r for r in list_runs(root) if r.folder == healthy)
    kinds: Counter[str] = Counter()
    marked: Counter[str] = Counter()
    problems = []
    try:
        for variant in variants(folder):
            kinds[variant.kind] += 1
            for name, data in original.items():
                (folder.path / name).write_bytes(data)
            (folder.path / variant.file).write_bytes(variant.data)
            try:
                found = _read_everything(root, folder, capsys)
                summary = next(r for r in list_runs(root) if r.folder == folder)
                left = len(read_metrics(folder)["step"])
            except Exception as exc:  # the escape this test exists to catch
                problems.append(f"{variant.name}: {type(exc).__name__}: {exc}")
                continue
            problems += [f"{variant.name}: {p}" for p in found]
            if summary.problem:
                marked[variant.kind] += 1
                if summary.status != "damaged" or "\n" in summary.problem:
                    problems.append(f"{variant.name}: marked as {summary.status}")
            whole_file = variant.name.endswith((":empty", ":all-junk", ":utf16"))
            if variant.file == METRICS_FILE and not whole_file and left < steps - 1:
                problems.append(f"{variant.name}: {steps - left} good steps lost")
            if _files(folder) != {**original, variant.file: variant.data}:
                problems.append(f"{variant.name}: a file of the run was changed")
    finally:
        logging.disable(logging.NOTSET)
        for name, data in original.items():
            (folder.path / name).write_bytes(data)
    assert kinds == KINDS, kinds  # seeded: the same files every time
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)
    # The healthy run beside it was listed unchanged every time.
    assert _files(healthy) == healthy_files
    assert next(r for r in list_runs(root) if r.folder == healthy) == healthy_summary
    # A run.json that cannot be read is always marked; wrong types nearly always
    # (the fields only shown as they are, such as argv, are not checked).
    for kind in ("run.json invalid", "run.json not a dict"):
        assert marked[kind] == kinds[kind], kind
    assert marked["run.json wrong type"] >= 50
    assert marked["run.json huge number"] >= 30
    assert marked["run.json field missing"] == 0  # older runs lack fields
    assert not any(kind.startswith(("metrics", "events")) for kind in marked)


def test_a_damaged_run_json_is_never_rewritten(tmp_path):
    folder = RunFolder(tmp_path / "run")
    folder.path.mkdir()
    for data in (b'{"status": "finished", "tags": 5}', b"{not json", b"[1]"):
        (folder.path / "run.json").write_bytes(data)
        for change in (
            lambda: folder.update(name="x"),
            lambda: folder.claim(),
            lambda: folder.record_mask_change(3, ["a"]),
        ):
            with pytest.raises(OSError, match=r"run\.json|is gone") as caught:
                change()
            if data.startswith(b'{"'):
                assert isinstance(caught.value, DamagedRunFile)
                assert "tags is 5, not a list of strings" in str(caught.value)
            assert (folder.path / "run.json").read_bytes() == data
        assert folder.info() == {}


def test_resuming_keeps_unreadable_ledger_lines_and_drops_later_steps(tmp_path):
    path = tmp_path / METRICS_FILE
    lines = [
        b'{"kind": "step", "global_step": 1, "loss": 1.0}\n',
        b"\xff\xfe junk\n",
        b'{"kind": "step", "global_step": "x", "loss": 1.0}\n',
        b'{"kind": "step", "global_step": 5, "loss": 1.0}\n',
        b'{"kind": "step", "global_st',
    ]
    path.write_bytes(b"".join(lines))
    forget_after(path, 3)
    assert path.read_bytes() == b"".join(lines[:3])


def test_damaged_runs_are_listed_beside_a_healthy_one(tmp_path, ledger):
    """Two damaged copies and a healthy run: three lines, two marked, newest first."""
    _root, folder, _healthy = ledger
    for name, data in (("a", b""), ("b", b'{"global_step": -1}')):
        copy = tmp_path / f"20990101-000000-{name}"
        shutil.copytree(folder.path, copy)
        (copy / "run.json").write_bytes(data)
    shutil.copytree(folder.path, tmp_path / folder.id)
    runs = list_runs(tmp_path)
    assert [r.status for r in runs] == ["damaged", "damaged", "finished"]
    assert runs[0].problem == "run.json: global_step is -1, not a whole number"
    assert runs[1].problem == (
        "run.json is not valid JSON: Expecting value: line 1 column 1 (char 0)"
    )
    assert runs[2].problem is None
    assert runs[2].global_step == 3


def test_continuing_a_run_whose_run_json_is_damaged_records_it_anew(ledger, tmp_path):
    from workbench.core.session import Session

    _root, folder, _healthy = ledger
    copy = RunFolder(tmp_path / folder.id)
    shutil.copytree(folder.path, copy.path)
    (copy.path / "run.json").write_bytes(b'{"status": 3}')
    session = Session(origin="test")
    session.adopt(session.open(copy.checkpoint_path, evaluate=False))
    plan = session.plan(session.run.config.replace(max_steps=5))
    notes = session.begin(plan)
    assert notes == [f"{copy.path} is damaged or gone: a new folder records it"]
    assert session.folder is not None
    assert session.folder.path != copy.path
    assert (copy.path / "run.json").read_bytes() == b'{"status": 3}'
