"""A folder of the user's labelled images as a dataset.

The layout is torchvision's ``ImageFolder``: ``DIR/<class>/<image>``, or
``DIR/train/<class>/`` beside ``DIR/val/`` (or ``DIR/test/``). Without such a
split, a seeded, stratified share of each class is held out for validation.

Loading decodes every image once into one uint8 tensor (when it fits
:data:`MEMORY_BUDGET_BYTES`) and keeps that tensor on disk keyed by the data's
fingerprint (every file's path and content hash), so the next run on the same
files starts without decoding. Files that do not decode are skipped and listed.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.core.atomic_files import torch_save, write_atomically
from workbench.core.data.folder_check import IMAGE_SUFFIXES, split_folders
from workbench.core.data.folder_images import (
    Cancelled,
    UnreadableImage,
    as_channels,
    file_digest,
    read_many,
)
from workbench.core.data.registry import (
    DataError,
    DatasetInfo,
    DownloadCancelled,
    DownloadProgress,
    ImageArrays,
    default_data_dir,
)

log = logging.getLogger(__name__)

# Decoded images kept in memory at most (uint8 bytes); beyond it a run reads
# files per batch through a DataLoader. $PTCORE_MEMORY_BUDGET_MB overrides it.
MEMORY_BUDGET_BYTES = 2 * 1024**3
MEMORY_BUDGET_ENV = "PTCORE_MEMORY_BUDGET_MB"
CACHE_FOLDER = "folder-cache"
CACHE_VERSION = 2  # 2: the payload carries a digest of its content
CACHES_KEPT = 4

FolderProgress = Callable[[int, int], None]  # (images done, images in all)
CancelCheck = Callable[[], bool]


def images_progress(
    progress: Callable[[DownloadProgress], None] | None, name: str
) -> FolderProgress | None:
    """Decoding progress reported as the downloads' progress type (in images)."""
    if progress is None:
        return None

    def report(done: int, total: int) -> None:
        progress(DownloadProgress(name, name, 1, 1, done, total, unit="images"))

    return report


def memory_budget() -> int:
    """Bytes of decoded images a run may keep in memory."""
    override = os.environ.get(MEMORY_BUDGET_ENV)
    if override:
        try:
            return int(float(override) * 1024**2)
        except ValueError:
            log.warning("ignoring %s=%r: not a number", MEMORY_BUDGET_ENV, override)
    return MEMORY_BUDGET_BYTES


@dataclass(frozen=True)
class FolderListing:
    """The image files of a folder dataset, by split, before anything is decoded.

    ``files[split]`` holds ``(path, label)`` pairs, class by class, sorted;
    ``split`` is ``"train"`` and ``"val"``, or ``"all"`` when the folder has no split.
    """

    root: Path
    classes: tuple[str, ...]
    files: dict[str, list[tuple[Path, int]]]
    ignored: tuple[Path, ...] = ()

    @property
    def count(self) -> int:
        return sum(len(pairs) for pairs in self.files.values())

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def class_folders(splits: dict[str, Path]) -> list[str]:
    """The classes of a folder dataset: the names of its splits' sub-folders."""
    return sorted(
        {p.name for folder in splits.values() for p in folder.iterdir() if p.is_dir()}
    )


