"""The window's menus, actions and keyboard shortcuts.

:func:`build_actions` creates every ``QAction`` once, puts it in its menu and
connects it to the method that does the work; buttons elsewhere trigger the
same actions, so a shortcut and a click always do the same thing.

Shortcuts in use: Ctrl+O, Ctrl+Shift+O, Ctrl+S, Ctrl+E, Ctrl+Q (File); Ctrl+Return or
F5, F6 or Pause, Shift+F5 or Ctrl+., Ctrl+L, Ctrl+Shift+L, Ctrl+Shift+G, Ctrl+Shift+P
(Run); Ctrl+Shift+D, Ctrl+Shift+I (Data); Ctrl+1 to Ctrl+6, Ctrl+M, Ctrl+Shift+M (View);
in the Draw tab Ctrl+I, Esc, Ctrl+Z, 0-9, Enter; Delete in my digits' list.

Start goes through the Data panel first (:meth:`DataPanel.request_start`): a
run on an image folder checks it and starts only when it can train.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from workbench.ui.window.parts import ActionsWindow
from workbench.ui.window.summary_dialog import show_model_summary

START_KEYS = (QKeySequence("Ctrl+Return"), QKeySequence("F5"))
PAUSE_KEYS = (QKeySequence("F6"), QKeySequence(Qt.Key.Key_Pause))
STOP_KEYS = (QKeySequence("Shift+F5"), QKeySequence("Ctrl+."))
CHECK_DATA_KEYS = (QKeySequence("Ctrl+Shift+D"),)
FIND_ISSUES_KEYS = (QKeySequence("Ctrl+Shift+I"),)
FIND_LR_KEYS = (QKeySequence("Ctrl+L"),)
SWEEP_KEYS = (QKeySequence("Ctrl+Shift+L"),)
PROFILE_KEYS = (QKeySequence("Ctrl+Shift+P"),)
DOCTOR_KEYS = (QKeySequence("Ctrl+Shift+G"),)
TABS = (
    ("Training &curves", "showCurvesAction"),
    ("&Draw a digit", "showDrawAction"),
    ("&Evaluation", "showEvaluationAction"),
    ("Layer &health", "showHealthAction"),
    ("&Runs", "showRunsAction"),
    ("C&ode", "showCodeAction"),
)


def keys_text(keys: tuple[QKeySequence, ...]) -> str:
    """``Ctrl+Return or F5``, as the platform writes shortcuts."""
    return " or ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys)


@dataclass(frozen=True)
class WindowActions:
    """Every action of the window's menus."""

    open: QAction
    recent_menu: QMenu
    load_weights: QAction
    save: QAction
    export: QAction
    load_config: QAction
    save_config: QAction
    quit: QAction
    start: QAction
    pause: QAction
    stop: QAction
    reset: QAction
    find_rate: QAction
    sweep: QAction
    profile: QAction
    diagnose_speed: QAction
    check_data: QAction
    find_issues: QAction
    tabs: tuple[QAction, ...]
    model_column: QAction
    model_summary: QAction


def _action(
    window: ActionsWindow,
    text: str,
    name: str,
    slot: Callable[..., Any],
    keys: tuple[QKeySequence, ...] = (),
    tip: str = "",
) -> QAction:
    action = QAction(text, window)
    action.setObjectName(name)
    if keys:
        action.setShortcuts(list(keys))
    if tip:
        action.setStatusTip(tip)
        action.setToolTip(tip)
    action.triggered.connect(slot)
    window.addAction(action)
    return action


