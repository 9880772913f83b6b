"""How a run's model is made: torchvision's replaced heads and inputs, model files.

torchvision models are built on the ``meta`` device (shapes, no memory, no
download: a pretrained build with no weights file is the architecture only);
nothing here runs one (tests/core/test_torchvision_models.py does, on the
CPU). A user's model file is a tiny file written here whose builder records
what it was called with.
"""

from __future__ import annotations

import hashlib
import textwrap

import pytest
import torch
import torchvision
from torch import nn

from workbench.core.config import ConfigError
from workbench.core.data.registry import DATASET_INFO
from workbench.core.models.builtins import build_model, build_on_meta
from workbench.core.models.inputs import preprocessing_text
from workbench.core.models.source import model_file_change, model_sha
from workbench.core.models.torchvision_models import (
    build_torchvision,
    replaced_head_notice,
    weights_preprocess,
)

RGB = (3, 224, 224)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

pytestmark = pytest.mark.usefixtures("offline_weights")


def _layout(model: nn.Module) -> list[tuple[str, type]]:
    return [(path, type(module)) for path, module in model.named_modules()]


# ------------------------------------------------- pretrained: the new head

# Every kind of head the code replaces: a Linear attribute, the last Linear of
# a classifier Sequential, a Linear inside a named block, SqueezeNet's Conv2d.
HEADS = [
    ("resnet18", "fc"),
    ("mobilenet_v3_small", "classifier.3"),
    ("vit_b_16", "heads.head"),
    ("squeezenet1_0", "classifier.1"),
]


@pytest.mark.parametrize(("name", "head"), HEADS)
def test_a_replaced_head_is_the_published_layer_for_the_runs_classes(name, head):
    published = build_on_meta(name, 1000, RGB)  # the architecture as published
    asked = []
    with torch.device("meta"):
        fitted = build_torchvision(
            name, 5, RGB, "IMAGENET1K_V1", load_state=lambda m: asked.append(m)
        )
    enum = torchvision.models.get_model_weights(name)
    assert asked == [enum.IMAGENET1K_V1]  # the published weights, loaded first
    assert fitted.head == fitted.replaced == head
    assert fitted.model.head_module == head
    old, new = published.get_submodule(head), fitted.model.get_submodule(head)
    assert type(new) is type(old)
    if isinstance(old, nn.Linear):
        assert new.in_features == old.in_features
        assert new.out_features == 5
    else:
        assert new.in_channels == old.in_channels
        assert new.out_channels == 5
        assert new.kernel_size == old.kernel_size
        assert (new.stride, new.padding) == (old.stride, old.padding)
    assert (new.bias is None) == (old.bias is None)
    assert all(p.requires_grad for p in new.parameters())
    # Only that layer changed: every module the same kind at the same path.
    assert _layout(fitted.model) == _layout(published)


def test_weights_none_load_nothing_and_default_loads_the_default_weights():
    asked = []
    with torch.device("meta"):
        fresh = build_torchvision("resnet18", 5, RGB, load_state=asked.append)
        assert asked == []
        assert fresh.replaced is None
        build_torchvision("resnet18", 5, RGB, "default", load_state=asked.append)
    assert asked == [torchvision.models.ResNet18_Weights.IMAGENET1K_V1]


@pytest.mark.parametrize(
    ("name", "classes", "head"),
    [
        ("resnet18", 64, "fc"),  # conv1 also gives 64 channels
        ("mobilenet_v3_small", 1024, "classifier.3"),  # classifier.0 gives 1024
        ("squeezenet1_0", 64, "classifier.1"),  # Fire modules give 64 channels
    ],
)
def test_the_head_is_the_last_layer_giving_the_classes(name, classes, head):
    assert build_on_meta(name, classes, RGB).head_module == head


@pytest.mark.parametrize(
    ("name", "sides"),
    [("googlenet", ("aux1", "aux2")), ("inception_v3", ("AuxLogits",))],
)
def test_pretrained_googlenet_and_inception_drop_their_side_heads(name, sides):
    shape = (3, 299, 299)
    model = build_on_meta(name, 5, shape, "IMAGENET1K_V1")
    assert model.aux_logits is False
    for side in sides:
        assert getattr(model, side) is None
    # The published weights were trained on inputs torchvision re-normalises.
    assert model.transform_input is True


