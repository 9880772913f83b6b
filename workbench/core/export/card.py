"""The files beside an exported model: preprocess.json, labels.json, MODEL_CARD.md.

An exported graph takes normalised tensors; these say how to make them from a
picture, what the outputs mean, and how far the export was checked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from workbench import __version__
from workbench.core.checkpoints.io import config_of, info_of
from workbench.core.data.preprocess import recipe_numbers, style_of
from workbench.core.data.registry import (
    DataError,
    DatasetInfo,
    class_names,
    dataset_info,
)
from workbench.core.export.verify import (
    SINGLE_IMAGES,
    TOLERANCE,
    VERIFY_BATCH,
    EagerRecord,
)
from workbench.core.models.inputs import fit_to_model
from workbench.core.predict import PHOTO_DATASETS
from workbench.core.train.class_scores import class_scores


def input_stats(payload: dict[str, Any]) -> tuple[list[float], list[float]]:
    """The mean and std the run's loaders normalised with, per channel."""
    cfg, info = config_of(payload), info_of(payload)
    if cfg.dataset in PHOTO_DATASETS:
        return list(info.mean), list(info.std)
    try:  # digit inputs follow their style dataset's statistics (my-digits: base)
        stats = fit_to_model(dataset_info(cfg.style_dataset), cfg.model, cfg.weights)
    except DataError:
        stats = info
    return list(stats.mean), list(stats.std)


def preprocess_document(
    payload: dict[str, Any], input_name: str, output_name: str
) -> dict[str, Any]:
    """How to turn a picture into the exported model's input."""
    cfg, info = config_of(payload), info_of(payload)
    mean, std = input_stats(payload)
    channels, height, width = info.image_shape
    photo = cfg.dataset in PHOTO_DATASETS
    doc: dict[str, Any] = {
        "recipe": "image" if photo else "canvas",
        "input_name": input_name,
        "output_name": output_name,
        "input_shape": [channels, height, width],
        "channels": channels,
        "height": height,
        "width": width,
        "layout": "NCHW float32, any batch size",
        "scale": "pixel / 255",
        "mean": mean,
        "std": std,
        "normalise": "(pixel / 255 - mean) / std, per channel",
        "output": "logits (apply softmax for probabilities), one per label",
    }
    if photo:
        doc["resize"] = f"shorter side to {height}, then centre crop {height}x{width}"
        # What predict.py needs to repeat folder_images.read_square exactly.
        doc["size"] = height
        doc["interpolation"] = "bilinear, antialiased (Pillow BILINEAR)"
        doc["crop"] = "centre, offsets rounded half to even"
    else:
        # The digit recipe: white ink on black, placed like the training data.
        style = style_of(cfg.style_dataset)
        doc["style"] = style
        doc["canvas"] = (
            "grayscale, white ink on black; crop to the ink and place it the way "
            f"the {cfg.style_dataset} images were made (workbench.core.data.preprocess)"
            + ("; repeated to 3 channels" if channels == 3 else "")
        )
        doc.update(recipe_numbers(style))
    return doc


def write_preprocess(
    path: Path, payload: dict[str, Any], input_name: str, output_name: str
) -> None:
    doc = preprocess_document(payload, input_name, output_name)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def write_labels(path: Path, info: DatasetInfo) -> None:
    """The class names, indexed like the model's outputs."""
    path.write_text(json.dumps(list(info.class_names), indent=2) + "\n", "utf-8")


def _accuracy_line(payload: dict[str, Any]) -> str:
    epochs = (payload.get("history") or {}).get("epochs") or []
    if payload.get("ensemble_of"):
        return (
            f"an ensemble of {payload['ensemble_of']} fold models, not trained as "
            "one: its accuracy is the confusion matrix's above"
        )
    if not epochs:
        return "no epoch finished: no validation accuracy recorded"
    last = epochs[-1]
    best = max(e.get("val_accuracy", 0.0) for e in epochs)
    return (
        f"{100 * last['val_accuracy']:.2f}% after epoch {last['epoch'] + 1} "
        f"(best {100 * best:.2f}%), step {payload.get('global_step')}"
    )


def _figure_lines(result: Any) -> list[str]:
    lines = [
        "| format | file | top-1 agreement | max abs logit diff | result |",
        "|---|---|---|---|---|",
    ]
    for r in result.formats:
        v = r.verification
        if v is None:
            lines.append(f"| {r.format} | - | - | - | {r.message} |")
            continue
        lines.append(
            f"| {r.format} | {r.file} | {100 * v.agreement:.2f}% "
            f"({v.agreed}/{v.total}) | {v.max_diff:.1e} | {r.message} |"
        )
    return lines


# A confusion table wider than this is unreadable in a card: per-class lines then.
_TABLE_CLASSES = 20


