"""``ptcore-workbench lr-find``: the curve's figures, the probes, the rate to use."""

from __future__ import annotations

import re

import pytest

from workbench.cli.commands import main

FLAGS = ["--model", "mlp", "--batch-size", "64", "--quiet", "--lr-steps", "30"]


def test_lr_find_prints_the_suggestions_the_probes_and_the_rate_to_use(capsys):
    assert main(["lr-find", *FLAGS, "--probe-steps", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(
        r"range test: \d+ of 30 steps from 1e-07 to 10 \((diverged|the ramp ended|"
        r"the loss stopped being finite)\)",
        lines[0],
    )
    suggestion = next(line for line in lines if line.startswith("suggestions: "))
    valley = float(re.search(r"valley (\S+),", suggestion).group(1))
    header = lines.index("probe runs (3 steps each, from step 0):")
    rows = lines[header + 2 : -1]
    rates = [float(row.split()[0]) for row in rows]
    assert len(rates) >= 3
    assert rates[:3] == pytest.approx([valley / 3, valley, valley * 3], rel=0.02)
    offered = [row for row in rows if row.endswith("<- offered")]
    assert len(offered) == 1
    assert lines[-1] == f"use: --lr {offered[0].split()[0]}"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--nproc", "2"], "lr-find runs in one process"),
        (["--lr-start", "1", "--lr-end", "0.1"], "the rates must rise from above 0"),
        (["--lr-steps", "5"], "the range test needs 10 steps or more, not 5"),
        (["--probe-steps", "0"], "--probe-steps must be 1 or more, not 0"),
        (["--init-from", "x.pt"], "lr-find does not take --init-from"),
    ],
)
def test_settings_that_cannot_work_are_one_line_and_exit_2(capsys, flags, message):
    assert main(["lr-find", *FLAGS, *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_lr_find_on_a_checkpoint_starts_where_its_run_stands(capsys, tmp_path):
    saved = tmp_path / "run.pt"
    train = ["train", "--model", "mlp", "--batch-size", "64", "--quiet"]
    assert main([*train, "--max-steps", "3", "--save", str(saved)]) == 0
    capsys.readouterr()
    flags = ["--resume", str(saved), "--max-steps", "10", "--quiet", "--lr-steps", "20"]
    assert main(["lr-find", *flags, "--probe-steps", "2"]) == 0
    out = capsys.readouterr().out
    assert "probe runs (2 steps each, from step 3):" in out
