"""An export's MODEL_CARD.md, labels.json and preprocess.json, from hand-built records.

The card-writing functions are called directly with a checkpoint payload, an
``ExportResult`` and an ``EagerRecord`` made here, so every figure the card
shows is known in advance: each confusion cell, the accuracy, the fingerprint,
each format's verification line. No model is exported (that is
tests/core/test_export.py, seconds a format).
"""

from __future__ import annotations

import hashlib
import json
import re

import torch
from sklearn.metrics import precision_recall_fscore_support

from workbench import __version__
from workbench.core.config import TrainConfig
from workbench.core.data.preprocess import recipe_numbers
from workbench.core.data.registry import DATASET_INFO, DatasetInfo
from workbench.core.export.card import (
    preprocess_document,
    write_card,
    write_labels,
)
from workbench.core.export.formats import ExportResult, FormatResult
from workbench.core.export.verify import (
    SINGLE_IMAGES,
    TOLERANCE,
    VERIFY_BATCH,
    EagerRecord,
    Verification,
)

PETS = DatasetInfo(
    name="folder",
    title="Image folder pets",
    num_classes=3,
    class_names=("tabby", "beagle", "fox"),  # not in sorted order
    mean=(0.5, 0.4, 0.3),
    std=(0.2, 0.25, 0.3),
    offline=True,
    image_shape=(3, 32, 32),
)

# Nine validation images in two batches: (true class, predicted class).
#   true tabby: tabby, tabby, beagle -> row tabby:  2 1 0
#   true beagle: beagle, fox         -> row beagle: 0 1 1
#   true fox: fox, fox, tabby, fox   -> row fox:    1 0 3
BATCHES = (
    [(0, 0), (0, 0), (0, 1), (1, 1), (1, 2)],
    [(2, 2), (2, 2), (2, 0), (2, 2)],
)
CONFUSION_TABLE = [
    "| true \\ predicted | tabby | beagle | fox |",
    "|---|---|---|---|",
    "| tabby | 2 | 1 | 0 |",
    "| beagle | 0 | 1 | 1 |",
    "| fox | 1 | 0 | 3 |",
]


def _payload(cfg: TrainConfig, info: DatasetInfo, epochs: list[dict]) -> dict:
    """What a checkpoint holds that the card reads."""
    return {
        "config": cfg.to_dict(),
        "dataset_info": info.to_dict(),
        "history": {"epochs": epochs},
        "global_step": 42,
        "torch_version": "2.0.0+trained",
        "workbench_version": "0.9.trained",
    }


def _pets_payload(tmp_path, **changes) -> dict:
    cfg = TrainConfig(
        dataset="folder",
        data_dir=str(tmp_path / "pets"),
        model="resnet18",
        weights="IMAGENET1K_V1",
        optimizer="sgd",
        lr=0.01,
        schedule="constant",
        batch_size=32,
        precision="fp32",
        seed=7,
        image_size=32,
    ).replace(**changes)
    epochs = [
        {"epoch": 0, "val_accuracy": 0.5},
        {"epoch": 1, "val_accuracy": 0.75},
        {"epoch": 2, "val_accuracy": 0.625},
    ]
    return _payload(cfg, PETS, epochs)


def _images(count: int, start: int) -> torch.Tensor:
    """Distinct float images, so the fingerprint depends on every one."""
    return torch.arange(start, start + count * 12, dtype=torch.float32).view(
        count, 3, 2, 2
    )


def _record(batches=BATCHES, num_classes=3) -> tuple[EagerRecord, str]:
    """The record of ``batches`` and the SHA-256 worked out here by hand."""
    record = EagerRecord(num_classes)
    digest = hashlib.sha256()
    start = 0
    for pairs in batches:
        x = _images(len(pairs), start)
        start += x.numel()
        y = torch.tensor([true for true, _ in pairs])
        predicted = torch.tensor([guess for _, guess in pairs])
        # Logits whose largest entry is the predicted class, none of them one-hot.
        logits = torch.rand(
            len(pairs), num_classes
        ) + 5.0 * torch.nn.functional.one_hot(predicted, num_classes)
        record.add(x, y, logits)
        digest.update(x.numpy().tobytes())
        digest.update(y.to(torch.int64).numpy().tobytes())
    return record, digest.hexdigest()


def _checked(fmt: str, file: str, agreed: int, total: int, diff: float) -> FormatResult:
    v = Verification(agreed, total, diff)
    message = "ok" if v.passed else "FAILED: differs from the eager model"
    return FormatResult(fmt, file, v, message)


