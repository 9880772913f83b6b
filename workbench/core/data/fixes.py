"""Fixes to a dataset that never touch its files: a named overlay, and applying it.

An overlay is a list of fixes the user made (relabel an image, exclude it, or
keep it: looked at and found right), in the order made, so the last can be
undone. It is a JSON file of the user's data folder,
``<fixes>/<dataset>/<NAME>.json``, never beside or inside the user's images.
Images are named by content for an image folder (the SHA-256 of the file, so a
renamed or moved file keeps its fixes) and by split and index for a built-in
dataset (``train #123``).

A run reads an overlay into its config (``fixes``: the relabels and
exclusions in effect), so Reproduce repeats the same fixes without the file and
a run from before them still reproduces. Applying is strict: a fix whose image
is gone, or a label the dataset does not have, stops the run with a message
instead of training on something else than the user asked for.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs
import torch

from workbench.core.atomic_files import write_atomically
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.folder_check import DataReport, check_folder
from workbench.core.data.registry import FOLDER, DataError, ImageArrays, dataset_info

if TYPE_CHECKING:
    from workbench.core.data.folder import FolderListing

FIXES_ENV = "PTCORE_FIXES_DIR"
ACTIONS = ("relabel", "exclude", "keep")
FORMAT = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def fixes_dir() -> Path:
    """``$PTCORE_FIXES_DIR``, else ``<user data>/ptcore-workbench/fixes``."""
    override = os.environ.get(FIXES_ENV)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_data_path("ptcore-workbench") / "fixes"


def dataset_of(cfg: TrainConfig) -> dict[str, str | None]:
    """Which dataset an overlay is for: its name, and an image folder's path."""
    folder = str(Path(cfg.data_dir).expanduser().resolve()) if cfg.data_dir else None
    return {
        "dataset": cfg.dataset,
        "data_dir": folder if cfg.dataset == FOLDER else None,
    }


def _dataset_folder(dataset: dict[str, str | None]) -> str:
    if dataset["data_dir"] is None:
        return str(dataset["dataset"])
    path = str(dataset["data_dir"])
    digest = hashlib.sha256(path.encode("utf-8")).hexdigest()[:10]
    return f"folder-{Path(path).name or 'root'}-{digest}"


@dataclass(frozen=True, slots=True)
class Fix:
    """One fix: ``key`` names the image, ``file`` says it for people."""

    key: str
    file: str
    action: str
    label: str = ""  # the new label (relabel only)


