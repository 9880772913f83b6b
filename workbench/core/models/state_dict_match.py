"""Compare saved weights with a model, and load what fits.

Loading a ``state_dict`` strictly fails with a list of keys people find hard to
read; loading it with ``strict=False`` silently skips what does not fit. The
doctor sits between: it names what matches, what is missing, what is extra and
which shapes differ, and when only part fits (a 10-class head in a 26-class
model) it loads every matching tensor, reinitialises the rest, and says which.

Key prefixes that wrappers add (``_orig_mod.`` from ``torch.compile``,
``module.`` from ``DataParallel``) are stripped first, so a compiled model's
weights load into an eager one and back.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import torch
from torch import nn

# Wrappers rename keys: torch.compile(m) adds "_orig_mod.", DataParallel "module.".
WRAPPER_PREFIXES = ("_orig_mod.", "module.")


class WeightsMismatch(ValueError):
    """Weights that do not fit a model; the text names the differences."""


def _strip_prefixes(key: str) -> str:
    changed = True
    while changed:
        changed = False
        for prefix in WRAPPER_PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix) :]
                changed = True
    return key


def strip_wrapper_prefixes(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Drop ``_orig_mod.`` and ``module.`` prefixes that wrappers add to keys.

    The state's ``_metadata`` (each module's version, which e.g. MNASNet's
    loading checks) is kept, under the stripped module names too.
    """
    cleaned = OrderedDict((_strip_prefixes(k), v) for k, v in state.items())
    metadata = getattr(state, "_metadata", None)
    if metadata is not None:
        # Module names carry no trailing dot: "_orig_mod" is the wrapped root.
        cleaned._metadata = {  # type: ignore[attr-defined]
            _strip_prefixes(f"{name}.")[:-1]: dict(entry)
            for name, entry in metadata.items()
        }
    return cleaned


