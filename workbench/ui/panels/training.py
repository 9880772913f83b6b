"""Training: optimizer and schedule, length and seed, and the run's controls."""

from __future__ import annotations

import math
import time
from typing import Any

from PySide6.QtGui import QAction, QValidator
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStyle,
    QWidget,
)

from workbench.core.config import (
    BEST_METRICS,
    DEFAULT_EPOCHS,
    OPTIMIZERS,
    SCHEDULES,
    TrainConfig,
)
from workbench.ui.formatting import duration, rate
from workbench.ui.panels.base import ConfigPanel, select_data

START_TIP = "Start a new run ({keys})"
CONTINUE_TIP = "Continue the current run from step {step} ({keys})"
# A run may log every step: the progress texts are redrawn at most this often
# (each text change re-lays out the window: 1-2 ms of the GUI thread here).
PROGRESS_INTERVAL_S = 0.25
_TRAINING = ("preparing", "running", "pausing", "paused")
_HELD = ("pausing", "paused")
BEST_METRIC_TEXTS = ("Validation accuracy", "Validation loss", "Macro-F1")
MAX_FOLDS = 20  # the spin's top; the command line takes any K
FOLDS_TIP = (
    "Cross-validation: Start trains K runs, each validating on its own fold of\n"
    "the training images (stratified, seeded). Each fold is its own run; the Runs\n"
    "tab groups them with the mean and 95% interval of each score. Off: one run"
)


