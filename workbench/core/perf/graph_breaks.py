"""torch.compile explained: graph breaks with their file and line, and recompiles.

:func:`explain_graph_breaks` traces a copy of the model once with Dynamo and
lists where the graph breaks, pointing at the user's own source line.
:func:`watch_recompiles` collects Dynamo's ``recompiles`` log while a block runs
(a few training steps) and says in plain words what caused each recompile.
:func:`report_lines` is the text a user reads, in the CLI and in the window.

Why not ``torch._dynamo.explain`` itself: it calls ``torch._dynamo.reset()``
before and after, which drops every compiled graph in the process, so a model
compiled for training compiles all over again on its next step (measured: 22 s
for the small CNN on the 2-core CPU). A child process would keep the trainer's
caches safe but needs the user's model class importable there and a fresh
``import torch``. So the trace runs here, the way ``explain`` does it (a
backend that keeps each graph's ``compile_subgraph_reason``), but in a cache
region of its own (``isolate_recompiles=True``) with a backend no training
model shares: its entries are never used by, and never counted as recompiles
of, the trainer's compiled code, and nothing is reset.
"""

from __future__ import annotations

import copy
import linecache
import logging
import os
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import torch
import torch._dynamo
import torch._dynamo.pgo
from torch import nn

# A frame in these files is torch's, not the user's (nor this module's own call).
_NOT_USER = (os.path.dirname(torch.__file__) + os.sep, os.path.abspath(__file__))

BATCH_SIZE = "a batch of another size (the epoch's partial last batch?)"
SHAPE = "an input of another shape (another image size?)"
NUMBER = "a Python number that changed (a scheduler value?)"
MODE = "train/eval or grad mode switched (validation?)"
OTHER = "other"


@dataclass(frozen=True, slots=True)
class GraphBreak:
    """Where torch.compile splits the model's graph, and why.

    Parameters
    ----------
    reason : str
        Dynamo's headline, e.g. ``Unsupported Tensor.item() call ...``.
    file, line : str, int
        The user's source line that broke (innermost frame outside torch).
    code : str
        That line's text, stripped.
    detail : str
        Dynamo's explanation, when it gives one; mentions a skipped function.
    """

    reason: str
    file: str
    line: int
    code: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Recompile:
    """One recompile: the guard that failed and a plain-English cause.

    ``where`` is the user's source line the guard came from, when Dynamo says.
    """

    reason: str
    cause: str
    where: str = ""


@dataclass(frozen=True, slots=True)
class CompileReport:
    """What torch.compile made of a model: graphs, breaks, recompiles, or an error.

    ``epoch_walked``: the recompiles are those of a walk through an epoch's
    batch sizes and modes (none found is then news worth saying).
    """

    graphs: int
    breaks: tuple[GraphBreak, ...]
    recompiles: tuple[Recompile, ...] = ()
    error: str = ""
    epoch_walked: bool = False


def explain_graph_breaks(model: nn.Module, example: torch.Tensor) -> CompileReport:
    """Trace ``model`` on ``example`` with Dynamo; its graph breaks, deduplicated.

    Runs one forward pass of an uncompiled deep copy (BatchNorm statistics stay
    untouched; the copy costs the model's memory once more) in an isolated
    cache region, static shapes, with a backend that runs the graphs eagerly:
    no inductor, no effect on the trainer's compiled code or its recompile
    count. A break is placed at the innermost frame outside torch, the user's
    line that called into torch's code when the break is in there.

    Do not call it while another thread compiles: Dynamo's logging settings and
    the compile-time config it patches are process-wide.

    Parameters
    ----------
    model : nn.Module
        The model as trained: plain, compiled in place, or ``torch.compile``'s
        wrapper (its ``_orig_mod`` is traced).
    example : torch.Tensor
        A batch on the model's device; its size is traced as a constant.

    Returns
    -------
    CompileReport
        The graphs compiled and the breaks in the order met; a failure (the
        forward raising, Dynamo's own errors) in ``error``, with the breaks
        found before it, rather than raised.
    """
    source = getattr(model, "_orig_mod", model)  # torch.compile(model)'s wrapper
    graphs = 0

    def count_graphs(gm: torch.fx.GraphModule, _inputs: object) -> object:
        nonlocal graphs
        graphs += 1
        return gm.forward

    reasons = torch._dynamo.utils.graph_break_reasons  # appended by Dynamo
    start, logged, error = len(reasons), _Capture(), ""
    try:
        with _captured("graph_breaks", logged), dynamo_notes_kept():
            # nn.Module's __getstate__ drops an in-place model.compile().
            twin = copy.deepcopy(source)
            compiled = torch.compile(
                twin, backend=count_graphs, dynamic=False, isolate_recompiles=True
            )
            compiled(example)
    except Exception as exc:  # the report carries it, with the breaks before it
        error = f"{type(exc).__name__}: {exc}"
    found = [_from_reason(r.reason, r.user_stack) for r in reasons[start:]]
    # Functions Dynamo skips whole (a break inside a loop) are only in its log.
    found += [_from_log(message) for message in logged.messages]
    unique: dict[tuple[str, int, str], GraphBreak] = {}
    for brk in filter(None, found):
        unique.setdefault((brk.file, brk.line, brk.reason), brk)
    return CompileReport(graphs, tuple(unique.values()), error=error)


