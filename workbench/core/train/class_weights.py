"""Rare classes: the loss's class weights, and the loss every training step uses.

``class_weights`` is ``none``, ``balanced`` or one weight per class. Balanced
is scikit-learn's ``compute_class_weight('balanced')`` over the training split
(the validation split already taken out): n_samples / (n_classes * count), so
every class weighs as much in the loss as if the classes were equal in size. A
file of weights is read once, into the config (:func:`read_weights_file`), so
a run's ``run.json`` holds the values and Reproduce needs no file.

:func:`training_loss` is the loss of the engine's step and of the learning-rate
finder's, so the finder measures the loss the run trains on. The mean is
PyTorch's weighted mean (divided by the batch's summed weights); with several
processes :func:`local_weight` is what ``ddp.backward_loss`` scales each rank's
chunk by. The validation loss stays unweighted: it is the one scores compare.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import torch
from torch import nn

from workbench.core.config import MAX_WEIGHT, ConfigError, TrainConfig
from workbench.core.data.balanced_sampler import (
    balance,
    check_every_class,
    class_counts,
    training_labels,
)
from workbench.core.data.build import Loaders
from workbench.core.data.folder import class_folders
from workbench.core.data.folder_check import split_folders
from workbench.core.data.registry import FOLDER
from workbench.core.training_run import TrainingRun

# The file --class-weights FILE and the window's "From file..." read.
FILE_FORMAT = (
    "one weight per class in class order (an image folder's classes sorted by "
    "name): a JSON list, or numbers separated by commas, spaces or lines "
    "(# starts a comment)"
)
# A weights file is a few numbers; anything far larger is the wrong file.
MAX_FILE_BYTES = 1 << 20
_SEPARATORS = re.compile(r"[\s,;]+")


def read_weights_file(path: str | Path) -> tuple[float, ...]:
    """The weights in ``path`` (see :data:`FILE_FORMAT`).

    Raises
    ------
    ConfigError
        One line naming the file and what is wrong: unreadable, not numbers,
        a weight that is not a finite number above 0, fewer than two.
    """
    path = Path(path).expanduser()
    where = f"class weights file {path}"
    try:
        if not path.is_file():
            missing = not path.exists()
            raise ConfigError(f"{where}: {'not found' if missing else 'not a file'}")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConfigError(f"{where}: over 1 MB; it should hold a few numbers")
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read it ({exc.strerror or exc})") from None
    try:
        weights = _parse(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if len(weights) < 2:
        raise ConfigError(f"{where}: {len(weights)} weight(s); give one per class")
    for index, weight in enumerate(weights):
        if not (0 < weight <= MAX_WEIGHT):
            raise ConfigError(
                f"{where}: weight {index} is {weight:g}; each must be a number "
                "above 0 and at most 1e30"
            )
    return weights


def _parse(text: str) -> tuple[float, ...]:
    """Numbers of a JSON list, or of text separated by commas, spaces or lines."""
    if text.lstrip().startswith("["):
        try:
            values = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"not a valid JSON list ({exc})") from None
        if not isinstance(values, list):
            raise ValueError("not a JSON list of numbers")
        tokens = values
    else:
        lines = (line.partition("#")[0] for line in text.splitlines())
        tokens = [t for line in lines for t in _SEPARATORS.split(line) if t]
    weights = []
    for token in tokens:
        if isinstance(token, bool) or not isinstance(token, str | int | float):
            raise ValueError(f"{json.dumps(token)[:20]} is not a number")
        try:
            weights.append(float(token))
        except (ValueError, OverflowError):
            raise ValueError(f"{str(token)[:20]!r} is not a number") from None
    if not all(math.isfinite(w) for w in weights):
        raise ValueError("every weight must be a finite number")
    return tuple(weights)


def balanced_weights(counts: torch.Tensor) -> torch.Tensor:
    """n_samples / (n_classes * count) per class, float64 (scikit-learn's)."""
    counts = counts.to(torch.float64)
    return counts.sum() / (len(counts) * counts)


def check_class_count(cfg: TrainConfig) -> None:
    """:class:`ConfigError` when an image folder has another number of classes.

    Before a run folder is made (the built-in datasets' counts are checked by
    the config itself); a folder that cannot be listed is left to the run's
    own loading, which says what is wrong with it.
    """
    weights = cfg.class_weights
    if not isinstance(weights, tuple) or cfg.dataset != FOLDER or not cfg.data_dir:
        return
    root = Path(cfg.data_dir).expanduser()
    try:
        classes = class_folders(split_folders(root))
    except OSError:
        return
    if classes and len(classes) != len(weights):
        raise ConfigError(
            f"class_weights: {len(weights)} weights for the {len(classes)} classes "
            f"of {root}: give one per class"
        )


def prepare(
    cfg: TrainConfig, loaders: Loaders, device: torch.device
) -> torch.Tensor | None:
    """Balance the training draws if asked; the loss's class weights on ``device``.

    None when the loss is unweighted. Raises ``DataError`` when balancing needs
    a class the training split lacks, :class:`ConfigError` when a list of
    weights does not fit the classes.
    """
    info = loaders.info
    if cfg.balanced_sampler:
        balance(loaders.train, info)
    if cfg.class_weights == "none":
        return None
    if cfg.class_weights == "balanced":
        counts = class_counts(training_labels(loaders.train), info.num_classes)
        check_every_class(counts, info, "class weights balanced")
        weights = balanced_weights(counts)
    else:
        weights = torch.tensor(cfg.class_weights, dtype=torch.float64)
        if len(weights) != info.num_classes:
            raise ConfigError(
                f"class_weights: {len(weights)} weights for the {info.num_classes} "
                f"classes of {info.title}: give one per class"
            )
    return weights.to(device, torch.float32)


def training_loss(
    run: TrainingRun, logits: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """The batch's cross-entropy as the run trains on it: weighted by class."""
    return nn.functional.cross_entropy(logits.float(), y, weight=run.class_weights)


def local_weight(run: TrainingRun, y: torch.Tensor) -> torch.Tensor | None:
    """This process's summed weights of ``y`` (several processes, weighted loss).

    None otherwise: then each rank's mean is over its samples and needs no
    communication to be scaled.
    """
    if run.class_weights is None or run.ddp is None:
        return None
    return run.class_weights[y].sum()
