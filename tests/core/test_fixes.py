"""Fixes that never touch the user's files: a named overlay, applied by a run
that asks for it, kept in its config so Reproduce repeats them.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
import torch

from tests.image_folders import make_folder
from workbench.cli.commands import main
from workbench.core.config import TrainConfig
from workbench.core.data.build import build_loaders
from workbench.core.data.fixes import Overlay, fixes_dir
from workbench.core.data.sources import load_run_arrays
from workbench.core.runs.listing import list_runs
from workbench.core.runs.reproduce import original_config
from workbench.core.script.writer import script_problem

pytestmark = pytest.mark.usefixtures("data_dir")


def _hashes(root):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.*")}


def test_a_built_in_datasets_fixes_relabel_exclude_undo_and_reproduce(capsys):
    assert main(["fixes", "mine", "--exclude", "train #0", "val #2"]) == 0
    assert main(["fixes", "mine", "--relabel", "train #5=7", "train #9=1"]) == 0
    assert main(["fixes", "mine", "--undo", "1"]) == 0  # train #9 keeps its label
    assert "1 relabelled, 2 excluded" in capsys.readouterr().out
    assert main(["train", "--fixes", "mine", "--epochs", "1", "--quiet"]) == 0
    (run,) = list_runs()
    cfg = original_config(run.folder)  # Reproduce trains with the same fixes
    assert cfg.fixes_name == "mine"
    assert set(cfg.fixes) == {
        ("train #0", "exclude", ""),
        ("val #2", "exclude", ""),
        ("train #5", "relabel", "7"),
    }
    plain = load_run_arrays(TrainConfig())
    fixed = build_loaders(cfg, "cpu")
    assert fixed.train.num_samples == len(plain.train_labels) - 1
    assert fixed.val.num_samples == len(plain.test_labels) - 1
    expected = plain.train_labels[1:].clone()
    expected[4] = 7  # train #5 is row 4 once train #0 is gone
    assert torch.equal(fixed.train.labels, expected)
    # A run from before the fixes still reproduces without them.
    assert build_loaders(TrainConfig(), "cpu").train.num_samples == len(
        plain.train_labels
    )


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_an_image_folders_fixes_follow_the_file_content_and_touch_no_file(
    tmp_path, loader
):
    root = make_folder(tmp_path / "shapes", 3, per_class=8, size=16)
    before = _hashes(root)
    cfg = TrainConfig(dataset="folder", data_dir=str(root), image_size=16)
    assert main(
        [
            "fixes", "mine", "--dataset", "folder", "--data-dir", str(root),
            "--relabel", "class00/001.png=class02", "--exclude", "class01/002.jpg",
        ]
    ) == 0  # fmt: skip
    # Moved to another name, the picture keeps its fix: it is known by content.
    (root / "class00" / "001.png").rename(root / "class00" / "renamed.png")
    before[root / "class00" / "renamed.png"] = before.pop(root / "class00" / "001.png")
    overlay = Overlay.open("mine", cfg, must_exist=True)
    fixed_cfg = cfg.replace(
        fixes=overlay.config_entries(), fixes_name="mine", loader=loader
    )
    plain = build_loaders(cfg.replace(loader=loader), "cpu")
    fixed = build_loaders(fixed_cfg, "cpu")
    total = plain.train.num_samples + plain.val.num_samples
    assert fixed.train.num_samples + fixed.val.num_samples == total - 1
    labels = torch.cat([_labels(fixed.train), _labels(fixed.val)])
    original = torch.cat([_labels(plain.train), _labels(plain.val)])
    # One image of class 0 became class 2, one of class 1 left.
    assert torch.bincount(labels, minlength=3).tolist() == [
        int((original == 0).sum()) - 1,
        int((original == 1).sum()) - 1,
        int((original == 2).sum()) + 1,
    ]
    assert _hashes(root) == before
    assert not any(fixes_dir() in p.parents for p in root.rglob("*"))


def _labels(loader):
    return torch.cat([y for _x, y in loader])


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_every_copy_of_a_fixed_image_takes_its_fix_on_both_loaders(tmp_path, loader):
    root = make_folder(tmp_path / "shapes", 3, per_class=8, size=16)
    # The same picture twice in class 0: a fix names the content, so both move.
    shutil.copy(root / "class00" / "001.png", root / "class00" / "copy.png")
    cfg = TrainConfig(
        dataset="folder", data_dir=str(root), image_size=16, loader=loader
    )
    assert main(
        [
            "fixes", "dup", "--dataset", "folder", "--data-dir", str(root),
            "--relabel", "class00/001.png=class02",
        ]
    ) == 0  # fmt: skip
    overlay = Overlay.open("dup", cfg, must_exist=True)
    fixed_cfg = cfg.replace(fixes=overlay.config_entries(), fixes_name="dup")
    plain, fixed = build_loaders(cfg, "cpu"), build_loaders(fixed_cfg, "cpu")
    before = torch.cat([_labels(plain.train), _labels(plain.val)])
    after = torch.cat([_labels(fixed.train), _labels(fixed.val)])
    moved = torch.bincount(after, minlength=3) - torch.bincount(before, minlength=3)
    assert moved.tolist() == [-2, 0, 2]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("{not json", "is damaged"),
        ('{"format": 1, "dataset": "fashion-mnist", "data_dir": null, "fixes": []}',
         "were made for fashion-mnist, not digits"),
    ],
)  # fmt: skip
def test_a_damaged_or_foreign_overlay_is_one_line_and_left_as_it_is(
    capsys, damage, message
):
    path = fixes_dir() / "digits" / "mine.json"
    path.parent.mkdir(parents=True)
    path.write_text(damage)
    assert main(["train", "--fixes", "mine", "--epochs", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert path.read_text() == damage
    assert list_runs() == []


def test_fixes_whose_images_are_gone_are_not_applied_silently(tmp_path, capsys):
    root = make_folder(tmp_path / "shapes", 3, per_class=6, size=16)
    flags = ["--dataset", "folder", "--data-dir", str(root)]
    assert main(["fixes", "mine", *flags, "--exclude", "class00/001.png"]) == 0
    shutil.move(root / "class00" / "001.png", tmp_path / "elsewhere.png")
    code = main(["train", *flags, "--fixes", "mine", "--image-size", "16", "--quiet"])
    assert code == 2
    assert "1 of 1 name images that are not in the data any more (class00/001.png)" in (
        capsys.readouterr().err
    )


def test_training_with_fixes_never_saved_is_refused(capsys):
    assert main(["train", "--fixes", "nothing", "--quiet"]) == 2
    assert "fixes 'nothing': none saved for digits" in capsys.readouterr().err


def test_a_script_is_not_written_with_fixes():
    cfg = TrainConfig(fixes=(("train #0", "exclude", ""),), fixes_name="mine")
    assert "fixes mine: a script reads the data as its files are" in script_problem(cfg)


def test_the_overlay_file_keeps_the_order_of_the_fixes_for_undo():
    cfg = TrainConfig()
    assert main(["fixes", "o", "--keep", "train #3", "--exclude", "train #3"]) == 0
    saved = json.loads(Overlay.open("o", cfg).path.read_text())
    assert [f["action"] for f in saved["fixes"]] == ["exclude", "keep"]
    # The later fix is in effect: keep (looked at, right) takes the exclusion back.
    assert Overlay.open("o", cfg).config_entries() == ()
