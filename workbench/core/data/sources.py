"""Reading datasets into memory: bundled digits, MNIST family, CIFAR-10, my digits."""

from __future__ import annotations

import io
import logging
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

import numpy as np
import torch
import torch.nn.functional as F

from workbench.core.atomic_files import write_atomically
from workbench.core.data import cifar
from workbench.core.data.download import (
    check_integrity,
    download_dataset,
    missing_raw_files,
    raw_dir_of,
    resolve_root,
    unpack_present_archives,
)
from workbench.core.data.my_digits import MyDigits
from workbench.core.data.preprocess import style_of
from workbench.core.data.registry import (
    DATASET_INFO,
    CancelCallback,
    DataError,
    DataMissing,
    ImageArrays,
    ProgressCallback,
    dataset_info,
    default_data_dir,
    torchvision_dataset,
)

if TYPE_CHECKING:
    from torchvision import datasets

    from workbench.core.config import TrainConfig

log = logging.getLogger(__name__)

_DIGITS_BOX = 20  # MNIST fits each digit into a 20x20 box centred in 28x28
_IMAGE_SIDE = 28


def load_arrays(
    name: str,
    data_dir: str | Path | None = None,
    *,
    download: bool = True,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
    mirrors: Sequence[str] | None = None,
) -> ImageArrays:
    """Load a dataset's train and test splits into memory.

    Parameters
    ----------
    name : str
        One of :data:`DATASET_INFO`.
    data_dir : str or Path, optional
        torchvision root holding ``MNIST/raw/`` (or ``FashionMNIST``, ``KMNIST``);
        the class folder itself or its ``raw`` folder are accepted too. For
        ``cifar10`` the folder holding ``cifar-10-batches-bin/`` (or that folder
        itself). None means :func:`default_data_dir`. Ignored for ``digits``.
    download : bool
        Download missing files; when False, missing files raise :class:`DataError`.
    progress, cancel, mirrors
        Passed to :func:`download_dataset` when a download is needed.

    Returns
    -------
    ImageArrays

    Raises
    ------
    DataError
        Unknown dataset, files missing or unreadable, or the download failed.
    DownloadCancelled
        ``cancel()`` returned True during a download.
    """
    dataset_info(name)
    if name == "digits":
        return _load_digits()
    if name == "my-digits":
        return MyDigits().arrays("mnist")
    if name == "cifar10":
        return _load_cifar10(data_dir, download, progress, cancel, mirrors)
    train, test = load_torchvision_splits(
        name,
        data_dir,
        download=download,
        progress=progress,
        cancel=cancel,
        mirrors=mirrors,
    )
    return ImageArrays(train.data, train.targets.long(), test.data, test.targets.long())


def _load_cifar10(
    data_dir: str | Path | None,
    download: bool,
    progress: ProgressCallback | None,
    cancel: CancelCallback | None,
    mirrors: Sequence[str] | None,
) -> ImageArrays:
    """CIFAR-10 from its binary batches (never the pickled python version)."""
    root = cifar.cifar_root(data_dir)
    archive = root / cifar.ARCHIVE_NAME
    missing = cifar.missing_files(root)
    if missing and check_integrity(archive, cifar.ARCHIVE_MD5):
        # An archive already on disk (copied by hand) unpacks without any network.
        cifar.unpack_archive(archive, root)
        missing = cifar.missing_files(root)
    if missing and not download:
        message = (
            f"{DATASET_INFO['cifar10'].title} files are missing: looked for "
            f"{', '.join(missing)} in {root / cifar.FOLDER}, and for a valid "
            f"{cifar.ARCHIVE_NAME} in {root}. Allow downloading, or point the data "
            f"folder at one that holds {cifar.FOLDER}/ or {cifar.ARCHIVE_NAME}."
        )
        if archive.is_file():
            message += (
                f" {archive.name} is there but did not pass the MD5 check (damaged,"
                " or another version such as the python one)."
            )
        raise DataMissing(message)
    if missing:
        download_dataset(
            "cifar10", root, progress=progress, cancel=cancel, mirrors=mirrors
        )
    return cifar.read_arrays(root)


