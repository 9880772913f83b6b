"""Draw a digit, see exactly what the model sees, and teach it your handwriting.

The panel reads drawings with a core :class:`~workbench.core.predict.Predictor`:
a private eval-mode copy of the model that the window feeds with weights
(copied between training steps while a run trains). Reading happens in the GUI
thread, on that thread alone (no OpenMP helpers to wait for while a run or
another program keeps the cores busy): one 28x28 image takes about a
millisecond, less than a repaint.

A validation image opened from the Evaluation tab is read as it was scored (the
stored 28x28 image, normalised like the run's loaders, no recipe) until the
user draws on it; from then on the canvas recipe applies, as to any drawing.
The tab's keys (Esc, Undo, 0-9, Enter) work wherever the focus is in the window
while the tab is shown, except in a field the user types in.

Every model also reads an image file, opened (Ctrl+I) or dropped on the tab: a
digit model's goes on the canvas, through the recipe; a photo model (CIFAR-10,
an image folder) shows the picture in place of the canvas and reads it exactly
as its run's loaders would (resized, centre-cropped, per-channel statistics).
A dropped folder, or several files, is read in the background into a table
(:mod:`.predict_folder`).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QPushButton,
    QWidget,
)

from workbench.core.data.preprocess import style_of
from workbench.core.data.registry import DataError, DatasetInfo
from workbench.core.finetune import FrozenCheck, Scores
from workbench.core.host.threads import release_openmp_pool, single_threaded
from workbench.core.predict import (
    PredictError,
    Predictor,
    Reading,
    ScoredImage,
    load_image,
)
from workbench.ui import dialogs
from workbench.ui.panels import draw_keys, draw_layout
from workbench.ui.panels.draw_layout import NO_READING, prediction_style
from workbench.ui.panels.fine_tune_card import FAILED_TEXT, report_text, started_text
from workbench.ui.panels.predict_folder import FolderReading, PathDrops
from workbench.ui.widgets.draw_widgets import DigitCanvas
from workbench.ui.widgets.photo_view import IMAGE_FILTER, read_for_display

log = logging.getLogger(__name__)

# Reading while the pen moves: at most once per this many ms (a read is ~1 ms,
# but a repaint of the bars and preview is not free).
READ_DEBOUNCE_MS = 40


class DrawPanel(QWidget):
    """Canvas, live probabilities, the model's-eye preview, and my digits.

    Signals
    -------
    fine_tune_requested(epochs, replay)
        The user pressed "Fine-tune on my digits"; the window runs it.
    samples_changed()
        A drawing was added, relabelled or deleted.
    answer_shown(object)
        A :class:`Reading`'s answer is on screen (bars and label painted); its
        saliency, if asked for, comes next.
    read_finished(object)
        A :class:`Reading` was shown whole (bars, label, preview and saliency).
    """

    fine_tune_requested = Signal(int, int)
    samples_changed = Signal()
    answer_shown = Signal(object)
    read_finished = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("drawPanel")
        self._predictor: Predictor | None = None
        self._reader_key: tuple[Any, ...] | None = None
        self._reading: Reading | None = None
        self._opened: ScoredImage | None = None  # a validation image, as scored
        self._photo_path: Path | None = None  # the file a photo model reads
        self._drops = PathDrops(self)  # any model reads files dropped on the tab
        self._drops.paths_dropped.connect(self.open_paths)
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

        draw_layout.build_reading_widgets(self)
        draw_layout.build_teach_group(self)
        self.batch = FolderReading(self.predictions, self)
        self.predictions.file_chosen.connect(self.open_image_file)
        draw_layout.build_layout(self)
        self._keys = draw_keys.DrawKeys(
            self,
            set_label=self.set_label,
            add=self.add_sample,
            clear=self.clear_input,
            undo=self.canvas.undo,
            open_image=self.open_image_dialog,
        )
        self._show_empty()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Digits and Enter that reach the panel (its window is not active)."""
        if draw_keys.handle_key(event, self.set_label, self.add_sample):
            event.accept()
        else:
            super().keyPressEvent(event)

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
        """The (1, C, H, W) tensor the preview shows: the model's exact input."""
        return None if self._reading is None else self._reading.input

    @property
    def photo_mode(self) -> bool:
        """True while the reader is a photo model: a picture replaces the canvas."""
        return self._predictor is not None and self._predictor.is_photo

    def set_reader(
        self,
        model: str,
        dataset: str,
        class_names: tuple[str, ...] | None = None,
        *,
        info: DatasetInfo | None = None,
        weights: str = "none",
    ) -> bool:
        """Read with ``model`` on inputs prepared like ``dataset``.

        ``info`` describes the inputs (shape, channels, statistics, class
        names; a run's ``loaders.info``), by default the built-in dataset's.
        A new private model is built only when something changed; it has
        freshly initialised weights until :meth:`set_weights`. Returns True if
        the reader was rebuilt.
        """
        names = None if class_names is None else tuple(class_names)
        key = (model, dataset, names, info, weights)
        if key == self._reader_key:
            return False
        self._predictor = Predictor(model, dataset, names, info=info, weights=weights)
        self._reader_key = key
        self.bars.set_class_names(self._predictor.class_names)
        photo = self._predictor.is_photo
        if photo or self._photo_path is not None:
            self._opened = None  # of another run's shape, or on the canvas
        if not photo:
            self._photo_path = None
            self.photo.set_picture(None)
        draw_layout.set_photo_mode(self, photo)
        self._update_caption()
        self.mine.set_style(self._style())  # thumbnails in the reader's recipe
        return True

    def _update_caption(self) -> None:
        if self._predictor is None:
            return
        info, dataset = self._predictor.info, self._predictor.dataset
        channels, height, width = info.image_shape
        if self.showing_opened() is not None:
            recipe = "the validation image as stored, no recipe"
        elif self._predictor.is_photo:
            recipe = "the image resized and centre-cropped like the run's images"
        elif style_of(dataset) == "digits":
            recipe = "8x8 UCI-digits recipe"
        else:
            recipe = "MNIST recipe (20x20 box, centred by mass)"
        size = f"{height}x{width}" + (" colour" if channels == 3 else "")
        mean = ", ".join(f"{v:.4f}" for v in info.mean)
        std = ", ".join(f"{v:.4f}" for v in info.std)
        each = " (red, green, blue)" if channels == 3 else ""
        self.preview_caption.setText(
            f"What the model sees: {size}, {recipe}, then normalised with mean "
            f"{mean} and std {std}{each}."
        )

    def set_weights(self, state: dict[str, torch.Tensor], source: str) -> None:
        """Load ``state`` into the reader and read the drawing again."""
        if self._predictor is None:
            return
        if self._training_active:
            # The trainer has the cores: copy on this thread alone, which
            # builds no OpenMP pool here to slow the trainer's (releasing one
            # afterwards would cost the GUI thread ~6 ms every half second).
            with single_threaded():
                self._predictor.load_weights(state)
        else:
            self._predictor.load_weights(state)
        self.source_label.setText(source)
        self.read_now()

    def set_training_active(self, active: bool) -> None:
        """Whether a run trains in another thread (weights then load on one)."""
        self._training_active = active

    def showing_opened(self) -> ScoredImage | None:
        """The validation image on show, untouched (read as scored), or None."""
        if self.photo_mode and self._photo_path is None:
            return self._opened
        if self._opened is not None and self.canvas.holds_only_picture():
            return self._opened
        return None

    def has_input(self) -> bool:
        """Whether there is anything to read: a drawing, a picture, an image."""
        if self.photo_mode:
            return self._photo_path is not None or self._opened is not None
        return not self.canvas.is_empty()

    @Slot()
    def clear_input(self) -> None:
        """Clear the canvas, or take the picture away (Esc)."""
        self._say_file_problem("")
        if self.photo_mode:
            self._photo_path = self._opened = None
            self.photo.set_picture(None)
            self._show_empty()
        else:
            self.canvas.clear()

    @Slot()
    def open_image_dialog(self) -> None:
        """Ask for image files and read them (Open image…, Ctrl+I)."""
        paths = dialogs.get_open_paths(self, "Open images to read", IMAGE_FILTER)
        self.open_paths(paths)

    @Slot(object)
    def open_paths(self, paths: list[Path]) -> None:
        """One file: read it as opened; a folder or several: read into the table."""
        if len(paths) == 1 and not paths[0].is_dir():
            self.open_image_file(paths[0])
        elif paths:
            self.batch.start(paths, self._predictor)

    def shutdown(self) -> None:
        """Stop reading files in the background (the window closes)."""
        self.batch.shutdown()

    def open_image_file(self, path: str | Path) -> bool:
        """Read an image file with the model; False, and a message, if it cannot.

        A photo model reads it as its run's loaders would; a digit model gets
        it on the canvas (dark ink on light paper is inverted), through the
        recipe. A file that is no image changes nothing but the message.
        """
        path = Path(path)
        if self._predictor is None:
            self._say_file_problem("No model to read with yet.")
            return False
        started = time.perf_counter()
        try:
            if self.photo_mode:
                reading = self._predictor.read_file(path)
            else:
                picture = load_image(path)
                self._predictor.read(picture)  # no ink: say so, keep the canvas
        except PredictError as exc:
            reason = str(exc).replace(str(path), path.name)
            reason = reason.removeprefix(f"{path.name}: ")
            self._say_file_problem(f"Could not read {path.name}: {reason}")
            return False
        self._say_file_problem("")
        if not self.photo_mode:
            self.open_in_canvas(picture)
            return True
        self._photo_path, self._opened = path, None
        shown = read_for_display(path)
        self.photo.set_picture(shown if shown is not None else reading.field)
        self.photo.setToolTip(f"{path.name}: what you opened, whole")
        self._present(reading, started)
        return True

    def _say_file_problem(self, text: str) -> None:
        self.file_message.setText(text)
        self.file_message.setVisible(bool(text))

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
        """Read the canvas or picture and show the result (bars, label, preview)."""
        if self._predictor is None or not self.has_input():
            self._show_empty()
            return
        started = time.perf_counter()
        opened = self.showing_opened()
        try:
            # The saliency comes after the answer is painted (_present).
            if opened is not None:
                # The very tensor the evaluation scored: no recipe, no resize.
                reading = self._predictor.read_stored(opened.image)
            elif self._photo_path is not None:  # a photo model's image file
                reading = self._predictor.read_file(self._photo_path)
            else:
                reading = self._predictor.read(
                    self.canvas.image(), naive=self.naive_check.isChecked()
                )
        except PredictError as exc:
            if self.photo_mode:  # the file went away or changed since
                self._say_file_problem(str(exc))
            self._show_empty()
            self._release_pool()
            return
        self._present(reading, started)

    def _release_pool(self) -> None:
        if self._training_active and self.photo_mode:
            # A digit reader reads on this thread alone, a photo model on
            # every thread: give its OpenMP pool back (threads.py).
            release_openmp_pool()

    def _present(self, reading: Reading, started: float) -> None:
        """Show the answer, paint it, then explain it (the saliency) if asked.

        The answer is what the user waits for at pen up; the heat map costs a
        second forward and a backward pass (half the time of a digit read, a
        ResNet's backward for a photo), so the bars and label are on screen
        first and the preview follows with its heat map.
        """
        self._reading = reading
        self.bars.set_probabilities(reading.probabilities)
        name = reading.class_names[reading.label]
        self._set_prediction(f"{name}   {100 * reading.confidence:.0f}%")
        self._show_opened(reading)
        explain = self.saliency_check.isChecked() and self._predictor is not None
        if explain:
            # Painted now: the explanation runs next, on this thread, and the
            # event loop would paint the answer only after it.
            self.bars.repaint()
            self.prediction_label.repaint()
        self.answer_shown.emit(reading)
        if explain:
            reading = self._reading = self._predictor.explain(reading)
        self._release_pool()
        self._show_preview(reading)
        self.read_seconds.append(time.perf_counter() - started)
        self.read_finished.emit(reading)

    def _show_preview(self, reading: Reading) -> None:
        # The preview shows the very tensor the model got, de-normalised for
        # display with each channel's own statistics.
        info = self._predictor.info if self._predictor is not None else None
        shown = reading.input[0].numpy()
        if info is not None:
            std = np.array(info.std, np.float32).reshape(-1, 1, 1)
            shown = shown * std + np.array(info.mean, np.float32).reshape(-1, 1, 1)
        shown = np.clip(shown, 0.0, 1.0)
        self.preview.set_image(shown[0] if len(shown) == 1 else shown, reading.saliency)

    def _set_prediction(self, text: str) -> None:
        style = prediction_style(text)
        if style != self.prediction_label.styleSheet():  # restyling is not free
            self.prediction_label.setStyleSheet(style)
        self.prediction_label.setText(text)

    def _show_opened(self, reading: Reading | None) -> None:
        """Say what an opened validation image is, and how it was scored."""
        opened = self.showing_opened() if reading is not None else None
        self.naive_check.setEnabled(opened is None and not self.photo_mode)
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
        self._set_prediction(NO_READING)
        self.preview.clear()
        self._show_opened(None)
        self.mine.set_can_add(not self.photo_mode and not self.canvas.is_empty())

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
        if self.photo_mode:
            self._photo_path = None
            self._say_file_problem("")
            self.photo.set_picture(scored.image)
            self.read_now()
            return
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
        self.card.setText(started_text(before, base_title))

    def clear_fine_tune_report(self) -> None:
        """Hide the card: the model it described is gone."""
        self.fine_tune_report = None
        self.card.clear()
        self.card.setVisible(False)

    def show_fine_tune_failed(self) -> None:
        """The fine-tune ended without a result (an error, or stopped at once)."""
        self.card.setVisible(True)
        self.card.setText(FAILED_TEXT)

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
        self.card.setVisible(True)
        self.card.setText(report_text(before, after, frozen, base_title, stopped))