def _all_passed(total: int = 9) -> ExportResult:
    return ExportResult(
        out_dir=None,  # type: ignore[arg-type] # the card never reads it
        model="resnet18",
        formats=(
            _checked("torchscript", "model.pt", total, total, 0.0),
            _checked("exported", "model.pt2", total, total, 0.0),
            _checked("onnx", "model.onnx", total, total, 9.3e-8),
        ),
    )


def _card(tmp_path, payload, result, record=None) -> str:
    path = tmp_path / "MODEL_CARD.md"
    write_card(path, payload, result, record)
    return path.read_text(encoding="utf-8")


def _block(lines: list[str], expected: list[str]) -> bool:
    """True when ``expected`` occurs in ``lines`` as consecutive lines."""
    n = len(expected)
    return any(lines[i : i + n] == expected for i in range(len(lines) - n + 1))


# ------------------------------------------------------------- the record


def test_the_record_counts_each_true_and_predicted_pair_in_its_cell():
    record, _ = _record()
    assert record.confusion.tolist() == [[2, 1, 0], [0, 1, 1], [1, 0, 3]]
    assert record.images == 9
    assert record.accuracy == 6 / 9


def test_the_fingerprint_is_the_sha256_of_the_inputs_and_labels_in_order():
    record, expected = _record()
    assert record.fingerprint == expected
    # One label changed, same inputs: another fingerprint.
    other_labels, _ = _record(([(0, 0), (0, 0), (0, 1), (1, 1), (2, 2)], BATCHES[1]))
    assert other_labels.fingerprint != record.fingerprint


# --------------------------------------------------------------- the card


def test_the_card_shows_the_confusion_matrix_cell_by_cell(tmp_path):
    record, _ = _record()
    card = _card(tmp_path, _pets_payload(tmp_path), _all_passed(), record)
    lines = card.splitlines()
    assert "## Confusion matrix" in lines
    assert _block(lines, CONFUSION_TABLE), card
    assert (
        "The exported model's classes on the 9 validation images (rows: true "
        "class, columns: predicted); accuracy 66.67%."
    ) in lines


def test_the_card_names_the_data_it_was_checked_on_and_its_fingerprint(tmp_path):
    record, digest = _record()
    card = _card(tmp_path, _pets_payload(tmp_path), _all_passed(), record)
    lines = card.splitlines()
    assert "- dataset: folder (Image folder pets)" in lines
    assert f"- data folder: {tmp_path / 'pets'}" in lines
    assert "- validation images checked: 9" in lines
    assert (
        "- fingerprint (SHA-256 of those inputs and labels, as the model saw "
        f"them): `{digest}`"
    ) in lines


def test_a_card_without_a_record_has_no_figures_it_cannot_know(tmp_path):
    payload = _pets_payload(tmp_path)
    for record in (None, EagerRecord(3)):  # none, or one that saw no image
        card = _card(tmp_path, payload, _all_passed(), record)
        assert "- dataset: folder (Image folder pets)" in card
        assert "fingerprint" not in card
        assert "## Confusion matrix" not in card
        assert "validation images checked" not in card


def test_twenty_classes_are_a_table_and_more_are_one_line_each(tmp_path):
    def classes(n: int) -> DatasetInfo:
        names = tuple(f"c{i:02d}" for i in range(n))
        return DatasetInfo(
            "folder", "many", n, names, (0.5,) * 3, (0.2,) * 3, True, (3, 8, 8)
        )

    def card_for(n: int) -> list[str]:
        # Two images a class: the even classes both right, the odd ones one.
        pairs = []
        for c in range(n):
            pairs += [(c, c), (c, c if c % 2 == 0 else (c + 1) % n)]
        record, _ = _record((pairs,), num_classes=n)
        cfg = TrainConfig(dataset="folder", data_dir=str(tmp_path))
        payload = _payload(cfg, classes(n), [])
        return _card(tmp_path, payload, _all_passed(2 * n), record).splitlines()

    twenty = card_for(20)
    assert "| true \\ predicted | " + " | ".join(classes(20).class_names) + " |" in (
        twenty
    )
    assert "| c01 | 0 | 1 | 1 | " + " | ".join(["0"] * 17) + " |" in twenty
    assert not any(line.startswith("- c00:") for line in twenty)

    lines = card_for(21)
    assert not any(line.startswith("| true \\ predicted") for line in lines)
    per_class = [line for line in lines if re.match(r"- c\d\d:", line)]
    assert per_class == [
        f"- c{c:02d}: {2 if c % 2 == 0 else 1}/2 right" for c in range(21)
    ]


# Lopsided: beagles are never predicted (both read as tabby), foxes all found.
#   true tabby: tabby x3, fox -> precision 3/5, recall 3/4
#   true beagle: tabby x2     -> never predicted: precision 0, recall 0
#   true fox: fox x3          -> precision 3/4, recall 1
LOPSIDED = ([(0, 0), (0, 0), (0, 0), (0, 2), (1, 0), (1, 0), (2, 2), (2, 2), (2, 2)],)


