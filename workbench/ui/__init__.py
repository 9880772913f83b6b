"""The window: all Qt, on top of the Qt-free core (``workbench.core``).

It imports the core, never the reverse. Three words mean one thing each here:
a *task* is a background ``QThread`` for work that is not training (loading
data, opening a checkpoint, exporting: ``tasks.py``); a *job* is a run on
several processes that the window starts and follows (``train --nproc N`` as a
child process: ``process_job.py``); *threads* are the OpenMP threads the
trainer computes with (``workbench/core/host/threads.py``), not Qt's.

At the top, what the window owns directly:

main_window      the window: builds panels, plots and menus around one controller
run_controller   the run lifecycle: a Session, the trainer thread, tasks, state
trainer_thread   the QThread a run trains in, one signal per engine event
tasks            background tasks (not training), their errors as text
process_job      a job: ``train --nproc N`` as a child process, stopped cleanly
job_follower     a job's events, read from the ledger its rank 0 appends
dialogs          every dialog the window opens, so tests can replace them
code_view        the Code tab: the current experiment as one PyTorch script
data_check_view  the data check: a folder's report, checked in the background
data_issues_view the data issues' lists: label errors, losses, confusions, copies
issue_fixes      the data issues' fix buttons: relabel, exclude, keep, undo
issue_rows       the data issues' rows: each list's columns, sorted and filtered
stubborn_view    the stubborn errors' tab: images every run on the data got wrong
fixes_card       the before/after card of a run trained again with the fixes
fixes_before_after  both runs' per-class accuracy on the same fixed images
formatting       small shared renderings: gray images, percents, durations
gui_gc           the cycle collector, run in the GUI thread only

The packages:

window/          the window's parts (actions, files, runs, layout, ...), each
                 typed by a Protocol of what it uses (``window/parts.py``)
panels/          the config panels and tabs, one widget per group of knobs
plots/           the plots and painted charts: live curves, confusion matrix
widgets/         small reusable widgets: canvas, previews, combo, highlighter
"""

__all__ = [
    "code_view",
    "data_check_view",
    "data_issues_view",
    "dialogs",
    "fixes_before_after",
    "fixes_card",
    "formatting",
    "gui_gc",
    "issue_fixes",
    "issue_rows",
    "job_follower",
    "main_window",
    "panels",
    "plots",
    "process_job",
    "run_controller",
    "stubborn_view",
    "tasks",
    "trainer_thread",
    "widgets",
    "window",
]
