"""The image-folder half of a written script: listing, splitting, decoding.

The blocks repeat :mod:`workbench.core.data.folder` and ``folder_images`` step
for step: the same file listing and sorted classes, the same seeded stratified
split, the same Pillow decode, resize and centre crop, the same channels and
the same per-channel statistics (float64 across chunks). The in-memory images
then go through the script's ``batches``, as the workbench's fast loader.
Change one side, change the other: ``tests/core/test_script_folders.py``
trains both and compares every step's loss.
"""

from __future__ import annotations

from workbench.core.config import TrainConfig
from workbench.core.data.folder_check import IMAGE_SUFFIXES, VAL_FOLDERS
from workbench.core.data.folder_images import GRAY_MODES, MAX_DECODED_BYTES, MAX_PIXELS
from workbench.core.data.registry import DatasetInfo
from workbench.core.script.parts import literal

FOLDER = "folder"

# The classes and channels are only known once the script reads the folder:
# the writer builds its model (frozen names, the head) with these stand-ins.
_STAND_IN_CLASSES = 2


def stand_in_info(cfg: TrainConfig) -> DatasetInfo:
    """A colour folder at the run's image size, for what the writer must know."""
    side = cfg.resolved_image_size
    return DatasetInfo(
        name=FOLDER,
        title="Image folder",
        num_classes=_STAND_IN_CLASSES,
        class_names=tuple(f"class{i}" for i in range(_STAND_IN_CLASSES)),
        mean=(0.5, 0.5, 0.5),
        std=(0.25, 0.25, 0.25),
        offline=True,
        image_shape=(3, side, side),
    )


def folder_problem(cfg: TrainConfig) -> str | None:
    """Why a folder run cannot be a script (None: it can)."""
    if cfg.loader != "fast":
        return (
            f"loader {cfg.loader}: a script reads an image folder into memory, as "
            "the fast loader does; switch loader to fast"
        )
    return None


def folder_settings(cfg: TrainConfig) -> list[str]:
    """The settings lines of a folder script."""
    suffixes = literal(tuple(sorted(IMAGE_SUFFIXES)))
    return [
        f"IMAGE_SIZE = {cfg.resolved_image_size}  # every image becomes a square",
        f"VAL_FRACTION = {literal(cfg.val_fraction)}  # held out of a folder "
        "without val/",
        f"VAL_FOLDERS = {literal(VAL_FOLDERS)}",
        "# Files of other types are not images to train on (upper case counts).",
        f"IMAGE_SUFFIXES = {suffixes}",
        f"GRAY_MODES = {literal(tuple(sorted(GRAY_MODES)))}",
        "# Pillow refuses above twice this many pixels; one decoded image may take",
        "# at most MAX_DECODED_BYTES.",
        f"Image.MAX_IMAGE_PIXELS = {MAX_PIXELS // 2:_}",
        f"MAX_DECODED_BYTES = {MAX_DECODED_BYTES // 2**20} * 2**20",
    ]


FOLDER_NOTE = (
    "an image folder whose decoded images exceed the workbench's memory budget "
    "(2 GB unless PTCORE_MEMORY_BUDGET_MB says otherwise) is read per batch by "
    "the workbench, with pixel statistics from a sample of 512 images; this "
    "script always decodes the whole folder into memory."
)


def folder_setup(torchvision_model: bool, pretrained: bool) -> str:
    """The part of main() that reads the folder and makes the batches."""
    if pretrained:
        stats = (
            "    # The pretrained weights' own preprocessing statistics.\n"
            "    mean, std = MEAN, STD\n"
        )
    else:
        stats = (
            "    # Normalised with the training images' own per-channel statistics.\n"
            "    mean, std = channel_stats(train_images)\n"
        )
        if torchvision_model:
            stats += (
                "    if channels == 1:  # gray repeated to three: its statistics too\n"
                "        mean, std = mean * 3, std * 3\n"
            )
    shape = "3" if torchvision_model else "channels"
    return (
        """
    data = load_data(args.data_dir)
    train_images, train_labels, val_images, val_labels, classes = data
    num_classes, channels = len(classes), train_images.shape[1]
    print(f"{num_classes} classes ({', '.join(classes)}), {channels} channel(s)")
"""
        + stats
        + f"    input_shape = ({shape}, IMAGE_SIZE, IMAGE_SIZE)\n"
        + """    steps_per_epoch = math.ceil(len(train_labels) / BATCH_SIZE)

    def train_batches(epoch: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        order = epoch_order(len(train_labels), epoch)
        return batches(train_images, train_labels, order, BATCH_SIZE, device, mean, std)

    def val_batches() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        order = torch.arange(len(val_labels))
        return batches(val_images, val_labels, order, VAL_BATCH_SIZE, device, mean, std)
"""
    )


