"""Datasets and batch loaders: the offline digits set and the MNIST family.

Two loaders share one interface (``set_epoch``, ``len``, ``iter``, ``iter_from``):

* :class:`FastLoader` keeps the whole normalised dataset in one tensor (on the
  training device when it fits) and slices batches out of it: no per-sample Python.
* :class:`DataLoaderBatches` is the textbook ``torch.utils.data.DataLoader`` over a
  per-sample ``Dataset`` + transforms, for studying workers and pinned memory.

Both draw epoch ``e`` in the same seeded order, so switching loader does not change
what the model sees.
"""

from __future__ import annotations

import http.client
import logging
import math
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

import numpy as np
import platformdirs
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset, Sampler
from torchvision import datasets, transforms
from torchvision.datasets.utils import USER_AGENT, check_integrity, extract_archive

from workbench.core.preprocess import style_of

if TYPE_CHECKING:
    from workbench.core.config import TrainConfig

log = logging.getLogger(__name__)

__all__ = [
    "DATASET_INFO",
    "ArrayDataset",
    "DataError",
    "DataLoaderBatches",
    "DatasetInfo",
    "DownloadCancelled",
    "DownloadProgress",
    "FastLoader",
    "ImageArrays",
    "Loaders",
    "build_loaders",
    "default_data_dir",
    "download_dataset",
    "load_arrays",
    "load_base_arrays",
    "load_run_arrays",
    "mix_replay",
]

DATA_DIR_ENV = "PTCORE_DATA_DIR"
MIRROR_ENV = "PTCORE_DATA_MIRROR"
VAL_MIN_BATCH_SIZE = 1024

