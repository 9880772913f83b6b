"""A model file that ends the program or never finishes importing (issue 34,
item 19): ``sys.exit`` becomes one line naming the file; the first Ctrl+C ends
an import that never returns."""

from __future__ import annotations

import time

import pytest

from workbench.cli.commands import main
from workbench.core.models.user_file import (
    ModelFileError,
    build_from_file,
    parse_spec,
)

NET = """
import sys
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        {init}
        self.fc = nn.Linear(28 * 28, num_classes)

    def forward(self, x):
        {forward}
        return self.fc(x.flatten(1))
"""


def _net(tmp_path, *, top="", init="pass", forward="pass"):
    path = tmp_path / "net.py"
    path.write_text(top + NET.format(init=init, forward=forward))
    return path


@pytest.mark.parametrize(
    ("where", "code"),
    [
        ("top", 3),
        ("init", "done"),
        ("forward", None),
    ],
)
def test_sys_exit_anywhere_in_the_file_is_one_line_naming_it(tmp_path, where, code):
    call = f"sys.exit({code!r})"
    path = _net(
        tmp_path, **{where: f"import sys\n{call}\n" if where == "top" else call}
    )
    with pytest.raises(ModelFileError) as refused:
        build_from_file(parse_spec(f"{path}:Net"), 10, (1, 28, 28))
    assert str(refused.value) == (
        f"{path}: it called sys.exit({code!r}) while it ran: a model file should "
        "define the model, not end the program"
    )


def test_train_says_so_and_exits_2_not_3(tmp_path, runs_root, capsys):
    path = _net(tmp_path, top="import sys\nsys.exit(3)\n")
    code = main(["train", "--quiet", "--model", f"{path}:Net", "--max-steps", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        f"ptcore-workbench train: error: model: {path}: it called sys.exit(3) while "
        "it ran: a model file should define the model, not end the program\n"
    )


def test_the_first_ctrl_c_ends_an_import_that_never_returns(
    tmp_path, runs_root, capsys
):
    # The file asks to stop, then loops as a file stuck in its import would.
    path = _net(
        tmp_path,
        top=(
            "import os, signal, time\n"
            "os.kill(os.getpid(), signal.SIGINT)\n"
            "end = time.monotonic() + 5\n"
            "while time.monotonic() < end:\n"
            "    pass\n"
            "raise RuntimeError('the first Ctrl+C did not end the import')\n"
        ),
    )
    started = time.monotonic()
    code = main(["train", "--quiet", "--model", f"{path}:Net", "--max-steps", "1"])
    out, err = capsys.readouterr()
    assert code == 130
    assert err == "interrupted\n"
    assert "stopping after this batch" not in out
    assert time.monotonic() - started < 4.5  # not after the loop's 5 s
