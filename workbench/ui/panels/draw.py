"""Draw a digit, see exactly what the model sees, and teach it your handwriting.

The panel reads drawings with a core :class:`~workbench.core.predict.Predictor`:
a private eval-mode copy of the model that the window feeds with weights
(copied between training steps while a run trains). Reading happens in the GUI
thread: one 28x28 image takes about a millisecond, less than a repaint.

A validation image opened from the Evaluation tab is read as it was scored (the
stored 28x28 image, normalised like the run's loaders, no recipe) until the
user draws on it; from then on the canvas recipe applies, as to any drawing.
The tab's keys (Esc, Undo, 0-9, Enter) work wherever the focus is in the window
while the tab is shown, except in a field the user types in.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import torch
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from workbench.core.data import DATASET_INFO, DataError
from workbench.core.finetune import EPOCHS, REPLAY, FrozenCheck, Scores
from workbench.core.predict import PredictError, Predictor, Reading, ScoredImage
from workbench.core.preprocess import style_of
from workbench.core.threads import release_openmp_pool
from workbench.ui import dialogs
from workbench.ui.draw_widgets import (
    DigitCanvas,
    InputPreview,
    ProbabilityBars,
    WrappingLabel,
)
from workbench.ui.formatting import percent
from workbench.ui.panels.my_digits_box import MyDigitsBox

log = logging.getLogger(__name__)

# Reading while the pen moves: at most once per this many ms (a read is ~1 ms,
# but a repaint of the bars and preview is not free).
READ_DEBOUNCE_MS = 40
NO_READING = "\u2013"  # en dash: nothing drawn yet
DIGIT_KEYS = tuple(Qt.Key(Qt.Key.Key_0 + d) for d in range(10))
ENTER_KEYS = (
    QKeySequence(Qt.Key.Key_Return),
    QKeySequence(Qt.Key.Key_Enter),
    QKeySequence(Qt.KeyboardModifier.KeypadModifier | Qt.Key.Key_Enter),
)


def _typing_in(widget: QWidget | None) -> bool:
    """True for a widget that takes typed text (digits and Enter are its own)."""
    if isinstance(widget, QComboBox):
        return widget.isEditable()
    return isinstance(widget, QLineEdit | QAbstractSpinBox | QTextEdit | QPlainTextEdit)


class DrawPanel(QWidget):
    """Canvas, live probabilities, the model's-eye preview, and my digits.

    Signals
    -------
    fine_tune_requested(epochs, replay)
        The user pressed "Fine-tune on my digits"; the window runs it.
    samples_changed()
        A drawing was added, relabelled or deleted.
    read_finished(object)
        A :class:`Reading` was shown (bars, label and preview updated).
    """

    fine_tune_requested = Signal(int, int)
    samples_changed = Signal()
    read_finished = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("drawPanel")
        self._predictor: Predictor | None = None
        self._reader_key: tuple[str, str, tuple[str, ...]] | None = None
        self._reading: Reading | None = None
        self._opened: ScoredImage | None = None  # a validation image, as scored
        self._training_active = False
        self.read_seconds: list[float] = []  # GUI-thread cost of each read
        self.fine_tune_report: tuple[Scores, Scores, FrozenCheck] | None = None

        self.canvas = DigitCanvas()
        self.canvas.setToolTip(
            "Draw a digit with the mouse or a tablet. Esc clears, Ctrl+Z undoes "
            "the last stroke."
        )
        self.canvas.changed.connect(self._on_canvas_changed)
        self.canvas.stroke_finished.connect(self._on_canvas_stroke_finished)
        self._debounce = QTimer(self, singleShot=True, interval=READ_DEBOUNCE_MS)
        self._debounce.timeout.connect(self.read_now)

        self.clear_button = QPushButton("Clear", objectName="clearCanvasButton")
        self.clear_button.setToolTip("Clear the canvas (Esc)")
        self.clear_button.clicked.connect(self.canvas.clear)
        self.undo_button = QPushButton("Undo stroke", objectName="undoStrokeButton")
        self.undo_button.setToolTip("Remove the last stroke (Ctrl+Z)")
        self.undo_button.clicked.connect(self.canvas.undo)

        self.prediction_label = QLabel(NO_READING, objectName="predictionLabel")
        self.prediction_label.setStyleSheet("font-size: 40px; font-weight: 600;")
        self.prediction_label.setToolTip(
            "The class the model reads, and how sure it is"
        )
        self.source_label = WrappingLabel("readerSourceLabel")
        self.source_label.setStyleSheet("color: #555;")
        self.opened_label = WrappingLabel("openedImageLabel")
        self.opened_label.setVisible(False)
        self.bars = ProbabilityBars()
        self.bars.setMinimumHeight(160)

        self.preview = InputPreview()
        self.preview.setToolTip(
            "The exact 28x28 tensor the model receives (before normalisation)"
        )
        self.preview_caption = WrappingLabel("previewCaption")
        self.preview_caption.setStyleSheet("color: #555;")
        self.naive_check = QCheckBox("Naive resize", objectName="naiveResizeCheck")
        self.naive_check.setToolTip(
            "Squash the whole canvas to 28x28 instead of preparing the drawing the "
            "way the training data was made: see why preprocessing matters"
        )
        self.naive_check.toggled.connect(self._on_option_toggled)
        self.saliency_check = QCheckBox(
            "Saliency overlay", objectName="saliencyCheck", checked=True
        )
        self.saliency_check.setToolTip(
            "Colour each input pixel by |d logit / d pixel| of the predicted class "
            "(autograd): where a change would move the answer most"
        )
        self.saliency_check.toggled.connect(self._on_option_toggled)

        self._build_teach_group()
        self._build_layout()
        self._build_shortcuts()
        self._show_empty()

    # ================================================================== building

    def _build_teach_group(self) -> None:
        self.mine = MyDigitsBox()
        self.mine.add_requested.connect(self.add_sample)
        self.mine.drawing_opened.connect(self.open_in_canvas)
        self.mine.samples_changed.connect(self.samples_changed)
        # Its parts, under the names callers (and tests) know them by.
        self.store = self.mine.store
        self.label_combo = self.mine.label_combo
        self.add_button = self.mine.add_button
        self.sample_list = self.mine.sample_list
        self.delete_button = self.mine.delete_button
        self.relabel_button = self.mine.relabel_button
        self.counts_label = self.mine.counts_label

        self.epochs_spin = QSpinBox(objectName="fineTuneEpochsSpin")
        self.epochs_spin.setRange(1, 500)
        self.epochs_spin.setValue(EPOCHS)
        self.replay_spin = QSpinBox(objectName="fineTuneReplaySpin")
        self.replay_spin.setRange(0, 60_000)
        self.replay_spin.setSingleStep(128)
        self.replay_spin.setValue(REPLAY)
        self.replay_spin.setToolTip(
            "Training images of the model's own dataset mixed in, so it keeps "
            "what it knew (0: my digits only, and watch it forget)"
        )
        self.fine_tune_button = QPushButton(
            "Fine-tune on my digits", objectName="fineTuneButton"
        )
        self.fine_tune_button.setToolTip(
            "Train the current model on my digits plus a replay of its dataset, "
            "under the freeze mask (all but the head, if nothing is frozen)"
        )
        self.fine_tune_button.clicked.connect(self._on_fine_tune_clicked)
        self.card = WrappingLabel("fineTuneCard")
        self.card.setTextFormat(Qt.TextFormat.RichText)
        self.card.setVisible(False)

    def _build_layout(self) -> None:
        left = QVBoxLayout()
        left.addWidget(self.canvas, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.clear_button)
        buttons.addWidget(self.undo_button)
        buttons.addStretch(1)
        left.addLayout(buttons)

        right = QVBoxLayout()
        right.addWidget(self.prediction_label)
        right.addWidget(self.source_label)
        right.addWidget(self.opened_label)
        right.addWidget(self.bars, 1)
        preview_row = QHBoxLayout()
        preview_row.addWidget(self.preview)
        options = QVBoxLayout()
        options.addWidget(self.naive_check)
        options.addWidget(self.saliency_check)
        options.addStretch(1)
        preview_row.addLayout(options, 1)
        right.addLayout(preview_row)
        right.addWidget(self.preview_caption)

        top = QHBoxLayout()
        top.addLayout(left, 3)
        top.addLayout(right, 2)

        tune = QGroupBox("Teach it my handwriting")
        form = QFormLayout(tune)
        form.addRow("Epochs", self.epochs_spin)
        form.addRow("Replay images", self.replay_spin)
        form.addRow(self.fine_tune_button)
        form.addRow(self.card)
        bottom = QHBoxLayout()
        bottom.addWidget(self.mine, 3)
        bottom.addWidget(tune, 2)

        layout = QVBoxLayout(self)
        layout.addLayout(top, 5)
        layout.addLayout(bottom, 2)

    def _build_shortcuts(self) -> None:
        """The tab's keys, wherever the focus is in the window while it is shown.

        Window shortcuts of a hidden widget never fire, so they are dead while
        another tab is shown. The plain keys (digits, Enter, Esc) are switched
        off while the focus is in a field the user types in.
        """
        self._plain_keys: list[QShortcut] = []
        for digit, key in enumerate(DIGIT_KEYS):
            keys = [
                QKeySequence(key),
                QKeySequence(Qt.KeyboardModifier.KeypadModifier | key),
            ]
            self._plain_keys.append(
                self._window_shortcut(keys, lambda d=digit: self.set_label(d))
            )
        self._plain_keys.append(self._window_shortcut(ENTER_KEYS, self.add_sample))
        self._plain_keys.append(
            self._window_shortcut([QKeySequence(Qt.Key.Key_Escape)], self.canvas.clear)
        )
        # A text field claims Undo for itself (ShortcutOverride): no switch needed.
        self._window_shortcut(
            [QKeySequence(QKeySequence.StandardKey.Undo)], self.canvas.undo
        )
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_app_focus_changed)

    def _window_shortcut(self, keys: Any, slot: Any) -> QShortcut:
        shortcut = QShortcut(self)
        shortcut.setKeys(list(keys))
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.activated.connect(slot)
        return shortcut

    @Slot(QWidget, QWidget)
    def _on_app_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        typing = _typing_in(new)
        for shortcut in self._plain_keys:
            shortcut.setEnabled(not typing)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Digits and Enter that reach the panel (its window is not active)."""
        key = event.key()
        plain = not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        typing = _typing_in(QApplication.focusWidget())
        if plain and key in DIGIT_KEYS:
            self.set_label(key - Qt.Key.Key_0)
        elif plain and not typing and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.add_sample()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def set_label(self, digit: int) -> None:
        """Choose the label the next "Add to my digits" saves (0-9)."""
        self.mine.set_label(digit)

    def focus_canvas(self) -> None:
        """Give the canvas the keyboard focus (the tab was just shown)."""
        self.canvas.setFocus(Qt.FocusReason.OtherFocusReason)

    # ================================================================== reading

    @property
    def predictor(self) -> Predictor | None:
        """The private model that reads drawings (None before the first reader)."""
        return self._predictor

    @property
    def reading(self) -> Reading | None:
        """The reading on show (None while the canvas is empty)."""
        return self._reading

    @property
    def preview_tensor(self) -> torch.Tensor | None:
        """The (1, 1, 28, 28) tensor the preview shows: the model's exact input."""
        return None if self._reading is None else self._reading.input

    def set_reader(
        self, model: str, dataset: str, class_names: tuple[str, ...]
    ) -> bool:
        """Read with ``model`` on inputs prepared like ``dataset``.

        A new private model is built only when something changed; it has
        freshly initialised weights until :meth:`set_weights`. Returns True if
        the reader was rebuilt.
        """
        key = (model, dataset, tuple(class_names))
        if key == self._reader_key:
            return False
        self._predictor = Predictor(model, dataset, class_names)
        self._reader_key = key
        self.bars.set_class_names(class_names)
        self._update_caption()
        self.mine.set_style(self._style())  # thumbnails in the reader's recipe
        return True

    def _update_caption(self) -> None:
        if self._reader_key is None:
            return
        dataset = self._reader_key[1]
        info = DATASET_INFO[dataset]
        if self.showing_opened() is not None:
            recipe = "the validation image as stored, no recipe"
        elif style_of(dataset) == "digits":
            recipe = "8x8 UCI-digits recipe"
        else:
            recipe = "MNIST recipe (20x20 box, centred by mass)"
        self.preview_caption.setText(
            f"What the model sees: 28x28, {recipe}, then normalised with mean "
            f"{info.mean[0]:.4f} and std {info.std[0]:.4f}."
        )

    def set_weights(self, state: dict[str, torch.Tensor], source: str) -> None:
        """Load ``state`` into the reader and read the drawing again."""
        if self._predictor is None:
            return
        try:
            self._predictor.load_weights(state)
        finally:
            if self._training_active:
                # Large copies run on this thread's OpenMP pool: give it back.
                release_openmp_pool()
        self.source_label.setText(source)
        self.read_now()

    def set_training_active(self, active: bool) -> None:
        """Whether a run trains in another thread (reads then give back CPU)."""
        self._training_active = active

    def showing_opened(self) -> ScoredImage | None:
        """The validation image on the canvas, untouched (read as scored), or None."""
        if self._opened is not None and self.canvas.holds_only_picture():
            return self._opened
        return None

    @Slot()
    def _on_canvas_changed(self) -> None:
        self.mine.set_can_add(not self.canvas.is_empty())
        if self.canvas.is_empty():
            self._opened = None
            self._debounce.stop()
            self._show_empty()
        elif not self.canvas.is_drawing():
            # Undo, or a picture put on the canvas: nothing more is coming.
            self._debounce.stop()
            self.read_now()
        elif not self._debounce.isActive():
            self._debounce.start()

    @Slot()
    def _on_canvas_stroke_finished(self) -> None:
        # Pen up: the user waits for the answer now, so no debounce.
        self._debounce.stop()
        self.read_now()

    @Slot()
    def _on_option_toggled(self) -> None:
        self.preview.set_show_saliency(self.saliency_check.isChecked())
        self.read_now()

    @Slot()
    def read_now(self) -> None:
        """Read the canvas and show the result (bars, label, preview)."""
        if self._predictor is None or self.canvas.is_empty():
            self._show_empty()
            return
        started = time.perf_counter()
        opened = self.showing_opened()
        try:
            if opened is not None:
                # The very tensor the evaluation scored: no recipe, no resize.
                reading = self._predictor.read_stored(
                    opened.image, saliency=self.saliency_check.isChecked()
                )
            else:
                reading = self._predictor.read(
                    self.canvas.image(),
                    naive=self.naive_check.isChecked(),
                    saliency=self.saliency_check.isChecked(),
                )
        except PredictError:
            self._show_empty()
            return
        finally:
            if self._training_active:
                # This thread's OpenMP pool would slow the trainer's (threads.py).
                release_openmp_pool()
        self._show(reading)
        self.read_seconds.append(time.perf_counter() - started)
        self.read_finished.emit(reading)

    def _show(self, reading: Reading) -> None:
        self._reading = reading
        self.bars.set_probabilities(reading.probabilities)
        name = reading.class_names[reading.label]
        self.prediction_label.setText(f"{name}   {100 * reading.confidence:.0f}%")
        # The preview shows the very tensor the model got, de-normalised for display.
        info = DATASET_INFO[self._reader_key[1]] if self._reader_key else None
        shown = reading.input[0, 0].numpy()
        if info is not None:
            shown = shown * info.std[0] + info.mean[0]
        self.preview.set_image(np.clip(shown, 0.0, 1.0), reading.saliency)
        self._show_opened(reading)

    def _show_opened(self, reading: Reading | None) -> None:
        """Say what an opened validation image is, and how it was scored."""
        opened = self.showing_opened() if reading is not None else None
        self.naive_check.setEnabled(opened is None)
        self._update_caption()
        self.opened_label.setVisible(opened is not None)
        if opened is None or reading is None:
            return
        names = reading.class_names
        scored = f"{names[opened.predicted]}, {opened.confidence:.0%}"
        text = (
            f"Validation image {opened.index} (true class {names[opened.label]}) "
            f"as the model was given it: the Evaluation tab scored it {scored} "
            f"after epoch {opened.epoch + 1}. Draw on it to read it as a drawing."
        )
        same = reading.label == opened.predicted and (
            abs(reading.confidence - opened.confidence) < 5e-4
        )
        if not same:
            text += (
                " These weights read it differently: they are not the ones that "
                "scored it."
            )
        self.opened_label.setText(text)

    def _show_empty(self) -> None:
        self._reading = None
        self.bars.clear_probabilities()
        self.prediction_label.setText(NO_READING)
        self.preview.clear()
        self._show_opened(None)
        self.mine.set_can_add(not self.canvas.is_empty())

    # ================================================================== my digits

    def _style(self) -> str:
        return style_of(self._reader_key[1]) if self._reader_key else "mnist"

    @Slot()
    def add_sample(self) -> None:
        """Save the drawing under the chosen label, then clear the canvas."""
        if self.canvas.is_empty():
            return
        label = self.mine.label()
        opened = self.showing_opened()
        try:
            if opened is not None:
                # The image itself, not the canvas's enlargement of it: the
                # stored field is exactly what the model was shown.
                self.store.add(
                    opened.image, label, style=self._style(), field=opened.image
                )
            else:
                self.store.add(self.canvas.stroke_image(), label, style=self._style())
        except DataError as exc:
            dialogs.show_error(self, "Could not save the drawing", str(exc))
            return
        self.canvas.clear()
        self.refresh_samples()
        self.samples_changed.emit()

    def refresh_samples(self) -> None:
        """Reload the list of my digits from disk."""
        self.mine.refresh_samples()

    def drawing_count(self) -> int:
        """How many drawings "my digits" holds (raises DataError if unreadable)."""
        return self.mine.drawing_count()

    def open_in_canvas(self, image: np.ndarray) -> None:
        """Put ``image`` (white ink on black) on the canvas and read it."""
        self._opened = None
        self.canvas.set_image(image)  # emits changed: read at once

    def open_scored(self, scored: ScoredImage) -> None:
        """Show a validation image exactly as it was scored, its label preset.

        Until the user draws on it, the reading is the model's on the stored
        image (the evaluation's input, bit for bit); "Add to my digits" saves
        that image under its true class.
        """
        self._opened = scored
        if 0 <= scored.label < self.label_combo.count():
            self.set_label(scored.label)
        self.canvas.set_image(scored.image)  # emits changed: read at once
        self.focus_canvas()

    # ================================================================== fine-tune

    @Slot()
    def _on_fine_tune_clicked(self) -> None:
        self.fine_tune_requested.emit(
            self.epochs_spin.value(), self.replay_spin.value()
        )

    def set_fine_tune_enabled(self, enabled: bool) -> None:
        """Allow Fine-tune (only while no run trains)."""
        self.fine_tune_button.setEnabled(enabled)

    def show_fine_tune_started(self, before: Scores, base_title: str) -> None:
        """Show the starting scores while the fine-tune trains."""
        self.card.setVisible(True)
        self.card.setText(
            f"<b>Before</b>: my digits {percent(before.mine)} "
            f"({before.mine_count}), {base_title} test {percent(before.base)} "
            f"({before.base_count:,}). Training…"
        )

    def clear_fine_tune_report(self) -> None:
        """Hide the card: the model it described is gone."""
        self.fine_tune_report = None
        self.card.clear()
        self.card.setVisible(False)

    def show_fine_tune_failed(self) -> None:
        """The fine-tune ended without a result (an error, or stopped at once)."""
        self.card.setVisible(True)
        self.card.setText(
            "<b>Fine-tune did not finish</b>: it failed or was stopped before "
            "training, so there is nothing to compare."
        )

    def show_fine_tune_report(
        self,
        before: Scores,
        after: Scores,
        frozen: FrozenCheck,
        base_title: str,
        stopped: bool = False,
    ) -> None:
        """The before/after card: what was learnt and what was forgotten."""
        self.fine_tune_report = (before, after, frozen)
        mark = "\u2714" if frozen.unchanged else "\u2718"  # check mark / cross
        colour = "#1a7f37" if frozen.unchanged else "#b42318"
        rows = [
            ("My digits, trained on", before.mine, after.mine, after.mine_count),
            (f"{base_title} test", before.base, after.base, after.base_count),
        ]
        lines = "".join(
            f"{name} ({count:,}): {percent(b)} \u2192 <b>{percent(a)}</b> "
            f"({100 * (a - b):+.1f} pts)<br>"
            for name, b, a, count in rows
        )
        self.card.setVisible(True)
        self.card.setText(
            f"<b>Fine-tune {'stopped early' if stopped else 'finished'}</b><br>"
            f"{lines}<span style='color:{colour}'>{mark} Frozen parameters: "
            f"{frozen.describe()}.</span>"
        )