def test_the_replaced_head_notice_names_the_weights_the_head_and_the_classes():
    assert replaced_head_notice("resnet18", "IMAGENET1K_V1", "fc", 10) == (
        "Pretrained ResNet18_Weights.IMAGENET1K_V1: the classifier head fc "
        "(1,000 ImageNet classes) was replaced by a fresh layer for 10 classes."
    )
    notice = replaced_head_notice("mobilenet_v3_small", "default", "classifier.3", 3)
    assert notice.startswith("Pretrained MobileNet_V3_Small_Weights.IMAGENET1K_V1:")
    assert notice.endswith("a fresh layer for 3 classes.")


# ------------------------------------------------- torchvision: the inputs


def test_the_weights_preprocessing_is_what_torchvision_publishes():
    got = weights_preprocess("resnet18", "IMAGENET1K_V1")
    assert got is not None
    assert got.weights == "ResNet18_Weights.IMAGENET1K_V1"
    assert (got.resize, got.crop, got.interpolation) == (256, 224, "bilinear")
    assert got.mean == pytest.approx(IMAGENET_MEAN)
    assert got.std == pytest.approx(IMAGENET_STD)
    assert weights_preprocess("resnet18", "default") == got
    assert weights_preprocess("resnet18", "none") is None
    # The end-to-end ViT weights: another size and interpolation.
    vit = weights_preprocess("vit_b_16", "IMAGENET1K_SWAG_E2E_V1")
    assert vit is not None
    assert (vit.resize, vit.crop, vit.interpolation) == (384, 384, "bicubic")


def test_the_data_panel_line_says_what_is_done_to_each_image():
    digits = DATASET_INFO["digits"]
    assert preprocessing_text("small-cnn", "none", digits) == (
        "28x28; mean (0.156), std (0.277)"
    )
    assert preprocessing_text("resnet18", "none", digits) == (
        "28x28; gray repeated to 3 channels; mean (0.156, 0.156, 0.156), "
        "std (0.277, 0.277, 0.277)"
    )
    assert preprocessing_text("resnet18", "IMAGENET1K_V1", digits) == (
        "28x28; gray repeated to 3 channels; mean (0.485, 0.456, 0.406), "
        "std (0.229, 0.224, 0.225); from ResNet18_Weights.IMAGENET1K_V1: resize "
        "256, centre crop 224, bilinear interpolation, mean (0.485, 0.456, "
        "0.406), std (0.229, 0.224, 0.225)"
    )


def test_pretrained_maxvit_refuses_another_image_size_before_any_download():
    with pytest.raises(ConfigError) as info:
        build_on_meta("maxvit_t", 5, (3, 64, 64), "IMAGENET1K_V1")
    assert str(info.value) == (
        "model: maxvit_t with pretrained weights takes 224x224 images, not 64x64; "
        "set the image size to 224"
    )


# ------------------------------------------------------- your own model file

SHAPE = (2, 5, 6)  # channels, height and width all different

RECORDING = """\
from torch import nn


class _Recorded(nn.Module):
    def __init__(self, num_classes, args, kwargs):
        super().__init__()
        self.called_with = (args, kwargs)
        self.head = nn.Linear(2 * 5 * 6, num_classes)

    def forward(self, x):
        return self.head(x.flatten(1))


def AnyArguments(*args, **kwargs):
    return _Recorded(kwargs.get("num_classes", 1), args, kwargs)


def KeywordsOnly(*, num_classes, in_channels):
    return _Recorded(num_classes, (), {"in_channels": in_channels})


def ClassesOnly(num_classes):
    return _Recorded(num_classes, (), {})


class WithChannels(_Recorded):
    def __init__(self, num_classes, in_channels=1):
        super().__init__(num_classes, (), {"in_channels": in_channels})
"""


