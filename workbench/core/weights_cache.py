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
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import torch
import torch.hub

from workbench.core.data.registry import (
    CancelCallback,
    DataError,
    DownloadCancelled,
    DownloadProgress,
    ProgressCallback,
)

MIRROR_ENV = "PTCORE_WEIGHTS_MIRROR"
_CHUNK_BYTES = 256 * 1024
_TIMEOUT_S = 30
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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".part"
        )
    except OSError as exc:
        raise WeightsError(f"cannot write to {path.parent}: {exc}") from exc
    tmp = Path(tmp_name)
    source = _source_url(url)
    name = f"{type(member).__name__}.{member.name}"
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            try:
                request = urllib.request.Request(source)
                with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
                    length = response.headers.get("Content-Length")
                    total = int(length) if length and length.isdigit() else None
                    done = 0
                    while chunk := response.read(_CHUNK_BYTES):
                        if cancel is not None and cancel():
                            raise DownloadCancelled(f"Download of {name} cancelled.")
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(
                                DownloadProgress(name, path.name, 1, 1, done, total)
                            )
            except urllib.error.HTTPError as exc:
                exc.close()
                reason = f"HTTP {exc.code} {exc.reason} from {source}"
                raise WeightsError(_missing_message(member, path, reason)) from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = f"{getattr(exc, 'reason', exc)} for {source}"
                raise WeightsError(_missing_message(member, path, reason)) from exc
        if total is not None and done != total:
            reason = f"the connection closed after {done} of {total} bytes"
            raise WeightsError(_missing_message(member, path, reason))
        match = _HASH_PREFIX.search(path.name)
        if match and not digest.hexdigest().startswith(match.group(1)):
            raise WeightsError(
                f"The download of {path.name} from {source} is damaged (its SHA-256 "
                f"does not start with {match.group(1)}); nothing was kept."
            )
        os.replace(tmp, path)
    except OSError as exc:
        raise WeightsError(f"cannot write {path}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
