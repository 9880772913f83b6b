"""How much faster head-only training is on cached features: ``feature_cache``.

resnet18 (random weights: they do not change the speed) on ``--images`` random
uint8 images of ``--side`` pixels, everything but ``fc`` frozen, trained through
the engine twice in one process, ``feature_cache="off"`` and ``"on"``, in turn:
a round is one uncached epoch, then ``--cached-per-round`` cached ones
(alternating, so both see the same machine load). Prints each epoch's training
images per second (``EpochMetrics.images_per_s``: the whole training epoch,
validation not), the feature computation's seconds, the ratios of the median
epochs and of all epochs together, and the cached speed with the computation
included. Target (issue): at least 20x. One step is logged, at each run's end,
so only the last epoch of each holds a layer-health sample of all layers.

Measured on this project's 2-core machine, quiet, defaults (2 threads): off
2,156 img/s (median of 3 epochs), on 175,274 img/s (median of 15): 81x (77x over
all epochs); features computed once in 1.1 s, the first cached epoch with them
1,797 img/s, all 15 cached epochs with it 23,380 img/s (10.8x). While other work
shared the cores, 2 threads gave 13x (each tiny cached step waited on a
descheduled thread) and ``--threads 1`` 129x.

Run: ``.venv/bin/python bench/feature_cache_bench.py [--threads 1]`` (1-2 minutes).
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
from workbench.core.data.registry import ImageArrays
from workbench.core.models.builtins import build_model
from workbench.core.train.engine import iter_fit, prepare_run
from workbench.core.train.freezing import all_but_head


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


def _epochs(
    events: Iterator[E.TrainEvent], status: list[str]
) -> Iterator[tuple[float, float]]:
    """Each epoch's (training images per second, seconds); the status to ``status``."""
    for event in events:
        if isinstance(event, E.RunStarted):
            status.append(event.feature_cache)
        if isinstance(event, E.EpochMetrics):
            yield event.images_per_s, event.seconds


def main(argv: list[str] | None = None) -> int:
    """Print images per second with and without the cache, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--side", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=125)
    parser.add_argument("--rounds", type=int, default=3, help="uncached epochs")
    parser.add_argument(
        "--cached-per-round", type=int, default=5, help="cached epochs per round"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads (default: torch's own); on a machine other work "
        "shares, 1 keeps tiny cached steps from waiting on a descheduled thread",
    )
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    arrays = _arrays(args.images, args.side)
    shape = (3, args.side, args.side)
    frozen = tuple(all_but_head(build_model("resnet18", 10, seed=0, input_shape=shape)))
    steps = -(-args.images // args.batch_size)
    epochs = {"off": args.rounds, "on": args.rounds * args.cached_per_round}
    runs, status = {}, {}
    for mode in ("off", "on"):
        cfg = TrainConfig(
            dataset="cifar10",
            model="resnet18",
            frozen=frozen,
            epochs=epochs[mode],
            batch_size=args.batch_size,
            # One logged step (and layer-health sample), at the run's end: the
            # epochs time training, not the health sampling of resnet18's layers.
            log_every=steps * epochs[mode],
            feature_cache=mode,
        )
        status[mode] = []
        runs[mode] = _epochs(iter_fit(prepare_run(cfg, arrays=arrays)), status[mode])
    print(
        f"resnet18, {args.images} images {args.side}x{args.side}, batches of "
        f"{args.batch_size}, head (fc) only, {torch.get_num_threads()} threads"
    )
    measured: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
    for round_ in range(args.rounds):
        # Alternating: one uncached epoch, then a few cached ones (each is short,
        # so a single scheduling hiccup on a shared machine would dominate it).
        for mode, count in (("off", 1), ("on", args.cached_per_round)):
            for _ in range(count):
                measured[mode].append(next(runs[mode]))
            if round_ == 0:
                print(f"  cache {mode}: {status[mode][0]}")
            speeds = ", ".join(f"{v:,.0f}" for v, _ in measured[mode][-count:])
            print(f"round {round_ + 1} cache {mode:3}: {speeds} img/s", flush=True)
    found = re.search(r"computed in ([0-9.]+) s", status["on"][0])
    compute_s = float(found.group(1)) if found else float("nan")
    off = statistics.median(v for v, _ in measured["off"])
    on = statistics.median(v for v, _ in measured["on"])
    total = {
        m: len(v) * args.images / sum(s for _, s in v) for m, v in measured.items()
    }
    first_on = args.images / (measured["on"][0][1] + compute_s)
    all_on = (
        len(measured["on"])
        * args.images
        / (sum(s for _, s in measured["on"]) + compute_s)
    )
    print(f"features computed once in {compute_s:.1f} s")
    print(
        f"median epoch: off {off:,.0f} img/s ({len(measured['off'])} epochs), "
        f"on {on:,.0f} img/s ({len(measured['on'])} epochs): ratio {on / off:,.0f}x "
        "(feature computation excluded)"
    )
    print(
        f"all epochs together: off {total['off']:,.0f} img/s, "
        f"on {total['on']:,.0f} img/s: ratio {total['on'] / total['off']:,.0f}x"
    )
    print(
        f"feature computation included: first cached epoch {first_on:,.0f} img/s "
        f"({first_on / off:.1f}x), all {len(measured['on'])} cached epochs "
        f"{all_on:,.0f} img/s ({all_on / off:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
