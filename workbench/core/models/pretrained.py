"""Pretrained weights in torch's hub cache: found there, or downloaded with progress.

The cache is torchvision's own (``$TORCH_HOME/hub/checkpoints``, file names as
in the weights' URL), so a file torchvision downloaded is used here and the
other way round. A download reports progress, polls Cancel, checks the SHA-256
prefix torchvision puts in the file name, and lands atomically. The file is
read with ``weights_only=True``: nothing in it is unpickled as code.
``PTCORE_WEIGHTS_MIRROR`` replaces the server part of the URL (tests, mirrors).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import torch
import torch.hub

from workbench.core.data.download import FetchFailed, fetch_file
from workbench.core.data.registry import (
    CancelCallback,
    DataError,
    DownloadCancelled,
    DownloadProgress,
    ProgressCallback,
)

MIRROR_ENV = "PTCORE_WEIGHTS_MIRROR"
_CHUNK_BYTES = 256 * 1024
_HASH_PREFIX = re.compile(r"-([a-f0-9]{6,})\.")


class WeightsError(DataError):
    """Weights that cannot be had; the text names the file and where it belongs."""


def cache_dir() -> Path:
    """Where torchvision keeps downloaded weights: ``$TORCH_HOME/hub/checkpoints``."""
    return Path(torch.hub.get_dir()) / "checkpoints"


def cached_path(url: str) -> Path:
    return cache_dir() / os.path.basename(url)


def load_pretrained_state(
    member: Any,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
    download: bool = True,
) -> dict[str, torch.Tensor]:
    """The state_dict of torchvision weights ``member``, from the cache or the net.

    Raises
    ------
    WeightsError
        Offline (or ``download`` False) without the file, a bad download, or a
        file that is not a state_dict.
    DownloadCancelled
        When ``cancel()`` turns true mid-download.
    """
    url: str = member.url
    path = cached_path(url)
    if not path.is_file():
        if not download:
            raise WeightsError(_missing_message(member, path, "downloads are off"))
        _download(member, url, path, progress, cancel)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise WeightsError(
            f"{path} is not a weights file torch can read safely ({exc}); delete "
            "it and the weights are downloaded again"
        ) from exc
    if not isinstance(state, dict) or not all(
        isinstance(v, torch.Tensor) for v in state.values()
    ):
        raise WeightsError(f"{path} does not hold a state_dict of tensors")
    return state


def _missing_message(member: Any, path: Path, reason: str) -> str:
    return (
        f"The pretrained weights {type(member).__name__}.{member.name} are not on "
        f"this computer and cannot be downloaded ({reason}). Put {path.name} "
        f"(from {member.url}) in {path.parent} and try again, or choose weights none."
    )


def _source_url(url: str) -> str:
    mirror = os.environ.get(MIRROR_ENV)
    if not mirror:
        return url
    return mirror.rstrip("/") + "/" + os.path.basename(url)


def _download(
    member: Any,
    url: str,
    path: Path,
    progress: ProgressCallback | None,
    cancel: CancelCallback | None,
) -> None:
    source = _source_url(url)
    name = f"{type(member).__name__}.{member.name}"

    def report(done: int, total: int | None) -> None:
        if progress is not None:
            progress(DownloadProgress(name, path.name, 1, 1, done, total))

    def check_cancel() -> None:
        if cancel is not None and cancel():
            raise DownloadCancelled(f"Download of {name} cancelled.")

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fetch_file(
            source,
            path,
            report=report,
            check_cancel=check_cancel,
            corrupt=lambda tmp: _damaged(tmp, path.name),
        )
    except FetchFailed as failure:
        if failure.kind == "corrupted":
            raise WeightsError(
                f"The download of {path.name} from {source} is damaged "
                f"({failure.reason}); nothing was kept."
            ) from failure
        joint = "from" if failure.kind == "http" else "for"
        reason = f"{failure.reason} {joint} {source}"
        raise WeightsError(_missing_message(member, path, reason)) from failure
    except OSError as exc:
        raise WeightsError(f"cannot write to {path.parent}: {exc}") from exc


def _damaged(file: Path, name: str) -> str | None:
    """Why ``file`` is not the published ``name``: its name carries a hash prefix."""
    match = _HASH_PREFIX.search(name)
    if match is None:
        return None
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        while chunk := handle.read(_CHUNK_BYTES):
            digest.update(chunk)
    if not digest.hexdigest().startswith(match.group(1)):
        return f"its SHA-256 does not start with {match.group(1)}"
    return None
