"""Datasets already in memory, shared by the window's preview and the runs.

Loading MNIST from disk takes a second or two; a run, the data preview and an
opened checkpoint all want the same arrays. The cache is read and filled from
the GUI thread and from the thread that prepares a run, so it takes a lock.
"""

from __future__ import annotations

import threading

from workbench.core.data.registry import ImageArrays

# Two datasets in memory: the one shown and the one before (MNIST is ~50 MB).
DEFAULT_SIZE = 2


def cache_key(dataset: str, data_dir: str | None) -> tuple[str, str]:
    """What identifies loaded data: bundled digits and my drawings ignore the folder."""
    folderless = dataset in ("digits", "my-digits")
    return (dataset, "" if folderless else (data_dir or ""))


class ArraysCache:
    """The last few loaded datasets, oldest dropped first; thread-safe."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._items: dict[tuple[str, str], ImageArrays] = {}
        self._lock = threading.Lock()

    def get(self, dataset: str, data_dir: str | None) -> ImageArrays | None:
        """The arrays of ``dataset`` from ``data_dir``, if loaded."""
        with self._lock:
            return self._items.get(cache_key(dataset, data_dir))

    def put(self, dataset: str, data_dir: str | None, arrays: ImageArrays) -> None:
        """Keep ``arrays``; the oldest entry goes when the cache is full."""
        key = cache_key(dataset, data_dir)
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = arrays
            while len(self._items) > self._size:
                self._items.pop(next(iter(self._items)))

    def forget(self, dataset: str) -> None:
        """Drop every entry of ``dataset`` (its files changed)."""
        with self._lock:
            for key in [k for k in self._items if k[0] == dataset]:
                del self._items[key]

    def __contains__(self, key: tuple[str, str | None]) -> bool:
        with self._lock:
            return cache_key(*key) in self._items
