"""A run of the user's own model file: the file's hash is kept, and a change is told.

The window (and the command line) build the model by running that file; a
checkpoint or a run made from it is only what it was while the file is the
same. Opening, resuming, predicting and reproducing say when it changed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image

from tests.model_files import NET, sha_of
from workbench.cli.commands import main
from workbench.core.config import ConfigError
from workbench.core.data.sources import load_arrays
from workbench.core.models.source import SHA_KEY
from workbench.core.runs.listing import list_runs
from workbench.core.runs.reproduce import original_config
from workbench.core.session import Session


def _train(spec, *flags):
    return main(["train", "--quiet", "--model", spec, "--max-steps", "4", *flags])


def test_the_hash_goes_into_the_checkpoint_and_run_json(tmp_path, net_file, capsys):
    ckpt = tmp_path / "net.pt"
    assert _train(f"{net_file}:Net", "--save", str(ckpt)) == 0
    payload = torch.load(ckpt, weights_only=True)
    assert payload[SHA_KEY] == sha_of(net_file)
    (run,) = list_runs()
    info = json.loads((run.folder.path / "run.json").read_text(encoding="utf-8"))
    assert info[SHA_KEY] == sha_of(net_file)


def test_open_resume_predict_and_reproduce_say_the_file_changed(
    tmp_path, net_file, capsys
):
    ckpt = tmp_path / "net.pt"
    spec = f"{net_file}:Net"
    assert _train(spec, "--save", str(ckpt), "--epochs", "1") == 0
    (run,) = list_runs()
    assert original_config(run.folder).model == spec  # unchanged: reproducible
    assert not any("changed" in n for n in Session(origin="test").open(ckpt).notes)

    net_file.write_text(NET + "\n# a comment changes the hash\n", encoding="utf-8")
    opened = Session(origin="test").open(ckpt, evaluate=False)
    (note,) = [n for n in opened.notes if "changed since" in n]
    assert str(net_file) in note
    assert sha_of(net_file)[:12] in note

    capsys.readouterr()
    assert _train(spec, "--resume", str(ckpt), "--max-steps", "6") == 0
    assert "changed since" in capsys.readouterr().out

    image = tmp_path / "digit.png"
    pixels = load_arrays("digits").test_images[0].numpy().astype(np.uint8)
    Image.fromarray(pixels).resize((28, 28)).save(image)
    assert main(["predict", "--checkpoint", str(ckpt), str(image)]) == 0
    assert "warning:" in capsys.readouterr().err

    with pytest.raises(ConfigError, match="changed since run"):
        original_config(run.folder)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def Net(num_classes):\n    return 1 +\n", ":2: syntax error"),
        (
            "from torch import nn\n\n\nclass Net(nn.Module):\n"
            "    def __init__(self, num_classes):\n"
            "        super().__init__()\n"
            "        raise RuntimeError('no GPU here')\n",
            ":7",
        ),
        (
            "from torch import nn\n\n\ndef Net(num_classes):\n"
            "    return nn.Sequential(nn.Flatten(), nn.LazyLinear(3))\n",
            "3",
        ),
        ("X = 1\n", "no 'Net' in it"),
    ],
    ids=["syntax", "init-raises", "wrong-classes", "no-name"],
)
def test_a_broken_model_file_is_one_line_on_the_command_line(
    tmp_path, capsys, source, expected
):
    path = tmp_path / "broken.py"
    path.write_text(source, encoding="utf-8")
    assert _train(f"{path}:Net") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert str(path) in err
    assert expected in err
    assert len(err.strip().splitlines()) == 1
