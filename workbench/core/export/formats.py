"""Export a checkpoint's model to TorchScript, torch.export and ONNX, proven equal.

Exporting is not done until each artifact has been loaded back and run on the
run's validation images next to the eager model (``export_verify``). A format
that cannot take a model says why and the others still export; an artifact
that does not match is kept, marked with ``VERIFICATION_FAILED.txt``.
"""

from __future__ import annotations

import copy
import io
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from workbench.core.checkpoints.io import (
    config_of,
    eval_model,
    info_of,
    load_checkpoint,
)
from workbench.core.crossval.ensemble import load_ensemble
from workbench.core.crossval.group import FoldGroup
from workbench.core.data.build import build_loaders
from workbench.core.export import verify as V
from workbench.core.export.card import write_card, write_labels, write_preprocess
from workbench.core.host.process_tree import process_alive
from workbench.core.runs.best_or_latest import run_folder_of, which_weights

FORMATS = ("torchscript", "exported", "onnx")
FILE_NAMES = {"torchscript": "model.pt", "exported": "model.pt2", "onnx": "model.onnx"}
FAILED_MARKER = "VERIFICATION_FAILED.txt"
# Hidden folders an export is written into, then moved out of: .export-<pid>-...
STAGING = ".export-"
# A standalone script (numpy, Pillow, torch or onnxruntime; no workbench) that
# prepares a picture like the workbench and runs the exported model on it.
PREDICT_SCRIPT = "predict.py"
PREDICT_TEMPLATE = Path(__file__).with_name("predict_template.py")
# Names the ONNX graph's input and output carry (preprocess.json repeats them).
INPUT_NAME, OUTPUT_NAME = "input", "logits"

Progress = Callable[[str], None]


class ExportError(Exception):
    """The export cannot start: no such format, an output path that is a file."""


@dataclass(frozen=True, slots=True)
class FormatResult:
    """One format's outcome: its file and how it compared, or why it has none."""

    format: str
    file: str | None
    verification: V.Verification | None
    message: str

    @property
    def passed(self) -> bool:
        """Exported and proven equal."""
        return self.verification is not None and self.verification.passed

    @property
    def agreement(self) -> float | None:
        v = self.verification
        return None if v is None else v.agreement

    @property
    def max_diff(self) -> float | None:
        v = self.verification
        return None if v is None else v.max_diff


@dataclass(frozen=True, slots=True)
class ExportResult:
    """Every requested format's outcome, and where the files are."""

    out_dir: Path
    model: str
    formats: tuple[FormatResult, ...]
    weights: str = ""  # which of a run's weights (best.pt or the latest), if a run's

    @property
    def passed(self) -> bool:
        """Every requested format exported and verified."""
        return all(r.passed for r in self.formats)

    @property
    def verification_failed(self) -> bool:
        """Some artifact was written but does not match the eager model."""
        return any(r.verification is not None and not r.passed for r in self.formats)


def _example(shape: tuple[int, ...]) -> torch.Tensor:
    # Batch 2, not 1: exporters specialise a dimension of size 1.
    return torch.zeros(2, *shape)


def _torchscript(model: nn.Module, shape: tuple[int, ...], path: Path) -> None:
    # Traced (not scripted): every built-in and torchvision model traces.
    # Without gradients, as trace's own check reruns it: nn.MultiheadAttention
    # (the ViTs) takes another path with them, and the check would fail.
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", FutureWarning)  # TorchScript's deprecation
        traced = torch.jit.trace(model, _example(shape))
        buffer = io.BytesIO()
        torch.jit.save(traced, buffer)
    _write_bytes(path, buffer)


def _batch_dim() -> Any:
    return {0: torch.export.Dim("batch", min=1, max=1 << 16)}


def _exported(model: nn.Module, shape: tuple[int, ...], path: Path) -> None:
    program = torch.export.export(
        model, (_example(shape),), dynamic_shapes=(_batch_dim(),)
    )
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    _write_bytes(path, buffer)


