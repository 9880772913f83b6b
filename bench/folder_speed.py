"""How fast an image folder feeds a run: decoded once, cached, or per batch.

Generates a folder of JPEGs (default 5,000 at 64x64, 10 classes) and prints
images per second of one epoch of batches (the data path alone, no model):

- first epoch: scan, hash, decode every file into memory, then the batches;
- a second run: the decoded images read back from the disk cache, then the batches;
- later epochs: batches from the in-memory tensor;
- the DataLoader path (one file decoded per sample) with 0 and 2 workers
  (2 workers: first epoch with their start-up, then a warm epoch).

Usage: python bench/folder_speed.py [--images 5000] [--size 64] [--batch-size 256]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image


def make_jpegs(root: Path, count: int, size: int, classes: int = 10) -> None:
    rng = np.random.default_rng(0)
    for index in range(count):
        folder = root / f"class{index % classes}"
        folder.mkdir(parents=True, exist_ok=True)
        pixels = rng.integers(0, 255, (size, size, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / f"{index:05d}.jpg", quality=90)


def epoch_seconds(loader, epoch: int = 0) -> float:
    loader.set_epoch(epoch)
    start = time.perf_counter()
    for x, _y in loader:
        x.sum()  # touch the batch
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        os.environ["PTCORE_DATA_DIR"] = str(tmp_path / "cache")  # before imports
        from workbench.core.config import TrainConfig
        from workbench.core.data.build import build_loaders

        root = tmp_path / "images"
        start = time.perf_counter()
        make_jpegs(root, args.images, args.size)
        print(
            f"wrote {args.images:,} {args.size}x{args.size} JPEGs in "
            f"{time.perf_counter() - start:.1f} s"
        )
        base = TrainConfig(
            dataset="folder",
            data_dir=str(root),
            image_size=args.size,
            batch_size=args.batch_size,
        )
        n_train = None
        rows = []

        start = time.perf_counter()
        fast = build_loaders(base, "cpu")
        prepare = time.perf_counter() - start
        n_train = fast.train.num_samples
        first = prepare + epoch_seconds(fast.train)
        rows.append(("first epoch (decode every file, then batches)", first))

        start = time.perf_counter()
        again = build_loaders(base, "cpu")
        reread = time.perf_counter() - start
        assert "disk cache" in again.path, again.path
        rows.append(
            (
                "second run, first epoch (disk cache)",
                reread + epoch_seconds(again.train),
            )
        )
        later = min(epoch_seconds(fast.train, epoch) for epoch in (1, 2, 3))
        rows.append(("later epochs (in memory)", later))

        for workers in (0, 2):
            cfg = base.replace(loader="dataloader", workers=workers)
            streamed = build_loaders(cfg, "cpu")
            cold = epoch_seconds(streamed.train, 0)
            label = f"DataLoader, {workers} workers"
            if workers:
                rows.append((f"{label}, first epoch (workers start)", cold))
                rows.append((f"{label}, warm epoch", epoch_seconds(streamed.train, 1)))
                streamed.release_workers()
            else:
                rows.append((label, cold))

        print(
            f"{n_train:,} training images a epoch, batch {args.batch_size}, "
            f"{os.cpu_count()} CPU cores"
        )
        by_name = dict(rows)
        for name, seconds in rows:
            print(
                f"  {name:50s} {n_train / seconds:>10,.0f} images/s  ({seconds:.2f} s)"
            )
        ratio = by_name["later epochs (in memory)"]
        dl0 = by_name["DataLoader, 0 workers"]
        print(
            f"cached epochs vs DataLoader with 0 workers: {dl0 / ratio:,.0f}x "
            "(target: at least 5x)"
        )


if __name__ == "__main__":
    main()
