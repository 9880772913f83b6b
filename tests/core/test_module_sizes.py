"""No module of ``workbench`` is so long that it must have more than one job.

A module past ~600 lines does several things: split it along its seams. The main
window only builds and wires what others own, so it stays under 500 lines.
"""

from __future__ import annotations

from pathlib import Path

import workbench

PACKAGE = Path(workbench.__file__).parent
MAX_LINES = 600
MAX_MAIN_WINDOW_LINES = 499


def line_counts(package: Path) -> dict[str, int]:
    """Lines of every ``.py`` file under ``package``, by path relative to its parent."""
    return {
        path.relative_to(package.parent).as_posix(): len(
            path.read_text(encoding="utf-8").splitlines()
        )
        for path in sorted(package.rglob("*.py"))
    }


def too_long(counts: dict[str, int], limit: int) -> list[str]:
    """``"path: N lines"`` for each file over ``limit`` lines, longest first."""
    over = sorted(((n, path) for path, n in counts.items() if n > limit), reverse=True)
    return [f"{path}: {n} lines" for n, path in over]


def test_no_module_is_over_600_lines():
    offenders = too_long(line_counts(PACKAGE), MAX_LINES)
    assert not offenders, f"over {MAX_LINES} lines, split them: " + "; ".join(offenders)


def test_the_main_window_is_under_500_lines():
    counts = line_counts(PACKAGE)
    offenders = too_long(
        {"workbench/ui/main_window.py": counts["workbench/ui/main_window.py"]},
        MAX_MAIN_WINDOW_LINES,
    )
    assert not offenders, "the main window only wires others: " + "; ".join(offenders)


def test_the_offenders_are_named(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "short.py").write_text("x = 1\n" * 600)
    (package / "sub" / "long.py").write_text("x = 1\n" * 601)
    (package / "longer.py").write_text("x = 1\n" * 700)
    counts = line_counts(package)
    assert counts["pkg/short.py"] == 600
    assert too_long(counts, 600) == [
        "pkg/longer.py: 700 lines",
        "pkg/sub/long.py: 601 lines",
    ]
