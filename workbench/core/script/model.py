"""The model half of a written script: its definition, initialisation, freezing.

A built-in network is copied as the workbench's own class source; a torchvision
one is built with ``torchvision.models.get_model``, and pretrained weights are
loaded and the head replaced in the order the workbench does it, so the seed
gives the new head the same initial weights.
"""

from __future__ import annotations

import inspect

from workbench.core.config import TrainConfig
from workbench.core.data.registry import DatasetInfo
from workbench.core.models.builtins import _BUILDERS, MODEL_TITLES, build_on_meta
from workbench.core.models.catalog import is_model_file
from workbench.core.models.torchvision_models import _builder_options, resolve_weights
from workbench.core.script.parts import literal

_LAZY = ("lazy-cnn",)
_SIDE_HEADS = ("aux1", "aux2", "AuxLogits")


def model_functions(
    cfg: TrainConfig, info: DatasetInfo, frozen: bool, from_data: bool = False
) -> str:
    """``precision_context``, the model's class if built in, ``build_model``,
    ``freeze`` and (with a freeze mask) ``train_mode``.

    ``from_data``: the classes and input shape are the data's, found when the
    script reads it (an image folder): ``build_model`` takes them as arguments.
    """
    blocks = [_precision_function(cfg)]
    if cfg.model in _BUILDERS:
        cls = _BUILDERS[cfg.model]
        blocks.append(
            "InputShape = tuple[int, int, int]\nMNIST_SHAPE: InputShape = (1, 28, 28)"
        )
        blocks.append(inspect.getsource(cls))
        construct = [f"model = {cls.__name__}(NUM_CLASSES, INPUT_SHAPE)"]
        title = MODEL_TITLES[cfg.model]
    elif is_model_file(cfg.model):
        blocks.append(MODEL_FILE_LOADER)
        construct, title = _MODEL_FILE_CONSTRUCT, "MODEL_NAME from your MODEL_FILE"
    else:
        construct, title = _torchvision_construct(cfg, info)
    if cfg.model in _LAZY:
        construct += [
            "# Lazy layers learn their input sizes from a first batch.",
            "model.eval()",
            "with torch.no_grad():",
            "    model(torch.zeros(2, *INPUT_SHAPE))",
            "model.train()",
        ]
    signature = "def build_model() -> nn.Module:\n"
    if from_data:
        # The same length as the constants: ruff lays the lines out alike.
        construct = [
            line.replace("NUM_CLASSES", "num_classes").replace(
                "INPUT_SHAPE", "input_shape"
            )
            for line in construct
        ]
        signature = (
            "def build_model(num_classes: int, input_shape: tuple[int, int, int]) "
            "-> nn.Module:\n"
        )
    body = "".join(f"        {line}\n" if line else "\n" for line in construct)
    blocks.append(
        signature
        + f'    """{title}.\n\n    Its initial weights are fixed by SEED.\n    """\n'
        "    # Built from a copy of the random stream seeded with SEED, as the\n"
        "    # workbench does: the global stream (dropout) stays as seeding left it.\n"
        "    with torch.random.fork_rng(devices=[]):\n"
        "        torch.manual_seed(SEED)\n"
        f"{body}"
        "    return model\n"
    )
    blocks.append(
        "def freeze(model: nn.Module) -> None:\n"
        '    """A frozen parameter gets no gradient: the optimizer never moves it."""\n'
        "    for name, param in model.named_parameters():\n"
        "        param.requires_grad_(name not in FROZEN)\n"
    )
    if frozen:
        blocks.append(
            "def train_mode(model: nn.Module) -> None:\n"
            '    """model.train(), but a BatchNorm whose weights are frozen stays in\n'
            "    eval mode: in train mode it would still update its running stats.\n"
            '    """\n'
            "    model.train()\n"
            "    for module in model.modules():\n"
            "        if isinstance(module, nn.modules.batchnorm._BatchNorm):\n"
            "            params = list(module.parameters(recurse=False))\n"
            "            if params and not any(p.requires_grad for p in params):\n"
            "                module.eval()\n"
        )
    return "\n\n\n".join(b.strip("\n") for b in blocks) + "\n"


MODEL_FILE_LOADER = '''
def model_builder() -> Any:
    """MODEL_NAME from MODEL_FILE: your own file, imported and run here."""
    spec = importlib.util.spec_from_file_location("model_file", MODEL_FILE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{MODEL_FILE}: not a Python file to import")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # runs your file: your choice, as in the app
    return getattr(module, MODEL_NAME)
'''

