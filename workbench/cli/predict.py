"""``predict``: each image's class and top probabilities, from a checkpoint."""

from __future__ import annotations

import argparse
import sys

from workbench.cli.console import say
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


def cmd_predict(args: argparse.Namespace) -> int:
    """Print each image's predicted class and top probabilities."""
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
            said = str(exc)  # most name the file already
            line = said if said.startswith(path) else f"{path}: {said}"
            sys.stderr.write(line + "\n")
            failures += 1
            continue
        result = predict(model, batch, info.class_names)[0]
        ranked = "  ".join(f"{name} {100 * p:.1f}%" for name, p in result.top(args.top))
        say(f"{path}: {info.class_names[result.label]}   ({ranked})")
    return 1 if failures else 0
