"""The window opens among damaged files, says what is wrong, and changes none.

Issue 17. One window is built over a runs folder holding a healthy run and a
damaged copy of it for each kind of ledger damage (``tests/fuzz_ledgers.py``),
and a my-digits collection with a damaged index; every reader below the
window is fuzzed in ``tests/core/test_*_fuzz.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.fuzz_ledgers import healthy_run, variants
from tests.fuzz_my_digits import healthy_collection
from tests.ui.helpers import FAST
from tests.ui.test_autosave_ui import _dead_pid
from workbench.core.data.my_digits import INDEX_NAME
from workbench.core.runs.folder import RunFolder
from workbench.core.train.engine import fit, prepare_run
from workbench.ui import dialogs
from workbench.ui.main_window import MainWindow
from workbench.ui.panels.runs_table import COLUMNS
from workbench.ui.run_controller import RunState
from workbench.ui.window import state as window_state

STATUS = COLUMNS.index("Status")


def _snapshot(*roots: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for root in roots for p in root.rglob("*") if p.is_file()}


def _damaged_runs(root: Path) -> tuple[RunFolder, dict[str, str]]:
    """A healthy run and a damaged copy per kind: {copy's id: kind}."""
    healthy = healthy_run(root)
    copies: dict[str, str] = {}
    for variant in variants(healthy):
        if variant.kind in copies.values():
            continue
        # Older than the healthy run: its row stays first (newest first).
        path = root / f"20000101-000000-damaged-{len(copies):02d}"
        shutil.copytree(healthy.path, path)
        RunFolder(path).update(id=path.name)  # a copy with its own id
        (path / variant.file).write_bytes(variant.data)
        copies[path.name] = variant.kind
    return healthy, copies


def test_the_window_opens_among_damaged_files_and_changes_none(
    qtbot, runs_root, my_digits_dir, tmp_path, monkeypatch, error_dialogs
):
    healthy, copies = _damaged_runs(runs_root)
    store = healthy_collection(my_digits_dir)
    index = store.folder / INDEX_NAME
    index.write_bytes(index.read_bytes().replace(b'"label": 7', b'"label": "seven"'))
    config = tmp_path / "damaged.toml"
    config.write_bytes(b'model = "mlp"\nbatch_size = 1e400\n')
    before = _snapshot(runs_root, my_digits_dir, tmp_path / "damaged.toml")
    settings = window_state.open_window_settings()
    settings.setValue("last_config", "[" * 100_000)  # the window's own, damaged
    settings.sync()

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()  # no resume offer: a damaged run is never offered
    assert win.current_config().model == "small-cnn"  # the defaults
    panel = win.runs_panel
    panel.refresh()
    table = panel.table
    rows = {table.run_id(r): r for r in range(table.rowCount())}
    assert set(rows) == {healthy.id, *copies}  # every run listed, none dropped
    damaged = {
        run_id
        for run_id in copies
        if table.item(rows[run_id], STATUS).text() == "damaged"
    }
    marked = {copies[run_id] for run_id in damaged}
    assert marked == {k for k in copies.values() if k.startswith("run.json")} - {
        "run.json field missing"
    }
    assert table.item(rows[healthy.id], STATUS).text() == "finished"
    some = sorted(damaged)[0]
    tip = table.item(rows[some], STATUS).toolTip()
    assert tip.startswith("Damaged: run.json")
    assert "left as they are" in tip

    # Comparing: every run at once, the damaged ones drawn from what is readable.
    panel.select_ids([healthy.id, *copies])
    assert len(panel.selected_runs()) == len(copies) + 1
    assert f"{some} is damaged: " in panel.message_label.text()
    assert not panel.tag_button.isEnabled()
    panel.select_ids([some])
    assert not panel.rename_button.isEnabled()  # its run.json is never rewritten
    assert not panel.tag_button.isEnabled()
    assert panel.reproduce_button.toolTip().startswith(f"Cannot reproduce: run {some}")
    # Its checkpoint is sound: Open opens it (its run.json stays as it is).
    with qtbot.waitSignal(win.controller.opened, timeout=30_000):
        panel.open_button.click()
    assert win.status_label.text().startswith("Opened checkpoint.pt: step 3")
    panel.select_ids([healthy.id])
    assert panel.message_label.text() == ""
    assert panel.rename_button.isEnabled()

    # My digits: the Draw tab says the index is damaged and left as it is.
    text = win.draw_panel.mine.counts_label.text()
    assert f"{index} is damaged" in text
    assert "left as it is" in text

    # File > Load run config with a damaged file: one clear message.
    monkeypatch.setattr(dialogs, "get_open_path", lambda *args: config)
    shown = win.current_config()
    win.files.load_config_dialog()
    [(title, message, _details)] = error_dialogs.shown
    error_dialogs.shown.clear()
    assert title == "Could not load the run config"
    assert message.startswith(f"{config}: batch_size: inf must be a whole number")
    assert win.current_config() == shown
    win.close()
    assert _snapshot(runs_root, my_digits_dir, tmp_path / "damaged.toml") == before


def test_resuming_a_run_with_nothing_left_says_so_and_trains_nothing(
    qtbot, runs_root, monkeypatch
):
    run = prepare_run(FAST)
    fit(run)  # to max_steps: killed after its last save, before "finished"
    folder = RunFolder.create(FAST, origin="command line")
    folder.save(run)
    folder.update(status="running", pid=_dead_pid())
    monkeypatch.setattr(dialogs, "ask_resume", lambda *args: "resume")
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: "Not continued" in win.status_label.text(), timeout=30_000)
    assert win.status_label.text() == (
        "Not continued: nothing left to train: the run is at step 4 and these "
        "settings end it at step 4 (raise max steps or epochs to train on)"
    )
    assert win.controller.state is RunState.IDLE
    assert win.current_run.global_step == 4  # opened, not trained on
    assert [p.name for p in runs_root.iterdir()] == [folder.id]  # no new run
    # Continue with the limit raised trains on; at the limit, Start says why.
    win.training_panel.max_steps_spin.setValue(3)
    assert "nothing left to train: the run is at step 4" in win.status_label.text()
    assert win.training_panel.start_button.text() == "Start"
    win.training_panel.max_steps_spin.setValue(6)
    assert win.training_panel.start_button.text().startswith("Continue")
    win.close()


