"""The built-in networks, and materialising lazy ones.

Each model names its classifier layer in ``head_module`` so "freeze all but the head"
works for every architecture. Each adapts to its input ``(channels, height,
width)`` and class count; at MNIST's (1, 28, 28) they are the classic networks.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import torch
from torch import nn
from torch.nn.parameter import is_lazy

from workbench.core.config import MODELS, ConfigError
from workbench.core.data.registry import CancelCallback, ProgressCallback
from workbench.core.models.catalog import (
    LEGACY_MODELS,
    NO_WEIGHTS,
    is_model_file,
    model_problem,
)
from workbench.core.models.pretrained import load_pretrained_state
from workbench.core.models.private_random import PrivateRandom
from workbench.core.models.state_dict_match import copy_metadata
from workbench.core.models.torchvision_models import ModelBuildError, build_torchvision
from workbench.core.models.user_file import ModelFileError, build_from_file, parse_spec

InputShape = tuple[int, int, int]
MNIST_SHAPE: InputShape = (1, 28, 28)

MODEL_TITLES = {
    "small-cnn": "Small CNN (4 conv + BatchNorm; fast, the default)",
    "cnn": "Classic CNN (the PyTorch MNIST example)",
    "lazy-cnn": "Lazy CNN (LazyConv2d/LazyLinear, shapes found by a first batch)",
    "mlp": "MLP (two hidden layers)",
    "small-cnn-v1": "Small CNN, the layout before 2026-12 (its checkpoints)",
}


class SmallCNN(nn.Module):
    """Four 3x3 conv layers with BatchNorm and a linear head; ~38k parameters.

    Sized for a 2-core CPU: one epoch of MNIST with Adam and a one-cycle
    schedule reaches 99% test accuracy (``bench/time_to_accuracy.py``). The
    first conv steps by 2 instead of pooling a 28x28 map, and the second
    pools, so the third and fourth work at 7x7: faster per epoch than the
    earlier layout (:class:`SmallCNNv1`, the same parameters), and as accurate.
    """

    head_module = "head"

    def __init__(self, num_classes: int, input_shape: InputShape = MNIST_SHAPE) -> None:
        super().__init__()
        channels, height, width = input_shape

        def block(
            cin: int, cout: int, stride: int = 1, pool: bool = False
        ) -> nn.Sequential:
            # Pooling straight after the conv lets BatchNorm and ReLU work on a
            # quarter of the values. Identity where a block does not pool keeps
            # every block's BatchNorm at index 2 (block1.2, ...).
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                nn.MaxPool2d(2) if pool else nn.Identity(),
                nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True),
            )

        self.block1 = block(channels, 16, stride=2)  # 28 -> 14
        self.block2 = block(16, 32, pool=True)  # 14 -> 7
        self.block3 = block(32, 32)
        self.block4 = block(32, 64, pool=True)  # 7 -> 3
        # The strided conv rounds up (29 -> 15), each pooling down.
        side_h, side_w = (height + 1) // 2 // 4, (width + 1) // 2 // 4
        self.head = nn.Linear(64 * side_h * side_w, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.block4(self.block3(self.block2(self.block1(x))))
        return self.head(torch.flatten(x, 1))


class SmallCNNv1(nn.Module):
    """``small-cnn`` as it was until 2026-12: its checkpoints still load.

    The same parameters as :class:`SmallCNN` (names and shapes), placed
    differently: the first conv works at 28x28 and pools, the third at 14x14.
    A checkpoint of format 2 or earlier names ``small-cnn`` and means this.
    """

    head_module = "head"

    def __init__(self, num_classes: int, input_shape: InputShape = MNIST_SHAPE) -> None:
        super().__init__()
        channels, height, width = input_shape

        def block(cin: int, cout: int, pool: bool) -> nn.Sequential:
            # Pooling straight after the conv lets BatchNorm and ReLU work on a
            # quarter of the values: ~1.3x faster steps here, same accuracy.
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                *([nn.MaxPool2d(2)] if pool else []),
                nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True),
            )

        self.block1 = block(channels, 16, pool=True)  # 28 -> 14
        self.block2 = block(16, 32, pool=False)
        self.block3 = block(32, 32, pool=True)  # 14 -> 7
        self.block4 = block(32, 64, pool=True)  # 7 -> 3
        self.head = nn.Linear(64 * (height // 8) * (width // 8), num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.block4(self.block3(self.block2(self.block1(x))))
        return self.head(torch.flatten(x, 1))


class ClassicCNN(nn.Module):
    """``Net`` from pytorch/examples ``mnist/main.py``: two convs, two linears."""

    head_module = "fc2"

    def __init__(self, num_classes: int, input_shape: InputShape = MNIST_SHAPE) -> None:
        super().__init__()
        channels, height, width = input_shape
        self.conv1 = nn.Conv2d(channels, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        # Two 3x3 convs take 4 pixels, the pooling halves: 9216 at 28x28.
        self.fc1 = nn.Linear(64 * ((height - 4) // 2) * ((width - 4) // 2), 128)
        self.fc2 = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = self.dropout1(torch.max_pool2d(x, 2))
        x = self.dropout2(torch.relu(self.fc1(torch.flatten(x, 1))))
        return self.fc2(x)


class LazyCNN(nn.Module):
    """Like the classic CNN, with no input sizes written down: a batch sets them."""

    head_module = "fc2"

    def __init__(self, num_classes: int, input_shape: InputShape = MNIST_SHAPE) -> None:
        super().__init__()
        self.conv1 = nn.LazyConv2d(32, 3)
        self.conv2 = nn.LazyConv2d(64, 3)
        self.fc1 = nn.LazyLinear(128)
        self.fc2 = nn.LazyLinear(num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


class MLP(nn.Module):
    """Flatten, two hidden layers, a linear head."""

    head_module = "head"

    def __init__(self, num_classes: int, input_shape: InputShape = MNIST_SHAPE) -> None:
        super().__init__()
        channels, height, width = input_shape
        self.hidden = nn.Sequential(
            nn.Flatten(),
            nn.Linear(channels * height * width, 256),
            nn.ReLU(inplace=True),
            nn.Linear(256, 128),
            nn.ReLU(inplace=True),
        )
        self.head = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.hidden(x))


_BUILDERS: dict[str, type[nn.Module]] = {
    "small-cnn": SmallCNN,
    "cnn": ClassicCNN,
    "lazy-cnn": LazyCNN,
    "mlp": MLP,
    "small-cnn-v1": SmallCNNv1,
}
assert set(_BUILDERS) == set(MODELS) | set(LEGACY_MODELS)


def has_lazy_parameters(model: nn.Module) -> bool:
    """True while any parameter's shape is still unknown."""
    return any(is_lazy(p) for p in model.parameters())


