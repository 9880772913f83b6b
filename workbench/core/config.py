"""One run's configuration: a frozen dataclass, validated, saved as JSON or TOML.

The window, the command line and checkpoints all speak this one type, so a run
started anywhere can be repeated anywhere.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.data.registry import DATASET_INFO
from workbench.core.models.catalog import (
    BUILTIN_MODELS,
    FEATURE_CACHE_MODES,
    model_problem,
    pretrained,
    weights_problem,
)

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

DATASETS = (
    "digits",
    "mnist",
    "fashion-mnist",
    "kmnist",
    "my-digits",
    "cifar10",
    "folder",
)
# Datasets whose images are resized to ``image_size`` (the MNIST family stays 28x28).
RESIZABLE_DATASETS = ("cifar10", "folder")
# The side images are brought to when the config names none.
DEFAULT_IMAGE_SIZE = {"cifar10": 32, "folder": 64}
IMAGE_SIZE_RANGE = (8, 512)
# The largest whole number a setting may hold: the window's fields are 32-bit
# (Qt's int), so every config it can load it can also show. 1e100 is damage.
MAX_WHOLE = 2**31 - 1
AUGMENTATIONS = ("crop", "flip", "rotate", "jitter")
# Datasets my own drawings can be prepared like (and mixed with): digit datasets.
MY_DIGITS_BASES = ("mnist", "digits")
# The built-in networks; a config's model may also be a torchvision classifier
# or path/to/file.py:Name (model_catalog).
MODELS = BUILTIN_MODELS
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
LOADERS = ("fast", "dataloader")
OPTIMIZERS = ("adam", "adamw", "sgd")
SCHEDULES = ("onecycle", "constant")
# What "the best epoch" is judged by (workbench.core.train.best_epoch).
BEST_METRICS = ("val_accuracy", "val_loss", "macro_f1")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune")
# class_weights' words; a list of numbers (one per class) is the third form.
CLASS_WEIGHT_MODES = ("none", "balanced")
_WEIGHTS_ARE = "none, balanced or a list of one weight per class"
MAX_WEIGHT = 1e30  # a larger one (or an integer past float) is damage, not a weight

# Epochs a dataset needs with the default recipe when the user names none:
# digits has 1,437 training images (6 steps an epoch at batch 256).
DEFAULT_EPOCHS = {
    "digits": 15,
    "mnist": 1,
    "fashion-mnist": 3,
    "kmnist": 3,
    "my-digits": 20,
    "cifar10": 5,
    "folder": 10,
}


class ConfigError(ValueError):
    """A configuration value or file that cannot be used; the text names the field."""


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """Everything that defines a training run.

    ``epochs=None`` means the dataset's recommended count (``DEFAULT_EPOCHS``);
    ``max_steps`` (global steps, counted across resumes) ends the run earlier.
    ``frozen`` holds parameter names or glob patterns (``conv1.*``).

    With ``dataset="my-digits"`` (the user's own drawings), ``base_dataset`` is
    the dataset the drawings are prepared like (crop and scale recipe, pixel
    statistics), and ``replay`` training images of it are mixed into every
    epoch, so fine-tuning on a few drawings does not forget the base data.

    ``autosave_every``: the run's folder gets its checkpoint every this many
    epochs and when the run ends (0: never).

    ``image_size``: the side images of ``cifar10`` and ``folder`` are brought to
    (resize, then centre crop); None is the dataset's own (``DEFAULT_IMAGE_SIZE``).
    ``val_fraction``: the share of each class of a folder without ``train/`` and
    ``val/`` that is held out for validation (a seeded, stratified split).
    ``augment``: random changes to each training image (``AUGMENTATIONS``).

    ``model``: a built-in, a torchvision classifier (``resnet18``) or the user's
    ``path/to/file.py:Name``. ``weights``: a torchvision model's pretrained
    weights (``none``, ``default`` or an enum member such as ``IMAGENET1K_V1``).
    ``feature_cache``: keep the frozen backbone's outputs and train the head on
    them (``auto``: whenever that gives the same result; ``on``: the same, and
    the run's notices say why when it cannot, the full model training then;
    ``off``: never). See ``workbench.core.train.feature_cache``.

    ``precision``: ``auto`` (the default) trains in bf16 on a CPU that computes
    it natively (AVX512-BF16 or AMX: faster, as accurate) and in fp32 elsewhere;
    see ``workbench.core.train.precision``.

    ``channels_last``: keep the model (and so its convolutions' activations) in
    the channels-last memory format, which oneDNN's and cuDNN's convolutions
    usually run faster on; the numbers it trains to are the same up to rounding.
    It matters only for convolutional models (``doctor-speed`` measures it).

    ``sync_bn``: with several processes on CUDA GPUs, BatchNorm layers share
    their batch statistics over the processes (``torch.nn.SyncBatchNorm``), so
    they normalise the whole global batch as one process does. It changes
    nothing on the CPU (SyncBatchNorm runs only on CUDA; the run says so once)
    nor in one process, where every layer already sees the whole batch.

    ``best_metric``: what the best epoch is judged by (``val_accuracy``,
    ``val_loss`` or ``macro_f1``); its weights are kept as ``best.pt`` in the
    run folder. ``early_stop``: stop once this many epochs in a row have not
    beaten the best by more than ``early_stop_delta`` (None: never).

    ``class_weights``: how each class's images weigh in the training loss:
    ``none``, ``balanced`` (n_samples / (n_classes * count) over the training
    split, as scikit-learn's ``compute_class_weight``) or one positive weight
    per class, in class order (read from a file by the command line and the
    window, so the config holds the values). ``balanced_sampler``: each epoch
    draws as many samples as the training split holds, with replacement, every
    class equally likely (seeded by seed and epoch). The validation loss stays
    unweighted. See ``workbench.core.train.class_weights``.

    ``folds``: with K >= 2 this run is one fold of a K-fold cross-validation:
    it trains on K - 1 stratified, seeded (by ``seed``) folds of the training
    split and validates on fold ``fold`` (0..K-1); the dataset's validation
    split stays unseen. See ``workbench.core.crossval``.

    ``fixes``: changes to the data that never touch its files, as
    ``(image key, "relabel" or "exclude", new label or "")`` entries (read from
    a named overlay by the command line and the window, so the config holds
    them and Reproduce needs no file); ``fixes_name`` is the overlay's name.
    See ``workbench.core.data.fixes``.

    ``log_every``: steps between two logged losses; None (the default) is
    automatic: every step of a run of up to 5,000 steps, about 5,000 points of a
    longer one, so a live curve shows every step of a short run.
    """

    dataset: str = "digits"
    data_dir: str | None = None
    download: bool = True
    model: str = "small-cnn"
    device: str = "auto"
    precision: str = "auto"
    batch_size: int = 256
    loader: str = "fast"
    workers: int = 0
    pin_memory: bool = False
    compile: bool = False
    compile_mode: str = "default"
    channels_last: bool = True
    optimizer: str = "adam"
    lr: float = 6e-3
    weight_decay: float = 0.0
    schedule: str = "onecycle"
    epochs: int | None = None
    max_steps: int | None = None
    seed: int = 0
    log_every: int | None = None
    frozen: tuple[str, ...] = field(default_factory=tuple)
    base_dataset: str = "mnist"
    replay: int = 0
    autosave_every: int = 1
    image_size: int | None = None
    val_fraction: float = 0.2
    augment: tuple[str, ...] = field(default_factory=tuple)
    weights: str = "none"
    feature_cache: str = "auto"
    sync_bn: bool = False
    best_metric: str = "val_accuracy"
    early_stop: int | None = None  # patience in epochs; None: train them all
    early_stop_delta: float = 0.0
    class_weights: str | tuple[float, ...] = "none"
    balanced_sampler: bool = False
    folds: int = 1
    fold: int = 0
    fixes: tuple[tuple[str, str, str], ...] = field(default_factory=tuple)
    fixes_name: str = ""

    def __post_init__(self) -> None:
        # Lists arrive from JSON and argparse; a tuple keeps the dataclass hashable.
        for name in ("frozen", "augment", "class_weights"):
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        if isinstance(self.fixes, list | tuple):
            fixes = tuple(
                tuple(fix) if isinstance(fix, list | tuple) else fix
                for fix in self.fixes
            )
            object.__setattr__(self, "fixes", fixes)
        validate(self)
        if isinstance(self.class_weights, tuple):  # 2 from a file is 2.0
            weights = tuple(float(w) for w in self.class_weights)
            object.__setattr__(self, "class_weights", weights)

    @property
    def resolved_epochs(self) -> int:
        """The number of epochs this run trains for at most."""
        return self.epochs if self.epochs is not None else DEFAULT_EPOCHS[self.dataset]

    @property
    def resolved_image_size(self) -> int:
        """The side of the square images this run trains on."""
        if self.image_size is not None:
            return self.image_size
        if self.dataset in RESIZABLE_DATASETS and pretrained(self.model, self.weights):
            # The size the weights were trained at (224 for most of torchvision's).
            # Imported here: it imports torchvision (seconds), and a config is
            # read by every command, most of which never need it.
            from workbench.core.models.torchvision_models import weights_preprocess

            preprocess = weights_preprocess(self.model, self.weights)
            if preprocess is not None:
                return preprocess.crop
        return DEFAULT_IMAGE_SIZE.get(self.dataset, 28)

    @property
    def style_dataset(self) -> str:
        """The dataset whose preprocessing and pixel statistics the inputs follow."""
        return self.base_dataset if self.dataset == "my-digits" else self.dataset

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with ``changes`` applied and validated."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins only, so the dict is JSON-, TOML- and checkpoint-safe."""
        data = dataclasses.asdict(self)
        data["frozen"] = list(self.frozen)
        data["augment"] = list(self.augment)
        if isinstance(self.class_weights, tuple):
            data["class_weights"] = list(self.class_weights)
        data["fixes"] = [list(fix) for fix in self.fixes]
        return {"schema_version": SCHEMA_VERSION, **data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """Build from a dict; unknown keys are ignored with a log line."""
        version = data.get("schema_version", SCHEMA_VERSION)
        if type(version) is not int or version > SCHEMA_VERSION:
            raise ConfigError(
                f"schema_version {version!r} is newer than this program understands "
                f"(up to {SCHEMA_VERSION}); upgrade ptcore-workbench"
            )
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names - {"schema_version"})
        if unknown:
            log.warning("ignoring unknown config keys: %s", ", ".join(unknown))
        # TOML has no null: an empty string stands for "not set" in optional fields.
        values = {k: v for k, v in data.items() if k in names}
        # Optional fields are those whose type admits None (a string here:
        # annotations are not evaluated), whatever their default.
        optional = (f.name for f in dataclasses.fields(cls) if "None" in str(f.type))
        for key in optional:
            if values.get(key) == "":
                values[key] = None
        try:
            return cls(**values)
        except TypeError as exc:
            raise ConfigError(str(exc)) from exc


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{name}: {value!r} is not one of {', '.join(allowed)}")


def _check_int(name: str, value: object, minimum: int, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{name}: {value!r} must be a whole number >= {minimum}")
    if value > MAX_WHOLE:
        raise ConfigError(f"{name}: {value:.3g} is too large (at most {MAX_WHOLE:,})")


def validate(cfg: TrainConfig) -> None:
    """Raise :class:`ConfigError` naming the first bad field and its allowed values."""
    _check_choice("dataset", cfg.dataset, DATASETS)
    problem = model_problem(cfg.model)
    if problem is not None:
        raise ConfigError(f"model: {problem}")
    problem = weights_problem(cfg.model, cfg.weights)
    if problem is not None:
        raise ConfigError(f"weights: {problem}")
    _check_choice("feature_cache", cfg.feature_cache, FEATURE_CACHE_MODES)
    _check_choice("precision", cfg.precision, PRECISIONS)
    _check_choice("loader", cfg.loader, LOADERS)
    _check_choice("optimizer", cfg.optimizer, OPTIMIZERS)
    _check_choice("schedule", cfg.schedule, SCHEDULES)
    _check_choice("compile_mode", cfg.compile_mode, COMPILE_MODES)
    if not isinstance(cfg.device, str) or not cfg.device:
        raise ConfigError("device: must be auto, cpu, cuda, cuda:N or mps")
    _check_int("batch_size", cfg.batch_size, 1)
    _check_int("workers", cfg.workers, 0)
    _check_int("epochs", cfg.epochs, 1, optional=True)
    _check_int("max_steps", cfg.max_steps, 1, optional=True)
    _check_int("seed", cfg.seed, 0)
    _check_int("log_every", cfg.log_every, 1, optional=True)
    _check_choice("base_dataset", cfg.base_dataset, MY_DIGITS_BASES)
    _check_int("replay", cfg.replay, 0)
    _check_int("autosave_every", cfg.autosave_every, 0)
    _check_choice("best_metric", cfg.best_metric, BEST_METRICS)
    _check_int("early_stop", cfg.early_stop, 1, optional=True)
    _check_int("folds", cfg.folds, 1)
    _check_int("fold", cfg.fold, 0)
    if cfg.fold >= cfg.folds:
        raise ConfigError(
            f"fold: {cfg.fold} is not one of the {cfg.folds} folds (0..{cfg.folds - 1})"
        )
    if cfg.replay and cfg.dataset != "my-digits":
        raise ConfigError(
            "replay: mixes base_dataset images into my own digits; "
            "it needs dataset my-digits"
        )
    for name in ("lr", "weight_decay", "early_stop_delta"):
        value = getattr(cfg, name)
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ConfigError(f"{name}: {value!r} must be a number")
        if not (value >= 0 and value < float("inf")) or (name == "lr" and value == 0):
            raise ConfigError(f"{name}: {value!r} must be a finite number > 0")
    for name in (
        "pin_memory",
        "compile",
        "channels_last",
        "download",
        "sync_bn",
        "balanced_sampler",
    ):
        if not isinstance(getattr(cfg, name), bool):
            raise ConfigError(f"{name}: must be true or false")
    if cfg.data_dir is not None and not isinstance(cfg.data_dir, str):
        raise ConfigError("data_dir: must be a folder path")
    _validate_images(cfg)
    _validate_class_weights(cfg)
    _validate_fixes(cfg)
    if not isinstance(cfg.frozen, tuple) or not all(
        isinstance(p, str) and p for p in cfg.frozen
    ):
        raise ConfigError("frozen: must be a list of parameter names or glob patterns")
    if cfg.workers > 0 and cfg.loader == "fast":
        raise ConfigError(
            "workers: the fast in-memory loader has no worker processes; "
            "use loader 'dataloader' to study num_workers"
        )


FIX_ACTIONS = ("relabel", "exclude")  # what a run's fixes do to an image


def _validate_fixes(cfg: TrainConfig) -> None:
    """Each fix is (image key, relabel or exclude, the new label or "")."""
    if not isinstance(cfg.fixes_name, str):
        raise ConfigError(f"fixes_name: {cfg.fixes_name!r:.40} must be a name")
    if not isinstance(cfg.fixes, tuple):
        raise ConfigError("fixes: must be a list of [image, action, label] entries")
    for index, fix in enumerate(cfg.fixes):
        if (
            not isinstance(fix, tuple)
            or len(fix) != 3
            or not all(isinstance(part, str) for part in fix)
            or fix[1] not in FIX_ACTIONS
            or (fix[1] == "relabel") != bool(fix[2])
        ):
            raise ConfigError(
                f"fixes: entry {index} ({fix!r:.60}) is not [image, relabel, LABEL] "
                "or [image, exclude, '']"
            )


def _validate_class_weights(cfg: TrainConfig) -> None:
    """``none``, ``balanced``, or one finite positive weight per class."""
    value = cfg.class_weights
    if isinstance(value, str):
        if value not in CLASS_WEIGHT_MODES:
            raise ConfigError(f"class_weights: {value!r} is not {_WEIGHTS_ARE}")
        return
    if not isinstance(value, tuple):
        raise ConfigError(f"class_weights: {value!r} is not {_WEIGHTS_ARE}")
    for index, weight in enumerate(value):
        if not isinstance(weight, int | float) or isinstance(weight, bool):
            raise ConfigError(
                f"class_weights: weight {index} ({weight!r}) is no number"
            )
        if not 0 < weight < float("inf") or weight > MAX_WEIGHT:
            raise ConfigError(
                f"class_weights: weight {index} is {weight!r:.20}; each must be a "
                "number above 0 and at most 1e30"
            )
    info = DATASET_INFO.get(cfg.dataset)
    classes = info.num_classes if info is not None else None
    if len(value) < 2 or (classes is not None and len(value) != classes):
        of = f"the {classes} classes of {cfg.dataset}" if classes else "a classifier"
        raise ConfigError(
            f"class_weights: {len(value)} weights for {of}: give one per class"
        )


def _validate_images(cfg: TrainConfig) -> None:
    """The image size, validation share and augmentation of a run."""
    low, high = IMAGE_SIZE_RANGE
    if cfg.image_size is not None:
        _check_int("image_size", cfg.image_size, low)
        if cfg.image_size > high:
            raise ConfigError(f"image_size: {cfg.image_size} is above {high} pixels")
        if cfg.dataset not in RESIZABLE_DATASETS and cfg.image_size != 28:
            raise ConfigError(
                f"image_size: {cfg.dataset} images are 28x28; image_size applies "
                f"to {' and '.join(RESIZABLE_DATASETS)}"
            )
    value = cfg.val_fraction
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ConfigError(f"val_fraction: {value!r} must be a number")
    if not 0 < value <= 0.5:
        raise ConfigError(f"val_fraction: {value!r} must be above 0 and at most 0.5")
    if not isinstance(cfg.augment, tuple):
        raise ConfigError(f"augment: {cfg.augment!r} must be a list of choices")
    if not all(a in AUGMENTATIONS for a in cfg.augment):
        raise ConfigError(
            f"augment: {list(cfg.augment)!r} may only name {', '.join(AUGMENTATIONS)}"
        )
    if len(set(cfg.augment)) != len(cfg.augment):
        raise ConfigError("augment: each choice once")
    if cfg.dataset == "folder" and not cfg.data_dir:
        raise ConfigError(
            "data_dir: dataset folder needs the folder of class folders (--data-dir)"
        )


def save_config(cfg: TrainConfig, path: str | Path) -> None:
    """Write ``cfg`` as JSON, or TOML when ``path`` ends in ``.toml``."""
    path = Path(path)
    data = cfg.to_dict()
    if path.suffix.lower() == ".toml":
        text = _to_toml(data)
    else:
        text = json.dumps(data, indent=2) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write config {path}: {exc.strerror or exc}") from exc


# A config is a few hundred bytes; anything far larger is the wrong file.
MAX_CONFIG_BYTES = 1 << 20

_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


def _read_config_bytes(path: Path) -> bytes:
    """The bytes of a regular file of sane size; ConfigError for anything else.

    Opened without blocking, so a named pipe with no writer is refused rather
    than waited on for ever; ``/dev/zero`` is refused rather than read into
    gigabytes of memory.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise ConfigError(f"{path} is {kind}: give a JSON or TOML config file")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path} is over {MAX_CONFIG_BYTES >> 20} MB: a config is a few hundred "
            "bytes of JSON or TOML; is it the right file?"
        )
    return data


SWEEP_TABLE = "sweep"  # a config's [sweep] table: what ``sweep`` varies


def load_config(path: str | Path) -> TrainConfig:
    """Read a JSON or TOML config; errors name the file and what is wrong.

    A ``[sweep]`` table is the ``sweep`` command's (:func:`read_config_table`).
    """
    path = Path(path)
    data = read_config_table(path)
    data.pop(SWEEP_TABLE, None)
    try:
        return TrainConfig.from_dict(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def read_config_table(path: str | Path) -> dict[str, Any]:
    """A JSON or TOML config's top-level table, unchecked; errors name the file."""
    path = Path(path)
    try:
        text = _read_config_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from exc
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"{path} is not valid {path.suffix[1:].upper()}: {exc}"
        ) from exc
    except RecursionError:  # brackets nested thousands deep: no config is
        raise ConfigError(f"{path}: nested too deeply to be a config") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a table of settings at the top level")
    return data


def _to_toml(data: dict[str, Any]) -> str:
    # The config is flat scalars and one list of strings: json quoting is valid TOML.
    lines = []
    for key, value in data.items():
        if value is None:
            value = ""
        if isinstance(value, bool):
            rendered = "true" if value else "false"
        else:
            rendered = json.dumps(value)
        lines.append(f"{key} = {rendered}")
    return "\n".join(lines) + "\n"
