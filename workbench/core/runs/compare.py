"""Comparing runs: which config fields differ between them."""

from __future__ import annotations

import json
from typing import Any


def config_differences(configs: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The config fields whose values differ between ``configs``, with each value."""
    keys = sorted({k for cfg in configs for k in cfg} - {"schema_version"})
    return {
        key: [cfg.get(key) for cfg in configs]
        for key in keys
        if len({json.dumps(cfg.get(key), sort_keys=True) for cfg in configs}) > 1
    }
