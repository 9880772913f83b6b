"""check-data: a folder of labelled images is checked before a run trains on it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from workbench.cli.commands import main
from workbench.core.data.folder_check import (
    CheckCancelled,
    check_folder,
    folder_stamp,
)


def write_image(path: Path, size: int = 64, seed: int = 0, mode: str = "RGB") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    shape = (size, size, 3) if mode in ("RGB", "CMYK") else (size, size)
    pixels = rng.integers(0, 256, shape, dtype=np.uint8)
    image = Image.fromarray(pixels, "RGB" if len(shape) == 3 else "L").convert(mode)
    image.save(path)
    return path


def good_folder(root: Path, classes=("cat", "dog"), per_class: int = 3) -> Path:
    for c, name in enumerate(classes):
        for i in range(per_class):
            write_image(root / name / f"{i}.png", seed=100 * c + i)
    return root


def messages(report) -> list[str]:
    return [f.line() for f in report.findings]


def test_a_good_folder_can_train_and_counts_every_class(tmp_path):
    report = check_folder(good_folder(tmp_path / "pets"))
    assert report.can_train
    assert report.classes == ("cat", "dog")
    assert report.images_per_class() == {"cat": 3, "dog": 3}
    assert report.findings == []
    assert report.lines()[-1] == "can train: 0 errors, 0 warnings"


def test_every_defect_is_named_with_its_file(tmp_path):
    root = tmp_path / "data"
    for split in ("train", "val"):
        good_folder(root / split)
    (root / "train" / "cat" / "empty.jpg").write_bytes(b"")
    whole = write_image(root / "train" / "dog" / "whole.png", seed=7).read_bytes()
    (root / "train" / "dog" / "cut.png").write_bytes(whole[: len(whole) // 2])
    (root / "train" / "dog" / "notes.txt").write_text("not an image")
    write_image(root / "train" / "dog" / "tiny.png", size=8, seed=8)
    write_image(root / "train" / "cat" / "cmyk.jpg", mode="CMYK", seed=9)
    leak = root / "val" / "cat" / "leak.png"
    leak.write_bytes((root / "train" / "cat" / "0.png").read_bytes())
    report = check_folder(root, image_size=64)
    lines = messages(report)
    assert report.can_train  # warnings only: a run skips what it cannot read
    assert sorted(p.name for p in report.unreadable) == ["cut.png", "empty.jpg"]
    assert any("empty (0 bytes)" in line and "empty.jpg" in line for line in lines)
    assert any(
        "cut.png" in line and line.startswith("warning: skipped") for line in lines
    )
    assert [p.name for p in report.ignored] == ["notes.txt"]
    assert any("8x8 is far smaller than the training size 64" in line for line in lines)
    assert any(
        "same image is in train and val" in line and "leak.png" in line
        for line in lines
    )
    # CMYK JPEG decodes (through Pillow if torchvision refuses it).
    assert report.counts["train"] == {"cat": 4, "dog": 5}
    assert report.counts["val"] == {"cat": 4, "dog": 3}


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda root: None, "no such folder"),
        (lambda root: root.mkdir(), "no class folders"),
        (lambda root: good_folder(root, classes=("only",)), "only one class (only)"),
        (
            lambda root: (good_folder(root), (root / "bird").mkdir()),
            "class 'bird' has no readable images",
        ),
    ],
)
def test_data_that_cannot_train_is_an_error(tmp_path, make, expected):
    root = tmp_path / "data"
    make(root)
    report = check_folder(root)
    assert not report.can_train
    assert any(
        line.startswith("error: ") and expected in line for line in messages(report)
    )


def test_strong_imbalance_is_a_warning(tmp_path):
    root = good_folder(tmp_path / "data", classes=("few",), per_class=1)
    good_folder(root, classes=("many",), per_class=10)
    report = check_folder(root)
    assert report.can_train
    assert (
        "warning: strong class imbalance: many has 10 images, few 1; train with "
        "--class-weights balanced or --balanced-sampler" in messages(report)
    )


def test_class_names_with_spaces_and_accents_are_kept(tmp_path):
    root = good_folder(tmp_path / "data", classes=("chat tigré", "chien"))
    assert check_folder(root).classes == ("chat tigré", "chien")


def test_the_command_exits_0_when_it_can_train_and_1_when_not(tmp_path, capsys):
    root = good_folder(tmp_path / "pets")
    assert main(["check-data", str(root)]) == 0
    out = capsys.readouterr().out
    assert "2 classes (all)" in out
    assert "cat: 3 images (all 3)" in out
    assert main(["check-data", str(tmp_path / "nowhere")]) == 1
    assert "error: no such folder" in capsys.readouterr().out


def test_progress_counts_every_image_and_cancel_stops_the_check(tmp_path):
    root = good_folder(tmp_path / "pets", per_class=5)
    (root / "cat" / "notes.txt").write_text("not an image")  # not counted
    calls = []
    report = check_folder(root, progress=lambda *call: calls.append(call))
    assert calls == [(i, 10) for i in range(1, 11)]
    assert report.images_per_class() == {"cat": 5, "dog": 5}

    seen = []

    def cancel() -> bool:
        seen.append(1)
        return len(seen) > 3

    with pytest.raises(CheckCancelled):
        check_folder(root, cancel=cancel)
    assert len(seen) == 4  # stopped at the fourth image, not after all ten


def test_the_folder_stamp_changes_when_a_file_is_added_or_removed(tmp_path):
    root = good_folder(tmp_path / "pets")
    before = folder_stamp(root)
    assert before == folder_stamp(root)
    added = write_image(root / "dog" / "new.png", seed=42)
    os.utime(root / "dog", ns=(1, 1))  # a coarse clock must not hide the change
    after_add = folder_stamp(root)
    assert after_add != before
    added.unlink()
    assert folder_stamp(root) != after_add
    assert folder_stamp(tmp_path / "nowhere") == ()


def test_byte_identical_images_are_named_within_and_across_classes(tmp_path):
    root = good_folder(tmp_path / "pets", per_class=3)
    cat = root / "cat" / "0.png"
    (root / "dog" / "cat-in-dogs.png").write_bytes(cat.read_bytes())
    (root / "cat" / "again.png").write_bytes((root / "cat" / "1.png").read_bytes())
    report = check_folder(root, image_size=64)
    assert report.can_train  # a run trains on them: warnings
    duplicates = sorted(line for line in messages(report) if "same image" in line)
    assert duplicates == [
        f"warning: the same image is filed under cat and dog ({cat}): "
        f"{root / 'dog' / 'cat-in-dogs.png'}",
        f"warning: the same image is in cat twice ({root / 'cat' / '1.png'}): "
        f"{root / 'cat' / 'again.png'}",
    ]


def test_on_the_command_line_an_image_under_two_classes_is_reported(tmp_path, capsys):
    root = good_folder(tmp_path / "pets", per_class=3)
    (root / "dog" / "copy.png").write_bytes((root / "cat" / "2.png").read_bytes())
    assert main(["check-data", str(root), "--image-size", "64"]) == 0
    out = capsys.readouterr().out
    assert (
        f"warning: the same image is filed under cat and dog ({root / 'cat' / '2.png'})"
        f": {root / 'dog' / 'copy.png'}"
    ) in out