_CHUNK_BYTES = 64 * 1024
_TIMEOUT_S = 30
_DIGITS_BOX = 20  # MNIST fits each digit into a 20x20 box centred in 28x28
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
    mean, std : float
        Pixel statistics (on the 0..1 scale) used to normalise inputs.
    offline : bool
        True when the data ships with the program and never needs a download.
    image_shape : tuple of int
        ``(channels, height, width)`` of one model input.
    """

    name: str
    title: str
    num_classes: int
    class_names: tuple[str, ...]
    mean: float
    std: float
    offline: bool
    image_shape: tuple[int, int, int] = (1, _IMAGE_SIDE, _IMAGE_SIDE)


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
        mean=0.1558,
        std=0.2774,
        offline=True,
    ),
    "mnist": DatasetInfo(
        name="mnist",
        title="MNIST",
        num_classes=10,
        class_names=_DIGIT_NAMES,
        mean=0.1307,
        std=0.3081,
        offline=False,
    ),
    "fashion-mnist": DatasetInfo(
        name="fashion-mnist",
        title="Fashion-MNIST",
        num_classes=10,
        class_names=tuple(datasets.FashionMNIST.classes),
        mean=0.2860,
        std=0.3530,
        offline=False,
    ),
    "kmnist": DatasetInfo(
        name="kmnist",
        title="Kuzushiji-MNIST (KMNIST)",
        num_classes=10,
        class_names=tuple(datasets.KMNIST.classes),
        mean=0.1918,
        std=0.3483,
        offline=False,
    ),
    "my-digits": DatasetInfo(
        name="my-digits",
        title="My digits (drawn on the canvas)",
        num_classes=10,
        class_names=_DIGIT_NAMES,
        # Drawings are prepared like MNIST by default (config base_dataset);
        # build_loaders normalises with the base dataset's statistics.
        mean=0.1307,
        std=0.3081,
        offline=True,
    ),
}

_TORCHVISION_CLASSES: dict[str, type[datasets.MNIST]] = {
    "mnist": datasets.MNIST,
    "fashion-mnist": datasets.FashionMNIST,
    "kmnist": datasets.KMNIST,
}


@dataclass(frozen=True, slots=True)
class ImageArrays:
    """A dataset's train and test splits as raw tensors.

    Images are uint8 ``(N, 28, 28)``, white ink on black like MNIST; labels are
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
            if images.dtype != torch.uint8 or images.dim() != 3:
                raise DataError(
                    f"{split} images must be uint8 (N, H, W), got "
                    f"{images.dtype} {tuple(images.shape)}"
                )
            if labels.dtype != torch.int64 or labels.shape != images.shape[:1]:
                raise DataError(
                    f"{split} labels must be int64 ({images.shape[0]},), got "
                    f"{labels.dtype} {tuple(labels.shape)}"
                )


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
    """

    dataset: str
    file_name: str
    file_index: int
    file_count: int
    bytes_done: int
    bytes_total: int | None


ProgressCallback = Callable[[DownloadProgress], None]
CancelCallback = Callable[[], bool]


# --------------------------------------------------------------------------- paths


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


def _resolve_root(data_dir: str | Path | None, folder: str) -> Path:
    """The torchvision root (the folder holding ``<folder>/raw``) for ``data_dir``.

    Users often point at the ``MNIST`` folder itself or at its ``raw`` folder; both
    name the same data, so accept them rather than download a second copy.
    """
    path = default_data_dir() if data_dir is None else Path(data_dir).expanduser()
    if path.name == "raw" and path.parent.name == folder:
        return path.parent.parent
    if path.name == folder:
        return path.parent
    return path


def _raw_dir(root: Path, dataset_cls: type[datasets.MNIST]) -> Path:
    return root / dataset_cls.__name__ / "raw"


def _unpacked_name(archive_name: str) -> str:
    return archive_name.removesuffix(".gz")


def _missing_raw_files(raw_dir: Path, dataset_cls: type[datasets.MNIST]) -> list[str]:
    # torchvision reads the unpacked files; the .gz archives only matter for download.
    return [
        _unpacked_name(name)
        for name, _md5 in dataset_cls.resources
        if not (raw_dir / _unpacked_name(name)).is_file()
    ]


# --------------------------------------------------------------------------- loading


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
        the class folder itself or its ``raw`` folder are accepted too. None means
        :func:`default_data_dir`. Ignored for ``digits``.
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
    _info(name)
    if name == "digits":
        return _load_digits()
    if name == "my-digits":
        from workbench.core.my_digits import MyDigits

        return MyDigits().arrays("mnist")
    train, test = _load_torchvision_splits(
        name,
        data_dir,
        download=download,
        progress=progress,
        cancel=cancel,
        mirrors=mirrors,
    )
    return ImageArrays(train.data, train.targets.long(), test.data, test.targets.long())


def _info(name: str) -> DatasetInfo:
    try:
        return DATASET_INFO[name]
    except KeyError:
        choices = ", ".join(DATASET_INFO)
        raise DataError(f"unknown dataset {name!r}; choose one of {choices}") from None


def _load_digits() -> ImageArrays:
    """sklearn's 8x8 digits, brought to MNIST's 28x28 layout, with a fixed split."""
    # sklearn takes about a second to import; only digits users pay for it.
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


def _load_torchvision_splits(
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
    dataset_cls = _TORCHVISION_CLASSES[name]
    root = _resolve_root(data_dir, dataset_cls.__name__)
    raw_dir = _raw_dir(root, dataset_cls)
    if _missing_raw_files(raw_dir, dataset_cls):
        # Archives already on disk (copied by hand) unpack without any network.
        _unpack_present_archives(raw_dir, dataset_cls)
    missing = _missing_raw_files(raw_dir, dataset_cls)
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
            f"cannot read {dataset_cls.__name__} from {_raw_dir(root, dataset_cls)}: "
            f"the files look damaged ({exc or type(exc).__name__}). Delete them and "
            "download again."
        ) from exc


# --------------------------------------------------------------------------- download


_FailureKind = Literal["offline", "interrupted", "http", "corrupted"]


class _MirrorFailed(Exception):
    """One mirror could not deliver one file.

    ``kind`` says why: ``"offline"`` no connection could be made, ``"interrupted"``
    the connection broke off mid-file, ``"http"`` the server refused the file,
    ``"corrupted"`` the bytes arrived but fail the MD5 check.
    """

    def __init__(self, url: str, reason: str, kind: _FailureKind) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason
        self.kind = kind


def download_dataset(
    name: str,
    root: str | Path,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
    mirrors: Sequence[str] | None = None,
) -> None:
    """Download and unpack a torchvision dataset's files into ``root/<Class>/raw/``.

    Uses the file names and MD5 sums of torchvision's own ``resources`` so the result
    is exactly what ``torchvision.datasets.<Class>(root, download=True)`` produces,
    but reports byte progress and can be cancelled. Files already present (unpacked,
    or a valid archive) are not downloaded again.

    Parameters
    ----------
    name : str
        ``"mnist"``, ``"fashion-mnist"`` or ``"kmnist"`` (``"digits"`` is a no-op).
    root : str or Path
        torchvision root folder (created when missing).
    progress : callable, optional
        Called with a :class:`DownloadProgress` when a file starts and per 64 KiB.
    cancel : callable, optional
        Polled per chunk; returning True stops with :class:`DownloadCancelled`.
    mirrors : sequence of str, optional
        Base URLs tried in order. Default: ``$PTCORE_DATA_MIRROR`` when set, else
        torchvision's mirrors. ``{folder}`` in a base URL becomes the torchvision
        folder name (``MNIST``, ``FashionMNIST``, ``KMNIST``), so one
        ``$PTCORE_DATA_MIRROR`` can serve every dataset.

    Raises
    ------
    DataError
        No network, no mirror has the file, or a download is corrupted.
    DownloadCancelled
        ``cancel()`` returned True; the partial file has been deleted.
    """
    info = _info(name)
    if info.offline:
        return
    dataset_cls = _TORCHVISION_CLASSES[name]
    raw_dir = _raw_dir(Path(root).expanduser(), dataset_cls)
    try:
        raw_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create data folder {raw_dir}: {exc}") from exc
    downloader = _Downloader(
        info,
        _mirror_bases(dataset_cls, mirrors),
        len(dataset_cls.resources),
        progress,
        cancel,
    )
    for index, (file_name, md5) in enumerate(dataset_cls.resources, start=1):
        if (raw_dir / _unpacked_name(file_name)).is_file():
            continue
        archive = raw_dir / file_name
        if not check_integrity(archive, md5):
            downloader.fetch(file_name, md5, index, archive)
        _unpack(archive)
    log.info("%s is ready in %s", info.title, raw_dir)


def _mirror_bases(
    dataset_cls: type[datasets.MNIST], mirrors: Sequence[str] | None
) -> list[str]:
    env_mirror = os.environ.get(MIRROR_ENV)
    if mirrors is not None:
        bases = list(mirrors)
    elif env_mirror:
        bases = [env_mirror]
    else:
        bases = list(dataset_cls.mirrors)
    # torchvision joins base and file name by plain concatenation.
    return [
        base.replace("{folder}", dataset_cls.__name__).rstrip("/") + "/"
        for base in bases
    ]


@dataclass(slots=True)
class _Downloader:
    """Fetches one dataset's archives, mirror by mirror, with progress and cancel."""

    info: DatasetInfo
    bases: list[str]
    file_count: int
    progress: ProgressCallback | None
    cancel: CancelCallback | None

    def fetch(self, file_name: str, md5: str, index: int, archive: Path) -> None:
        """Download ``file_name`` to ``archive``, verified; raise if no mirror can."""
        failures: list[_MirrorFailed] = []
        for base in self.bases:
            self._check_cancel()
            url = base + file_name
            log.info("downloading %s", url)
            try:
                self._download_verified(url, md5, archive, index)
                return
            except _MirrorFailed as failure:
                log.warning("download failed: %s", failure)
                failures.append(failure)
        raise DataError(_download_failed_message(self.info, archive, failures))

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel():
            raise DownloadCancelled(f"Download of {self.info.title} cancelled.")

    def _report(self, archive: Path, index: int, done: int, total: int | None) -> None:
        if self.progress is not None:
            self.progress(
                DownloadProgress(
                    self.info.name, archive.name, index, self.file_count, done, total
                )
            )

    def _download_verified(self, url: str, md5: str, archive: Path, index: int) -> None:
        """Stream ``url`` to a temp file next to ``archive``; move it there if valid."""
        fd, tmp_name = tempfile.mkstemp(
            dir=archive.parent, prefix=f".{archive.name}.", suffix=".part"
        )
        tmp_path = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                self._stream(url, out, tmp_path, archive, index)
            if not check_integrity(tmp_path, md5):
                raise _MirrorFailed(url, "MD5 checksum mismatch", "corrupted")
            os.replace(tmp_path, archive)
        finally:
            tmp_path.unlink(missing_ok=True)

    def _stream(
        self, url: str, out: BinaryIO, out_path: Path, archive: Path, index: int
    ) -> None:
        """Copy ``url`` to ``out`` in chunks, reporting progress, polling cancel."""
        done = 0
        total: int | None = None
        try:
            # torchvision's own User-Agent: some mirrors refuse Python's default.
            request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
            with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
                length = response.headers.get("Content-Length")
                total = int(length) if length and length.isdigit() else None
                self._report(archive, index, done, total)
                while chunk := response.read(_CHUNK_BYTES):
                    self._check_cancel()
                    _write_chunk(out, chunk, out_path)
                    done += len(chunk)
                    self._report(archive, index, done, total)
        except urllib.error.HTTPError as exc:
            exc.close()  # it holds the response's socket
            reason = f"HTTP {exc.code} {exc.reason}"
            raise _MirrorFailed(url, reason, "http") from exc
        except urllib.error.URLError as exc:
            raise _MirrorFailed(url, str(exc.reason), "offline") from exc
        except (OSError, http.client.HTTPException) as exc:
            # Timeouts and resets mid-transfer: the connection, not the server's data.
            reason = str(exc) or type(exc).__name__
            raise _MirrorFailed(url, reason, "interrupted") from exc
        if total is not None and done != total:
            reason = f"connection closed after {done} of {total} bytes"
            raise _MirrorFailed(url, reason, "interrupted")