class LearningRateSpin(QDoubleSpinBox):
    """A spin box that shows 3e-3 as 0.003 and accepts 3e-3 typed in."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDecimals(10)
        self.setRange(1e-7, 10.0)
        self.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)

    def textFromValue(self, value: float) -> str:
        """``%g``: short and exact for learning rates."""
        return f"{value:g}"

    def valueFromText(self, text: str) -> float:
        """Parse plain or scientific notation."""
        try:
            return float(text)
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int) -> object:
        """Accept anything on the way to a float (``3e-``)."""
        try:
            value = float(text)
        except ValueError:
            ok = text == "" or all(c in "0123456789.eE+-" for c in text)
            state = QValidator.State.Intermediate if ok else QValidator.State.Invalid
            return state, text, pos
        if self.minimum() <= value <= self.maximum():
            return QValidator.State.Acceptable, text, pos
        return QValidator.State.Intermediate, text, pos


def _fit_texts(button: QPushButton, texts: tuple[str, ...]) -> None:
    """As wide as the widest of ``texts``, whichever the run state shows.

    Not the style's 80 px minimum either: four buttons then need 340 px.
    """
    widest = max(button.fontMetrics().horizontalAdvance(text) for text in texts)
    margin = 2 * button.style().pixelMetric(
        QStyle.PixelMetric.PM_ButtonMargin, None, button
    )
    button.setMinimumWidth(widest + margin + 8)


# Said beside Start: torch.compile left on from an earlier model costs its
# compile (135 s for a resnet18 on a 2-core CPU) and the feature cache.
COMPILE_NOTE = (
    "torch.compile is on (Speed panel): the first step compiles the model before "
    "it trains (seconds for a small model, minutes for a large one on the CPU), "
    "and the feature cache stays off."
)


class TrainingPanel(ConfigPanel):
    """Optimizer settings plus Start, Pause/Resume, Stop and progress."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Training", parent)
        self.optimizer_combo = QComboBox(objectName="optimizerCombo")
        for name in OPTIMIZERS:
            self.optimizer_combo.addItem(name, name)
        self.optimizer_combo.currentIndexChanged.connect(self._emit_changed)
        self.schedule_combo = QComboBox(objectName="scheduleCombo")
        for name in SCHEDULES:
            self.schedule_combo.addItem(name, name)
        self.schedule_combo.setToolTip(
            "onecycle: warm up to the learning rate, then anneal"
        )
        self.schedule_combo.currentIndexChanged.connect(self._emit_changed)
        row = QHBoxLayout()
        row.addWidget(self.optimizer_combo, 1)
        row.addWidget(self.schedule_combo, 1)
        self.form.addRow("Optimizer", row)

        self.lr_spin = LearningRateSpin()
        self.lr_spin.setObjectName("lrSpin")
        self.lr_spin.setToolTip("Learning rate (the peak, with onecycle)")
        self.lr_spin.valueChanged.connect(self._emit_changed)
        self.seed_spin = QSpinBox(objectName="seedSpin")
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("Seeds the weights, the data order and dropout")
        self.seed_spin.valueChanged.connect(self._emit_changed)
        row = QHBoxLayout()
        row.addWidget(self.lr_spin, 1)
        row.addWidget(QLabel("Seed"))
        row.addWidget(self.seed_spin, 1)
        self.form.addRow("Learning rate", row)

        self.epochs_spin = QSpinBox(objectName="epochsSpin")
        self.epochs_spin.setRange(0, 10_000)
        self.epochs_spin.valueChanged.connect(self._emit_changed)
        # Wide enough for "auto (15)" of any dataset, whatever the column's width.
        widths = []
        for dataset in DEFAULT_EPOCHS:
            self.set_dataset(dataset)
            widths.append(self.epochs_spin.sizeHint().width())
        self.epochs_spin.setMinimumWidth(max(widths))
        self.epochs_spin.setSpecialValueText("")  # apply_config sets the dataset's
        self.max_steps_spin = QSpinBox(objectName="maxStepsSpin")
        self.max_steps_spin.setRange(0, 100_000_000)
        self.max_steps_spin.setSpecialValueText("no limit")
        self.max_steps_spin.setToolTip("Stop at this global step (0: no limit)")
        self.max_steps_spin.valueChanged.connect(self._emit_changed)
        row = QHBoxLayout()
        row.addWidget(self.epochs_spin, 1)
        row.addWidget(QLabel("Max steps"))
        row.addWidget(self.max_steps_spin, 1)
        self.form.addRow("Epochs", row)
        self._build_early_stop()

        self.start_button = QPushButton("Start", objectName="startButton")
        self.pause_button = QPushButton("Pause", objectName="pauseButton")
        self.stop_button = QPushButton("Stop", objectName="stopButton")
        self.reset_button = QPushButton("New run", objectName="resetButton")
        self.reset_button.setToolTip(
            "Forget the current run (its weights and plots) so Start begins a new one"
        )
        row = QHBoxLayout()
        for button, texts in (
            (self.start_button, ("Start", "Continue")),
            (self.pause_button, ("Pause", "Resume")),
            (self.stop_button, ("Stop",)),
            (self.reset_button, ("New run",)),
        ):
            _fit_texts(button, texts)
            row.addWidget(button)
        self.form.addRow(row)
        # What Start will cost beyond training (torch.compile), said before it.
        self.start_note = QLabel(objectName="startNote")
        self.start_note.setWordWrap(True)
        self.start_note.setVisible(False)
        self.form.addRow(self.start_note)
        self.progress_bar = QProgressBar(objectName="progressBar")
        self.progress_bar.setFormat("idle")
        self.progress_bar.setValue(0)
        self.form.addRow(self.progress_bar)
        self.speed_label = QLabel("\u2013", objectName="speedLabel")
        self.speed_label.setToolTip(
            "Training images per second over the last logged steps"
        )
        self.form.addRow("Images/s", self.speed_label)
        self.notes_label = QLabel(objectName="notesLabel")
        self.notes_label.setWordWrap(True)
        self.notes_label.setStyleSheet("color: #8a5a00;")
        self.notes_label.setVisible(False)
        self.form.addRow(self.notes_label)
        self.start_keys = ""  # shortcut text for the Start tooltip
        self._actions: dict[QPushButton, QAction] = {}
        self._state = "idle"
        # ETA: (monotonic time, step) the steady rate is measured from.
        self._clock: tuple[float, int] | None = None
        self._paused_since: float | None = None
        self._shown_at = -math.inf

    def _build_early_stop(self) -> None:
        """Patience, the least improvement that counts, and what "best" means."""
        self.patience_spin = QSpinBox(objectName="earlyStopSpin")
        self.patience_spin.setRange(0, 10_000)
        self.patience_spin.setSpecialValueText("off")
        self.patience_spin.setToolTip(
            "Patience: stop once this many epochs in a row have not beaten the "
            "best one (off: train every epoch)"
        )
        self.patience_spin.valueChanged.connect(self._emit_changed)
        self.delta_spin = QDoubleSpinBox(objectName="earlyStopDeltaSpin")
        self.delta_spin.setDecimals(4)
        self.delta_spin.setRange(0.0, 1.0)
        self.delta_spin.setSingleStep(0.001)
        self.delta_spin.setToolTip(
            "An epoch beats the best only by more than this (accuracy and "
            "macro-F1 as fractions: 0.002 is 0.2 points)"
        )
        self.delta_spin.valueChanged.connect(self._emit_changed)
        row = QHBoxLayout()
        row.addWidget(self.patience_spin, 1)
        row.addWidget(QLabel("Min gain"))
        row.addWidget(self.delta_spin, 1)
        self.form.addRow("Early stop", row)
        self.best_combo = QComboBox(objectName="bestMetricCombo")
        for name, text in zip(BEST_METRICS, BEST_METRIC_TEXTS, strict=True):
            self.best_combo.addItem(text, name)
        self.best_combo.setToolTip(
            "What the best epoch is judged by: its weights are kept as best.pt "
            "in the run folder, and early stopping waits for it to improve"
        )
        self.best_combo.currentIndexChanged.connect(self._emit_changed)
        # 1 is off: a run of its own; K >= 2 folds are K runs.
        self.folds_spin = QSpinBox(objectName="foldsSpin")
        self.folds_spin.setRange(1, MAX_FOLDS)
        self.folds_spin.setSpecialValueText("Off")
        self.folds_spin.setToolTip(FOLDS_TIP)
        self.folds_spin.valueChanged.connect(self._emit_changed)
        row = QHBoxLayout()
        row.addWidget(self.best_combo, 1)
        folds_label = QLabel("Folds")
        folds_label.setToolTip(FOLDS_TIP)
        row.addWidget(folds_label)
        row.addWidget(self.folds_spin)
        self.form.addRow("Best epoch by", row)

    def _apply(self, cfg: TrainConfig) -> None:
        select_data(self.optimizer_combo, cfg.optimizer)
        select_data(self.schedule_combo, cfg.schedule)
        self.lr_spin.setValue(cfg.lr)
        self.seed_spin.setValue(cfg.seed)
        self.epochs_spin.setValue(cfg.epochs or 0)
        self.max_steps_spin.setValue(cfg.max_steps or 0)
        self.patience_spin.setValue(cfg.early_stop or 0)
        self.delta_spin.setValue(cfg.early_stop_delta)
        select_data(self.best_combo, cfg.best_metric)
        self.folds_spin.setValue(cfg.folds)  # a fold run's config shows its K
        self.set_dataset(cfg.dataset)

    def config_values(self) -> dict[str, Any]:
        """Optimizer, schedule, lr, seed, epochs (None: dataset default), max
        steps, early stopping, what the best epoch is judged by and the folds
        (1: off; which fold a run is stays the config's)."""
        return {
            "optimizer": str(self.optimizer_combo.currentData()),
            "schedule": str(self.schedule_combo.currentData()),
            "lr": self.lr_spin.value(),
            "seed": self.seed_spin.value(),
            "epochs": self.epochs_spin.value() or None,
            "max_steps": self.max_steps_spin.value() or None,
            "early_stop": self.patience_spin.value() or None,
            "early_stop_delta": self.delta_spin.value(),
            "best_metric": str(self.best_combo.currentData()),
            "folds": self.folds_spin.value(),
        }

    def set_dataset(self, dataset: str) -> None:
        """The "auto" epoch count depends on the dataset."""
        self.epochs_spin.setSpecialValueText(f"auto ({DEFAULT_EPOCHS[dataset]})")
        self.epochs_spin.setToolTip(
            f"Epochs to train; auto is the recipe's {DEFAULT_EPOCHS[dataset]} "
            "for this dataset"
        )

    def set_settings_enabled(self, enabled: bool) -> None:
        """Lock the optimizer settings while a run trains."""
        for widget in (
            self.optimizer_combo,
            self.schedule_combo,
            self.lr_spin,
            self.seed_spin,
            self.epochs_spin,
            self.max_steps_spin,
            self.patience_spin,
            self.delta_spin,
            self.best_combo,
            self.folds_spin,
        ):
            widget.setEnabled(enabled)

    def show_compile_note(self, compiling: bool) -> None:
        """Say beside Start what torch.compile costs when it is on."""
        self.start_note.setText(COMPILE_NOTE if compiling else "")
        self.start_note.setVisible(compiling)

    def show_notes(self, notes: list[str]) -> None:
        """Messages the run wants read once."""
        self.notes_label.setText("\n".join(f"• {n}" for n in notes))
        self.notes_label.setVisible(bool(notes))

    # ---------------------------------------------------------------- run state

    def bind_actions(
        self,
        start: QAction,
        pause: QAction,
        stop: QAction,
        reset: QAction,
        *,
        pause_keys: str = "",
        stop_keys: str = "",
    ) -> None:
        """Each button triggers its menu action; the run state sets both alike."""
        self._actions = {
            self.start_button: start,
            self.pause_button: pause,
            self.stop_button: stop,
            self.reset_button: reset,
        }
        for button, action in self._actions.items():
            button.clicked.connect(action.trigger)
        self.pause_button.setToolTip(f"Pause or resume after this batch ({pause_keys})")
        self.stop_button.setToolTip(
            f"Stop after this batch; the run can be continued ({stop_keys})"
        )

    def seed(self) -> int:
        """The seed shown (fresh models in the freeze tree use it)."""
        return self.seed_spin.value()

    def set_run_state(
        self,
        state: str,
        *,
        continue_from: int | None = None,
        has_run: bool = False,
        stop_requested: bool = False,
        new_because: str = "",
        pausable: bool = True,
    ) -> None:
        """Buttons (and their actions), texts and the settings' lock for the state.

        ``continue_from``: the step Start continues from (None: Start begins a
        new run); ``has_run``: New run has a run to forget; ``new_because``:
        why Start begins a new run although one exists (an edited setting);
        ``pausable``: False for a run on several processes (it cannot pause).
        """
        previous, self._state = self._state, state
        idle = state == "idle"
        training = state in _TRAINING
        held = state in _HELD
        enabled = {
            self.start_button: idle,
            self.pause_button: training and state != "preparing" and pausable,
            self.stop_button: training and not stop_requested,
            self.reset_button: idle and has_run,
        }
        for button, on in enabled.items():
            button.setEnabled(on)
            if button in self._actions:
                self._actions[button].setEnabled(on)
        self.pause_button.setText("Resume" if held else "Pause")
        self.set_settings_enabled(idle)
        fresh = continue_from is None
        self.start_button.setText("Start" if fresh else "Continue")
        tip = (
            START_TIP.format(keys=self.start_keys)
            if fresh
            else CONTINUE_TIP.format(step=continue_from, keys=self.start_keys)
        )
        if fresh and new_because:
            tip += f": {new_because}. New run forgets the current one."
        self.start_button.setToolTip(tip)
        if self._actions:
            self._actions[self.start_button].setText("&Start" if fresh else "&Continue")
            self._actions[self.pause_button].setText("&Resume" if held else "&Pause")
        # The ETA counts training time only: a pause shifts its clock.
        now = time.monotonic()
        if held and previous not in _HELD:
            self._paused_since = now
        elif not held and self._paused_since is not None:
            if self._clock is not None:
                self._clock = (
                    self._clock[0] + now - self._paused_since,
                    self._clock[1],
                )
            self._paused_since = None

    def start_progress(self, start_step: int, total: int) -> None:
        """A run began at ``start_step`` of ``total``: the ETA clock starts now."""
        self._clock = (time.monotonic(), start_step)
        self._shown_at = -math.inf
        self.show_position(start_step, total)

    def restart_eta(self) -> None:
        """Measure the ETA from now (the slow compiling steps are over)."""
        if self._clock is not None:
            self._clock = (time.monotonic(), self.progress_bar.value())

    def show_step(self, step: int, total: int, images_per_s: float) -> None:
        """A logged step: progress, ETA and speed, redrawn at most every 0.25 s."""
        now = time.monotonic()
        if now - self._shown_at < PROGRESS_INTERVAL_S and step < total:
            return
        self._shown_at = now
        bar = self.progress_bar
        set_value_later(bar, min(step, bar.maximum()))
        eta = math.nan
        if self._clock is not None:
            t0, step0 = self._clock
            if step > step0:
                eta = (total - step) * (now - t0) / (step - step0)
        bar.setFormat(f"step {step:,} / {total:,} · ETA {duration(eta)}")
        self.speed_label.setText(rate(images_per_s))

    def show_ended(self, step: int, how: str) -> None:
        """The run ended at ``step`` (``how``: finished or stopped)."""
        self.show_position(step, self.progress_bar.maximum(), how)

    def show_position(self, step: int, total: int, note: str = "") -> None:
        """Where a run stands (opened, finished, stopped): ``note`` follows."""
        bar = self.progress_bar
        bar.setRange(0, max(total, 1))
        bar.setValue(min(step, total))
        suffix = f" · {note}" if note else ""
        bar.setFormat(f"step {step:,} / {total:,}{suffix}")

    def clear_progress(self, text: str = "idle") -> None:
        """No run yet (or one preparing): an empty bar, no speed."""
        self._clock = None
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat(text)
        self.speed_label.setText("\u2013")


def set_value_later(bar: QProgressBar, value: int) -> None:
    """``bar.setValue(value)``, painted with the next repaint, not now.

    ``QProgressBar.setValue`` repaints synchronously (``repaint()``, not
    ``update()``) whenever the chunk or text changes: several milliseconds of the
    GUI thread per logged step on a busy machine. With updates disabled that
    repaint is skipped; enabling them again schedules an ordinary update.
    """
    bar.setUpdatesEnabled(False)
    try:
        bar.setValue(value)
    finally:
        bar.setUpdatesEnabled(True)
