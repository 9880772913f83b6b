"""A score's mean over the folds and its 95% confidence interval.

Student's t interval, mean +- t(0.975, K - 1) * s / sqrt(K): the folds are few
(5 or 10), so the normal's 1.96 would claim more certainty than K values give.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Estimate:
    """``mean`` of ``count`` values and the 95% interval around it.

    ``half_width`` is None for one value: one fold says nothing of the spread.
    """

    mean: float
    half_width: float | None
    count: int

    @property
    def low(self) -> float | None:
        return None if self.half_width is None else self.mean - self.half_width

    @property
    def high(self) -> float | None:
        return None if self.half_width is None else self.mean + self.half_width


def estimate(values: Sequence[float]) -> Estimate:
    """The mean of ``values`` (at least one) and its Student's t interval."""
    # scikit-learn's dependency; scipy.special is the light part of it (0.3 s)
    from scipy.special import stdtrit

    count = len(values)
    mean = math.fsum(values) / count
    if count < 2:
        return Estimate(mean, None, count)
    spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (count - 1))
    t = float(stdtrit(count - 1, 0.5 + CONFIDENCE / 2))
    return Estimate(mean, t * spread / math.sqrt(count), count)