def _write_chunk(out: BinaryIO, chunk: bytes, out_path: Path) -> None:
    # A DataError is not an OSError, so a full disk is not mistaken for the network.
    try:
        out.write(chunk)
    except OSError as exc:
        raise DataError(f"cannot write {out_path}: {exc}") from exc


def _download_failed_message(
    info: DatasetInfo, archive: Path, failures: list[_MirrorFailed]
) -> str:
    folder = archive.parent.parent.name
    alternatives = (
        " Alternatives: use the bundled offline dataset with `--dataset digits`, or "
        f"point `--data-dir` at a folder that holds {folder}/raw/ "
        "(copied from a machine with network)."
    )
    if not failures:
        return (
            f"Could not download {info.title}: no download mirror is configured."
            + alternatives
        )
    kinds = {f.kind for f in failures}
    if "corrupted" in kinds:
        url = next(f.url for f in failures if f.kind == "corrupted")
        return (
            f"Could not download {info.title}: {archive.name} from {url} was "
            "corrupted (its MD5 checksum does not match). Try again later."
            + alternatives
        )
    if kinds == {"offline"}:
        return (
            f"Could not download {info.title}: no network connection "
            f"({failures[-1].reason})." + alternatives
        )
    if kinds <= {"offline", "interrupted"}:
        return (
            f"Could not download {info.title}: the network connection broke off "
            f"({failures[-1].reason})." + alternatives
        )
    tried = "; ".join(str(f) for f in failures)
    return (
        f"Could not download {info.title}: no mirror could deliver {archive.name} "
        f"({tried})." + alternatives
    )


