"""The experiment as one plain PyTorch script: the Code tab and ``script``.

:func:`write_script` turns a :class:`TrainConfig` into a readable Python file
that imports torch (torchvision, numpy, and scikit-learn for the digits) but
never ``workbench``. On the CPU the script repeats ``ptcore-workbench train``
step for step: the same per-step losses, bit for bit (``tests/core/
test_script_writer.py``). The code blocks live in :mod:`script_parts`.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from workbench import __version__
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.build import sized_info
from workbench.core.data.cifar import cifar_root
from workbench.core.data.download import resolve_root
from workbench.core.data.registry import (
    TORCHVISION_CLASS_NAMES,
    DatasetInfo,
    dataset_info,
)
from workbench.core.models.builtins import build_on_meta
from workbench.core.models.catalog import is_model_file, is_torchvision, pretrained
from workbench.core.models.inputs import fit_to_model
from workbench.core.script import (
    augment_code,
    cifar_data,
    folder_data,
    my_digits_data,
    parts,
)
from workbench.core.script.cifar_data import CIFAR
from workbench.core.script.data_code import (
    class_weight_settings,
    class_weight_setup,
    data_functions,
    data_setup,
)
from workbench.core.script.folder_data import FOLDER
from workbench.core.script.model import model_functions
from workbench.core.script.my_digits_data import MY_DIGITS
from workbench.core.script.parts import LINE_LENGTH, assignment, literal
from workbench.core.train.freezing import FreezeError, match_patterns
from workbench.core.train.precision import precision_for

# The datasets a script can load by itself, exactly as the workbench does.
SCRIPT_DATASETS = (
    "digits",
    "mnist",
    "fashion-mnist",
    "kmnist",
    CIFAR,
    MY_DIGITS,
    FOLDER,
)


class ScriptError(ConfigError):
    """A setting the script writer cannot turn into plain code; says which.

    ``reason`` is the why alone, for a front-end that words its own lead-in.
    """

    def __init__(self, reason: str, *, lead: str = "cannot write a script: ") -> None:
        super().__init__(lead + reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class _Shapes:
    info: DatasetInfo  # what the model sees: channels, size, classes
    stats: DatasetInfo  # whose mean and std normalise the pixels
    rgb: bool  # gray images repeated to a 3-channel model


def script_problem(cfg: TrainConfig) -> str | None:
    """Why ``cfg`` cannot be written as a script, or None when it can."""
    if cfg.dataset not in SCRIPT_DATASETS:
        return (
            f"dataset {cfg.dataset}: scripts load {', '.join(SCRIPT_DATASETS)} "
            "(the other datasets are read by the workbench's own code)"
        )
    if cfg.early_stop is not None:
        return (
            "early stopping: a script trains every epoch; write it from the "
            "settings without early stopping"
        )
    if cfg.fixes:
        return (
            f"fixes {cfg.fixes_name or ''}".rstrip() + ": a script reads the data "
            "as its files are; train with the fixes in the workbench (train --fixes)"
        )
    if cfg.folds > 1:
        return (
            f"fold {cfg.fold + 1} of {cfg.folds}: a script trains on the whole "
            "training split; train the folds in the workbench (train --folds)"
        )
    if cfg.balanced_sampler:
        return (
            "the balanced sampler: a script draws each epoch as a permutation; "
            "train it in the workbench, or use class weights balanced instead"
        )
    if cfg.dataset == FOLDER:
        return folder_data.folder_problem(cfg)
    return None


def write_script(
    cfg: TrainConfig, *, source: str = "the workbench", from_checkpoint: bool = False
) -> str:
    """The run ``cfg`` describes, as the text of a standalone script.

    ``source`` names where the config came from (a file, a checkpoint) for the
    header; ``from_checkpoint`` adds what a checkpoint's config cannot say.
    Raises :class:`ScriptError` naming a setting it cannot write.
    """
    problem = script_problem(cfg)
    if problem is not None:
        raise ScriptError(problem)
    # The script trains in what the run trained in: "auto" resolved here (its
    # CONFIG keeps the choice as it was made).
    recorded, cfg = cfg, cfg.replace(precision=precision_for(cfg.precision, cfg.device))
    shapes = _shapes(cfg)
    frozen = _frozen_names(cfg, shapes.info)
    mine = cfg.dataset == MY_DIGITS
    blocks = [
        _header(cfg, source, from_checkpoint),
        _imports(cfg),
        _settings(cfg, shapes, frozen, recorded),
        parts.SEEDING,
        data_functions(cfg),
        parts.EVALUATE,
        model_functions(cfg, shapes.info, bool(frozen), cfg.dataset == FOLDER),
        my_digits_data.my_digits_arguments() if mine else parts.MAIN_ARGS,
        _main(cfg, shapes, bool(frozen)),
        '\nif __name__ == "__main__":\n    main()\n',
    ]
    head, imports, settings, *code = (block.strip("\n") for block in blocks)
    # Spaced as ruff format spaces a module: two blank lines around definitions.
    return f"{head}\n\n{imports}\n\n{settings}\n\n\n" + "\n\n\n".join(code) + "\n"


def _shapes(cfg: TrainConfig) -> _Shapes:
    if cfg.dataset == FOLDER:  # known once the script reads the folder
        info = fit_to_model(folder_data.stand_in_info(cfg), cfg.model, cfg.weights)
        return _Shapes(info, info, rgb=False)
    data = sized_info(dataset_info(cfg.dataset), cfg.resolved_image_size)
    info = fit_to_model(data, cfg.model, cfg.weights)
    stats = fit_to_model(dataset_info(cfg.style_dataset), cfg.model, cfg.weights)
    return _Shapes(info, stats, rgb=data.channels == 1 and info.channels == 3)


def _frozen_names(cfg: TrainConfig, info: DatasetInfo) -> list[str]:
    """The parameter names ``cfg.frozen`` matches, in model order."""
    if not cfg.frozen:
        return []
    model = build_on_meta(cfg.model, info.num_classes, info.image_shape, cfg.weights)
    try:
        names = match_patterns(model, cfg.frozen)
    except FreezeError as exc:
        raise ScriptError(str(exc)) from exc
    return [n for n, _ in model.named_parameters() if n in names]


def _not_exact(cfg: TrainConfig, from_checkpoint: bool) -> list[str]:
    """What the script cannot promise to repeat bit for bit."""
    notes = [folder_data.FOLDER_NOTE] if cfg.dataset == FOLDER else []
    if from_checkpoint:
        notes.append(
            "written from a checkpoint: the run starts from the seed with the "
            "freeze mask the checkpoint was saved with. A run whose mask changed "
            "while it trained, or that began from other weights (a fine-tune, "
            "loaded weights), is not repeated step for step."
        )
    if cfg.compile:
        notes.append(
            "torch.compile generates its own kernels on each machine and torch "
            "version: losses are held to 1e-5 (relative) of the workbench's, not "
            "bit for bit, and the workbench leaves the steps that compile out of "
            "its loss log."
        )
    if cfg.device != "cpu":
        notes.append(
            f'device "{cfg.device}": on a GPU, kernels are not bit-for-bit '
            "repeatable by default; on the CPU the losses match exactly."
        )
    return notes


def _header(cfg: TrainConfig, source: str, from_checkpoint: bool) -> str:
    lines = [
        f'"""Train {_model_title(cfg.model)} on {cfg.dataset}: a workbench run in '
        "plain PyTorch.",
        "",
        f"Written by ptcore-workbench {__version__} from {source}. It needs torch,",
        "torchvision and numpy" + _more_needs(cfg),
        "",
        "    python run.py [--data-dir DIR] [--metrics-json metrics.json] [--out FILE]",
        "",
        "Run on the CPU, it repeats `ptcore-workbench train` with this config step",
        "for step: the same loss at every step, bit for bit, and the same accuracy.",
    ]
    if is_model_file(cfg.model):
        said = (
            "It imports your model file (MODEL_FILE below) and runs its code, "
            "as the workbench does: running it is your choice."
        )
        lines += ["", *textwrap.wrap(said, 76)]
    notes = _not_exact(cfg, from_checkpoint)
    if notes:
        lines += ["", "Not repeated exactly:"]
        for note in notes:
            lines += textwrap.wrap(
                note, 76, initial_indent="- ", subsequent_indent="  "
            )
    return "\n".join(lines) + '\n"""\n'


