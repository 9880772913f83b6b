"""The Draw tab's widgets and their layout, built onto its ``DrawPanel``.

The panel's logic (reading, keys, my digits) lives in :mod:`.draw`; these
functions only create the widgets it names and place them, as
:mod:`workbench.ui.window.layout` does for the window. ``panel`` is typed Any:
its module imports this one.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from workbench.core.finetune import EPOCHS, REPLAY
from workbench.ui.panels.my_digits_box import MyDigitsBox
from workbench.ui.panels.predictions_table import PredictionsTable
from workbench.ui.widgets.draw_widgets import (
    InputPreview,
    ProbabilityBars,
    WrappingLabel,
)
from workbench.ui.widgets.photo_view import OPEN_IMAGE_KEYS, PhotoView

NO_READING = "\u2013"  # en dash: nothing read yet
# The answer in large type; a long class name in smaller type, so it fits.
LARGE_PX, SMALL_PX, LONG_NAME = 40, 26, 12


def set_photo_mode(panel: Any, photo: bool) -> None:
    """Show the picture (photo models) or the canvas and my digits (digit models)."""
    for widget in (panel.canvas, panel.clear_button, panel.undo_button):
        widget.setVisible(not photo)
    for widget in (panel.naive_check, panel.mine, panel.tune_group):
        widget.setVisible(not photo)
    panel.photo.setVisible(photo)
    # A picture needs less room than a canvas to draw on; the reading more.
    panel.top_row.setStretch(0, 1 if photo else 3)
    panel.top_row.setStretch(1, 1 if photo else 2)


def prediction_style(text: str) -> str:
    """The prediction label's style sheet for ``text``."""
    px = LARGE_PX if len(text) <= LONG_NAME else SMALL_PX
    return f"font-size: {px}px; font-weight: 600;"


def build_reading_widgets(panel: Any) -> None:
    """The reading's widgets: file opening, label, bars, preview, options."""
    keys = OPEN_IMAGE_KEYS.toString(QKeySequence.SequenceFormat.NativeText)
    panel.open_image_button = QPushButton("Open image…", objectName="openImageButton")
    panel.open_image_button.setToolTip(
        f"Read an image file with this model ({keys}), or several into a table; "
        "or drop files or a folder on this tab"
    )
    panel.open_image_button.clicked.connect(panel.open_image_dialog)
    panel.photo = PhotoView(keys)
    panel.photo.setVisible(False)
    panel.file_message = WrappingLabel("imageFileMessage")
    panel.file_message.setStyleSheet("color: #b42318;")
    panel.file_message.setVisible(False)
    panel.predictions = PredictionsTable()  # a folder's or several files' reads
    panel.predictions.setVisible(False)

    # Wrapped: a folder's class may be called "zebra crossing" or longer.
    panel.prediction_label = WrappingLabel("predictionLabel")
    panel.prediction_label.setStyleSheet(prediction_style(NO_READING))
    panel.prediction_label.setText(NO_READING)
    panel.prediction_label.setToolTip("The class the model reads, and how sure it is")
    panel.source_label = WrappingLabel("readerSourceLabel")
    panel.source_label.setStyleSheet("color: #555;")
    panel.opened_label = WrappingLabel("openedImageLabel")
    panel.opened_label.setVisible(False)
    panel.bars = ProbabilityBars()
    panel.bars.setMinimumHeight(160)

    panel.preview = InputPreview()
    panel.preview.setToolTip(
        "The exact tensor the model receives, shown before normalisation"
    )
    panel.preview_caption = WrappingLabel("previewCaption")
    panel.preview_caption.setStyleSheet("color: #555;")
    panel.naive_check = QCheckBox("Naive resize", objectName="naiveResizeCheck")
    panel.naive_check.setToolTip(
        "Squash the whole canvas to 28x28 instead of preparing the drawing the "
        "way the training data was made: see why preprocessing matters"
    )
    panel.naive_check.toggled.connect(panel._on_option_toggled)
    panel.saliency_check = QCheckBox(
        "Saliency overlay", objectName="saliencyCheck", checked=True
    )
    panel.saliency_check.setToolTip(
        "Colour each input pixel by |d logit / d pixel| of the predicted class "
        "(autograd): where a change would move the answer most"
    )
    panel.saliency_check.toggled.connect(panel._on_option_toggled)