def _unpack_present_archives(raw_dir: Path, dataset_cls: type[datasets.MNIST]) -> None:
    for file_name, md5 in dataset_cls.resources:
        archive = raw_dir / file_name
        if not (raw_dir / _unpacked_name(file_name)).is_file() and check_integrity(
            archive, md5
        ):
            _unpack(archive)


def _unpack(archive: Path) -> None:
    """Unpack ``archive`` next to itself; a half-written file never gets its name."""
    target = archive.parent / _unpacked_name(archive.name)
    if target.is_file():
        return
    log.info("unpacking %s", archive)
    try:
        with tempfile.TemporaryDirectory(dir=archive.parent) as tmp:
            extract_archive(archive, tmp)
            for item in Path(tmp).iterdir():
                os.replace(item, archive.parent / item.name)
    except (OSError, EOFError, RuntimeError) as exc:
        raise DataError(f"cannot unpack {archive}: {exc}") from exc


# --------------------------------------------------------------------------- loaders


def _epoch_seed(seed: int, epoch: int) -> int:
    # torch's CPU generator (mt19937) keeps only the low 32 bits of a seed, so seed
    # and epoch are hashed into one 32-bit value instead of being packed side by side.
    return int(np.random.SeedSequence([seed, epoch]).generate_state(1)[0])


def _epoch_order(
    num_samples: int, *, shuffle: bool, seed: int, epoch: int
) -> torch.Tensor:
    """Sample indices of one epoch: a seeded permutation made on the CPU.

    Made on the CPU so the order is the same whatever device trains.
    """
    if not shuffle:
        return torch.arange(num_samples)
    generator = torch.Generator().manual_seed(_epoch_seed(seed, epoch))
    return torch.randperm(num_samples, generator=generator, device="cpu")


def _split_batches(order: torch.Tensor, batch_size: int) -> tuple[torch.Tensor, ...]:
    # Tensor.split turns an empty tensor into one empty piece, not into no pieces.
    return torch.split(order, batch_size) if len(order) else ()