def test_one_unreadable_drawing_leaves_the_others_in_view(qtbot, my_digits_dir):
    from workbench.ui.panels.my_digits_box import MyDigitsBox

    store = healthy_collection(my_digits_dir)
    broken = store.folder / f"{store.samples()[1].id}-28x28.png"
    broken.write_bytes(b"not a png")
    box = MyDigitsBox()
    qtbot.addWidget(box)
    assert box.sample_list.count() == 4
    text = box.counts_label.text()
    assert text.startswith("5 drawings (")
    said = (
        "1 drawing cannot be shown (kept as they are): a saved drawing cannot be read"
    )
    assert f"{said}: {broken}" in text
    assert broken.read_bytes() == b"not a png"


def test_a_loaded_config_the_fields_cannot_hold_says_what_they_show(
    window, tmp_path, monkeypatch
):
    from workbench.core.config import save_config

    paths = iter([tmp_path / "fast.json", tmp_path / "big.json"])
    monkeypatch.setattr(dialogs, "get_open_path", lambda *args: next(paths))
    save_config(FAST, tmp_path / "fast.json")
    save_config(FAST.replace(lr=1e300, max_steps=2**31 - 1), tmp_path / "big.json")
    window.files.load_config_dialog()
    assert window.status_label.text() == "Loaded run config fast.json"
    window.files.load_config_dialog()  # no OverflowError from a 32-bit field
    assert window.status_label.text() == (
        "Loaded run config big.json; the window shows lr 1e+300 as 10.0, "
        "max_steps 2147483647 as 100000000"
    )