@pytest.fixture
def recording(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(RECORDING, encoding="utf-8")
    return path


def test_a_builder_is_called_with_num_classes_and_in_channels_by_keyword(recording):
    model = build_model(f"{recording}:AnyArguments", 7, seed=0, input_shape=SHAPE)
    assert model.called_with == ((), {"num_classes": 7, "in_channels": 2})
    only = build_model(f"{recording}:KeywordsOnly", 7, seed=0, input_shape=SHAPE)
    assert only.called_with == ((), {"in_channels": 2})
    made = build_model(f"{recording}:WithChannels", 7, seed=0, input_shape=SHAPE)
    assert made.called_with == ((), {"in_channels": 2})
    # A builder that takes no in_channels is not given one.
    plain = build_model(f"{recording}:ClassesOnly", 7, seed=0, input_shape=SHAPE)
    assert plain(torch.zeros(3, *SHAPE)).shape == (3, 7)


def test_the_model_carries_the_sha256_of_its_files_bytes(recording):
    model = build_model(f"{recording}:ClassesOnly", 7, seed=0, input_shape=SHAPE)
    digest = hashlib.sha256(recording.read_bytes()).hexdigest()
    assert model.model_file_sha256 == digest
    assert model_sha(model) == digest
    assert model_sha(build_model("mlp", 10, seed=0)) is None


def test_the_output_check_leaves_the_model_as_its_builder_made_it(tmp_path):
    path = tmp_path / "normed.py"
    path.write_text(
        textwrap.dedent(
            """\
            from torch import nn


            def Normed(num_classes, in_channels):
                return nn.Sequential(
                    nn.BatchNorm2d(in_channels),
                    nn.Flatten(),
                    nn.Linear(in_channels * 5 * 6, num_classes),
                )


            def Evaluating(num_classes, in_channels):
                return Normed(num_classes, in_channels).eval()
            """
        ),
        encoding="utf-8",
    )
    model = build_model(f"{path}:Normed", 4, seed=0, input_shape=SHAPE)
    assert model.training  # the check ran in eval(), then training mode came back
    norm = model[0]
    assert int(norm.num_batches_tracked) == 0  # no statistics learnt from blanks
    assert torch.equal(norm.running_mean, torch.zeros(2))
    assert torch.equal(norm.running_var, torch.ones(2))
    evaluating = build_model(f"{path}:Evaluating", 4, seed=0, input_shape=SHAPE)
    assert not evaluating.training


def test_a_builder_that_fails_is_one_line_at_the_deepest_line_of_the_file(tmp_path):
    path = tmp_path / "big.py"
    path.write_text(
        textwrap.dedent(
            """\
            from torch import nn


            def _check_memory():
                raise MemoryError("needs 80 GB")


            def Big(num_classes):
                _check_memory()
                return nn.Linear(2, num_classes)


            Number = 3
            """
        ),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        build_model(f"{path}:Big", 4, seed=0, input_shape=SHAPE)
    assert str(info.value) == (
        f"model: {path}:5: Big(...) failed: MemoryError: needs 80 GB"
    )
    with pytest.raises(ConfigError) as info:
        build_model(f"{path}:Number", 4, seed=0, input_shape=SHAPE)
    assert str(info.value) == f"model: {path}: Number is not a class or a function"


def test_a_changed_unrecorded_or_missing_file_is_told(tmp_path):
    path = tmp_path / "net.py"
    spec = f"{path}:Net"
    path.write_text("X = 1\n", encoding="utf-8")
    then = hashlib.sha256(path.read_bytes()).hexdigest()
    assert model_file_change(spec, then, "checkpoint a.pt") is None
    path.write_text("X = 2\n", encoding="utf-8")
    now = hashlib.sha256(path.read_bytes()).hexdigest()
    assert model_file_change(spec, then, "checkpoint a.pt") == (
        f"{path} changed since checkpoint a.pt was made from it (SHA-256 "
        f"{then[:12]} then, {now[:12]} now): it may build another model"
    )
    assert model_file_change(spec, None, "run 7") == (
        f"run 7 does not record the hash of {path}: whether the file changed "
        "since cannot be told"
    )
    path.unlink()
    assert model_file_change(spec, now, "run 7") == (
        f"the model file of run 7 cannot be read now: {path}: no such file"
    )
    assert model_file_change("resnet18", None, "run 7") is None
