"""run.json says how many processes trained the run; the runs list shows it."""

from __future__ import annotations

from workbench.core.config import TrainConfig
from workbench.core.runs.folder import RUN_FILE, RunFolder
from workbench.core.runs.listing import summarize


def test_run_json_records_the_world_size_and_old_runs_read_as_one(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("WORLD_SIZE", "2")  # as torchrun sets it in every rank
    two = RunFolder.create(TrainConfig(), origin="command line", root=tmp_path)
    assert two.info()["world_size"] == 2
    assert summarize(two).world_size == 2

    monkeypatch.delenv("WORLD_SIZE")
    one = RunFolder.create(TrainConfig(), origin="window", root=tmp_path / "one")
    assert summarize(one).world_size == 1
    old = one.info()
    del old["world_size"]  # a run.json written before the field existed
    one._write(old)
    assert "world_size" not in (one.path / RUN_FILE).read_text()
    assert summarize(one).world_size == 1


def test_a_resumed_run_records_the_processes_that_continue_it(tmp_path, monkeypatch):
    folder = RunFolder.create(TrainConfig(), origin="window", root=tmp_path)
    monkeypatch.setenv("WORLD_SIZE", "3")
    folder.claim()
    assert summarize(folder).world_size == 3
