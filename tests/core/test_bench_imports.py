"""``bench/`` and ``scripts/`` name only what exists in ``workbench``.

No test runs most of them, so a module moved or renamed in the product would
break them silently (the screenshot scripts once imported ``workbench.ui``'s
``window_state`` after it had become ``workbench.ui.window.state``). Checked
by reading the files: nothing of them runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.core.test_import_cycles import PACKAGE, module_files

ROOT = PACKAGE.parent
MODULES = module_files(PACKAGE)
SCRIPTS = sorted([*ROOT.glob("bench/*.py"), *ROOT.glob("scripts/*.py")])


def top_level_names(path: Path) -> set[str]:
    """What ``from module import NAME`` can take from the module at ``path``."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If | ast.Try):  # TYPE_CHECKING, fallbacks
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import | ast.ImportFrom):
                    names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
    return names


def missing_names(path: Path) -> list[str]:
    """Each ``workbench`` import in ``path`` that names nothing that exists."""
    missing = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wanted = [a.name for a in node.names if a.name.startswith("workbench")]
            missing += [name for name in wanted if name not in MODULES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            module = node.module or ""
            if not module.startswith("workbench"):
                continue
            if module not in MODULES:
                missing.append(module)
                continue
            defined = top_level_names(MODULES[module])
            for alias in node.names:
                if (
                    f"{module}.{alias.name}" not in MODULES
                    and alias.name not in defined
                ):
                    missing.append(f"{module}:{alias.name}")
    return missing


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_workbench_name_a_bench_or_script_imports_exists(path: Path) -> None:
    assert missing_names(path) == []


def test_a_moved_name_is_reported(tmp_path: Path) -> None:
    script = tmp_path / "old.py"
    script.write_text(
        "from workbench.ui import window_state\n"
        "from workbench.core.train.engine import fit, no_such_function\n"
        "import workbench.core.doctor\n"
    )
    assert missing_names(script) == [
        "workbench.ui:window_state",
        "workbench.core.train.engine:no_such_function",
        "workbench.core.doctor",
    ]