@contextmanager
def dynamo_notes_kept(*, start_empty: bool = False) -> Iterator[None]:
    """Put Dynamo's per-code notes of the sizes it has seen back as they were.

    Dynamo keeps them per code object, shared by every model of a class (and
    by ``dynamic=False`` compiles too): a size seen while explaining would
    make the trainer's next compile of that class dynamic from its first step.
    ``start_empty``: the block starts with none, as a new process does.
    """
    state = torch._dynamo.pgo.get_code_state()
    saved = copy.deepcopy(state)
    if start_empty:
        state.clear()
    try:
        yield
    finally:
        state.clear()
        state.update(saved)


class RecompileWatch:
    """What :func:`watch_recompiles` saw; read ``recompiles`` during or after."""

    def __init__(self, capture: _Capture) -> None:
        self._capture = capture

    @property
    def recompiles(self) -> tuple[Recompile, ...]:
        """The recompiles so far, oldest first."""
        return tuple(parse_recompile(m) for m in self._capture.messages)


@contextmanager
def watch_recompiles() -> Iterator[RecompileWatch]:
    """Collect Dynamo's ``recompiles`` log records while the block runs.

    Nothing is printed (unless the user asked for the log, e.g.
    ``TORCH_LOGS=recompiles``, which keeps printing) and the log settings are
    as before afterwards.

    Examples
    --------
    >>> with watch_recompiles() as watch:  # doctest: +SKIP
    ...     train_a_few_steps()
    >>> watch.recompiles  # doctest: +SKIP
    """
    with _captured("recompiles") as capture, ExitStack() as stack:
        # Dynamo writes to the verbose log instead when the user turned it on.
        if _enabled("recompiles_verbose"):
            stack.enter_context(_captured("recompiles_verbose", capture))
        yield RecompileWatch(capture)


def parse_recompile(message: str) -> Recompile:
    """A ``Recompiling function ...`` log message as a :class:`Recompile`.

    The first guard failure listed is the newest cache entry's, the one Dynamo
    itself reports as the reason.
    """
    failure, stack = "", []
    for raw in message.splitlines()[2:]:
        text = raw.strip().removeprefix("-").strip()
        entry = re.match(r"\S*\d+/\d+\S*: (.*)", text)
        if entry and failure:
            break  # only the newest entry's failure and stack
        if entry:
            failure = re.split(r"\s+#\s", entry.group(1), maxsplit=1)[0].strip()
        frame = re.match(r'File "(.+)", line (\d+)', text)
        if frame:
            stack.append((frame.group(1), int(frame.group(2))))
    users = [(f, n) for f, n in stack if not f.startswith(_NOT_USER)]
    where = f"{users[-1][0]}:{users[-1][1]}" if users else ""
    return Recompile(failure or message.strip(), recompile_cause(failure), where)


def recompile_cause(reason: str) -> str:
    """Classify a guard failure: batch size, shape, Python number, mode, other."""
    size = re.search(r"size mismatch at index (\d+)", reason)
    if size:
        return BATCH_SIZE if size.group(1) == "0" else SHAPE
    if "GLOBAL_STATE changed: grad_mode" in reason or ".training == " in reason:
        return MODE
    if re.fullmatch(r"\S+ == [-+]?(\d+\.?\d*(e[-+]?\d+)?|inf|nan)", reason):
        return NUMBER
    return OTHER