def _confusion_lines(record: EagerRecord, names: tuple[str, ...]) -> list[str]:
    """The eager model's confusion matrix on the verification images."""
    matrix = record.confusion
    if len(names) <= _TABLE_CLASSES:
        lines = [
            "| true \\ predicted | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names),
        ]
        lines += [
            f"| {name} | " + " | ".join(str(v) for v in row) + " |"
            for name, row in zip(names, matrix.tolist(), strict=True)
        ]
        return lines
    totals = matrix.sum(1)
    return [
        f"- {name}: {matrix[i, i]}/{totals[i]} right" for i, name in enumerate(names)
    ]


def _data_lines(cfg: Any, info: DatasetInfo, record: EagerRecord | None) -> list[str]:
    lines = ["## Data", f"- dataset: {cfg.dataset} ({info.title})"]
    if cfg.data_dir:
        lines.append(f"- data folder: {cfg.data_dir}")
    if record is None or not record.images:
        return [*lines, ""]
    lines += [
        f"- validation images checked: {record.images}",
        f"- fingerprint (SHA-256 of those inputs and labels, as the model saw "
        f"them): `{record.fingerprint}`",
        "",
        "## Confusion matrix",
        f"The exported model's classes on the {record.images} validation images "
        f"(rows: true class, columns: predicted); accuracy "
        f"{100 * record.accuracy:.2f}%.",
        "",
        *_confusion_lines(record, info.class_names),
        "",
        *_score_lines(record, info.class_names),
    ]
    return lines


def _score_row(name: str, support: int, values: Sequence[float]) -> str:
    cells = " | ".join(f"{100 * v:.2f}%" for v in values)
    name = name.replace("|", "\\|")  # a bar would end the cell
    return f"| {name} | {support} | {cells} |"


def _score_lines(record: EagerRecord, names: tuple[str, ...]) -> list[str]:
    """Each class's precision, recall and F1 on the verification images."""
    scores = class_scores(record.confusion)
    macro, weighted = scores.macro(), scores.weighted()
    rows = [
        _score_row(
            name,
            int(scores.support[i]),
            (scores.precision[i], scores.recall[i], scores.f1[i]),
        )
        for i, name in enumerate(class_names(names, len(scores.support)))
    ]
    return [
        "## Precision, recall and F1 by class",
        f"On the same {record.images} images: macro F1 {100 * macro[2]:.2f}% "
        f"(every class counts the same), weighted F1 {100 * weighted[2]:.2f}% "
        "(each class by its images). Precision: the share of the images "
        "predicted as the class that are of it; recall: the share of its images "
        "predicted right.",
        "",
        "| class | support | precision | recall | F1 |",
        "|---|---|---|---|---|",
        *rows,
        _score_row("macro avg", record.images, macro),
        _score_row("weighted avg", record.images, weighted),
        "",
    ]


def write_card(
    path: Path,
    payload: dict[str, Any],
    result: Any,
    record: EagerRecord | None = None,
    *,
    weights: str = "",
) -> None:
    """MODEL_CARD.md: what the model is, how it was trained and checked.

    ``weights``: which of a run's weights these are (best.pt or the latest).
    """
    cfg, info = config_of(payload), info_of(payload)
    verdict = (
        "All exported files reproduce the eager model."
        if result.passed
        else "**VERIFICATION FAILED or incomplete**: see the table; do not deploy "
        "a file marked FAILED."
    )
    total = next((r.verification.total for r in result.formats if r.verification), 0)
    lines = [
        f"# {cfg.model} on {info.title}",
        "",
        "## Model",
        f"- architecture: `{cfg.model}`"
        + (f" (pretrained weights: {cfg.weights})" if cfg.weights != "none" else ""),
        f"- input: {'x'.join(map(str, info.image_shape))} (channels x height x "
        "width), normalised as `preprocess.json` says",
        f"- outputs: {info.num_classes} logits, labels in `labels.json`",
        "",
        *_data_lines(cfg, info, record),
        "## Training",
        *([f"- weights: {weights}"] if weights else []),
        f"- validation accuracy: {_accuracy_line(payload)}",
        f"- epochs finished: {len((payload.get('history') or {}).get('epochs') or [])}",
        f"- config: optimizer {cfg.optimizer}, lr {cfg.lr:g}, schedule "
        f"{cfg.schedule}, batch size {cfg.batch_size}, precision {cfg.precision}, "
        f"seed {cfg.seed}",
        f"- trained with torch {payload.get('torch_version', '?')}, workbench "
        f"{payload.get('workbench_version', '?')}",
        f"- exported with torch {torch.__version__}, workbench {__version__}",
        "",
        "## Verification",
        f"Each file was loaded back and run on the {total} validation images next "
        f"to the eager model (eval mode, fp32), in batches of {VERIFY_BATCH} and, "
        f"for the first {SINGLE_IMAGES}, of 1. Passing means the same top-1 class "
        f"for every image and no logit further than {TOLERANCE:g} from the eager "
        "one.",
        "",
        *_figure_lines(result),
        "",
        verdict,
        "",
        "## Use",
        "`python predict.py IMAGE` prints the class of a picture; `--json` gives "
        "every probability, `--runtime onnx` runs model.onnx. It needs numpy, "
        "Pillow and torch or onnxruntime, not the workbench, and prepares the "
        "picture as the workbench does (`preprocess.json`).",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
