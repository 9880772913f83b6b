"""The freeze tree: every module and parameter, with a checkbox that trains it.

Checked means trainable (``requires_grad``). Module rows are tristate and
follow their parameters. Edits change the model at once; the window tells a
paused run to reconcile its optimizer when it resumes.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from torch import nn

from workbench.core.freezing import (
    ModuleNode,
    all_but_head,
    count_parameters,
    parameter_tree,
    set_frozen,
)
from workbench.core.models import head_name

NAME_ROLE = Qt.ItemDataRole.UserRole
KIND_ROLE = Qt.ItemDataRole.UserRole + 1
TIMES = " \u00d7 "  # multiplication sign between dimensions


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
        self.summary_label = QLabel(objectName="freezeSummaryLabel")
        self.summary_label.setWordWrap(True)  # big models' counts must not widen it
        layout.addWidget(self.summary_label)
        self._model: nn.Module | None = None
        self._params: dict[str, nn.Parameter] = {}
        self._items: dict[str, QTreeWidgetItem] = {}
        self._editable = True

    def set_editable(self, editable: bool) -> None:
        """Allow or forbid edits; a locked tree stays readable (not greyed out)."""
        self._editable = editable
        self.head_button.setEnabled(editable)
        self.unfreeze_button.setEnabled(editable)
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
        items = []
        stack = [self.tree.invisibleRootItem()]
        while stack:
            item = stack.pop()
            for i in range(item.childCount()):
                items.append(item.child(i))
                stack.append(item.child(i))
        return items

    @property
    def model(self) -> nn.Module | None:
        """The model the tree shows and edits."""
        return self._model

    def set_model(self, model: nn.Module | None) -> None:
        """Show ``model`` (already materialised); None empties the tree."""
        self._model = model
        self._params = dict(model.named_parameters()) if model is not None else {}
        self._items = {}
        with QSignalBlocker(self.tree):
            self.tree.clear()
            if model is not None:
                root = parameter_tree(model)
                item = self._add_module(
                    self.tree.invisibleRootItem(), root, type(model).__name__
                )
                item.setExpanded(True)
                self._expand(item)
        self.head_button.setToolTip(
            f"Freeze everything except the classifier layer '{head_name(model)}'"
            if model is not None
            else ""
        )
        self._update_summary()

    def _expand(self, item: QTreeWidgetItem) -> None:
        for i in range(item.childCount()):
            child = item.child(i)
            if child.data(0, KIND_ROLE) == "module":
                child.setExpanded(True)
                self._expand(child)

    def _add_module(
        self, parent: QTreeWidgetItem, node: ModuleNode, label: str
    ) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent)
        short = node.name.rpartition(".")[2]
        item.setText(0, f"{short} ({node.type_name})" if node.name else label)
        item.setText(2, f"{node.numel:,}")
        item.setTextAlignment(
            2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        item.setData(0, NAME_ROLE, node.name)
        item.setData(0, KIND_ROLE, "module")
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsAutoTristate)
        self._set_checkable(item)
        for info in node.params:
            param = QTreeWidgetItem(item)
            param.setText(0, info.name.rpartition(".")[2])
            param.setText(1, TIMES.join(str(d) for d in info.shape) or "scalar")
            param.setText(2, f"{info.numel:,}")
            param.setTextAlignment(
                2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
            param.setData(0, NAME_ROLE, info.name)
            param.setData(0, KIND_ROLE, "param")
            param.setToolTip(0, info.name)
            param.setCheckState(0, _check(info.trainable))
            self._set_checkable(param)
            self._items[info.name] = param
        for child in node.children:
            self._add_module(item, child, child.name)
        return item

    def parameter_items(self) -> dict[str, QTreeWidgetItem]:
        """The row of each parameter, by full name."""
        return dict(self._items)

    def module_item(self, name: str) -> QTreeWidgetItem | None:
        """The row of module ``name`` ("" is the model itself)."""

        def find(item: QTreeWidgetItem) -> QTreeWidgetItem | None:
            for i in range(item.childCount()):
                child = item.child(i)
                if child.data(0, KIND_ROLE) != "module":
                    continue
                if child.data(0, NAME_ROLE) == name:
                    return child
                hit = find(child)
                if hit is not None:
                    return hit
            return None

        return find(self.tree.invisibleRootItem())

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

    @Slot()
    def _on_unfreeze_button_clicked(self) -> None:
        if self._model is not None:
            set_frozen(self._model, [])
            self.refresh_checks()
            self.mask_changed.emit()
