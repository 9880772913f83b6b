"""Fixtures shared by the core and UI tests: small, learnable, offline data."""

from __future__ import annotations

import os

import pytest
import torch

# Set before anything imports Qt; tests never need a real screen.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def make_arrays(n_train: int = 256, n_test: int = 128, seed: int = 0):
    """Ten classes of 28x28 images a small model learns in a few steps.

    Class ``c`` lights a 6x6 block at a class-specific place, plus noise.
    """
    from workbench.core.data import ImageArrays

    gen = torch.Generator().manual_seed(seed)

    def split(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        labels = torch.arange(n) % 10
        images = torch.randint(0, 40, (n, 28, 28), generator=gen, dtype=torch.int32)
        for c in range(10):
            row, col = 3 + 6 * (c // 4), 3 + 6 * (c % 4)
            images[labels == c, row : row + 6, col : col + 6] += 200
        return images.clamp(0, 255).to(torch.uint8), labels.long()

    train_x, train_y = split(n_train)
    test_x, test_y = split(n_test)
    return ImageArrays(train_x, train_y, test_x, test_y)


@pytest.fixture(scope="session")
def tiny_arrays():
    """Synthetic image arrays (256 train, 128 test), built once per session."""
    return make_arrays()
