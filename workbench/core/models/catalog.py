"""Which models a run can name: the built-ins, torchvision's classifiers, a file.

A config's ``model`` is one of three kinds:

- a built-in network (``small-cnn``, ...), made for the MNIST family;
- a torchvision classification model by name (``resnet18``), with or without
  pretrained ``weights`` (``none``, ``default`` or an enum member such as
  ``IMAGENET1K_V1``);
- ``path/to/file.py:Name``, the user's own model (:mod:`model_file`).

Names only: nothing here builds a model or imports torchvision's model code
until a torchvision name is asked about.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePath
from typing import Any

BUILTIN_MODELS = ("small-cnn", "cnn", "lazy-cnn", "mlp")
# Earlier layouts of a built-in, kept so the checkpoints saved with them still
# load (checkpoint format 3 renames their model); not offered for new runs.
LEGACY_MODELS = ("small-cnn-v1",)
NO_WEIGHTS = "none"
DEFAULT_WEIGHTS = "default"
FEATURE_CACHE_MODES = ("auto", "on", "off")

# Family titles by name prefix, longest prefixes first where they overlap.
_FAMILIES = (
    ("alexnet", "AlexNet"),
    ("convnext", "ConvNeXt"),
    ("densenet", "DenseNet"),
    ("efficientnet", "EfficientNet"),
    ("googlenet", "GoogLeNet and Inception"),
    ("inception", "GoogLeNet and Inception"),
    ("maxvit", "MaxViT"),
    ("mnasnet", "MNASNet"),
    ("mobilenet", "MobileNet"),
    ("regnet", "RegNet"),
    ("resnext", "ResNeXt"),
    ("wide_resnet", "Wide ResNet"),
    ("resnet", "ResNet"),
    ("shufflenet", "ShuffleNet"),
    ("squeezenet", "SqueezeNet"),
    ("swin", "Swin Transformer"),
    ("vgg", "VGG"),
    ("vit", "Vision Transformer"),
)


@lru_cache(maxsize=1)
def torchvision_models() -> tuple[str, ...]:
    """Every classification model of ``torchvision.models``, sorted by name."""
    import torchvision.models  # here: seconds to import, and names need none of it

    return tuple(sorted(torchvision.models.list_models(module=torchvision.models)))


def is_model_file(name: str) -> bool:
    """True for ``path/to/file.py:Name``."""
    path, sep, attr = name.rpartition(":")
    return bool(sep) and path.endswith(".py") and attr.isidentifier()


def is_torchvision(name: str) -> bool:
    # A model file is told by its name: listing torchvision's models imports it.
    if name in BUILTIN_MODELS or is_model_file(name):
        return False
    return name in torchvision_models()


def model_slug(name: str) -> str:
    """``name`` fit for a folder name: ``path/to/net.py:Net`` -> ``net-Net``."""
    if is_model_file(name):
        path, _, attr = name.rpartition(":")
        name = f"{PurePath(path).stem}-{attr}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)


def family(name: str) -> str:
    """The group a model is listed under in the Model panel."""
    if name in BUILTIN_MODELS or name in LEGACY_MODELS:
        return "Built-in"
    if is_model_file(name):
        return "Model files"
    for prefix, title in _FAMILIES:
        if name.startswith(prefix):
            return title
    return "Other torchvision models"


def grouped_models() -> list[tuple[str, list[str]]]:
    """(family, names) in display order: the built-ins first, then torchvision's."""
    groups: dict[str, list[str]] = {"Built-in": list(BUILTIN_MODELS)}
    for name in torchvision_models():
        groups.setdefault(family(name), []).append(name)
    return list(groups.items())


def model_problem(name: object) -> str | None:
    """Why ``name`` cannot be a config's model; None when it can."""
    if not isinstance(name, str) or not name:
        return f"{name!r} must be a model name"
    if name in BUILTIN_MODELS or name in LEGACY_MODELS:
        return None
    if is_model_file(name) or is_torchvision(name):
        return None
    if name.endswith(".py") or ".py:" in name:
        return (
            f"{name!r}: give a model file as path/to/file.py:Name (a class or a "
            "function in that file)"
        )
    return (
        f"{name!r} is neither a built-in ({', '.join(BUILTIN_MODELS)}), a "
        "torchvision classification model (e.g. resnet18, mobilenet_v3_small; "
        "`ptcore-workbench models` lists them) nor path/to/file.py:Name"
    )


def weights_enum_class(name: str) -> Any:
    """torchvision's weights enum of model ``name`` (``ResNet18_Weights``)."""
    import torchvision.models  # here: seconds to import, and names need none of it

    return torchvision.models.get_model_weights(name)


def weights_choices(name: str) -> tuple[str, ...]:
    """What ``--weights`` may be for model ``name``: none, default, enum members."""
    if not is_torchvision(name):
        return (NO_WEIGHTS,)
    members = [m for m in weights_enum_class(name).__members__ if m != "DEFAULT"]
    return (NO_WEIGHTS, DEFAULT_WEIGHTS, *members)


def weights_problem(model: str, weights: object) -> str | None:
    """Why ``weights`` cannot go with ``model``; None when it can."""
    if weights == NO_WEIGHTS:
        return None
    if not isinstance(weights, str):
        return f"{weights!r} must be none, default or a weights name"
    if not is_torchvision(model):
        return (
            f"{weights!r}: pretrained weights come with torchvision models; "
            f"{model} starts from random weights (use --init-from for a checkpoint)"
        )
    choices = weights_choices(model)
    if weights not in choices:
        return f"{weights!r} is not one of {', '.join(choices)} for {model}"
    return None


def pretrained(model: str, weights: str) -> bool:
    """True when the run starts from downloaded torchvision weights."""
    return weights != NO_WEIGHTS and is_torchvision(model)
