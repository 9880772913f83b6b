"""Loader: batch size, the loader path, workers, pin_memory, rare-class balance."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QCheckBox, QComboBox, QSpinBox, QWidget

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.folder import MEMORY_BUDGET_ENV, memory_budget
from workbench.core.train.class_weights import FILE_FORMAT, read_weights_file
from workbench.ui import dialogs
from workbench.ui.panels.base import ConfigPanel, select_data
from workbench.ui.widgets.draw_widgets import WrappingLabel

PIN_ON = (
    "Pin host memory so batches are copied to the GPU asynchronously "
    "(only with the DataLoader; the fast path keeps data on the GPU)."
)
PIN_OFF_DEVICE = (
    "pin_memory only speeds up host-to-CUDA copies; the selected device is {kind}, "
    "so it would do nothing."
)
PIN_OFF_FAST = (
    "The fast path keeps the whole dataset on the device: no batch is copied from "
    "pinned host memory. Choose the DataLoader to study pin_memory."
)

CLASS_WEIGHTS_TIP = (
    "How much each class weighs in the training loss. Balanced: n_samples / "
    "(n_classes x count) over the training split, so a rare class counts as much "
    f"as a common one. From file: {FILE_FORMAT}; the run keeps the values."
)
SAMPLER_TIP = (
    "Draw each epoch with replacement, every class equally likely: as many "
    "samples as the training split, seeded, so a resumed run draws the same. "
    "Use it or balanced class weights, not both."
)
WEIGHTS_FILTER = "Class weights (*.json *.csv *.txt);;All files (*)"


def budget_text() -> str:
    """The memory budget of image folders, in a sentence."""
    megabytes = memory_budget() / 1024**2
    return (
        f"Image folders: decoded once into memory up to {megabytes:,.0f} MB (and "
        "cached on disk); a larger folder is read per batch by a DataLoader."
    )


class LoaderPanel(ConfigPanel):
    """How batches reach the model."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Loader", parent)
        self.batch_spin = QSpinBox(objectName="batchSizeSpin")
        self.batch_spin.setRange(1, 65536)
        self.batch_spin.setSingleStep(32)
        self.batch_spin.setToolTip("Images per training step")
        self.batch_spin.valueChanged.connect(self._emit_changed)
        self.form.addRow("Batch size", self.batch_spin)
        self.loader_combo = QComboBox(objectName="loaderCombo")
        self.loader_combo.addItem("fast (whole dataset in one tensor)", "fast")
        self.loader_combo.addItem("torch.utils.data.DataLoader", "dataloader")
        self.loader_combo.setToolTip(
            "The fast path slices batches from a pre-normalised tensor; the "
            "DataLoader is the textbook per-sample pipeline with workers"
        )
        self.loader_combo.currentIndexChanged.connect(self._on_loader_combo_changed)
        # Long entries are elided in a narrow column instead of widening it.
        self.loader_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.loader_combo.setMinimumContentsLength(16)
        self.form.addRow("Loader", self.loader_combo)
        self.workers_spin = QSpinBox(objectName="workersSpin")
        self.workers_spin.setRange(0, 32)
        self.workers_spin.valueChanged.connect(self._emit_changed)
        self.form.addRow("Workers", self.workers_spin)
        self.pin_check = QCheckBox("pin_memory", objectName="pinMemoryCheck")
        self.pin_check.toggled.connect(self._emit_changed)
        self.form.addRow("", self.pin_check)
        self.class_weights_combo = QComboBox(objectName="classWeightsCombo")
        self.class_weights_combo.addItem("None", "none")
        self.class_weights_combo.addItem("Balanced", "balanced")
        self.class_weights_combo.addItem("From file…", "file")
        self.class_weights_combo.setToolTip(CLASS_WEIGHTS_TIP)
        self.class_weights_combo.activated.connect(self._on_class_weights_activated)
        self.form.addRow("Class weights", self.class_weights_combo)
        self._file_weights: tuple[float, ...] | None = None
        self._weights_choice = "none"  # what a cancelled file dialog returns to
        self.sampler_check = QCheckBox(
            "Balanced sampler", objectName="balancedSamplerCheck"
        )
        self.sampler_check.setToolTip(SAMPLER_TIP)
        self.sampler_check.toggled.connect(self._emit_changed)
        self.form.addRow("", self.sampler_check)
        # Which path an image-folder run takes, and why (set when a run starts).
        self.path_label = WrappingLabel("loaderPathLabel")
        self.path_label.setText(budget_text())
        self.path_label.setToolTip(
            f"Set {MEMORY_BUDGET_ENV} (megabytes) to change the memory budget"
        )
        self.form.addRow(self.path_label)
        self._device_kind = "cpu"
        self._update_enabled()

    def _apply(self, cfg: TrainConfig) -> None:
        self.batch_spin.setValue(cfg.batch_size)
        select_data(self.loader_combo, cfg.loader)
        self.workers_spin.setValue(cfg.workers)
        self.pin_check.setChecked(cfg.pin_memory)
        if isinstance(cfg.class_weights, tuple):
            self._show_file_weights(cfg.class_weights)
        self._weights_choice = _combo_value(cfg.class_weights)
        select_data(self.class_weights_combo, self._weights_choice)
        self.sampler_check.setChecked(cfg.balanced_sampler)
        self._update_enabled()

    def config_values(self) -> dict[str, Any]:
        """Batch size, loader, workers, pin_memory (where it acts), class balance."""
        dataloader = self.loader_combo.currentData() == "dataloader"
        return {
            "batch_size": self.batch_spin.value(),
            "loader": str(self.loader_combo.currentData()),
            "workers": self.workers_spin.value() if dataloader else 0,
            "pin_memory": self.pin_check.isChecked() and self.pin_check.isEnabled(),
            "class_weights": self._class_weights(),
            "balanced_sampler": self.sampler_check.isChecked(),
        }

    def _class_weights(self) -> str | tuple[float, ...]:
        choice = str(self.class_weights_combo.currentData())
        if choice == "file" and self._file_weights is not None:
            return self._file_weights
        return "none" if choice == "file" else choice

    def _show_file_weights(self, weights: tuple[float, ...]) -> None:
        """Hold ``weights`` as the "From file" entry, which says how many."""
        self._file_weights = weights
        index = self.class_weights_combo.findData("file")
        self.class_weights_combo.setItemText(index, f"From file ({len(weights)})…")
        shown = ", ".join(f"{w:g}" for w in weights)
        self.class_weights_combo.setItemData(
            index, f"{len(weights)} weights: {shown}", Qt.ItemDataRole.ToolTipRole
        )

    @Slot(int)
    def _on_class_weights_activated(self, index: int) -> None:
        if self.class_weights_combo.itemData(index) == "file":
            path = dialogs.get_open_path(self, "Class weights", WEIGHTS_FILTER)
            try:
                weights = read_weights_file(path) if path is not None else None
            except ConfigError as exc:
                dialogs.show_error(self, "Class weights", str(exc))
                weights = None
            if weights is None:  # cancelled or refused: the choice stays
                select_data(self.class_weights_combo, self._weights_choice)
                return
            self._show_file_weights(weights)
        self._weights_choice = str(self.class_weights_combo.currentData())
        self._emit_changed()

    def show_path(self, path: str) -> None:
        """Say which path the run's batches take and why (empty: the budget)."""
        self.path_label.setText(path or budget_text())

    def set_device_kind(self, kind: str) -> None:
        """pin_memory only does something on CUDA."""
        self._device_kind = kind
        self._update_enabled()

    def _update_enabled(self) -> None:
        dataloader = self.loader_combo.currentData() == "dataloader"
        self.workers_spin.setEnabled(dataloader)
        self.workers_spin.setToolTip(
            "Worker processes (spawned) that load batches in parallel"
            if dataloader
            else "The fast in-memory path has no worker processes; "
            "choose the DataLoader"
        )
        if self._device_kind != "cuda":
            self.pin_check.setEnabled(False)
            self.pin_check.setToolTip(
                PIN_OFF_DEVICE.format(kind=self._device_kind.upper())
            )
        elif not dataloader:
            self.pin_check.setEnabled(False)
            self.pin_check.setToolTip(PIN_OFF_FAST)
        else:
            self.pin_check.setEnabled(True)
            self.pin_check.setToolTip(PIN_ON)

    @Slot(int)
    def _on_loader_combo_changed(self, _index: int) -> None:
        self._update_enabled()
        self._emit_changed()

    def set_run_active(self, active: bool) -> None:
        """Lock while a run owns the loaders."""
        self.setEnabled(not active)


def _combo_value(weights: str | tuple[float, ...]) -> str:
    """The combo entry's data for a config's ``class_weights``."""
    return "file" if isinstance(weights, tuple) else weights
