"""Model: the architecture, its pretrained weights, and how many parameters train.

Every model the catalog knows is listed by family (built-ins first, then
torchvision's classifiers, then the user's own model files), with a filter.
A model file runs the user's code: while one is chosen the panel says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from workbench.core.config import TrainConfig
from workbench.core.models.builtins import MODEL_TITLES
from workbench.core.models.catalog import (
    DEFAULT_WEIGHTS,
    LEGACY_MODELS,
    NO_WEIGHTS,
    family,
    grouped_models,
    is_model_file,
    is_torchvision,
    pretrained,
    weights_choices,
    weights_enum_class,
)
from workbench.core.models.user_file import ModelFileError, defined_names
from workbench.core.train.feature_cache import IS_TRAINABLE, PREFIX
from workbench.ui import dialogs
from workbench.ui.formatting import trainable_share
from workbench.ui.panels.base import ConfigPanel, select_data
from workbench.ui.widgets.model_combo import Entry, ModelCombo, narrow
from workbench.ui.window import state as window_state

LAZY_NOTE = (
    "Lazy model: its layers learn their input sizes from data, so one dry-run "
    "batch (a blank 1\u00d728\u00d728 image, in eval mode) materialises it before its "
    "parameters are listed, frozen or given to the optimizer."
)
MODEL_FILES = "Model files"
NO_PRETRAINED = (
    "Pretrained weights come with torchvision's models; {model} starts from "
    "random weights (File \u25b8 Load weights loads a checkpoint)."
)
CACHE_UNDECIDED = "Feature cache: decided when a run starts"
WARNING_STYLE = "color: #8a5a00;"
PROBLEM_STYLE = "color: #b00020;"


def trust_note(spec: str) -> str:
    """What the panel says while a model file is chosen."""
    path = spec.rpartition(":")[0]
    return f"This runs the code in {path}: only add files you trust."


def model_title(name: str) -> str:
    """One line about model ``name`` under the list."""
    if name in MODEL_TITLES:
        return MODEL_TITLES[name]
    if is_model_file(name):
        path, _, attr = name.rpartition(":")
        return f"{attr} from your file {path}"
    return f"torchvision's {name} ({family(name)}); takes 3-channel images"


class ModelPanel(ConfigPanel):
    """Architecture and weights choice with a description and parameter counts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Model", parent)
        self._settings = window_state.open_window_settings()
        self._head = ""
        self.search_edit = QLineEdit(objectName="modelSearchEdit")
        self.search_edit.setPlaceholderText("Find a model, e.g. resnet")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self._on_search_edit_text_changed)
        self.search_edit.returnPressed.connect(self._on_search_edit_return_pressed)
        self.add_file_button = QPushButton(
            "Add model file\u2026", objectName="addModelFileButton"
        )
        self.add_file_button.setToolTip(
            "Add a class or function from your own .py file (it gets num_classes= "
            "and, if it takes it, in_channels=)"
        )
        self.add_file_button.clicked.connect(self._on_add_file_button_clicked)
        self.form.addRow("Find", self.search_edit)
        self.model_combo = ModelCombo(objectName="modelCombo")
        self.model_combo.currentIndexChanged.connect(self._on_model_combo_changed)
        self.form.addRow("Architecture", self.model_combo)
        self.weights_combo = QComboBox(objectName="weightsCombo")
        narrow(self.weights_combo)
        self.weights_combo.currentIndexChanged.connect(self._on_weights_combo_changed)
        self.form.addRow("Weights", self.weights_combo)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.add_file_button)
        row.addStretch(1)
        self.form.addRow("", row)
        self.title_label = self._note("modelTitleLabel")
        self.head_label = self._note("headNoteLabel")
        self.trust_label = self._note("modelFileTrustLabel", WARNING_STYLE)
        self.problem_label = self._note("modelProblemLabel", PROBLEM_STYLE)
        self.problem_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.lazy_label = self._note("lazyNoteLabel", WARNING_STYLE)
        self.lazy_label.setText(LAZY_NOTE)
        self.count_label = QLabel(objectName="parameterCountLabel")
        self.form.addRow("Parameters", self.count_label)
        self.trainable_label = QLabel(objectName="trainableCountLabel")
        self.form.addRow("Trainable", self.trainable_label)
        self._counts = (0, 0)
        # A large model's memory for training, and whether this machine has it.
        self.cost_label = self._note("trainingCostLabel")
        self.cost_label.hide()
        # The run's feature cache: on (the head trains on kept features) or why not.
        self.feature_cache_label = self._note("featureCacheLabel")
        # Two lines kept from the start: a run's status must not move the tree.
        lines = self.feature_cache_label.fontMetrics().lineSpacing()
        self.feature_cache_label.setMinimumHeight(2 * lines)
        self.feature_cache_label.setToolTip(
            "With every layer before the head frozen, the backbone's output for an "
            "image never changes: it is computed once and the head trains on it."
        )
        self.show_feature_cache("")
        self.problem_label.hide()
        self._fill_models()
        self._show_model()

    def _note(self, name: str, style: str = "") -> QLabel:
        label = QLabel(objectName=name)
        label.setWordWrap(True)
        if style:
            label.setStyleSheet(style)
        self.form.addRow(label)
        return label

    # ------------------------------------------------------------------ lists

    def _fill_models(self, extra: str | None = None) -> None:
        """Every model by family; the added model files (and ``extra``) last.

        An earlier layout of a built-in (``extra``, from an opened checkpoint)
        is listed with the built-ins.
        """
        groups: list[tuple[str, list[Entry]]] = [
            (title, [(n, n, model_title(n)) for n in names])
            for title, names in grouped_models()
        ]
        files = window_state.model_files(self._settings)
        if extra in LEGACY_MODELS:
            groups[0][1].append((extra, extra, model_title(extra)))  # "Built-in"
        elif extra is not None and extra not in files:
            files.append(extra)
        groups.append((MODEL_FILES, [(s, _file_label(s), s) for s in files]))
        self.model_combo.set_groups(groups)

    def _fill_weights(self) -> None:
        """The weights the chosen model can start from; keeps the choice if it can."""
        combo, model = self.weights_combo, self.model()
        before = combo.currentData() or NO_WEIGHTS
        combo.blockSignals(True)
        combo.clear()
        for choice in weights_choices(model):
            combo.addItem(_weights_label(model, choice), choice)
        select_data(combo, before if combo.findData(before) >= 0 else NO_WEIGHTS)
        combo.blockSignals(False)
        torchvision = is_torchvision(model)
        combo.setEnabled(torchvision)
        combo.setToolTip(
            "Start from weights trained on ImageNet, or from random weights (none)"
            if torchvision
            else NO_PRETRAINED.format(model=model)
        )

    # ------------------------------------------------------------------ config

    def _apply(self, cfg: TrainConfig) -> None:
        if self.model_combo.findData(cfg.model) < 0:
            self._fill_models(extra=cfg.model)
        select_data(self.model_combo, cfg.model)
        self._fill_weights()
        select_data(self.weights_combo, cfg.weights)
        self._show_model()

    def config_values(self) -> dict[str, Any]:
        """``model`` and ``weights``."""
        return {"model": self.model(), "weights": self.weights()}

    def model(self) -> str:
        """The selected architecture."""
        return str(self.model_combo.currentData())

    def weights(self) -> str:
        """The selected weights (``none`` for random initial weights)."""
        return str(self.weights_combo.currentData() or NO_WEIGHTS)

    def show_counts(self, total: int, trainable: int) -> None:
        """Show the parameter counts of the model the freeze tree shows."""
        self._counts = (total, trainable)
        self.count_label.setText(f"{total:,}")
        share = f" ({trainable_share(trainable, total)})" if total else ""
        self.trainable_label.setText(f"{trainable:,}{share}")

    def show_building(self, model: str, estimate: int) -> None:
        """A preview of ``model`` is built elsewhere: its counts are not known yet."""
        self.count_label.setText(f"about {estimate:,} (building {model}\u2026)")
        self.trainable_label.setText("\u2013")
        self.show_feature_cache("")

    def show_training_cost(self, text: str) -> None:
        """What training the shown model costs here ("" hides the line)."""
        self.cost_label.setText(text)
        self.cost_label.setVisible(bool(text))

    def show_feature_cache(self, status: str) -> None:
        """A run's "feature cache: on (...)" or "...off: why", in plain words.

        ``""``: no run has decided for the shown model yet.
        """
        self.feature_cache_label.setText(
            feature_cache_line(status, self._head, every_layer_trains=self._all_train())
        )

    def predict_feature_cache(self, trainable_before_head: str | None) -> None:
        """Before a run: what the shown model's mask already decides."""
        if trainable_before_head is not None:
            self.show_feature_cache(
                f"{PREFIX}off: {trainable_before_head}{IS_TRAINABLE}"
            )
        else:
            self.feature_cache_label.setText(
                f"{CACHE_UNDECIDED} (every layer before the head is frozen)"
            )

    def _all_train(self) -> bool:
        total, trainable = self._counts
        return total > 0 and trainable == total

    def show_head(self, head: str) -> None:
        """Name the classifier layer of the shown model (pretrained runs replace it)."""
        self._head = head
        self._show_model()

    def show_problem(self, text: str) -> None:
        """Why the chosen model cannot be built ("" hides the message)."""
        self.problem_label.setText(text)
        self.problem_label.setVisible(bool(text))

    def _show_model(self) -> None:
        model, weights = self.model(), self.weights()
        self.title_label.setText(model_title(model))
        self.lazy_label.setVisible(model == "lazy-cnn")
        chosen_file = is_model_file(model)
        self.trust_label.setText(trust_note(model) if chosen_file else "")
        self.trust_label.setVisible(chosen_file)
        if pretrained(model, weights):
            head = (
                f"its classifier head ({self._head})"
                if self._head
                else ("its classifier head")
            )
            self.head_label.setText(
                f"Pretrained on ImageNet: {head} is replaced by a fresh layer "
                "for your classes."
            )
        self.head_label.setVisible(pretrained(model, weights))

    # ------------------------------------------------------------------ slots

    @Slot(str)
    def _on_search_edit_text_changed(self, text: str) -> None:
        self.model_combo.set_filter(text)

    @Slot()
    def _on_search_edit_return_pressed(self) -> None:
        """Enter picks the first match unless the chosen model is one."""
        shown = self.model_combo.shown_models()
        if shown and self.model() not in shown:
            self.model_combo.setCurrentIndex(self.model_combo.findData(shown[0]))
        self.model_combo.setFocus()

    @Slot(int)
    def _on_model_combo_changed(self, _index: int) -> None:
        self.show_problem("")
        self._fill_weights()
        self._show_model()
        self._emit_changed()

    @Slot(int)
    def _on_weights_combo_changed(self, _index: int) -> None:
        self._show_model()
        self._emit_changed()

    @Slot()
    def _on_add_file_button_clicked(self) -> None:
        path = dialogs.get_open_path(self, "Add a model file", "Python files (*.py)")
        if path is None:
            return
        try:
            names = defined_names(path)
        except ModelFileError as exc:
            self.show_problem(str(exc))
            return
        if not names:
            self.show_problem(f"{path}: defines no class or function to build from")
            return
        name = dialogs.get_item(
            self,
            f"Model in {path.name}",
            "The class or function that builds the model (it gets num_classes=):",
            names,
        )
        if name is None:
            return
        spec = f"{Path(path).resolve()}:{name.strip()}"
        if not is_model_file(spec):
            self.show_problem(f"{name!r} is not a Python name")
            return
        window_state.add_model_file(self._settings, spec)
        self._fill_models()
        self.model_combo.setCurrentIndex(self.model_combo.findData(spec))


