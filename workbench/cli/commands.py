"""``ptcore-workbench``: the window by default, or headless commands.

``train`` and ``predict`` run the same core engine as the window, with no Qt
imported, so they work over SSH and in CI.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.cli import distributed as cli_distributed
from workbench.cli import export as cli_export
from workbench.cli import models as cli_models
from workbench.cli import script as cli_script
from workbench.cli.console import percent, say
from workbench.cli.interrupts import stop_on_first_interrupt
from workbench.cli.progress import DownloadBars, StepBar
from workbench.core import config as C
from workbench.core.host.memory import keep_freed_memory

log = logging.getLogger("workbench")

MODEL_HELP = (
    f"{', '.join(C.MODELS)}, a torchvision classifier (resnet18, "
    "mobilenet_v3_small, ...: see `models`) or path/to/file.py:Name"
)


def _add_train_flags(parser: argparse.ArgumentParser) -> None:
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
    add("--batch-size", type=int)
    add("--lr", type=float, help="learning rate (the peak, with onecycle)")
    add("--weight-decay", type=float)
    add("--optimizer", choices=C.OPTIMIZERS)
    add("--schedule", choices=C.SCHEDULES)
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
    add("--quiet", action="store_true", help="no progress bar")
    cli_distributed.add_process_flags(add)


def build_parser() -> argparse.ArgumentParser:
    """The command line; with no command the window opens."""
    parser = argparse.ArgumentParser(
        prog="ptcore-workbench",
        description="See and steer PyTorch training. No command opens the window.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_train_flags(sub.add_parser("train", help="train headless"))
    predict = sub.add_parser("predict", help="classify images with a checkpoint")
    predict.add_argument("--checkpoint", required=True, metavar="PATH")
    predict.add_argument("images", nargs="+", metavar="IMAGE")
    predict.add_argument(
        "--top", type=int, default=3, help="classes to show (default 3)"
    )
    sub.add_parser(
        "devices", help="list CPU/CUDA/MPS devices and why any is unavailable"
    )
    runs = sub.add_parser("runs", help="the run ledger: list, show, reproduce runs")
    runs_sub = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    runs_sub.add_parser("list", help="every run, newest first")
    show = runs_sub.add_parser("show", help="one run: config, metrics, events")
    show.add_argument("id", metavar="ID", help="run id, a unique prefix of it, or name")
    again = runs_sub.add_parser(
        "reproduce", help="train a finished run again and compare every logged loss"
    )
    again.add_argument("id", metavar="ID")
    inspect = sub.add_parser(
        "inspect", help="print what a checkpoint holds, or how it fits a model"
    )
    inspect.add_argument("path", metavar="PATH", help="checkpoint or state_dict file")
    inspect.add_argument(
        "--against-model",
        metavar="NAME",
        choices=C.MODELS,
        help="compare the weights with this model: what fits, what does not",
    )
    inspect.add_argument(
        "--classes",
        type=int,
        metavar="N",
        help="classes of that model (default: the checkpoint's dataset, else 10)",
    )
    check = sub.add_parser(
        "check-data",
        help="check a folder of labelled images (DIR/<class>/<image>) before training",
    )
    check.add_argument("path", metavar="DIR")
    check.add_argument(
        "--image-size",
        type=int,
        default=64,
        metavar="N",
        help="the size images are trained at, to flag far smaller ones (default 64)",
    )
    summary = sub.add_parser(
        "summary", help="each layer's output shape, parameters and MACs; the totals"
    )
    summary.add_argument("--model", required=True, help=MODEL_HELP)
    for flag, default in (("image-size", 28), ("channels", None), ("classes", 10)):
        summary.add_argument(f"--{flag}", type=int, default=default, metavar="N")
    sub.add_parser("models", help="every model --model takes, by family")
    cli_export.add_export_parser(sub)
    cli_script.add_script_parser(sub)
    summary.add_argument("--batch-size", type=int, default=256, metavar="N")
    return parser


def cmd_check_data(args: argparse.Namespace) -> int:
    """Report images per class and every defect; 0 if the data can train, else 1."""
    from workbench.core.data.folder_check import check_folder

    report = check_folder(args.path, image_size=args.image_size)
    for line in report.lines():
        say(line)
    return 0 if report.can_train else 1


def config_from_args(args: argparse.Namespace, base: C.TrainConfig) -> C.TrainConfig:
    """``base`` with every flag the user gave applied (validated)."""
    names = set(C.TrainConfig.__dataclass_fields__)
    changes: dict[str, Any] = {}
    for name in names:
        value = getattr(args, "freeze" if name == "frozen" else name, None)
        if value is not None:
            changes[name] = tuple(value) if isinstance(value, list) else value
    return base.replace(**changes)


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    from workbench.core.atomic_files import write_atomically

    text = json.dumps(data, indent=2, allow_nan=True) + "\n"
    write_atomically(path, lambda handle: handle.write(text.encode("utf-8")))


def metrics_document(
    cfg: C.TrainConfig, history: Any, final: Any | None
) -> dict[str, Any]:
    """The ``--metrics-json`` document (see README, "Metrics JSON")."""
    # Epochs count from 1 for people; the engine's events count from 0.
    epochs = [{**e.to_dict(), "epoch": e.epoch + 1} for e in history.epochs]
    doc: dict[str, Any] = {
        "config": cfg.to_dict(),
        "epochs": epochs,
        "steps": [{"step": s, "loss": loss} for s, loss in history.steps],
        "final": None,
    }
    if final is not None:
        doc["final"] = {
            "val_accuracy": final.val_accuracy,
            "val_loss": final.val_loss,
            "images_per_s": final.images_per_s,
            "seconds": final.seconds,
            "compile_seconds": final.compile_seconds,
            "step_seconds": final.step_seconds,
            "global_step": final.global_step,
            "stopped": final.stopped,
        }
    return doc


def cmd_train(args: argparse.Namespace) -> int:
    """Train headless, or re-launch on ``--nproc`` processes through torchrun."""
    if args.nproc > 1:
        base = C.load_config(args.config) if args.config else C.TrainConfig()
        return cli_distributed.relaunch(args, config_from_args(args, base))
    return cli_distributed.run_rank(_train, args)


def _train(args: argparse.Namespace) -> int:
    """Train headless with a progress bar; save and report as asked."""
    from workbench.core import events as E
    from workbench.core.checkpoints.io import (
        config_of,
        load_weights_file,
        save_checkpoint,
    )
    from workbench.core.session import RunPrepared, Session, StartKind
    from workbench.core.train.engine import TrainControl

    if args.resume and args.init_from:
        raise C.ConfigError(
            "--resume continues a run, --init-from starts a new one from its "
            "weights: give one of them"
        )
    session = Session(origin="command line")
    session.tensorboard = args.tensorboard
    downloads = DownloadBars(args.quiet)
    base = C.load_config(args.config) if args.config else None
    if args.resume:
        opened = session.open(args.resume, progress=downloads, evaluate=False)
        session.adopt(opened)
        for note in opened.notes:
            say(f"note: {note}")
        base = base or opened.run.config
    base = base or C.TrainConfig()
    if args.init_from:
        # Read once: its architecture is the default, its weights the start.
        state, payload = load_weights_file(args.init_from)
        if payload is not None and not args.model:
            base = base.replace(model=config_of(payload).model)
        cfg = config_from_args(args, base)
        say(_load_initial_weights(session, cfg, args, state, payload))
    else:
        cfg = config_from_args(args, base)
    plan = session.plan_resume(cfg, args.resume) if args.resume else session.plan(cfg)
    if args.resume:
        run = opened.run
        if plan.kind is StartKind.NEW:
            raise C.ConfigError(
                f"cannot resume {args.resume}: {plan.why_new} (give --init-from to "
                "start a new run from its weights)"
            )
        changed = f", with {', '.join(plan.changed)} changed" if plan.changed else ""
        say(
            f"resuming {args.resume} at step {run.global_step} "
            f"(epoch {run.epoch + 1}){changed}"
        )
    for note in session.begin(plan):
        say(f"warning: {note}")
    if session.folder is not None:
        every = cfg.autosave_every
        when = {0: "never", 1: "every epoch"}.get(every, f"every {every} epochs")
        where = session.folder.path
        say(f"run folder: {where} (checkpoint saved {when}, and at the end)")

    control = TrainControl()
    stop_on_first_interrupt(control)
    save_path = Path(args.save) if args.save else None
    metrics_path = Path(args.metrics_json) if args.metrics_json else None
    progress = StepBar(args.quiet)
    result = None
    try:
        for event in session.train(plan, control, progress=downloads):
            if isinstance(event, RunPrepared):
                downloads.close()
                run = event.run
                progress.open(run)
                continue
            text = describe_event(event, run)
            if text:
                say(text)
            progress.show(event)
            if isinstance(event, E.EpochMetrics):
                if save_path:
                    save_checkpoint(save_path, run)
                if metrics_path:
                    document = metrics_document(cfg, run.history, None)
                    _write_json_atomic(metrics_path, document)
            elif isinstance(event, E.TrainResult):
                result = event
    finally:
        progress.close()
        downloads.close()
    session.finish(result)
    if result is None:  # stopped before the first step
        say("stopped before training began")
        return 130
    if save_path:
        save_checkpoint(save_path, run)
    if metrics_path:
        _write_json_atomic(metrics_path, metrics_document(cfg, run.history, result))
    say(summary_line(result, run, save_path))
    return 130 if result.stopped else 0


def describe_event(event: Any, run: Any) -> str | None:
    """The line the console prints for an engine event, if any."""
    from workbench.core import events as E

    if isinstance(event, E.RunStarted):
        images = run.loaders.train.num_samples
        return (
            f"training {event.model} on {run.config.dataset} ({images:,} images) on "
            f"{event.device}, {event.precision}, {event.trainable_parameters:,}/"
            f"{event.parameters:,} parameters trainable"
            + (f", {event.feature_cache}" if event.feature_cache else "")
        )
    if isinstance(event, E.Notice):
        return f"note: {event.message}"
    if isinstance(event, E.CompileFinished):
        return f"torch.compile took {event.seconds:.1f} s"
    if isinstance(event, E.EpochMetrics):
        return (
            f"epoch {event.epoch + 1}: train loss {event.train_loss:.4f} "
            f"acc {percent(event.train_accuracy)} | val loss {event.val_loss:.4f} "
            f"acc {percent(event.val_accuracy)} | "
            f"{event.images_per_s:,.0f} img/s | {event.seconds:.1f} s"
        )
    return None


def summary_line(result: Any, run: Any, save_path: Path | None) -> str:
    """The one-line summary that ends a headless run."""
    state = "stopped" if result.stopped else "done"
    parts = [
        f"{state}: step {result.global_step}/{run.total_steps}",
        f"val accuracy {percent(result.val_accuracy)}",
        f"{result.images_per_s:,.0f} img/s",
        f"{result.seconds:.1f} s",
    ]
    if run.config.compile:
        parts.append(f"compile {result.compile_seconds:.1f} s")
    if save_path:
        parts.append(f"saved {save_path}")
    return ", ".join(parts)


def _load_initial_weights(
    session: Any,
    cfg: C.TrainConfig,
    args: Any,
    state: dict[str, Any],
    payload: dict[str, Any] | None,
) -> str:
    """Make ``--init-from`` the next run's weights; the line saying what happened."""
    from workbench.core.checkpoints.io import CheckpointError
    from workbench.core.model_offer import offer_weights

    offer = offer_weights(args.init_from, cfg, state, payload)
    diff = offer.diff
    if not diff.exact and not (diff.partial and args.init_partial):
        hint = " (add --init-partial to load what fits)" if diff.partial else ""
        if offer.other_architecture:
            hint = f" (it was saved from {offer.other_architecture}: drop --model)"
        raise CheckpointError(
            f"{args.init_from} does not fit this {args.model or 'model'}: "
            f"{diff.summary()}{hint}; " + "; ".join(diff.lines(limit=5))
        )
    _model, weights = session.accept_weights(offer, cfg.frozen)
    if diff.exact:
        return f"starting from the weights in {args.init_from}"
    return f"starting from {args.init_from}, partly: {weights.summary}"


