"""A compiled run says when torch.compile compiled again, and why.

The engine already says when a batch of a new size compiles; Dynamo also
recompiles for reasons it does not see (validation's grad mode, a Python number
that changed). Its ``recompiles`` log is watched for the whole run, and each
recompile becomes a notice at the next epoch's end or compile, with its cause.
"""

from __future__ import annotations

from collections.abc import Iterator

from workbench.core.events import (
    CompileFinished,
    EpochMetrics,
    Notice,
    TrainEvent,
    TrainResult,
)
from workbench.core.perf.graph_breaks import Recompile, watch_recompiles


def with_recompile_notices(events: Iterator[TrainEvent]) -> Iterator[TrainEvent]:
    """``events``, with a notice for each recompile Dynamo logged among them."""
    with watch_recompiles() as watch:
        said = 0
        for event in events:
            if isinstance(event, TrainResult | EpochMetrics | CompileFinished):
                found = watch.recompiles
                for recompile in found[said:]:
                    yield Notice(recompile_text(recompile))
                said = len(found)
            yield event


def recompile_text(recompile: Recompile) -> str:
    """One recompile in words: its cause, the guard that failed, and where."""
    where = f" ({recompile.where})" if recompile.where else ""
    return f"torch.compile compiled again: {recompile.cause}: {recompile.reason}{where}"