def test_the_card_scores_each_class_and_both_averages(tmp_path):
    record, _ = _record(LOPSIDED)
    lines = _card(tmp_path, _pets_payload(tmp_path), _all_passed(), record).splitlines()
    truth = [t for t, _ in LOPSIDED[0]]
    guess = [p for _, p in LOPSIDED[0]]
    expected = precision_recall_fscore_support(
        truth, guess, labels=[0, 1, 2], zero_division=0
    )
    averages = [
        precision_recall_fscore_support(truth, guess, average=a, zero_division=0)
        for a in ("macro", "weighted")
    ]

    def row(name, support, values):
        return (
            f"| {name} | {support} | "
            + " | ".join(f"{100 * v:.2f}%" for v in values)
            + " |"
        )

    table = [
        "| class | support | precision | recall | F1 |",
        "|---|---|---|---|---|",
        *(
            row(name, expected[3][c], [expected[k][c] for k in range(3)])
            for c, name in enumerate(PETS.class_names)
        ),
        row("macro avg", 9, averages[0][:3]),
        row("weighted avg", 9, averages[1][:3]),
    ]
    assert _block(lines, table), "\n".join(lines)
    # The same figures by hand: the rows scikit-learn's values make above.
    assert "| tabby | 4 | 60.00% | 75.00% | 66.67% |" in lines
    assert "| beagle | 2 | 0.00% | 0.00% | 0.00% |" in lines
    assert "| fox | 3 | 75.00% | 100.00% | 85.71% |" in lines
    assert "| macro avg | 9 | 45.00% | 58.33% | 50.79% |" in lines
    assert "| weighted avg | 9 | 51.67% | 66.67% | 58.20% |" in lines
    assert "## Precision, recall and F1 by class" in lines
    assert any(
        line.startswith(
            "On the same 9 images: macro F1 50.79% (every class counts the same), "
            "weighted F1 58.20% (each class by its images)."
        )
        for line in lines
    )
    # A card with no verification images has no scores either.
    bare = _card(tmp_path, _pets_payload(tmp_path), _all_passed(), EagerRecord(3))
    assert "Precision, recall and F1" not in bare


def test_the_verification_table_has_one_line_per_format_with_its_figures(tmp_path):
    result = ExportResult(
        out_dir=None,  # type: ignore[arg-type]
        model="resnet18",
        formats=(
            FormatResult("torchscript", None, None, "cannot export resnet18: no"),
            _checked("exported", "model.pt2", 8, 9, 3.2e-3),
            _checked("onnx", "model.onnx", 9, 9, 9.3e-8),
        ),
    )
    record, _ = _record()
    lines = _card(tmp_path, _pets_payload(tmp_path), result, record).splitlines()
    assert _block(
        lines,
        [
            "| format | file | top-1 agreement | max abs logit diff | result |",
            "|---|---|---|---|---|",
            "| torchscript | - | - | - | cannot export resnet18: no |",
            "| exported | model.pt2 | 88.89% (8/9) | 3.2e-03 | FAILED: differs "
            "from the eager model |",
            "| onnx | model.onnx | 100.00% (9/9) | 9.3e-08 | ok |",
        ],
    )
    # The images counted are the first verified format's, not the missing one's.
    assert (
        "Each file was loaded back and run on the 9 validation images next to the "
        f"eager model (eval mode, fp32), in batches of {VERIFY_BATCH} and, for the "
        f"first {SINGLE_IMAGES}, of 1. Passing means the same top-1 class for "
        f"every image and no logit further than {TOLERANCE:g} from the eager one."
    ) in lines
    assert (
        "**VERIFICATION FAILED or incomplete**: see the table; do not deploy a "
        "file marked FAILED."
    ) in lines
    assert "All exported files reproduce the eager model." not in lines


def test_a_format_that_could_not_export_leaves_the_card_incomplete(tmp_path):
    passed = _all_passed().formats
    result = ExportResult(
        out_dir=None,  # type: ignore[arg-type]
        model="resnet18",
        formats=(
            *passed[:2],
            FormatResult("onnx", None, None, "cannot export resnet18: no onnx"),
        ),
    )
    lines = _card(tmp_path, _pets_payload(tmp_path), result).splitlines()
    assert "| onnx | - | - | - | cannot export resnet18: no onnx |" in lines
    assert "All exported files reproduce the eager model." not in lines
    assert any(
        line.startswith("**VERIFICATION FAILED or incomplete**") for line in lines
    )