def _more_needs(cfg: TrainConfig) -> str:
    if cfg.dataset == "digits":
        return " (and scikit-learn for the digits)."
    if cfg.dataset == FOLDER:
        return " (and Pillow, torchvision's, for the images)."
    if cfg.dataset == MY_DIGITS:
        sklearn = cfg.replay and cfg.base_dataset == "digits"
        return " (and Pillow" + (", scikit-learn" if sklearn else "") + ")."
    return "."


def _model_title(model: str) -> str:
    """A model file by its file's name: its path is in MODEL_FILE."""
    if not is_model_file(model):
        return model
    path, _, name = model.rpartition(":")
    return f"{name} ({path.replace(chr(92), '/').rsplit('/', 1)[-1]})"


def _imports(cfg: TrainConfig) -> str:
    loader = cfg.loader == "dataloader"
    model_file = is_model_file(cfg.model)
    folder, cifar, mine = (cfg.dataset == name for name in (FOLDER, CIFAR, MY_DIGITS))
    plain = {
        "argparse": True,
        "contextlib": cfg.precision == "fp32",
        "hashlib": cifar,
        "importlib.util": model_file,
        "inspect": model_file,
        "io": folder,
        "json": True,
        "math": True,
        "random": True,
        "re": mine,
        "tarfile": cifar,
        "time": True,
        "urllib.request": cifar,
    }
    lines = ["from __future__ import annotations", ""]
    lines += [f"import {name}" for name, needed in plain.items() if needed]
    lines.append("from collections.abc import Iterable, Iterator")
    lines += ["from pathlib import Path"] if folder or cifar or mine else []
    lines.append("from typing import Any")
    lines += [
        "",
        "import numpy as np",
        "import torch",
        "import torch.nn.functional as F",
    ]
    arrays = cfg.dataset not in TORCHVISION_CLASS_NAMES  # ImageArrays read them
    if (loader and arrays) or folder or mine:
        lines.append("from PIL import Image")
    lines.append("from torch import nn")
    if loader:
        lines.append("from torch.utils.data import DataLoader, Dataset, Sampler")
    vision = []
    if _torchvision_dataset(cfg) is not None:
        vision.append("datasets")
    if is_torchvision(cfg.model):
        vision.append("models")
    if loader:
        vision.append("transforms")
    if vision:
        lines.append(f"from torchvision import {', '.join(vision)}")
    if loader and cfg.augment:
        lines.append("from torchvision.transforms import v2")
    if folder or cifar:
        lines.append("from torchvision.transforms.v2 import functional as TF")
    return "\n".join(lines) + "\n"


