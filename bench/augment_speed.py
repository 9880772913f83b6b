"""Milliseconds per batch of 256 images for each augmentation choice, and all four.

Times :class:`~workbench.core.data.augment.BatchAugment` (the fast path) on the
CPU at 28x28x1 (MNIST-like) and 64x64x3 (a folder of photos), and, for scale, the
per-sample torchvision v2 pipeline of the DataLoader path on the same images.
Median and fastest of repeated runs after a warm-up.

    .venv/bin/python bench/augment_speed.py [--repeats 20] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from PIL import Image

from workbench.core.config import AUGMENTATIONS
from workbench.core.data.augment import (
    BatchAugment,
    augment_transform,
    batch_generator,
)
from workbench.core.data.loaders import _normalise, standard_transform

BATCH = 256
SHAPES = ((1, 28), (3, 64))


def times_ms(fn, repeats: int) -> str:
    """``median / fastest`` wall time of ``fn()`` in ms, after two warm-up calls.

    On a shared machine the fastest run is the better figure of the work itself.
    """
    for _ in range(2):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return f"{statistics.median(times):7.2f} / {min(times):6.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch threads: {torch.get_num_threads()}, batch {BATCH}, CPU")
    for channels, side in SHAPES:
        g = torch.Generator().manual_seed(0)
        images = torch.randint(0, 256, (BATCH, channels, side, side), generator=g)
        images = images.to(torch.uint8)
        mean, std = (0.5,) * channels, (0.25,) * channels
        x = _normalise(images, mean, std)
        rows = [(c,) for c in AUGMENTATIONS] + [AUGMENTATIONS]
        for choices in rows:
            augment = BatchAugment(choices, mean, std)
            counter = iter(range(10**9))
            ms = times_ms(
                lambda a=augment, c=counter, x=x: a(x, batch_generator(0, 0, next(c))),
                args.repeats,
            )
            label = "+".join(choices) if len(choices) > 1 else choices[0]
            print(f"{side}x{side}x{channels}  batch   {label:<24} {ms}")
        # The per-sample path: PIL images through the v2 transforms, then stacked.
        pil = [
            Image.fromarray(
                img[0].numpy() if channels == 1 else img.permute(1, 2, 0).numpy()
            )
            for img in images
        ]
        transform = standard_transform(
            mean, std, augment_transform(AUGMENTATIONS, side)
        )
        with torch.random.fork_rng(devices=[]):
            ms = times_ms(
                lambda t=transform, p=pil: torch.stack([t(i) for i in p]),
                max(3, args.repeats // 4),
            )
        print(f"{side}x{side}x{channels}  per-sample all (v2, PIL) {ms}")


if __name__ == "__main__":
    main()
