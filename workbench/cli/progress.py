"""The command line's progress bars (tqdm): downloads and decoding, training steps."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

from workbench.core import events as E


class DownloadBars:
    """One tqdm bar per downloaded file (a session's ``progress`` callback)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bar: Any = None
        self.file_name = ""  # a disabled tqdm keeps no desc of its own

    def __call__(self, p: Any) -> None:
        if self.bar is None or self.file_name != p.file_name:
            self.close()
            self.file_name = p.file_name
            self.bar = tqdm(
                total=p.bytes_total,
                desc=p.file_name,
                unit=p.unit,
                unit_scale=p.unit == "B",
                disable=self.quiet,
                leave=False,
            )
        self.bar.update(p.bytes_done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class StepBar:
    """The training progress bar: steps, loss and speed (only on a terminal)."""

    def __init__(self, quiet: bool) -> None:
        self.show_bar = not quiet and sys.stderr.isatty()
        self.bar: Any = None

    def open(self, run: Any) -> None:
        self.bar = tqdm(
            total=run.total_steps,
            initial=run.global_step,
            unit="step",
            disable=not self.show_bar,
            dynamic_ncols=True,
        )

    def show(self, event: Any) -> None:
        bar = self.bar
        if isinstance(event, E.FeaturesProgress):
            busy = event.done < event.total  # cleared once computed
            count = f"features {event.done:,}/{event.total:,}"
            bar.set_description(count if busy else "")
        elif isinstance(event, E.CompileStarted):
            bar.set_description("compiling")
        elif isinstance(event, E.CompileFinished):
            bar.set_description("")
        elif isinstance(event, E.StepMetrics):
            bar.update(event.global_step - bar.n)
            loss, speed = f"{event.loss:.4f}", f"{event.images_per_s:,.0f}"
            bar.set_postfix(loss=loss, img_s=speed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
