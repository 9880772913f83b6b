"""Tiny, valid MNIST-format (IDX) files for tests: no network, no real MNIST.

The images are learnable: each class lights a bright 5x5 block at its own place
on a dim noisy background, so a small model reaches high accuracy in a few steps.
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np

# torchvision's folder (class name) for each dataset name of workbench.core.config.
TORCHVISION_FOLDERS = {
    "mnist": "MNIST",
    "fashion-mnist": "FashionMNIST",
    "kmnist": "KMNIST",
}

SIDE = 28
NUM_CLASSES = 10
_BLOCK = 5


def mnist_like_arrays(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` uint8 images (n, 28, 28) and balanced int labels (n,), deterministic."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % NUM_CLASSES).astype(np.uint8)
    images = rng.integers(0, 40, size=(n, SIDE, SIDE), dtype=np.uint8)
    for index, label in enumerate(labels):
        # Classes sit on a 2 x 5 grid of blocks.
        top = 5 + (label // 5) * 12
        left = 2 + (label % 5) * 5
        images[index, top : top + _BLOCK, left : left + _BLOCK] = 255
    return images, labels


def idx_bytes(array: np.ndarray) -> bytes:
    """Encode a uint8 array of 1 or 3 dimensions as an IDX file (big-endian dims)."""
    if array.dtype != np.uint8:
        raise ValueError("IDX test files hold uint8 data")
    # Magic: two zero bytes, type code 0x08 (unsigned byte), number of dimensions.
    header = bytes([0, 0, 0x08, array.ndim])
    dims = struct.pack(f">{array.ndim}I", *array.shape)
    return header + dims + np.ascontiguousarray(array).tobytes()


def raw_files(n_train: int = 64, n_test: int = 32, seed: int = 0) -> dict[str, bytes]:
    """The four unpacked files of torchvision's MNIST layout, by file name."""
    train_images, train_labels = mnist_like_arrays(n_train, seed)
    test_images, test_labels = mnist_like_arrays(n_test, seed + 1)
    return {
        "train-images-idx3-ubyte": idx_bytes(train_images),
        "train-labels-idx1-ubyte": idx_bytes(train_labels),
        "t10k-images-idx3-ubyte": idx_bytes(test_images),
        "t10k-labels-idx1-ubyte": idx_bytes(test_labels),
    }


def gzipped_raw_files(
    n_train: int = 64, n_test: int = 32, seed: int = 0
) -> dict[str, bytes]:
    """The four ``.gz`` archives a mirror serves, by file name (byte-reproducible)."""
    return {
        f"{name}.gz": gzip.compress(data, mtime=0)
        for name, data in raw_files(n_train, n_test, seed).items()
    }


def write_mnist_raw(
    root: str | Path,
    name: str = "mnist",
    n_train: int = 64,
    n_test: int = 32,
    seed: int = 0,
    *,
    formats: tuple[str, ...] = ("raw",),
) -> None:
    """Write tiny IDX files to ``root/<Folder>/raw/`` as torchvision lays them out.

    Parameters
    ----------
    root : str or Path
        The torchvision root (what ``load_arrays(name, root)`` is given).
    name : str
        ``"mnist"``, ``"fashion-mnist"`` or ``"kmnist"``; picks the folder.
    n_train, n_test : int
        Images per split.
    seed : int
        Fixes pixels and label order.
    formats : tuple of str
        ``"raw"`` writes the unpacked files, ``"gz"`` the ``.gz`` archives; both
        may be given.
    """
    raw_dir = Path(root) / TORCHVISION_FOLDERS[name] / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    if "raw" in formats:
        for file_name, data in raw_files(n_train, n_test, seed).items():
            (raw_dir / file_name).write_bytes(data)
    if "gz" in formats:
        for file_name, data in gzipped_raw_files(n_train, n_test, seed).items():
            (raw_dir / file_name).write_bytes(data)
