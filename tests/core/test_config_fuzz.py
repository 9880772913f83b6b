"""Damaged run configs give a clear one-line message or load, never a traceback.

Issue 17. The variants come from ``tests/fuzz_configs.py`` (seeded): wrong
types for every field, unknown and missing fields, huge and non-finite
numbers, wrong encodings, truncated and empty files, a list at the top level,
broken TOML and nested tables. The window's File > Load run config is tested
in ``tests/ui/test_damaged_files_ui.py``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.fuzz_configs import variants
from workbench.cli.commands import main
from workbench.core.checkpoints.io import save_checkpoint
from workbench.core.config import ConfigError, TrainConfig, load_config
from workbench.core.train.engine import fit, prepare_run

# Variants of each kind (444 in all).
KINDS = {
    "wrong type": 246,
    "field missing": 9,
    "unknown field": 4,
    "huge number": 90,
    "not finite": 47,
    "wrong encoding": 10,
    "truncated": 12,
    "empty file": 4,
    "not a table": 6,
    "deeply nested": 3,
    "wrong syntax": 9,
    "nested table": 4,
}
# Kinds whose damage sits in one field: a refusal names that field.
_FIELD_KINDS = ("wrong type", "huge number", "not finite")


def _outcome(path: Path) -> tuple[str, str]:
    """("loaded", "") or ("refused", message); anything else escapes."""
    try:
        load_config(path)
    except ConfigError as exc:
        return "refused", str(exc)
    return "loaded", ""


def test_every_damaged_config_loads_or_says_why_in_one_line(tmp_path):
    kinds: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    problems = []
    for variant in variants():
        kinds[variant.kind] += 1
        path = tmp_path / f"damaged{variant.suffix}"
        path.write_bytes(variant.data)
        try:
            outcome, message = _outcome(path)
        except Exception as exc:  # the escape this test exists to catch
            problems.append(f"{variant.name}: {type(exc).__name__}: {exc}")
            continue
        if path.read_bytes() != variant.data:
            problems.append(f"{variant.name}: the file was changed")
        if outcome == "loaded":
            continue
        refused[variant.kind] += 1
        field = variant.name.partition("=")[0]
        if not message.strip() or "\n" in message.strip():
            problems.append(f"{variant.name}: not one line: {message!r}")
        elif str(path) not in message:
            problems.append(f"{variant.name}: the file is not named: {message}")
        elif variant.kind in _FIELD_KINDS and field not in message:
            problems.append(f"{variant.name}: {field} is not named: {message}")
    assert kinds == KINDS, kinds  # seeded: the same files every time
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)
    # Damage that cannot be read is refused whole; a wrong type nearly always.
    for kind in ("wrong encoding", "truncated", "deeply nested", "wrong syntax"):
        assert refused[kind] == kinds[kind], kind
    assert refused["wrong type"] >= kinds["wrong type"] - 10
    assert refused["not finite"] == kinds["not finite"]


def test_huge_and_negative_whole_numbers_name_the_field(tmp_path):
    for raw, words in ((str(10**100), "too large"), ("-1", ">= 1")):
        path = tmp_path / "huge.json"
        path.write_text(f'{{"batch_size": {raw}}}')
        with pytest.raises(ConfigError, match=f"batch_size: .*{words}"):
            load_config(path)


def test_a_list_of_names_is_needed_for_frozen_and_augment(tmp_path):
    path = tmp_path / "c.json"
    for text, field in (
        ('{"frozen": "conv1.*"}', "frozen"),
        ('{"augment": 3}', "augment"),
    ):
        path.write_text(text)
        with pytest.raises(ConfigError, match=f"^{path}: {field}: "):
            load_config(path)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    cfg = TrainConfig(model="mlp", epochs=1, max_steps=2, batch_size=64, log_every=1)
    run = prepare_run(cfg)
    fit(run)
    return save_checkpoint(tmp_path_factory.mktemp("ckpt") / "run.pt", run)


def _one_refused_per_kind(tmp_path: Path) -> list[Path]:
    chosen: dict[str, Path] = {}
    for variant in variants():
        if variant.kind in chosen:
            continue
        path = tmp_path / f"{len(chosen)}{variant.suffix}"
        path.write_bytes(variant.data)
        if _outcome(path)[0] == "refused":
            chosen[variant.kind] = path
    assert set(chosen) == set(KINDS) - {"unknown field", "field missing"}
    return list(chosen.values())


def test_train_with_a_damaged_config_is_one_line_and_exit_2(
    tmp_path, checkpoint, capsys
):
    for path in _one_refused_per_kind(tmp_path):
        for extra in ([], ["--resume", str(checkpoint)]):
            code = main(["train", "--config", str(path), "--quiet", *extra])
            err = capsys.readouterr().err.strip().splitlines()
            assert code == 2, (path, err)
            assert len(err) == 1, err
            assert err[0].startswith(f"ptcore-workbench train: error: {path}"), err
