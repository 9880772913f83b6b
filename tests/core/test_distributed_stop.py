"""Several processes end together: Ctrl+C stops every rank, a failure ends them all.

``train --nproc 2`` makes its own process torchrun's agent. SIGINT to it (the
terminal's Ctrl+C, or the window's Stop) reaches each rank once; the ranks agree
to stop after the same batch and rank 0 saves. A rank that raises ends the others
within seconds, and one line names it and its error.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from workbench.cli.distributed import failure_message, first_failure, record_failure

LAUNCH = [sys.executable, "-m", "workbench", "train", "--dataset", "digits"]


def _env(runs: Path) -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PTCORE_RUNS_DIR": str(runs)}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text().split()
        found += [int(p) for p in text]
    return found


def _rank_of(pid: int) -> int:
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    (rank,) = [v for v in environ if v.startswith(b"RANK=")]
    return int(rank[5:])


def _interrupt_while_training(runs: Path) -> tuple[str, str, int, list]:
    """Start a long 2-process run; SIGINT rank 1 alone while it trains."""
    command = [*LAUNCH, "--model", "mlp", "--epochs", "60", "--batch-size", "64"]
    launcher = subprocess.Popen(
        [*command, "--nproc", "2"],
        env=_env(runs),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Wait until training is under way: a run folder with logged steps.
        deadline = time.monotonic() + 90
        ranks: list[int] = []
        while time.monotonic() < deadline:
            metrics = list(runs.glob("*/metrics.jsonl"))
            if metrics and metrics[0].stat().st_size > 2000:
                ranks = _children(launcher.pid)
                break
            time.sleep(0.2)
        assert len(ranks) == 2, "the two ranks never started training"
        (rank_1,) = [pid for pid in ranks if _rank_of(pid) == 1]
        os.kill(rank_1, signal.SIGINT)
        out, err = launcher.communicate(timeout=50)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    return out, err, launcher.returncode, ranks


@pytest.mark.slow
def test_sigint_stops_every_rank_after_one_batch_and_rank_0_saves(tmp_path):
    """One rank alone gets Ctrl+C (another machine's terminal): all stop together.

    SIGINT to the launcher (the terminal's Ctrl+C, the window's Stop) passes it
    to every rank: tests/ui/test_process_job.py stops a job that way."""
    runs = tmp_path / "runs"
    out, err, code, ranks = _interrupt_while_training(runs)
    assert code == 130, err[-2000:]
    assert not [pid for pid in ranks if _alive(pid)], "a rank outlived the stop"
    assert "Traceback" not in err, err[-2000:]
    assert "error" not in err, err[-2000:]
    # Rank 0 said where it stopped, once, and saved that step.
    stopped = [line for line in out.splitlines() if line.startswith("stopped: step")]
    assert len(stopped) == 1, out[-2000:]
    step = int(stopped[0].split()[2].split("/")[0])
    (folder,) = runs.iterdir()
    info = json.loads((folder / "run.json").read_text())
    assert info["status"] == "stopped"
    payload = torch.load(folder / "checkpoint.pt", weights_only=True)
    assert payload["global_step"] == step > 0


FLAKY = '''
import os
import time
from torch import nn


class Flaky(nn.Module):
    """Raises on rank 1 at its 5th training step (and notes when)."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.fc = nn.Linear(784, num_classes)
        self.calls = 0

    def forward(self, x):
        if self.training:
            self.calls += 1
            if os.environ.get("RANK") == "1" and self.calls == 5:
                with open(os.environ["FAILED_AT"], "w") as file:
                    file.write(repr(time.time()))
                raise RuntimeError("boom on purpose")
        return self.fc(x.flatten(1))
'''


@pytest.mark.slow
def test_a_failing_rank_ends_the_others_and_is_named(tmp_path):
    model = tmp_path / "flaky.py"
    model.write_text(FLAKY)
    failed_at = tmp_path / "failed_at"
    env = {**_env(tmp_path / "runs"), "FAILED_AT": str(failed_at)}
    command = [*LAUNCH, "--model", f"{model}:Flaky", "--epochs", "5", "--nproc", "2"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    ended = time.time()
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "ptcore-workbench train: error: rank 1 failed: RuntimeError: boom on "
        "purpose; the other processes were ended"
    )
    # Rank 0 lost its peer mid-collective: it is not named and prints nothing.
    assert "[rank0]" not in done.stderr
    assert "Connection closed" not in done.stderr
    assert ended - float(failed_at.read_text()) < 10


def _failure(exitcode, own=None):
    return SimpleNamespace(
        exitcode=exitcode,
        error_file_data={"ptcore_workbench": own} if own else {},
        signal_name=lambda: "SIGTERM",
    )


def test_the_first_failure_is_the_cause_never_a_lost_peer():
    failures = {
        0: _failure(1, {"error": "RuntimeError: x", "time": 10.0, "peer_lost": True}),
        1: _failure(1, {"error": "ValueError: bad", "time": 11.0}),
        2: _failure(-15),
    }
    rank, failure = first_failure(failures)
    assert rank == 1
    assert failure_message(failure) == "ValueError: bad"
    assert failure_message(failures[2]) == "ended by signal SIGTERM"
    assert failure_message(_failure(3)) == "exit code 3"


def test_a_rank_writes_its_error_for_torchrun(tmp_path, monkeypatch):
    path = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    monkeypatch.setenv("WORLD_SIZE", "2")
    record_failure(RuntimeError("gloo: Connection closed by peer"))
    document = json.loads(path.read_text())
    own = document["ptcore_workbench"]
    assert own["peer_lost"] is True
    assert own["error"] == "RuntimeError: gloo: Connection closed by peer"
    # torchrun's own report reads "message" and orders by "timestamp".
    assert document["message"]["message"] == own["error"]
    assert int(document["message"]["extraInfo"]["timestamp"]) == int(own["time"]) + 1


@pytest.mark.slow
def test_an_early_stop_while_the_ranks_start_ends_them_quickly_and_quietly(tmp_path):
    """Stop pressed right after Start: the ranks are still importing torch.
    They keep the signal and stop before their first step, together; none dies
    of a KeyboardInterrupt that would leave the others waiting 30 s."""
    command = [*LAUNCH, "--model", "mlp", "--epochs", "60", "--nproc", "2"]
    launcher = subprocess.Popen(
        command,
        env=_env(tmp_path / "runs"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        ranks: list[int] = []
        while len(ranks) < 2 and time.monotonic() < deadline:
            ranks = _children(launcher.pid)
            time.sleep(0.02)
        assert len(ranks) == 2, "the ranks never started"
        time.sleep(0.5)  # inside `import torch`, long before training
        launcher.send_signal(signal.SIGINT)
        stopped_at = time.monotonic()
        _out, err = launcher.communicate(timeout=60)
        seconds = time.monotonic() - stopped_at
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 130, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert not [pid for pid in ranks if _alive(pid)]
    assert seconds < 20  # the agent would wait 30 s for a rank that died


@pytest.mark.slow
def test_ranks_stop_and_save_when_their_launcher_is_killed(tmp_path):
    """kill -9 of the launcher: its ranks stop together, saved, within seconds."""
    runs = tmp_path / "runs"
    command = [*LAUNCH, "--model", "mlp", "--epochs", "60", "--batch-size", "64"]
    launcher = subprocess.Popen(
        [*command, "--nproc", "2"],
        env=_env(runs),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ranks: list[int] = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(ranks) < 2:
            metrics = list(runs.glob("*/metrics.jsonl"))
            if metrics and metrics[0].stat().st_size > 2000:
                ranks = _children(launcher.pid)
            time.sleep(0.2)
        assert len(ranks) == 2, "the two ranks never started training"
        launcher.kill()
        launcher.wait()
        deadline = time.monotonic() + 20
        while [pid for pid in ranks if _alive(pid)] and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in ranks if _alive(pid)]
    finally:
        for pid in ranks:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert not left, "ranks trained on without their launcher"
    (folder,) = runs.iterdir()
    info = json.loads((folder / "run.json").read_text())
    assert info["status"] == "stopped"
    payload = torch.load(folder / "checkpoint.pt", weights_only=True)
    assert payload["global_step"] > 0
