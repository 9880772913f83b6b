"""The code blocks a written script is made of (see ``script_writer``).

Each block is plain PyTorch a reader can follow top to bottom. They repeat the
workbench's engine operation for operation (the same seeded orders, the same
normalisation arithmetic, the same model initialisation), so that on the CPU
the script's per-step losses equal ``ptcore-workbench train``'s bit for bit; a
test holds them to it. Change one side, change the other.
"""

from __future__ import annotations

import json

SEEDING = '''
def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch, and ask oneDNN for deterministic kernels."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    # Some oneDNN CPU kernels (a convolution's weight gradient behind a frozen
    # layer) may otherwise sum partial results in a varying order.
    torch.backends.mkldnn.deterministic = True


def epoch_order(num_samples: int, epoch: int) -> torch.Tensor:
    """The shuffled sample order of one epoch, seeded by (SEED, epoch)."""
    # torch's CPU generator keeps only 32 bits of a seed: hash both into one.
    seed = int(np.random.SeedSequence([SEED, epoch]).generate_state(1)[0])
    return torch.randperm(num_samples, generator=torch.Generator().manual_seed(seed))
'''

DIGITS_DATA = '''
def load_data(data_dir: str) -> tuple[torch.Tensor, ...]:
    """scikit-learn's 8x8 digits as MNIST lays digits out: 20x20 in 28x28.

    Returns uint8 train images (N, 28, 28), int64 labels, and the same for the
    held-out 20% (a stratified split, random_state 0).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    bunch = load_digits()
    x = torch.from_numpy(bunch.images).to(torch.float32).unsqueeze(1) * (255.0 / 16.0)
    box = F.interpolate(x, size=(20, 20), mode="bilinear", antialias=True)
    box = box.round_().clamp_(0, 255).to(torch.uint8).squeeze(1)
    images = torch.zeros((len(box), 28, 28), dtype=torch.uint8)
    images[:, 4:24, 4:24] = box
    labels = torch.from_numpy(bunch.target).long()
    train_index, test_index = train_test_split(
        np.arange(len(labels)), test_size=0.2, random_state=0, stratify=bunch.target
    )
    train_index = torch.from_numpy(train_index)
    test_index = torch.from_numpy(test_index)
    return (
        images[train_index],
        labels[train_index],
        images[test_index],
        labels[test_index],
    )
'''

TORCHVISION_DATA = '''
def load_data(data_dir: str) -> tuple[torch.Tensor, ...]:
    """torchvision's {cls} (root: the folder holding {cls}/raw)."""
    train = datasets.{cls}(data_dir, train=True, download=DOWNLOAD)
    test = datasets.{cls}(data_dir, train=False, download=DOWNLOAD)
    return train.data, train.targets.long(), test.data, test.targets.long()
'''

FAST_BATCHES = '''
def batches(
    images: torch.Tensor,
    labels: torch.Tensor,
    order: torch.Tensor,
    batch_size: int,
    device: torch.device,
    mean: tuple[float, ...],
    std: tuple[float, ...],
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Normalised float batches of uint8 images (N, C, H, W), taken in ``order``.

    The whole dataset stays in memory as uint8 (a quarter of float32's bytes);
    each batch becomes ``(pixel / 255 - mean) / std`` only when it is needed.
    """
    mean_t = torch.tensor(mean, dtype=torch.float32).view(-1, 1, 1).to(device)
    std_t = torch.tensor(std, dtype=torch.float32).view(-1, 1, 1).to(device)
    for index in torch.split(order, batch_size):
        x = images.index_select(0, index).to(device).to(torch.float32)
        y = labels.index_select(0, index).to(device)
        if x.shape[1] == 1 and len(mean) == 3:
            # A torchvision model takes three channels: repeat the gray one.
            x = x.expand(-1, 3, -1, -1).contiguous()
        yield x.div_(255).sub_(mean_t).div_(std_t), y
'''

LOADER_DATASETS = '''
class EpochSampler(Sampler[int]):
    """Sample indices in the seeded order of the epoch set by ``set_epoch``."""

    def __init__(self, num_samples: int, shuffle: bool) -> None:
        self.num_samples = num_samples
        self.shuffle = shuffle
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.num_samples

    def __iter__(self) -> Iterator[int]:
        if not self.shuffle:
            return iter(range(self.num_samples))
        return iter(epoch_order(self.num_samples, self.epoch).tolist())


def make_loader(dataset: Dataset, batch_size: int, shuffle: bool) -> DataLoader:
    """A DataLoader over ``dataset`` in the seeded epoch order."""
    return DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=EpochSampler(len(dataset), shuffle),
        num_workers=WORKERS,
        pin_memory=PIN_MEMORY,
        # Worker processes are started fresh (not forked) and kept between epochs.
        multiprocessing_context="spawn" if WORKERS else None,
        persistent_workers=WORKERS > 0,
        # Its own generator: iterating must not draw from the global random
        # stream that the model's dropout uses.
        generator=torch.Generator().manual_seed(SEED),
    )
'''

ARRAY_DATASET = '''
class ImageArrays(Dataset):
    """Images held as a uint8 tensor (N, H, W), read one by one as PIL images."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, transform) -> None:
        self.images = images.numpy()
        self.labels = labels.numpy()
        self.transform = transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        image = Image.fromarray(np.ascontiguousarray(self.images[index]))
        return self.transform(image), int(self.labels[index])
'''

EVALUATE = '''
def evaluate(
    model: nn.Module, val_batches: Iterable, num_classes: int
) -> dict[str, Any]:
    """Loss, accuracy and confusion matrix on the validation set, in eval mode.

    In float32 whatever the training precision: the scores the kept model gives.
    """
    model.eval()  # dropout off, BatchNorm uses its running statistics
    labels, predicted, losses = [], [], []
    with torch.inference_mode():
        for x, y in val_batches:
            logits = model(x).float()
            losses.append(F.cross_entropy(logits, y, reduction="none").cpu())
            predicted.append(torch.softmax(logits, 1).max(1).indices.cpu())
            labels.append(y.cpu())
    y_true = torch.cat(labels).numpy()
    y_pred = torch.cat(predicted).numpy()
    confusion = np.bincount(y_true * num_classes + y_pred, minlength=num_classes**2)
    return {
        "val_loss": float(torch.cat(losses).numpy().mean(dtype=np.float64)),
        "val_accuracy": float((y_pred == y_true).mean()),
        "confusion": confusion.reshape(num_classes, num_classes).tolist(),
    }
'''

MAIN_ARGS = '''
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DATA_DIR, help="where the data is")
    parser.add_argument("--metrics-json", metavar="PATH", help="write the metrics")
    parser.add_argument(
        "--out", default="model_state_dict.pt", help="where to save the weights"
    )
    return parser.parse_args()


def write_metrics(path: str | None, document: dict[str, Any]) -> None:
    """The same document as ``ptcore-workbench train --metrics-json``."""
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
'''


LINE_LENGTH = 88  # ruff's default, which the scripts are checked against


def literal(value: object) -> str:
    """``value`` as Python source, strings in double quotes (ruff's style)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def assignment(name: str, value: object) -> str:
    """``NAME = value`` as ruff format writes it, a long path's line excused.

    Past 88 characters ruff moves the value into parentheses on a line of its
    own when it fits there; when even that is too long, the line stays whole
    and is excused from the length check.
    """
    line = f"{name} = {literal(value)}"
    if len(line) <= LINE_LENGTH:
        return line
    inner = f"    {literal(value)}"
    if len(inner) <= LINE_LENGTH:
        return f"{name} = (\n{inner}\n)"
    return line + "  # noqa: E501"
