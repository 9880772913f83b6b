"""Data: which dataset, where it lives, downloading it, and what it looks like."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from workbench.core.config import (
    DATASETS,
    DEFAULT_IMAGE_SIZE,
    MY_DIGITS_BASES,
    RESIZABLE_DATASETS,
    TrainConfig,
)
from workbench.core.data.cache import ArraysCache, cache_key
from workbench.core.data.my_digits import MyDigits
from workbench.core.data.preprocess import style_of
from workbench.core.data.registry import (
    DATASET_INFO,
    FOLDER,
    DataError,
    DataMissing,
    ImageArrays,
    default_data_dir,
)
from workbench.core.data.sources import load_arrays
from workbench.ui import dialogs
from workbench.ui.formatting import gray_pixmap
from workbench.ui.panels.base import ConfigPanel, select_data
from workbench.ui.panels.download_row import DownloadRow
from workbench.ui.panels.fixes_check import FixesCheck
from workbench.ui.panels.image_folder import (
    DataCheckRow,
    FolderField,
    image_size_spin,
    validation_share_spin,
)
from workbench.ui.panels.samples import (
    AUGMENT_SAMPLES,
    STRIP_ROWS,
    AugmentBox,
    folder_examples,
    sample_strip,
)
from workbench.ui.tasks import TaskThread, describe_error, start_task
from workbench.ui.widgets.preprocessing_label import PreprocessingLabel

# The Image size field until the user sets one: the run's own choice.
AUTO_SIZE_SUFFIX = " px (auto)"

log = logging.getLogger(__name__)

FOLDER_TITLE = "Image folder (your own)"


def dataset_title(name: str) -> str:
    """The name the dataset list shows."""
    return FOLDER_TITLE if name == FOLDER else DATASET_INFO[name].title


class DataPanel(ConfigPanel):
    """Dataset choice, data folder, Download with progress and Cancel, samples.

    Shows and fills an :class:`ArraysCache` (by default its own; the window
    shares its session's) so a run does not load the shown data again.
    """

    arrays_changed = Signal()  # the current dataset finished loading (or failed)
    start_cleared = Signal()  # Start was asked for and the data may train

    def __init__(
        self, parent: QWidget | None = None, *, cache: ArraysCache | None = None
    ) -> None:
        super().__init__("Data", parent)
        self.dataset_combo = QComboBox(objectName="datasetCombo")
        for name in DATASETS:
            self.dataset_combo.addItem(dataset_title(name), name)
        self.dataset_combo.setToolTip(
            "The digits set ships with the program and needs no download; "
            "Image folder trains on your own images, one folder per class."
        )
        self.dataset_combo.currentIndexChanged.connect(self._on_dataset_combo_changed)
        # Long entries are elided in a narrow column instead of widening it.
        self.dataset_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.dataset_combo.setMinimumContentsLength(16)
        self.form.addRow("Dataset", self.dataset_combo)

        # Only for my-digits: the dataset the drawings are prepared like and mixed with.
        self.base_combo = QComboBox(objectName="baseDatasetCombo")
        for name in MY_DIGITS_BASES:
            self.base_combo.addItem(DATASET_INFO[name].title, name)
        self.base_combo.setToolTip(
            "My drawings are cropped, scaled and normalised like this dataset, and "
            "its training images are replayed"
        )
        self.base_combo.currentIndexChanged.connect(self._emit_changed)
        self.base_combo.currentIndexChanged.connect(self._on_base_combo_changed)
        self.form.addRow("Prepared like", self.base_combo)
        self.replay_spin = QSpinBox(objectName="replaySpin")
        self.replay_spin.setRange(0, 60_000)
        self.replay_spin.setSingleStep(128)
        self.replay_spin.setToolTip(
            "Training images of that dataset mixed into every epoch, so a model "
            "learning my digits keeps what it knew"
        )
        self.replay_spin.valueChanged.connect(self._emit_changed)
        self.form.addRow("Replay images", self.replay_spin)

        self.dir_edit = QLineEdit(objectName="dataDirEdit")
        self.dir_edit.setPlaceholderText(str(default_data_dir()))
        self.dir_edit.setToolTip(
            "Folder holding MNIST/raw/ (or FashionMNIST, KMNIST); empty means the "
            f"default, {default_data_dir()}"
        )
        self.dir_edit.editingFinished.connect(self._on_dir_edit_finished)
        browse = QPushButton("Browse…", objectName="dataDirButton")
        browse.clicked.connect(self._on_browse_clicked)
        row = QHBoxLayout()
        row.addWidget(self.dir_edit, 1)
        row.addWidget(browse)
        self.browse_button = browse
        self._dir_row = row
        self.form.addRow("Folder", row)
        self.count_label = QLabel(objectName="sampleCountLabel")
        self.count_label.setWordWrap(True)
        self._build_folder_rows()

        self.download_row = DownloadRow()
        self.download_button = self.download_row.download_button
        self.download_button.clicked.connect(self._on_download_clicked)
        self.cancel_button = self.download_row.cancel_button
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.download_bar = self.download_row.bar
        self.form.addRow("", self.download_row)

        fix = self.fixes_check = FixesCheck()  # the check applies a run's fixes
        self.check_row = DataCheckRow(self.count_label, self._check_target, fix.values)
        self.check_row.start_cleared.connect(self.start_cleared)
        # The model preview's classes come from the check: tell the window.
        self.check_row.classes_found.connect(self._emit_changed)
        self.form.addRow("", self.check_row)
        self.form.addRow("Samples", self.count_label)
        self.strip_label = QLabel(objectName="sampleStrip")
        self.strip_label.setMinimumHeight(2 * 28)
        self.strip_label.setToolTip("Example training images, one column per class")
        self.form.addRow(self.strip_label)
        self.augment_box = AugmentBox()
        self.augment_box.changed.connect(self._emit_changed)
        self.form.addRow("Augment", self.augment_box)
        for slot in (self._emit_changed, self.check_row.check_quietly):
            self.fixes_check.changed.connect(slot)
        self.form.addRow("Fixes", self.fixes_check)
        self.preprocessing_label = PreprocessingLabel()  # the window fills it
        self.form.addRow(self.preprocessing_label)

        self.cache = cache if cache is not None else ArraysCache()
        self._tasks: list[TaskThread] = []
        self._download: TaskThread | None = None
        self._state = "idle"
        self._run_active = False
        self._size_explicit = False  # the config named an image size
        self._applied_size: int | None = None
        self._applied_share = 0.2
        self._show_dataset_rows()

    def _build_folder_rows(self) -> None:
        """Image folder, image size, validation share."""
        self.folder_field = FolderField()
        self.folder_field.chosen.connect(self._on_folder_field_chosen)
        self.form.addRow("Images", self.folder_field)

        self.size_spin = image_size_spin()
        self.size_spin.setSuffix(AUTO_SIZE_SUFFIX)
        self.size_spin.valueChanged.connect(self._on_size_spin_changed)
        self.form.addRow("Image size", self.size_spin)
        self.share_spin = validation_share_spin()
        self.share_spin.valueChanged.connect(self._emit_changed)
        self.form.addRow("Validation share", self.share_spin)

    # ---------------------------------------------------------------- config

    def _apply(self, cfg: TrainConfig) -> None:
        before = self._key()
        select_data(self.dataset_combo, cfg.dataset)
        select_data(self.base_combo, cfg.base_dataset)
        self.replay_spin.setValue(cfg.replay)
        if cfg.dataset == FOLDER:
            self.folder_field.set_folder(cfg.data_dir)
        else:
            self.dir_edit.setText(cfg.data_dir or "")
        self._size_explicit = cfg.image_size is not None
        self._applied_size = cfg.image_size
        self.size_spin.setValue(cfg.resolved_image_size)
        self._mark_size()
        self._applied_share = cfg.val_fraction
        self.share_spin.setValue(round(100 * cfg.val_fraction))
        self.augment_box.set_choices(cfg.augment)
        self._show_dataset_rows()
        if self._key() != before or self._state == "idle":
            self._reload()
        self.fixes_check.apply(cfg)  # a run's own fixes, kept as recorded

    def config_values(self) -> dict[str, Any]:
        """``dataset``, ``data_dir``, ``image_size``, ``val_fraction``, my-digits',
        and ``fixes`` with ``fixes_name`` (Use fixes).

        ``image_size`` stays None (the dataset's default) until the user or the
        config names one; the validation share keeps the config's own value
        while the spin box shows it rounded.
        """
        mine = self.dataset() == "my-digits"
        share = self.share_spin.value()
        applied = self._applied_share
        return {
            "dataset": self.dataset(),
            "data_dir": self.data_dir(),
            "base_dataset": str(self.base_combo.currentData()),
            "replay": self.replay_spin.value() if mine else 0,
            "image_size": self.image_size(),
            "val_fraction": applied if round(100 * applied) == share else share / 100,
            "augment": self.augment_box.choices(),
            **self.fixes_check.values(),
        }

    def image_size(self) -> int | None:
        """The image size the config gets: None for automatic (see show_auto_size)."""
        dataset = self.dataset()
        if dataset not in RESIZABLE_DATASETS:
            return 28 if self._applied_size == 28 else None
        if not self._size_explicit:
            return None
        return self.size_spin.value()

    def show_auto_size(self, side: int) -> None:
        """Show the size a run takes when none is set (the weights' 224, say).

        The field shows it marked "auto" until the user sets a size of their own.
        """
        if self._size_explicit or self.dataset() not in RESIZABLE_DATASETS:
            return
        with QSignalBlocker(self.size_spin):
            self.size_spin.setValue(side)

    def _mark_size(self) -> None:
        self.size_spin.setSuffix(" px" if self._size_explicit else AUTO_SIZE_SUFFIX)

    def _show_dataset_rows(self) -> None:
        dataset = self.dataset()
        folder = dataset == FOLDER
        for row, visible in (
            (self.base_combo, dataset == "my-digits"),
            (self.replay_spin, dataset == "my-digits"),
            (self._dir_row, not folder),
            (self.download_row, not folder),
            (self.strip_label, not folder),
            (self.folder_field, folder),
            (self.size_spin, dataset in RESIZABLE_DATASETS),
            (self.share_spin, folder),
            (self.check_row, folder),
        ):
            self.form.setRowVisible(row, visible)

    def dataset(self) -> str:
        """The selected dataset name."""
        return str(self.dataset_combo.currentData())

    def data_dir(self) -> str | None:
        """The data folder (``folder``: the image folder), or None for the default."""
        if self.dataset() == FOLDER:
            return self.folder_field.folder()
        return self.dir_edit.text().strip() or None

    def _key(self) -> tuple[str, str]:
        return cache_key(self.dataset(), self.data_dir())

    # ---------------------------------------------------------------- cache

    def forget(self, dataset: str) -> None:
        """Drop ``dataset`` from the cache (its files changed); reload if shown."""
        self.cache.forget(dataset)
        if self.dataset() == dataset and not self._run_active:
            self._reload()

    def show_if_cached(self) -> None:
        """Show the current dataset if something else (a run) loaded it meanwhile."""
        if self._state not in ("loaded", "folder"):
            arrays = self.cache.get(self.dataset(), self.data_dir())
            if arrays is not None:
                self._show_arrays(arrays)

    def _store(self, key: tuple[str, str], arrays: ImageArrays) -> None:
        self.cache.put(key[0], key[1], arrays)
        if key == self._key():
            self._show_arrays(arrays)

    # ---------------------------------------------------------------- loading

    def _reload(self) -> None:
        """Show the current dataset: from the cache, or load it if it is on disk."""
        key = self._key()
        self.fixes_check.show_data(self.dataset(), self.data_dir())
        if key[0] == FOLDER:
            self._state = "folder"
            self.strip_label.clear()
            self._update_folder_enabled()
            self.check_row.check_quietly()
            self._show_folder_examples()
            return
        info = DATASET_INFO[key[0]]
        self.download_button.setEnabled(not info.offline and not self._run_active)
        self.download_button.setToolTip(
            "Bundled with the program: nothing to download"
            if info.offline
            else f"Download {info.title} into the data folder"
        )
        self._update_folder_enabled()
        arrays = self.cache.get(*key)
        if arrays is not None:
            self._show_arrays(arrays)
            return
        self._state = "loading"
        self.count_label.setText(f"Loading {info.title}…")
        self.strip_label.clear()
        dataset, data_dir = key[0], self.data_dir()

        def work(progress: Any, cancel: Any) -> ImageArrays:
            return load_arrays(dataset, data_dir, download=False)

        self._start_task(work, key, download=False)

    def _start_task(
        self, work: Any, key: tuple[str, str], *, download: bool
    ) -> TaskThread:
        task = start_task(
            self,
            f"load-{key[0]}",
            work,
            succeeded=self._on_task_succeeded,
            failed=self._on_task_failed,
            finished=self._on_task_finished,
            progressed=self.download_row.show_progress if download else None,
            cancelled=self._on_task_cancelled,
        )
        # Set after start, yet before any slot: they are queued to this thread.
        task.setProperty("key", list(key))
        task.setProperty("download", download)
        if download:
            self._download = task
        self._tasks.append(task)
        return task

    def _task_key(self, task: TaskThread) -> tuple[str, str]:
        return tuple(task.property("key"))  # type: ignore[return-value]

    @Slot(object)
    def _on_task_succeeded(self, arrays: ImageArrays) -> None:
        task = self.sender()
        assert isinstance(task, TaskThread)
        self._store(self._task_key(task), arrays)

    @Slot(object)
    def _on_task_failed(self, error: Exception) -> None:
        task = self.sender()
        assert isinstance(task, TaskThread)
        if self._task_key(task) != self._key():
            return
        message, details = describe_error(error)
        self._state = "missing"
        if task.property("download") or not isinstance(error, DataMissing):
            self.count_label.setText(message)
        else:
            self.count_label.setText(
                "Not in the data folder yet: press Download, or choose a folder "
                "that holds it (a run downloads it too)."
            )
        self.count_label.setToolTip(message)
        if task.property("download"):
            dialogs.show_error(self, "Download failed", message, details)
        self.arrays_changed.emit()

    @Slot()
    def _on_task_cancelled(self) -> None:
        self.count_label.setText("Download cancelled")

    @Slot()
    def _on_task_finished(self) -> None:
        task = self.sender()
        assert isinstance(task, TaskThread)
        if task is self._download:
            self._download = None
            self._show_download_controls(False)
        if task in self._tasks:
            self._tasks.remove(task)
        task.deleteLater()

    def _show_arrays(self, arrays: ImageArrays) -> None:
        self._state = "loaded"
        train, test = len(arrays.train_labels), len(arrays.test_labels)
        self.count_label.setText(f"{train:,} training · {test:,} test images")
        self.count_label.setToolTip("")
        self._show_strip(arrays)
        self.arrays_changed.emit()

    def _show_strip(self, arrays: ImageArrays) -> None:
        if self.dataset() == "my-digits":
            # My drawings as the chosen base dataset's recipe prepares them.
            style = style_of(str(self.base_combo.currentData()))
            try:
                images, labels = MyDigits().examples(style, STRIP_ROWS)
            except DataError:
                pass  # the count label already says what is wrong
            else:
                arrays = ImageArrays(images, labels, images[:0], labels[:0])
        self.strip_label.setPixmap(gray_pixmap(sample_strip(arrays), 1))
        info = DATASET_INFO.get(self.dataset())
        if info is not None:
            first = arrays.train_images[: 2 * AUGMENT_SAMPLES : 2].numpy()
            self.augment_box.set_images(first, info.mean, info.std)

    @Slot(int)
    def _on_base_combo_changed(self, _index: int) -> None:
        if self.dataset() != "my-digits":
            return
        arrays = self.cache.get(self.dataset(), self.data_dir())
        if arrays is not None:
            self._show_strip(arrays)

    @Slot()
    def refresh_fixes(self) -> None:
        """The dataset's fixes were saved: Use fixes shows (and uses) them."""
        self.fixes_check.refresh()

    def is_loaded(self) -> bool:
        """True when the current dataset is in memory."""
        return self._key() in self.cache

    def is_busy(self) -> bool:
        """True while a load or download runs."""
        return bool(self._tasks)

    # ---------------------------------------------------------------- slots

    @Slot(int)
    def _on_dataset_combo_changed(self, _index: int) -> None:
        if self._applying:
            return
        # Each dataset starts at its own size: CIFAR-10's 32 would blur a folder.
        self._size_explicit = False
        self._applied_size = None
        with QSignalBlocker(self.size_spin):
            self.size_spin.setValue(DEFAULT_IMAGE_SIZE.get(self.dataset(), 28))
        self._mark_size()
        self._show_dataset_rows()
        self._reload()
        self.changed.emit()

    @Slot()
    def _on_dir_edit_finished(self) -> None:
        if self._applying or not self.dir_edit.isModified():
            return
        self.dir_edit.setModified(False)
        self._reload()
        self.changed.emit()

    @Slot()
    def _on_browse_clicked(self) -> None:
        folder = dialogs.get_directory(self, "Data folder", self.data_dir() or "")
        if folder is None:
            return
        self.dir_edit.setText(str(folder))
        self._reload()
        self.changed.emit()

    @Slot()
    def _on_download_clicked(self) -> None:
        if self._download is not None:
            return
        key = self._key()
        dataset, data_dir = key[0], self.data_dir()

        def work(progress: Any, cancel: Any) -> ImageArrays:
            return load_arrays(
                dataset, data_dir, download=True, progress=progress, cancel=cancel
            )

        self.count_label.setText(f"Downloading {DATASET_INFO[dataset].title}…")
        self._start_task(work, key, download=True)
        self._show_download_controls(True)

    @Slot()
    def _on_cancel_clicked(self) -> None:
        if self._download is not None:
            self._download.cancel()
            self.count_label.setText("Cancelling…")

    def _show_download_controls(self, downloading: bool) -> None:
        self.download_row.show_downloading(downloading)
        self.dataset_combo.setEnabled(not downloading and not self._run_active)
        self._update_folder_enabled()

    def set_run_active(self, active: bool) -> None:
        """Lock the choice while a run uses the data."""
        self._run_active = active
        busy = self._download is not None
        self.dataset_combo.setEnabled(not active and not busy)
        for widget in (
            self.base_combo,
            self.replay_spin,
            self.size_spin,
            self.share_spin,
            self.folder_field,
            *self.augment_box.checks.values(),
        ):
            widget.setEnabled(not active)
        self.fixes_check.set_locked(active)
        offline = self.dataset() == FOLDER or DATASET_INFO[self.dataset()].offline
        self.download_button.setEnabled(not active and not offline)
        self._update_folder_enabled()

    def _update_folder_enabled(self) -> None:
        if self.dataset() == FOLDER:
            return  # the image folder's own row; the data folder's is hidden
        # my-digits reads the folder for its replay images.
        offline = DATASET_INFO[self.dataset()].offline and self.dataset() != "my-digits"
        enabled = not offline and not self._run_active and self._download is None
        for widget in (self.dir_edit, self.browse_button):
            widget.setEnabled(enabled)
        self.browse_button.setToolTip(
            "The bundled digits need no folder" if offline else "Choose the data folder"
        )

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Cancel and wait for background loads and checks (window closing)."""
        for task in list(self._tasks):
            task.cancel()
        self.check_row.shutdown(timeout_ms)
        for task in list(self._tasks):
            task.wait(timeout_ms)

    # ---------------------------------------------------------------- image folder

    def _check_target(self) -> tuple[str | None, int, bool]:
        """The folder and image size to check; whether the panel shows them."""
        if self.dataset() == FOLDER:
            return self.data_dir(), self.size_spin.value(), True
        return self.folder_field.folder(), DEFAULT_IMAGE_SIZE[FOLDER], False

    @Slot(str)
    def _on_folder_field_chosen(self, _folder: str) -> None:
        if self.dataset() == FOLDER:
            self._reload()
            self.changed.emit()

    def _show_folder_examples(self) -> None:
        """A few of the folder's images for the augmentation strip."""
        size = self.size_spin.value()
        images = folder_examples(self.data_dir() or "", size)
        # Any statistics show the same: the strip undoes them for display.
        self.augment_box.set_images(images, (0.5,) * 3, (0.25,) * 3)

    @Slot(int)
    def _on_size_spin_changed(self, _value: int) -> None:
        if not self._applying:
            self._size_explicit = True
            self._mark_size()
            if self.dataset() == FOLDER:
                self._show_folder_examples()
            self._emit_changed()

    @Slot()
    def check_data(self) -> None:
        """Check the image folder and show its report; Browse first if none."""
        if self.folder_field.folder() is None:
            self.folder_field.browse()
            if self.folder_field.folder() is None:
                return
        self.check_row.check_data()

    @Slot()
    def request_start(self) -> None:
        """Start was asked for: ``start_cleared`` once the data may train."""
        if self._run_active:
            self.start_cleared.emit()  # Continue or Resume: nothing to check
        else:
            self.check_row.request_start()
