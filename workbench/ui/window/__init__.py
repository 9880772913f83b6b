"""The window's parts: what ``MainWindow`` builds and delegates to.

Each takes the window typed by a small Protocol of what it uses (``parts``),
never ``main_window`` itself (that would be an import cycle).

parts            the Protocols: what each part uses of the window
layout           the columns and tabs, sized for the window they are in
state            window state in QSettings: geometry, folders, recent, config
actions          the menus, actions and keyboard shortcuts
files            File menu work: checkpoints, weights, configs, recent, resume
export           File > Export model: the formats, verified, shown as a card
run_view         the current run as the window shows it: progress, curves
preview          the freeze tree's model: the run's, or a preview built aside
job_view         Start with Processes > 1: a job the window follows live
folds            Start with Folds >= 2: the K fold runs of a cross-validation
data_issues      Data > Find data issues: held-out predictions, then the lists
runs             the Runs tab's wiring: overlay, open and reproduce past runs
teach            the Draw tab's wiring: the reader's weights, fine-tuning
summary_dialog   View > Model summary: each layer's shape, parameters, MACs
lr_finder        Run > Find learning rate: the range test's curve, probes checked
sweep_dialog     Run > Sweep: the search space, the study followed, the best trial
speed_doctor_dialog  Run > Diagnose speed: changes timed, advice past the noise
profile_view     Run > Profile the next 20 steps: the trace and its top operators
fixes_rerun      Train again with these fixes: the run, then its before/after card
"""

__all__ = [
    "actions",
    "data_issues",
    "export",
    "files",
    "fixes_rerun",
    "folds",
    "job_view",
    "layout",
    "lr_finder",
    "parts",
    "preview",
    "profile_view",
    "run_view",
    "runs",
    "speed_doctor_dialog",
    "state",
    "summary_dialog",
    "sweep_dialog",
    "teach",
]
