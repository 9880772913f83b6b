"""A script written for a long data path is still code ruff leaves as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.script_ruff import assert_ruff_accepts
from workbench.core.config import TrainConfig
from workbench.core.script.parts import assignment
from workbench.core.script.writer import write_script


@pytest.mark.parametrize("length", [60, 76, 82, 83, 120])
def test_an_assignment_of_any_length_is_as_ruff_formats_it(length, tmp_path):
    # 60: one line; 76 to 82: the value in parentheses on a line of its own;
    # from 83: too long even there, one line excused from the length check.
    value = "/" + "d" * (length - 1)
    source = assignment("DATA_DIR", value) + "\n"
    path = tmp_path / "settings.py"
    path.write_text(source, encoding="utf-8")
    assert_ruff_accepts(path)
    namespace: dict[str, str] = {}
    exec(source, namespace)
    assert namespace["DATA_DIR"] == value


@pytest.mark.parametrize("length", [70, 80, 130])
def test_a_script_for_a_long_data_path_is_tidy(length, tmp_path):
    folder = Path("/data") / ("m" * (length - len("/data/")))  # never read
    cfg = TrainConfig(dataset="mnist", data_dir=str(folder), device="cpu")
    assert len(str(folder)) == length
    script = tmp_path / "run.py"
    script.write_text(write_script(cfg), encoding="utf-8")
    assert_ruff_accepts(script)
