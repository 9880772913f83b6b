"""The issue's list of bad input, end to end through the command line.

Each case gets a clear message or is handled, and none ends in a traceback:
a folder that does not exist, no class folders, one class, non-image files,
a zero-byte JPEG, a truncated PNG, a CMYK JPEG, a 16-bit PNG, a 10,000 x
10,000 image, class names with spaces and non-ASCII letters.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from tests.image_folders import make_folder
from workbench.cli.commands import main

pytestmark = pytest.mark.usefixtures("data_dir")


def _train(root, capsys, *more: str) -> tuple[int, str]:
    flags = [
        "--dataset",
        "folder",
        "--data-dir",
        str(root),
        "--image-size",
        "16",
        *more,
    ]
    code = main(["train", "--quiet", "--epochs", "1", "--batch-size", "8", *flags])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda root: None, "no such folder"),
        (lambda root: root.mkdir(), "has no class folders"),
        (
            lambda root: make_folder(root, ["only"], 3),
            "a classifier needs at least two",
        ),
    ],
    ids=["missing", "no-class-folders", "one-class"],
)
def test_folders_that_cannot_train_fail_with_a_message(tmp_path, capsys, make, message):
    root = tmp_path / "d"
    make(root)
    code, text = _train(root, capsys)
    assert code != 0
    assert message in text
    assert "Traceback" not in text
    assert main(["check-data", str(root)]) == 1
    assert "Traceback" not in capsys.readouterr().out


@pytest.mark.slow
def test_every_awkward_file_is_handled_and_the_run_trains(tmp_path, capsys):
    root = make_folder(tmp_path / "d", ["zebra crossing", "Äpfel ünd Birnen"], 6)
    a, b = root / "zebra crossing", root / "Äpfel ünd Birnen"
    (a / "readme.txt").write_text("not an image")
    (a / "zero.jpg").write_bytes(b"")
    whole = (b / "001.png").read_bytes()
    (b / "truncated.png").write_bytes(whole[: len(whole) // 2])
    Image.new("CMYK", (30, 30), (0, 200, 200, 0)).save(a / "cmyk.jpg")
    deep = (np.arange(900, dtype=np.uint16).reshape(30, 30) * 70).astype(np.uint16)
    Image.fromarray(deep).save(b / "sixteen-bit.png")
    Image.new("L", (10_000, 10_000), 90).save(b / "huge.png")

    assert main(["check-data", str(root), "--image-size", "16"]) == 0
    report = capsys.readouterr().out
    assert f"ignored, not an image: {a / 'readme.txt'}" in report
    assert "zero.jpg" in report
    assert "truncated.png" in report
    assert "huge.png" not in report  # decoded: nothing to say about it
    assert "Traceback" not in report

    code, text = _train(root, capsys, "--save", str(tmp_path / "c.pt"))
    assert code == 0, text
    assert "Skipped 2 files that do not decode" in text
    assert "Traceback" not in text
    # The class names survive intact into the checkpoint and predictions.
    assert (
        main(["predict", "--checkpoint", str(tmp_path / "c.pt"), str(a / "cmyk.jpg")])
        == 0
    )
    predicted = capsys.readouterr().out
    assert "zebra crossing" in predicted
    assert "Äpfel ünd Birnen" in predicted
