"""Predict a whole folder: the files it lists, the CSV, and ``predict DIR --csv``."""

from __future__ import annotations

import csv
import errno
import io
import sys

import numpy as np
import pytest
from PIL import Image

from tests.image_folders import make_folder
from workbench.cli.commands import main
from workbench.core.predict_batch import image_files

HEADER = [
    "file",
    "class",
    "confidence",
    "top2",
    "top2_confidence",
    "top3",
    "top3_confidence",
    "error",
]


def ink(path, seed):
    """A white stroke on black: a picture of a digit any digit model reads."""
    rng = np.random.default_rng(seed)
    pixels = np.zeros((28, 28), np.uint8)
    row, col = rng.integers(4, 20, 2)
    pixels[row : row + 8, 6:22] = 255
    pixels[4:24, col : col + 3] = 255
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)
    return path


def read_csv(path):
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def one_file_lines(capsys, ckpt, paths):
    """``predict`` on each file alone: {path: (class, [(name, percent), ...])}."""
    capsys.readouterr()
    assert main(["predict", "--checkpoint", str(ckpt), *map(str, paths)]) == 0
    said = {}
    for line in capsys.readouterr().out.splitlines():
        path, _, rest = line.partition(": ")
        name, _, ranked = rest.partition("   (")
        pairs = [p.rsplit(" ", 1) for p in ranked.rstrip(")").split("  ")]
        said[path] = (name, [(n, float(p.rstrip("%"))) for n, p in pairs])
    return said


def test_a_folders_images_are_listed_recursively_sorted_by_suffix_in_any_case(
    tmp_path,
):
    for name in ("b.png", "A.JPG", "sub/c.Jpeg", "sub/deeper/d.webp", "e.TIFF"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "notes.txt").write_text("no image")
    (tmp_path / "folder.png").mkdir()  # a folder named like an image is none
    assert image_files(tmp_path) == [
        tmp_path / "A.JPG",
        tmp_path / "b.png",
        tmp_path / "e.TIFF",
        tmp_path / "sub" / "c.Jpeg",
        tmp_path / "sub" / "deeper" / "d.webp",
    ]


def test_predict_reads_a_folder_into_a_csv_as_it_reads_each_file(
    tmp_path, capsys, trained_mlp_checkpoint
):
    root = tmp_path / "scans"
    good = [ink(root / "B.PNG", 1), ink(root / "a.png", 2), ink(root / "sub/c.jpg", 3)]
    (root / "sub" / "empty.png").write_bytes(b"")
    (root / "notes.txt").write_text("not an image")
    out = tmp_path / "out.csv"
    capsys.readouterr()
    code = main(
        [
            "predict",
            "--checkpoint",
            str(trained_mlp_checkpoint),
            str(root),
            "--csv",
            str(out),
        ]
    )
    said = capsys.readouterr()
    assert code == 1  # a file was skipped
    # The skipped file is one line on stderr (no progress bar: not a terminal).
    assert said.err.splitlines() == [
        f"{root / 'sub' / 'empty.png'}: the file is empty (0 bytes)"
    ]
    assert said.out.splitlines() == [f"{out}: 3 images read, 1 skipped"]
    rows = read_csv(out)
    assert rows[0] == HEADER
    assert [row[0] for row in rows[1:]] == [
        *map(str, good),
        str(root / "sub" / "empty.png"),
    ]
    assert rows[-1][1:] == [""] * 6 + ["the file is empty (0 bytes)"]
    # Each file's row is what predict says of that file alone.
    alone = one_file_lines(capsys, trained_mlp_checkpoint, good)
    for row in rows[1:-1]:
        name, ranked = alone[row[0]]
        assert row[1] == name == ranked[0][0]
        assert [row[3], row[5]] == [ranked[1][0], ranked[2][0]]
        for column, (_, percent) in zip((2, 4, 6), ranked, strict=True):
            assert 0 <= float(row[column]) <= 1
            assert round(100 * float(row[column]), 1) == percent
        assert row[7] == ""


