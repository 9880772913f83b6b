"""A run's ledger on a real full disk: said once, and whole again once there is room."""

from __future__ import annotations

import json

from workbench.core import events as E
from workbench.core.atomic_files import append_jsonl, read_jsonl
from workbench.core.config import TrainConfig
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import read_metrics
from workbench.core.runs.recorder import RunRecorder
from workbench.core.train.engine import iter_fit, prepare_run


def test_a_full_disk_is_said_once_and_the_ledger_resumes_whole(small_disk, tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=2, batch_size=32, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)  # 8 steps an epoch
    folder = RunFolder.create(cfg, origin="test", root=small_disk.path)
    recorder = RunRecorder(folder, 0)
    assert recorder.start(run) is None
    small_disk.fill()
    said = []
    for event in iter_fit(run):
        said.append(recorder.on_event(event, run))
        if isinstance(event, E.StepMetrics) and event.global_step == 5:
            small_disk.free()  # the user made room
    messages = [m for m in said if m is not None]
    assert len(messages) == 1, messages  # not once a step
    assert messages[0].startswith(f"cannot write the run folder {folder.path}")
    assert "No space left on device" in messages[0]
    steps = [s.global_step for s in read_metrics(folder)["step"]]
    assert steps[-11:] == list(range(6, 17))  # every step once there was room
    assert folder.info()["status"] == "finished"


def test_a_record_after_a_torn_line_starts_a_line_of_its_own(tmp_path):
    path = tmp_path / "metrics.jsonl"
    append_jsonl(path, {"kind": "step", "global_step": 1})
    with open(path, "ab") as handle:
        handle.write(b'{"kind": "step", "glo')  # killed mid-write
    append_jsonl(path, {"kind": "step", "global_step": 3})
    assert [r["global_step"] for r in read_jsonl(path)] == [1, 3]


def test_a_line_the_disk_cut_short_is_taken_back(small_disk):
    path = small_disk.path / "metrics.jsonl"
    append_jsonl(path, {"kind": "step", "global_step": 1})
    small_disk.fill(leave=8192)  # room for part of the next line only
    big = {"kind": "health", "global_step": 2, "layers": ["x" * 64] * 1000}
    try:
        append_jsonl(path, big)
    except OSError:
        pass
    else:
        raise AssertionError("the line fitted: the disk was not full enough")
    small_disk.free()
    append_jsonl(path, {"kind": "step", "global_step": 3})
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["global_step"] for line in lines] == [1, 3]
