"""The freeze tree's model: the current run's, or a preview of the chosen one.

:class:`ModelPreview` decides what the freeze tree and the Model panel show
when the panels change: the run's model when it has the chosen architecture,
classes and input shape, else a freshly built preview whose mask the next run
takes over. A large preview (:func:`estimate_parameters` reaches
:data:`BACKGROUND_FROM`: most torchvision models) is built in a
:class:`TaskThread` while the tree says "Building …" and the window stays
usable. Only the newest choice is built: a newer one cancels the build under
way and starts once it has stopped, and a build that ends for a choice no
longer wanted is dropped. Start pressed meanwhile waits for the preview (the
run takes its freeze mask) and then starts.

When a preview replaces the shown model (another model or dataset), the frozen
parameters carry over by name; what cannot is said once in the status bar.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from torch import nn

from workbench.core.config import ConfigError
from workbench.core.model_offer import ModelKey, model_key
from workbench.core.models.builtins import head_name
from workbench.core.models.preview import (
    BACKGROUND_FROM,
    build_preview,
    device_memory,
    estimate_parameters,
    training_cost,
)
from workbench.core.models.private_random import BuildCancelled
from workbench.core.models.state_dict_match import load_exact
from workbench.core.train.feature_cache import trainable_before_head
from workbench.core.train.freezing import (
    FreezeError,
    carry_mask,
    count_parameters,
    frozen_names,
    set_frozen,
)
from workbench.ui.run_controller import RunController, RunState
from workbench.ui.tasks import TaskThread, describe_error, start_task
from workbench.ui.window.parts import PreviewWindow

log = logging.getLogger(__name__)

# Whose memory a run on each device kind uses.
MEMORY_OWNER = {"cuda": "the GPU", "mps": "this computer", "cpu": "this computer"}
CANCELLED = "Start cancelled: another model was chosen while it waited"


@dataclass(frozen=True, slots=True)
class Mask:
    """The mask the next shown model takes.

    ``source`` "": a config's names or patterns, applied as given; else the
    model whose frozen parameters carry over by name.
    """

    names: tuple[str, ...]
    source: str = ""


@dataclass(frozen=True, slots=True)
class _Build:
    """A preview asked for: ``token`` tells it from any later one."""

    token: int
    key: ModelKey
    seed: int
    mask: Mask | None
    estimate: int


class ModelPreview(QObject):
    """The model in ``window``'s freeze tree (the MainWindow: a PreviewWindow)."""

    built = Signal()  # a preview built in the background is in the tree now

    def __init__(self, window: PreviewWindow, controller: RunController) -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.key: ModelKey | None = None  # what the tree shows or builds
        self._pending: _Build | None = None
        self._token = 0
        self._task: TaskThread | None = None
        self._task_token = 0
        self._unshown: Mask | None = None  # the mask of a build that failed
        self._start_waits = False  # Start was pressed while a preview builds
        self._start_nproc: int | None = None
        self._note = ""
        window.freeze_panel.mask_changed.connect(self._on_freeze_panel_mask_changed)

    @property
    def building(self) -> bool:
        """A preview is being built; the tree shows none meanwhile."""
        return self._pending is not None

    # ------------------------------------------------------------------ choosing

    def sync(self, frozen: tuple[str, ...] | None = None) -> None:
        """Show the run's model if it has the chosen architecture, else a preview.

        ``frozen`` (names or patterns) becomes the shown model's mask; None keeps
        it, carried over by name when another model replaces it.
        """
        w = self.window
        key = w.chosen_model_key()
        run = w.current_run
        shown = w.freeze_panel.model
        self._note = ""
        if run is not None and model_key(run.config) == key:
            if self._drop_pending():
                self._cancel_start(CANCELLED)
            model = run.model
        elif key == self.key and self._pending is not None:
            if frozen is not None:
                self._pending = replace(self._pending, mask=Mask(tuple(frozen)))
            self._show_cost(self._pending.estimate)
            return
        elif key == self.key and shown is not None:
            model = shown
        else:
            self._replace(key, frozen)
            return
        if frozen is not None:
            try:
                set_frozen(model, frozen)
            except FreezeError as exc:
                w.set_status(f"Freeze mask ignored: {exc}")
        if model is not shown:
            self.show_model(model)
            if run is not None and model is run.model:  # back to the run's model
                w.training_panel.show_position(run.global_step, run.total_steps)
        elif frozen is not None:
            w.freeze_panel.refresh_checks()
            self.update_counts()
            self._predict_cache()
        else:
            self.update_counts()  # the device, and so the memory, may be another

    def _replace(self, key: ModelKey, frozen: tuple[str, ...] | None) -> None:
        """A fresh preview of ``key``: built here if small, else in a thread."""
        w = self.window
        mask = Mask(tuple(frozen)) if frozen is not None else self._mask_now()
        self._cancel_start(CANCELLED)
        estimate = estimate_parameters(key)
        if estimate is not None and estimate >= BACKGROUND_FROM:
            self._build_later(key, mask, estimate)
            return
        was_building = self._drop_pending()
        try:
            model = build_preview(key, seed=w.training_panel.seed())
        except ConfigError as exc:  # a broken model file, a too small image
            w.model_panel.show_problem(str(exc))
            if was_building:  # nothing to show: not the build's "Building…"
                w.freeze_panel.set_model(None)
                self._unshown = mask
            return
        w.model_panel.show_problem("")
        self._adopt(model, key, mask)

    def _mask_now(self) -> Mask | None:
        """What the tree's selection is, to carry over to the next model."""
        if self._pending is not None:
            return self._pending.mask
        model = self.window.freeze_panel.model
        if model is None:
            return self._unshown
        names = tuple(frozen_names(model))
        source = self.key[0] if self.key is not None else type(model).__name__
        return Mask(names, source) if names else None

    def _adopt(self, model: nn.Module, key: ModelKey, mask: Mask | None) -> None:
        """Show a new preview of ``key`` with ``mask`` (and the loaded weights)."""
        w = self.window
        loaded = self.controller.session.initial_weights
        if w.current_run is None and loaded is not None and loaded.model_key == key:
            load_exact(model, loaded.state)  # the next run starts from these
        self._unshown = None
        self._apply_mask(model, mask, key[0])
        self.show_model(model)
        w.training_panel.clear_progress()  # the run's progress is not this model's

    def _apply_mask(self, model: nn.Module, mask: Mask | None, name: str) -> None:
        if mask is None or not mask.names:
            return
        w = self.window
        if not mask.source:
            try:
                set_frozen(model, mask.names)
            except FreezeError as exc:
                w.set_status(f"Freeze mask ignored: {exc}")
            return
        carried = carry_mask(mask.names, (n for n, _ in model.named_parameters()))
        keep = set(carried.frozen)
        for param_name, param in model.named_parameters():
            param.requires_grad_(param_name not in keep)
        self._note = carried.message(mask.source, name)
        if self._note:
            w.set_status(self._note)

    def take_note(self) -> str:
        """What the last change said about the freeze selection ("" if nothing)."""
        note, self._note = self._note, ""
        return note

    # ------------------------------------------------------------------ showing

    def show_model(self, model: nn.Module) -> None:
        """Show ``model`` in the freeze tree, its counts and what it costs."""
        if self._pending is not None:  # the tree shows this one now
            self._drop_pending()
            self._cancel_start("")
        w = self.window
        w.freeze_panel.set_model(model)
        self.key = w.chosen_model_key()
        self.update_counts()
        # A run's own status replaces it once the run has decided (RunStarted).
        w.model_panel.predict_feature_cache(trainable_before_head(model))

    def frozen_mask(self) -> tuple[str, ...]:
        """The freeze tree's mask (what the next run freezes)."""
        if self._pending is not None:
            mask = self._pending.mask
            return mask.names if mask is not None else ()
        model = self.window.freeze_panel.model
        return tuple(frozen_names(model)) if model is not None else ()

    def update_counts(self) -> None:
        """The Model panel's counts, head and cost for the tree's model."""
        model = self.window.freeze_panel.model
        if model is not None:
            total, trainable = count_parameters(model)
            self.window.model_panel.show_counts(total, trainable)
            self.window.model_panel.show_head(head_name(model))
            self._show_cost(total)

    def _show_cost(self, parameters: int) -> None:
        text = ""
        if parameters >= BACKGROUND_FROM:  # a large model: say what it takes
            kind = self.window.device_panel.kind()
            owner = MEMORY_OWNER.get(kind, "this computer")
            text = training_cost(parameters, device_memory(kind), owner)
        self.window.model_panel.show_training_cost(text)

    def forget(self) -> None:
        """The next :meth:`sync` builds afresh (a new run, an opened run)."""
        self._drop_pending()
        self.key = None

    @Slot()
    def _on_freeze_panel_mask_changed(self) -> None:
        self.update_counts()
        # While paused the engine reconciles the optimizer before the next batch.
        self.controller.mask_changed(list(self.frozen_mask()))
        self.window.update_actions()
        self._predict_cache()

    def _predict_cache(self) -> None:
        """The mask changed: the next run decides anew what the last one did.

        A paused run keeps its line: it says itself if it falls back.
        """
        model = self.window.freeze_panel.model
        if self.controller.state is RunState.IDLE and model is not None:
            self.window.model_panel.predict_feature_cache(trainable_before_head(model))

    # ------------------------------------------------------------------ building

    def _build_later(self, key: ModelKey, mask: Mask | None, estimate: int) -> None:
        w = self.window
        self._token += 1
        seed = w.training_panel.seed()
        self._pending = _Build(self._token, key, seed, mask, estimate)
        self.key = key
        w.model_panel.show_problem("")
        w.freeze_panel.show_building(
            f"Building {key[0]}\u2026 (about {estimate:,} parameters)"
        )
        w.model_panel.show_head("")
        w.model_panel.show_building(key[0], estimate)
        self._show_cost(estimate)
        w.training_panel.clear_progress()
        if self._task is None:
            self._start_task()
        elif self._task_token != self._token:
            self._task.cancel()  # the newest choice starts when it has stopped

    def _start_task(self) -> None:
        build = self._pending
        assert build is not None

        def work(_progress: Any, cancel: Any) -> tuple[int, nn.Module]:
            return build.token, build_preview(build.key, build.seed, cancel)

        self._task_token = build.token
        self._task = start_task(
            self,
            "model-preview",
            work,
            succeeded=self._on_task_succeeded,
            failed=self._on_task_failed,
            finished=self._on_task_finished,
        )

    @Slot(object)
    def _on_task_succeeded(self, result: tuple[int, nn.Module]) -> None:
        token, model = result
        build = self._pending
        if build is None or build.token != token:
            return  # built for a choice no longer wanted: dropped
        self._pending = None
        self._adopt(model, build.key, build.mask)
        w = self.window
        w.code_view.mark_stale()
        w.update_actions()
        if w.current_run is None:
            w.draw_tab.refresh_reader()
        self.built.emit()
        if self._start_waits:
            self._start_waits = False
            w.start(self._start_nproc)

    @Slot(object)
    def _on_task_failed(self, error: Exception) -> None:
        build = self._pending
        if build is None or build.token != self._task_token:
            return
        if isinstance(error, BuildCancelled):  # the window closes
            return
        self._pending = None
        self._unshown = build.mask
        message, _details = describe_error(error)
        self.window.model_panel.show_problem(message)
        self.window.freeze_panel.show_building(f"{build.key[0]} cannot be built")
        self._cancel_start(f"Start cancelled: {message}")

    @Slot()
    def _on_task_finished(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.deleteLater()
        build = self._pending
        if build is not None and build.token != self._task_token:
            self._start_task()  # the newest choice, asked for meanwhile

    def _drop_pending(self) -> bool:
        """Forget the build asked for (a running one is cancelled); was there one?"""
        dropped = self._pending is not None
        self._pending = None
        if self._task is not None:
            self._task.cancel()
        return dropped

    # ------------------------------------------------------------------ Start

    def start_waits(self, nproc: int | None = None) -> bool:
        """While a preview is built, Start waits for it; True if it does."""
        build = self._pending
        if build is None:
            return False
        self._start_waits, self._start_nproc = True, nproc
        self.window.set_status(
            f"Start waits for {build.key[0]} to be built (the run takes the freeze "
            "mask it shows)\u2026"
        )
        return True

    def _cancel_start(self, why: str) -> None:
        if self._start_waits:
            self._start_waits = False
            if why:
                self.window.set_status(why)

    def shutdown(self) -> None:
        """Stop a build under way and wait for its thread (the window closes)."""
        self._pending = None
        self._start_waits = False
        if self._task is not None:
            self._task.cancel()
            self._task.wait()