FOLDER_DATA = '''
def list_images(root: Path) -> tuple[list[str], dict[str, list[tuple[Path, int]]]]:
    """The class folders (sorted by name) and each split's (file, label) pairs.

    DIR/<class>/<image>, or DIR/train/<class>/... beside DIR/val/ (or DIR/test/);
    the split is "all" when the folder has none. Files are sorted within a class.
    """
    if not root.is_dir():
        raise SystemExit(f"no such folder: {root} (give a folder of class folders)")
    splits = {"all": root}
    if (root / "train").is_dir():
        for name in VAL_FOLDERS:
            if (root / name).is_dir():
                splits = {"train": root / "train", "val": root / name}
                break
    classes = sorted(
        {p.name for folder in splits.values() for p in folder.iterdir() if p.is_dir()}
    )
    if len(classes) < 2:
        raise SystemExit(f"{root}: a classifier needs at least two class folders")
    files: dict[str, list[tuple[Path, int]]] = {}
    for split, folder in splits.items():
        pairs = files.setdefault(split, [])
        for label, name in enumerate(classes):
            if not (folder / name).is_dir():
                continue
            for path in sorted(p for p in (folder / name).rglob("*") if p.is_file()):
                if path.suffix.lower() in IMAGE_SUFFIXES:
                    pairs.append((path, label))
    return classes, files


def split_files(
    files: dict[str, list[tuple[Path, int]]], num_classes: int
) -> tuple[list[tuple[Path, int]], list[tuple[Path, int]]]:
    """(train, val) pairs: the folder's own split, or a seeded stratified one.

    VAL_FRACTION of each class is held out (at least one file, never all of a
    class), chosen by one generator seeded with SEED, class after class.
    """
    if "all" not in files:
        return files["train"], files["val"]
    generator = torch.Generator().manual_seed(SEED)
    train: list[tuple[Path, int]] = []
    val: list[tuple[Path, int]] = []
    for label in range(num_classes):
        pairs = [pair for pair in files["all"] if pair[1] == label]
        held = round(VAL_FRACTION * len(pairs))
        if len(pairs) >= 2:
            held = min(max(held, 1), len(pairs) - 1)
        order = torch.randperm(len(pairs), generator=generator).tolist()
        chosen = set(order[:held])
        for index, pair in enumerate(pairs):
            (val if index in chosen else train).append(pair)
    return train, val


def gray_or_rgb(image: Image.Image) -> Image.Image:
    """Gray stays gray (16-bit scaled, not clipped); anything else becomes RGB."""
    if image.mode in ("I", "I;16", "I;16B", "I;16L"):
        wide = np.asarray(image, dtype=np.float64)
        return Image.fromarray(np.clip(wide / 257.0, 0, 255).round().astype(np.uint8))
    if image.mode == "F":
        values = np.asarray(image, dtype=np.float64)
        top = values.max() if values.size and values.max() > 1.0 else 1.0
        return Image.fromarray(np.clip(values / top * 255, 0, 255).astype(np.uint8))
    if image.mode in ("L", "RGB"):
        return image
    if image.mode in GRAY_MODES:
        return image.convert("L")
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    return image.convert("RGB")


def read_square(path: Path) -> np.ndarray:
    """One file as uint8 (S, S) gray or (S, S, 3) colour, S = IMAGE_SIZE.

    Pillow decodes it (a large JPEG at a reduced scale that still covers S);
    the shorter side is resized to S and the centre cropped to a square.
    """
    image = Image.open(io.BytesIO(path.read_bytes()))
    image.draft(None, (IMAGE_SIZE, IMAGE_SIZE))
    width, height = image.size
    per_pixel = 1 if image.mode in ("1", "L", "P") else 2 if "16" in image.mode else 4
    if width * height * per_pixel > MAX_DECODED_BYTES:
        raise ValueError(f"{width}x{height} pixels are too large to decode")
    image.load()  # every pixel: a truncated file raises here
    image = gray_or_rgb(image)
    if min(image.size) != IMAGE_SIZE:
        image = TF.resize(image, IMAGE_SIZE)
    if image.size != (IMAGE_SIZE, IMAGE_SIZE):
        image = TF.center_crop(image, [IMAGE_SIZE, IMAGE_SIZE])
    return np.asarray(image, dtype=np.uint8).copy()


def as_channels(pixels: np.ndarray, channels: int) -> np.ndarray:
    """uint8 (C, S, S): gray repeated, or a photo in Pillow's luminance."""
    if pixels.ndim == 2:
        return np.repeat(pixels[None], channels, axis=0)
    if channels == 1:
        gray = Image.fromarray(np.ascontiguousarray(pixels)).convert("L")
        return np.asarray(gray, dtype=np.uint8)[None]
    return pixels.transpose(2, 0, 1)


def stack(
    pairs: list[tuple[Path, int]], decoded: dict[Path, np.ndarray], channels: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """uint8 (N, C, S, S) images and int64 labels of the pairs that decoded."""
    kept = [(path, label) for path, label in pairs if path in decoded]
    images = np.zeros((len(kept), channels, IMAGE_SIZE, IMAGE_SIZE), dtype=np.uint8)
    for index, (path, _label) in enumerate(kept):
        images[index] = as_channels(decoded[path], channels)
    labels = torch.tensor([label for _path, label in kept], dtype=torch.int64)
    return torch.from_numpy(images), labels


def load_data(data_dir: str) -> tuple[Any, ...]:
    """The folder decoded once: uint8 (N, C, S, S) train images, int64 labels,
    the same for validation, and the class names.

    C is 1 when every readable image is gray, else 3. Files that do not decode
    are skipped, and named.
    """
    root = Path(data_dir).expanduser()
    classes, files = list_images(root)
    train, val = split_files(files, len(classes))
    decoded: dict[Path, np.ndarray] = {}
    for path, _label in train + val:
        try:
            decoded[path] = read_square(path)
        except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
            print(f"skipped {path}: not a readable image ({exc})")
    channels = 1 if all(pixels.ndim == 2 for pixels in decoded.values()) else 3
    train_images, train_labels = stack(train, decoded, channels)
    val_images, val_labels = stack(val, decoded, channels)
    counts = torch.bincount(train_labels, minlength=len(classes)).tolist()
    if 0 in counts or len(val_labels) == 0:
        raise SystemExit(f"{root}: every class needs a training image, and some left")
    return train_images, train_labels, val_images, val_labels, classes


def channel_stats(images: torch.Tensor) -> tuple[tuple[float, ...], ...]:
    """Per-channel mean and population std of uint8 (N, C, H, W), 0..1 scale."""
    sums = torch.zeros(images.shape[1], dtype=torch.float64)
    squares = torch.zeros_like(sums)
    for chunk in torch.split(images, 256):
        # float32 within a chunk of 256 images, float64 across chunks.
        x = chunk.to(torch.float32).div_(255)
        sums += x.sum(dim=(0, 2, 3), dtype=torch.float64)
        squares += x.square_().sum(dim=(0, 2, 3), dtype=torch.float64)
    count = images.shape[0] * images.shape[2] * images.shape[3]
    mean = sums / max(count, 1)
    std = (squares / max(count, 1) - mean.square()).clamp_min(1e-12).sqrt()
    # A flat channel (one colour everywhere) would divide by zero.
    std = torch.where(std < 1e-3, torch.ones_like(std), std)
    return (
        tuple(round(v, 6) for v in mean.tolist()),
        tuple(round(v, 6) for v in std.tolist()),
    )
'''
