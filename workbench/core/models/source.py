"""Whether a model file changed since a run or checkpoint was made from it.

A run of ``path/to/file.py:Name`` keeps the file's SHA-256 in its checkpoints
and its ``run.json`` (:data:`SHA_KEY`). Opening or resuming the checkpoint, and
reproducing the run, compare it with the file as it is now: a changed file may
build another model, so the user is told (and Reproduce refuses).
"""

from __future__ import annotations

from torch import nn

from workbench.core.models.catalog import is_model_file
from workbench.core.models.user_file import ModelFileError, parse_spec

SHA_KEY = "model_file_sha256"


def model_sha(model: nn.Module) -> str | None:
    """The SHA-256 of the file ``model`` was built from; None for other models."""
    sha = getattr(model, SHA_KEY, None)
    return sha if isinstance(sha, str) else None


def model_file_change(spec: str, recorded: object, made: str) -> str | None:
    """Why ``spec``'s file is not the one ``made`` was built from; None if it is.

    ``made`` names what recorded the hash ("checkpoint x.pt", "run 2026...").
    None as well for models that are not files.
    """
    if not is_model_file(spec):
        return None
    path = spec.rpartition(":")[0]
    try:
        now = parse_spec(spec).sha256
    except ModelFileError as exc:
        return f"the model file of {made} cannot be read now: {exc}"
    if not isinstance(recorded, str):
        return (
            f"{made} does not record the hash of {path}: whether the file changed "
            "since cannot be told"
        )
    if now != recorded:
        return (
            f"{path} changed since {made} was made from it (SHA-256 "
            f"{recorded[:12]} then, {now[:12]} now): it may build another model"
        )
    return None
