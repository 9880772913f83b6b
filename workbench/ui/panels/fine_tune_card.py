"""The texts of the Draw tab's fine-tune card: before, failed, before and after.

Rich text for a :class:`~workbench.ui.widgets.draw_widgets.WrappingLabel`; the panel
decides when each is shown. :func:`change_line` and the colours are the card
style other before/after cards share (the data issues dialog's retrain card).
"""

from __future__ import annotations

from workbench.core.finetune import FrozenCheck, Scores
from workbench.ui.formatting import percent

GOOD_COLOUR, BAD_COLOUR = "#1a7f37", "#b42318"  # green, red
ARROW = "\u2192"


def change_line(name: str, count: int, before: float, after: float) -> str:
    """``name (count): 80.0% → <b>90.0%</b> (+10.0 pts)<br>``: one score, both runs."""
    return (
        f"{name} ({count:,}): {percent(before)} {ARROW} <b>{percent(after)}</b> "
        f"({100 * (after - before):+.1f} pts)<br>"
    )


def started_text(before: Scores, base_title: str) -> str:
    """The starting scores, while the fine-tune trains."""
    return (
        f"<b>Before</b>: my digits {percent(before.mine)} "
        f"({before.mine_count}), {base_title} test {percent(before.base)} "
        f"({before.base_count:,}). Training…"
    )


FAILED_TEXT = (
    "<b>Fine-tune did not finish</b>: it failed or was stopped before "
    "training, so there is nothing to compare."
)


def report_text(
    before: Scores,
    after: Scores,
    frozen: FrozenCheck,
    base_title: str,
    stopped: bool = False,
) -> str:
    """What was learnt and what was forgotten, and whether frozen stayed frozen."""
    mark = "\u2714" if frozen.unchanged else "\u2718"  # check mark / cross
    colour = GOOD_COLOUR if frozen.unchanged else BAD_COLOUR
    rows = [
        ("My digits, trained on", before.mine, after.mine, after.mine_count),
        (f"{base_title} test", before.base, after.base, after.base_count),
    ]
    lines = "".join(change_line(name, count, b, a) for name, b, a, count in rows)
    return (
        f"<b>Fine-tune {'stopped early' if stopped else 'finished'}</b><br>"
        f"{lines}<span style='color:{colour}'>{mark} Frozen parameters: "
        f"{frozen.describe()}.</span>"
    )
