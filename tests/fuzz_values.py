"""What the seeded fuzz tests put where a field's value belongs."""

from __future__ import annotations

from typing import Any

# One value of each JSON type; a field gets every type but its own.
WRONG: dict[str, Any] = {
    "list": [1, 2],
    "str": "x",
    "int": 7,
    "float": 0.5,
    "None": None,
    "dict": {"a": 1},
    "bool": True,
}
