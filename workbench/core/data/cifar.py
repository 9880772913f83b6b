"""CIFAR-10 from its official *binary* archive: layout, unpacking, reading.

torchvision's ``datasets.CIFAR10`` reads the *python* archive with ``pickle``,
which runs whatever code a tampered file holds. The binary version holds the
same images as plain records (one label byte, then 1024 red, 1024 green and
1024 blue bytes, each plane 32x32 row-major), so numpy reads it without ever
unpickling. Downloading lives in ``download.py``; this module needs no network.
"""

from __future__ import annotations

import logging
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import IO

import numpy as np
import torch

from workbench.core.data.registry import DataError, ImageArrays, default_data_dir

log = logging.getLogger(__name__)

ARCHIVE_NAME = "cifar-10-binary.tar.gz"
# Read at call time (``cifar.ARCHIVE_MD5``), so tests can serve a tiny archive.
ARCHIVE_MD5 = "c32a1d4ab5d03f1284b67883e8d87530"
MIRRORS = ("https://www.cs.toronto.edu/~kriz/",)
# What ``{folder}`` in a mirror URL becomes (torchvision's class name).
MIRROR_FOLDER = "CIFAR10"
FOLDER = "cifar-10-batches-bin"
TRAIN_FILES = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
TEST_FILES = ("test_batch.bin",)
BATCH_FILES = TRAIN_FILES + TEST_FILES
NUM_CLASSES = 10
CHANNELS, SIDE = 3, 32
RECORD_BYTES = 1 + CHANNELS * SIDE * SIDE  # 3073


def cifar_root(data_dir: str | Path | None) -> Path:
    """The folder that holds ``cifar-10-batches-bin/`` (and the archive).

    ``data_dir`` may also name ``cifar-10-batches-bin`` itself; None means
    :func:`default_data_dir`.
    """
    path = default_data_dir() if data_dir is None else Path(data_dir).expanduser()
    return path.parent if path.name == FOLDER else path


def missing_files(root: Path) -> list[str]:
    """The batch files not yet in ``root/cifar-10-batches-bin/``."""
    return [name for name in BATCH_FILES if not (root / FOLDER / name).is_file()]


def unpack_archive(archive: Path, root: Path) -> None:
    """Unpack the batch files of ``archive`` into ``root/cifar-10-batches-bin/``.

    Only the known batch files are copied out, and only as regular files (no
    link, no path of the archive's choosing); each is written under a temporary
    name first, so a half-written file never gets its name.

    Raises
    ------
    DataError
        The archive cannot be read or lacks a batch file.
    """
    target = root / FOLDER
    log.info("unpacking %s", archive)
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive, "r:gz") as tar:
            members = {
                m.name: m
                for m in tar.getmembers()
                if m.isfile() and m.name.startswith(f"{FOLDER}/")
            }
            absent = [n for n in BATCH_FILES if f"{FOLDER}/{n}" not in members]
            if absent:
                raise DataError(
                    f"{archive} is not the CIFAR-10 binary archive: it lacks "
                    f"{', '.join(absent)}. Delete it and download again."
                )
            for name in BATCH_FILES:
                source = tar.extractfile(members[f"{FOLDER}/{name}"])
                if source is None:  # only for non-files, excluded above
                    raise DataError(f"{archive}: cannot read {name}")
                _write_unpacked(source, target / name)
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise DataError(
            f"cannot unpack {archive}: {exc}. Delete it and download again."
        ) from exc


def _write_unpacked(source: IO[bytes], path: Path) -> None:
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(source, out)
        os.replace(tmp_name, path)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One batch file as uint8 images ``(N, 3, 32, 32)`` and int64 labels ``(N,)``.

    Raises
    ------
    DataError
        The file cannot be read, is empty, is not whole records, or holds a
        label outside 0..9.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read CIFAR-10 file {path}: {exc}") from exc
    if not raw or len(raw) % RECORD_BYTES:
        raise DataError(
            f"CIFAR-10 file {path} is damaged: {len(raw):,} bytes is not a whole "
            f"number of {RECORD_BYTES}-byte records (truncated?). Delete the "
            f"{FOLDER} folder and download again."
        )
    records = np.frombuffer(raw, dtype=np.uint8).reshape(-1, RECORD_BYTES)
    labels = records[:, 0].astype(np.int64)
    if labels.max() >= NUM_CLASSES:
        raise DataError(
            f"CIFAR-10 file {path} is not CIFAR-10 data: it holds label "
            f"{labels.max()} (0..{NUM_CLASSES - 1} expected)."
        )
    # A copy: the records view is read-only, and torch wants writable arrays.
    images = records[:, 1:].reshape(-1, CHANNELS, SIDE, SIDE).copy()
    return images, labels


def read_split(folder: Path, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The batch files ``names`` in ``folder``, concatenated in that order."""
    batches = [read_batch(folder / name) for name in names]
    images = np.concatenate([b[0] for b in batches])
    labels = np.concatenate([b[1] for b in batches])
    return images, labels


def read_arrays(root: Path) -> ImageArrays:
    """Train (``data_batch_1..5``) and test (``test_batch``) of ``root``.

    Raises
    ------
    DataError
        A batch file is missing or damaged; the message names it.
    """
    folder = root / FOLDER
    missing = missing_files(root)
    if missing:
        raise DataError(
            f"CIFAR-10 files are missing from {folder}: {', '.join(missing)}."
        )
    train_images, train_labels = read_split(folder, TRAIN_FILES)
    test_images, test_labels = read_split(folder, TEST_FILES)
    return ImageArrays(
        torch.from_numpy(train_images),
        torch.from_numpy(train_labels),
        torch.from_numpy(test_images),
        torch.from_numpy(test_labels),
    )
