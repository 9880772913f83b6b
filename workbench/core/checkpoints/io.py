"""Versioned checkpoints: written atomically, read without unpickling code.

A checkpoint holds only tensors and Python builtins, so it loads with
``torch.load(weights_only=True)``: a file that would run code is refused.
"""

from __future__ import annotations

import errno
import pickle
import random
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

import workbench
from workbench.core.atomic_files import torch_save, write_atomically
from workbench.core.checkpoints.schema import SchemaError, check_like, check_payload
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.registry import (
    DataError,
    DatasetInfo,
    DownloadProgress,
    ImageArrays,
    dataset_info,
)
from workbench.core.distributed.ddp import restore_rank_rng
from workbench.core.distributed.env import world_size
from workbench.core.models.builtins import build_unseeded
from workbench.core.models.source import SHA_KEY, model_sha
from workbench.core.models.state_dict_match import (
    WeightsMismatch,
    load_exact,
    strip_wrapper_prefixes,
)
from workbench.core.train.engine import prepare_run
from workbench.core.train.freezing import frozen_names, match_patterns
from workbench.core.training_run import MetricHistory, TrainingRun

__all__ = [
    "FORMAT_VERSION",
    "CheckpointError",
    "checkpoint_dict",
    "config_of",
    "load_checkpoint",
    "load_model_state",
    "load_weights_file",
    "restore_run",
    "save_checkpoint",
    "strip_wrapper_prefixes",
    "write_checkpoint",
]

# 2: adds "data_order", the sample order of the epoch the run stopped in.
FORMAT_VERSION = 3
_REQUIRED_KEYS = ("format_version", "model_state", "config", "epoch", "global_step")


class CheckpointError(Exception):
    """A checkpoint that cannot be written or used; the text says why."""


def _numpy_state() -> dict[str, Any]:
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    return {
        "kind": kind,
        "keys": torch.from_numpy(keys.astype(np.int64)),
        "pos": int(pos),
        "has_gauss": int(has_gauss),
        "gauss": float(gauss),
    }


def _set_numpy_state(state: dict[str, Any]) -> None:
    keys = state["keys"].numpy().astype(np.uint32)
    np.random.set_state(
        (state["kind"], keys, state["pos"], state["has_gauss"], state["gauss"])
    )


def rng_states() -> dict[str, Any]:
    """Python, NumPy, torch (and CUDA) RNG states as checkpoint-safe values."""
    states: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": _numpy_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: dict[str, Any]) -> None:
    """Restore what :func:`rng_states` captured."""
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))
    _set_numpy_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        # One state per GPU of the saving machine: this one may have fewer.
        torch.cuda.set_rng_state_all(states["cuda"][: torch.cuda.device_count()])


def _config_with_current_mask(run: TrainingRun) -> TrainConfig:
    """The run's config, its freeze patterns replaced if the mask was edited since."""
    names = frozen_names(run.model)
    if set(names) == match_patterns(run.model, run.config.frozen):
        return run.config
    return run.config.replace(frozen=tuple(names))


def checkpoint_dict(run: TrainingRun) -> dict[str, Any]:
    """A snapshot of ``run`` as tensors and builtins."""
    return {
        "format_version": FORMAT_VERSION,
        "model_state": run.model.state_dict(),
        "optimizer_state": run.optimizer.state_dict(),
        "scheduler_state": run.scheduler.state_dict() if run.scheduler else None,
        "epoch": run.epoch,
        "batch_in_epoch": run.batch_in_epoch,
        "global_step": run.global_step,
        "config": _config_with_current_mask(run).to_dict(),
        # Class names, input shape and statistics: predicting from the file
        # needs no dataset (an image folder may be gone).
        "dataset_info": run.loaders.info.to_dict(),
        "frozen": frozen_names(run.model),
        "history": run.history.to_dict(),
        # The order of the epoch in progress (or about to start): resuming draws
        # exactly these samples next, whatever version of the program resumes.
        "data_order": {
            "epoch": run.epoch,
            "order": run.loaders.train.epoch_order(run.epoch).to(torch.int32),
        },
        "rng": rng_states(),
        # Processes that trained it (absent before: 1): resuming on another
        # count says what that changes (workbench.core.distributed.reshard).
        "world_size": world_size(),
        # Each rank's RNG (several processes): its own dropout resumes exactly.
        "rank_rng": run.rank_rng,
        "torch_version": str(torch.__version__),
        "workbench_version": workbench.__version__,
        # A model file's hash: opening the checkpoint says if the file changed.
        SHA_KEY: model_sha(run.model),
    }


