"""Reading many image files with one model: a folder, or files chosen together.

``predict DIR --csv`` and the Try-an-image tab's table both read through here:
each file exactly as one file is read (a
:class:`~workbench.core.predict.Predictor`'s ``read_file``), in order; a file
that cannot be read keeps its one-line reason and never ends the batch.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from workbench.core.atomic_files import write_atomically
from workbench.core.data.folder_check import IMAGE_SUFFIXES
from workbench.core.data.preprocess import PredictError

__all__ = [
    "FileReader",
    "FileResult",
    "csv_header",
    "csv_text",
    "gather_files",
    "image_files",
    "read_files",
    "skip_reason",
    "write_csv",
]


class _Probabilities(Protocol):
    @property
    def probabilities(self) -> Any:
        """Softmax over the classes, in class order."""


class FileReader(Protocol):
    """What reads one file: a ``Predictor``, or ``predict``'s checkpoint reader."""

    @property
    def class_names(self) -> tuple[str, ...]:
        """Display name of each class, in output order."""

    def read_file(self, path: Path) -> _Probabilities:
        """The model's probabilities for the file; ``PredictError`` if unreadable."""


@dataclass(frozen=True, slots=True)
class FileResult:
    """One file of a batch: what the model read, or why it was skipped.

    Attributes
    ----------
    path : pathlib.Path
        The file, as listed.
    class_name : str
        The most likely class ("" when skipped).
    confidence : float
        Its probability (NaN when skipped).
    top : tuple of (str, float)
        The most likely classes and their probabilities, most likely first.
    error : str
        Why the file was skipped, in one line without its path; "" if read.
    """

    path: Path
    class_name: str = ""
    confidence: float = math.nan
    top: tuple[tuple[str, float], ...] = ()
    error: str = ""

    @property
    def skipped(self) -> bool:
        """True when the file could not be read."""
        return bool(self.error)


def image_files(folder: str | Path) -> list[Path]:
    """The image files under ``folder`` (and its subfolders), sorted.

    An image file is one whose suffix, in any case, is one a run reads
    (``IMAGE_SUFFIXES``: ``.png``, ``.JPG``, ...).
    """
    return sorted(
        path
        for path in Path(folder).rglob("*")
        if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file()
    )


def gather_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """The files to read of ``paths``, and the folders that hold no image.

    A folder gives its :func:`image_files`; any other path is kept as given
    (reading it says what is wrong with it), in the order given.
    """
    files: list[Path] = []
    empty: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = image_files(path)
            files.extend(found)
            if not found:
                empty.append(path)
        else:
            files.append(path)
    return files, empty


def skip_reason(path: Path, exc: Exception) -> str:
    """Why ``path`` could not be read, in one line, without the path in front."""
    return str(exc).removeprefix(f"{path}: ")


def read_files(
    files: Sequence[Path],
    reader: FileReader,
    *,
    top: int = 3,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Iterator[FileResult]:
    """Read each of ``files`` in order with ``reader``; one result per file.

    Parameters
    ----------
    files : sequence of pathlib.Path
        The files, read in this order.
    reader : FileReader
        Reads one file the way the model's data was made.
    top : int
        How many of the most likely classes each result keeps.
    progress : callable, optional
        ``progress(done, total)``: before the first file, then after each.
    cancel : callable, optional
        Asked before each file; True stops the batch there (fewer results).

    Yields
    ------
    FileResult
        The file's class, confidence and top classes, or why it was skipped.
    """
    total = len(files)
    if progress is not None:
        progress(0, total)
    names = reader.class_names
    for done, path in enumerate(files, 1):
        if cancel is not None and cancel():
            return
        try:
            probs = np.asarray(reader.read_file(path).probabilities, np.float64)
        except PredictError as exc:
            yield FileResult(path, error=skip_reason(path, exc))
        else:
            label = int(np.argmax(probs))
            order = np.argsort(probs)[::-1][:top]
            yield FileResult(
                path,
                names[label],
                float(probs[label]),
                tuple((names[i], float(probs[i])) for i in order),
            )
        if progress is not None:
            progress(done, total)


def csv_header(top: int) -> list[str]:
    """The columns: file, class, confidence, the next classes, error."""
    ranks = [
        f"top{rank}{part}" for rank in range(2, top + 1) for part in ("", "_confidence")
    ]
    return ["file", "class", "confidence", *ranks, "error"]


def csv_text(results: Iterable[FileResult], *, top: int = 3) -> str:
    """The results as CSV: a row per file, in order (see :func:`csv_header`).

    ``top`` classes per file at most, no more than the files were read with
    (a model of two classes has no third). Probabilities are numbers in
    [0, 1] (six decimals); a skipped file has empty class columns and its
    reason under ``error``.
    """
    rows = list(results)
    kept = max((len(r.top) for r in rows if not r.skipped), default=1)
    top = max(1, min(top, kept))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(csv_header(top))
    for result in rows:
        row = [str(result.path)]
        if result.skipped:
            row += [""] * (2 * top)
        else:
            ranked = [(result.class_name, result.confidence), *result.top[1:top]]
            ranked += [("", math.nan)] * (top - len(ranked))
            for name, p in ranked:
                row += [name, "" if math.isnan(p) else f"{p:.6f}"]
        writer.writerow([*row, result.error])
    return out.getvalue()


def write_csv(path: str | Path, results: Iterable[FileResult], *, top: int = 3) -> Path:
    """Write :func:`csv_text` to ``path``, whole or not at all (``OSError``)."""
    data = csv_text(results, top=top).encode("utf-8")
    return write_atomically(path, lambda handle: handle.write(data))