def cmd_inspect(args: argparse.Namespace) -> int:
    """Print a checkpoint's contents, and with --against-model how it fits."""
    from workbench.core.checkpoints.io import load_weights_file
    from workbench.core.checkpoints.report import checkpoint_lines, diff_lines
    from workbench.core.data import DATASET_INFO
    from workbench.core.models.builtins import build_model
    from workbench.core.models.inputs import model_channels
    from workbench.core.models.state_dict_match import compare_state

    path = Path(args.path).expanduser()
    state, payload = load_weights_file(path)
    for line in checkpoint_lines(path, state, payload):
        say(line)
    if args.against_model:
        classes = args.classes
        if classes is None:
            dataset = (payload or {}).get("config", {}).get("dataset")
            info = DATASET_INFO.get(dataset) if isinstance(dataset, str) else None
            classes = info.num_classes if info else 10
        if classes < 1:
            raise C.ConfigError("--classes: must be a whole number >= 1")
        side = 28 if model_channels(args.against_model, 1) == 1 else 224
        shape = (model_channels(args.against_model, 1), side, side)
        model = build_model(args.against_model, classes, seed=0, input_shape=shape)
        diff = compare_state(model, state)
        for line in diff_lines(diff, args.against_model, classes):
            say(line)
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    """Print each image's predicted class and top probabilities."""
    from workbench.core.checkpoints.io import (
        config_of,
        eval_model,
        info_of,
        load_checkpoint,
    )
    from workbench.core.models.source import SHA_KEY, model_file_change
    from workbench.core.predict import (
        PHOTO_DATASETS,
        PredictError,
        load_image,
        photo_input,
        predict,
        preprocess,
    )

    payload = load_checkpoint(args.checkpoint)
    cfg = config_of(payload)
    info = info_of(payload)
    changed = model_file_change(cfg.model, payload.get(SHA_KEY), args.checkpoint)
    if changed is not None:
        sys.stderr.write(f"warning: {changed}\n")
    model = eval_model(payload)
    failures = 0
    for path in args.images:
        try:
            if cfg.dataset in PHOTO_DATASETS:
                batch = photo_input(path, info)
            else:
                image = load_image(path)
                batch = preprocess(image, cfg.style_dataset, cfg.model, cfg.weights)
        except PredictError as exc:
            sys.stderr.write(f"{path}: {exc}\n")
            failures += 1
            continue
        result = predict(model, batch, info.class_names)[0]
        ranked = "  ".join(f"{name} {100 * p:.1f}%" for name, p in result.top(args.top))
        say(f"{path}: {info.class_names[result.label]}   ({ranked})")
    return 1 if failures else 0


def cmd_devices(_: argparse.Namespace) -> int:
    """List every device and why an unavailable one cannot be used."""
    from workbench.core.train.devices import best_device, list_devices

    for info in list_devices():
        status = "available" if info.available else f"unavailable: {info.reason}"
        say(f"{info.spec:8} {info.name}  ({status})")
    say(f"auto -> {best_device()}")
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    """``runs list``, ``runs show ID`` and ``runs reproduce ID``."""
    from workbench.cli.runs import run_command

    return run_command(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ptcore-workbench``."""
    keep_freed_memory()  # before any tensor: every command trains or reads faster
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for --nproc
    if args.command is None:
        from workbench.app import run_window

        return run_window()
    commands = {
        "train": cmd_train,
        "predict": cmd_predict,
        "devices": cmd_devices,
        "inspect": cmd_inspect,
        "check-data": cmd_check_data,
        "runs": cmd_runs,
        "summary": cli_models.cmd_summary,
        "models": cli_models.cmd_models,
        "export": cli_export.cmd_export,
        "script": cli_script.cmd_script,
    }
    from workbench.core.errors import USER_ERRORS

    try:
        return commands[args.command](args)
    except USER_ERRORS as exc:
        sys.stderr.write(f"ptcore-workbench {args.command}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