def feature_cache_line(status: str, head: str, *, every_layer_trains: bool) -> str:
    """The Model panel's line for a feature-cache status of ``feature_cache.py``.

    ``head``: the shown model's classifier layer; ``every_layer_trains``: nothing
    is frozen (then the first trainable parameter is no news).
    """
    text = status.removeprefix(PREFIX)
    if not text:
        return CACHE_UNDECIDED
    the_head = f"the head ({head})" if head else "the head"
    if text.startswith("on (") and text.endswith(")"):
        return (
            f"Feature cache: on: {the_head} trains on the frozen layers' kept "
            f"output ({text[4:-1]})"
        )
    state, _, why = text.partition(": ")
    name, trainable, rest = why.partition(IS_TRAINABLE)
    if trainable and " " not in name:
        if every_layer_trains:
            why = f"every layer trains{rest}"
        else:
            again = " again" if state.startswith("off from step") else ""
            why = f"{name} trains{again}, before {the_head}{rest}"
    return f"Feature cache: {state}: {why}" if why else f"Feature cache: {text}"


def _file_label(spec: str) -> str:
    path, _, name = spec.rpartition(":")
    return f"{Path(path).name}:{name}"


def _weights_label(model: str, choice: str) -> str:
    if choice == NO_WEIGHTS:
        return "none (random initial weights)"
    if choice == DEFAULT_WEIGHTS:
        return f"default ({weights_enum_class(model).DEFAULT.name})"
    return choice