def save_checkpoint(path: str | Path, run: TrainingRun) -> Path:
    """Write ``run`` to ``path`` atomically: the old file survives any failure."""
    return write_checkpoint(path, checkpoint_dict(run))


def write_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Save ``payload`` atomically; the previous file survives any failure."""
    path = Path(path).expanduser()
    try:
        return write_atomically(path, lambda handle: torch_save(payload, handle))
    except OSError as exc:
        raise CheckpointError(_os_error_text(path, exc)) from exc


def _os_error_text(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return f"cannot save {path}: the disk is full (the previous file is intact)"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"cannot save {path}: no permission to write in {path.parent}"
    return f"cannot save {path}: {exc.strerror or exc}"


def _read_untrusted(path: Path) -> Any:
    """``torch.load(weights_only=True)`` with every failure turned into words."""
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    if path.stat().st_size == 0:
        raise CheckpointError(f"{path} is empty (an interrupted save?)")
    _check_crcs(path)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # any parse failure of an untrusted file is "unreadable"
        text = str(exc)
        # torch names the blocked callable in a line mentioning GLOBAL (wording
        # varies between releases).
        offender = next(
            (ln for ln in text.splitlines()[1:] if "global" in ln.lower()), None
        )
        if isinstance(exc, pickle.UnpicklingError) and offender:
            raise CheckpointError(
                f"refused to load {path}: it contains Python objects that could run "
                "code when unpickled, and a checkpoint only needs tensors and plain "
                f"values ({offender.strip().rstrip('.')}). Nothing in it was run."
            ) from exc
        kind = _file_kind(path)
        if kind is not None:
            raise CheckpointError(
                f"{path.name} is {kind}, not a checkpoint: open a .pt file saved "
                "by the workbench (File > Save checkpoint, train --save) or by "
                "torch.save"
            ) from exc
        # PyTorch's own text may advise weights_only=False, which this program
        # never does: keep it out of the message.
        first_line = text.splitlines()[0] if text else ""
        detail = "" if "weights_only" in first_line else f": {first_line}"
        raise CheckpointError(
            f"{path} is not a readable checkpoint (truncated or corrupted, or not "
            f"written by torch.save){detail}"
        ) from exc


# What a file that is not a checkpoint most often is, by its first bytes.
_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"BM", "a BMP image"),
    (b"%PDF", "a PDF document"),
)


def _file_kind(path: Path) -> str | None:
    """ "a PNG image", "a text file", ... for files that are plainly no checkpoint."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return None
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if b"\0" not in head:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return "a text file"
    return None


def _check_crcs(path: Path) -> None:
    """Refuse a zip-format torch file whose bytes no longer match their CRC-32.

    ``torch.load`` does not verify the checksums its own writer stores, so a
    damaged block inside a tensor would load as silently wrong weights.
    """
    try:
        if not zipfile.is_zipfile(path):
            return  # the legacy pickle format, or not torch at all: torch.load says
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
        raise CheckpointError(
            f"{path} is not a readable checkpoint (truncated or corrupted): {exc}"
        ) from exc
    if bad is not None:
        raise CheckpointError(
            f"{path} is corrupted: the bytes of {bad} no "
            "longer match their stored checksum (a damaged disk or an incomplete "
            "copy?)"
        )


