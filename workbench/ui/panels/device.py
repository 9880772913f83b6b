"""Device: CPU, each CUDA GPU, MPS (the unavailable ones say why), and processes."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox, QWidget

from workbench.core.config import TrainConfig
from workbench.core.train.devices import DeviceInfo, best_device, list_devices
from workbench.ui.panels.base import ConfigPanel, select_data, set_item_enabled

_KIND_TITLES = {"cpu": "CPU", "cuda": "CUDA", "mps": "MPS"}
PROCESSES_TIP = (
    "Train one run on this many processes of this machine (DistributedDataParallel "
    "through torchrun, like train --nproc). The batch size stays the global batch, "
    "split between them; on the CPU each process gets cores/N threads, on CUDA "
    "each its own GPU. With more than one, the run trains outside the window, "
    "which follows it from its run folder: Pause, freeze edits during the run and "
    "live Draw-tab reading need 1 process, and a run always starts anew."
)


class DevicePanel(ConfigPanel):
    """One entry per device; unavailable ones disabled, the reason as tooltip."""

    def __init__(
        self, parent: QWidget | None = None, devices: list[DeviceInfo] | None = None
    ) -> None:
        super().__init__("Device", parent)
        self.devices = devices if devices is not None else list_devices()
        self.device_combo = QComboBox(objectName="deviceCombo")
        # Long entries are elided in a narrow column instead of widening it.
        self.device_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.device_combo.setMinimumContentsLength(16)
        self.form.addRow("Train on", self.device_combo)
        self.reason_label = QLabel(objectName="deviceReasonLabel")
        self.reason_label.setWordWrap(True)
        self.reason_label.setStyleSheet("color: #666;")
        self.form.addRow(self.reason_label)
        self.processes_spin = QSpinBox(objectName="processesSpin")
        self.processes_spin.setToolTip(PROCESSES_TIP)
        self.form.addRow("Processes", self.processes_spin)
        self._fill()
        self._limit_processes()
        self.device_combo.currentIndexChanged.connect(self._on_device_combo_changed)
        self.processes_spin.valueChanged.connect(self._emit_changed)

    def _fill(self) -> None:
        combo = self.device_combo
        best = best_device_of(self.devices)
        combo.addItem(f"auto ({best})", "auto")
        set_item_enabled(
            combo, 0, True, f"The first available GPU, else the CPU: {best}"
        )
        missing = []
        for info in self.devices:
            combo.addItem(
                f"{_KIND_TITLES.get(info.kind, info.kind)} — {info.name}", info.spec
            )
            index = combo.count() - 1
            tooltip = info.name if info.available else f"Unavailable: {info.reason}"
            set_item_enabled(combo, index, info.available, tooltip)
            if not info.available:
                missing.append(
                    f"{_KIND_TITLES.get(info.kind, info.kind)}: {info.reason}"
                )
        self.reason_label.setText("\n".join(missing))
        self.reason_label.setVisible(bool(missing))

    def _apply(self, cfg: TrainConfig) -> None:
        spec = cfg.device
        if self.device_combo.findData(spec) < 0 and spec.startswith("cuda"):
            spec = "cuda:0" if spec == "cuda" else spec
        index = self.device_combo.findData(spec)
        if index < 0 or not self.device_combo.model().item(index).isEnabled():
            spec = "auto"
        select_data(self.device_combo, spec)
        self._limit_processes()

    def config_values(self) -> dict[str, Any]:
        """``device``."""
        return {"device": str(self.device_combo.currentData())}

    def kind(self) -> str:
        """``cpu``, ``cuda`` or ``mps``: what the selection trains on."""
        spec = str(self.device_combo.currentData())
        if spec == "auto":
            spec = best_device_of(self.devices)
        return spec.split(":")[0]

    def processes(self) -> int:
        """How many processes Start trains on (1: in the window itself)."""
        return self.processes_spin.value()

    def set_processes(self, count: int) -> None:
        """Show ``count`` processes (kept within what the device allows)."""
        self.processes_spin.setValue(count)

    def max_processes(self) -> int:
        """One process per core on the CPU, per GPU on CUDA; MPS trains alone."""
        kind = self.kind()
        if kind == "cuda":
            gpus = [d for d in self.devices if d.kind == "cuda" and d.available]
            return max(1, len(gpus))
        return max(1, os.cpu_count() or 1) if kind == "cpu" else 1

    def _limit_processes(self) -> None:
        self.processes_spin.setRange(1, self.max_processes())

    @Slot(int)
    def _on_device_combo_changed(self, _index: int) -> None:
        self._limit_processes()
        self._emit_changed()


def best_device_of(devices: list[DeviceInfo]) -> str:
    """What ``auto`` picks among ``devices`` (as ``devices.best_device``)."""
    for info in devices:
        if info.available and info.kind != "cpu":
            return info.spec
    return "cpu" if devices else best_device()
