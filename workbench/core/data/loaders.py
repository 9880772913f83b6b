"""Batch loaders: the fast in-memory path and the textbook DataLoader path.

Both share one interface (``set_epoch``, ``len``, ``iter``, ``iter_from``) and draw
epoch ``e`` in the same seeded order, so switching loader does not change what the
model sees.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset, Sampler

from workbench.core.data.augment import BatchAugment, batch_generator

if TYPE_CHECKING:
    from torchvision import transforms

log = logging.getLogger(__name__)


def _epoch_seed(seed: int, epoch: int) -> int:
    # torch's CPU generator (mt19937) keeps only the low 32 bits of a seed, so seed
    # and epoch are hashed into one 32-bit value instead of being packed side by side.
    return int(np.random.SeedSequence([seed, epoch]).generate_state(1)[0])


def _epoch_order(
    num_samples: int,
    *,
    shuffle: bool,
    seed: int,
    epoch: int,
    weights: torch.Tensor | None = None,
) -> torch.Tensor:
    """Sample indices of one epoch: a seeded permutation made on the CPU.

    Made on the CPU so the order is the same whatever device trains. With
    ``weights`` (one per sample), ``num_samples`` draws with replacement, each
    sample as likely as its weight (the balanced sampler).
    """
    if not shuffle:
        return torch.arange(num_samples)
    generator = torch.Generator().manual_seed(_epoch_seed(seed, epoch))
    if weights is not None:
        return torch.multinomial(
            weights, num_samples, replacement=True, generator=generator
        )
    return torch.randperm(num_samples, generator=generator, device="cpu")


def split_batches(order: torch.Tensor, batch_size: int) -> tuple[torch.Tensor, ...]:
    """An epoch's order cut into batches, as every loader cuts it."""
    # Tensor.split turns an empty tensor into one empty piece, not into no pieces.
    return torch.split(order, batch_size) if len(order) else ()


def shard_batches(
    batches: tuple[torch.Tensor, ...], rank: int, world: int
) -> tuple[torch.Tensor, ...]:
    """Rank ``rank``'s contiguous chunk of each global batch (all of it for one).

    The global batches are one process's, so the ranks together train on exactly
    what one process would; an uneven last batch splits e.g. 29 into 15 + 14.
    """
    if world == 1:
        return batches
    return tuple(
        batch[slice(*shard_rows(len(batch), rank, world))] for batch in batches
    )


def shard_rows(batch_size: int, rank: int, world: int) -> tuple[int, int]:
    """(start, stop) of rank ``rank``'s chunk of a batch, as ``tensor_split`` cuts."""
    size, extra = divmod(batch_size, world)
    start = rank * size + min(rank, extra)
    return start, start + size + (rank < extra)