@dataclass
class Overlay:
    """A named list of fixes for one dataset, kept in the user's data folder."""

    name: str
    dataset: dict[str, str | None]
    fixes: list[Fix] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return fixes_dir() / _dataset_folder(self.dataset) / f"{self.name}.json"

    @classmethod
    def open(cls, name: str, cfg: TrainConfig, *, must_exist: bool = False) -> Overlay:
        """The overlay ``name`` of ``cfg``'s dataset (empty when never saved).

        Raises
        ------
        ConfigError
            A name that cannot be a file name, a file that is damaged or made
            for another dataset, or none saved when ``must_exist``: one line,
            the file left as it is.
        """
        if not _NAME.match(name):
            raise ConfigError(
                f"fixes {name!r}: a name is letters, digits, '.', '_' or '-' "
                "(at most 64)"
            )
        overlay = cls(name, dataset_of(cfg))
        path = overlay.path
        if not path.exists():
            if must_exist:
                raise ConfigError(
                    f"fixes {name!r}: none saved for {_said(overlay.dataset)} "
                    f"(looked for {path}); make them with the fixes command"
                )
            return overlay
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            fixes = [_fix(entry) for entry in data["fixes"]]
            stored = {"dataset": data["dataset"], "data_dir": data["data_dir"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"fixes {name!r}: {path} is damaged ({_why(exc)}); it was left as "
                "it is and nothing was applied"
            ) from None
        if stored != overlay.dataset:
            raise ConfigError(
                f"fixes {name!r} were made for {_said(stored)}, not "
                f"{_said(overlay.dataset)}"
            )
        overlay.fixes = fixes
        return overlay

    def add(self, fix: Fix) -> None:
        if fix.action not in ACTIONS:
            raise ConfigError(f"a fix is {', '.join(ACTIONS)}, not {fix.action!r}")
        self.fixes.append(fix)

    def undo(self) -> Fix | None:
        """Take the last fix back (None when there is none)."""
        return self.fixes.pop() if self.fixes else None

    def in_effect(self) -> dict[str, Fix]:
        """Each image's latest fix, by key."""
        return {fix.key: fix for fix in self.fixes}

    def config_entries(self) -> tuple[tuple[str, str, str], ...]:
        """The relabels and exclusions in effect, for a run's config."""
        return tuple(
            (fix.key, fix.action, fix.label)
            for key, fix in sorted(self.in_effect().items())
            if fix.action != "keep"
        )

    def save(self) -> Path:
        """Write the overlay (whole or not at all); OSError when it cannot."""
        document: dict[str, Any] = {
            "format": FORMAT,
            **self.dataset,
            "fixes": [
                {"key": f.key, "file": f.file, "action": f.action, "label": f.label}
                for f in self.fixes
            ],
        }
        text = json.dumps(document, indent=1) + "\n"
        return write_atomically(self.path, lambda handle: handle.write(text.encode()))


def _fix(entry: Any) -> Fix:
    fix = Fix(
        str(entry["key"]),
        str(entry["file"]),
        str(entry["action"]),
        str(entry.get("label") or ""),
    )
    if fix.action not in ACTIONS or (fix.action == "relabel") != bool(fix.label):
        raise ValueError(f"not a fix: {entry!r:.60}")
    return fix


def _why(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r}"
    return str(exc).split("\n")[0][:80]


def _said(dataset: dict[str, Any]) -> str:
    folder = dataset.get("data_dir")
    return f"the image folder {folder}" if folder else f"{dataset.get('dataset')}"


def classes_of(cfg: TrainConfig) -> tuple[str, ...]:
    """The class names of ``cfg``'s data: the dataset's, or an image folder's."""
    if cfg.dataset != FOLDER:
        return dataset_info(cfg.dataset).class_names
    from workbench.core.data.folder import scan_folder

    assert cfg.data_dir is not None  # validated by TrainConfig
    return scan_folder(cfg.data_dir).classes


def image_key(cfg: TrainConfig, name: str) -> str:
    """The key a fix of image ``name`` (as data-issues names it) is kept under.

    An image folder's file by the SHA-256 of its content; a built-in dataset's
    image by its name (``train #12``). OSError when the file cannot be read.
    """
    if cfg.dataset != FOLDER:
        return name
    from workbench.core.data.folder_images import file_digest

    assert cfg.data_dir is not None  # validated by TrainConfig
    return file_digest((Path(cfg.data_dir).expanduser() / name).read_bytes())


# ------------------------------------------------------------------ applying


def kept_rows(keys: Sequence[str], cfg: TrainConfig) -> list[int]:
    """The rows of ``keys`` (one split) that ``cfg``'s fixes do not exclude."""
    excluded = {key for key, action, _label in cfg.fixes if action == "exclude"}
    return [row for row, key in enumerate(keys) if key not in excluded]


def folder_names(
    cfg: TrainConfig, listing: FolderListing, skipped: Sequence[str]
) -> tuple[list[str], list[str]]:
    """An image folder's files (relative paths), in its loaders' row order.

    ``listing``: the folder as scanned; ``skipped``: the files that did not
    decode (``"path: why"``).
    """
    from workbench.core.data.folder import split_pairs

    unreadable = {entry.split(": ", 1)[0] for entry in skipped}
    train, val = (
        [
            name
            for name in (listing.relative(path) for path, _label in pairs)
            if name not in unreadable
        ]
        for pairs in split_pairs(listing, cfg.val_fraction, cfg.seed)
    )
    return train, val


def folder_keys(
    cfg: TrainConfig,
    listing: FolderListing,
    skipped: Sequence[str],
    files: dict[str, str],
) -> tuple[list[str], list[str]]:
    """An image folder's image keys (content hashes), in its loaders' row order.

    ``files``: the data fingerprint's path -> content hash.
    """
    train, val = folder_names(cfg, listing, skipped)
    return [files[name] for name in train], [files[name] for name in val]


def builtin_keys(arrays: ImageArrays) -> tuple[list[str], list[str]]:
    """A built-in dataset's image keys: ``train #i`` and ``val #i``."""
    return (
        [f"train #{i}" for i in range(len(arrays.train_labels))],
        [f"val #{i}" for i in range(len(arrays.test_labels))],
    )


def apply_fixes(
    arrays: ImageArrays,
    keys: tuple[Sequence[str], Sequence[str]],
    cfg: TrainConfig,
    class_names: Sequence[str],
) -> ImageArrays:
    """``arrays`` with ``cfg.fixes`` applied: relabelled, excluded images gone.

    ``keys``: each training and validation image's key, in row order.

    Raises
    ------
    DataError
        A fix names an image that is not there (moved away, deleted, changed)
        or a label the dataset does not have: nothing is applied.
    """
    if not cfg.fixes:
        return arrays
    # A key names an image by its content: every byte-identical copy of it,
    # in either split, takes its fix (as apply_to_pairs does per batch).
    found: dict[str, list[tuple[str, int]]] = {}
    for split, split_keys in (("train", keys[0]), ("val", keys[1])):
        for row, key in enumerate(split_keys):
            found.setdefault(key, []).append((split, row))
    _check(cfg, found, class_names)
    kept = {
        "train": torch.ones(len(keys[0]), dtype=torch.bool),
        "val": torch.ones(len(keys[1]), dtype=torch.bool),
    }
    labels = {"train": arrays.train_labels.clone(), "val": arrays.test_labels.clone()}
    for key, action, label in cfg.fixes:
        for split, row in found[key]:
            if action == "exclude":
                kept[split][row] = False
            elif action == "relabel":
                labels[split][row] = list(class_names).index(label)
    return ImageArrays(
        arrays.train_images[kept["train"]],
        labels["train"][kept["train"]],
        arrays.test_images[kept["val"]],
        labels["val"][kept["val"]],
    )


def apply_to_pairs(
    pairs: list[tuple[Path, int]],
    keys: Sequence[str],
    cfg: TrainConfig,
    class_names: Sequence[str],
) -> list[tuple[Path, int]]:
    """``(path, label)`` pairs of one split with the fixes that name them applied.

    The per-batch twin of :func:`apply_fixes` (its fixes of other images are
    the other split's; :func:`check_fixes_found` checks both at once).
    """
    fixes = {key: (action, label) for key, action, label in cfg.fixes}
    kept = []
    for (path, label), key in zip(pairs, keys, strict=True):
        action, new = fixes.get(key, ("", ""))
        if action == "exclude":
            continue
        kept.append(
            (path, list(class_names).index(new) if action == "relabel" else label)
        )
    return kept


def check_fixes_found(
    cfg: TrainConfig, keys: Sequence[str], class_names: Sequence[str]
) -> None:
    """:class:`DataError` unless every fix names one of ``keys`` and a class."""
    _check(cfg, dict.fromkeys(keys, ("", 0)), class_names)


def _recorded_files(cfg: TrainConfig) -> dict[str, str]:
    """Each fix's image as its overlay recorded the file (a key says nothing)."""
    if not cfg.fixes_name:
        return {}
    try:
        return {fix.key: fix.file for fix in Overlay.open(cfg.fixes_name, cfg).fixes}
    except ConfigError:  # damaged or gone since: the keys, then
        return {}


def _check(cfg: TrainConfig, found: dict[str, Any], class_names: Sequence[str]) -> None:
    gone = [key for key, _action, _label in cfg.fixes if key not in found]
    name = f"fixes {cfg.fixes_name!r}" if cfg.fixes_name else "the run's fixes"
    if gone:
        files = _recorded_files(cfg)
        shown = ", ".join(files.get(key, key) for key in gone[:3]) + (
            f" and {len(gone) - 3} more" if len(gone) > 3 else ""
        )
        raise DataError(
            f"{name}: {len(gone)} of {len(cfg.fixes)} name images that are not in "
            f"the data any more ({shown}); nothing was applied"
        )
    unknown = sorted(
        {label for _k, action, label in cfg.fixes if action == "relabel"}
        - set(class_names)
    )
    if unknown:
        raise DataError(
            f"{name}: {', '.join(map(repr, unknown))} is no class of this data; "
            "nothing was applied"
        )


def check_fixed_folder(
    cfg: TrainConfig,
    image_size: int = 64,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> DataReport:
    """The data check of ``cfg``'s image folder as a run with ``cfg.fixes`` sees it.

    Counts, imbalance and problems leave excluded images out and count
    relabelled ones under their new class (every byte-identical copy: a fix
    names the content). ``progress`` and ``cancel`` are
    :func:`~workbench.core.data.folder_check.check_folder`'s.

    Raises
    ------
    DataError
        A fix names an image that is not (readable) in the folder any more, or
        a label that is no class of it: as a run with them, nothing is reported.
    """
    assert cfg.data_dir is not None  # validated by TrainConfig
    report = check_folder(
        cfg.data_dir,
        image_size,
        fixes={key: (action, label) for key, action, label in cfg.fixes},
        progress=progress,
        cancel=cancel,
    )
    if report.classes:  # else no images were read: the report says why
        check_fixes_found(cfg, sorted(report.fixed_keys), report.classes)
        report.fixes_name = cfg.fixes_name
    return report
