"""Freezing parameters: the tree the UI shows, the mask, and an optimizer that agrees.

Freezing is ``requires_grad = False``. Three things must follow it: the optimizer
holds only trainable parameters, a fully frozen BatchNorm keeps its running
statistics, and a mask changed mid-run reaches the optimizer without a parameter
in two places. A mask moves to another model by parameter name (:func:`carry_mask`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field

import torch
from torch import nn

from workbench.core.models.builtins import has_lazy_parameters, head_name


class FreezeError(ValueError):
    """A freeze pattern that matches nothing; the text lists what exists."""


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """One row of ``named_parameters()``."""

    name: str
    shape: tuple[int, ...]
    numel: int
    trainable: bool


@dataclass(slots=True)
class ModuleNode:
    """A module in the parameter tree, with totals over everything below it."""

    name: str  # full dotted path; "" for the root
    type_name: str
    params: list[ParamInfo] = field(default_factory=list)
    children: list[ModuleNode] = field(default_factory=list)

    @property
    def numel(self) -> int:
        """Parameters in this module and below."""
        return sum(p.numel for p in self.params) + sum(c.numel for c in self.children)

    @property
    def trainable_numel(self) -> int:
        """Trainable parameters in this module and below."""
        own = sum(p.numel for p in self.params if p.trainable)
        return own + sum(c.trainable_numel for c in self.children)


def list_parameters(model: nn.Module) -> list[ParamInfo]:
    """Every parameter in ``named_parameters()`` order."""
    if has_lazy_parameters(model):
        raise FreezeError(
            "materialise the lazy model with a first batch before listing"
        )
    return [
        ParamInfo(name, tuple(p.shape), p.numel(), p.requires_grad)
        for name, p in model.named_parameters()
    ]


def parameter_tree(model: nn.Module) -> ModuleNode:
    """The modules that own parameters, nested as in the model."""
    infos = {info.name: info for info in list_parameters(model)}
    nodes: dict[str, ModuleNode] = {}
    for path, module in model.named_modules():
        nodes[path] = ModuleNode(path, type(module).__name__)
        for pname, _ in module.named_parameters(recurse=False):
            full = f"{path}.{pname}" if path else pname
            nodes[path].params.append(infos[full])
        if path:
            parent = path.rpartition(".")[0]
            nodes[parent].children.append(nodes[path])
    root = nodes[""]
    _prune_empty(root)
    return root


def _prune_empty(node: ModuleNode) -> None:
    node.children = [c for c in node.children if c.numel > 0]
    for child in node.children:
        _prune_empty(child)


def count_parameters(model: nn.Module) -> tuple[int, int]:
    """(all, trainable) parameter counts."""
    total = trainable = 0
    for p in model.parameters():
        total += p.numel()
        trainable += p.numel() if p.requires_grad else 0
    return total, trainable


def match_patterns(model: nn.Module, patterns: Iterable[str]) -> set[str]:
    """Parameter names matched by names, module paths or glob patterns.

    ``conv1`` matches the module's parameters, ``conv1.weight`` one parameter,
    ``features.*`` everything below ``features``.
    """
    names = [name for name, _ in model.named_parameters()]
    matched: set[str] = set()
    for pattern in patterns:
        hits = {
            n
            for n in names
            if fnmatch.fnmatchcase(n, pattern) or n.startswith(pattern + ".")
        }
        if not hits:
            modules = sorted({n.rpartition(".")[0] for n in names if "." in n})
            raise FreezeError(
                f"freeze pattern {pattern!r} matches no parameter; modules are: "
                f"{', '.join(modules)}"
            )
        matched |= hits
    return matched


def set_frozen(model: nn.Module, frozen: Iterable[str]) -> set[str]:
    """Freeze exactly the parameters ``frozen`` matches; unfreeze all others."""
    names = match_patterns(model, frozen)
    for name, param in model.named_parameters():
        param.requires_grad_(name not in names)
    return names


def frozen_names(model: nn.Module) -> list[str]:
    """Names of parameters with ``requires_grad`` off, in model order."""
    return [n for n, p in model.named_parameters() if not p.requires_grad]


def all_but_head(model: nn.Module) -> list[str]:
    """The freeze mask for fine-tuning: every parameter outside the head."""
    head = head_name(model)
    return [n for n, _ in model.named_parameters() if not n.startswith(head + ".")]


def train_mode(model: nn.Module) -> None:
    """``model.train()``, except fully frozen BatchNorm layers stay in eval.

    In train mode BatchNorm updates its running mean and variance even when its
    weights are frozen, so a "frozen" feature extractor would still drift.
    """
    model.train()
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            params = list(module.parameters(recurse=False))
            if params and not any(p.requires_grad for p in params):
                module.eval()


def trainable_parameters(model: nn.Module) -> list[nn.Parameter]:
    """The parameters an optimizer should see, in model order."""
    return [p for p in model.parameters() if p.requires_grad]


def reconcile_optimizer(optimizer: torch.optim.Optimizer, model: nn.Module) -> bool:
    """Make ``optimizer`` hold exactly the model's trainable parameters.

    Edits the single param group in place, so an LR scheduler bound to the
    optimizer stays valid. State of newly frozen parameters is dropped (a
    ``state_dict`` cannot hold state for parameters outside every group);
    newly trainable ones start fresh. Returns True if anything changed.
    """
    if len(optimizer.param_groups) != 1:
        raise ValueError("reconcile_optimizer expects one parameter group")
    group = optimizer.param_groups[0]
    wanted = trainable_parameters(model)
    if [id(p) for p in group["params"]] == [id(p) for p in wanted]:
        return False
    keep = {id(p) for p in wanted}
    for param in list(optimizer.state):
        if id(param) not in keep:
            del optimizer.state[param]
    group["params"] = wanted
    return True


def names_up_to(model: nn.Module, name: str) -> list[str]:
    """Parameters from the first up to the last one in module or parameter ``name``.

    In ``named_parameters()`` order: everything before ``name`` and within it.
    ``""`` (the model itself) is every parameter.

    Raises
    ------
    FreezeError
        When ``name`` owns no parameter.
    """
    names = [n for n, _ in model.named_parameters()]
    if not name:
        return names
    last = -1
    for i, n in enumerate(names):
        if n == name or n.startswith(name + "."):
            last = i
    if last < 0:
        raise FreezeError(f"{name!r} owns no parameter")
    return names[: last + 1]


def parameter_blocks(model: nn.Module) -> list[str]:
    """The model's top-level children that own parameters, in order."""
    return [
        name
        for name, child in model.named_children()
        if any(True for _ in child.parameters())
    ]


