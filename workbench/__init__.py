"""ptcore-workbench: see and steer PyTorch training runs."""

__version__ = "0.1.0"