def _can_pin(device: torch.device) -> bool:
    # Tensor.pin_memory() raises without a CUDA driver, and only helps CUDA copies.
    return device.type == "cuda" and torch.cuda.is_available()


def _check_start_batch(start_batch: int, num_batches: int) -> None:
    if not 0 <= start_batch <= num_batches:
        raise ValueError(f"start_batch {start_batch} is outside 0..{num_batches}")


class _EpochOrder:
    """The sample order of each epoch: a seeded permutation, or one restored.

    Both loaders draw epoch ``e`` in the order ``_epoch_order(seed, e)``. A
    checkpoint stores the order of the epoch it stopped in; :meth:`pin_order`
    makes a resumed loader use exactly that, even if the way orders are made
    ever changes between versions.
    """

    shuffle: bool
    seed: int
    epoch: int
    _pinned: tuple[int, torch.Tensor] | None = None

    @property
    def num_samples(self) -> int:
        raise NotImplementedError

    def set_epoch(self, epoch: int) -> None:
        """Select the order of the next iteration: epoch ``epoch`` of ``seed``."""
        self.epoch = epoch

    def epoch_order(self, epoch: int | None = None) -> torch.Tensor:
        """Sample indices of ``epoch`` (default: the current one), on the CPU."""
        epoch = self.epoch if epoch is None else epoch
        if self._pinned is not None and self._pinned[0] == epoch:
            return self._pinned[1]
        return _epoch_order(
            self.num_samples, shuffle=self.shuffle, seed=self.seed, epoch=epoch
        )

    def pin_order(self, epoch: int, order: torch.Tensor) -> None:
        """Draw epoch ``epoch`` in ``order`` (a permutation of all samples)."""
        order = torch.as_tensor(order, dtype=torch.int64).cpu()
        if order.shape != (self.num_samples,) or not torch.equal(
            order.sort().values, torch.arange(self.num_samples)
        ):
            raise ValueError(
                f"the stored sample order is not a permutation of "
                f"{self.num_samples} samples"
            )
        self._pinned = (epoch, order)