def materialize(model: nn.Module, input_shape: tuple[int, ...] = (1, 28, 28)) -> bool:
    """Run one dry-run batch so lazy modules learn their shapes.

    Must happen before parameters are listed, frozen or given to an optimizer:
    a lazy parameter has no shape yet. Returns True if anything was materialised.
    """
    if not has_lazy_parameters(model):
        return False
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()  # the dry run must not touch BatchNorm statistics
    with torch.no_grad():
        model(torch.zeros(2, *input_shape, device=device))
    model.train(was_training)
    return True


def build_model(
    name: str,
    num_classes: int = 10,
    *,
    seed: int | None = None,
    input_shape: InputShape = MNIST_SHAPE,
    weights: str = NO_WEIGHTS,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
) -> nn.Module:
    """A fresh, fully materialised model for ``input_shape`` (C, H, W) inputs.

    ``name`` is a built-in, a torchvision classifier or ``file.py:Name``
    (:mod:`model_catalog`). ``seed`` makes its initial weights fixed (the
    replaced head of a pretrained model included). ``weights``: a torchvision
    model's pretrained weights, from the hub cache or downloaded with
    ``progress`` and ``cancel``. Raises ConfigError (WeightsError when the
    weights cannot be had, DownloadCancelled).
    """
    _check_buildable(name, input_shape)

    def load_state(member: object) -> dict[str, torch.Tensor]:
        return load_pretrained_state(member, progress=progress, cancel=cancel)

    if seed is None:
        return _construct(name, num_classes, input_shape, weights, load_state)
    # fork_rng keeps the caller's global stream untouched by our initialisation.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return _construct(name, num_classes, input_shape, weights, load_state)