def can_pin(device: torch.device) -> bool:
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
    batch_size: int
    _pinned: tuple[int, torch.Tensor] | None = None
    # (rank, world size): which chunk of each global batch this process trains.
    shard: tuple[int, int] = (0, 1)
    # One weight per sample: each epoch is drawn with replacement by them
    # (``balanced_sampler.balance``); None: a permutation.
    sample_weights: torch.Tensor | None = None
    # Wraps each copy to the device; the engine's step clock times it there.
    copying: Callable[[], AbstractContextManager[object]] = nullcontext

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
            self.num_samples,
            shuffle=self.shuffle,
            seed=self.seed,
            epoch=epoch,
            weights=self.sample_weights,
        )

    def cut(self, order: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``order`` cut into global batches, then into this process's shard."""
        return shard_batches(split_batches(order, self.batch_size), *self.shard)

    def pin_order(self, epoch: int, order: torch.Tensor) -> None:
        """Draw epoch ``epoch`` in ``order`` (a permutation of all samples).

        With ``sample_weights``: as many draws as samples, each an index of one.
        """
        order = torch.as_tensor(order, dtype=torch.int64).cpu()
        n = self.num_samples
        if self.sample_weights is not None:
            fits = order.shape == (n,) and (
                n == 0 or bool(order.min() >= 0 and order.max() < n)
            )
            kind = "a draw from"
        else:
            fits = order.shape == (n,) and torch.equal(
                order.sort().values, torch.arange(n)
            )
            kind = "a permutation of"
        if not fits:
            raise ValueError(f"the stored sample order is not {kind} {n} samples")
        self._pinned = (epoch, order)


class FastLoader(_EpochOrder):
    """Batches sliced from one uint8 tensor; the default, fast path.

    The images stay uint8 ``(N, C, H, W)`` on ``device`` when they fit (on CUDA: in
    at most half the free memory), else in host memory and copied per batch
    through pinned memory (a quarter of float32's bytes either way). Each batch is
    normalised on ``device`` as ``(x / 255 - mean) / std``.

    Parameters
    ----------
    images : torch.Tensor
        uint8 ``(N, H, W)`` (one channel) or ``(N, C, H, W)``.
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
    mean, std : float or sequence of float
        Normalisation constants on the 0..1 scale, one per channel.
    data_on_device : bool, optional
        Force (True) or forbid (False) keeping the data on ``device``; None decides
        by free memory.
    augment : BatchAugment, optional
        Random changes to each image of every batch, made on ``device`` with the
        generator of ``(seed, epoch, batch index)``: reproducible, and the same
        after a mid-epoch resume. None (for validation) delivers the data as is.
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
        mean: float | Sequence[float],
        std: float | Sequence[float],
        data_on_device: bool | None = None,
        augment: BatchAugment | None = None,
    ) -> None:
        if images.dim() not in (3, 4) or images.dtype != torch.uint8:
            raise ValueError(
                "images must be a uint8 tensor of shape (N, H, W) or (N, C, H, W)"
            )
        if labels.shape != images.shape[:1]:
            raise ValueError("labels must have one entry per image")
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.device = torch.device(device)
        self.epoch = 0
        self.augment = augment if augment else None
        nbytes = images.numel() + labels.numel() * 8
        if data_on_device is None:
            data_on_device = _fits_on_device(nbytes, self.device)
        storage = self.device if data_on_device else torch.device("cpu")
        # Kept as uint8 (a quarter of float32's memory) and normalised per batch
        # on the device, with the operations _normalise uses: the same numbers.
        self._images = images.to(storage)
        if self._images.dim() == 3:
            self._images = self._images.unsqueeze(1)
        self._mean = _per_channel(mean).to(self.device)
        self._std = _per_channel(std).to(self.device)
        # Gray images for a 3-channel model are repeated per batch (_normalise).
        self._rgb = self._images.shape[1] == 1 and len(self._mean) == 3
        channels = 3 if self._rgb else self._images.shape[1]
        if len(self._mean) not in (1, channels) or len(self._std) != len(self._mean):
            raise ValueError("mean and std need one value, or one per channel")
        if self.augment is not None and len(self.augment.mean) not in (
            1,
            channels,
        ):
            raise ValueError("augment's statistics do not match the images' channels")
        self._labels = labels.to(storage, torch.int64)
        self._pin = storage != self.device and can_pin(self.device)
        log.debug("FastLoader: %d samples stored on %s", len(labels), storage)

    @property
    def num_samples(self) -> int:
        """Samples per epoch."""
        return int(self._labels.shape[0])

    @property
    def labels(self) -> torch.Tensor:
        """Every sample's label, int64 on the CPU, in index order."""
        return self._labels.cpu()

    @property
    def data_device(self) -> torch.device:
        """Where the uint8 dataset lives (``device``, or CPU if it did not fit)."""
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
            ``x`` float32 ``(B, C, H, W)`` and ``y`` int64 ``(B,)`` on ``device``.
        """
        _check_start_batch(start_batch, len(self))
        order = self.epoch_order()
        order = order[start_batch * self.batch_size :].to(self.data_device)
        return self._batches(order, self.epoch, start_batch)

    def _batches(
        self, order: torch.Tensor, epoch: int, start_batch: int
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        batches = self.cut(order)  # this process's shard of each batch
        rank, world = self.shard
        for batch, index in enumerate(batches, start=start_batch):
            x, y = self._take(index)
            x = x.to(torch.float32)
            if self._rgb:
                x = x.expand(-1, 3, -1, -1).contiguous()
            x = x.div_(255).sub_(self._mean).div_(self._std)
            if self.augment is not None:
                # Seeded by the batch's place in the epoch, not by how many
                # batches this iterator has made: a resume redraws the same.
                rows = None
                if world > 1:  # this rank's rows of the global batch
                    whole = min(
                        self.batch_size, self.num_samples - batch * self.batch_size
                    )
                    rows = (shard_rows(whole, rank, world)[0], whole)
                x = self.augment(x, batch_generator(self.seed, epoch, batch), rows)
            yield x, y

    def _take(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if not self._pin:
            x = self._images.index_select(0, index)
            y = self._labels.index_select(0, index)
            if self.data_device == self.device:
                return x, y
            with self.copying():
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
        with self.copying():
            return x.to(self.device, non_blocking=True), y.to(
                self.device, non_blocking=True
            )


def _fits_on_device(nbytes: int, device: torch.device) -> bool:
    if device.type != "cuda":
        return True
    free, _total = torch.cuda.mem_get_info(device)
    # Leave at least half the free memory to the model, activations and optimizer.
    return nbytes <= free // 2


def _per_channel(value: float | Sequence[float]) -> torch.Tensor:
    values = [value] if isinstance(value, int | float) else list(value)
    return torch.tensor(values, dtype=torch.float32).view(-1, 1, 1)


def _normalise(
    images: torch.Tensor, mean: float | Sequence[float], std: float | Sequence[float]
) -> torch.Tensor:
    """uint8 (N, H, W) or (N, C, H, W) -> float32 (N, C, H, W), ``(x/255-mean)/std``."""
    # Same operations, in the same order, as ToTensor + Normalize, so both loaders
    # deliver the same numbers.
    x = images.to(torch.float32)
    if x.dim() == 3:
        x = x.unsqueeze(1)
    mean_t = _per_channel(mean).to(x.device)
    std_t = _per_channel(std).to(x.device)
    if x.shape[1] == 1 and mean_t.numel() == 3:
        # Gray data for a 3-channel model (torchvision's): repeat the channel.
        x = x.expand(-1, 3, -1, -1).contiguous()
    return x.div_(255).sub_(mean_t).div_(std_t)


def standard_transform(
    mean: float | Sequence[float],
    std: float | Sequence[float],
    augment: Sequence[Callable[[Any], Any]] = (),
    *,
    to_rgb: bool = False,
) -> transforms.Compose:
    """PIL image -> normalised float tensor, after the ``augment`` steps if any.

    ``to_rgb`` repeats a gray image to three channels (a torchvision model).

    ``augment`` is what ``augment.augment_transform(choices, size)`` makes: the
    per-sample path's augmentation, whose randomness is torchvision's (each
    worker's global RNG), not the fast path's seeded per-batch generator.
    """
    from torchvision import transforms  # 1.5 s import: the DataLoader path only

    means = (mean,) if isinstance(mean, int | float) else tuple(mean)
    stds = (std,) if isinstance(std, int | float) else tuple(std)
    rgb = [transforms.Grayscale(num_output_channels=3)] if to_rgb else []
    return transforms.Compose(
        [*augment, *rgb, transforms.ToTensor(), transforms.Normalize(means, stds)]
    )


class ArrayDataset(Dataset[tuple[Any, int]]):
    """Per-sample dataset over uint8 image arrays, like torchvision's MNIST.

    Module-level and holding only numpy arrays and a transform, so it pickles to
    ``spawn`` workers.

    Parameters
    ----------
    images : numpy.ndarray
        uint8 ``(N, H, W)``, or ``(N, C, H, W)`` with 1 or 3 channels.
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
        pixels = self.images[index]
        if pixels.ndim == 3:  # (C, H, W) -> what Pillow reads: (H, W) or (H, W, 3)
            pixels = pixels[0] if pixels.shape[0] == 1 else pixels.transpose(1, 2, 0)
        image: Any = Image.fromarray(np.ascontiguousarray(pixels))
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

    def plan(self, batches: Sequence[torch.Tensor]) -> None:
        self._batches = [b.tolist() for b in batches]

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
        self.pin_memory = pin_memory and can_pin(self.device)
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

    def release_workers(self) -> None:
        """Stop the worker processes now; the next epoch starts them again.

        ``persistent_workers`` keeps them (hundreds of MB each) between epochs,
        also after the run stops. ``DataLoader`` has no public call for this:
        shut its iterator down as deleting the loader would.
        """
        iterator = getattr(self.loader, "_iterator", None)
        if iterator is not None and hasattr(iterator, "_shutdown_workers"):
            iterator._shutdown_workers()
            self.loader._iterator = None

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
        # The same shard of the same global batches as FastLoader. Not
        # DistributedSampler: it draws its own permutation (seed + epoch) and pads
        # the epoch with repeated samples, so one process's order is not kept.
        self._sampler.plan(self.cut(order[start_batch * self.batch_size :]))
        return self._to_device(iter(self.loader))

    def _to_device(
        self, batches: Iterator[tuple[torch.Tensor, torch.Tensor]]
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for x, y in batches:
            with self.copying():
                x = x.to(self.device, non_blocking=self.pin_memory)
                y = y.to(self.device, non_blocking=self.pin_memory)
            yield x, y