class FastLoader(_EpochOrder):
    """Batches sliced from one pre-normalised tensor; the default, fast path.

    The images are converted once to float32 ``(N, 1, H, W)`` as
    ``(x / 255 - mean) / std`` and kept on ``device`` when they fit (on CUDA: in at
    most half the free memory), else in host memory and copied per batch through
    pinned memory.

    Parameters
    ----------
    images : torch.Tensor
        uint8 ``(N, H, W)``.
    labels : torch.Tensor
        int64 ``(N,)``.
    batch_size : int
        Samples per batch; the last batch may be smaller.
    shuffle : bool
        Draw each epoch in a seeded random order; False keeps the natural order.
    seed : int
        With the epoch number, fixes the order (see :meth:`set_epoch`).
    device : torch.device or str
        Where batches are delivered.
    mean, std : float
        Normalisation constants on the 0..1 scale.
    data_on_device : bool, optional
        Force (True) or forbid (False) keeping the data on ``device``; None decides
        by free memory.
    """

    def __init__(
        self,
        images: torch.Tensor,
        labels: torch.Tensor,
        *,
        batch_size: int,
        shuffle: bool,
        seed: int,
        device: torch.device | str,
        mean: float,
        std: float,
        data_on_device: bool | None = None,
    ) -> None:
        if images.dim() != 3 or images.dtype != torch.uint8:
            raise ValueError("images must be a uint8 tensor of shape (N, H, W)")
        if labels.shape != images.shape[:1]:
            raise ValueError("labels must have one entry per image")
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.device = torch.device(device)
        self.epoch = 0
        nbytes = images.numel() * 4 + labels.numel() * 8
        if data_on_device is None:
            data_on_device = _fits_on_device(nbytes, self.device)
        storage = self.device if data_on_device else torch.device("cpu")
        self._images = _normalise(images.to(storage), mean, std)
        self._labels = labels.to(storage, torch.int64)
        self._pin = storage != self.device and _can_pin(self.device)
        log.debug("FastLoader: %d samples stored on %s", len(labels), storage)

    @property
    def num_samples(self) -> int:
        """Samples per epoch."""
        return int(self._labels.shape[0])

    @property
    def data_device(self) -> torch.device:
        """Where the normalised dataset lives (``device``, or CPU if it did not fit)."""
        return self._images.device

    def __len__(self) -> int:
        return math.ceil(self.num_samples / self.batch_size)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return self.iter_from(0)

    def iter_from(
        self, start_batch: int
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """Iterate the current epoch from batch ``start_batch`` on (exact resume).

        Parameters
        ----------
        start_batch : int
            0 to ``len(self)``; ``len(self)`` yields nothing.

        Returns
        -------
        iterator of (x, y)
            ``x`` float32 ``(B, 1, H, W)`` and ``y`` int64 ``(B,)`` on ``device``.
        """
        _check_start_batch(start_batch, len(self))
        order = self.epoch_order()
        order = order[start_batch * self.batch_size :].to(self.data_device)
        return self._batches(order)

    def _batches(
        self, order: torch.Tensor
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for index in _split_batches(order, self.batch_size):
            yield self._take(index)

    def _take(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if not self._pin:
            x = self._images.index_select(0, index)
            y = self._labels.index_select(0, index)
            return x.to(self.device), y.to(self.device)
        # Gather straight into pinned buffers so the copy to the GPU is async;
        # torch's caching host allocator keeps them alive until the copy is done.
        x = torch.empty(
            (len(index), *self._images.shape[1:]),
            dtype=self._images.dtype,
            pin_memory=True,
        )
        y = torch.empty(len(index), dtype=torch.int64, pin_memory=True)
        torch.index_select(self._images, 0, index, out=x)
        torch.index_select(self._labels, 0, index, out=y)
        return x.to(self.device, non_blocking=True), y.to(
            self.device, non_blocking=True
        )


def _fits_on_device(nbytes: int, device: torch.device) -> bool:
    if device.type != "cuda":
        return True
    free, _total = torch.cuda.mem_get_info(device)
    # Leave at least half the free memory to the model, activations and optimizer.
    return nbytes <= free // 2


def _normalise(images: torch.Tensor, mean: float, std: float) -> torch.Tensor:
    """uint8 (N, H, W) -> float32 (N, 1, H, W), ``(x / 255 - mean) / std``."""
    # Same operations, in the same order, as ToTensor + Normalize, so both loaders
    # deliver the same numbers.
    x = images.to(torch.float32).unsqueeze(1)
    return x.div_(255).sub_(mean).div_(std)


def _standard_transform(mean: float, std: float) -> transforms.Compose:
    return transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((mean,), (std,))]
    )


class ArrayDataset(Dataset[tuple[Any, int]]):
    """Per-sample dataset over uint8 image arrays, like torchvision's MNIST.

    Module-level and holding only numpy arrays and a transform, so it pickles to
    ``spawn`` workers.

    Parameters
    ----------
    images : numpy.ndarray
        uint8 ``(N, H, W)``.
    labels : numpy.ndarray
        Integer ``(N,)``.
    transform : callable, optional
        Applied to each PIL image.
    """

    def __init__(
        self,
        images: np.ndarray,
        labels: np.ndarray,
        transform: Callable[[Image.Image], Any] | None = None,
    ) -> None:
        self.images = images
        self.labels = labels
        self.transform = transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        # No mode="L": a 2-D uint8 array is "L" already, and Pillow 11.3-12 warns
        # about the argument.
        image: Any = Image.fromarray(self.images[index])
        if self.transform is not None:
            image = self.transform(image)
        return image, int(self.labels[index])


class _EpochBatchSampler(Sampler[list[int]]):
    """Index batches in the shared epoch order, from a chosen start batch.

    ``plan()`` fixes the batches before ``iter(DataLoader)``; ``__iter__`` returns a
    snapshot, so a later ``plan()`` cannot change an iteration already started.
    """

    def __init__(self, num_samples: int, batch_size: int) -> None:
        self.num_samples = num_samples
        self.batch_size = batch_size
        self._batches: list[list[int]] = []

    def plan(self, order: torch.Tensor) -> None:
        self._batches = [b.tolist() for b in _split_batches(order, self.batch_size)]

    def __len__(self) -> int:
        return len(self._batches)

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches)


