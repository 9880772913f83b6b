"""Window settings written by an older version are read, not thrown away."""

from __future__ import annotations

import json

from PySide6.QtCore import QSettings

from workbench.core.config import TrainConfig
from workbench.ui import window_state


def _settings_with(path, version: int, cfg: dict) -> None:
    old = QSettings(str(path), QSettings.Format.IniFormat)
    old.setValue("settings_version", version)
    old.setValue("last_config", json.dumps(cfg))
    old.sync()


def test_version_1_default_log_interval_becomes_automatic(tmp_path):
    path = tmp_path / "old.ini"
    _settings_with(path, 1, {**TrainConfig(lr=0.01).to_dict(), "log_every": 10})
    window_state.use_settings_file(path)
    cfg = window_state.load_last_config(window_state.open_window_settings())
    assert cfg is not None
    assert cfg.log_every is None
    assert cfg.lr == 0.01  # the rest is kept
    again = window_state.open_window_settings()
    assert again.value("settings_version") in (2, "2")


def test_a_log_interval_other_than_the_old_default_is_kept(tmp_path):
    path = tmp_path / "old.ini"
    _settings_with(path, 1, {**TrainConfig().to_dict(), "log_every": 7})
    window_state.use_settings_file(path)
    cfg = window_state.load_last_config(window_state.open_window_settings())
    assert cfg is not None
    assert cfg.log_every == 7