def build_actions(window: ActionsWindow) -> WindowActions:
    """Create the File, Run, Data and View menus of ``window``; wire the buttons."""
    files = window.files
    actions = WindowActions(
        open=_action(
            window,
            "&Open checkpoint…",
            "openCheckpointAction",
            files.open_checkpoint_dialog,
            (QKeySequence(QKeySequence.StandardKey.Open),),
        ),
        recent_menu=QMenu("Open &recent", window, objectName="recentMenu"),
        load_weights=_action(
            window,
            "Load &weights into the model…",
            "loadWeightsAction",
            files.load_weights_dialog,
            (QKeySequence("Ctrl+Shift+O"),),
            "Start the next run from a checkpoint's or state_dict's weights; the "
            "doctor lists what fits and can load part (a new head)",
        ),
        save=_action(
            window,
            "&Save checkpoint…",
            "saveCheckpointAction",
            files.save_checkpoint_dialog,
            (QKeySequence(QKeySequence.StandardKey.Save),),
        ),
        export=_action(
            window,
            "&Export model…",
            "exportModelAction",
            window.exporter.export_dialog,
            (QKeySequence("Ctrl+E"),),
            "TorchScript, torch.export and ONNX files of the current run's model, "
            "each checked against it on the validation images",
        ),
        load_config=_action(
            window, "&Load run config…", "loadConfigAction", files.load_config_dialog
        ),
        save_config=_action(
            window, "Save run &config…", "saveConfigAction", files.save_config_dialog
        ),
        quit=_action(
            window, "&Quit", "quitAction", window.close, (QKeySequence("Ctrl+Q"),)
        ),
        start=_action(
            window,
            "&Start",
            "startAction",
            window.data_panel.request_start,  # start_cleared: window.start
            START_KEYS,
        ),
        pause=_action(window, "&Pause", "pauseAction", window.toggle_pause, PAUSE_KEYS),
        stop=_action(window, "S&top", "stopAction", window.stop, STOP_KEYS),
        reset=_action(window, "&New run", "resetAction", window.reset_run),
        find_rate=_action(
            window,
            "Find &learning rate…",
            "findLrAction",
            window.find_learning_rate,
            FIND_LR_KEYS,
            "A range test on the run Start would train, its suggestion checked "
            "by short probe runs; the run is left exactly as it was",
        ),
        sweep=_action(
            window,
            "S&weep…",
            "sweepAction",
            window.sweep,
            SWEEP_KEYS,
            "Search settings with Optuna on the panels' settings: every trial is "
            "a run of the ledger",
        ),
        profile=_action(
            window,
            "&Profile the next 20 steps",
            "profileAction",
            window.profile_steps,
            PROFILE_KEYS,
            "Record the running run's next 20 steps with torch.profiler (after 3 "
            "to warm up): a Chrome trace in the run folder and the top operators",
        ),
        diagnose_speed=_action(
            window,
            "&Diagnose speed…",
            "diagnoseSpeedAction",
            window.diagnose_speed,
            DOCTOR_KEYS,
            "Time the panels' settings against each change that could make them "
            "faster (loader, workers, bf16, memory format, batch); recommends only "
            "what measured faster than the noise, and changes nothing itself",
        ),
        check_data=_action(
            window,
            "&Check image folder…",
            "checkDataAction",
            window.data_panel.check_data,
            CHECK_DATA_KEYS,
            "Images per class and every problem with its file, before training "
            "on your own image folder",
        ),
        find_issues=_action(
            window,
            "Find data &issues…",
            "findDataIssuesAction",
            window.find_data_issues,
            FIND_ISSUES_KEYS,
            "Likely label errors, top losses, confused classes and duplicates, "
            "from a cross-validation of the panels' settings (reused, or trained "
            "first)",
        ),
        tabs=tuple(
            _action(
                window,
                text,
                name,
                lambda _=False, i=index: window.tabs.setCurrentIndex(i),
                (QKeySequence(f"Ctrl+{index + 1}"),),
            )
            for index, (text, name) in enumerate(TABS)
        ),
        model_column=_action(
            window,
            "&Model and freeze tree",
            "showModelColumnAction",
            lambda checked=False: window.main_splitter.show_model_column(checked),
            (QKeySequence("Ctrl+M"),),
            "Show or fold the model and freeze tree column (it folds on narrow "
            "windows so the tabs keep their room)",
        ),
        model_summary=_action(
            window,
            "Model &summary…",
            "modelSummaryAction",
            lambda _=False: show_model_summary(window),
            (QKeySequence("Ctrl+Shift+M"),),
            "Each layer's output shape, parameters and multiply-accumulates at "
            "this input size, and the activation memory at this batch size",
        ),
    )
    actions.model_column.setCheckable(True)
    file_menu = window.menuBar().addMenu("&File")
    file_menu.addAction(actions.open)
    file_menu.addMenu(actions.recent_menu)
    file_menu.addAction(actions.load_weights)
    file_menu.addAction(actions.save)
    file_menu.addAction(actions.export)
    file_menu.addSeparator()
    file_menu.addAction(actions.load_config)
    file_menu.addAction(actions.save_config)
    file_menu.addSeparator()
    file_menu.addAction(actions.quit)
    run_menu = window.menuBar().addMenu("&Run")
    for action in (actions.start, actions.pause, actions.stop):
        run_menu.addAction(action)
    run_menu.addSeparator()
    run_menu.addAction(actions.reset)
    run_menu.addAction(actions.find_rate)
    run_menu.addAction(actions.sweep)
    run_menu.addAction(actions.diagnose_speed)
    run_menu.addAction(actions.profile)
    data_menu = window.menuBar().addMenu("&Data")
    data_menu.addAction(actions.check_data)
    data_menu.addAction(actions.find_issues)
    view_menu = window.menuBar().addMenu("&View")
    for action in actions.tabs:
        view_menu.addAction(action)
    view_menu.addSeparator()
    view_menu.addAction(actions.model_column)
    view_menu.addAction(actions.model_summary)
    # The column also folds by itself and by its handle: show what it is now.
    view_menu.aboutToShow.connect(
        lambda: actions.model_column.setChecked(
            window.main_splitter.model_column_shown()
        )
    )

    # Once the data check passed (or there is none), Start goes on.
    window.data_panel.start_cleared.connect(window.start)
    panel = window.training_panel
    panel.start_keys = keys_text(START_KEYS)
    panel.bind_actions(
        actions.start,
        actions.pause,
        actions.stop,
        actions.reset,
        pause_keys=keys_text(PAUSE_KEYS),
        stop_keys=keys_text(STOP_KEYS),
    )
    return actions
