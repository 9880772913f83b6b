"""The breakages of bench/mutation_check.py still point at real code and tests.

Running every breakage takes long, so it is a bench, not a test; this cheap
check keeps the list from going stale as code moves: each breakage's anchor names
one definition (bench/mutation_anchors.py), its code occurs exactly once inside
it, and each test it names exists. Every problem is reported in one message.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


MUTATIONS = _load("mutations").MUTATIONS
ANCHORS = _load("mutation_anchors")


def test_there_are_at_least_thirty_breakages_with_unique_names():
    names = [m.name for m in MUTATIONS]
    assert len(names) >= 30
    assert len(set(names)) == len(names)


def test_every_breakage_applies_once_where_it_says_and_names_existing_tests():
    problems = ANCHORS.stale(MUTATIONS, ROOT)
    assert not problems, f"{len(problems)} stale breakages:\n" + "\n".join(problems)


def test_an_anchor_finds_its_definition_wherever_the_file_lives(tmp_path):
    (tmp_path / "workbench" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "workbench" / "deep" / "er" / "moved.py").write_text(
        "def helper():\n    return 1\n\n\nclass Recorder:\n"
        "    def on_event(self):\n        return 1\n"
    )
    (tmp_path / "workbench" / "other.py").write_text("def helper():\n    return 2\n")
    definitions = ANCHORS.index(tmp_path)
    file, offset = ANCHORS.locate(
        "Recorder.on_event", "return 1", tmp_path, definitions
    )
    assert file == Path("workbench/deep/er/moved.py")
    text = (tmp_path / file).read_text()
    assert text[offset:].startswith("return 1\n")
    assert offset > text.index("class")
    with pytest.raises(ANCHORS.AnchorError, match="ambiguous"):
        ANCHORS.resolve("helper", definitions)
    with pytest.raises(ANCHORS.AnchorError, match="occurs 0 times"):
        ANCHORS.locate("Recorder.on_event", "return 2", tmp_path, definitions)
    assert ANCHORS.resolve("workbench.other:helper", definitions).file == Path(
        "workbench/other.py"
    )
