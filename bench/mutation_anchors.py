"""Find where a breakage of ``bench/mutations.py`` applies, by qualified name.

An anchor names a definition in ``workbench/`` (or ``bench/``):

- ``RunRecorder.on_event``: a qualified name that is unique in the package;
- ``workbench.core.runs.recorder:RunRecorder.on_event``: one module's definition,
  for a name that several modules define (``main``, ``_on_step``);
- ``workbench.core.config:`` (nothing after the colon): a whole module, for text
  at module level that belongs to no definition (imports).

Definitions are functions, classes and names assigned at module or class level
(a function's local names are part of it),
found through the AST, so moving a file or editing another function does not
stale an anchor. A breakage's ``old`` text must occur exactly once inside the
definition its anchor names.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

# The product, and the benches that check a GPU machine (device_check.py).
FOLDERS = ("workbench", "bench")


@dataclass(frozen=True)
class Definition:
    """One definition: its module, file, qualified name and its source span."""

    module: str
    file: Path
    qualname: str
    start: int
    end: int


def _line_offsets(source: str) -> list[int]:
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def _definitions(module: str, file: Path, source: str) -> list[Definition]:
    tree = ast.parse(source)
    lines = _line_offsets(source)
    found = [Definition(module, file, "", 0, len(source))]

    def span(node: ast.AST) -> tuple[int, int]:
        decorators = getattr(node, "decorator_list", ())
        first = min([node.lineno, *(d.lineno for d in decorators)])
        # To the end of the last line, so an ``old`` text may end with its newline.
        return lines[first - 1], lines[node.end_lineno]

    def walk(body: list[ast.stmt], prefix: str, in_function: bool = False) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + node.name
                found.append(Definition(module, file, name, *span(node)))
                inner = in_function or not isinstance(node, ast.ClassDef)
                walk(node.body, name + ".", inner)
            elif isinstance(node, ast.Assign | ast.AnnAssign) and not in_function:
                is_assign = isinstance(node, ast.Assign)
                targets = node.targets if is_assign else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        found.append(
                            Definition(module, file, prefix + target.id, *span(node))
                        )
            elif isinstance(node, ast.If | ast.Try | ast.With):
                # Definitions under `if TYPE_CHECKING:` or `try: import` blocks.
                for part in ("body", "orelse", "finalbody"):
                    walk(getattr(node, part, []), prefix, in_function)
                for handler in getattr(node, "handlers", []):
                    walk(handler.body, prefix, in_function)

    walk(tree.body, "")
    return found


def index(root: Path) -> list[Definition]:
    """Every definition of the product and bench code under ``root``."""
    found: list[Definition] = []
    files = [f for folder in FOLDERS for f in sorted((root / folder).rglob("*.py"))]
    for file in files:
        relative = file.relative_to(root)
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.extend(
            _definitions(".".join(parts), relative, file.read_text(encoding="utf-8"))
        )
    return found


class AnchorError(LookupError):
    """An anchor names no definition, or several."""


def resolve(anchor: str, definitions: list[Definition]) -> Definition:
    """The one definition ``anchor`` names, or :class:`AnchorError`."""
    module, colon, qualname = anchor.rpartition(":")
    if colon:
        matches = [
            d for d in definitions if d.module == module and d.qualname == qualname
        ]
    else:
        matches = [d for d in definitions if d.qualname == qualname and qualname]
    if not matches:
        raise AnchorError(f"{anchor!r} names no definition")
    if len({(d.start, d.end, d.file) for d in matches}) > 1:
        where = ", ".join(sorted({f"{d.module}:{d.qualname}" for d in matches}))
        raise AnchorError(f"{anchor!r} is ambiguous: {where}")
    return matches[0]


def locate(anchor: str, old: str, root: Path, definitions: list[Definition]):
    """The file and the offset of ``old`` inside the definition ``anchor`` names.

    Raises :class:`AnchorError` unless ``old`` occurs exactly once there.
    """
    definition = resolve(anchor, definitions)
    source = (root / definition.file).read_text(encoding="utf-8")
    body = source[definition.start : definition.end]
    count = body.count(old)
    if count != 1:
        raise AnchorError(
            f"{anchor!r}: its text occurs {count} times in "
            f"{definition.module}:{definition.qualname or '(module)'}"
        )
    return definition.file, definition.start + body.index(old)


def apply(anchor: str, old: str, new: str, root: Path, definitions: list[Definition]):
    """Replace ``old`` by ``new`` where ``anchor`` says; the file and its old text."""
    file, offset = locate(anchor, old, root, definitions)
    path = root / file
    original = path.read_text(encoding="utf-8")
    path.write_text(original[:offset] + new + original[offset + len(old) :])
    return path, original


def stale(mutations, root: Path) -> list[str]:
    """One line for every breakage whose anchor or tests no longer hold."""
    definitions = index(root)
    problems = []
    for m in mutations:
        try:
            locate(m.where, m.old, root, definitions)
        except AnchorError as exc:
            problems.append(f"{m.name}: {exc}")
        if m.old == m.new:
            problems.append(f"{m.name}: old and new are the same")
        if not m.tests:
            problems.append(f"{m.name}: names no test")
        for node_id in m.tests:
            file, _, name = node_id.partition("::")
            path = root / file
            if not path.is_file():
                problems.append(f"{m.name}: no test file {file}")
            elif name and name.split("[")[0] not in _test_names(path):
                problems.append(f"{m.name}: no test {node_id}")
    return problems


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def anchor_for(file: Path, offset: int, length: int, definitions) -> str:
    """The shortest anchor of the innermost definition around a span of ``file``."""
    around = [
        d
        for d in definitions
        if d.file == file and d.start <= offset and offset + length <= d.end
    ]
    inner = min(around, key=lambda d: d.end - d.start)
    same_name = {
        (d.module, d.start) for d in definitions if d.qualname == inner.qualname
    }
    if inner.qualname and len(same_name) == 1:
        return inner.qualname
    return f"{inner.module}:{inner.qualname}"
