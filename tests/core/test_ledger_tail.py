"""Following a ledger another process writes: a half-written line waits."""

from __future__ import annotations

import json

from workbench.core.events import EpochMetrics, StepMetrics
from workbench.core.runs.tail import AppendedLines, ledger_events

STEP = StepMetrics(0, 1, 1, 10, 2.3, 0.1, 0.01, 100.0, 0.5, 0.01)
EPOCH = EpochMetrics(0, 10, 2.0, 0.3, 1.9, 0.4, 100.0, 1.0, ((1, 0), (0, 1)))


def test_a_partial_last_line_is_read_once_it_is_complete(tmp_path):
    path = tmp_path / "metrics.jsonl"
    tail = AppendedLines(path)
    assert tail.read() == []  # not written yet
    step, epoch = json.dumps(STEP.to_record()), json.dumps(EPOCH.to_record())
    with path.open("a") as f:
        f.write(step + "\n" + epoch[:20])  # the writer is mid-line
    assert ledger_events(tail.read()) == [STEP]
    assert tail.read() == []  # the half line is not handed over
    with path.open("a") as f:
        f.write(epoch[20:] + "\n")
    assert ledger_events(tail.read()) == [EPOCH]
    assert tail.read() == []


def test_unreadable_lines_and_unknown_kinds_are_skipped():
    lines = ["{not json", '{"kind": "future"}', '{"kind": "step"}', "[1]"]
    good = json.dumps(STEP.to_record())
    assert ledger_events([*lines, good]) == [STEP]