def _write_bytes(path: Path, buffer: io.BytesIO) -> None:
    """Write what torch saved in memory: a full disk is an ``OSError`` here.

    Saved to a path, TorchScript writes from C++ and a full disk aborts the
    whole process (exit 134) with its file half written.
    """
    with open(path, "wb") as handle:
        handle.write(buffer.getbuffer())


def _onnx(model: nn.Module, shape: tuple[int, ...], path: Path) -> None:
    torch.onnx.export(
        model,
        (_example(shape),),
        str(path),
        input_names=[INPUT_NAME],
        output_names=[OUTPUT_NAME],
        dynamic_shapes=(_batch_dim(),),
        dynamo=True,
        external_data=False,  # one self-contained file
        verbose=False,
    )


EXPORTERS: dict[str, Callable[[nn.Module, tuple[int, ...], Path], None]] = {
    "torchscript": _torchscript,
    "exported": _exported,
    "onnx": _onnx,
}


def check_formats(formats: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``formats`` in the standard order, without repeats; unknown ones refused."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ExportError(
            f"unknown format {', '.join(unknown) or '(none)'}: choose from "
            + ", ".join(FORMATS)
        )
    return tuple(f for f in FORMATS if f in formats)


def validation_images(payload: dict[str, Any]) -> Iterator[V.Batch]:
    """The run's validation images as its loaders feed them, batches of 64."""
    cfg = config_of(payload).replace(device="cpu")
    return V.validation_batches(build_loaders(cfg, "cpu").val)


def export_checkpoint(
    checkpoint: str | Path,
    out_dir: str | Path,
    formats: tuple[str, ...] | list[str] = FORMATS,
    progress: Progress | None = None,
) -> ExportResult:
    """Export, verify and describe the checkpoint's model in ``out_dir``.

    Raises
    ------
    CheckpointError, DataError, ExportError
        The checkpoint does not load, its validation data is missing, a format
        is unknown or ``out_dir`` cannot be a folder.
    """
    formats = check_formats(formats)
    payload = load_checkpoint(checkpoint)
    model = eval_model(payload)
    source = Path(checkpoint).expanduser()
    # A run's best.pt or latest checkpoint.pt: the card says which it is.
    weights = (
        f"{source.name}, {which_weights(source, payload.get('epoch'))}"
        if run_folder_of(source) is not None
        else ""
    )
    return export_model(payload, model, out_dir, formats, progress, weights)


def export_group(
    group: FoldGroup,
    out_dir: str | Path,
    formats: tuple[str, ...] | list[str] = FORMATS,
    progress: Progress | None = None,
) -> ExportResult:
    """Export a finished cross-validation's fold models as one averaging model.

    Verified like any export, against the eager ensemble, on the dataset's own
    validation images (no fold model trained or chose its epoch on them).
    """
    formats = check_formats(formats)
    payload, ensemble = load_ensemble(group)
    weights = (
        f"an averaging ensemble of the {payload['ensemble_of']} fold models of "
        f"{group.id} (each fold run's best.pt)"
    )
    result = export_model(payload, ensemble, out_dir, formats, progress, weights)
    members = f"{payload['ensemble_of']} x {result.model}"
    return replace(result, model=f"an ensemble of {members}")