def scan_folder(root: str | Path) -> FolderListing:
    """List a folder dataset's images; :class:`DataError` when it cannot train."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise DataError(f"no such folder: {root} (give a folder of class folders)")
    splits = split_folders(root)
    classes = class_folders(splits)
    if not classes:
        raise DataError(
            f"{root} has no class folders: put the images in {root}/<class>/<image>"
        )
    if len(classes) < 2:
        raise DataError(
            f"{root} has one class ({classes[0]}): a classifier needs at least two"
        )
    files: dict[str, list[tuple[Path, int]]] = {}
    ignored: list[Path] = []
    for split, folder in splits.items():
        pairs = files.setdefault(split, [])
        for label, name in enumerate(classes):
            class_dir = folder / name
            if not class_dir.is_dir():
                continue
            for path in sorted(p for p in class_dir.rglob("*") if p.is_file()):
                if path.suffix.lower() in IMAGE_SUFFIXES:
                    pairs.append((path, label))
                else:
                    ignored.append(path)
    return FolderListing(root, tuple(classes), files, tuple(ignored))


def decoded_bytes(listing: FolderListing, image_size: int) -> int:
    """The most memory the decoded images take (colour, uint8)."""
    return listing.count * 3 * image_size * image_size


def over_budget(listing: FolderListing, image_size: int) -> str | None:
    """Why the decoded images would not fit the memory budget; None when they do."""
    needed, budget = decoded_bytes(listing, image_size), memory_budget()
    if needed <= budget:
        return None
    return (
        f"{listing.count:,} images at {image_size}x{image_size} take up to "
        f"{needed / 1024**2:,.0f} MB decoded, over the {budget / 1024**2:,.0f} MB "
        "memory budget"
    )


@dataclass(frozen=True)
class DataFingerprint:
    """What a run's data was: every file's path (relative) and content hash."""

    files: dict[str, str] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """One SHA-256 over the sorted ``path<TAB>hash`` lines."""
        lines = "".join(f"{p}\t{h}\n" for p, h in sorted(self.files.items()))
        return hashlib.sha256(lines.encode("utf-8")).hexdigest()

    def difference(self, now: DataFingerprint, shown: int = 3) -> str | None:
        """How the data changed from this fingerprint to ``now``; None if it did not."""
        added = sorted(now.files.keys() - self.files.keys())
        removed = sorted(self.files.keys() - now.files.keys())
        changed = sorted(
            p
            for p in self.files.keys() & now.files.keys()
            if self.files[p] != now.files[p]
        )
        parts = [
            _some(
                f"{len(paths)} file{'s' if len(paths) != 1 else ''} {verb}",
                paths,
                shown,
            )
            for verb, paths in (
                ("added", added),
                ("removed", removed),
                ("changed", changed),
            )
            if paths
        ]
        return "; ".join(parts) or None

    def to_dict(self) -> dict[str, Any]:
        return {"digest": self.digest, "files": dict(sorted(self.files.items()))}

    @classmethod
    def from_dict(cls, data: Any) -> DataFingerprint | None:
        """The stored fingerprint, or None when ``data`` is not one."""
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, dict):
            return None
        return cls({str(k): str(v) for k, v in files.items()})


def _some(head: str, paths: list[str], shown: int) -> str:
    more = f", and {len(paths) - shown} more" if len(paths) > shown else ""
    return f"{head} ({', '.join(paths[:shown])}{more})"


def fingerprint_folder(
    listing: FolderListing,
    cancel: CancelCheck | None = None,
    known: Mapping[Path, str] | None = None,
) -> DataFingerprint:
    """Hash every listed file's contents (reading is far cheaper than decoding).

    ``known``: digests already taken while decoding; those files are not read again.
    """
    known = known or {}
    files = {}
    for pairs in listing.files.values():
        for path, _label in pairs:
            if path in known:
                files[listing.relative(path)] = known[path]
                continue
            if cancel is not None and cancel():
                raise DownloadCancelled("reading the image folder was cancelled")
            try:
                files[listing.relative(path)] = file_digest(path.read_bytes())
            except OSError as exc:
                files[listing.relative(path)] = f"unreadable: {exc.strerror or exc}"
    return DataFingerprint(files)


def split_pairs(
    listing: FolderListing, val_fraction: float, seed: int
) -> tuple[list[tuple[Path, int]], list[tuple[Path, int]]]:
    """(train, val) file pairs: the folder's own split, or a seeded stratified one."""
    if "all" not in listing.files:
        return list(listing.files["train"]), list(listing.files["val"])
    generator = torch.Generator().manual_seed(seed)
    train: list[tuple[Path, int]] = []
    val: list[tuple[Path, int]] = []
    for label in range(len(listing.classes)):
        pairs = [pair for pair in listing.files["all"] if pair[1] == label]
        held = round(val_fraction * len(pairs))
        if len(pairs) >= 2:  # each class in both splits when it can be
            held = min(max(held, 1), len(pairs) - 1)
        order = torch.randperm(len(pairs), generator=generator).tolist()
        chosen = set(order[:held])
        for index, pair in enumerate(pairs):
            (val if index in chosen else train).append(pair)
    return train, val


@dataclass(frozen=True)
class FolderData:
    """A loaded folder dataset.

    Attributes
    ----------
    arrays : ImageArrays
        uint8 images ``(N, C, S, S)``; ``test_*`` is the validation split.
    info : DatasetInfo
        Class names from the folder names, per-channel statistics of the
        training images, ``image_shape`` ``(C, S, S)``.
    skipped : tuple of str
        Files (relative to the folder) that did not decode, with the reason.
    fingerprint : DataFingerprint
    from_cache : bool
        True when the decoded images came from the disk cache.
    cache_note : str
        What went wrong with the disk cache ("" when nothing did): a cache that
        failed its check and was rebuilt, or one that could not be written.
    """

    arrays: ImageArrays
    info: DatasetInfo
    skipped: tuple[str, ...]
    fingerprint: DataFingerprint
    from_cache: bool = False
    cache_note: str = ""


