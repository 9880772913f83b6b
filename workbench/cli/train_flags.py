"""``train``'s flags: one per config field, each "not given" unless typed.

The flag table alone is as long as the command; :mod:`workbench.cli.commands`
adds it to the parser, :mod:`workbench.cli.train` reads what it parsed.
"""

from __future__ import annotations

import argparse
from typing import Any

from workbench.cli import distributed as cli_distributed
from workbench.core import config as C
from workbench.core.data.fixes import Overlay
from workbench.core.train.class_weights import FILE_FORMAT, read_weights_file

MODEL_HELP = (
    f"{', '.join(C.MODELS)}, a torchvision classifier (resnet18, "
    "mobilenet_v3_small, ...: see `models`) or path/to/file.py:Name"
)


def add_train_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per config field; each defaults to "not given" so files can fill in."""
    add = parser.add_argument
    add(
        "--config",
        metavar="FILE",
        help="a run config (.json or .toml); flags override it",
    )
    add("--dataset", choices=C.DATASETS, help="default: digits (bundled, offline)")
    add(
        "--base-dataset",
        choices=C.MY_DIGITS_BASES,
        help="with my-digits: prepare the drawings like this dataset and replay "
        "it (default: mnist)",
    )
    add(
        "--replay",
        type=int,
        metavar="N",
        help="with my-digits: mix N base-dataset training images into each epoch",
    )
    add(
        "--data-dir",
        metavar="DIR",
        help="torchvision root holding e.g. MNIST/raw/; with --dataset folder, the "
        "folder of class folders (DIR/<class>/<image>, or DIR/train + DIR/val)",
    )
    add(
        "--image-size",
        type=int,
        metavar="N",
        help="cifar10 and folder: bring images to NxN by resize and centre crop "
        f"(default: cifar10 {C.DEFAULT_IMAGE_SIZE['cifar10']}, folder "
        f"{C.DEFAULT_IMAGE_SIZE['folder']})",
    )
    add(
        "--val-fraction",
        type=float,
        metavar="F",
        help="folder without train/ and val/: the share of each class held out "
        "for validation, a seeded stratified split (default 0.2)",
    )
    add(
        "--augment",
        nargs="+",
        choices=C.AUGMENTATIONS,
        help="random changes to each training image, applied per batch",
    )
    add(
        "--download",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="download missing datasets (default: yes)",
    )
    add("--model", help=MODEL_HELP + " (default: small-cnn)")
    add(
        "--weights",
        help="a torchvision model's pretrained weights: none (default), default "
        "or a name such as IMAGENET1K_V1; downloaded once into $TORCH_HOME",
    )
    add(
        "--feature-cache",
        choices=C.FEATURE_CACHE_MODES,
        help="with a frozen backbone, compute its features once and train the "
        "head on them (default auto: whenever the result is the same)",
    )
    add("--device", help="auto, cpu, cuda, cuda:N or mps (default: auto)")
    add(
        "--precision",
        choices=C.PRECISIONS,
        help="default: auto (bf16 on a CPU that computes it natively, else fp32)",
    )
    add("--epochs", type=int, help="default: depends on the dataset")
    add("--max-steps", type=int, metavar="N", help="stop at this global step")
    add(
        "--early-stop",
        type=int,
        metavar="PATIENCE",
        help="stop once PATIENCE epochs in a row have not beaten the best one "
        "(by --best-metric); default: train every epoch",
    )
    add(
        "--early-stop-delta",
        type=float,
        metavar="D",
        help="with --early-stop: an epoch beats the best only by more than D "
        "(accuracy and macro-F1 as fractions: 0.001 is 0.1 point; default 0)",
    )
    add(
        "--best-metric",
        choices=C.BEST_METRICS,
        help="what the best epoch is judged by; its weights are kept as best.pt "
        "in the run folder (default: val_accuracy)",
    )
    add(
        "--folds",
        type=int,
        metavar="K",
        help="cross-validate: K runs, each trained on K-1 stratified folds of the "
        "training split and validated on the one left out; prints each score's "
        "mean and 95%% confidence interval and keeps the held-out predictions",
    )
    add(
        "--fixes",
        metavar="NAME",
        help="train with the fixes of the overlay NAME (see the fixes command): "
        "relabelled images and exclusions, the files untouched; the run keeps "
        'them in its config. "" trains without fixes',
    )
    add("--batch-size", type=int)
    add("--lr", type=float, help="learning rate (the peak, with onecycle)")
    add("--weight-decay", type=float)
    add("--optimizer", choices=C.OPTIMIZERS)
    add("--schedule", choices=C.SCHEDULES)
    add(
        "--class-weights",
        metavar="none|balanced|FILE",
        help="weigh each class in the training loss: none (default); balanced, "
        "n_samples / (n_classes * count) over the training split, so rare classes "
        f"count as much as common ones; or FILE, {FILE_FORMAT}. The run's config "
        "keeps the values",
    )
    add(
        "--balanced-sampler",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="draw each epoch with replacement, every class equally likely (as "
        "many samples as the training split; seeded, so a resume is exact). "
        "Use it or --class-weights balanced, not both",
    )
    add("--loader", choices=C.LOADERS, help="fast (in-memory, default) or dataloader")
    add("--workers", type=int, help="DataLoader num_workers (loader dataloader)")
    add("--pin-memory", action=argparse.BooleanOptionalAction, default=None)
    add(
        "--compile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="torch.compile the model in place",
    )
    add("--compile-mode", choices=C.COMPILE_MODES)
    add(
        "--channels-last",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="keep the model in the channels-last memory format (default: on)",
    )
    add(
        "--freeze",
        nargs="+",
        metavar="GLOB",
        help="parameters to freeze, e.g. 'conv1.*'",
    )
    add("--seed", type=int)
    add(
        "--log-every",
        type=int,
        metavar="N",
        help="log the loss every N steps (default: every step, thinned past 5,000)",
    )
    add("--save", metavar="PATH", help="checkpoint, rewritten after every epoch")
    add(
        "--autosave-every",
        type=int,
        metavar="N",
        help="save the run folder's checkpoint every N epochs and at the end "
        "(default 1; 0: never)",
    )
    add("--resume", metavar="PATH", help="continue the run saved in this checkpoint")
    add(
        "--init-from",
        metavar="PATH",
        help="start from this checkpoint's (or state_dict's) weights: a new run, "
        "fresh optimizer and schedule; e.g. to fine-tune on my-digits",
    )
    add(
        "--init-partial",
        action="store_true",
        help="with --init-from: load the tensors that fit and reinitialise the "
        "rest (e.g. a new head) instead of refusing",
    )
    add("--metrics-json", metavar="PATH", help="write the metric history as JSON")
    add(
        "--tensorboard",
        action="store_true",
        help="also write TensorBoard event files into the run folder "
        "(needs the tensorboard package)",
    )
    add(
        "--profile-steps",
        type=int,
        metavar="N",
        help="record N steps with torch.profiler (after 3 to warm up) into the run "
        "folder's trace.json, and print the top operators by self time",
    )
    add("--quiet", action="store_true", help="no progress bar")
    cli_distributed.add_process_flags(add)


def class_weights_value(value: str) -> str | tuple[float, ...]:
    """``--class-weights``: ``none``, ``balanced``, or FILE read into its weights.

    A bad file is a :class:`~workbench.core.config.ConfigError`: one line, exit 2,
    before any run folder exists.
    """
    if value in C.CLASS_WEIGHT_MODES:
        return value
    return read_weights_file(value)


def config_from_args(args: argparse.Namespace, base: C.TrainConfig) -> C.TrainConfig:
    """``base`` with every flag the user gave applied (validated)."""
    names = set(C.TrainConfig.__dataclass_fields__)
    changes: dict[str, Any] = {}
    for name in names:
        value = getattr(args, "freeze" if name == "frozen" else name, None)
        if value is not None:
            changes[name] = tuple(value) if isinstance(value, list) else value
    if "class_weights" in changes:  # a FILE is read now: the config keeps values
        changes["class_weights"] = class_weights_value(changes["class_weights"])
    name = changes.pop("fixes", None)  # an overlay's name: the config keeps its fixes
    cfg = base.replace(**changes)
    if name is None:
        return cfg
    if name == "":
        return cfg.replace(fixes=(), fixes_name="")
    entries = Overlay.open(name, cfg, must_exist=True).config_entries()
    return cfg.replace(fixes=entries, fixes_name=name)
