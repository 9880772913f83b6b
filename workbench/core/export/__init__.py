"""Exporting a trained model, proven equal to the eager one.

formats            TorchScript, torch.export and ONNX files from a checkpoint
verify             the proof: the export's outputs against the eager model's
card               the files beside it: preprocess.json, labels.json, MODEL_CARD.md
predict_template   package data: the predict.py copied beside an export
"""

__all__ = [
    "card",
    "formats",
    "verify",
]
