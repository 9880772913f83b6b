"""The command line's model commands: ``models`` lists them, ``summary`` sizes one."""

from __future__ import annotations

import argparse

from workbench.cli.console import say
from workbench.core.models.catalog import grouped_models
from workbench.core.models.inputs import model_channels
from workbench.core.models.summary import summarize_named


def cmd_summary(args: argparse.Namespace) -> int:
    """Print the model's layer table and totals for one input size."""
    channels = args.channels
    if channels is None:  # what the model takes: 3 for torchvision models
        channels = model_channels(args.model, 1)
    shape = (channels, args.image_size, args.image_size)
    summary = summarize_named(args.model, shape, args.classes, args.batch_size)
    for line in summary.lines():
        say(line)
    return 0


def cmd_models(_: argparse.Namespace) -> int:
    """List the models by family, and how to name one of your own."""
    for family, names in grouped_models():
        say(f"{family}: {', '.join(names)}")
    say("Your own: --model path/to/file.py:Name (runs the code in that file)")
    return 0
