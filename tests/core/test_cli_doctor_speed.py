"""``ptcore-workbench doctor-speed``: the diagnosis, each gain, the flags to apply."""

from __future__ import annotations

import re

import pytest

from workbench.cli.commands import main
from workbench.core.perf.speed_doctor import flags

FLAGS = ["--model", "mlp", "--batch-size", "64", "--quiet", "--steps", "2"]


def test_doctor_speed_prints_the_diagnosis_and_every_candidate(capsys):
    argv = ["doctor-speed", *FLAGS, "--rounds", "2", "--try", "batch"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(
        r"your settings: [\d,]+ images/s on cpu in (bf16|fp32) \(2 rounds of 2 "
        r"steps; round-to-round noise \d+%\)",
        lines[0],
    )
    assert re.fullmatch(
        r"diagnosis: (data|partly data|compute)-bound: \d+% .*", lines[1]
    )
    assert lines[2].startswith("gain in images/s over your settings")
    batch = next(line for line in lines if line.strip().startswith("batch 128"))
    assert re.search(r"\d+\.\d\dx \((\d+\.\d\d-\d+\.\d\d|1 round)\)", batch)
    assert "note: twice the images per step: it changes the training" in "\n".join(
        lines
    )
    loader = next(line for line in lines if line.strip().startswith("DataLoader"))
    assert loader.endswith("not timed: loader was not asked for")
    # bf16 is a candidate where the CPU does not train in it already.
    assert re.fullmatch(
        "to time the others too: --try batch compile loader( precision)?", lines[-2]
    )
    assert lines[-1] in (
        "apply: nothing; no change beat the noise",
        "apply (each measured alone): --batch-size 128",
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--steps", "0"], "steps: 0 must be 1 or more"),
        (["--rounds", "1"], "rounds: 1 must be 2 or more"),
        (["--nproc", "2"], "doctor-speed times one process"),
        (["--resume", "run.pt"], "doctor-speed times a run's settings"),
        (["--batch-size", "0"], "batch_size: 0 must be a whole number >= 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, flags, message):
    assert main(["doctor-speed", *FLAGS, *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_an_unknown_kind_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["doctor-speed", *FLAGS, "--try", "speed"])
    assert exc.value.code == 2
    assert "invalid choice: 'speed'" in capsys.readouterr().err


def test_changes_are_written_as_train_flags():
    assert flags((("loader", "fast"), ("workers", 0))) == "--loader fast --workers 0"
    assert flags((("pin_memory", True),)) == "--pin-memory"
    assert flags((("channels_last", False),)) == "--no-channels-last"
    assert flags((("batch_size", 512),)) == "--batch-size 512"
