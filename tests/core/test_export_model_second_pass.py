"""Exports and model files, second pass: what a check, an export or a file promises.

Verification runs here on a tiny linear model with runners written in the
test, so every difference is known; the one export goes through
``export_checkpoint`` with stand-in exporters (no real TorchScript, torch.export
or ONNX work). Model files are tiny files written here.
"""

from __future__ import annotations

import copy
import textwrap

import numpy as np
import pytest
import torch
import torchvision
from PIL import Image
from torch import nn

from workbench.core.data.registry import DatasetInfo
from workbench.core.export import formats as X
from workbench.core.export import predict_template as T
from workbench.core.export import verify as V
from workbench.core.models.catalog import model_slug
from workbench.core.models.torchvision_models import build_torchvision
from workbench.core.models.user_file import (
    ModelFileError,
    build_from_file,
    defined_names,
    parse_spec,
)
from workbench.core.predict import photo_pixels

# ------------------------------------------------------------ verification


def _linear() -> nn.Module:
    torch.manual_seed(0)
    return nn.Linear(4, 3).eval()


def _batches(*sizes: int, start: float = 0.0) -> list[V.Batch]:
    """Batches of distinct inputs; image ``i`` has ``x[i, 0] == start + i``."""
    out, first = [], start
    for n in sizes:
        x = torch.rand(n, 4)
        x[:, 0] = torch.arange(first, first + n)
        out.append((x, torch.zeros(n, dtype=torch.long)))
        first += n
    return out


def test_no_image_checked_or_a_logit_past_the_tolerance_is_not_verified():
    assert not V.Verification(0, 0, 0.0).passed  # nothing proven
    # "no logit further than 1e-4": exactly 1e-4 passes, anything past it fails.
    assert V.Verification(9, 9, V.TOLERANCE).passed
    assert not V.Verification(9, 9, float(np.nextafter(V.TOLERANCE, 1.0))).passed


def test_logits_lower_than_the_eager_ones_fail_like_higher_ones():
    model = _linear()
    checks = V.verify(
        model,
        {
            "lower": lambda x: model(x) - 1e-3,
            "higher": lambda x: model(x) + 1e-3,
        },
        _batches(5),
    )
    for check in checks.values():
        assert check.agreed == check.total == 5  # same classes, shifted logits
        assert check.max_diff == pytest.approx(1e-3, rel=1e-3)
        assert not check.passed


def test_the_largest_difference_is_over_every_batch_not_the_last():
    model = _linear()

    def wrong_in_the_second_batch(x):
        # Images 5..8 are the second batch; the batch-1 checks rerun the first.
        return model(x) + 1e-3 * (x[:, :1] >= 5)

    checks = V.verify(model, {"onnx": wrong_in_the_second_batch}, _batches(5, 4))
    assert checks["onnx"].total == 9
    assert checks["onnx"].max_diff == pytest.approx(1e-3, rel=1e-3)
    assert not checks["onnx"].passed


def test_logits_of_another_shape_fail_with_the_shape_given():
    model = _linear()

    def one_more_class(x):
        return torch.cat([model(x), torch.zeros(len(x), 1)], dim=1)

    check = V.verify(model, {"onnx": one_more_class}, _batches(5))["onnx"]
    assert check.error == "batch of 5 gave (5, 4) logits"
    assert check.agreed == 0
    assert not check.passed


# ------------------------------------------------------------------ export


def test_formats_come_in_the_standard_order_once_and_none_is_refused():
    order = X.check_formats(["onnx", "torchscript", "onnx"])
    assert order == ("torchscript", "onnx")
    with pytest.raises(X.ExportError, match=r"^unknown format \(none\): choose"):
        X.check_formats([])
    with pytest.raises(X.ExportError) as info:
        X.check_formats(["onnx", "tflite"])
    assert str(info.value) == (
        "unknown format tflite: choose from torchscript, exported, onnx"
    )