class DataLoaderBatches(_EpochOrder):
    """A standard ``torch.utils.data.DataLoader``, with :class:`FastLoader`'s interface.

    Batches arrive already on ``device``. With ``num_workers > 0`` the workers are
    started with ``spawn`` and kept alive between epochs: forking a process that
    runs Qt threads can deadlock.

    Parameters
    ----------
    dataset : torch.utils.data.Dataset
        Map-style dataset of ``(tensor, label)`` samples.
    batch_size : int
        Samples per batch; the last batch may be smaller.
    shuffle : bool
        Seeded random order per epoch, the same as :class:`FastLoader`'s.
    seed : int
        With the epoch number, fixes the order.
    device : torch.device or str
        Where batches are delivered.
    num_workers : int
        Worker processes; 0 loads in the calling thread.
    pin_memory : bool
        Pin batches for async host-to-CUDA copies; ignored unless ``device`` is an
        available CUDA device.
    """

    def __init__(
        self,
        dataset: Dataset[Any],
        *,
        batch_size: int,
        shuffle: bool,
        seed: int,
        device: torch.device | str,
        num_workers: int = 0,
        pin_memory: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.device = torch.device(device)
        self.epoch = 0
        self.pin_memory = pin_memory and _can_pin(self.device)
        self._num_samples = len(dataset)  # type: ignore[arg-type]
        self._sampler = _EpochBatchSampler(self._num_samples, batch_size)
        workers = num_workers > 0
        self.loader: DataLoader[Any] = DataLoader(
            dataset,
            batch_sampler=self._sampler,
            num_workers=num_workers,
            pin_memory=self.pin_memory,
            multiprocessing_context="spawn" if workers else None,
            persistent_workers=workers,
            # Its own generator, so each iteration does not draw from (and shift)
            # the global RNG the model's initialisation and dropout use.
            generator=torch.Generator().manual_seed(seed),
        )

    @property
    def num_samples(self) -> int:
        """Samples per epoch."""
        return self._num_samples

    def __len__(self) -> int:
        return math.ceil(self._num_samples / self.batch_size)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return self.iter_from(0)

    def iter_from(
        self, start_batch: int
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """Iterate the current epoch from batch ``start_batch`` on.

        Skipped batches are dropped from the sampler, never loaded.

        Parameters
        ----------
        start_batch : int
            0 to ``len(self)``; ``len(self)`` yields nothing.

        Returns
        -------
        iterator of (x, y)
            Batches on ``device``.
        """
        _check_start_batch(start_batch, len(self))
        order = self.epoch_order()
        self._sampler.plan(order[start_batch * self.batch_size :])
        return self._to_device(iter(self.loader))

    def _to_device(
        self, batches: Iterator[tuple[torch.Tensor, torch.Tensor]]
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for x, y in batches:
            yield (
                x.to(self.device, non_blocking=self.pin_memory),
                y.to(self.device, non_blocking=self.pin_memory),
            )


@dataclass(frozen=True, slots=True)
class Loaders:
    """The train and validation loaders of one run.

    Attributes
    ----------
    train, val : FastLoader or DataLoaderBatches
        Training batches (shuffled) and test-split batches (natural order).
    info : DatasetInfo
        The dataset they read.
    notices : tuple of str
        Messages to show the user once, e.g. a setting that was switched off.
    val_images : torch.Tensor or None
        The validation images as stored, uint8 (N, H, W) in ``val``'s order: what
        the evaluation view shows for a confusion-matrix cell.
    """

    train: FastLoader | DataLoaderBatches
    val: FastLoader | DataLoaderBatches
    info: DatasetInfo
    notices: tuple[str, ...]
    val_images: torch.Tensor | None = None


def build_loaders(
    cfg: TrainConfig,
    device: torch.device | str,
    *,
    arrays: ImageArrays | None = None,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
) -> Loaders:
    """Load ``cfg.dataset`` and build the loaders ``cfg.loader`` asks for.

    Parameters
    ----------
    cfg : TrainConfig
        Uses dataset, data_dir, download, loader, batch_size, workers, pin_memory
        and seed.
    device : torch.device or str
        Where batches are delivered.
    arrays : ImageArrays, optional
        Already-loaded data; skips loading from disk. The ``"dataloader"`` kind then
        wraps them in :class:`ArrayDataset` (same pixels and transform as the
        torchvision dataset it otherwise reads).
    progress, cancel
        Passed to :func:`download_dataset` if files must be downloaded.

    Returns
    -------
    Loaders

    Raises
    ------
    DataError, DownloadCancelled
        As :func:`load_arrays`.
    """
    device = torch.device(device)
    info = _info(cfg.dataset)
    # Pixel statistics of the data the inputs are prepared like (my-digits: base).
    stats = _info(cfg.style_dataset)
    notices: list[str] = []
    pin_memory = cfg.pin_memory
    if pin_memory and not _can_pin(device):
        pin_memory = False
        notices.append(
            "pin_memory switched off: it only speeds up host-to-CUDA copies, "
            f"and this run uses {device}."
        )
    val_batch_size = max(cfg.batch_size, VAL_MIN_BATCH_SIZE)
    train: FastLoader | DataLoaderBatches
    val: FastLoader | DataLoaderBatches
    val_images: torch.Tensor | None
    if cfg.loader == "fast":
        if arrays is None:
            arrays = _load_for(cfg, progress, cancel)
        train, val = _fast_loaders(cfg, device, arrays, stats, val_batch_size)
        notices.extend(_fast_loader_notices(train, pin_memory))
        val_images = arrays.test_images
    else:
        train_set, val_set = _per_sample_datasets(cfg, stats, arrays, progress, cancel)
        options: dict[str, Any] = {
            "seed": cfg.seed,
            "device": device,
            "num_workers": cfg.workers,
            "pin_memory": pin_memory,
        }
        train = DataLoaderBatches(
            train_set, batch_size=cfg.batch_size, shuffle=True, **options
        )
        val = DataLoaderBatches(
            val_set, batch_size=val_batch_size, shuffle=False, **options
        )
        val_images = _stored_images(val_set)
    for notice in notices:
        log.info("%s", notice)
    return Loaders(
        train=train,
        val=val,
        info=info,
        notices=tuple(notices),
        val_images=val_images,
    )


def _stored_images(dataset: Dataset[Any]) -> torch.Tensor | None:
    """The uint8 images a per-sample dataset reads (torchvision's or ours)."""
    images = getattr(dataset, "data", None)  # torchvision MNIST family
    if images is None:
        images = getattr(dataset, "images", None)  # ArrayDataset
    if images is None:
        return None
    return torch.as_tensor(images)


def _load_for(
    cfg: TrainConfig,
    progress: ProgressCallback | None,
    cancel: CancelCallback | None,
) -> ImageArrays:
    return load_run_arrays(cfg, progress=progress, cancel=cancel)


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
    from workbench.core.my_digits import MyDigits

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


def _fast_loaders(
    cfg: TrainConfig,
    device: torch.device,
    arrays: ImageArrays,
    info: DatasetInfo,
    val_batch_size: int,
) -> tuple[FastLoader, FastLoader]:
    common: dict[str, Any] = {
        "seed": cfg.seed,
        "device": device,
        "mean": info.mean,
        "std": info.std,
    }
    train = FastLoader(
        arrays.train_images,
        arrays.train_labels,
        batch_size=cfg.batch_size,
        shuffle=True,
        **common,
    )
    val = FastLoader(
        arrays.test_images,
        arrays.test_labels,
        batch_size=val_batch_size,
        shuffle=False,
        **common,
    )
    return train, val


def _fast_loader_notices(train: FastLoader, pin_memory: bool) -> list[str]:
    if train.data_device.type != "cuda" and train.device.type == "cuda":
        return [
            "The dataset stays in host memory: it would take more than half of the "
            f"free memory on {train.device}. Each batch is copied over through "
            "pinned memory."
        ]
    if pin_memory:
        return [
            f"pin_memory has no effect here: the fast loader keeps the whole dataset "
            f"on {train.device}, so no batch is copied from the host."
        ]
    return []


def _per_sample_datasets(
    cfg: TrainConfig,
    info: DatasetInfo,
    arrays: ImageArrays | None,
    progress: ProgressCallback | None,
    cancel: CancelCallback | None,
) -> tuple[Dataset[Any], Dataset[Any]]:
    """The canonical per-sample pipeline: PIL image -> ToTensor -> Normalize."""
    transform = _standard_transform(info.mean, info.std)
    if arrays is None and cfg.dataset in _TORCHVISION_CLASSES:
        # The torchvision dataset object itself, as in the PyTorch tutorials.
        return _load_torchvision_splits(
            cfg.dataset,
            cfg.data_dir,
            download=cfg.download,
            progress=progress,
            cancel=cancel,
            transform=transform,
        )
    if arrays is None:
        arrays = _load_for(cfg, progress, cancel)
    return (
        ArrayDataset(
            arrays.train_images.numpy(), arrays.train_labels.numpy(), transform
        ),
        ArrayDataset(arrays.test_images.numpy(), arrays.test_labels.numpy(), transform),
    )