def _torchvision_dataset(cfg: TrainConfig) -> str | None:
    """The torchvision class the script reads (my digits' replayed MNIST too)."""
    if cfg.dataset == MY_DIGITS and cfg.replay:
        return TORCHVISION_CLASS_NAMES.get(cfg.base_dataset)
    return TORCHVISION_CLASS_NAMES.get(cfg.dataset)


def _device_expression(spec: str) -> str:
    if spec != "auto":
        return f"torch.device({literal(spec)})"
    return (
        'torch.device(\n    "cuda"\n    if torch.cuda.is_available()\n'
        '    else "mps"\n    if torch.backends.mps.is_available()\n    else "cpu"\n)'
    )


def _settings(
    cfg: TrainConfig, shapes: _Shapes, frozen: list[str], recorded: TrainConfig
) -> str:
    data_dir, vision = cfg.data_dir or "", _torchvision_dataset(cfg)
    if vision is not None:
        data_dir = str(resolve_root(cfg.data_dir, vision))
    elif cfg.dataset == CIFAR:
        data_dir = str(cifar_root(cfg.data_dir))
    config = "".join(
        _fitted(f"    {literal(key)}: {literal(value)},") + "\n"
        for key, value in recorded.to_dict().items()
    )
    values = [
        "# The workbench config this script was written from (in --metrics-json).",
        "CONFIG = {\n" + config + "}",
        "",
        f"SEED = {cfg.seed}",
        f"DEVICE = {_device_expression(cfg.device)}",
        f"PRECISION = {literal(cfg.precision)}",
        assignment("DATA_DIR", data_dir),
        *_model_file_settings(cfg.model),
        *_data_settings(cfg, shapes),
        f"BATCH_SIZE = {cfg.batch_size}",
        "# Validation batches are large: no gradients, so memory allows it.",
        f"VAL_BATCH_SIZE = {max(cfg.batch_size, 1024)}",
        f"EPOCHS = {cfg.resolved_epochs}",
        f"MAX_STEPS = {cfg.max_steps!r}  # None: every step of every epoch",
        f"LR = {literal(cfg.lr)}",
        f"WEIGHT_DECAY = {literal(cfg.weight_decay)}",
        f"LOG_EVERY = {cfg.log_every!r}  # None: every step of up to 5,000",
        _frozen_line(frozen),
        *class_weight_settings(cfg),
    ]
    if cfg.loader == "dataloader":
        values.append(f"WORKERS = {cfg.workers}")
        values.append("# Pinned host memory only speeds up copies to a CUDA device.")
        values.append(f'PIN_MEMORY = {cfg.pin_memory!r} and DEVICE.type == "cuda"')
    if cfg.compile:
        values.append(f"COMPILE_MODE = {literal(cfg.compile_mode)}")
    return "\n".join(values) + "\n"


