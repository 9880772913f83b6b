"""Datasets and batch loaders: the offline digits set, the MNIST family, my digits.

- ``registry``: which datasets exist, their statistics, the types data travels in;
- ``download``: fetching the MNIST family with progress, Cancel and mirrors;
- ``sources``: reading a dataset into memory (``load_arrays``, ``load_run_arrays``);
- ``my_digits``: the user's own drawings, stored as PNGs with a JSON index;
- ``loaders``: the fast in-memory loader and the textbook ``DataLoader`` path;
- ``build``: the loaders a run's config asks for (``build_loaders``).

The names most callers need are re-exported here.
"""

from workbench.core.data.build import Loaders, build_loaders
from workbench.core.data.download import MIRROR_ENV, download_dataset
from workbench.core.data.loaders import ArrayDataset, DataLoaderBatches, FastLoader
from workbench.core.data.registry import (
    DATA_DIR_ENV,
    DATASET_INFO,
    DataError,
    DataMissing,
    DatasetInfo,
    DownloadCancelled,
    DownloadProgress,
    ImageArrays,
    default_data_dir,
)
from workbench.core.data.sources import (
    load_arrays,
    load_base_arrays,
    load_run_arrays,
    mix_replay,
)

__all__ = [
    "DATASET_INFO",
    "DATA_DIR_ENV",
    "MIRROR_ENV",
    "ArrayDataset",
    "DataError",
    "DataLoaderBatches",
    "DataMissing",
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