# The digits in their 28x28 layout, kept after the first load: reading them through
# scikit-learn costs about 5 s of imports in every new process (the command line,
# a resumed run), the cached file a few milliseconds. Bump the version whenever
# the layout or the split changes.
DIGITS_CACHE_NAME = "digits-28x28-v1.npz"
_SPLITS = ("train_images", "train_labels", "test_images", "test_labels")


def _load_digits() -> ImageArrays:
    """sklearn's 8x8 digits, brought to MNIST's 28x28 layout, with a fixed split."""
    cache = default_data_dir() / DIGITS_CACHE_NAME
    cached = _read_digits_cache(cache)
    if cached is not None:
        return cached
    arrays = _digits_from_sklearn()
    try:
        write_atomically(cache, lambda handle: _write_digits_cache(handle, arrays))
    except OSError as exc:  # a read-only cache only costs the next start its time
        log.info("digits not cached in %s: %s", cache, exc)
    return arrays


def _read_digits_cache(path: Path) -> ImageArrays | None:
    """The cached digits, or None when absent or unusable (then made afresh)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("cannot read the digits cache at %s: %s", path, exc)
        return None
    try:
        # From bytes: np.load leaves its file open when the archive is damaged.
        with np.load(io.BytesIO(raw), allow_pickle=False) as stored:
            return ImageArrays(*(torch.from_numpy(stored[k]) for k in _SPLITS))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, DataError):
        log.warning("ignoring a damaged digits cache at %s", path)
        return None


def _write_digits_cache(handle: BinaryIO, arrays: ImageArrays) -> None:
    np.savez(handle, **{k: getattr(arrays, k).numpy() for k in _SPLITS})


def _digits_from_sklearn() -> ImageArrays:
    # Imported here: sklearn takes seconds to import; only digits users pay for
    # it, once.
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    bunch = load_digits()
    images = _digits_to_mnist_layout(torch.from_numpy(bunch.images))
    labels = torch.from_numpy(bunch.target).long()
    train_index, test_index = train_test_split(
        np.arange(len(labels)), test_size=0.2, random_state=0, stratify=bunch.target
    )
    train_index = torch.from_numpy(train_index)
    test_index = torch.from_numpy(test_index)
    return ImageArrays(
        images[train_index], labels[train_index], images[test_index], labels[test_index]
    )


def _digits_to_mnist_layout(images: torch.Tensor) -> torch.Tensor:
    """(N, 8, 8) values 0..16 -> (N, 28, 28) uint8: a 20x20 digit, 4-pixel margin."""
    # Interpolation is linear, so scaling to 0..255 first gives the same pixels
    # while touching 8x8 instead of 28x28 values.
    x = images.to(torch.float32).unsqueeze(1) * (255.0 / 16.0)
    box = F.interpolate(
        x, size=(_DIGITS_BOX, _DIGITS_BOX), mode="bilinear", antialias=True
    )
    box = box.round_().clamp_(0, 255).to(torch.uint8).squeeze(1)
    out = torch.zeros((len(images), _IMAGE_SIDE, _IMAGE_SIDE), dtype=torch.uint8)
    margin = (_IMAGE_SIDE - _DIGITS_BOX) // 2
    out[:, margin : margin + _DIGITS_BOX, margin : margin + _DIGITS_BOX] = box
    return out


def load_torchvision_splits(
    name: str,
    data_dir: str | Path | None,
    *,
    download: bool,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
    mirrors: Sequence[str] | None = None,
    transform: Callable[[Any], Any] | None = None,
) -> tuple[datasets.MNIST, datasets.MNIST]:
    """The torchvision train and test datasets, downloading first if allowed."""
    dataset_cls = torchvision_dataset(name)
    root = resolve_root(data_dir, dataset_cls.__name__)
    raw_dir = raw_dir_of(root, dataset_cls)
    if missing_raw_files(raw_dir, dataset_cls):
        # Archives already on disk (copied by hand) unpack without any network.
        unpack_present_archives(raw_dir, dataset_cls)
    missing = missing_raw_files(raw_dir, dataset_cls)
    if missing and not download:
        raise DataMissing(_missing_files_message(name, raw_dir, missing))
    if missing:
        download_dataset(name, root, progress=progress, cancel=cancel, mirrors=mirrors)
    return (
        _read_split(dataset_cls, root, train=True, transform=transform),
        _read_split(dataset_cls, root, train=False, transform=transform),
    )


def _missing_files_message(name: str, raw_dir: Path, missing: list[str]) -> str:
    folder = raw_dir.parent.name
    message = (
        f"{DATASET_INFO[name].title} files are missing: looked for "
        f"{', '.join(missing)} in {raw_dir}. Allow downloading, or point the data "
        f"folder at one that holds {folder}/raw/."
    )
    # An archive that is there but was not unpacked failed its checksum.
    damaged = [f"{m}.gz" for m in missing if (raw_dir / f"{m}.gz").is_file()]
    if damaged:
        message += (
            " These archives did not pass torchvision's MD5 check (damaged, or "
            f"from another dataset): {', '.join(damaged)}."
        )
    return message


def _read_split(
    dataset_cls: type[datasets.MNIST],
    root: Path,
    *,
    train: bool,
    transform: Callable[[Any], Any] | None,
) -> datasets.MNIST:
    try:
        return dataset_cls(str(root), train=train, transform=transform, download=False)
    except (AssertionError, RuntimeError, ValueError, TypeError, OSError) as exc:
        # torchvision's IDX reader asserts on truncated files.
        raise DataError(
            f"cannot read {dataset_cls.__name__} from {raw_dir_of(root, dataset_cls)}: "
            f"the files look damaged ({exc or type(exc).__name__}). Delete them and "
            "download again."
        ) from exc


# --------------------------------------------------------------------------- download


_FailureKind = Literal["offline", "interrupted", "http", "corrupted"]


def load_run_arrays(
    cfg: TrainConfig,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
    base_arrays: ImageArrays | None = None,
) -> ImageArrays:
    """The images a run with ``cfg`` trains and validates on.

    For ``my-digits``: the user's drawings prepared like ``cfg.base_dataset``,
    with ``cfg.replay`` training images of the base dataset mixed into the
    training split (drawn once with ``cfg.seed``); validation holds drawings
    only. Any other dataset: :func:`load_arrays`.

    Parameters
    ----------
    base_arrays : ImageArrays, optional
        The base dataset, already loaded (saves loading it for the replay).
    """
    if cfg.dataset != "my-digits":
        return load_arrays(
            cfg.dataset,
            cfg.data_dir,
            download=cfg.download,
            progress=progress,
            cancel=cancel,
        )
    mine = MyDigits().arrays(style_of(cfg.base_dataset))
    if cfg.replay == 0:
        return mine
    if base_arrays is None:
        base_arrays = load_base_arrays(cfg, progress=progress, cancel=cancel)
    return mix_replay(mine, base_arrays, cfg.replay, cfg.seed)


def load_base_arrays(
    cfg: TrainConfig,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
) -> ImageArrays:
    """The dataset ``cfg.base_dataset`` names (what my digits are mixed with)."""
    return load_arrays(
        cfg.base_dataset,
        cfg.data_dir,
        download=cfg.download,
        progress=progress,
        cancel=cancel,
    )


def mix_replay(
    mine: ImageArrays, base: ImageArrays, count: int, seed: int
) -> ImageArrays:
    """``mine`` with ``count`` random training images of ``base`` added to train."""
    generator = torch.Generator().manual_seed(seed)
    count = min(count, len(base.train_labels))
    pick = torch.randperm(len(base.train_labels), generator=generator)[:count]
    return ImageArrays(
        torch.cat([mine.train_images, base.train_images[pick]]),
        torch.cat([mine.train_labels, base.train_labels[pick]]),
        mine.test_images,
        mine.test_labels,
    )
