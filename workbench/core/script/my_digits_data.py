"""The "my digits" half of a written script: the drawings, as the workbench reads them.

The blocks repeat :class:`workbench.core.data.my_digits.MyDigits` ``.arrays``
and :func:`workbench.core.data.sources.mix_replay`: the same ``samples.json``
and PNG files (JSON and images only: nothing is unpickled), the stored 28x28
field or the same recipe (:mod:`workbench.core.data.preprocess`) made again
from the strokes, every fifth drawing of a digit held out, and ``replay``
training images of the base dataset drawn by one generator seeded with SEED.
Change one side, change the other: ``tests/core/test_script_datasets.py``
trains both and compares every loss.
"""

from __future__ import annotations

from workbench.core.config import TrainConfig
from workbench.core.data import my_digits, preprocess
from workbench.core.script import parts
from workbench.core.script.parts import assignment, literal

MY_DIGITS = "my-digits"

_DATA_DIR_ARGUMENT = (
    '    parser.add_argument("--data-dir", default=DATA_DIR, '
    'help="where the data is")\n'
)
_MY_DIGITS_ARGUMENT = """    parser.add_argument(
        "--my-digits-dir", default=MY_DIGITS_DIR, help="where your drawings are"
    )
"""


def my_digits_settings(cfg: TrainConfig) -> list[str]:
    """The settings lines of a my-digits script."""
    return [
        "# Your drawings: samples.json and two PNG files a drawing.",
        assignment("MY_DIGITS_DIR", str(my_digits.MyDigits().folder)),
        f"STYLE = {literal(preprocess.style_of(cfg.base_dataset))}  # the recipe of "
        f"{cfg.base_dataset}",
        f"HOLD_OUT_EVERY = {my_digits.HOLD_OUT_EVERY}  # of each digit, for validation",
        f"REPLAY = {cfg.replay}  # {cfg.base_dataset} training images mixed in",
        f"INK_THRESHOLD = {literal(preprocess._INK_THRESHOLD)}",
    ]


def my_digits_blocks(cfg: TrainConfig) -> list[str]:
    """The functions that read the drawings, and the base dataset's if replayed."""
    blocks = [MY_DIGITS_DATA, LOAD_MIXED if cfg.replay else LOAD_MINE]
    if cfg.replay:
        if cfg.base_dataset == "digits":
            base = parts.DIGITS_DATA
        else:
            base = parts.TORCHVISION_DATA.format(cls="MNIST")
        blocks.append(base.replace("def load_data(", "def load_base(", 1))
    return blocks


def my_digits_arguments() -> str:
    """``parts.MAIN_ARGS`` with ``--my-digits-dir``."""
    return parts.MAIN_ARGS.replace(
        _DATA_DIR_ARGUMENT, _DATA_DIR_ARGUMENT + _MY_DIGITS_ARGUMENT
    )