# Called as the workbench calls it: num_classes, and in_channels when accepted;
# then a check on two blank inputs (in eval mode), where lazy layers take shape.
_MODEL_FILE_CONSTRUCT = [
    "builder = model_builder()",
    'options = {"num_classes": NUM_CLASSES}',
    "parameters = inspect.signature(builder).parameters",
    "keywords = any(p.kind is p.VAR_KEYWORD for p in parameters.values())",
    'if "in_channels" in parameters or keywords:',
    '    options["in_channels"] = INPUT_SHAPE[0]',
    "model = builder(**options)",
    "model.eval()",
    "with torch.no_grad():",
    "    out = model(torch.zeros(2, *INPUT_SHAPE))",
    "model.train()",
    "if tuple(out.shape) != (2, NUM_CLASSES):",
    '    raise SystemExit(f"{MODEL_NAME} gives {tuple(out.shape)} for 2 images")',
]


def _precision_function(cfg: TrainConfig) -> str:
    if cfg.precision == "fp32":
        body = "    return contextlib.nullcontext()  # fp32: no autocast"
    else:
        dtype = "bfloat16" if cfg.precision == "bf16" else "float16"
        body = (
            "    # Matrix products in reduced precision, the loss in float32.\n"
            f"    return torch.autocast(DEVICE.type, dtype=torch.{dtype})"
        )
    doc = f'    """Autocast for {cfg.precision}."""'
    return f"def precision_context() -> Any:\n{doc}\n{body}\n"


def _call(function: str, arguments: list[str], indent: int) -> list[str]:
    """``function(arguments)`` laid out as ruff format would lay it out."""
    joined = ", ".join(arguments)
    if indent + len(function) + len(joined) + 2 <= 88:
        return [f"{function}({joined})"]
    if indent + 4 + len(joined) <= 88:
        return [f"{function}(", f"    {joined}", ")"]
    return [f"{function}(", *(f"    {argument}," for argument in arguments), ")"]


def _torchvision_construct(
    cfg: TrainConfig, info: DatasetInfo
) -> tuple[list[str], str]:
    """The lines that build a torchvision model (pretrained: load, replace head)."""
    member = resolve_weights(cfg.model, cfg.weights)
    options = _builder_options(cfg.model, info.image_shape[1], member is not None)
    arguments = [literal(cfg.model)]
    arguments.append("num_classes=1000" if member else "num_classes=NUM_CLASSES")
    arguments += [f"{key}={literal(value)}" for key, value in options.items()]
    if member is None:
        title = f"torchvision's {cfg.model}"
        return _call("model = models.get_model", arguments, 8), title
    label = f"{type(member).__name__}.{member.name}"
    lines = [
        "# Built for ImageNet's 1,000 classes, then given the pretrained weights",
        "# (downloaded once into torch's hub cache; weights only, no pickled code).",
        *_call("model = models.get_model", arguments, 8),
        f"weights = models.get_weight({literal(label)})",
        *_call(
            "state = torch.hub.load_state_dict_from_url",
            ["weights.url", "progress=True", "check_hash=True", "weights_only=True"],
            8,
        ),
        "model.load_state_dict(state)",
    ]
    # The architecture as the workbench fits it (on the meta device: no weights).
    built = build_on_meta(cfg.model, info.num_classes, info.image_shape, cfg.weights)
    if options.get("aux_logits"):
        lines += [
            "# The side classifiers only served ImageNet training.",
            "model.aux_logits = False",
            *(f"model.{side} = None" for side in _SIDE_HEADS if hasattr(built, side)),
        ]
    head = str(built.head_module)
    new_layer = type(built.get_submodule(head)).__name__
    if new_layer == "Linear":
        layer = "nn.Linear(old.in_features, NUM_CLASSES)"
        if built.get_submodule(head).bias is None:
            layer = "nn.Linear(old.in_features, NUM_CLASSES, bias=False)"
    else:  # SqueezeNet's 1x1 convolution
        layer = "nn.Conv2d(old.in_channels, NUM_CLASSES, kernel_size=old.kernel_size)"
    lines += [
        "",
        "# A new head for this dataset's classes (the seed fixes its weights).",
        f"old = model.get_submodule({literal(head)})",
        *_call("model.set_submodule", [literal(head), layer], 8),
    ]
    return lines, f"torchvision's {cfg.model} with {label}"
