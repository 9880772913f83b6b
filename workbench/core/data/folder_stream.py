"""An image folder read file by file: the path when its decoded images do not fit.

Like torchvision's ``ImageFolder`` (one file decoded per sample, in the
``DataLoader``'s workers), with our reader: any format Pillow reads, brought to
one size, files that do not decode left out before the run starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset

from workbench.core.data.folder import (
    CancelCheck,
    DataFingerprint,
    FolderListing,
    FolderProgress,
    check_splits,
    fingerprint_folder,
    folder_info,
    split_pairs,
)
from workbench.core.data.folder_images import (
    Cancelled,
    UnreadableImage,
    as_channels,
    read_many,
    read_square,
)
from workbench.core.data.registry import DataError, DatasetInfo, DownloadCancelled

# Training images decoded to estimate the pixel statistics.
STATS_SAMPLE = 512


class FolderDataset(Dataset[tuple[torch.Tensor, int]]):
    """Files decoded per access into normalised float32 (C, S, S) tensors.

    Holds only paths and numbers, so it pickles to ``spawn`` workers.
    """

    def __init__(
        self,
        pairs: list[tuple[Path, int]],
        size: int,
        info: DatasetInfo,
        augment: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        self.pairs = pairs
        self.size = size
        self.channels = info.channels
        self.info = info
        self.augment = augment

    def __len__(self) -> int:
        return len(self.pairs)

    def image(self, index: int) -> np.ndarray:
        """The uint8 (C, S, S) image ``index`` as stored on disk, brought to size."""
        path, _label = self.pairs[index]
        try:
            pixels = read_square(path, self.size).pixels
        except UnreadableImage as exc:  # it decoded when the run began
            raise DataError(f"{path} stopped being readable: {exc}") from None
        return as_channels(pixels, self.channels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        x = torch.from_numpy(np.ascontiguousarray(self.image(index)))
        x = x.to(torch.float32).div_(255)
        if self.augment is not None:
            x = self.augment(x)
        return self.info.normalise(x), self.pairs[index][1]


def readable_pairs(
    listing: FolderListing,
    pairs: list[tuple[Path, int]],
    size: int,
    progress: FolderProgress | None = None,
    cancel: CancelCheck | None = None,
) -> tuple[list[tuple[Path, int]], list[str], bool, dict[Path, str]]:
    """Pairs whose files decode, the skipped ones (with why), whether all are gray,
    and the content digests of the decoded files (for the data fingerprint)."""
    kept: list[tuple[Path, int]] = []
    skipped: list[str] = []
    digests: dict[Path, str] = {}
    gray = True
    results = read_many([path for path, _ in pairs], size, progress, cancel)
    try:
        for (path, label), result in zip(pairs, results, strict=True):
            if isinstance(result, UnreadableImage):
                skipped.append(f"{listing.relative(path)}: {result}")
            else:
                gray = result.is_gray and gray
                kept.append((path, label))
                digests[path] = result.digest
    except Cancelled:
        raise DownloadCancelled("reading the image folder was cancelled") from None
    return kept, skipped, gray, digests


@dataclass(frozen=True)
class StreamedFolder:
    """A folder read per batch: the readable (train, val) pairs and what they are."""

    train: list[tuple[Path, int]]
    val: list[tuple[Path, int]]
    info: DatasetInfo
    skipped: tuple[str, ...]  # files that do not decode, each with the reason
    fingerprint: DataFingerprint


def streamed_splits(
    listing: FolderListing,
    *,
    image_size: int,
    val_fraction: float,
    seed: int,
    progress: FolderProgress | None = None,
    cancel: CancelCheck | None = None,
) -> StreamedFolder:
    """Decode every file once: which are readable, gray or colour, their digests."""
    train, val = split_pairs(listing, val_fraction, seed)
    kept, skipped, gray, digests = readable_pairs(
        listing, train + val, image_size, progress, cancel
    )
    readable = set(kept)
    train = [p for p in train if p in readable]
    val = [p for p in val if p in readable]
    # The fast path's refusals: a class never trained on is no class of the model.
    check_splits(
        listing,
        torch.tensor([label for _path, label in train], dtype=torch.int64),
        torch.tensor([label for _path, label in val], dtype=torch.int64),
    )
    channels = 1 if gray else 3
    generator = torch.Generator().manual_seed(seed)
    sample = torch.randperm(len(train), generator=generator)[:STATS_SAMPLE].tolist()
    images = np.stack(
        [
            as_channels(read_square(train[i][0], image_size).pixels, channels)
            for i in sample
        ]
    )
    info = folder_info(listing, torch.from_numpy(images))
    fingerprint = fingerprint_folder(listing, cancel, known=digests)
    return StreamedFolder(train, val, info, tuple(skipped), fingerprint)