MY_DIGITS_DATA = '''
def resize(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Antialiased bilinear resize of a float picture, in [0, 1]."""
    if width == 1 and height > 1:
        # torch's antialiased kernel repeats the first row in a 1-pixel-wide
        # output: resize the transposed picture (the filter is separable).
        return resize(image.T, width, height).T.copy()
    tensor = torch.from_numpy(np.ascontiguousarray(image, dtype=np.float32))
    out = F.interpolate(
        tensor[None, None],
        size=(height, width),
        mode="bilinear",
        antialias=True,
        align_corners=False,
    )
    return out[0, 0].clamp(0, 1).numpy()


def crop_to_ink(image: np.ndarray) -> np.ndarray:
    inked = image > INK_THRESHOLD
    rows = np.flatnonzero(inked.any(axis=1))
    cols = np.flatnonzero(inked.any(axis=0))
    if rows.size == 0:
        raise SystemExit("a drawing holds no ink")
    return image[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def mnist_style(image: np.ndarray) -> np.ndarray:
    """MNIST's recipe: the ink fitted into 20x20, centred by mass in 28x28."""
    digit = crop_to_ink(image)
    h, w = digit.shape
    scale = 20 / max(h, w)
    digit = resize(digit, max(1, round(h * scale)), max(1, round(w * scale)))
    h, w = digit.shape
    field = np.zeros((28, 28), dtype=np.float32)
    top, left = (28 - h) // 2, (28 - w) // 2
    field[top : top + h, left : left + w] = digit
    mass = field.sum()
    ys, xs = np.indices(field.shape)
    cy, cx = (ys * field).sum() / mass, (xs * field).sum() / mass
    # The centre of mass moved to the field's centre (13.5), ink kept inside.
    dy, dx = round(13.5 - cy), round(13.5 - cx)
    dy = int(np.clip(dy, -top, 28 - top - h))
    dx = int(np.clip(dx, -left, 28 - left - w))
    return np.roll(field, (dy, dx), axis=(0, 1))


def digits_style(image: np.ndarray) -> np.ndarray:
    """The UCI digits' recipe: the ink blurred to 8x8, shown in a 20x20 box."""
    low = resize(crop_to_ink(image), 8, 8)
    low = low / max(float(low.max()), 1e-6)
    field = np.zeros((28, 28), dtype=np.float32)
    field[4:24, 4:24] = resize(low, 20, 20)
    return field


def read_gray(path: Path) -> np.ndarray:
    """A saved PNG as uint8 gray (H, W)."""
    with Image.open(path) as image:
        return np.asarray(image.convert("L"), dtype=np.uint8).copy()


def field_of(folder: Path, sample: dict[str, Any]) -> np.ndarray:
    """A drawing's 28x28 uint8 field in STYLE: as stored, or made again from
    its strokes when it was saved in the other recipe."""
    name = str(sample["id"])
    if not re.fullmatch(r"[\\w-][\\w.-]*", name):  # a file name, never a path
        raise SystemExit(f"samples.json names a drawing {name!r}")
    if sample.get("style", "mnist") == STYLE:
        pixels = read_gray(folder / f"{name}-28x28.png")
        if pixels.shape != (28, 28):
            raise SystemExit(f"{name}-28x28.png is {pixels.shape}, not 28x28")
        return pixels
    strokes = read_gray(folder / f"{name}.png").astype(np.float32) / 255.0
    field = digits_style(strokes) if STYLE == "digits" else mnist_style(strokes)
    return np.ascontiguousarray(np.clip(np.rint(field * 255.0), 0, 255), np.uint8)


def load_my_digits(folder: Path) -> tuple[torch.Tensor, ...]:
    """Your drawings: uint8 (N, 28, 28) and int64 labels, train then validation.

    Of each digit, every HOLD_OUT_EVERY-th drawing in the order they were added
    is held out for validation: no seed needed.
    """
    index = json.loads((folder / "samples.json").read_bytes().decode("utf-8"))
    if not index["samples"]:
        raise SystemExit(f"no drawings yet in {folder}")
    seen = [0] * 10
    split: dict[str, tuple[list[np.ndarray], list[int]]] = {
        "train": ([], []),
        "val": ([], []),
    }
    for sample in index["samples"]:
        label = int(sample["label"])
        seen[label] += 1
        held_out = seen[label] % HOLD_OUT_EVERY == 0
        images, labels = split["val" if held_out else "train"]
        images.append(field_of(folder, sample))
        labels.append(label)
    tensors: list[torch.Tensor] = []
    for images, labels in split.values():
        if not images:
            tensors.append(torch.zeros((0, 28, 28), dtype=torch.uint8))
            tensors.append(torch.zeros((0,), dtype=torch.int64))
            continue
        tensors.append(torch.from_numpy(np.stack(images)))
        tensors.append(torch.tensor(labels, dtype=torch.int64))
    return tuple(tensors)

'''

LOAD_MINE = '''
def load_data(data_dir: str, my_digits_dir: str) -> tuple[torch.Tensor, ...]:
    """Your drawings (``data_dir`` is the base dataset's: not needed here)."""
    return load_my_digits(Path(my_digits_dir).expanduser())
'''

LOAD_MIXED = '''
def load_data(data_dir: str, my_digits_dir: str) -> tuple[torch.Tensor, ...]:
    """Your drawings, with REPLAY training images of the base dataset (in
    ``data_dir``) mixed into the training split: validation is yours alone."""
    mine = load_my_digits(Path(my_digits_dir).expanduser())
    base_images, base_labels, _, _ = load_base(data_dir)
    generator = torch.Generator().manual_seed(SEED)
    count = min(REPLAY, len(base_labels))
    pick = torch.randperm(len(base_labels), generator=generator)[:count]
    train_images = torch.cat([mine[0], base_images[pick]])
    train_labels = torch.cat([mine[1], base_labels[pick]])
    return train_images, train_labels, mine[2], mine[3]
'''
