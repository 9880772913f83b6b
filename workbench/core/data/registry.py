"""What datasets exist, their statistics, and the types data travels in."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs
import torch

if TYPE_CHECKING:
    from torchvision import datasets

DATA_DIR_ENV = "PTCORE_DATA_DIR"
_IMAGE_SIDE = 28


class DataError(Exception):
    """Data that cannot be loaded or downloaded; the text is meant for the user."""


class DownloadCancelled(DataError):
    """The user cancelled a download; partial files have been removed."""


class DataMissing(DataError):
    """The dataset's files are not in the folder and downloading was not allowed."""


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    """What the rest of the program needs to know about one dataset.

    Attributes
    ----------
    name : str
        Key in :data:`DATASET_INFO` and ``config.DATASETS``.
    title : str
        Human-readable name for menus and messages.
    num_classes : int
        Number of labels.
    class_names : tuple of str
        Display name of each label, indexed by label.
    mean, std : tuple of float
        Pixel statistics (on the 0..1 scale) of each channel, used to normalise
        inputs.
    offline : bool
        True when the data ships with the program and never needs a download.
    image_shape : tuple of int
        ``(channels, height, width)`` of one model input.
    """

    name: str
    title: str
    num_classes: int
    class_names: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    offline: bool
    image_shape: tuple[int, int, int] = (1, _IMAGE_SIDE, _IMAGE_SIDE)

    @property
    def channels(self) -> int:
        """Colour channels of one input: 1 (grayscale) or 3 (RGB)."""
        return self.image_shape[0]

    def normalise(self, x: torch.Tensor) -> torch.Tensor:
        """``(x - mean) / std`` per channel of ``x``: float 0..1, (..., C, H, W).

        The loaders' operations in their order, so every path gives the same numbers.
        """
        mean = torch.tensor(self.mean, dtype=x.dtype, device=x.device).view(-1, 1, 1)
        std = torch.tensor(self.std, dtype=x.dtype, device=x.device).view(-1, 1, 1)
        return x.sub(mean).div(std)

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins: what a checkpoint keeps to be read without the data."""
        return {
            "name": self.name,
            "title": self.title,
            "class_names": list(self.class_names),
            "mean": list(self.mean),
            "std": list(self.std),
            "image_shape": list(self.image_shape),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DatasetInfo:
        """The inverse of :meth:`to_dict`; :class:`DataError` when it is malformed."""
        try:
            names = tuple(str(n) for n in data["class_names"])
            shape = tuple(int(v) for v in data["image_shape"])
            mean = tuple(float(v) for v in data["mean"])
            std = tuple(float(v) for v in data["std"])
            info = cls(
                name=str(data["name"]),
                title=str(data.get("title", data["name"])),
                num_classes=len(names),
                class_names=names,
                mean=mean,
                std=std,
                offline=True,
                image_shape=(shape[0], shape[1], shape[2]),
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise DataError(f"malformed dataset description: {exc}") from None
        if len(mean) != info.channels or len(std) != info.channels:
            raise DataError(
                "malformed dataset description: one mean and std per channel"
            )
        return info


_DIGIT_NAMES = tuple(str(d) for d in range(10))

DATASET_INFO: dict[str, DatasetInfo] = {
    "digits": DatasetInfo(
        name="digits",
        title="UCI handwritten digits (bundled, offline)",
        num_classes=10,
        class_names=_DIGIT_NAMES,
        # Measured: mean and population std of (train_images / 255) after the
        # 28x28 conversion below, over the 1,437-image training split
        # (tests/core/test_data.py recomputes them).
        mean=(0.1558,),
        std=(0.2774,),
        offline=True,
    ),
    "mnist": DatasetInfo(
        name="mnist",
        title="MNIST",
        num_classes=10,
        class_names=_DIGIT_NAMES,
        mean=(0.1307,),
        std=(0.3081,),
        offline=False,
    ),
    "fashion-mnist": DatasetInfo(
        name="fashion-mnist",
        title="Fashion-MNIST",
        num_classes=10,
        # torchvision's FashionMNIST.classes (tests/core/test_data.py compares).
        class_names=(
            "T-shirt/top",
            "Trouser",
            "Pullover",
            "Dress",
            "Coat",
            "Sandal",
            "Shirt",
            "Sneaker",
            "Bag",
            "Ankle boot",
        ),
        mean=(0.2860,),
        std=(0.3530,),
        offline=False,
    ),
    "kmnist": DatasetInfo(
        name="kmnist",
        title="Kuzushiji-MNIST (KMNIST)",
        num_classes=10,
        # torchvision's KMNIST.classes (tests/core/test_data.py compares).
        class_names=("o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"),
        mean=(0.1918,),
        std=(0.3483,),
        offline=False,
    ),
    "my-digits": DatasetInfo(
        name="my-digits",
        title="My digits (drawn on the canvas)",
        num_classes=10,
        class_names=_DIGIT_NAMES,
        # Drawings are prepared like MNIST by default (config base_dataset);
        # build_loaders normalises with the base dataset's statistics.
        mean=(0.1307,),
        std=(0.3081,),
        offline=True,
    ),
    "cifar10": DatasetInfo(
        name="cifar10",
        title="CIFAR-10 (32x32 colour photos)",
        num_classes=10,
        class_names=(
            "airplane",
            "automobile",
            "bird",
            "cat",
            "deer",
            "dog",
            "frog",
            "horse",
            "ship",
            "truck",
        ),
        # Per-channel mean and population std of the 50,000 training images.
        mean=(0.4914, 0.4822, 0.4465),
        std=(0.2470, 0.2435, 0.2616),
        offline=False,
        image_shape=(3, 32, 32),
    ),
}

# Images from the user's own folder: what they hold is only known once scanned
# (``workbench.core.data.folder.folder_info``).
FOLDER = "folder"

# Dataset name -> the name of its torchvision dataset class.
TORCHVISION_CLASS_NAMES = {
    "mnist": "MNIST",
    "fashion-mnist": "FashionMNIST",
    "kmnist": "KMNIST",
}


def torchvision_dataset(name: str) -> type[datasets.MNIST]:
    """The torchvision dataset class of ``name`` (a key of TORCHVISION_CLASS_NAMES).

    Imported here, not at the top: torchvision takes seconds to import, and a
    run on the built-in digits, or a command that only reads runs, needs none.
    """
    from torchvision import datasets

    return getattr(datasets, TORCHVISION_CLASS_NAMES[name])


@dataclass(frozen=True, slots=True)
class ImageArrays:
    """A dataset's train and test splits as raw tensors.

    Images are uint8, ``(N, H, W)`` for grayscale (the MNIST family: 28x28,
    white ink on black) or ``(N, C, H, W)`` for any channel count; labels are
    int64 ``(N,)``.
    """

    train_images: torch.Tensor
    train_labels: torch.Tensor
    test_images: torch.Tensor
    test_labels: torch.Tensor

    def __post_init__(self) -> None:
        for split in ("train", "test"):
            images = getattr(self, f"{split}_images")
            labels = getattr(self, f"{split}_labels")
            if images.dtype != torch.uint8 or images.dim() not in (3, 4):
                raise DataError(
                    f"{split} images must be uint8 (N, H, W) or (N, C, H, W), got "
                    f"{images.dtype} {tuple(images.shape)}"
                )
            if labels.dtype != torch.int64 or labels.shape != images.shape[:1]:
                raise DataError(
                    f"{split} labels must be int64 ({images.shape[0]},), got "
                    f"{labels.dtype} {tuple(labels.shape)}"
                )

    @property
    def image_shape(self) -> tuple[int, int, int]:
        """``(channels, height, width)`` of one image."""
        shape = tuple(self.train_images.shape[1:])
        if len(shape) == 2:
            return (1, shape[0], shape[1])
        return (shape[0], shape[1], shape[2])


@dataclass(frozen=True, slots=True)
class DownloadProgress:
    """One progress report of :func:`download_dataset`.

    Attributes
    ----------
    dataset : str
        Dataset name, e.g. ``"mnist"``.
    file_name : str
        The file being downloaded.
    file_index : int
        1-based position of that file among the dataset's files ("file 2 of 4").
    file_count : int
        Number of files the dataset has.
    bytes_done : int
        Bytes of this file received so far.
    bytes_total : int or None
        Size of this file, or None when the server does not say.
    unit : str
        What ``bytes_done`` counts: ``"B"`` (a download) or ``"images"``
        (decoding an image folder).
    """

    dataset: str
    file_name: str
    file_index: int
    file_count: int
    bytes_done: int
    bytes_total: int | None
    unit: str = "B"


ProgressCallback = Callable[[DownloadProgress], None]
CancelCallback = Callable[[], bool]


def default_data_dir() -> Path:
    """The folder datasets are downloaded to when the user names none.

    Returns
    -------
    pathlib.Path
        ``$PTCORE_DATA_DIR`` when set, else ``<user cache>/ptcore-workbench/data``.
        The folder is not created here.
    """
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_cache_path("ptcore-workbench") / "data"


def class_names(names: Sequence[str], count: int) -> list[str]:
    """``count`` class names: the given ones first, then class indices."""
    return [str(names[i]) if i < len(names) else str(i) for i in range(count)]


def dataset_info(name: str) -> DatasetInfo:
    try:
        return DATASET_INFO[name]
    except KeyError:
        choices = ", ".join(DATASET_INFO)
        raise DataError(f"unknown dataset {name!r}; choose one of {choices}") from None
