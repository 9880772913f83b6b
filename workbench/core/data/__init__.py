"""Datasets and batch loaders: digits, the MNIST family, CIFAR-10, folders, my digits.

registry         which datasets exist, their statistics, the types data travels in
download         fetching the MNIST family and CIFAR-10 with progress and Cancel
cifar            CIFAR-10's binary archive: layout, unpacking, reading
sources          reading a dataset into memory (load_arrays, load_run_arrays)
cache            datasets already in memory, shared by previews and runs
describe         what a run's inputs look like before any image is decoded
my_digits        the user's own drawings, stored as PNGs with a JSON index
preprocess       recipes that turn a picture of a digit into a 28x28 field
folder           a folder of the user's labelled images as a dataset
folder_check     checking an image folder before training on it
folder_images    reading one image file into a uint8 square, whatever its format
folder_loading   an image folder's loaders: decoded in memory, or per batch
folder_stream    an image folder read file by file, when it does not fit
augment          crops, flips, rotations and colour jitter, batched
loaders          the fast in-memory loader and the textbook DataLoader path
loader_set       a run's train and validation loaders, with what to tell the user
build            the loaders a run's config asks for (build_loaders)
balanced_sampler the training split's class counts; every class equally likely
fixes            relabels and exclusions kept in a named overlay, never in the files
"""

__all__ = [
    "augment",
    "balanced_sampler",
    "build",
    "cache",
    "cifar",
    "describe",
    "download",
    "fixes",
    "folder",
    "folder_check",
    "folder_images",
    "folder_loading",
    "folder_stream",
    "loader_set",
    "loaders",
    "my_digits",
    "preprocess",
    "registry",
    "sources",
]
