"""Window state in QSettings: geometry, splitters, last folders, recent files, config.

The training config itself is a core ``TrainConfig`` stored as JSON text; this module
only keeps it between sessions. Tests point :func:`open_window_settings` at an INI
file in a temporary folder with :func:`use_settings_file`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMainWindow, QSplitter

from workbench.core.config import ConfigError, TrainConfig
from workbench.ui.window.layout import ColumnSplitter

log = logging.getLogger(__name__)

ORGANIZATION = "ptcore"
APPLICATION = "workbench"
SETTINGS_VERSION = 1
MAX_RECENT = 8

_settings_file: Path | None = None


def use_settings_file(path: str | Path | None) -> None:
    """Keep window state in the INI file ``path``, not the user's; None resets."""
    global _settings_file
    _settings_file = None if path is None else Path(path)


def open_window_settings() -> QSettings:
    """The QSettings the window reads and writes."""
    if _settings_file is not None:
        return QSettings(str(_settings_file), QSettings.Format.IniFormat)
    return QSettings(ORGANIZATION, APPLICATION)


def _checked(settings: QSettings) -> QSettings:
    version = settings.value("settings_version")
    if version is not None and str(version) != str(SETTINGS_VERSION):
        # A future layout we cannot read: start from defaults rather than misread it.
        log.warning("window settings version %s unknown; using defaults", version)
        settings.clear()
    settings.setValue("settings_version", SETTINGS_VERSION)
    return settings


def load_last_config(settings: QSettings) -> TrainConfig | None:
    """The config the window showed when it was last closed, if it is still valid."""
    text = _checked(settings).value("last_config")
    if not text:
        return None
    try:
        return TrainConfig.from_dict(json.loads(str(text)))
    except (ConfigError, ValueError, TypeError, RecursionError) as exc:
        log.warning("ignoring the saved window config: %s", exc)
        return None


def save_last_config(settings: QSettings, cfg: TrainConfig) -> None:
    """Remember ``cfg`` for the next session."""
    settings.setValue("last_config", json.dumps(cfg.to_dict()))


def recent_files(settings: QSettings) -> list[str]:
    """Recently opened or saved checkpoints, newest first."""
    text = settings.value("recent_files")
    try:
        paths = json.loads(str(text)) if text else []
    except ValueError:
        return []
    return [p for p in paths if isinstance(p, str)][:MAX_RECENT]


def add_recent_file(settings: QSettings, path: str | Path) -> list[str]:
    """Put ``path`` first in the recent files list and return the list."""
    path = str(Path(path).resolve())
    paths = [path, *(p for p in recent_files(settings) if p != path)][:MAX_RECENT]
    settings.setValue("recent_files", json.dumps(paths))
    return paths


def remove_recent_file(settings: QSettings, path: str) -> list[str]:
    """Drop ``path`` (e.g. it no longer exists) and return the list."""
    paths = [p for p in recent_files(settings) if p != path]
    settings.setValue("recent_files", json.dumps(paths))
    return paths


def last_folder(settings: QSettings, kind: str) -> str:
    """The folder a file dialog of ``kind`` last used ("" if none)."""
    return str(settings.value(f"last_folder/{kind}", "") or "")


def set_last_folder(settings: QSettings, kind: str, folder: str | Path) -> None:
    """Remember where the user last picked a file of ``kind``."""
    settings.setValue(f"last_folder/{kind}", str(folder))


def restore_layout(
    settings: QSettings, window: QMainWindow, splitters: dict[str, QSplitter]
) -> bool:
    """Put the window and its splitters back as they were; False the first time.

    Qt keeps a restored geometry on the screen: on a smaller screen than last
    time the window is smaller, and the columns saved for the wider window are
    not restored (they would squeeze the tabs); they fit the window instead.
    """
    geometry = settings.value("window/geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    state = settings.value("window/state")
    if state is not None:
        window.restoreState(state)
    for name, splitter in splitters.items():
        value = settings.value(f"splitters/{name}")
        if value is None:
            continue
        if isinstance(splitter, ColumnSplitter):
            width = settings.value(f"splitters/{name}_width")
            if width is None or int(width) > window.width():
                continue  # made for a wider window: keep following this one
            splitter.restoreState(value)
            splitter.follows_window = False
        else:
            splitter.restoreState(value)
    return geometry is not None


def save_layout(
    settings: QSettings, window: QMainWindow, splitters: dict[str, QSplitter]
) -> None:
    """Remember the window's geometry, toolbars/docks and splitter positions.

    Columns that still follow the window (no handle was dragged) are not saved:
    next time they fit whatever window they are in.
    """
    settings.setValue("window/geometry", window.saveGeometry())
    settings.setValue("window/state", window.saveState())
    for name, splitter in splitters.items():
        if isinstance(splitter, ColumnSplitter) and splitter.follows_window:
            settings.remove(f"splitters/{name}")
            continue
        settings.setValue(f"splitters/{name}", splitter.saveState())
        settings.setValue(f"splitters/{name}_width", splitter.width())


def model_files(settings: QSettings) -> list[str]:
    """Model files the user added (``path/to/file.py:Name``), oldest first."""
    text = settings.value("model_files")
    try:
        specs = json.loads(str(text)) if text else []
    except ValueError:
        return []
    return [s for s in specs if isinstance(s, str)]


def add_model_file(settings: QSettings, spec: str) -> list[str]:
    """Remember ``spec`` among the added model files and return the list."""
    specs = [s for s in model_files(settings) if s != spec] + [spec]
    settings.setValue("model_files", json.dumps(specs))
    return specs


def processes(settings: QSettings) -> int:
    """The Device panel's Processes when the window was last used (1 at first)."""
    try:
        return max(1, int(settings.value("device/processes", 1)))
    except (TypeError, ValueError):
        return 1


def set_processes(settings: QSettings, count: int) -> None:
    """Remember the Device panel's Processes (not a training setting: --nproc)."""
    settings.setValue("device/processes", count)