def test_a_card_of_verified_files_says_they_reproduce_the_model(tmp_path):
    lines = _card(tmp_path, _pets_payload(tmp_path), _all_passed()).splitlines()
    assert "All exported files reproduce the eager model." in lines
    assert not any("FAILED" in line for line in lines)
    assert "| torchscript | model.pt | 100.00% (9/9) | 0.0e+00 | ok |" in lines


def test_the_card_states_the_model_its_inputs_and_outputs(tmp_path):
    lines = _card(tmp_path, _pets_payload(tmp_path), _all_passed()).splitlines()
    assert lines[0] == "# resnet18 on Image folder pets"
    assert "- architecture: `resnet18` (pretrained weights: IMAGENET1K_V1)" in lines
    assert (
        "- input: 3x32x32 (channels x height x width), normalised as "
        "`preprocess.json` says"
    ) in lines
    assert "- outputs: 3 logits, labels in `labels.json`" in lines
    fresh = _card(tmp_path, _pets_payload(tmp_path, weights="none"), _all_passed())
    assert "- architecture: `resnet18`" in fresh.splitlines()
    assert "pretrained" not in fresh


def test_the_card_states_how_the_model_was_trained_and_with_what(tmp_path):
    lines = _card(tmp_path, _pets_payload(tmp_path), _all_passed()).splitlines()
    # The last epoch's accuracy, the best one, and the step.
    assert (
        "- validation accuracy: 62.50% after epoch 3 (best 75.00%), step 42"
    ) in lines
    assert "- epochs finished: 3" in lines
    assert (
        "- config: optimizer sgd, lr 0.01, schedule constant, batch size 32, "
        "precision fp32, seed 7"
    ) in lines
    assert "- trained with torch 2.0.0+trained, workbench 0.9.trained" in lines
    assert f"- exported with torch {torch.__version__}, workbench {__version__}" in (
        lines
    )


def test_a_run_stopped_before_its_first_epoch_says_so(tmp_path):
    payload = _pets_payload(tmp_path)
    payload["history"] = {"epochs": []}
    del payload["torch_version"], payload["workbench_version"]
    lines = _card(tmp_path, payload, _all_passed()).splitlines()
    assert (
        "- validation accuracy: no epoch finished: no validation accuracy recorded"
    ) in lines
    assert "- epochs finished: 0" in lines
    assert "- trained with torch ?, workbench ?" in lines


# --------------------------------------------------- labels and preprocess


def test_labels_are_the_class_names_in_output_order(tmp_path):
    path = tmp_path / "labels.json"
    write_labels(path, PETS)
    assert json.loads(path.read_text(encoding="utf-8")) == ["tabby", "beagle", "fox"]


def test_a_photo_model_is_prepared_by_resize_crop_and_its_own_statistics(tmp_path):
    doc = preprocess_document(_pets_payload(tmp_path), "input", "logits")
    assert doc["recipe"] == "image"
    assert (doc["input_name"], doc["output_name"]) == ("input", "logits")
    assert doc["input_shape"] == [3, 32, 32]
    assert (doc["channels"], doc["height"], doc["width"]) == (3, 32, 32)
    assert doc["mean"] == [0.5, 0.4, 0.3]
    assert doc["std"] == [0.2, 0.25, 0.3]
    assert doc["size"] == 32
    assert doc["resize"] == "shorter side to 32, then centre crop 32x32"
    assert "canvas" not in doc


def test_a_digit_model_follows_its_style_datasets_statistics(tmp_path):
    # my-digits drawn for a model of the bundled digits: their recipe and stats.
    mine, digits = DATASET_INFO["my-digits"], DATASET_INFO["digits"]
    assert mine.mean != digits.mean
    cfg = TrainConfig(dataset="my-digits", base_dataset="digits", model="mlp")
    doc = preprocess_document(_payload(cfg, mine, []), "input", "logits")
    assert doc["recipe"] == "canvas"
    assert doc["style"] == "digits"
    assert doc["mean"] == list(digits.mean)
    assert doc["std"] == list(digits.std)
    assert {k: doc[k] for k in recipe_numbers("digits")} == recipe_numbers("digits")
    assert "repeated to 3 channels" not in doc["canvas"]

    # The bundled digits under resnet18: gray repeated, each channel its stats.
    three = DatasetInfo(
        "digits", digits.title, 10, digits.class_names, digits.mean * 3,
        digits.std * 3, True, (3, 28, 28),
    )  # fmt: skip
    cfg = TrainConfig(dataset="digits", model="resnet18")
    doc = preprocess_document(_payload(cfg, three, []), "input", "logits")
    assert doc["style"] == "digits"
    assert doc["channels"] == 3
    assert doc["mean"] == [digits.mean[0]] * 3
    assert doc["std"] == [digits.std[0]] * 3
    assert doc["canvas"].endswith("; repeated to 3 channels")
