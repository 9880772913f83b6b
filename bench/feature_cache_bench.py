"""How much faster head-only training is on cached features: ``feature_cache``.

resnet18 (random weights: they do not change the speed) on ``--images`` random
uint8 images of ``--side`` pixels, everything but ``fc`` frozen, trained through
the engine twice in one process: ``feature_cache="off"`` and ``"on"``, one epoch
of each in turn (alternating, so both see the same machine load). Prints per
epoch the training images per second (``EpochMetrics.images_per_s``: the whole
training epoch, its logging and layer-health samples included, validation not),
the feature computation's seconds, the first cached epoch with that computation
included, and the ratio of the steady epochs. Target (issue): at least 20x.

Run: ``.venv/bin/python bench/feature_cache_bench.py`` (a few minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.data import ImageArrays
from workbench.core.engine import iter_fit, prepare_run
from workbench.core.freezing import all_but_head
from workbench.core.models import build_model


def _arrays(images: int, side: int) -> ImageArrays:
    g = torch.Generator().manual_seed(0)
    val = 64  # validation runs the full model; kept small, and not timed

    def pixels(n: int) -> torch.Tensor:
        return torch.randint(0, 256, (n, 3, side, side), dtype=torch.uint8, generator=g)

    return ImageArrays(
        pixels(images),
        torch.randint(0, 10, (images,), generator=g),
        pixels(val),
        torch.randint(0, 10, (val,), generator=g),
    )


def _epochs(events: Iterator[E.TrainEvent], status: list[str]) -> Iterator[float]:
    """Each epoch's training images per second; the cache's status into ``status``."""
    for event in events:
        if isinstance(event, E.RunStarted):
            status.append(event.feature_cache)
        if isinstance(event, E.EpochMetrics):
            yield event.images_per_s


def main(argv: list[str] | None = None) -> int:
    """Print images per second with and without the cache, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--side", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=125)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args(argv)

    arrays = _arrays(args.images, args.side)
    shape = (3, args.side, args.side)
    frozen = tuple(all_but_head(build_model("resnet18", 10, seed=0, input_shape=shape)))
    steps = -(-args.images // args.batch_size)
    runs, status = {}, {}
    for mode in ("off", "on"):
        cfg = TrainConfig(
            dataset="cifar10",
            model="resnet18",
            frozen=frozen,
            epochs=args.epochs,
            batch_size=args.batch_size,
            log_every=steps,  # one logged step (and health sample) an epoch
            feature_cache=mode,
        )
        status[mode] = []
        runs[mode] = _epochs(iter_fit(prepare_run(cfg, arrays=arrays)), status[mode])
    print(
        f"resnet18, {args.images} images {args.side}x{args.side}, batches of "
        f"{args.batch_size}, head (fc) only, {torch.get_num_threads()} threads"
    )
    speeds: dict[str, list[float]] = {"off": [], "on": []}
    for epoch in range(args.epochs):
        for mode in ("off", "on"):  # alternating
            speeds[mode].append(next(runs[mode]))
            if epoch == 0:
                print(f"  cache {mode}: {status[mode][0]}")
            print(f"epoch {epoch + 1} cache {mode:3}: {speeds[mode][-1]:10,.0f} img/s")
    found = re.search(r"computed in ([0-9.]+) s", status["on"][0])
    compute_s = float(found.group(1)) if found else float("nan")
    first_on = args.images / (args.images / speeds["on"][0] + compute_s)
    print(f"features computed once in {compute_s:.1f} s")
    print(f"first cached epoch, feature computation included: {first_on:,.0f} img/s")
    off = statistics.median(speeds["off"])
    on = statistics.median(speeds["on"])
    print(
        f"median over {args.epochs} epochs: off {off:,.0f} img/s, on {on:,.0f} img/s, "
        f"ratio {on / off:.0f}x (feature computation excluded); "
        f"first epoch incl. computation vs off: {first_on / off:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