@pytest.mark.slow
def test_a_failed_file_is_marked_with_its_reason_and_a_refusal_leaves_no_file(
    trained_mlp_checkpoint, tmp_path, monkeypatch
):
    """Stand-in exporters: the eager model itself, or a refusal half-way."""
    eager: dict[str, nn.Module] = {}

    def keep(model, shape, path):
        path.write_bytes(b"a model file")
        eager[path.name] = model

    def refuse_half_way(model, shape, path):
        path.write_bytes(b"half an onnx file")
        raise RuntimeError("unsupported operator: aten::frobnicate")

    broken = {"exported": True}

    def runner(fmt, path):
        model = copy.deepcopy(eager[path.name]).eval()
        if fmt == "exported" and broken["exported"]:

            def frozen_batch(x):
                if len(x) == 1:
                    raise RuntimeError("expected batch 64, got 1\nmore detail")
                return model(x)

            return frozen_batch
        return model

    for fmt in ("torchscript", "exported"):
        monkeypatch.setitem(X.EXPORTERS, fmt, keep)
    monkeypatch.setitem(X.EXPORTERS, "onnx", refuse_half_way)
    monkeypatch.setattr(V, "load_runner", runner)
    out = tmp_path / "out"

    result = X.export_checkpoint(trained_mlp_checkpoint, out)
    by_format = {r.format: r for r in result.formats}
    assert by_format["torchscript"].passed
    assert by_format["exported"].message == (
        "FAILED: batch of 1: expected batch 64, got 1"
    )
    assert by_format["onnx"].message == (
        "cannot export mlp: unsupported operator: aten::frobnicate"
    )
    assert not (out / "model.onnx").exists()  # the half-written file went
    assert result.verification_failed
    assert (out / X.FAILED_MARKER).read_text(encoding="utf-8").splitlines() == [
        "These exported files did NOT reproduce the eager model's outputs.",
        "Do not deploy them; see MODEL_CARD.md for the figures.",
        "",
        "exported: model.pt2: FAILED: batch of 1: expected batch 64, got 1",
    ]

    # Again into the same folder, every written file now right: a refusal is
    # not a failed verification, and the old marker is gone.
    broken["exported"] = False
    again = X.export_checkpoint(trained_mlp_checkpoint, out)
    assert [r.passed for r in again.formats] == [True, True, False]
    assert not again.passed
    assert not again.verification_failed
    assert not (out / X.FAILED_MARKER).exists()
    assert not (out / "model.onnx").exists()


# ------------------------------------------------------------- model files


