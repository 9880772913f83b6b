"""``--config`` (and File ▸ Open config) reads a regular file of sane size only."""

from __future__ import annotations

import os
import threading

import pytest

from workbench.cli.commands import main
from workbench.core.config import MAX_CONFIG_BYTES, ConfigError, load_config


def test_dev_zero_is_refused_without_reading_it():
    with pytest.raises(
        ConfigError, match=r"^/dev/zero is a device: give a JSON or TOML"
    ):
        load_config("/dev/zero")


def test_a_named_pipe_with_no_writer_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    outcome = []

    def load():
        try:
            load_config(fifo)
        except ConfigError as exc:
            outcome.append(str(exc))

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # unblock the thread before failing
        with open(fifo, "w"):
            pass
        pytest.fail("load_config blocked on a named pipe")
    assert outcome == [f"{fifo} is a named pipe: give a JSON or TOML config file"]


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="is a folder: give a JSON or TOML"):
        load_config(tmp_path)


def test_a_huge_file_is_refused_and_a_config_at_the_limit_reads(tmp_path):
    padded = tmp_path / "big.json"
    body = '{"epochs": 2}'
    padded.write_text(body + " " * (MAX_CONFIG_BYTES - len(body)))
    assert load_config(padded).epochs == 2  # exactly at the limit: fine
    with open(padded, "a") as handle:
        handle.write(" ")
    with pytest.raises(ConfigError, match=r"is over 1 MB: a config is a few hundred"):
        load_config(padded)


def test_the_command_line_says_it_in_one_line(capsys):
    assert main(["train", "--config", "/dev/zero"]) == 2
    assert capsys.readouterr().err == (
        "ptcore-workbench train: error: /dev/zero is a device: give a JSON or TOML "
        "config file\n"
    )