def load_folder(
    root: str | Path,
    *,
    image_size: int,
    val_fraction: float = 0.2,
    seed: int = 0,
    progress: FolderProgress | None = None,
    cancel: CancelCheck | None = None,
    cache_dir: Path | None = None,
) -> FolderData:
    """Decode a folder dataset into memory (or read it from the disk cache).

    Raises
    ------
    DataError
        The folder cannot train: missing, no classes, one class, a class or a
        split without one readable image, or more images than the memory budget.
    DownloadCancelled
        ``cancel()`` returned True.
    """
    listing = scan_folder(root)
    over = over_budget(listing, image_size)
    if over:
        raise DataError(over)
    fingerprint = fingerprint_folder(listing, cancel)
    cache_dir = default_data_dir() / CACHE_FOLDER if cache_dir is None else cache_dir
    cache = cache_dir / f"{_cache_key(fingerprint, image_size, val_fraction, seed)}.pt"
    cached, damage = _read_cache(cache, fingerprint)
    if cached is not None:
        return cached
    train_pairs, val_pairs = split_pairs(listing, val_fraction, seed)
    decoded, skipped = _decode_all(
        listing, train_pairs + val_pairs, image_size, progress, cancel
    )
    channels = 1 if all(d.ndim == 2 for d in decoded.values()) else 3
    train_x, train_y = _stack(train_pairs, decoded, channels, image_size)
    val_x, val_y = _stack(val_pairs, decoded, channels, image_size)
    check_splits(listing, train_y, val_y)
    arrays = ImageArrays(train_x, train_y, val_x, val_y)
    info = folder_info(listing, arrays.train_images)
    data = FolderData(arrays, info, tuple(skipped), fingerprint)
    failure = _write_cache(cache, data)
    notes = [n for n in (damage, failure) if n]
    return dataclasses.replace(data, cache_note="; ".join(notes)) if notes else data


def _decode_all(
    listing: FolderListing,
    pairs: list[tuple[Path, int]],
    size: int,
    progress: FolderProgress | None,
    cancel: CancelCheck | None,
) -> tuple[dict[Path, np.ndarray], list[str]]:
    decoded: dict[Path, np.ndarray] = {}
    skipped: list[str] = []
    paths = [path for path, _label in pairs]
    try:
        for path, result in zip(
            paths, read_many(paths, size, progress, cancel), strict=True
        ):
            if isinstance(result, UnreadableImage):
                skipped.append(f"{listing.relative(path)}: {result}")
            else:
                decoded[path] = result.pixels
    except Cancelled:
        raise DownloadCancelled("reading the image folder was cancelled") from None
    if skipped:
        log.info("skipped %d unreadable files in %s", len(skipped), listing.root)
    return decoded, skipped