def _file(tmp_path, text: str, name: str = "mine.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


NET = """\
import torch
from torch import nn
from torch.nn import Linear


def _helper():
    return 3


class Net(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.fc = Linear(3 * 8 * 8, num_classes)

    def forward(self, x):
        return self.fc(x.flatten(1))


def make(num_classes):
    def inner():
        return Net(num_classes)

    return inner()


size = 3
"""


def test_a_model_file_must_be_a_py_file(tmp_path):
    text = _file(tmp_path, NET, name="net.txt")
    with pytest.raises(ModelFileError) as info:
        parse_spec(f"{text}:Net")
    assert str(info.value) == (
        f"'{text}:Net': give a model file as path/to/file.py:Name (a class or a "
        "function in that file)"
    )


def test_a_missing_name_lists_what_the_file_itself_defines(tmp_path):
    path = _file(tmp_path, NET)
    with pytest.raises(ModelFileError) as info:
        build_from_file(parse_spec(f"{path}:Missing"), 10, (3, 8, 8))
    # Not Linear (imported), nor _helper (private), nor size (not callable).
    assert str(info.value) == f"{path}: no 'Missing' in it; it defines Net, make"


def test_defined_names_are_the_top_level_ones_only(tmp_path):
    path = _file(tmp_path, NET)
    assert defined_names(path) == ["Net", "make"]  # no forward, no inner


def test_a_forward_giving_a_tuple_is_one_error_saying_so(tmp_path):
    path = _file(
        tmp_path,
        """\
        from torch import nn


        class WithAux(nn.Module):
            def __init__(self, num_classes):
                super().__init__()
                self.fc = nn.Linear(3 * 8 * 8, num_classes)

            def forward(self, x):
                logits = self.fc(x.flatten(1))
                return logits, logits
        """,
    )
    with pytest.raises(ModelFileError) as info:
        build_from_file(parse_spec(f"{path}:WithAux"), 10, (3, 8, 8))
    assert str(info.value) == (
        f"{path}: WithAux gives a tuple for a batch of 2; it must give (2, 10): "
        "one score per class"
    )


def test_a_forward_error_inside_torch_is_told_at_the_files_own_line(tmp_path):
    path = _file(
        tmp_path,
        """\
        from torch import nn


        class Wrong(nn.Module):
            def __init__(self, num_classes):
                super().__init__()
                self.fc = nn.Linear(5, num_classes)

            def forward(self, x):
                return self.fc(x.flatten(1))
        """,
    )
    with pytest.raises(ModelFileError) as info:
        build_from_file(parse_spec(f"{path}:Wrong"), 10, (3, 8, 8))
    assert str(info.value).startswith(
        f"{path}:10: forward of a (2, 3, 8, 8) batch failed: RuntimeError: "
    )


def test_a_model_file_can_read_the_files_beside_it(tmp_path):
    (tmp_path / "width.txt").write_text("16\n", encoding="utf-8")
    path = _file(
        tmp_path,
        """\
        from pathlib import Path

        from torch import nn

        WIDTH = int(Path(__file__).with_name("width.txt").read_text())


        def make(num_classes):
            return nn.Sequential(
                nn.Flatten(), nn.Linear(3 * 8 * 8, WIDTH), nn.Linear(WIDTH, num_classes)
            )
        """,
    )
    model = build_from_file(parse_spec(f"{path}:make"), 10, (3, 8, 8))
    assert model[1].out_features == 16


def test_a_model_files_run_folder_is_named_after_its_stem_and_name():
    assert model_slug("path/to/net.py:Net") == "net-Net"
    assert model_slug("my models/two nets.py:Big") == "two-nets-Big"
    assert model_slug("resnet18") == "resnet18"


# ---------------------------------------------------------- torchvision


def test_a_pretrained_model_holds_the_published_weights_under_a_fresh_head():
    published = torchvision.models.squeezenet1_1(num_classes=1000)
    with torch.no_grad():
        for i, p in enumerate(published.parameters()):
            p.fill_(0.01 * (i + 1))  # no initialiser makes these
    state = published.state_dict()
    fitted = build_torchvision(
        "squeezenet1_1", 5, (3, 64, 64), "IMAGENET1K_V1", load_state=lambda m: state
    )
    got = fitted.model.state_dict()
    head = f"{fitted.replaced}."
    for key, value in state.items():
        if not key.startswith(head):
            assert torch.equal(got[key], value), key
    assert got[f"{head}weight"].shape == (5, 512, 1, 1)


# ------------------------------------------------------------- predict.py


@pytest.mark.parametrize("size", [(7, 10), (10, 7)])
def test_predict_py_resizes_a_photo_like_the_workbench(tmp_path, monkeypatch, size):
    """The longer side rounded down (4 * 10 / 7 = 5.71 -> 5), then centre crop."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", Image.MAX_IMAGE_PIXELS)
    width, height = size
    ys, xs = np.mgrid[0:height, 0:width]
    pixels = np.stack([xs * 25, ys * 25, (xs + ys) * 12], axis=-1).astype(np.uint8)
    path = tmp_path / "photo.png"
    Image.fromarray(pixels, "RGB").save(path)
    info = DatasetInfo(
        "folder", "photos", 2, ("a", "b"), (0.5,) * 3, (0.2,) * 3, True, (3, 4, 4)
    )
    workbench = photo_pixels(path, info)
    script = T.photo_pixels(path, {"size": 4, "channels": 3})
    assert script.shape == workbench.shape == (3, 4, 4)
    np.testing.assert_array_equal(np.round(script * 255).astype(np.uint8), workbench)
