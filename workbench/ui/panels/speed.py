"""Speed: precision and torch.compile, with measured step times, not promises."""

from __future__ import annotations

import math
from typing import Any

import torch
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QWidget

from workbench.core.config import COMPILE_MODES, TrainConfig
from workbench.core.train.precision import resolve_precision
from workbench.core.train.step_clock import split_text
from workbench.ui.panels.base import ConfigPanel, select_data, set_item_enabled
from workbench.ui.widgets.step_split_bar import StepSplitBar, legend_html

_PRECISIONS = (
    ("auto", "auto"),  # the label says what it picks on the chosen device
    ("fp32", "fp32 (full precision)"),
    ("bf16", "bf16 autocast"),
    ("fp16", "fp16 autocast + gradient scaler"),
)
COMPILE_TIP = (
    "torch.compile the model in place. The first step compiles (many seconds); "
    "for these small models on a CPU the compiled step can be slower than eager, "
    "so compare the measured step times below."
)


def _ms(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return "not measured"
    return f"{seconds * 1000:.1f} ms"


class SpeedPanel(ConfigPanel):
    """Precision, compile toggle and mode, and what they measured on this machine."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Speed", parent)
        self.precision_combo = QComboBox(objectName="precisionCombo")
        for value, label in _PRECISIONS:
            self.precision_combo.addItem(label, value)
        self.precision_combo.currentIndexChanged.connect(self._emit_changed)
        # Long entries are elided in a narrow column instead of widening it.
        self.precision_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.precision_combo.setMinimumContentsLength(16)
        self.form.addRow("Precision", self.precision_combo)
        self.compile_check = QCheckBox("torch.compile", objectName="compileCheck")
        self.compile_check.setToolTip(COMPILE_TIP)
        self.compile_check.toggled.connect(self._on_compile_check_toggled)
        self.mode_combo = QComboBox(objectName="compileModeCombo")
        for mode in COMPILE_MODES:
            self.mode_combo.addItem(mode, mode)
        self.mode_combo.setToolTip("torch.compile mode")
        self.mode_combo.currentIndexChanged.connect(self._emit_changed)
        self.form.addRow(self.compile_check, self.mode_combo)
        self.channels_last_check = QCheckBox(
            "channels_last memory format", objectName="channelsLastCheck"
        )
        self.channels_last_check.setToolTip(
            "Keep the model in the channels-last memory format: convolutions "
            "usually run faster on it (Run ▸ Diagnose speed measures it here)"
        )
        self.channels_last_check.toggled.connect(self._emit_changed)
        self.form.addRow(self.channels_last_check)
        self.step_label = QLabel(objectName="stepTimeLabel")
        self.step_label.setToolTip(
            "Median time of one training step on this machine, measured by the "
            "last run of each kind with the current model, device, precision and "
            "batch size"
        )
        self.form.addRow("Step time", self.step_label)
        self.compile_label = QLabel(objectName="compileTimeLabel")
        # Measurements arrive during a run: wrap rather than widen the column.
        for label in (self.step_label, self.compile_label):
            label.setWordWrap(True)
        self.form.addRow("Compile", self.compile_label)
        # Where the step's time goes (the engine's step clock), live.
        self.split_bar = StepSplitBar()
        self.split_label = QLabel(objectName="stepSplitLabel")
        self.split_label.setWordWrap(True)
        self.split_legend = QLabel(legend_html(), objectName="stepSplitLegend")
        self.split_legend.setWordWrap(True)
        self.form.addRow("Step split", self.split_bar)
        self.form.addRow("", self.split_label)
        self.form.addRow("", self.split_legend)
        self._device_kind = "cpu"
        # (model, device kind, precision, batch size) -> eager/compiled/compile s
        self._measured: dict[tuple[Any, ...], dict[str, float]] = {}
        self.show_measurements(None, None, None)
        self.clear_split()
        self._update_enabled()

    def _apply(self, cfg: TrainConfig) -> None:
        select_data(self.precision_combo, cfg.precision)
        self.compile_check.setChecked(cfg.compile)
        select_data(self.mode_combo, cfg.compile_mode)
        self.channels_last_check.setChecked(cfg.channels_last)
        self._update_enabled()

    def config_values(self) -> dict[str, Any]:
        """``precision``, ``compile``, ``compile_mode`` and ``channels_last``."""
        precision = str(self.precision_combo.currentData())
        if precision == "fp16" and self._device_kind != "cuda":
            precision = "auto"
        return {
            "precision": precision,
            "compile": self.compile_check.isChecked(),
            "compile_mode": str(self.mode_combo.currentData()),
            "channels_last": self.channels_last_check.isChecked(),
        }

    def set_device_kind(self, kind: str) -> None:
        """fp16 needs CUDA (a gradient scaler); bf16 autocast needs CPU or CUDA."""
        self._device_kind = kind
        self._update_enabled()

    def _update_enabled(self) -> None:
        combo = self.precision_combo
        picked, why = resolve_precision("auto", torch.device(self._device_kind))
        combo.setItemText(combo.findData("auto"), f"auto ({picked} here)")
        combo.setItemData(combo.findData("auto"), why, Qt.ItemDataRole.ToolTipRole)
        cuda = self._device_kind == "cuda"
        set_item_enabled(
            combo,
            combo.findData("fp16"),
            cuda,
            ""
            if cuda
            else "fp16 training needs a CUDA device (it uses a gradient scaler)",
        )
        bf16 = self._device_kind in ("cpu", "cuda")
        set_item_enabled(
            combo,
            combo.findData("bf16"),
            bf16,
            "" if bf16 else f"bf16 autocast is not supported on {self._device_kind}",
        )
        if not combo.model().item(combo.currentIndex()).isEnabled():
            select_data(combo, "auto")
        self.mode_combo.setEnabled(self.compile_check.isChecked())

    def show_measurements(
        self, eager_s: float | None, compiled_s: float | None, compile_s: float | None
    ) -> None:
        """Show measured step times with and without compile, and the compile cost."""
        self.step_label.setText(f"eager {_ms(eager_s)} · compiled {_ms(compiled_s)}")
        if compile_s is None or math.isnan(compile_s):
            self.compile_label.setText("not measured")
        else:
            self.compile_label.setText(
                f"{compile_s:.1f} s for the first step (not in step time)"
            )

    def measure(
        self,
        key: tuple[Any, ...],
        *,
        compiled: bool,
        step_s: float | None = None,
        compile_s: float | None = None,
    ) -> None:
        """Remember a step time (eager or compiled) or compile cost for ``key``."""
        m = self._measured.setdefault(key, {})
        if step_s is not None and step_s == step_s:  # not NaN
            m["compiled" if compiled else "eager"] = step_s
        if compile_s:
            m["compile"] = compile_s
        self.show_measured(key)

    def show_measured(self, key: tuple[Any, ...]) -> None:
        """Show what was measured for ``key`` (model, device, precision, batch)."""
        m = self._measured.get(key, {})
        self.show_measurements(m.get("eager"), m.get("compiled"), m.get("compile"))

    def show_split(self, phases: tuple[float, ...], whole_run: bool = False) -> None:
        """A step's split (seconds in each phase): the bar and its words.

        ``whole_run``: the run's mean step, shown on the bar but not added to
        the strip of recent intervals.
        """
        self.split_bar.add(phases, keep=not whole_run)
        text = split_text(phases) or "not measured"
        self.split_label.setText(f"whole run: {text}" if whole_run else text)

    def clear_split(self) -> None:
        """A new run starts: the previous run's split is not this one's."""
        self.split_bar.clear()
        self.split_label.setText("not measured yet")

    def show_compiling(self, seconds: float) -> None:
        """While the first step compiles."""
        self.compile_label.setText(f"compiling… {seconds:.0f} s")

    @Slot(bool)
    def _on_compile_check_toggled(self, _checked: bool) -> None:
        self._update_enabled()
        self._emit_changed()
