"""Check a folder of labelled images before training on it.

The layout is torchvision's ``ImageFolder``: ``DIR/<class>/<image>``, or
``DIR/train/<class>/...`` beside ``DIR/val/`` (or ``DIR/test/``). The check
decodes every image once with Pillow (torchvision 0.29 deprecates its own
decoders for TorchCodec) and reports, with file paths: images per class,
unreadable or truncated files, zero-byte files, classes without images, fewer
than two classes, byte-identical images (under two classes, twice in one, in
train and val), images far smaller than the training size and strong class
imbalance. Errors mean the data cannot train; warnings (files a run skips,
leaks, duplicates, small images) do not stop a run.

Given fixes (an overlay's, by content hash: :mod:`workbench.core.data.fixes`
checks them with ``check_fixed_folder``), the report is of the folder as a run
with them sees it: an excluded image is not counted or warned about, a
relabelled one is counted under its new class. The files stay as they are.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from workbench.core.data.folder_images import UnreadableImage, read_square

IMAGE_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".bmp", ".webp", ".gif", ".tif", ".tiff"}
)
VAL_FOLDERS = ("val", "test")
# An image whose shorter side is below this share of the training size is
# upscaled so far that it mostly shows interpolation.
SMALL_SHARE = 0.5
# The largest class holding this many times the smallest's images is imbalanced.
IMBALANCE_RATIO = 10.0
# Progress is reported about this many times over a check (and after the last file).
PROGRESS_REPORTS = 200


class CheckCancelled(Exception):
    """``cancel()`` returned True: the check stopped before its end."""


# What to do about a finding, in the words of each front-end (Session.origin).
ADVICE = {
    "imbalance": {
        "command line": "train with --class-weights balanced or --balanced-sampler",
        "window": "train with Class weights: Balanced or Balanced sampler "
        "(Loader panel)",
    },
}


@dataclass(frozen=True)
class Finding:
    """One thing the check found: ``error`` stops training, ``warning`` does not.

    ``advice`` names an entry of :data:`ADVICE`: what to do, said after the
    message in the words of the front-end that shows it.
    """

    severity: str  # "error" or "warning"
    message: str
    path: Path | None = None
    advice: str = ""

    def line(self, front: str = "command line") -> str:
        """``error: ...`` or ``warning: ...``, with the file when there is one."""
        where = f": {self.path}" if self.path is not None else ""
        advice = f"; {ADVICE[self.advice][front]}" if self.advice else ""
        return f"{self.severity}: {self.message}{advice}{where}"


@dataclass
class DataReport:
    """What :func:`check_folder` found in ``root``.

    ``counts[split][class]`` holds readable images; ``unreadable`` the files a
    run skips; ``ignored`` the files that are no images at all. With fixes
    applied, ``relabelled`` and ``excluded`` hold the files they changed,
    ``fixed_keys`` the keys of the fixes that found their image, and
    ``fixes_name`` names them ("" for a run's unnamed ones; None: none applied).
    """

    root: Path
    classes: tuple[str, ...] = ()
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    unreadable: list[Path] = field(default_factory=list)
    ignored: list[Path] = field(default_factory=list)
    fixes_name: str | None = None
    relabelled: list[Path] = field(default_factory=list)
    excluded: list[Path] = field(default_factory=list)
    fixed_keys: set[str] = field(default_factory=set)

    @property
    def can_train(self) -> bool:
        """True when no finding is an error (warnings allowed)."""
        return not any(f.severity == "error" for f in self.findings)

    def images_per_class(self) -> dict[str, int]:
        """Readable images of each class, all splits together."""
        total: Counter[str] = Counter()
        for per_class in self.counts.values():
            total.update(per_class)
        return {name: total[name] for name in self.classes}

    def lines(self) -> list[str]:
        """The report as text: counts per class, then every finding."""
        splits = " + ".join(self.counts) or "no images"
        count = len(self.classes)
        named = f"{count} class" + ("" if count == 1 else "es")
        out = [f"{self.root}: {named} ({splits})"]
        if self.fixes_name is not None:
            out.append(self.fixes_line())
        for name, count in self.images_per_class().items():
            per_split = ", ".join(
                f"{split} {per[name]:,}" for split, per in self.counts.items()
            )
            out.append(f"  {name}: {count:,} images ({per_split})")
        out += [f"ignored, not an image: {path}" for path in self.ignored]
        out += [f.line() for f in self.findings]
        verdict = "can train" if self.can_train else "cannot train"
        out.append(f"{verdict}: {self._summary()}")
        return out

    def fixes_line(self) -> str:
        """What the fixes applied changed; the counts above include them."""
        name = f"fixes {self.fixes_name!r}" if self.fixes_name else "the run's fixes"
        return (
            f"{name} applied (your files are unchanged): {len(self.relabelled):,} "
            f"relabelled, {len(self.excluded):,} excluded"
        )

    def _summary(self) -> str:
        errors = sum(f.severity == "error" for f in self.findings)
        warnings = len(self.findings) - errors
        return f"{errors} errors, {warnings} warnings"


def split_folders(root: Path) -> dict[str, Path]:
    """``{"train": DIR/train, "val": DIR/val}`` when split, else ``{"all": DIR}``."""
    train = root / "train"
    if train.is_dir():
        for name in VAL_FOLDERS:
            if (root / name).is_dir():
                return {"train": train, "val": root / name}
    return {"all": root}


def _files(folder: Path) -> Iterator[Path]:
    yield from sorted(p for p in folder.rglob("*") if p.is_file())


def folder_stamp(root: str | Path) -> tuple[tuple[str, int], ...]:
    """The modification time of ``root`` and of every folder under it.

    Adding, removing or renaming a file changes its folder's stamp, so a
    report keyed by the stamp is stale once the folder's content changes (a
    file rewritten in place keeps it). Empty for a folder that does not exist.
    """
    root = Path(root).expanduser()
    if not root.is_dir():
        return ()
    stamps = []
    for folder, _dirs, _files in os.walk(root):
        try:
            stamps.append((folder, os.stat(folder).st_mtime_ns))
        except OSError:
            continue  # removed while walking: the next stamp differs anyway
    return tuple(sorted(stamps))


def check_folder(
    root: str | Path,
    image_size: int = 64,
    *,
    fixes: Mapping[str, tuple[str, str]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> DataReport:
    """Decode every image under ``root`` once and report what would go wrong.

    Parameters
    ----------
    root : str or Path
        The folder of class folders (or of ``train/`` and ``val/``).
    image_size : int
        The side the images are trained at; far smaller images are warned about.
    fixes : mapping, optional
        Image key (the file's SHA-256) -> ``(action, new label)``: ``exclude``
        leaves the image out, ``relabel`` counts it under the new label (one
        that is no class here is left to the caller's check).
    progress : callable, optional
        ``progress(done, total)`` with the image files decoded so far, about
        ``PROGRESS_REPORTS`` times and after the last one.
    cancel : callable, optional
        Checked before each file; when it returns True the check stops.

    Raises
    ------
    CheckCancelled
        ``cancel()`` returned True.
    """
    root = Path(root).expanduser()
    report = DataReport(root)
    if not root.is_dir():
        report.findings.append(
            Finding("error", "no such folder: give a folder of class folders", root)
        )
        return report
    splits = split_folders(root)
    names = sorted(
        {p.name for folder in splits.values() for p in folder.iterdir() if p.is_dir()}
    )
    report.classes = tuple(names)
    if not names:
        report.findings.append(
            Finding("error", "no class folders: put the images in DIR/<class>/", root)
        )
        return report
    if len(names) < 2:
        report.findings.append(
            Finding("error", f"only one class ({names[0]}): a classifier needs two")
        )
    # Every readable image by its file's SHA-256: (split, class, path).
    copies: dict[str, list[tuple[str, str, Path]]] = {}
    # Listed first, so progress knows the total before the slow decoding starts.
    files = {
        (split, name): list(_files(folder / name)) if (folder / name).is_dir() else []
        for split, folder in splits.items()
        for name in names
    }
    total = sum(
        p.suffix.lower() in IMAGE_SUFFIXES for paths in files.values() for p in paths
    )
    every = max(1, total // PROGRESS_REPORTS)
    done = 0
    fixes = fixes or {}
    for split in splits:
        # Every class from the start: a relabel may count under a later one.
        per_class = report.counts.setdefault(split, dict.fromkeys(names, 0))
        for name in names:
            for path in files[split, name]:
                if path.suffix.lower() not in IMAGE_SUFFIXES:
                    report.ignored.append(path)
                    continue
                if cancel is not None and cancel():
                    raise CheckCancelled(f"the check of {root} was cancelled")
                done += 1
                if progress is not None and (done % every == 0 or done == total):
                    progress(done, total)
                try:
                    # The run's own reader: what fails here, a run skips.
                    decoded = read_square(path, image_size)
                except UnreadableImage as exc:
                    report.unreadable.append(path)
                    report.findings.append(Finding("warning", f"skipped, {exc}", path))
                    continue
                action, label = fixes.get(decoded.digest, ("", name))
                if action:
                    report.fixed_keys.add(decoded.digest)
                if action == "exclude":
                    report.excluded.append(path)
                    continue
                if action == "relabel" and label in per_class:
                    report.relabelled.append(path)
                else:
                    label = name  # no class of this folder: the caller refuses it
                per_class[label] += 1
                copies.setdefault(decoded.digest, []).append((split, label, path))
                height, width = decoded.original
                if min(height, width) < SMALL_SHARE * image_size:
                    report.findings.append(
                        Finding(
                            "warning",
                            f"{width}x{height} is far smaller than the training "
                            f"size {image_size}",
                            path,
                        )
                    )
    _check_classes(report)
    _check_duplicates(report, copies)
    return report


def _check_duplicates(
    report: DataReport, copies: dict[str, list[tuple[str, str, Path]]]
) -> None:
    """Byte-identical images: under two classes, twice in one, in train and val."""
    for entries in copies.values():
        first_split, first_class, first = entries[0]
        for split, name, path in entries[1:]:
            where = []
            if name != first_class:
                where.append(f"filed under {first_class} and {name}")
            if split != first_split:
                where.append(f"in {first_split} and {split}")
            said = ", ".join(where) or f"in {name} twice"
            message = f"the same image is {said} ({first})"
            report.findings.append(Finding("warning", message, path))


def _check_classes(report: DataReport) -> None:
    totals = report.images_per_class()
    for name, count in totals.items():
        if count == 0:
            report.findings.append(
                Finding(
                    "error",
                    f"class {name!r} has no readable images: add some or remove "
                    "its folder",
                )
            )
    training = report.counts.get("train")  # a folder with its own split
    for name, count in totals.items():
        if training is not None and count and not training[name]:
            report.findings.append(
                Finding(
                    "error",
                    f"class {name!r} has no readable training images: add some "
                    f"to train/{name} or remove its folders",
                )
            )
    present = [c for c in totals.values() if c]
    if len(present) >= 2 and max(present) >= IMBALANCE_RATIO * min(present):
        largest = max(totals, key=totals.__getitem__)
        smallest = min((n for n in totals if totals[n]), key=totals.__getitem__)
        report.findings.append(
            Finding(
                "warning",
                f"strong class imbalance: {largest} has {totals[largest]:,} images, "
                f"{smallest} {totals[smallest]:,}",
                advice="imbalance",
            )
        )