def copy_metadata(
    copy: dict[str, torch.Tensor], source: dict[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """``copy`` (an ``OrderedDict``) with ``source``'s module versions, if any."""
    metadata = getattr(source, "_metadata", None)
    if metadata is not None:
        copy._metadata = {name: dict(entry) for name, entry in metadata.items()}  # type: ignore[attr-defined]
    return copy


def unwrap(model: nn.Module) -> nn.Module:
    """The module inside ``torch.compile(m)`` and ``DataParallel`` wrappers."""
    while True:
        inner = getattr(model, "_orig_mod", None)  # torch.compile's OptimizedModule
        if isinstance(inner, nn.Module):
            model = inner
        elif isinstance(model, nn.DataParallel | nn.parallel.DistributedDataParallel):
            model = model.module
        else:
            return model


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One tensor present on both sides with different shapes."""

    name: str
    file_shape: tuple[int, ...]
    model_shape: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StateDiff:
    """How a saved state compares with a model's own ``state_dict``.

    Attributes
    ----------
    matched : tuple of str
        Tensors with the same name and shape on both sides.
    missing : tuple of str
        In the model, not in the file.
    unexpected : tuple of str
        In the file, not in the model.
    mismatched : tuple of Mismatch
        Same name, different shape.
    """

    matched: tuple[str, ...]
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]
    mismatched: tuple[Mismatch, ...]

    @property
    def exact(self) -> bool:
        """True when the file fits the model tensor for tensor."""
        return not (self.missing or self.unexpected or self.mismatched)

    @property
    def partial(self) -> bool:
        """True when some but not all of the model's tensors can be loaded."""
        return bool(self.matched) and not self.exact

    @property
    def fit_fraction(self) -> float:
        """The share of the model's tensors that would load (1.0 when exact)."""
        total = len(self.matched) + len(self.missing) + len(self.mismatched)
        return len(self.matched) / total if total else 0.0

    @property
    def not_loaded(self) -> tuple[str, ...]:
        """The model's tensors a partial load leaves to be reinitialised."""
        return tuple(sorted(self.missing + tuple(m.name for m in self.mismatched)))

    def lines(self, limit: int | None = None) -> list[str]:
        """Human-readable differences, one per line (``limit`` per kind)."""

        def clip(items: list[str]) -> list[str]:
            if limit is None or len(items) <= limit:
                return items
            return [*items[:limit], f"... and {len(items) - limit} more"]

        out: list[str] = []
        out += clip(
            [
                f"shape mismatch: {m.name}: file {m.file_shape} vs model "
                f"{m.model_shape}"
                for m in sorted(self.mismatched, key=lambda m: m.name)
            ]
        )
        out += clip([f"missing in the file: {name}" for name in self.missing])
        out += clip([f"not in the model: {name}" for name in self.unexpected])
        return out

    def summary(self) -> str:
        """One sentence: exact, partial (with counts), or nothing in common."""
        total = len(self.matched) + len(self.missing) + len(self.mismatched)
        if self.exact:
            return f"fits exactly: all {total} tensors match"
        if not self.matched:
            return "nothing in common: no tensor has the same name and shape"
        names = ", ".join(self.not_loaded[:6])
        if len(self.not_loaded) > 6:
            names += ", ..."
        text = (
            f"partial fit: {len(self.matched)} of {total} tensors match; "
            f"{len(self.not_loaded)} would be reinitialised ({names})"
        )
        if self.unexpected:
            text += f"; {len(self.unexpected)} tensors of the file unused"
        return text


def compare_state(model: nn.Module, state: dict[str, torch.Tensor]) -> StateDiff:
    """Compare ``state`` (prefixes stripped) with the unwrapped model's state."""
    state = strip_wrapper_prefixes(state)
    own = unwrap(model).state_dict()
    matched, mismatched = [], []
    for name in own:
        if name in state:
            file_shape = tuple(state[name].shape)
            model_shape = tuple(own[name].shape)
            if file_shape == model_shape:
                matched.append(name)
            else:
                mismatched.append(Mismatch(name, file_shape, model_shape))
    return StateDiff(
        matched=tuple(matched),
        missing=tuple(n for n in own if n not in state),
        unexpected=tuple(sorted(set(state) - set(own))),
        mismatched=tuple(mismatched),
    )


def load_exact(model: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Load ``state`` only if it fits exactly; otherwise raise and touch nothing.

    Raises
    ------
    WeightsMismatch
        Names the differences (at most 8 of each kind).
    """
    diff = compare_state(model, state)
    if not diff.exact:
        raise WeightsMismatch(
            "the weights do not fit this model: " + "; ".join(diff.lines(limit=8))
        )
    target = unwrap(model)
    cleaned = strip_wrapper_prefixes(state)
    if getattr(cleaned, "_metadata", None) is None:
        # A plain dict (a user's own file) loads as this code's module versions.
        copy_metadata(cleaned, target.state_dict())
    target.load_state_dict(cleaned)


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What a partial load did, tensor by tensor."""

    kept: tuple[str, ...]
    reinitialised: tuple[str, ...]
    ignored: tuple[str, ...]

    def summary(self) -> str:
        """One line for the user."""
        text = f"kept {len(self.kept)} tensors from the file"
        if self.reinitialised:
            text += f", reinitialised {', '.join(self.reinitialised)}"
        if self.ignored:
            text += f"; ignored from the file: {', '.join(self.ignored)}"
        return text


def load_partial(model: nn.Module, state: dict[str, torch.Tensor]) -> LoadReport:
    """Load every tensor that matches by name and shape; reinitialise the rest.

    A module owning a tensor that was not loaded gets ``reset_parameters()``
    (and BatchNorm ``reset_running_stats()``), so it starts from a fresh
    initialisation rather than from whatever it held; its tensors are all
    reported as reinitialised, and none of them are taken from the file.

    Raises
    ------
    WeightsMismatch
        When nothing matches: loading would change nothing.
    """
    model = unwrap(model)
    diff = compare_state(model, state)
    if not diff.matched:
        raise WeightsMismatch(
            "nothing in common: no tensor of the file has a name and shape of "
            "this model"
        )
    reset_modules = {name.rpartition(".")[0] for name in diff.not_loaded}
    reinitialised = set(diff.not_loaded)
    modules = dict(model.named_modules())
    for path in reset_modules:
        module = modules[path]
        prefix = f"{path}." if path else ""
        reinitialised |= {f"{prefix}{n}" for n in module.state_dict()}
        if hasattr(module, "reset_parameters"):
            module.reset_parameters()
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
    state = strip_wrapper_prefixes(state)
    keep = [n for n in diff.matched if n not in reinitialised]
    with torch.no_grad():
        own = model.state_dict()
        for name in keep:
            own[name].copy_(state[name])
    return LoadReport(
        kept=tuple(keep),
        reinitialised=tuple(sorted(reinitialised)),
        ignored=diff.unexpected,
    )
