"""``fixes NAME``: relabel, exclude or keep images in a named overlay; undo; show.

The user's files are never touched: the overlay is a file of the user's data
folder, and ``train --fixes NAME`` trains with it. Images are named as
``data-issues`` names them: a file's path in an image folder, ``train #12`` in
a built-in dataset. ``--from-csv`` takes the rows of a ``data-issues --csv``
file that are label issues and relabels them to the suggestion or excludes them.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from workbench.cli.console import say
from workbench.core import config as C
from workbench.core.data.fixes import Fix, Overlay, classes_of, image_key
from workbench.core.data.registry import FOLDER

LABEL_ISSUE = "label issue"  # the list data-issues writes in its CSV


def add_fixes_parser(sub: argparse._SubParsersAction) -> None:
    """``fixes NAME --dataset ... [--relabel FILE=LABEL] [--exclude FILE] ...``."""
    parser = sub.add_parser(
        "fixes",
        help="relabel, exclude or keep images in a named overlay (the files are "
        "never changed); train --fixes NAME uses it",
    )
    parser.add_argument("name", metavar="NAME", help="the overlay's name")
    parser.add_argument("--dataset", choices=C.DATASETS, default="digits")
    parser.add_argument("--data-dir", help="the image folder (--dataset folder)")
    parser.add_argument(
        "--relabel", nargs="+", default=[], metavar="FILE=LABEL", help="new labels"
    )
    parser.add_argument("--exclude", nargs="+", default=[], metavar="FILE")
    parser.add_argument(
        "--keep",
        nargs="+",
        default=[],
        metavar="FILE",
        help="looked at and right as labelled (it takes back an earlier fix)",
    )
    parser.add_argument(
        "--from-csv",
        metavar="FILE",
        help="the label issues of a data-issues --csv file: relabelled to the "
        "suggestion (or excluded, with --exclude-listed)",
    )
    parser.add_argument("--exclude-listed", action="store_true")
    parser.add_argument("--undo", type=int, default=0, metavar="N", help="undo N fixes")


def cmd_fixes(args: argparse.Namespace) -> int:
    """Change the overlay as asked (saved whole or not at all), then list it."""
    cfg = C.TrainConfig(dataset=args.dataset, data_dir=args.data_dir)
    overlay = Overlay.open(args.name, cfg)
    names = classes_of(cfg)
    for _ in range(args.undo):
        undone = overlay.undo()
        if undone is None:
            break
        say(f"undone: {undone.action} {undone.file}")
    new: list[Fix] = []
    for item in args.relabel:
        file, _, label = item.rpartition("=")
        new.append(_fix(cfg, file, "relabel", _label(label, names)))
    new += [_fix(cfg, file, "exclude") for file in args.exclude]
    new += [_fix(cfg, file, "keep") for file in args.keep]
    if args.from_csv:
        new += _from_csv(cfg, Path(args.from_csv), args.exclude_listed, names)
    for fix in new:
        overlay.add(fix)
    if new or args.undo:
        try:
            path = overlay.save()
        except OSError as exc:
            raise C.ConfigError(
                f"cannot save fixes {args.name!r}: {exc.strerror or exc}; the "
                "overlay was left as it was"
            ) from None
        say(f"saved {path}")
    effect = overlay.in_effect()
    counts = {
        a: sum(f.action == a for f in effect.values())
        for a in ("relabel", "exclude", "keep")
    }
    say(
        f"fixes {args.name!r}: {counts['relabel']} relabelled, {counts['exclude']} "
        f"excluded, {counts['keep']} kept as labelled ({len(overlay.fixes)} in all)"
    )
    return 0


def _label(label: str, names: tuple[str, ...]) -> str:
    if label not in names:
        raise C.ConfigError(f"--relabel: {label!r} is no class ({', '.join(names)})")
    return label


def _fix(cfg: C.TrainConfig, file: str, action: str, label: str = "") -> Fix:
    """A fix of ``file``: an image folder's file by its content, else ``train #i``."""
    if cfg.dataset != FOLDER:
        split, _, index = file.partition(" #")
        if split not in ("train", "val") or not index.isdigit():
            raise C.ConfigError(
                f"{file!r}: name a {cfg.dataset} image as data-issues does, "
                "e.g. 'train #12' or 'val #3'"
            )
    try:
        key = image_key(cfg, file)
    except OSError as exc:
        raise C.ConfigError(f"{file}: cannot read it: {exc.strerror or exc}") from None
    return Fix(key, file, action, label)


def _from_csv(
    cfg: C.TrainConfig, path: Path, exclude: bool, names: tuple[str, ...]
) -> list[Fix]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = [r for r in csv.DictReader(handle) if r.get("list") == LABEL_ISSUE]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise C.ConfigError(f"--from-csv: cannot read {path}: {exc}") from None
    if exclude:
        return [_fix(cfg, row["file"], "exclude") for row in rows]
    return [
        _fix(cfg, row["file"], "relabel", _label(row["suggested"], names))
        for row in rows
    ]
