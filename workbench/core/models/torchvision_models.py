"""torchvision's classification models, fitted to a run's classes and images.

With ``weights="none"`` a model is built by torchvision for the run's class
count. With pretrained weights it is built as published (1,000 ImageNet
classes), the weights file from torch's hub cache is loaded with
``weights_only=True`` (torch.hub would unpickle it), and the classifier head is
replaced by a fresh layer for the run's classes: :attr:`FittedModel.replaced`
says which module. Every torchvision model takes 3 channels; gray data is
repeated to three by the data side (:mod:`data.model_inputs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from workbench.core.models.catalog import (
    DEFAULT_WEIGHTS,
    NO_WEIGHTS,
    weights_enum_class,
    weights_problem,
)

IMAGENET_CLASSES = 1000
InputShape = tuple[int, int, int]


class ModelBuildError(ValueError):
    """A model that cannot be built for these inputs; the text says why."""


@dataclass(frozen=True, slots=True)
class WeightsPreprocess:
    """The preprocessing a set of pretrained weights was trained with."""

    weights: str  # e.g. "ResNet18_Weights.IMAGENET1K_V1"
    resize: int
    crop: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    interpolation: str

    def describe(self) -> str:
        mean = ", ".join(f"{v:.3f}" for v in self.mean)
        std = ", ".join(f"{v:.3f}" for v in self.std)
        return (
            f"{self.weights}: resize {self.resize}, centre crop {self.crop}, "
            f"{self.interpolation} interpolation, mean ({mean}), std ({std})"
        )


def resolve_weights(model: str, weights: str) -> Any:
    """The weights enum member ``weights`` names for ``model``; None for none."""
    problem = weights_problem(model, weights)
    if problem is not None:
        raise ModelBuildError(f"weights: {problem}")
    if weights == NO_WEIGHTS:
        return None
    enum = weights_enum_class(model)
    return enum.DEFAULT if weights == DEFAULT_WEIGHTS else enum[weights]


def weights_preprocess(model: str, weights: str) -> WeightsPreprocess | None:
    """What ``weights.transforms()`` does (size, crop, mean, std); None for none."""
    member = resolve_weights(model, weights)
    if member is None:
        return None
    transform = member.transforms()
    resize = transform.resize_size
    crop = transform.crop_size
    return WeightsPreprocess(
        weights=f"{type(member).__name__}.{member.name}",
        resize=int(resize[0] if isinstance(resize, list | tuple) else resize),
        crop=int(crop[0] if isinstance(crop, list | tuple) else crop),
        mean=tuple(float(v) for v in transform.mean),  # type: ignore[arg-type]
        std=tuple(float(v) for v in transform.std),  # type: ignore[arg-type]
        interpolation=transform.interpolation.value,
    )


def _builder_options(name: str, image_size: int, pretrained: bool) -> dict[str, Any]:
    """Arguments torchvision's builder needs besides the class count."""
    options: dict[str, Any] = {}
    if name in ("googlenet", "inception_v3"):
        # Their side heads only matter for ImageNet training; the published
        # weights hold them, so a pretrained build keeps them until loaded.
        options.update(aux_logits=pretrained, init_weights=not pretrained)
        options["transform_input"] = pretrained
    if name.startswith("vit_"):
        options["image_size"] = image_size
    if name == "maxvit_t":
        options["input_size"] = (image_size, image_size)
    return options


@dataclass(frozen=True, slots=True)
class FittedModel:
    model: nn.Module
    head: str  # the classifier layer's module path
    replaced: str | None  # the head that was replaced to fit the classes


def build_torchvision(
    name: str,
    num_classes: int,
    input_shape: InputShape,
    weights: str = NO_WEIGHTS,
    *,
    load_state: Callable[[Any], dict[str, torch.Tensor] | None] | None = None,
) -> FittedModel:
    """Model ``name`` for ``num_classes`` classes and ``input_shape`` inputs.

    ``load_state(weights_member)`` returns the pretrained state_dict (from the
    hub cache, downloading if needed); it is only called for pretrained weights.

    Raises
    ------
    ModelBuildError
        Wrong channel count, images the architecture cannot take, bad weights.
    """
    channels, height, width = input_shape
    if channels != 3:
        raise ModelBuildError(
            f"model: torchvision's {name} takes 3-channel images, not {channels}"
        )
    member = resolve_weights(name, weights)
    options = _builder_options(name, height, pretrained=member is not None)
    if member is not None:
        _check_pretrained_size(name, member, (height, width))
    classes = IMAGENET_CLASSES if member is not None else num_classes
    import torchvision.models  # 1.5 s to import: only a torchvision model needs it

    try:
        model = torchvision.models.get_model(name, num_classes=classes, **options)
    except (ValueError, RuntimeError, AssertionError) as exc:
        raise ModelBuildError(f"model: {name} cannot be built here: {exc}") from exc
    replaced = None
    if member is not None:
        if load_state is None:
            raise ModelBuildError(f"model: {name}'s pretrained weights were not given")
        state = load_state(member)
        if state is not None:  # None: the architecture only (a checkpoint follows)
            model.load_state_dict(state)
        _drop_side_heads(model)
        head = _find_head(model, IMAGENET_CLASSES)
        _replace_head(model, head, num_classes)
        replaced = head
    else:
        head = _find_head(model, num_classes)
    model.head_module = head  # type: ignore[assignment] # freeze "all but the head"
    return FittedModel(model, head, replaced)


def replaced_head_notice(name: str, weights: str, head: str, num_classes: int) -> str:
    """What a pretrained run changed in the published model, for the run's notes."""
    member = resolve_weights(name, weights)
    label = f"{type(member).__name__}.{member.name}"
    return (
        f"Pretrained {label}: the classifier head {head} (1,000 ImageNet classes) "
        f"was replaced by a fresh layer for {num_classes} classes."
    )


def _check_pretrained_size(name: str, member: Any, size: tuple[int, int]) -> None:
    """Vision transformers' position embeddings fix the image size they take."""
    if not (name.startswith("vit_") or name == "maxvit_t"):
        return
    wanted = tuple(member.meta["min_size"])
    if size != wanted:
        raise ModelBuildError(
            f"model: {name} with pretrained weights takes {wanted[0]}x{wanted[1]} "
            f"images, not {size[0]}x{size[1]}; set the image size to {wanted[0]}"
        )


def _drop_side_heads(model: nn.Module) -> None:
    """GoogLeNet and Inception v3: drop the ImageNet-only auxiliary classifiers."""
    if getattr(model, "aux_logits", False):
        model.aux_logits = False  # type: ignore[assignment]
        for side in ("aux1", "aux2", "AuxLogits"):
            if hasattr(model, side):
                setattr(model, side, None)


def _find_head(model: nn.Module, outputs: int) -> str:
    """The last Linear (or 1x1 Conv2d, SqueezeNet) giving ``outputs`` values."""
    head = ""
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear) and module.out_features == outputs:
            head = path
        elif isinstance(module, nn.Conv2d) and module.out_channels == outputs:
            head = path
    if not head:
        raise ModelBuildError("model: no classifier layer found to fit the classes")
    return head


def _replace_head(model: nn.Module, path: str, num_classes: int) -> None:
    old = model.get_submodule(path)
    new: nn.Module
    if isinstance(old, nn.Linear):
        new = nn.Linear(old.in_features, num_classes, bias=old.bias is not None)
    else:
        assert isinstance(old, nn.Conv2d)
        new = nn.Conv2d(old.in_channels, num_classes, kernel_size=old.kernel_size)
    model.set_submodule(path, new)