def _fitted(line: str) -> str:
    """``line`` (a dict's item), excused from the line length when a long path
    makes it long (ruff format leaves such an item whole)."""
    return line if len(line) <= LINE_LENGTH else line + "  # noqa: E501"


def _model_file_settings(model: str) -> list[str]:
    if not is_model_file(model):
        return []
    path, _, name = model.rpartition(":")
    return [
        "# Your own model: this script imports and runs this file (see the top).",
        assignment("MODEL_FILE", path),
        f"MODEL_NAME = {literal(name)}",
    ]


def _data_settings(cfg: TrainConfig, shapes: _Shapes) -> list[str]:
    """What the data is: its classes, shape and statistics, or how to read it."""
    mean = f"MEAN = {literal(tuple(shapes.stats.mean))}"
    std = f"STD = {literal(tuple(shapes.stats.std))}"
    if cfg.dataset == FOLDER:
        lines = folder_data.folder_settings(cfg)
        if pretrained(cfg.model, cfg.weights):
            lines += ["# The statistics the pretrained weights were trained with."]
            lines += [mean, std]
        return lines + augment_code.augment_settings(cfg)
    info = shapes.info
    lines = [
        f"DOWNLOAD = {literal(cfg.download)}",
        f"NUM_CLASSES = {info.num_classes}",
        f"INPUT_SHAPE = {tuple(info.image_shape)!r}  # channels, height, width",
        mean,
        std,
    ]
    if cfg.dataset == CIFAR:
        lines += cifar_data.cifar_settings(cfg)
    elif cfg.dataset == MY_DIGITS:
        lines += my_digits_data.my_digits_settings(cfg)
    return lines + augment_code.augment_settings(cfg)


def _frozen_line(frozen: list[str]) -> str:
    line = f"FROZEN = {literal(frozen)}"
    if len(line) <= 88:
        return line
    return "FROZEN = [\n" + "".join(f"    {literal(n)},\n" for n in frozen) + "]"


def _optimizer_lines(cfg: TrainConfig) -> str:
    if cfg.optimizer == "sgd":
        make = "torch.optim.SGD(params, lr=LR, momentum=0.9, weight_decay=WEIGHT_DECAY)"
    else:
        name = "AdamW" if cfg.optimizer == "adamw" else "Adam"
        make = f"torch.optim.{name}(params, lr=LR, weight_decay=WEIGHT_DECAY)"
    lines = [
        "    # Only the trainable parameters go to the optimizer.",
        "    params = [p for p in model.parameters() if p.requires_grad]",
        f"    optimizer = {make}",
    ]
    if cfg.schedule == "onecycle":
        lines += [
            "    # One cycle over the whole run: warm up to LR, then anneal.",
            "    scheduler = torch.optim.lr_scheduler.OneCycleLR(",
            "        optimizer,",
            "        max_lr=LR,",
            "        total_steps=max(total_steps, 1),",
            "        # Adam's beta1 is not a momentum to cycle; SGD's momentum is.",
            f"        cycle_momentum={cfg.optimizer == 'sgd'!r},",
            "    )",
        ]
    if cfg.compile:
        lines += [
            "    # In place: the state_dict keeps its keys (no _orig_mod. prefix).",
            "    model.compile(mode=COMPILE_MODE)",
        ]
    if cfg.precision == "fp16":
        lines.append(
            "    scaler = torch.amp.GradScaler(DEVICE.type)  # fp16 gradients underflow"
        )
    return "\n".join(lines) + "\n"


