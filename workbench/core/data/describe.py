"""What a run's inputs look like before any image is decoded: classes and shape.

The built-in datasets say it in the registry; an image folder says it through
its class folders and its files' headers (gray or colour), read in
milliseconds. Models are built from this (the freeze tree, loading weights).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from workbench.core.data.folder import scan_folder
from workbench.core.data.folder_images import GRAY_MODES
from workbench.core.data.registry import FOLDER, dataset_info

# Headers read per class to tell a gray folder from a colour one.
_HEADERS_PER_CLASS = 20


@dataclass(frozen=True, slots=True)
class InputSpec:
    """Class names and ``(channels, height, width)`` of a run's inputs."""

    class_names: tuple[str, ...]
    image_shape: tuple[int, int, int]

    @property
    def num_classes(self) -> int:
        return len(self.class_names)


def input_spec(dataset: str, data_dir: str | None, image_size: int) -> InputSpec:
    """The inputs ``dataset`` gives at ``image_size``.

    Raises
    ------
    DataError
        Unknown dataset, or a folder that cannot train (missing, no classes, ...).
    """
    if dataset == FOLDER:
        root = Path(data_dir or "").expanduser()
        return _folder_spec(str(root), image_size, _stamp(root))
    info = dataset_info(dataset)
    if info.image_shape[1:] == (image_size, image_size):
        return InputSpec(info.class_names, info.image_shape)
    return InputSpec(info.class_names, (info.channels, image_size, image_size))


def _stamp(root: Path) -> tuple[float, ...]:
    """Modification times that change when class folders or files come and go."""
    try:
        return (root.stat().st_mtime, *(p.stat().st_mtime for p in root.iterdir()))
    except OSError:
        return ()


@lru_cache(maxsize=8)
def _folder_spec(root: str, image_size: int, _stamp: tuple[float, ...]) -> InputSpec:
    listing = scan_folder(root)
    channels = 1
    for label in range(len(listing.classes)):
        paths = [
            p for pairs in listing.files.values() for p, lab in pairs if lab == label
        ]
        if any(not _is_gray(p) for p in paths[:_HEADERS_PER_CLASS]):
            channels = 3
            break
    return InputSpec(listing.classes, (channels, image_size, image_size))


def _is_gray(path: Path) -> bool:
    try:
        with Image.open(path) as image:  # reads the header only
            return image.mode in GRAY_MODES
    except (UnidentifiedImageError, OSError, ValueError):
        return True  # unreadable: skipped by the run, says nothing about colour