def _stack(
    pairs: list[tuple[Path, int]],
    decoded: dict[Path, np.ndarray],
    channels: int,
    size: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    kept = [(path, label) for path, label in pairs if path in decoded]
    images = np.zeros((len(kept), channels, size, size), dtype=np.uint8)
    for index, (path, _label) in enumerate(kept):
        images[index] = as_channels(decoded[path], channels)
    labels = torch.tensor([label for _path, label in kept], dtype=torch.int64)
    return torch.from_numpy(images), labels


def check_splits(
    listing: FolderListing, train_y: torch.Tensor, val_y: torch.Tensor
) -> None:
    """:class:`DataError` unless every class has a training image and some
    image is left for validation (labels of the readable images)."""
    counts = torch.bincount(train_y, minlength=len(listing.classes))
    empty = [listing.classes[i] for i, n in enumerate(counts.tolist()) if n == 0]
    if empty:
        raise DataError(
            f"no readable training images for class {', '.join(empty)} in "
            f"{listing.root}: add some or remove the folder"
        )
    if len(val_y) == 0:
        raise DataError(
            f"{listing.root} leaves no readable images for validation: add images "
            "or a val/ folder"
        )


def folder_info(listing: FolderListing, train_images: torch.Tensor) -> DatasetInfo:
    """Class names, shape and per-channel statistics of uint8 (N, C, S, S) images.

    ``train_images``: all training images, or a sample of them.
    """
    mean, std = channel_stats(train_images)
    channels, height, width = train_images.shape[1:]
    return DatasetInfo(
        name="folder",
        title=f"Image folder {listing.root.name}",
        num_classes=len(listing.classes),
        class_names=listing.classes,
        mean=mean,
        std=std,
        offline=True,
        image_shape=(channels, height, width),
    )


def channel_stats(images: torch.Tensor) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-channel mean and population std of uint8 (N, C, H, W) images, 0..1 scale."""
    sums = torch.zeros(images.shape[1], dtype=torch.float64)
    squares = torch.zeros_like(sums)
    for chunk in torch.split(images, 256):
        # float32 within a chunk (at most 256 x 512 x 512 values a channel),
        # float64 across chunks.
        x = chunk.to(torch.float32).div_(255)
        sums += x.sum(dim=(0, 2, 3), dtype=torch.float64)
        squares += x.square_().sum(dim=(0, 2, 3), dtype=torch.float64)
    count = images.shape[0] * images.shape[2] * images.shape[3]
    mean = sums / max(count, 1)
    std = (squares / max(count, 1) - mean.square()).clamp_min(1e-12).sqrt()
    # A flat channel (one colour everywhere) would divide by zero.
    std = torch.where(std < 1e-3, torch.ones_like(std), std)
    return (
        tuple(round(v, 6) for v in mean.tolist()),
        tuple(round(v, 6) for v in std.tolist()),
    )


# ---------------------------------------------------------------- the disk cache


def _cache_key(
    fingerprint: DataFingerprint, size: int, val_fraction: float, seed: int
) -> str:
    text = f"v{CACHE_VERSION}|{fingerprint.digest}|{size}|{val_fraction!r}|{seed}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


_PAYLOAD_TENSORS = ("train_images", "train_labels", "test_images", "test_labels")


def _content_digest(payload: Mapping[str, Any]) -> str:
    """SHA-256 of the cached tensors' bytes, shapes and dtypes, info and skips."""
    digest = hashlib.sha256()
    for key in _PAYLOAD_TENSORS:
        tensor = payload[key].contiguous()
        digest.update(f"{key}|{tuple(tensor.shape)}|{tensor.dtype}|".encode())
        digest.update(tensor.numpy())
    rest = json.dumps([payload["info"], payload["skipped"]], sort_keys=True)
    digest.update(rest.encode("utf-8"))
    return digest.hexdigest()


def _read_cache(
    path: Path, fingerprint: DataFingerprint
) -> tuple[FolderData | None, str]:
    """The cached data, or None and why the cache was not used ("" when absent)."""
    try:
        stored = torch.load(path, map_location="cpu", weights_only=True)
        if stored.get("digest") != _content_digest(stored):
            raise ValueError("its content does not match its digest")
        arrays = ImageArrays(*(stored[k] for k in _PAYLOAD_TENSORS))
        info = DatasetInfo.from_dict(stored["info"])
        skipped = tuple(str(s) for s in stored["skipped"])
    except FileNotFoundError:
        return None, ""
    except Exception as exc:  # a damaged cache costs a decode, never the run
        log.warning("ignoring the decoded-image cache %s: %s", path, exc)
        return None, f"the decoded-image cache was damaged ({exc}): decoded again"
    path.touch()  # pruning keeps the most recently used caches
    return FolderData(arrays, info, skipped, fingerprint, from_cache=True), ""


def _write_cache(path: Path, data: FolderData) -> str:
    """Cache ``data``; "" or why it is not cached (the run goes on either way)."""
    payload: dict[str, Any] = {
        "train_images": data.arrays.train_images,
        "train_labels": data.arrays.train_labels,
        "test_images": data.arrays.test_images,
        "test_labels": data.arrays.test_labels,
        "info": data.info.to_dict(),
        "skipped": list(data.skipped),
    }
    payload["digest"] = _content_digest(payload)
    try:
        write_atomically(path, lambda handle: torch_save(payload, handle))
    except OSError as exc:  # a full or read-only disk costs the next run a decode
        log.warning("decoded images not cached in %s: %s", path, exc)
        reason = "the disk is full" if exc.errno == errno.ENOSPC else exc.strerror
        return (
            f"decoded images not cached in {path.parent} ({reason or exc}): "
            "the next run decodes them again"
        )
    _prune(path.parent)
    return ""


def _prune(folder: Path) -> None:
    """Keep the newest :data:`CACHES_KEPT` caches."""
    caches = sorted(folder.glob("*.pt"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in caches[CACHES_KEPT:]:
        old.unlink(missing_ok=True)
