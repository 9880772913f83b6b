"""``ptcore-workbench script``: a config or checkpoint in, one plain script out."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from workbench import cli
from workbench.core.config import TrainConfig, save_config


def _config_file(tmp_path: Path, **values: object) -> Path:
    path = tmp_path / "experiment.toml"
    save_config(TrainConfig(**{"dataset": "digits", "device": "cpu", **values}), path)
    return path


def test_a_config_file_becomes_a_script_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run.py"
    assert cli.main(["script", str(_config_file(tmp_path)), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    ast.parse(text)
    assert "from experiment.toml" in text
    assert "wrote" in capsys.readouterr().out


def test_without_out_the_script_is_printed(tmp_path: Path, capsys) -> None:
    assert cli.main(["script", str(_config_file(tmp_path, model="mlp"))]) == 0
    printed = capsys.readouterr().out
    assert "class MLP(nn.Module):" in printed
    ast.parse(printed)


def test_a_checkpoint_gives_the_script_of_its_config(tmp_path: Path) -> None:
    config = _config_file(tmp_path, model="mlp", max_steps=3, frozen=("hidden.1",))
    checkpoint = tmp_path / "run.pt"
    assert cli.main(["train", "--config", str(config), "--save", str(checkpoint)]) == 0
    from_config, from_checkpoint = tmp_path / "a.py", tmp_path / "b.py"
    assert cli.main(["script", str(config), "-o", str(from_config)]) == 0
    assert cli.main(["script", str(checkpoint), "-o", str(from_checkpoint)]) == 0
    a = from_config.read_text().replace("experiment.toml", "SOURCE")
    b = from_checkpoint.read_text().replace("run.pt", "SOURCE")
    # The same code; the checkpoint's header says what its config cannot hold.
    header_a, code_a = a.split('"""', 2)[1:]
    header_b, code_b = b.split('"""', 2)[1:]
    assert code_a == code_b
    assert "written from a checkpoint" in header_b
    assert "written from a checkpoint" not in header_a
    assert 'FROZEN = ["hidden.1.weight", "hidden.1.bias"]' in b


@pytest.mark.parametrize(
    ("make_source", "out_name", "words"),
    [
        (lambda tmp: tmp / "missing.pt", "run.py", "no checkpoint at"),
        (
            lambda tmp: _config_file(
                tmp, dataset="folder", data_dir=str(tmp), loader="dataloader"
            ),
            "run.py",
            "cannot write a script: loader dataloader",
        ),
        # Its "folder" is the config file: nothing can be written there.
        (lambda tmp: _config_file(tmp), "experiment.toml/run.py", "cannot write"),
    ],
    ids=["missing-checkpoint", "unknown-setting", "unwritable-out"],
)
def test_bad_input_is_one_clear_line_and_no_file(
    tmp_path: Path, capsys, make_source, out_name: str, words: str
) -> None:
    out = tmp_path / out_name
    assert cli.main(["script", str(make_source(tmp_path)), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert not list(tmp_path.glob("*.py*"))
