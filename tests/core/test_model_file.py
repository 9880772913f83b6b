"""A model from the user's own file: built, checked, and every failure named."""

from __future__ import annotations

import textwrap

import pytest
import torch
from torch import nn

from workbench.core.config import TrainConfig
from workbench.core.models import catalog
from workbench.core.models.user_file import (
    ModelFileError,
    build_from_file,
    defined_names,
    parse_spec,
)
from workbench.core.train.engine import prepare_run

GOOD = """
from torch import nn


class Tiny(nn.Module):
    def __init__(self, num_classes, in_channels=1):
        super().__init__()
        self.in_channels = in_channels
        self.net = nn.Sequential(nn.Flatten(), nn.LazyLinear(num_classes))

    def forward(self, x):
        return self.net(x)


def make(num_classes):
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, num_classes))
"""


NN = "from torch import nn\n"


def _file(tmp_path, text: str, name: str = "mine.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_class_or_a_function_gives_a_checked_model(tmp_path):
    path = _file(tmp_path, GOOD)
    model = build_from_file(parse_spec(f"{path}:Tiny"), 7, (3, 8, 8))
    assert isinstance(model, nn.Module)
    assert model.in_channels == 3  # in_channels= passed where accepted
    assert model(torch.zeros(4, 3, 8, 8)).shape == (4, 7)
    made = build_from_file(parse_spec(f"{path}:make"), 5, (3, 8, 8))
    assert made(torch.zeros(1, 3, 8, 8)).shape == (1, 5)


def test_the_hash_follows_the_files_contents(tmp_path):
    path = _file(tmp_path, GOOD)
    before = parse_spec(f"{path}:Tiny").sha256
    path.write_text(GOOD + "\n# changed\n", encoding="utf-8")
    assert parse_spec(f"{path}:Tiny").sha256 != before


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("x = 1\ndef f(:\n    pass\n", "f", r"mine\.py:2: syntax error"),
        (
            "import torch\nraise RuntimeError('boom at import')\n",
            "f",
            r"mine\.py:2: running the file failed: RuntimeError: boom at import",
        ),
        (
            NN + "class M(nn.Module):\n    def __init__(self, num_classes):\n"
            "        super().__init__()\n        raise ValueError('bad init')\n",
            "M",
            r"mine\.py:5: M\(\.\.\.\) failed: ValueError: bad init",
        ),
        (
            NN + "def other(num_classes):\n    return nn.Linear(2, 2)\n",
            "Missing",
            r"no 'Missing' in it; it defines other",
        ),
        (
            NN + "def make(num_classes):\n"
            "    return nn.Sequential(nn.Flatten(), nn.Linear(192, 3))\n",
            "make",
            r"gives \(2, 3\) for a batch of 2; it must give \(2, 10\)",
        ),
        (
            "def make(num_classes):\n    return 42\n",
            "make",
            r"gave a int, not an nn.Module",
        ),
        (
            NN + "def make(num_classes):\n    return nn.Linear(5, num_classes)\n",
            "make",
            r"forward of a \(2, 3, 8, 8\) batch failed: RuntimeError",
        ),
    ],
    ids=[
        "syntax",
        "import-error",
        "init-error",
        "no-such-name",
        "wrong-shape",
        "not-a-module",
        "forward-error",
    ],
)
def test_every_failure_is_one_message_with_the_file_and_line(
    tmp_path, text, name, expected
):
    path = _file(tmp_path, text)
    with pytest.raises(ModelFileError, match=expected) as caught:
        build_from_file(parse_spec(f"{path}:{name}"), 10, (3, 8, 8))
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    "spec", ["mine.py", "mine.txt:Name", "mine.py:not-a-name", "nowhere.py:Name"]
)
def test_bad_specs_say_what_to_give(tmp_path, spec):
    with pytest.raises(ModelFileError, match=r"path/to/file\.py:Name|no such file"):
        parse_spec(str(tmp_path / spec) if spec.startswith("nowhere") else spec)


def test_defined_names_are_read_without_running_the_file(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(
        textwrap.dedent(
            """\
            from torch import nn
            open(__file__ + ".ran", "w").close()


            class Net(nn.Module):
                pass


            def make(num_classes):
                return Net()


            def _helper():
                pass

            size = 3
            """
        )
    )
    assert defined_names(path) == ["Net", "make"]
    assert not (tmp_path / "net.py.ran").exists()  # parsed, never run
    path.write_text("x = 1\ndef broken(:\n")
    with pytest.raises(ModelFileError, match=r"net\.py:2: syntax error"):
        defined_names(path)
    with pytest.raises(ModelFileError, match="no such file"):
        defined_names(tmp_path / "missing.py")


def test_a_model_file_run_never_lists_torchvisions_models(tmp_path, monkeypatch):
    """Listing them imports torchvision: seconds a model file never needs."""

    def listed():
        raise AssertionError("torchvision's models were listed")

    monkeypatch.setattr(catalog, "torchvision_models", listed)
    spec = f"{_file(tmp_path, GOOD)}:Tiny"
    assert not catalog.is_torchvision(spec)
    run = prepare_run(TrainConfig(model=spec, max_steps=1))
    x = torch.zeros(2, *run.loaders.info.image_shape)
    assert run.model(x).shape == (2, 10)
