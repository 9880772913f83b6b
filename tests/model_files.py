"""A user's model file for tests: its text and a hash worked out apart."""

from __future__ import annotations

import hashlib
from pathlib import Path

# ``{path}:Net`` once written to a ``.py`` file.
NET = """
from torch import nn


class Net(nn.Module):
    def __init__(self, num_classes, in_channels=1):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.LazyLinear(32), nn.ReLU())
        self.head = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.head(self.body(x))
"""


def sha_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, worked out here, not by the workbench."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
