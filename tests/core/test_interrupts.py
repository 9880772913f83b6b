"""A stop request on the command line: Ctrl+C and SIGTERM, from the first line.

Real signals to this process, with the handlers put back after each test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from workbench.cli import interrupts
from workbench.cli.commands import main


@pytest.fixture
def held():
    """:func:`interrupts.hold` in place for the test; the old handlers after."""
    previous = interrupts.hold()
    yield
    interrupts.restore(previous)
    interrupts._take()  # nothing left over for the next test


def send(number: int) -> None:
    """Signal this process; a handler must be there (else pytest itself would end)."""
    assert callable(signal.getsignal(number)), f"signal {number} is not caught"
    os.kill(os.getpid(), number)


def stops_of():
    stops: list[int] = []
    return stops, SimpleNamespace(request_stop=lambda: stops.append(1))


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_request_while_the_command_loads_is_kept_then_raised(held, number):
    send(number)  # torch still importing: nothing happens
    assert interrupts.received()
    with pytest.raises(KeyboardInterrupt):
        interrupts.release()  # the command starts: "interrupted", exit 130
    assert not interrupts.received()  # acted on once
    with pytest.raises(KeyboardInterrupt):
        send(number)  # later ones interrupt the work at once


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_held_request_stops_training_before_its_first_step(held, number, capsys):
    send(number)
    stops, control = stops_of()
    interrupts.stop_on_first_interrupt(control)
    assert stops == [1]
    assert "stopping after this batch" in capsys.readouterr().out


def test_sigterm_stops_training_like_ctrl_c_and_a_second_request_aborts(held, capsys):
    stops, control = stops_of()
    interrupts.stop_on_first_interrupt(control)
    assert stops == []
    send(signal.SIGTERM)  # kill, a service manager, a scheduler
    assert stops == [1]
    assert "stopping after this batch" in capsys.readouterr().out
    with pytest.raises(KeyboardInterrupt):
        send(signal.SIGINT)


def test_a_command_run_in_process_puts_the_handlers_back(capsys):
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    assert main(["devices"]) == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


@pytest.mark.slow
@pytest.mark.parametrize("ignored", [False, True], ids=["terminal", "background"])
def test_ctrl_c_in_the_first_instant_of_train_is_one_line(tmp_path, ignored):
    """Signalled as it starts: no traceback, nothing trained, exit code 130.

    A script's background job starts with SIGINT ignored: it still counts.
    """
    env = {**os.environ, "PTCORE_RUNS_DIR": str(tmp_path / "runs")}
    command = [sys.executable, "-m", "workbench", "train", "--model", "mlp"]
    command += ["--max-steps", "400", "--batch-size", "8", "--quiet"]
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore,
    )
    wait_until_it_catches_sigterm(process.pid)  # its first line ran; torch loads
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "interrupted"
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def wait_until_it_catches_sigterm(pid: int) -> None:
    """Until ``pid`` has a SIGTERM handler (Python sets none of its own)."""
    bit = 1 << (signal.SIGTERM - 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = int(
            next(ln for ln in status.splitlines() if ln.startswith("SigCgt:")).split()[
                1
            ],
            16,
        )
        if caught & bit:
            return
        time.sleep(0.002)
    raise AssertionError("the command never installed its stop handler")


@pytest.mark.slow
def test_sigterm_mid_run_stops_it_saved_and_marked_stopped(tmp_path):
    from workbench.core.checkpoints.io import load_checkpoint
    from workbench.core.runs.folder import RunFolder

    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "workbench", "train", "--model", "mlp"]
    command += ["--epochs", "500", "--batch-size", "32", "--log-every", "1"]
    process = subprocess.Popen(
        command,
        env={**os.environ, "PTCORE_RUNS_DIR": str(runs)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        for line in process.stdout:
            if line.startswith("run folder:"):
                break
        deadline = time.monotonic() + 120
        while not trained_a_step(runs) and time.monotonic() < deadline:
            time.sleep(0.05)
        process.terminate()  # SIGTERM
        out, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, out
    assert "stopping after this batch" in out
    (folder,) = [RunFolder(p) for p in runs.iterdir()]
    assert folder.info()["status"] == "stopped"
    assert load_checkpoint(folder.checkpoint_path)["global_step"] >= 1


def trained_a_step(runs: Path) -> bool:
    """Whether a run under ``runs`` logged a step (a line of its metrics.jsonl)."""
    return any(p.stat().st_size for p in runs.glob("*/metrics.jsonl"))
