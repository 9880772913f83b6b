"""The inputs a model takes, from the data a run reads.

torchvision's models take three channels: gray images are repeated to three
(the loaders do it, so MNIST trains a ResNet). Pretrained weights bring the
preprocessing they were trained with (``weights.transforms()``): their mean and
std replace the data's own, and their crop is the default image size
(``TrainConfig.resolved_image_size``).
"""

from __future__ import annotations

from dataclasses import replace

from workbench.core.data.registry import DatasetInfo
from workbench.core.models.catalog import is_torchvision, pretrained
from workbench.core.models.torchvision_models import weights_preprocess

TORCHVISION_CHANNELS = 3


def model_channels(model: str, data_channels: int) -> int:
    """Channels ``model`` takes for data with ``data_channels`` channels."""
    return TORCHVISION_CHANNELS if is_torchvision(model) else data_channels


def fit_to_model(info: DatasetInfo, model: str, weights: str) -> DatasetInfo:
    """``info`` as ``model`` (with ``weights``) sees the data: channels, mean, std."""
    channels = model_channels(model, info.channels)
    mean, std = info.mean, info.std
    if pretrained(model, weights):
        preprocess = weights_preprocess(model, weights)
        assert preprocess is not None
        mean, std = preprocess.mean, preprocess.std
    elif channels != info.channels:
        # Repeated gray: each channel carries the gray statistics.
        mean, std = mean * channels, std * channels
    shape = (channels, *info.image_shape[1:])
    if (shape, mean, std) == (info.image_shape, info.mean, info.std):
        return info
    return replace(info, image_shape=shape, mean=mean, std=std)


def preprocessing_text(model: str, weights: str, info: DatasetInfo) -> str:
    """One line for the Data panel: what is done to each image before the model."""
    side = info.image_shape[1]
    fitted = fit_to_model(info, model, weights)
    gray = info.channels == 1 and fitted.channels == 3
    mean = ", ".join(f"{v:.3f}" for v in fitted.mean)
    std = ", ".join(f"{v:.3f}" for v in fitted.std)
    parts = [f"{side}x{side}"]
    if gray:
        parts.append("gray repeated to 3 channels")
    parts.append(f"mean ({mean}), std ({std})")
    if pretrained(model, weights):
        preprocess = weights_preprocess(model, weights)
        assert preprocess is not None
        parts.append(f"from {preprocess.describe()}")
    return "; ".join(parts)
