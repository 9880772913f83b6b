from __future__ import annotations

import dataclasses
import json

import pytest

from workbench.core.config import (
    DEFAULT_EPOCHS,
    SCHEMA_VERSION,
    ConfigError,
    TrainConfig,
    load_config,
    save_config,
)


def test_defaults_are_valid_and_offline():
    cfg = TrainConfig()
    assert cfg.dataset == "digits"
    assert cfg.loader == "fast"
    assert cfg.resolved_epochs == DEFAULT_EPOCHS["digits"]


@pytest.mark.parametrize(
    ("changes", "field", "allowed"),
    [
        ({"dataset": "cifar"}, "dataset", "digits, mnist"),
        ({"model": "resnet"}, "model", "small-cnn, cnn"),
        ({"precision": "fp8"}, "precision", "fp32, bf16, fp16"),
        ({"optimizer": "lion"}, "optimizer", "adam, adamw, sgd"),
        ({"loader": "turbo"}, "loader", "fast, dataloader"),
    ],
)
def test_bad_choice_names_field_and_allowed_values(changes, field, allowed):
    with pytest.raises(ConfigError) as info:
        TrainConfig(**changes)
    text = str(info.value)
    assert text.startswith(f"{field}:")
    assert allowed in text


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"epochs": 0}, "epochs"),
        ({"max_steps": -1}, "max_steps"),
        ({"lr": 0.0}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"workers": -2, "loader": "dataloader"}, "workers"),
        ({"pin_memory": "yes"}, "pin_memory"),
    ],
)
def test_bad_numbers_name_the_field(changes, field):
    with pytest.raises(ConfigError, match=f"^{field}:"):
        TrainConfig(**changes)


def test_workers_need_the_dataloader_path():
    with pytest.raises(ConfigError, match="workers"):
        TrainConfig(workers=2)
    assert TrainConfig(workers=2, loader="dataloader").workers == 2


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_round_trip_through_file(tmp_path, suffix):
    cfg = TrainConfig(
        dataset="mnist",
        model="cnn",
        epochs=3,
        max_steps=None,
        lr=0.01,
        frozen=("conv1.*", "fc1.weight"),
        data_dir="/data",
        log_every=None,  # automatic: stored as "" in TOML, which has no null
    )
    path = tmp_path / f"run{suffix}"
    save_config(cfg, path)
    assert load_config(path) == cfg


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_the_log_interval_is_automatic_unless_set(tmp_path, suffix):
    assert TrainConfig().log_every is None  # every step of a short run
    path = tmp_path / f"run{suffix}"
    save_config(TrainConfig(log_every=10), path)
    assert load_config(path).log_every == 10
    save_config(TrainConfig(), path)
    assert load_config(path).log_every is None


def test_file_has_schema_version_and_unknown_keys_are_ignored(tmp_path, caplog):
    path = tmp_path / "run.json"
    save_config(TrainConfig(seed=7), path)
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    data["colour"] = "blue"
    path.write_text(json.dumps(data))
    assert load_config(path).seed == 7
    assert "colour" in caplog.text


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(ConfigError, match="newer"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [("{not json", "not valid JSON"), ("[1, 2]", "top level"), ('{"lr": "x"}', "lr")],
)
def test_bad_files_give_clear_errors(tmp_path, text, message):
    path = tmp_path / "run.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


@dataclasses.dataclass(frozen=True)
class _WithOptionalSetting(TrainConfig):
    """A config whose optional field defaults to a value (as log_every once did)."""

    window: int | None = 5


def test_an_optional_field_reads_its_unset_mark_whatever_its_default():
    # TOML has no null: "" stands for "not set" in every field that admits None.
    cfg = _WithOptionalSetting.from_dict({"window": ""})
    assert cfg.window is None
    assert _WithOptionalSetting.from_dict({"window": 7}).window == 7
