"""The Runs tab's Took column: the whole time, the preparation apart (issue 34,
item 25)."""

from __future__ import annotations

from tests.core.test_prepare_time import CFG, _train
from workbench.core.runs.listing import list_runs
from workbench.core.session import Session
from workbench.ui.panels.runs_table import time_text


def test_the_runs_table_shows_the_whole_time_and_the_preparation(runs_root):
    session = Session(origin="test")
    _train(session, CFG)
    (run,) = list_runs()
    run.folder.update(seconds=47.0, prepare_seconds=94.0)
    (run,) = list_runs()
    assert time_text(run) == "2:21 (1:34 prep)"
    run.folder.update(prepare_seconds=0.2)
    (run,) = list_runs()
    assert time_text(run) == "0:47"