def _is_checkpoint(payload: Any) -> bool:
    return isinstance(payload, dict) and all(k in payload for k in _REQUIRED_KEYS)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read and check a checkpoint; never runs code stored in the file.

    Older formats are migrated to the current one (:func:`migrate`).

    Raises
    ------
    CheckpointError
        Missing, empty, truncated or corrupted files, files holding Python
        objects other than tensors and builtins, and unknown format versions.
    """
    path = Path(path).expanduser()
    payload = _read_untrusted(path)
    if not _is_checkpoint(payload):
        raise CheckpointError(
            f"{path} is a PyTorch file but not a ptcore-workbench checkpoint "
            "(no format_version/model_state/config)"
        )
    return migrate(payload, path)


def migrate(payload: dict[str, Any], path: Path | str = "the file") -> dict[str, Any]:
    """Bring a checkpoint of an older format to :data:`FORMAT_VERSION`.

    Raises
    ------
    CheckpointError
        For a format newer than this program, or not a whole number.
    """
    version = payload["format_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CheckpointError(f"{path} has an invalid checkpoint format {version!r}")
    if version > FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has checkpoint format {version!r}; this program reads up to "
            f"{FORMAT_VERSION}: upgrade ptcore-workbench"
        )
    while payload["format_version"] < FORMAT_VERSION:
        payload = _MIGRATIONS[payload["format_version"]](payload)
    try:
        check_payload(payload)
    except SchemaError as exc:
        raise CheckpointError(f"{path} cannot be used: the checkpoint's {exc}") from exc
    return payload


def _from_v1(payload: dict[str, Any]) -> dict[str, Any]:
    # Version 1 stored no sample order: those runs drew each epoch's order from
    # (seed, epoch), which is what a resumed loader recomputes when it is None.
    return {
        **payload,
        "format_version": 2,
        "batch_in_epoch": payload.get("batch_in_epoch", 0),
        "data_order": None,
    }


def _from_v2(payload: dict[str, Any]) -> dict[str, Any]:
    # small-cnn changed its layout (same parameters, placed differently): a
    # checkpoint saved before names the earlier one, kept as small-cnn-v1.
    config = payload.get("config")
    if isinstance(config, dict) and config.get("model") == "small-cnn":
        config = {**config, "model": "small-cnn-v1"}
    return {**payload, "format_version": 3, "config": config}


_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _from_v1,
    2: _from_v2,
}


def load_weights_file(path: str | Path) -> tuple[dict[str, torch.Tensor], dict | None]:
    """Model weights from a checkpoint or from a plain saved ``state_dict``.

    Accepts this program's checkpoints, a bare ``torch.save(model.state_dict())``
    (as the PyTorch tutorials and examples write), and dicts keeping one under
    ``state_dict``, ``model_state_dict`` or ``model`` (Lightning, tutorials).

    Returns
    -------
    (state, payload)
        The tensors, and the whole checkpoint when the file is one (else None).
    """
    path = Path(path).expanduser()
    payload = _read_untrusted(path)
    if _is_checkpoint(payload):
        payload = migrate(payload, path)
        return payload["model_state"], payload
    candidates = [payload]
    if isinstance(payload, dict):
        candidates += [
            payload.get(k) for k in ("state_dict", "model_state_dict", "model")
        ]
    for candidate in candidates:
        if (
            isinstance(candidate, dict)
            and candidate
            and all(
                isinstance(k, str) and isinstance(v, torch.Tensor)
                for k, v in candidate.items()
            )
        ):
            return dict(candidate), None
    raise CheckpointError(
        f"{path} holds no model weights: neither a ptcore-workbench checkpoint nor "
        "a state_dict (names mapped to tensors)"
    )


def load_model_state(model: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Load weights strictly; a mismatch names the keys and shapes that differ.

    The model is untouched when the state does not fit.
    """
    try:
        load_exact(model, state)
    except WeightsMismatch as exc:
        raise CheckpointError(
            str(exc).replace("the weights do not fit", "the checkpoint does not fit")
        ) from exc


def config_of(payload: dict[str, Any]) -> TrainConfig:
    """The run configuration stored in a checkpoint."""
    try:
        return TrainConfig.from_dict(payload["config"])
    except (ConfigError, TypeError) as exc:
        raise CheckpointError(f"the checkpoint's config is not usable: {exc}") from exc


def info_of(payload: dict[str, Any]) -> DatasetInfo:
    """What the checkpoint's model reads: class names, input shape, statistics.

    Checkpoints from before image folders hold no description: theirs is the
    built-in dataset's.
    """
    stored = payload.get("dataset_info")
    if stored is not None:
        try:
            return DatasetInfo.from_dict(stored)
        except DataError as exc:
            raise CheckpointError(f"the checkpoint's {exc}") from exc
    cfg = config_of(payload)
    try:
        return dataset_info(cfg.dataset)
    except DataError as exc:
        raise CheckpointError(f"the checkpoint names {exc}") from exc