def _step_lines(cfg: TrainConfig) -> str:
    if cfg.precision == "fp16":
        update = (
            "            scaler.scale(loss).backward()\n"
            "            scaler.step(optimizer)\n"
            "            scaler.update()\n"
        )
    else:
        update = "            loss.backward()\n            optimizer.step()\n"
    if cfg.schedule == "onecycle":
        update += "            scheduler.step()\n"
    return (
        "            optimizer.zero_grad(set_to_none=True)\n"
        "            with precision_context():\n"
        "                logits = model(x)\n" + _loss_line(cfg) + update
    )


def _loss_line(cfg: TrainConfig) -> str:
    weight = "" if cfg.class_weights == "none" else ", weight=class_weights"
    return f"                loss = F.cross_entropy(logits.float(), y{weight})\n"


def _main(cfg: TrainConfig, shapes: _Shapes, frozen: bool) -> str:
    train_call = "train_mode(model)" if frozen else "model.train()"
    build, classes = "build_model()", "NUM_CLASSES"
    if cfg.dataset == FOLDER:  # the folder's classes and channels
        build = "build_model(num_classes, input_shape)\n    model = model"
        classes = "num_classes"
    return (
        "def main() -> None:\n"
        "    args = parse_args()\n"
        "    seed_everything(SEED)\n"
        "    device = DEVICE\n"
        + data_setup(cfg, shapes.rgb)
        + class_weight_setup(cfg)
        + """
    total_steps = EPOCHS * steps_per_epoch
    if MAX_STEPS is not None:
        total_steps = min(total_steps, MAX_STEPS)
    log_every = LOG_EVERY or max(1, math.ceil(total_steps / 5000))

    # channels_last: oneDNN's convolutions run faster on it on the CPU.
    model = {build}.to(device, memory_format={memory_format})
    freeze(model)
""".replace("{build}", build).replace("{memory_format}", _memory_format(cfg))
        + _optimizer_lines(cfg)
        + f"""
    metrics: dict[str, Any] = {{"config": CONFIG, "epochs": [], "steps": []}}
    metrics["final"] = None  # filled in when the run ends
    step = 0
    train_seconds = 0.0
    started = time.perf_counter()
    for epoch in range(EPOCHS):
        {train_call}
        loss_sum = torch.zeros((), device=device)
        correct = torch.zeros((), device=device, dtype=torch.long)
        seen = 0
        epoch_started = time.perf_counter()
        for x, y in train_batches(epoch):
            # The standard loop: zero_grad, forward, loss, backward, step.
"""
        + _step_lines(cfg)
        + """            step += 1
            loss_sum += loss.detach() * y.numel()
            correct += (logits.detach().argmax(1) == y).sum()
            seen += y.numel()
            if step % log_every == 0 or step == total_steps:
                metrics["steps"].append({"step": step, "loss": loss.item()})
            if step == total_steps:
                break
        seconds = time.perf_counter() - epoch_started
        train_seconds += seconds
        scores = evaluate(model, val_batches(), {classes})
        metrics["epochs"].append(
            {
                "epoch": epoch + 1,
                "global_step": step,
                "train_loss": (loss_sum / max(seen, 1)).item(),
                "train_accuracy": correct.item() / max(seen, 1),
                "val_loss": scores["val_loss"],
                "val_accuracy": scores["val_accuracy"],
                "images_per_s": seen / seconds,
                "seconds": seconds,
                "confusion": scores["confusion"],
            }
        )
        print(
            f"epoch {epoch + 1}/{EPOCHS}: step {step}/{total_steps}, "
            f"val accuracy {100 * scores['val_accuracy']:.2f}%"
        )
        write_metrics(args.metrics_json, metrics)
        if step == total_steps:
            break

    last = metrics["epochs"][-1]
    metrics["final"] = {
        "val_accuracy": last["val_accuracy"],
        "val_loss": last["val_loss"],
        "images_per_s": sum(e["images_per_s"] * e["seconds"] for e in metrics["epochs"])
        / train_seconds,
        "seconds": time.perf_counter() - started,
        "compile_seconds": 0.0,
        "step_seconds": train_seconds / max(step, 1),
        "global_step": step,
        "stopped": False,
    }
    write_metrics(args.metrics_json, metrics)
    # The weights only (a state_dict): load them with model.load_state_dict().
    torch.save(model.state_dict(), args.out)
    print(f"saved the weights to {args.out}")
""".replace("{classes}", classes)
    )


def _memory_format(cfg: TrainConfig) -> str:
    """The model's memory format, as the workbench trains it."""
    return "torch.channels_last" if cfg.channels_last else "torch.contiguous_format"