def _construct(
    name: str,
    num_classes: int,
    input_shape: InputShape,
    weights: str,
    load_state: Callable[[object], dict[str, torch.Tensor] | None],
) -> nn.Module:
    """Build (and materialise) model ``name``; user-facing failures as ConfigError."""
    if name in _BUILDERS:
        model = _BUILDERS[name](num_classes, input_shape)
        materialize(model, input_shape)
        return model
    try:
        if is_model_file(name):
            source = parse_spec(name)
            model = build_from_file(source, num_classes, input_shape)
            # Checkpoints and run.json keep it: was this the file (model_source)?
            model.model_file_sha256 = source.sha256  # type: ignore[assignment]
            return model
        fitted = build_torchvision(
            name, num_classes, input_shape, weights, load_state=load_state
        )
    except (ModelBuildError, ModelFileError) as exc:
        text = str(exc)
        raise ConfigError(
            text if text.startswith("model") else f"model: {text}"
        ) from exc
    return fitted.model


# The smallest side each network's convolutions and poolings can take.
_MIN_SIDE = {"small-cnn": 8, "small-cnn-v1": 8, "cnn": 6, "lazy-cnn": 10, "mlp": 1}


def _check_buildable(name: str, input_shape: InputShape) -> None:
    problem = model_problem(name)
    if problem is not None:
        raise ConfigError(f"model: {problem}")
    smallest = min(input_shape[1:])
    if smallest < _MIN_SIDE.get(name, 1):
        raise ConfigError(
            f"model: {name} needs images of at least {_MIN_SIDE[name]} pixels a "
            f"side, these are {input_shape[1]}x{input_shape[2]}"
        )


def head_name(model: nn.Module) -> str:
    """The module path of the classifier layer (``fc2``, ``head``)."""
    name = getattr(model, "head_module", None)
    if isinstance(name, str):
        return name
    # Unknown architectures: the last module that owns parameters.
    last = ""
    for path, module in model.named_modules():
        if any(True for _ in module.parameters(recurse=False)):
            last = path
    return last


def snapshot_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """A detached CPU copy of ``model``'s state_dict, safe to keep while it trains.

    Call it only where nothing updates the model (between two training steps):
    a copy taken during ``optimizer.step()`` could mix old and new weights.
    """
    state = model.state_dict()
    copy = OrderedDict(
        (name, tensor.detach().to("cpu", copy=True)) for name, tensor in state.items()
    )
    return copy_metadata(copy, state)  # module versions, which loading may check


def build_unseeded(
    name: str,
    num_classes: int = 10,
    input_shape: InputShape = MNIST_SHAPE,
    weights: str = NO_WEIGHTS,
) -> nn.Module:
    """The architecture with zeroed weights, built without drawing random numbers.

    Building on the ``meta`` device skips initialisation, so nothing touches
    the process-wide random generator, which a run training in another thread
    may be drawing from (dropout). For a model that gets its weights loaded
    right away (the Draw tab's reader). A pretrained torchvision model is built
    as it was trained (its replaced head included), without its weights file.
    """
    model = build_on_meta(name, num_classes, input_shape, weights).to_empty(
        device="cpu"
    )
    with torch.no_grad():
        for tensor in (*model.parameters(), *model.buffers()):
            tensor.zero_()
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
    return model


def build_on_meta(
    name: str,
    num_classes: int = 10,
    input_shape: InputShape = MNIST_SHAPE,
    weights: str = NO_WEIGHTS,
) -> nn.Module:
    """The architecture on the ``meta`` device: names and shapes, no memory.

    Enough to list parameters or find the head (a script's freeze mask) in a
    few milliseconds, even for a large model (RegNet, built for real: seconds);
    the process's random generator is never drawn from.
    """
    _check_buildable(name, input_shape)
    try:
        with torch.device("meta"):
            return _construct(name, num_classes, input_shape, weights, _no_weights)
    except ConfigError:
        # RegNet computes its block widths with tensors it reads back, which
        # meta tensors cannot: such a model is built for real (a model that
        # cannot be built at all fails again here), its draws from a throwaway
        # generator, so a run training in another thread keeps its stream.
        with PrivateRandom(torch.Generator()):
            model = _construct(name, num_classes, input_shape, weights, _no_weights)
        return model.to("meta")


def _no_weights(member: object) -> None:
    """For an architecture only: its checkpoint brings the weights."""
    return None