def report_lines(report: CompileReport) -> list[str]:
    """The plain text a user reads about a :class:`CompileReport`."""
    lines = []
    if report.error:
        first = report.error.splitlines()[0]
        lines.append(f"torch.compile could not trace the model: {first}")
    elif not report.breaks:
        lines.append("no graph breaks: the model compiles to one graph")
    if report.breaks:
        count = len(report.breaks)
        graphs = f"{report.graphs} graph{'s' if report.graphs != 1 else ''}"
        lines.append(f"{count} graph break{'s' if count != 1 else ''} ({graphs}):")
    for brk in report.breaks:
        place = f"{os.path.basename(brk.file)}:{brk.line}"
        lines.append(f"  {place}  {brk.code}  \u2014 {brk.reason}")
        if brk.detail:
            lines.append(f"      {brk.detail}")
    seen = Counter(report.recompiles)
    over = " over an epoch's batch sizes and modes" if report.epoch_walked else ""
    if seen:
        total = len(report.recompiles)
        lines.append(f"{total} recompile{'s' if total != 1 else ''}{over}:")
    elif report.epoch_walked:
        lines.append(f"no recompiles{over}")
    for item, times in seen.items():
        where = f" ({os.path.basename(item.where)})" if item.where else ""
        again = f" \u00d7{times}" if times > 1 else ""
        lines.append(f"  {item.cause}: {item.reason}{where}{again}")
    return lines


def _from_reason(reason: str, stack: list) -> GraphBreak | None:
    """A break from Dynamo's reason text and user stack (``FrameSummary``s)."""
    frames = [(f.filename, f.lineno or 0) for f in stack]
    return _graph_break(reason, frames)


def _from_log(message: str) -> GraphBreak | None:
    """A break from a ``graph_breaks`` log record; only functions skipped whole.

    The others are in ``graph_break_reasons`` with their frames already.
    """
    head = re.match(r"Graph break.*? in user code at (.+):(\d+)\n", message)
    if head is None or "Skipping the function" not in message:
        return None
    reason, _, traceback = message.split("Graph Break Reason:", 1)[-1].partition(
        "User code traceback:"
    )
    frames = [
        (m.group(1), int(m.group(2)))
        for m in re.finditer(r'File "(.+)", line (\d+)', traceback)
    ] or [(head.group(1), int(head.group(2)))]
    skipped = "torch.compile skips this whole function and runs it eagerly"
    brk = _graph_break(reason, frames)
    return None if brk is None else _with_detail(brk, skipped)


def _graph_break(reason: str, frames: list[tuple[str, int]]) -> GraphBreak | None:
    """The user's innermost frame, and Dynamo's reason cut to its headline."""
    if not frames:
        return None
    users = [frame for frame in frames if not frame[0].startswith(_NOT_USER)]
    file, line = (users or frames)[-1]
    headline, detail = _headline(reason)
    code = linecache.getline(file, line).strip()
    return GraphBreak(headline, file, line, code, detail)


def _headline(reason: str) -> tuple[str, str]:
    """Dynamo's first real sentence and its ``Explanation:`` line.

    Its text leads with framing such as ``Encountered graph break when
    attempting to trace CALL ...:`` before a blank line; those end in a colon.
    """
    blocks = [b.strip() for b in reason.strip().split("\n\n") if b.strip()]
    body = next((b for b in blocks if not b.endswith(":")), reason.strip())
    lines = [line.strip() for line in body.splitlines()]
    detail = next((x for x in lines if x.startswith("Explanation:")), "")
    return lines[0] if lines else "", detail.removeprefix("Explanation:").strip()


def _with_detail(brk: GraphBreak, note: str) -> GraphBreak:
    detail = f"{note}. {brk.detail}" if brk.detail else note
    return GraphBreak(brk.reason, brk.file, brk.line, brk.code, detail)


class _Capture(logging.Handler):
    """Keeps the formatted messages of the records it is handed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _enabled(artifact: str) -> bool:
    return torch._logging._internal.log_state.is_artifact_enabled(artifact)


@contextmanager
def _captured(artifact: str, capture: _Capture | None = None) -> Iterator[_Capture]:
    """Turn a torch log artifact on into ``capture`` alone; put everything back.

    Dynamo checks ``log_state`` before building a message, and each artifact
    logger (``torch._dynamo.guards.__recompiles``) hands records up to the
    ``torch`` loggers' stderr handlers when it propagates: so while capturing
    the artifact is enabled and does not propagate, unless the user had it on.
    """
    capture = capture or _Capture()
    state = torch._logging._internal.log_state
    was_on = state.is_artifact_enabled(artifact)
    registry = torch._logging._internal.log_registry
    suffix = f".__{artifact}"
    loggers = [
        logging.getLogger(name)
        for name in registry.get_artifact_log_qnames()
        if name.endswith(suffix)
    ]
    saved = [(log, log.level, log.propagate) for log in loggers]
    for log in loggers:
        log.addHandler(capture)
        if not was_on:
            log.setLevel(logging.DEBUG)
            log.propagate = False
    state.enable_artifact(artifact)
    try:
        yield capture
    finally:
        if not was_on:
            state.artifact_names.discard(artifact)
        for log, level, propagate in saved:
            log.removeHandler(capture)
            log.setLevel(level)
            log.propagate = propagate
