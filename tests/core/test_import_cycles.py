"""No module of ``workbench`` imports itself through others (no import cycle).

Every import counts, also one inside a function: moving an import into a function
hides a cycle from Python's loader, not from the reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import workbench

PACKAGE = Path(workbench.__file__).parent


def module_files(package: Path) -> dict[str, Path]:
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that module ``name`` imports (submodule or owner)."""
    is_package = path.name == "__init__.py"
    targets: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            targets += [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                for a in node.names
            ]
    found = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target not in (name, "workbench"):
            found.add(target)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = module_files(package)
    return {
        name: imported_modules(name, path, set(modules))
        for name, path in modules.items()
    }


def test_workbench_has_no_import_cycle():
    cycle = find_cycle(import_graph(PACKAGE))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import thing\n")
    (package / "b.py").write_text("def thing():\n    from pkg import a\n    return a\n")
    (package / "c.py").write_text("from . import a\n")
    assert find_cycle(import_graph(package)) == ["pkg.a", "pkg.b", "pkg.a"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from workbench.core.data import loaders", {"workbench.core.data.loaders"}),
        ("from workbench.core.data import FastLoader", {"workbench.core.data"}),
        ("from .registry import DataError", {"workbench.core.data.registry"}),
        (
            "import workbench.core.train.engine as engine",
            {"workbench.core.train.engine"},
        ),
        ("import torch", set()),
    ],
)
def test_imports_resolve_to_modules(tmp_path, source, expected):
    path = tmp_path / "build.py"
    path.write_text(source + "\n")
    known = set(module_files(PACKAGE))
    assert imported_modules("workbench.core.data.build", path, known) == expected