def export_model(
    payload: dict[str, Any],
    model: nn.Module,
    out_dir: str | Path,
    formats: tuple[str, ...],
    progress: Progress | None = None,
    weights: str = "",
) -> ExportResult:
    """Export ``model`` (eval mode), which ``payload`` describes, into ``out_dir``."""
    say = progress or (lambda _text: None)
    out = Path(out_dir).expanduser()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot create {out}: {exc.strerror or exc}") from None
    # Everything is written into a hidden folder inside ``out`` and moved in
    # when complete: a failure (a full disk) leaves no half-written export.
    remove_abandoned_staging(out)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING}{os.getpid()}-", dir=out))
    except OSError as exc:
        raise ExportError(f"cannot write in {out}: {exc.strerror or exc}") from None
    try:
        result = _export_into(staging, payload, model, formats, say, weights)
        _publish(staging, out)
    except OSError as exc:
        raise ExportError(
            f"cannot write the export in {out}: {exc.strerror or exc}; "
            "nothing there was changed"
        ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return replace(result, out_dir=out, weights=weights)


def remove_abandoned_staging(out: Path) -> None:
    """Remove hidden staging folders an export killed mid-way left in ``out``.

    Each is named after its process: one whose process is gone is abandoned
    (one of a running export, in another window, is left alone).
    """
    for folder in out.glob(f"{STAGING}*"):
        owner = folder.name.removeprefix(STAGING).split("-", 1)[0]
        if not (owner.isdigit() and process_alive(int(owner))):
            shutil.rmtree(folder, ignore_errors=True)


def _export_into(
    folder: Path,
    payload: dict[str, Any],
    model: nn.Module,
    formats: tuple[str, ...],
    say: Progress,
    weights: str = "",
) -> ExportResult:
    """Every file of the export, written into ``folder``."""
    info = info_of(payload)
    name = config_of(payload).model
    say("reading the validation images")
    batches = validation_images(payload)
    runners: dict[str, V.Runner] = {}
    reasons: dict[str, str] = {}
    for fmt in formats:
        path = folder / FILE_NAMES[fmt]
        say(f"exporting {fmt} to {path.name}")
        try:
            # A copy: an exporter may trace or rewrite the module it is given.
            EXPORTERS[fmt](copy.deepcopy(model), info.image_shape, path)
            runners[fmt] = V.load_runner(fmt, path)
        except OSError:
            raise  # the disk (full, gone): the whole export stops, nothing kept
        except Exception as exc:  # an exporter's refusal is a result, not a crash
            reasons[fmt] = f"cannot export {name}: {V.first_line(exc)}"
            path.unlink(missing_ok=True)
    record = V.EagerRecord(info.num_classes)
    checks = V.verify(model, runners, batches, say, record)
    results = tuple(_result(fmt, checks.get(fmt), reasons.get(fmt)) for fmt in formats)
    result = ExportResult(folder, name, results)
    write_preprocess(folder / "preprocess.json", payload, INPUT_NAME, OUTPUT_NAME)
    write_labels(folder / "labels.json", info)
    write_card(folder / "MODEL_CARD.md", payload, result, record, weights=weights)
    shutil.copyfile(PREDICT_TEMPLATE, folder / PREDICT_SCRIPT)
    _mark(folder, result)
    return result


def _publish(staging: Path, out: Path) -> None:
    """Move the finished export into ``out``; drop what an earlier one left.

    A model file or failure marker of a previous export into the same folder
    would sit beside a card that does not mention it: it goes.
    """
    made = {path.name for path in staging.iterdir()}
    for stale in (*FILE_NAMES.values(), FAILED_MARKER):
        if stale not in made:
            (out / stale).unlink(missing_ok=True)
    for path in staging.iterdir():
        path.replace(out / path.name)


def _result(fmt: str, check: V.Verification | None, reason: str | None) -> FormatResult:
    if check is None:
        return FormatResult(fmt, None, None, reason or "not exported")
    if check.passed:
        message = "ok"
    elif check.error:
        message = f"FAILED: {check.error}"
    else:
        message = (
            f"FAILED: differs from the eager model (tolerance {check.tolerance:g})"
        )
    return FormatResult(fmt, FILE_NAMES[fmt], check, message)


def _mark(folder: Path, result: ExportResult) -> None:
    """Leave the marker beside failed artifacts."""
    if not result.verification_failed:
        return
    marker = folder / FAILED_MARKER
    lines = [
        "These exported files did NOT reproduce the eager model's outputs.",
        "Do not deploy them; see MODEL_CARD.md for the figures.",
        "",
    ]
    lines += [
        f"{r.format}: {r.file}: {r.message}"
        for r in result.formats
        if r.verification is not None and not r.passed
    ]
    marker.write_text("\n".join(lines) + "\n", encoding="utf-8")
