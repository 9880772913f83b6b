"""torchvision's classifiers as a run's model: names, weights, builds, inputs.

Everything here runs offline with weights none (pretrained weights and their
cache are tests/core/test_weights_cache.py). Images are small (32x32) so a
representative set of architectures builds and runs in seconds.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tests.image_folders import make_folder
from workbench.core.config import (
    DEFAULT_IMAGE_SIZE,
    ConfigError,
    TrainConfig,
    validate,
)
from workbench.core.data.build import build_loaders
from workbench.core.data.registry import DATASET_INFO
from workbench.core.data.sources import load_arrays
from workbench.core.models.builtins import build_model
from workbench.core.models.catalog import (
    BUILTIN_MODELS,
    family,
    grouped_models,
    torchvision_models,
    weights_choices,
)
from workbench.core.models.inputs import fit_to_model, model_channels
from workbench.core.models.torchvision_models import build_torchvision
from workbench.core.train.engine import fit, prepare_run

CPU = torch.device("cpu")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

pytestmark = pytest.mark.usefixtures("offline_weights")


@pytest.fixture(scope="module")
def digits():
    return load_arrays("digits")


# ------------------------------------------------------------ catalog and config


def test_every_torchvision_classifier_is_a_valid_model_with_weights_none():
    names = torchvision_models()
    assert {"resnet18", "mobilenet_v3_small", "vit_b_16", "squeezenet1_1"} <= set(names)
    assert not set(names) & set(BUILTIN_MODELS)
    for name in names:
        validate(TrainConfig(model=name))
        validate(TrainConfig(model=name, weights="none"))


def test_builtins_and_model_files_are_valid_names():
    for name in BUILTIN_MODELS:
        validate(TrainConfig(model=name))
    validate(TrainConfig(model="models/net.py:Net"))
    validate(TrainConfig(model="C:/models/my_net.py:build"))


@pytest.mark.parametrize("name", ["resnet", "resnet19", "ResNet18", "net.pt:Net"])
def test_unknown_model_names_are_refused_naming_the_three_kinds(name):
    with pytest.raises(ConfigError) as info:
        validate(TrainConfig(model=name))
    text = str(info.value)
    assert text.startswith(f"model: {name!r} is neither a built-in (small-cnn, ")
    assert "torchvision classification model" in text
    assert "`ptcore-workbench models` lists them" in text
    assert "path/to/file.py:Name" in text


@pytest.mark.parametrize("name", ["net.py", "net.py:", "net.py:1Net", "a.py:b.c"])
def test_malformed_model_files_are_refused_with_the_form_to_use(name):
    with pytest.raises(ConfigError) as info:
        validate(TrainConfig(model=name))
    assert str(info.value) == (
        f"model: {name!r}: give a model file as path/to/file.py:Name (a class or "
        "a function in that file)"
    )


def test_an_empty_or_non_text_model_is_refused():
    for bad in ("", 18):
        with pytest.raises(ConfigError, match="must be a model name"):
            validate(TrainConfig(model=bad))


@pytest.mark.parametrize("weights", ["default", "IMAGENET1K_V1"])
def test_pretrained_weights_are_valid_for_resnet18(weights):
    validate(TrainConfig(model="resnet18", weights=weights))
    assert weights in weights_choices("resnet18")


def test_weights_choices_are_none_default_and_the_enum_members():
    assert weights_choices("resnet18") == ("none", "default", "IMAGENET1K_V1")
    assert weights_choices("resnet50") == (
        "none",
        "default",
        "IMAGENET1K_V1",
        "IMAGENET1K_V2",
    )
    assert weights_choices("small-cnn") == ("none",)


@pytest.mark.parametrize("model", [*BUILTIN_MODELS, "models/net.py:Net"])
def test_pretrained_weights_are_refused_for_builtins_and_files(model):
    validate(TrainConfig(model=model, weights="none"))
    with pytest.raises(ConfigError) as info:
        validate(TrainConfig(model=model, weights="default"))
    assert str(info.value) == (
        f"weights: 'default': pretrained weights come with torchvision models; "
        f"{model} starts from random weights (use --init-from for a checkpoint)"
    )


def test_an_unknown_weights_name_lists_the_choices():
    with pytest.raises(ConfigError) as info:
        validate(TrainConfig(model="resnet50", weights="IMAGENET1K_V3"))
    assert str(info.value) == (
        "weights: 'IMAGENET1K_V3' is not one of none, default, IMAGENET1K_V1, "
        "IMAGENET1K_V2 for resnet50"
    )
    with pytest.raises(ConfigError, match="must be none, default or a weights name"):
        validate(TrainConfig(model="resnet18", weights=None))


def test_pretrained_weights_bring_their_crop_size_to_resizable_datasets():
    def size(**fields) -> int:
        return TrainConfig(**fields).resolved_image_size

    assert size(dataset="cifar10", model="resnet18", weights="IMAGENET1K_V1") == 224
    assert size(dataset="cifar10", model="resnet18", weights="default") == 224
    folder = {"dataset": "folder", "data_dir": "images"}
    assert size(**folder, model="resnet18", weights="IMAGENET1K_V1") == 224
    # Weights none, built-ins, fixed-size datasets or a chosen size: unchanged.
    assert size(dataset="cifar10", model="resnet18") == DEFAULT_IMAGE_SIZE["cifar10"]
    assert size(dataset="cifar10", model="cnn") == DEFAULT_IMAGE_SIZE["cifar10"]
    assert size(**folder, model="resnet18") == DEFAULT_IMAGE_SIZE["folder"]
    assert size(dataset="digits", model="resnet18", weights="IMAGENET1K_V1") == 28
    tuned = {"model": "resnet18", "weights": "IMAGENET1K_V1"}
    assert size(dataset="cifar10", image_size=48, **tuned) == 48


def test_models_are_grouped_by_family_builtins_first():
    groups = dict(grouped_models())
    assert next(iter(groups)) == "Built-in"
    assert groups["Built-in"] == list(BUILTIN_MODELS)
    assert "resnet18" in groups["ResNet"]
    assert "resnext50_32x4d" in groups["ResNeXt"]
    assert "wide_resnet50_2" in groups["Wide ResNet"]
    assert "mobilenet_v3_small" in groups["MobileNet"]
    assert family("models/net.py:Net") == "Model files"
    listed = [name for names in groups.values() for name in names]
    assert sorted(listed) == sorted([*BUILTIN_MODELS, *torchvision_models()])


# ------------------------------------------------------------------ building


# (name, image side, the classifier layer's module path)
ARCHITECTURES = [
    ("resnet18", 32, "fc"),
    ("mobilenet_v3_small", 32, "classifier.3"),
    ("efficientnet_b0", 32, "classifier.1"),
    ("squeezenet1_1", 64, "classifier.1"),
    ("googlenet", 32, "fc"),
    ("vit_b_16", 32, "heads.head"),
    ("convnext_tiny", 32, "classifier.2"),
]


@pytest.mark.parametrize(("name", "side", "head"), ARCHITECTURES)
def test_each_family_builds_for_seven_classes_in_train_and_eval(name, side, head):
    model = build_model(name, 7, seed=0, input_shape=(3, side, side))
    assert model.head_module == head
    layer = model.get_submodule(head)
    assert (
        layer.out_features if isinstance(layer, nn.Linear) else layer.out_channels
    ) == 7
    x = torch.randn(2, 3, side, side)
    model.train()
    out = model(x)
    assert isinstance(out, torch.Tensor)  # no auxiliary outputs (GoogLeNet)
    assert out.shape == (2, 7)
    out.sum().backward()
    model.eval()
    with torch.no_grad():
        assert model(x).shape == (2, 7)


def test_weights_none_replaces_nothing():
    fitted = build_torchvision("mobilenet_v3_small", 7, (3, 32, 32))
    assert fitted.head == "classifier.3"
    assert fitted.replaced is None


def test_seeded_builds_are_identical_and_leave_the_global_rng_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    first = build_model("resnet18", 7, seed=5, input_shape=(3, 32, 32))
    assert torch.equal(torch.random.get_rng_state(), before)
    second = build_model("resnet18", 7, seed=5, input_shape=(3, 32, 32))
    other = build_model("resnet18", 7, seed=6, input_shape=(3, 32, 32))
    a, b, c = first.state_dict(), second.state_dict(), other.state_dict()
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["conv1.weight"], c["conv1.weight"])
    assert not torch.equal(a["fc.weight"], c["fc.weight"])


@pytest.mark.parametrize("channels", [1, 4])
def test_a_non_rgb_input_shape_is_refused_clearly(channels):
    with pytest.raises(ConfigError) as info:
        build_model("resnet18", 7, seed=0, input_shape=(channels, 32, 32))
    assert str(info.value) == (
        f"model: torchvision's resnet18 takes 3-channel images, not {channels}"
    )


def test_pretrained_vit_refuses_another_image_size_before_any_download():
    with pytest.raises(ConfigError) as info:
        build_model("vit_b_16", 7, input_shape=(3, 32, 32), weights="IMAGENET1K_V1")
    assert "vit_b_16 with pretrained weights takes 224x224 images, not 32x32" in str(
        info.value
    )


# ------------------------------------------------------------------ data side


def test_fit_to_model_repeats_gray_statistics_or_takes_the_weights():
    info = DATASET_INFO["digits"]
    assert info.channels == 1
    assert fit_to_model(info, "small-cnn", "none") is info
    gray = fit_to_model(info, "resnet18", "none")
    assert gray.image_shape == (3, 28, 28)
    assert gray.mean == info.mean * 3
    assert gray.std == info.std * 3
    assert gray.num_classes == info.num_classes
    tuned = fit_to_model(info, "resnet18", "IMAGENET1K_V1")
    assert tuned.image_shape == (3, 28, 28)
    assert tuned.mean == pytest.approx(IMAGENET_MEAN)
    assert tuned.std == pytest.approx(IMAGENET_STD)
    assert model_channels("resnet18", 1) == 3
    assert model_channels("cnn", 1) == 1


def _first_batches(cfg, digits, count=2):
    loaders = build_loaders(cfg, CPU, arrays=digits)
    loaders.train.set_epoch(0)
    batches = loaders.train.iter_from(0)
    train = [next(batches) for _ in range(count)]
    val = next(iter(loaders.val))
    return loaders, train, val


@pytest.mark.parametrize("weights", ["none", "IMAGENET1K_V1"])
def test_gray_digits_reach_resnet18_as_three_equal_channels_on_both_paths(
    digits, weights
):
    common = {"dataset": "digits", "model": "resnet18", "weights": weights}
    fast, fast_train, fast_val = _first_batches(
        TrainConfig(loader="fast", **common), digits
    )
    slow, slow_train, slow_val = _first_batches(
        TrainConfig(loader="dataloader", **common), digits
    )
    assert fast.info.image_shape == slow.info.image_shape == (3, 28, 28)
    expected = fit_to_model(DATASET_INFO["digits"], "resnet18", weights)
    assert fast.info.mean == slow.info.mean == expected.mean
    for (x, y), (sx, sy) in zip(
        [*fast_train, fast_val], [*slow_train, slow_val], strict=True
    ):
        assert x.shape[1:] == sx.shape[1:] == (3, 28, 28)
        assert torch.equal(y, sy)
        torch.testing.assert_close(x, sx, atol=1e-6, rtol=0)
    # Three copies of the gray image, each normalised with its channel's stats.
    x = fast_val[0]
    mean = torch.tensor(expected.mean).view(1, 3, 1, 1)
    std = torch.tensor(expected.std).view(1, 3, 1, 1)
    pixels = x * std + mean
    torch.testing.assert_close(pixels[:, 1], pixels[:, 0], atol=1e-5, rtol=0)
    torch.testing.assert_close(pixels[:, 2], pixels[:, 0], atol=1e-5, rtol=0)
    gray = digits.test_images[: len(x)].float() / 255
    torch.testing.assert_close(pixels[:, 0], gray, atol=1e-5, rtol=0)


@pytest.mark.slow
def test_a_folder_of_gray_images_trains_resnet18(tmp_path, monkeypatch):
    monkeypatch.setenv("PTCORE_DATA_DIR", str(tmp_path / "data"))
    root = make_folder(tmp_path / "gray", 3, per_class=8, size=32, mode="L")
    cfg = TrainConfig(
        dataset="folder",
        data_dir=str(root),
        image_size=32,
        model="resnet18",
        batch_size=8,
        max_steps=2,
        log_every=1,
        seed=1,
    )
    validate(cfg)
    run = prepare_run(cfg)
    assert run.loaders.info.image_shape == (3, 32, 32)
    assert run.loaders.info.num_classes == 3
    x, _ = next(iter(run.loaders.val))
    assert x.shape[1:] == (3, 32, 32)
    assert torch.equal(x[:, 0], x[:, 1])
    assert torch.equal(x[:, 0], x[:, 2])
    events = fit(run)
    assert run.global_step == 2
    assert any(type(e).__name__ == "TrainResult" for e in events)
    assert run.model.get_submodule("fc").out_features == 3


def test_the_model_key_has_the_channels_the_model_takes():
    # --init-from and the window's model preview build the model of this key.
    from workbench.core.model_offer import build_keyed, model_key

    key = model_key(TrainConfig(dataset="digits", model="resnet18"))
    assert key == ("resnet18", 10, (3, 28, 28))
    assert model_key(TrainConfig(dataset="digits", model="mlp")) == (
        "mlp",
        10,
        (1, 28, 28),
    )
    assert build_keyed(key, seed=0).conv1.in_channels == 3
