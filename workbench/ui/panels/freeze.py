"""The freeze tree: every module and parameter, with a checkbox that trains it.

Checked means trainable (``requires_grad``). Module rows are tristate and
follow their parameters. Edits change the model at once; the window tells a
paused run to reconcile its optimizer when it resumes.

Big networks (``resnet50``: 161 parameter tensors) get a filter box, "Freeze up
to here" on any row (context menu, or the menu key / Shift+F10 on the current
row) and presets: all but the head, the first N blocks, nothing frozen.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QSignalBlocker, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from torch import nn

from workbench.core.models.builtins import head_name
from workbench.core.train.freezing import (
    ModuleNode,
    all_but_head,
    count_parameters,
    first_blocks,
    names_up_to,
    parameter_blocks,
    parameter_tree,
    set_frozen,
)

NAME_ROLE = Qt.ItemDataRole.UserRole
KIND_ROLE = Qt.ItemDataRole.UserRole + 1
TIMES = " \u00d7 "  # multiplication sign between dimensions
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def _check(trainable: bool) -> Qt.CheckState:
    return Qt.CheckState.Checked if trainable else Qt.CheckState.Unchecked


class FreezePanel(QWidget):
    """A tree of ``named_parameters()`` with freeze checkboxes and shortcuts."""

    mask_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        title = QLabel("<b>Freeze</b> — checked parameters train")
        self.lock_label = QLabel(
            "locked while the run trains: Pause to edit", objectName="freezeLockLabel"
        )
        self.lock_label.setStyleSheet("color: #8a5a00;")
        # A line of its own that wraps and keeps its space while hidden: showing
        # it on Start must not widen the column (and shrink the plots) or push
        # the tree down.
        self.lock_label.setWordWrap(True)
        policy = self.lock_label.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.lock_label.setSizePolicy(policy)
        self.lock_label.setVisible(False)
        layout.addWidget(title)
        layout.addWidget(self.lock_label)
        self.filter_edit = QLineEdit(objectName="freezeFilterEdit")
        self.filter_edit.setPlaceholderText("Filter modules and parameters")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter_edit_text_changed)
        layout.addWidget(self.filter_edit)
        self.tree = QTreeWidget(objectName="freezeTree")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Module / parameter", "Shape", "Count"])
        self.tree.setUniformRowHeights(True)
        self.tree.setIndentation(14)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setToolTip(
            "Uncheck to freeze (requires_grad = False). While a run is paused, "
            "changes take effect when it resumes."
        )
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        # Custom menus also come from the keyboard (menu key, Shift+F10): then the
        # position is the current row's, or no row and the current one is used.
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._on_tree_menu_requested)
        self.row_menu = QMenu(self.tree, objectName="freezeRowMenu")
        self.up_to_action = self.row_menu.addAction("Freeze up to here")
        self.up_to_action.triggered.connect(self._on_up_to_action_triggered)
        layout.addWidget(self.tree, 1)
        buttons = QHBoxLayout()
        self.head_button = QPushButton(
            "Freeze all but the head", objectName="freezeHeadButton"
        )
        self.head_button.clicked.connect(self._on_head_button_clicked)
        self.unfreeze_button = QPushButton(
            "Unfreeze all", objectName="unfreezeAllButton"
        )
        self.unfreeze_button.clicked.connect(self._on_unfreeze_button_clicked)
        buttons.addWidget(self.head_button)
        buttons.addWidget(self.unfreeze_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        blocks = QHBoxLayout()
        self.first_button = QPushButton(
            "Freeze the first", objectName="freezeFirstBlocksButton"
        )
        self.first_button.clicked.connect(self._on_first_button_clicked)
        self.blocks_spin = QSpinBox(objectName="freezeBlocksSpin")
        self.blocks_spin.setRange(1, 1)
        self.blocks_spin.setToolTip("N: how many blocks to freeze")
        self.blocks_spin.valueChanged.connect(self._on_blocks_spin_value_changed)
        blocks.addWidget(self.blocks_spin)
        blocks.addWidget(self.first_button)
        blocks.addStretch(1)
        layout.addLayout(blocks)
        self.summary_label = QLabel(objectName="freezeSummaryLabel")
        self.summary_label.setWordWrap(True)  # big models' counts must not widen it
        layout.addWidget(self.summary_label)
        self._model: nn.Module | None = None
        self._params: dict[str, nn.Parameter] = {}
        self._items: dict[str, QTreeWidgetItem] = {}
        self._modules: dict[str, QTreeWidgetItem] = {}
        self._blocks: list[str] = []
        # Every row in tree order: (item, lowercase text the filter searches,
        # index of its parent row or -1), and the expansion to restore on clear.
        self._rows: list[tuple[QTreeWidgetItem, str, int]] = []
        self._expanded_before: list[bool] | None = None
        self._editable = True
        self._on_blocks_spin_value_changed(self.blocks_spin.value())

    def set_editable(self, editable: bool) -> None:
        """Allow or forbid edits; a locked tree stays readable (not greyed out)."""
        self._editable = editable
        self.head_button.setEnabled(editable)
        self.unfreeze_button.setEnabled(editable)
        self.first_button.setEnabled(editable)
        self.blocks_spin.setEnabled(editable)
        self.up_to_action.setEnabled(editable)
        self.lock_label.setVisible(not editable)
        with QSignalBlocker(self.tree):
            for item in self._all_items():
                self._set_checkable(item)

    def is_editable(self) -> bool:
        """True when the user may change the mask (idle, or a paused run)."""
        return self._editable

    def _set_checkable(self, item: QTreeWidgetItem) -> None:
        flags = item.flags()
        if self._editable:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        else:
            flags &= ~Qt.ItemFlag.ItemIsUserCheckable
        item.setFlags(flags)

    def _all_items(self) -> list[QTreeWidgetItem]:
        return [item for item, _, _ in self._rows]

    @property
    def model(self) -> nn.Module | None:
        """The model the tree shows and edits."""
        return self._model

    def set_model(self, model: nn.Module | None) -> None:
        """Show ``model`` (already materialised); None empties the tree."""
        self._model = model
        self._params = dict(model.named_parameters()) if model is not None else {}
        self._items = {}
        self._modules = {}
        self._rows = []
        self._expanded_before = None
        # No layout or repaint per inserted row: one when the tree is complete.
        self.tree.setUpdatesEnabled(False)
        try:
            with QSignalBlocker(self.tree):
                self.tree.clear()
                if model is not None:
                    root = parameter_tree(model)
                    # Built detached, inserted once: the tree's insertion work
                    # happens once, not per row.
                    top = QTreeWidgetItem()
                    self._fill_module(top, -1, root, model)
                    self.tree.addTopLevelItem(top)
                    self.tree.expandAll()
            if self.filter_edit.text().strip():
                self._apply_filter(self.filter_edit.text())
        finally:
            self.tree.setUpdatesEnabled(True)
        blocks = parameter_blocks(model) if model is not None else []
        self._blocks = blocks
        self.blocks_spin.setRange(min(1, len(blocks)), max(1, len(blocks)))
        self._on_blocks_spin_value_changed(self.blocks_spin.value())
        self.head_button.setToolTip(
            f"Freeze everything except the classifier layer '{head_name(model)}'"
            if model is not None
            else ""
        )
        self._update_summary()

    def show_building(self, text: str) -> None:
        """No model while one is built elsewhere: one greyed row says which."""
        self.set_model(None)
        row = QTreeWidgetItem([text])
        row.setFlags(Qt.ItemFlag.NoItemFlags)  # nothing to check, select or edit
        with QSignalBlocker(self.tree):
            self.tree.addTopLevelItem(row)
        self.summary_label.setText(text)

    def _fill_module(
        self,
        item: QTreeWidgetItem,
        parent_row: int,
        node: ModuleNode,
        model: nn.Module,
    ) -> None:
        short = node.name.rpartition(".")[2]
        label = f"{short} ({node.type_name})" if node.name else type(model).__name__
        item.setText(0, label)
        item.setToolTip(0, f"{node.name or label} ({node.type_name})")
        item.setText(2, f"{node.numel:,}")
        item.setTextAlignment(2, RIGHT)
        item.setData(0, NAME_ROLE, node.name)
        item.setData(0, KIND_ROLE, "module")
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsAutoTristate)
        self._set_checkable(item)
        self._modules[node.name] = item
        row = len(self._rows)
        self._rows.append((item, f"{node.name} {label}".lower(), parent_row))
        for info in node.params:
            param = QTreeWidgetItem(item)
            param.setText(0, info.name.rpartition(".")[2])
            param.setText(1, TIMES.join(str(d) for d in info.shape) or "scalar")
            param.setText(2, f"{info.numel:,}")
            param.setTextAlignment(2, RIGHT)
            param.setData(0, NAME_ROLE, info.name)
            param.setData(0, KIND_ROLE, "param")
            param.setToolTip(0, info.name)
            param.setCheckState(0, _check(info.trainable))
            self._set_checkable(param)
            self._items[info.name] = param
            self._rows.append((param, info.name.lower(), row))
        for child in node.children:
            self._fill_module(QTreeWidgetItem(item), row, child, model)

    def parameter_items(self) -> dict[str, QTreeWidgetItem]:
        """The row of each parameter, by full name."""
        return dict(self._items)

    def module_item(self, name: str) -> QTreeWidgetItem | None:
        """The row of module ``name`` ("" is the model itself)."""
        return self._modules.get(name)

    # ------------------------------------------------------------------ filter

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        if not needle:
            for item, _, _ in self._rows:
                item.setHidden(False)
            if self._expanded_before is not None:
                for (item, _, _), expanded in zip(
                    self._rows, self._expanded_before, strict=True
                ):
                    item.setExpanded(expanded)
            self._expanded_before = None
            return
        if self._expanded_before is None:
            self._expanded_before = [item.isExpanded() for item, _, _ in self._rows]
        shown = [False] * len(self._rows)
        # Children come after their parents: walk backwards so a row knows
        # whether anything below it matched before it is decided.
        for row in range(len(self._rows) - 1, -1, -1):
            item, haystack, parent = self._rows[row]
            visible = shown[row] or needle in haystack
            item.setHidden(not visible)
            if visible:
                if shown[row]:
                    item.setExpanded(True)  # an ancestor of a match: open it
                if parent >= 0:
                    shown[parent] = True

    @Slot(str)
    def _on_filter_edit_text_changed(self, text: str) -> None:
        self.tree.setUpdatesEnabled(False)
        try:
            self._apply_filter(text)
        finally:
            self.tree.setUpdatesEnabled(True)

    # ------------------------------------------------------ freeze up to here

    def freeze_up_to(self, name: str) -> None:
        """Freeze every parameter up to and within ``name``; the rest train."""
        if self._model is None or not self._editable:
            return
        set_frozen(self._model, names_up_to(self._model, name))
        self.refresh_checks()
        self.mask_changed.emit()

    @Slot(QPoint)
    def _on_tree_menu_requested(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos) or self.tree.currentItem()
        if item is None:
            return
        if self.tree.itemAt(pos) is None:  # from the keyboard: at the current row
            pos = self.tree.visualItemRect(item).center()
        self.up_to_action.setData(item.data(0, NAME_ROLE))
        self.row_menu.popup(self.tree.viewport().mapToGlobal(pos))

    @Slot()
    def _on_up_to_action_triggered(self) -> None:
        name = self.up_to_action.data()
        if isinstance(name, str):
            self.freeze_up_to(name)

    def refresh_checks(self) -> None:
        """Show ``requires_grad`` as it is now (after a change made elsewhere)."""
        with QSignalBlocker(self.tree):
            for name, item in self._items.items():
                item.setCheckState(0, _check(self._params[name].requires_grad))
        # Tristate parents are computed when painted: repaint them.
        self.tree.viewport().update()
        self._update_summary()

    def _update_summary(self) -> None:
        if self._model is None:
            self.summary_label.setText("")
            return
        total, trainable = count_parameters(self._model)
        frozen = total - trainable
        self.summary_label.setText(
            f"{trainable:,} of {total:,} parameters train; {frozen:,} frozen"
        )

    @Slot(QTreeWidgetItem, int)
    def _on_tree_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if column != 0 or item.data(0, KIND_ROLE) != "param" or not self._editable:
            return  # module rows propagate to their parameters, which land here
        param = self._params.get(item.data(0, NAME_ROLE))
        if param is None:
            return
        trainable = item.checkState(0) == Qt.CheckState.Checked
        if param.requires_grad != trainable:
            param.requires_grad_(trainable)
            self._update_summary()
            self.mask_changed.emit()

    @Slot()
    def _on_head_button_clicked(self) -> None:
        if self._model is not None:
            set_frozen(self._model, all_but_head(self._model))
            self.refresh_checks()
            self.mask_changed.emit()

    @Slot(int)
    def _on_blocks_spin_value_changed(self, n: int) -> None:
        self.first_button.setText(f"Freeze the first {n} block{'s' * (n != 1)}")
        self.first_button.setToolTip(
            "Freeze the first top-level modules that own parameters ("
            + ", ".join(self._blocks[:n])
            + "); the rest train"
        )

    @Slot()
    def _on_first_button_clicked(self) -> None:
        if self._model is not None:
            set_frozen(self._model, first_blocks(self._model, self.blocks_spin.value()))
            self.refresh_checks()
            self.mask_changed.emit()

    @Slot()
    def _on_unfreeze_button_clicked(self) -> None:
        if self._model is not None:
            set_frozen(self._model, [])
            self.refresh_checks()
            self.mask_changed.emit()
