"""Random draws of the calling thread's torch calls, sent to a private generator.

A model built inside :class:`PrivateRandom` gets the weights its initialisation
draws from ``generator``, and the process's random generator is neither seeded
nor drawn from: a run training in another thread (building its own seeded
model, drawing dropout masks) is not disturbed. A torch function mode does it;
modes belong to the thread that enters them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

# Random functions of torch that take ``generator=`` but show no Python signature.
_RANDOM = frozenset(
    {
        "bernoulli",
        "bernoulli_",
        "cauchy_",
        "exponential_",
        "geometric_",
        "log_normal_",
        "multinomial",
        "normal",
        "normal_",
        "poisson",
        "rand",
        "randint",
        "randn",
        "random_",
        "randperm",
        "uniform_",
    }
)


# Where a cancelled build may stop: each parameter is made by one of these.
_ALLOCATES = frozenset({"empty", "full", "ones", "tensor", "zeros"})


class BuildCancelled(Exception):
    """A preview build stopped because nobody wants it any more."""


class PrivateRandom(TorchFunctionMode):
    """Sends the random draws of this thread's torch calls to ``generator``."""

    def __init__(
        self,
        generator: torch.Generator,
        cancel: Callable[[], bool] = lambda: False,
    ) -> None:
        super().__init__()
        self._generator = generator
        self._cancel = cancel

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = dict(kwargs or {})
        draws = _draws_random(func)
        # Stop only where a tensor is made or drawn: never in a context
        # manager's exit (no_grad's restores grad mode through a torch call).
        if (draws or getattr(func, "__name__", "") in _ALLOCATES) and self._cancel():
            raise BuildCancelled("the preview was no longer wanted")
        # Inside a handled call the mode is off: nn.init's functions must get
        # the generator themselves (they pass it on to the tensor methods).
        if draws and kwargs.get("generator") is None:
            kwargs["generator"] = self._generator
        return func(*args, **kwargs)


@functools.cache
def _draws_random(func: Any) -> bool:
    if getattr(func, "__name__", "") in _RANDOM:
        return True
    try:
        return "generator" in inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False
