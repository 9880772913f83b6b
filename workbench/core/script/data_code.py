"""The data half of ``main()`` and the functions it calls: read, batch, augment.

:func:`data_functions` gives the module-level blocks that read the dataset
(``load_data``) and cut it into batches; :func:`data_setup` the part of
``main()`` that makes ``train_batches`` and ``val_batches``, on the fast path
(uint8 tensors in memory, as ``FastLoader``) or a ``DataLoader``. The blocks
come from :mod:`parts` and the per-dataset modules.
"""

from __future__ import annotations

from workbench.core.config import TrainConfig
from workbench.core.data.registry import TORCHVISION_CLASS_NAMES
from workbench.core.models.catalog import is_torchvision, pretrained
from workbench.core.script import (
    augment_code,
    cifar_data,
    folder_data,
    my_digits_data,
    parts,
)
from workbench.core.script.cifar_data import CIFAR
from workbench.core.script.folder_data import FOLDER
from workbench.core.script.my_digits_data import MY_DIGITS
from workbench.core.script.parts import literal


def data_functions(cfg: TrainConfig) -> str:
    if cfg.dataset == FOLDER:
        blocks = [folder_data.FOLDER_DATA, parts.FAST_BATCHES]
    else:
        vision = TORCHVISION_CLASS_NAMES.get(cfg.dataset)
        # Arrays in memory (for the DataLoader path too), or torchvision's class.
        arrays = cfg.loader == "fast" or vision is None
        blocks = _load_blocks(cfg) if arrays else []
        if cfg.loader == "fast":
            blocks.append(parts.FAST_BATCHES)
        else:
            blocks.append(parts.LOADER_DATASETS)
            blocks += [parts.ARRAY_DATASET] if vision is None else []
    blocks += augment_code.augment_blocks(cfg)
    return "\n\n\n".join(b.strip("\n") for b in blocks) + "\n"


def _load_blocks(cfg: TrainConfig) -> list[str]:
    """The functions that read ``cfg.dataset`` into uint8 tensors (``load_data``)."""
    if cfg.dataset == "digits":
        return [parts.DIGITS_DATA]
    if cfg.dataset == CIFAR:
        return [cifar_data.CIFAR_DATA]
    if cfg.dataset == MY_DIGITS:
        return my_digits_data.my_digits_blocks(cfg)
    return [parts.TORCHVISION_DATA.format(cls=TORCHVISION_CLASS_NAMES[cfg.dataset])]


