"""One rule for images too large to decode: check-data, a run and predict
refuse the same file with the same line (issue 34, items 20 and 22).

The large image is a real PNG whose header says 14,000 x 14,000 pixels with
almost no pixel data: the rule refuses it from the header, before any
decoding, so the test costs no memory.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from tests.image_folders import make_folder
from workbench.cli.commands import main
from workbench.core.data.folder import load_folder
from workbench.core.data.folder_check import check_folder
from workbench.core.data.registry import DATASET_INFO
from workbench.core.predict import PredictError, Predictor

REFUSAL = (
    "14,000x14,000 pixels take 748 MB decoded, over the 256 MB one image may: "
    "scale it down"
)


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def write_huge_png(path, side: int = 14_000):
    """A valid PNG header for a ``side`` x ``side`` RGB image, one row of data."""
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\0" * (1 + 3 * side))
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", data)
        + _chunk(b"IEND", b"")
    )
    return path


def test_check_data_names_the_large_image_and_its_cost(tmp_path):
    root = make_folder(tmp_path / "d", ["a", "b"], per_class=3)
    huge = write_huge_png(root / "a" / "huge.png")
    report = check_folder(root, image_size=32)
    assert report.unreadable == [huge]
    assert f"warning: skipped, {REFUSAL}: {huge}" in [f.line() for f in report.findings]


def test_a_run_skips_it_with_the_same_reason(tmp_path, data_dir):
    root = make_folder(tmp_path / "d", ["a", "b"], per_class=3)
    write_huge_png(root / "a" / "huge.png")
    data = load_folder(root, image_size=16)
    assert data.skipped == (f"a/huge.png: {REFUSAL}",)
    assert len(data.arrays.train_labels) + len(data.arrays.test_labels) == 6


@pytest.mark.parametrize("dataset", ["cifar10", "digits"])
def test_predict_refuses_it_in_one_line_for_a_photo_and_a_digit_model(
    tmp_path, dataset
):
    huge = write_huge_png(tmp_path / "huge.png")
    predictor = Predictor("mlp", dataset, info=DATASET_INFO[dataset])
    with pytest.raises(PredictError) as refused:
        predictor.read_file(huge)
    assert str(refused.value) == f"{huge}: {REFUSAL}"


def test_predict_on_the_command_line_says_one_line(
    tmp_path, capsys, trained_mlp_checkpoint
):
    huge = write_huge_png(tmp_path / "huge.png")
    fine = tmp_path / "digit.png"
    Image.fromarray(np.pad(np.full((10, 10), 255, np.uint8), 9)).save(fine)
    ckpt = str(trained_mlp_checkpoint)
    code = main(["predict", "--checkpoint", ckpt, str(huge), str(fine)])
    out, err = capsys.readouterr()
    assert code == 1  # one file refused
    assert err == f"{huge}: {REFUSAL}\n"
    assert out.startswith(f"{fine}: ")  # the other file is read
