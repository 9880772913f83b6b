"""What data a run read, kept in its folder, and whether that data changed since.

An image-folder run writes its data fingerprint (every file's path and content
hash) to ``data_files.json`` beside ``run.json`` (which keeps only the digest,
so listing runs stays fast). Reproduce compares it with the folder as it is now.
"""

from __future__ import annotations

import json
from pathlib import Path

from workbench.core.atomic_files import write_atomically
from workbench.core.config import TrainConfig
from workbench.core.data.folder import DataFingerprint, fingerprint_folder, scan_folder
from workbench.core.data.registry import FOLDER, DataError
from workbench.core.runs.folder import RunFolder

DATA_FILE = "data_files.json"


def record_data(folder: RunFolder, fingerprint: DataFingerprint) -> None:
    """Keep ``fingerprint`` in ``folder`` (raises OSError when it cannot be written)."""
    text = json.dumps(fingerprint.to_dict(), indent=1) + "\n"
    write_atomically(folder.path / DATA_FILE, lambda h: h.write(text.encode("utf-8")))
    folder.update(data_fingerprint=fingerprint.digest)


def recorded_data(folder: RunFolder) -> DataFingerprint | None:
    """The fingerprint ``folder``'s run recorded, or None (none, or unreadable)."""
    try:
        data = json.loads((folder.path / DATA_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return DataFingerprint.from_dict(data)


def data_change(folder: RunFolder, cfg: TrainConfig) -> str | None:
    """Why the data of ``folder``'s run is not what it was; None when it is the same.

    Only image-folder runs record their data; the built-in datasets are fixed
    by their checksums.
    """
    if cfg.dataset != FOLDER:
        return None
    before = recorded_data(folder)
    if before is None:
        return f"run {folder.id} did not record its data ({DATA_FILE} is missing)"
    try:
        now = fingerprint_folder(scan_folder(Path(cfg.data_dir or "")))
    except DataError as exc:
        return f"the data of run {folder.id} cannot be read now: {exc}"
    difference = before.difference(now)
    if difference is None:
        return None
    return f"the data of run {folder.id} changed since it trained: {difference}"
