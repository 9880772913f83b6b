"""Two rates read off a range test's smoothed loss, on a log-rate axis.

valley     the longest stretch over which the smoothed loss keeps falling (its
           longest decreasing subsequence), and the rate in its middle: well
           inside the fall, clear of where it flattens (the rule fastai uses
           by default)
steepest   where the smoothed loss falls fastest per decade of rate

The first tenth of the curve (the loss has not moved yet) and its last few
points (the loss takes off) are left out of both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_POINTS = 10  # fewer usable points than this: no suggestion
DISAGREE = 3.0  # the two rules disagree when their rates differ by more


@dataclass(frozen=True)
class Suggestions:
    """The two rules' rates and where they sit on the curve."""

    valley: float
    steepest: float

    @property
    def disagree(self) -> bool:
        """The rules differ by more than 3x: the band between them is shown."""
        low, high = sorted((self.valley, self.steepest))
        return high > DISAGREE * low

    @property
    def band(self) -> tuple[float, float]:
        """The lower and the higher of the two rates."""
        low, high = sorted((self.valley, self.steepest))
        return low, high


def usable(rates: np.ndarray, smoothed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The part of the curve the rules read: without its first tenth and last 5."""
    n = len(rates)
    return rates[n // 10 : max(n - 5, 0)], smoothed[n // 10 : max(n - 5, 0)]


def suggest(rates: np.ndarray, smoothed: np.ndarray) -> Suggestions | None:
    """Both rules' rates; None when too little of the curve is usable."""
    rates, losses = usable(rates, smoothed)
    if len(rates) < MIN_POINTS:
        return None
    return Suggestions(
        float(rates[valley_index(losses)]), float(rates[steepest_index(rates, losses)])
    )


def valley_index(losses: np.ndarray) -> int:
    """The index the valley rule picks on ``losses``."""
    n = len(losses)
    # length[i]: the longest strictly decreasing run of points ending at i;
    # came_from[i]: where that run starts.
    length = np.ones(n, dtype=int)
    starts = np.arange(n)
    for i in range(1, n):
        for j in range(i):
            if losses[i] < losses[j] and length[j] + 1 > length[i]:
                length[i] = length[j] + 1
                starts[i] = starts[j]
    end = int(np.argmax(length))  # the first longest: ties go to the lower rate
    start = int(starts[end])
    third = (end - start) / 3
    return start + int(third) + int(third / 2)


def steepest_index(rates: np.ndarray, losses: np.ndarray) -> int:
    """The index where the loss falls fastest against log10 of the rate."""
    slope = np.gradient(losses, np.log10(rates))
    return int(np.argmin(slope))
