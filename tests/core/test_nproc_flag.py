"""``--nproc`` takes 1 or more processes; anything else is one line, exit code 2."""

from __future__ import annotations

import pytest

from workbench.cli.commands import main


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("0", "0 processes cannot train: give 1 or more"),
        ("-2", "-2 processes cannot train: give 1 or more"),
        ("two", "'two' is not a whole number"),
    ],
)
def test_a_process_count_below_one_is_refused(capsys, runs_root, value, said):
    with pytest.raises(SystemExit) as exited:
        main(["train", "--nproc", value])
    assert exited.value.code == 2
    assert capsys.readouterr().err.endswith(
        f"ptcore-workbench train: error: argument --nproc: {said}\n"
    )
    assert not any(runs_root.iterdir())  # nothing trained
