"""``inspect``: what a checkpoint holds, and with ``--against-model`` how it fits."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.console import say
from workbench.core import config as C
from workbench.core.checkpoints.io import load_weights_file
from workbench.core.checkpoints.report import checkpoint_lines, diff_lines
from workbench.core.data.registry import DATASET_INFO
from workbench.core.models.builtins import build_model
from workbench.core.models.inputs import model_channels
from workbench.core.models.state_dict_match import compare_state


def cmd_inspect(args: argparse.Namespace) -> int:
    """Print a checkpoint's contents, and with --against-model how it fits."""
    path = Path(args.path).expanduser()
    state, payload = load_weights_file(path)
    for line in checkpoint_lines(path, state, payload):
        say(line)
    if args.against_model:
        classes = args.classes
        if classes is None:
            dataset = (payload or {}).get("config", {}).get("dataset")
            info = DATASET_INFO.get(dataset) if isinstance(dataset, str) else None
            classes = info.num_classes if info else 10
        if classes < 1:
            raise C.ConfigError("--classes: must be a whole number >= 1")
        side = 28 if model_channels(args.against_model, 1) == 1 else 224
        shape = (model_channels(args.against_model, 1), side, side)
        model = build_model(args.against_model, classes, seed=0, input_shape=shape)
        diff = compare_state(model, state)
        for line in diff_lines(diff, args.against_model, classes):
            say(line)
    return 0