def build_teach_group(panel: Any) -> None:
    """My digits and the fine-tune box."""
    panel.mine = MyDigitsBox()
    panel.mine.add_requested.connect(panel.add_sample)
    panel.mine.drawing_opened.connect(panel.open_in_canvas)
    panel.mine.samples_changed.connect(panel.samples_changed)
    # Its parts, under the names callers (and tests) know them by.
    panel.store = panel.mine.store
    panel.label_combo = panel.mine.label_combo
    panel.add_button = panel.mine.add_button
    panel.sample_list = panel.mine.sample_list
    panel.delete_button = panel.mine.delete_button
    panel.relabel_button = panel.mine.relabel_button
    panel.counts_label = panel.mine.counts_label

    panel.epochs_spin = QSpinBox(objectName="fineTuneEpochsSpin")
    panel.epochs_spin.setRange(1, 500)
    panel.epochs_spin.setValue(EPOCHS)
    panel.replay_spin = QSpinBox(objectName="fineTuneReplaySpin")
    panel.replay_spin.setRange(0, 60_000)
    panel.replay_spin.setSingleStep(128)
    panel.replay_spin.setValue(REPLAY)
    panel.replay_spin.setToolTip(
        "Training images of the model's own dataset mixed in, so it keeps "
        "what it knew (0: my digits only, and watch it forget)"
    )
    panel.fine_tune_button = QPushButton(
        "Fine-tune on my digits", objectName="fineTuneButton"
    )
    panel.fine_tune_button.setToolTip(
        "Train the current model on my digits plus a replay of its dataset, "
        "under the freeze mask (all but the head, if nothing is frozen)"
    )
    panel.fine_tune_button.clicked.connect(panel._on_fine_tune_clicked)
    panel.card = WrappingLabel("fineTuneCard")
    panel.card.setTextFormat(Qt.TextFormat.RichText)
    panel.card.setVisible(False)


def build_layout(panel: Any) -> None:
    """The canvas (or picture) left, the reading right, teaching below."""
    left = QVBoxLayout()
    left.addWidget(panel.canvas, 1)
    left.addWidget(panel.photo, 1)
    buttons = QHBoxLayout()
    buttons.addWidget(panel.open_image_button)
    buttons.addWidget(panel.clear_button)
    buttons.addWidget(panel.undo_button)
    buttons.addStretch(1)
    left.addLayout(buttons)
    left.addWidget(panel.file_message)

    right = QVBoxLayout()
    right.addWidget(panel.prediction_label)
    right.addWidget(panel.source_label)
    right.addWidget(panel.opened_label)
    right.addWidget(panel.bars, 1)
    preview_row = QHBoxLayout()
    preview_row.addWidget(panel.preview)
    options = QVBoxLayout()
    options.addWidget(panel.naive_check)
    options.addWidget(panel.saliency_check)
    options.addStretch(1)
    preview_row.addLayout(options, 1)
    right.addLayout(preview_row)
    right.addWidget(panel.preview_caption)

    top = panel.top_row = QHBoxLayout()
    top.addLayout(left, 3)
    top.addLayout(right, 2)

    tune = panel.tune_group = QGroupBox("Teach it my handwriting")
    form = QFormLayout(tune)
    form.addRow("Epochs", panel.epochs_spin)
    form.addRow("Replay images", panel.replay_spin)
    form.addRow(panel.fine_tune_button)
    form.addRow(panel.card)
    bottom = QHBoxLayout()
    bottom.addWidget(panel.mine, 3)
    bottom.addWidget(tune, 2)

    layout = QVBoxLayout(panel)
    layout.addLayout(top, 5)
    layout.addWidget(panel.predictions, 4)
    layout.addLayout(bottom, 2)