def test_predict_on_a_folder_without_csv_prints_a_line_per_image(
    tmp_path, capsys, trained_mlp_checkpoint
):
    root = tmp_path / "scans"
    files = [ink(root / f"{i}.png", i) for i in range(3)]
    capsys.readouterr()
    code = main(["predict", "--checkpoint", str(trained_mlp_checkpoint), str(root)])
    said = capsys.readouterr()
    assert code == 0
    assert said.err == ""
    assert [line.split(": ")[0] for line in said.out.splitlines()] == list(
        map(str, files)
    )


def test_predict_shows_progress_for_many_files_on_a_terminal(
    tmp_path, capsys, monkeypatch, trained_mlp_checkpoint
):
    root = tmp_path / "scans"
    for i in range(20):
        ink(root / f"{i:02d}.png", i)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    capsys.readouterr()
    code = main(
        [
            "predict",
            "--checkpoint",
            str(trained_mlp_checkpoint),
            str(root),
            "--csv",
            str(tmp_path / "out.csv"),
        ]
    )
    said = capsys.readouterr()
    assert code == 0  # every file read
    assert "0/20" in said.err
    assert "image" in said.err
    assert len(read_csv(tmp_path / "out.csv")) == 21


def test_a_csv_that_is_a_folder_or_cannot_be_written_is_one_line(
    tmp_path, capsys, monkeypatch, trained_mlp_checkpoint
):
    ink(tmp_path / "scans" / "a.png", 1)
    flags = ["predict", "--checkpoint", str(trained_mlp_checkpoint)]
    capsys.readouterr()
    assert main([*flags, str(tmp_path / "scans"), "--csv", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"ptcore-workbench predict: error: --csv {tmp_path} is a folder: give a "
        f"file name, such as {tmp_path / 'predictions.csv'}"
    ]

    def full_disk(path, write):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("workbench.core.predict_batch.write_atomically", full_disk)
    out = tmp_path / "out.csv"
    assert main([*flags, str(tmp_path / "scans"), "--csv", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [f"cannot write --csv {out}: No space left on device"]
    assert not out.exists()


def test_an_empty_folder_is_one_line_and_exit_1(
    tmp_path, capsys, trained_mlp_checkpoint
):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no image")
    capsys.readouterr()
    flags = ["predict", "--checkpoint", str(trained_mlp_checkpoint)]
    assert main([*flags, str(tmp_path / "empty")]) == 1
    said = capsys.readouterr()
    assert said.err.splitlines() == [
        f"{tmp_path / 'empty'}: no image files in this folder"
    ]
    assert said.out == ""


def test_a_photo_models_csv_keeps_odd_class_names_whole(tmp_path, capsys, monkeypatch):
    classes = ["zebra, crossing", 'cat "tom"']
    root = make_folder(tmp_path / "pets", classes, per_class=4, size=20)
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("PTCORE_DATA_DIR", str(tmp_path / "data"))
    ckpt = tmp_path / "pets.pt"
    flags = ["--dataset", "folder", "--data-dir", str(root), "--image-size", "16"]
    flags += ["--model", "small-cnn", "--epochs", "1", "--batch-size", "8"]
    assert main(["train", "--quiet", *flags, "--save", str(ckpt)]) == 0
    out = tmp_path / "pets.csv"
    flags = ["predict", "--checkpoint", str(ckpt), str(root), "--csv", str(out)]
    assert main(flags) == 0
    rows = read_csv(out)
    # Two classes: no third column; the names survive commas and quotes.
    assert rows[0] == [
        "file",
        "class",
        "confidence",
        "top2",
        "top2_confidence",
        "error",
    ]
    assert len(rows) == 9
    for row in rows[1:]:
        assert {row[1], row[3]} == set(classes)
        assert float(row[2]) + float(row[4]) == pytest.approx(1, abs=2e-6)
    alone = one_file_lines(capsys, ckpt, [rows[1][0]])
    assert alone[rows[1][0]][0] == rows[1][1]
