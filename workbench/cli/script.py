"""The command line's ``script``: a config or checkpoint as a plain PyTorch script."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.console import say
from workbench.core.atomic_files import write_atomically
from workbench.core.checkpoints.io import config_of, load_checkpoint
from workbench.core.config import load_config
from workbench.core.script.writer import ScriptError, write_script

CONFIG_SUFFIXES = (".json", ".toml")


def add_script_parser(sub: argparse._SubParsersAction) -> None:
    """``script CONFIG_OR_CHECKPOINT [-o run.py]``."""
    script = sub.add_parser(
        "script",
        help="write the experiment of a config or checkpoint as one plain PyTorch "
        "script (no workbench import) that repeats the run",
    )
    script.add_argument(
        "source",
        metavar="CONFIG_OR_CHECKPOINT",
        help="a config file (.json, .toml) or a checkpoint (.pt)",
    )
    script.add_argument(
        "-o", "--out", metavar="FILE", help="write the script here (default: print it)"
    )


def cmd_script(args: argparse.Namespace) -> int:
    """0 with the script written; errors are ConfigError/CheckpointError (exit 2)."""
    source = Path(args.source)
    from_checkpoint = source.suffix.lower() not in CONFIG_SUFFIXES
    if from_checkpoint:
        cfg = config_of(load_checkpoint(source))
    else:
        cfg = load_config(source)
    text = write_script(cfg, source=source.name, from_checkpoint=from_checkpoint)
    if not args.out:
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    try:
        write_atomically(out, lambda handle: handle.write(text.encode("utf-8")))
    except OSError as exc:
        raise ScriptError(
            f"{out}: {exc.strerror or exc}", lead="cannot write the script to "
        ) from exc
    say(
        f"wrote {out}: python {out.name} repeats the run ({cfg.model} on {cfg.dataset})"
    )
    return 0