def eval_model(payload: dict[str, Any]) -> nn.Module:
    """The checkpoint's model with its weights, in eval mode, on the CPU.

    Built without drawing random numbers (its weights are loaded next).
    """
    cfg, info = config_of(payload), info_of(payload)
    model = build_unseeded(cfg.model, info.num_classes, info.image_shape, cfg.weights)
    load_model_state(model, payload["model_state"])
    return model.cpu().eval()


def restore_run(
    payload: dict[str, Any],
    *,
    config: TrainConfig | None = None,
    arrays: ImageArrays | None = None,
    progress: Callable[[DownloadProgress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> TrainingRun:
    """Rebuild a run from a checkpoint so training continues where it stopped.

    ``config`` may change what is safe to change on resume (epochs, max_steps,
    device, loader); by default the stored config is used.
    """
    cfg = config or config_of(payload)
    run = prepare_run(cfg, arrays=arrays, progress=progress, cancel=cancel)
    load_model_state(run.model, payload["model_state"])
    if payload.get("optimizer_state") is not None:
        _restore_optimizer(run.optimizer, payload["optimizer_state"])
    scheduler_state = payload.get("scheduler_state")
    if run.scheduler is not None and scheduler_state is not None:
        _check_like(scheduler_state, run.scheduler.state_dict(), "scheduler_state")
        if scheduler_state.get("total_steps") == run.total_steps:
            run.scheduler.load_state_dict(scheduler_state)
        else:
            run.notices.append(
                "the learning-rate schedule starts over: the run's length changed"
            )
    run.epoch = int(payload["epoch"])
    run.batch_in_epoch = int(payload.get("batch_in_epoch", 0))
    _restore_data_order(run, payload.get("data_order"))
    run.global_step = int(payload["global_step"])
    run.history = MetricHistory.from_dict(payload.get("history", {}))
    try:
        if "rng" in payload:
            set_rng_states(payload["rng"])
        restore_rank_rng(payload.get("rank_rng"))
    except (TypeError, ValueError, RuntimeError, KeyError) as exc:
        raise CheckpointError(
            f"the checkpoint's random states are not usable: {exc}"
        ) from exc
    return run


def _check_like(saved: dict[str, Any], fresh: dict[str, Any], where: str) -> None:
    try:
        check_like(saved, fresh, where)
    except SchemaError as exc:
        raise CheckpointError(f"the checkpoint's {exc}") from exc


def _restore_optimizer(optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    """Load ``state``, refused unless every setting and tensor fits the optimizer.

    ``load_state_dict`` checks neither: a wrong one would fail at the first step.
    """
    fresh = optimizer.param_groups
    for index, group in enumerate(state["param_groups"][: len(fresh)]):
        settings = {k: v for k, v in fresh[index].items() if k != "params"}
        _check_like(group, settings, f"optimizer_state.param_groups[{index}]")
    try:
        optimizer.load_state_dict(state)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"the optimizer state does not fit: {exc}") from exc
    for param, values in optimizer.state.items():
        for key, value in values.items():
            if not isinstance(value, torch.Tensor) or value.dim() == 0:
                continue  # a step count
            if value.shape != param.shape:
                raise CheckpointError(
                    f"the optimizer state does not fit: its {key} has shape "
                    f"{tuple(value.shape)} for a parameter of shape "
                    f"{tuple(param.shape)}"
                )


def _restore_data_order(run: TrainingRun, stored: dict[str, Any] | None) -> None:
    """Make the resumed epoch draw the samples in the stored order."""
    if stored is None:
        return  # a version-1 checkpoint: the order is recomputed from the seed
    try:
        run.loaders.train.pin_order(int(stored["epoch"]), stored["order"])
    except (KeyError, TypeError, ValueError):
        run.notices.append(
            "the training data changed since this checkpoint was saved: the "
            "interrupted epoch is drawn in a new order, so the run is not an exact "
            "continuation"
        )
        if run.batch_in_epoch > run.steps_per_epoch:
            run.batch_in_epoch = 0
