"""The breakages of bench/mutation_check.py still point at real code and tests.

Running every breakage takes a quarter of an hour, so it is a bench, not a test;
this cheap check keeps the list from going stale as code moves: each breakage's
code occurs exactly once where it says, and each test it names exists.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_mutations():
    spec = importlib.util.spec_from_file_location(
        "bench_mutations", ROOT / "bench" / "mutations.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.MUTATIONS


MUTATIONS = _load_mutations()


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def test_there_are_at_least_thirty_breakages_with_unique_names():
    names = [m.name for m in MUTATIONS]
    assert len(names) >= 30
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_breakage_applies_once_and_names_existing_tests(mutation):
    source = (ROOT / mutation.file).read_text(encoding="utf-8")
    assert source.count(mutation.old) == 1, f"{mutation.file} moved: update it"
    assert mutation.old != mutation.new
    assert mutation.tests
    for node_id in mutation.tests:
        file, _, name = node_id.partition("::")
        assert (ROOT / file).is_file(), node_id
        assert name.split("[")[0] in _test_names(ROOT / file), node_id
