"""Checkpoints: state_dicts and builtins only, loaded with weights_only=True.

io       saving (atomically) and loading checkpoints, restoring a run from one
schema   the types each field must have, checked once where a file is read
report   what a checkpoint holds, in lines a person can read (inspect)
"""

__all__ = [
    "io",
    "report",
    "schema",
]
