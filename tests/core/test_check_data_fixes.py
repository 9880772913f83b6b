"""check-data and predict with a fixes overlay: the folder as a run with it sees it.

check-data counts, warns and judges the folder with the overlay's exclusions
and relabels (the files never change); predict reads no labels, so it refuses
an overlay, saying why.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from tests.core.test_folder_check import write_image
from tests.core.test_predict_folder import HEADER
from tests.image_folders import make_folder
from workbench.cli.commands import main
from workbench.core.config import TrainConfig
from workbench.core.data.fixes import Overlay, check_fixed_folder, dataset_of
from workbench.core.data.registry import DataError


def _hashes(root):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.*")}


def _fixes(root, *flags):
    folder = ["--dataset", "folder", "--data-dir", str(root)]
    assert main(["fixes", "mine", *folder, *flags]) == 0


def _check(capsys, root, *flags):
    capsys.readouterr()
    code = main(["check-data", str(root), "--image-size", "16", *flags])
    return code, capsys.readouterr()


def _overlay_path(root):
    cfg = TrainConfig(dataset="folder", data_dir=str(root))
    return Overlay("mine", dataset_of(cfg)).path


@pytest.fixture
def shapes(tmp_path):
    """Three classes of four images; split: the relabel and exclusion span both."""
    return make_folder(tmp_path / "shapes", 3, per_class=4, size=16, split=True)


def test_check_data_counts_the_folder_as_the_overlay_makes_it(shapes, capsys):
    before = _hashes(shapes)
    _fixes(
        shapes,
        "--relabel", "train/class00/001.png=class02",
        "--exclude", "val/class01/000.jpg",
    )  # fmt: skip
    code, plain = _check(capsys, shapes)
    assert code == 0
    assert "  class00: 4 images (train 3, val 1)" in plain.out.splitlines()
    assert "applied" not in plain.out  # without --fixes nothing changes
    code, fixed = _check(capsys, shapes, "--fixes", "mine")
    assert code == 0
    lines = fixed.out.splitlines()
    assert lines[1] == (
        "fixes 'mine' applied (your files are unchanged): 1 relabelled, 1 excluded"
    )
    assert lines[2:5] == [
        "  class00: 3 images (train 2, val 1)",
        "  class01: 3 images (train 3, val 0)",
        "  class02: 5 images (train 4, val 1)",
    ]
    assert fixed.err == ""
    assert _hashes(shapes) == before
    # The window's (and a script's) way in: the same counts from the core.
    cfg = TrainConfig(dataset="folder", data_dir=str(shapes))
    entries = Overlay.open("mine", cfg).config_entries()
    report = check_fixed_folder(cfg.replace(fixes=entries, fixes_name="mine"), 16)
    assert report.images_per_class() == {"class00": 3, "class01": 3, "class02": 5}
    assert report.relabelled == [shapes / "train" / "class00" / "001.png"]
    assert report.excluded == [shapes / "val" / "class01" / "000.jpg"]


def test_the_overlay_changes_the_problems_and_the_verdict(tmp_path, capsys):
    root = tmp_path / "pets"
    for i in range(3):
        write_image(root / "cat" / f"{i}.png", size=16, seed=i)
    write_image(root / "dog" / "only.png", size=16, seed=10)
    tiny = write_image(root / "cat" / "tiny.png", size=4, seed=11)
    shutil.copy(root / "cat" / "0.png", root / "dog" / "copy.png")
    before = _hashes(root)
    code, plain = _check(capsys, root)
    assert code == 0
    assert "warning: the same image is filed under cat and dog" in plain.out
    assert f"is far smaller than the training size 16: {tiny}" in plain.out
    # The copy relabelled to cat is cat twice; the tiny one is gone; dog is empty.
    _fixes(root, "--relabel", "dog/copy.png=cat", "dog/only.png=cat")
    _fixes(root, "--exclude", "cat/tiny.png")
    code, fixed = _check(capsys, root, "--fixes", "mine")
    assert code == 1
    assert "filed under" not in fixed.out
    assert "warning: the same image is in cat twice" in fixed.out
    assert "far smaller" not in fixed.out
    assert "error: class 'dog' has no readable images" in fixed.out
    # A fix names the content: both copies of 0.png count (cat/0.png stays cat).
    assert "3 relabelled, 1 excluded" in fixed.out
    assert fixed.out.splitlines()[-1] == "cannot train: 1 errors, 1 warnings"
    assert _hashes(root) == before


def _damaged(root):
    _overlay_path(root).parent.mkdir(parents=True, exist_ok=True)
    _overlay_path(root).write_text("{not json")
    return "is damaged"


def _foreign(root):
    other = str(root.parent / "other")
    text = json.dumps({"format": 1, "dataset": "folder", "data_dir": other})
    _overlay_path(root).parent.mkdir(parents=True, exist_ok=True)
    _overlay_path(root).write_text(text[:-1] + ', "fixes": []}')
    return f"were made for the image folder {other}, not the image folder"


def _gone(root):
    _fixes(root, "--exclude", "class00/001.png")
    shutil.move(root / "class00" / "001.png", root.parent / "elsewhere.png")
    return "1 of 1 name images that are not in the data any more"


def _no_class(root):
    key = hashlib.sha256((root / "class00" / "001.png").read_bytes()).hexdigest()
    fix = {"key": key, "file": "class00/001.png", "action": "relabel", "label": "x"}
    folder = str(root.resolve())
    text = {"format": 1, "dataset": "folder", "data_dir": folder, "fixes": [fix]}
    _overlay_path(root).parent.mkdir(parents=True, exist_ok=True)
    _overlay_path(root).write_text(json.dumps(text))
    return "'x' is no class of this data; nothing was applied"


def _never_saved(_root):
    return "fixes 'mine': none saved for the image folder"


@pytest.mark.parametrize("damage", [_damaged, _foreign, _gone, _no_class, _never_saved])
def test_a_bad_overlay_is_one_line_and_exit_2(tmp_path, capsys, damage):
    root = make_folder(tmp_path / "shapes", 2, per_class=3, size=16)
    message = damage(root)
    overlay = _overlay_path(root)
    kept = overlay.read_bytes() if overlay.exists() else None
    before = _hashes(root)
    code, said = _check(capsys, root, "--fixes", "mine")
    assert code == 2
    assert said.out == ""
    assert said.err.startswith("ptcore-workbench check-data: error: ")
    assert message in said.err
    assert len(said.err.strip().splitlines()) == 1
    assert (overlay.read_bytes() if overlay.exists() else None) == kept
    assert _hashes(root) == before


def test_check_fixed_folder_refuses_fixes_of_images_gone(tmp_path):
    root = make_folder(tmp_path / "shapes", 2, per_class=3, size=16)
    cfg = TrainConfig(dataset="folder", data_dir=str(root), fixes_name="mine")
    with pytest.raises(DataError, match="1 of 1 name images that are not in"):
        check_fixed_folder(cfg.replace(fixes=(("0" * 64, "exclude", ""),)), 16)


def test_predict_reads_no_labels_so_it_refuses_fixes(
    tmp_path, capsys, trained_mlp_checkpoint
):
    root = make_folder(tmp_path / "digits", 2, per_class=2, size=28, mode="L")
    _fixes(root, "--exclude", "class00/001.png")
    out = tmp_path / "predicted.csv"
    flags = ["predict", "--checkpoint", str(trained_mlp_checkpoint), str(root)]
    capsys.readouterr()
    assert main([*flags, "--csv", str(out), "--fixes", "mine"]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err.strip() == (
        "ptcore-workbench predict: error: --fixes: predict classifies images and "
        "reads no labels, so a fixes overlay changes nothing it says; give the "
        "fixes to train or check-data"
    )
    assert not out.exists()
    # Without it, a class folder is only a place to look: no label column.
    assert main([*flags, "--csv", str(out)]) == 0
    header = out.read_text().splitlines()[0].split(",")
    assert header == HEADER