def data_setup(cfg: TrainConfig, rgb: bool) -> str:
    """The part of main() that makes ``train_batches`` and ``val_batches``."""
    if cfg.dataset == FOLDER:
        torchvision_model = is_torchvision(cfg.model)
        setup = folder_data.folder_setup(
            torchvision_model, pretrained(cfg.model, cfg.weights)
        )
        return augment_code.augmented_setup(setup, cfg, folder=True)
    load = "    train_images, train_labels, val_images, val_labels = load_data("
    if cfg.dataset == MY_DIGITS:  # and where the drawings are
        load += "\n        args.data_dir, args.my_digits_dir\n    )\n"
    else:
        load += "args.data_dir)\n"
    if cfg.loader == "fast":
        gray = "    train_images, val_images = train_images.unsqueeze(1), val_images."
        setup = load + ("" if cfg.dataset == CIFAR else gray + "unsqueeze(1)\n")
        setup += """    steps_per_epoch = math.ceil(len(train_labels) / BATCH_SIZE)

    def train_batches(epoch: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        order = epoch_order(len(train_labels), epoch)
        return batches(train_images, train_labels, order, BATCH_SIZE, device, MEAN, STD)

    def val_batches() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        order = torch.arange(len(val_labels))
        return batches(val_images, val_labels, order, VAL_BATCH_SIZE, device, MEAN, STD)
"""
        return "\n" + augment_code.augmented_setup(setup, cfg, folder=False)
    # A torchvision model takes three channels: gray is repeated.
    steps = ["transforms.Grayscale(num_output_channels=3)"] if rgb else []
    steps += ["transforms.ToTensor()", "transforms.Normalize(MEAN, STD)"]
    transform = _compose("transform", steps)
    train = "transform"
    if cfg.augment:  # torchvision's random transforms first, for training only
        transform += _compose("train_transform", augment_code.loader_steps(cfg) + steps)
        train = "train_transform"
    cls = TORCHVISION_CLASS_NAMES.get(cfg.dataset)
    if cls is None:
        sets = load
        if cfg.dataset == CIFAR:
            sets += (
                "    # Pillow reads colour as (H, W, 3): channels go last.\n"
                "    train_images = train_images.permute(0, 2, 3, 1)\n"
                "    val_images = val_images.permute(0, 2, 3, 1)\n"
            )
        sets += (
            f"    train_set = ImageArrays(train_images, train_labels, {train})\n"
            "    val_set = ImageArrays(val_images, val_labels, transform)\n"
        )
    else:
        sets = (
            f"    train_set = datasets.{cls}(\n"
            f"        args.data_dir, True, transform={train}, download=DOWNLOAD\n"
            "    )\n"
            f"    val_set = datasets.{cls}(\n"
            "        args.data_dir, False, transform=transform, download=DOWNLOAD\n"
            "    )\n"
        )
    return (
        transform
        + sets
        + """    train_loader = make_loader(train_set, BATCH_SIZE, shuffle=True)
    val_loader = make_loader(val_set, VAL_BATCH_SIZE, shuffle=False)
    steps_per_epoch = len(train_loader)

    def on_device(loader: DataLoader) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for x, y in loader:
            x = x.to(device, non_blocking=PIN_MEMORY)
            yield x, y.to(device, non_blocking=PIN_MEMORY)

    def train_batches(epoch: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        train_loader.sampler.set_epoch(epoch)
        return on_device(train_loader)

    def val_batches() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return on_device(val_loader)
"""
    )


def _compose(name: str, steps: list[str]) -> str:
    inner = "".join(f"            {step},\n" for step in steps)
    return f"    {name} = transforms.Compose(\n        [\n{inner}        ]\n    )\n"


def class_weight_settings(cfg: TrainConfig) -> list[str]:
    """``CLASS_WEIGHTS``: a run's weights from a file (one per class), or none."""
    weights = cfg.class_weights
    if not isinstance(weights, tuple):
        return []
    line = f"CLASS_WEIGHTS = {literal(list(weights))}"
    if len(line) > 88:
        line = "CLASS_WEIGHTS = [\n" + "".join(f"    {w!r},\n" for w in weights) + "]"
    return ["# The loss's weight of each class, in class order.", line]


def class_weight_setup(cfg: TrainConfig) -> str:
    """The part of main() that makes the loss's ``class_weights`` (none: empty)."""
    if cfg.class_weights == "none":
        return ""
    if isinstance(cfg.class_weights, tuple):
        weights = "torch.tensor(CLASS_WEIGHTS, dtype=torch.float64)"
        return f"    class_weights = {weights}.to(device, torch.float32)\n"
    vision = cfg.loader == "dataloader" and cfg.dataset in TORCHVISION_CLASS_NAMES
    labels = "train_set.targets" if vision else "train_labels"
    classes = "num_classes" if cfg.dataset == FOLDER else "NUM_CLASSES"
    return f"""    # Balanced class weights: n_samples / (n_classes * count) over the
    # training split (scikit-learn's): a rare class weighs as a common one.
    labels = torch.as_tensor({labels})
    counts = torch.bincount(labels, minlength={classes})[:{classes}].double()
    if (counts == 0).any():
        raise SystemExit("balanced class weights need every class in training")
    class_weights = (counts.sum() / (len(counts) * counts)).to(device, torch.float32)
"""
