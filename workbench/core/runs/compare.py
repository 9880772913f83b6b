"""Comparing runs: which config fields differ between them, and how they scored."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from workbench.core.runs.listing import RunSummary

SCORE_ROWS = ("macro F1", "weighted F1")
"""The rows :func:`score_rows` gives, in order."""


def config_differences(configs: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The config fields whose values differ between ``configs``, with each value."""
    keys = sorted({k for cfg in configs for k in cfg} - {"schema_version"})
    return {
        key: [cfg.get(key) for cfg in configs]
        for key in keys
        if len({json.dumps(cfg.get(key), sort_keys=True) for cfg in configs}) > 1
    }


def score_rows(runs: Sequence[RunSummary]) -> dict[str, list[float | None]]:
    """Each run's macro and weighted F1 of its last validation, by row name.

    None for a run that has none (an older run, one that never validated);
    no rows at all when no run has them.
    """
    if all(r.macro_f1 is None and r.weighted_f1 is None for r in runs):
        return {}
    return {
        SCORE_ROWS[0]: [r.macro_f1 for r in runs],
        SCORE_ROWS[1]: [r.weighted_f1 for r in runs],
    }