def first_blocks(model: nn.Module, n: int) -> list[str]:
    """The parameters of the first ``n`` blocks (see :func:`parameter_blocks`)."""
    blocks = parameter_blocks(model)[: max(n, 0)]
    prefixes = tuple(b + "." for b in blocks)
    return [name for name, _ in model.named_parameters() if name.startswith(prefixes)]


@dataclass(frozen=True, slots=True)
class CarriedMask:
    """A freeze selection moved to another model: what it keeps, what it loses."""

    frozen: tuple[str, ...]  # the new model's parameters to freeze, in its order
    lost: tuple[str, ...]  # frozen names the new model has no parameter of

    def message(self, source: str, target: str) -> str:
        """One status line when something was lost ("" when all was kept)."""
        if not self.lost:
            return ""
        total = len(self.frozen) + len(self.lost)
        if not self.frozen:
            return (
                f"Freeze selection cleared: {target} has none of {source}'s "
                f"{total} frozen parameters"
            )
        return (
            f"Freeze selection partly kept: {target} has {len(self.frozen)} of "
            f"{source}'s {total} frozen parameters; the other {len(self.lost)} "
            "are not in it"
        )


def carry_mask(frozen: Iterable[str], names: Iterable[str]) -> CarriedMask:
    """Carry the frozen parameter names over to a model with parameters ``names``.

    A parameter of the same name stays frozen (another dataset changes the
    head's shape, not its name); names the new model lacks are ``lost``.
    """
    wanted = dict.fromkeys(frozen)
    present = list(names)
    have = set(present)
    return CarriedMask(
        frozen=tuple(n for n in present if n in wanted),
        lost=tuple(n for n in wanted if n not in have),
    )
