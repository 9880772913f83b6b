"""Data issues ▸ "Train again with these fixes": the panels' settings trained
with the fixes as an ordinary run of the ledger (Use fixes checked, the
window's own Start), then a card of each class's accuracy before and after, both
runs measured on the same validation images (the split with the fixes)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from workbench.core.checkpoints.io import eval_model, info_of, load_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.data_issues.images import named_images
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import RunSummary, list_runs
from workbench.ui import dialogs
from workbench.ui.fixes_before_after import BeforeAfter, run_before
from workbench.ui.fixes_card import NO_BEFORE, report_text

from .helpers import FAST, run_to_end
from .test_data_issues_window import _find

pytestmark = pytest.mark.gui

TIMEOUT_MS = 120_000
UP, DOWN = "#1a7f37", "#b42318"  # the fine-tune card's green and red


def _run(tmp_path: Path, run_id: str) -> RunSummary:
    return RunSummary(
        folder=RunFolder(tmp_path / run_id),
        id=run_id,
        name="",
        tags=(),
        created="",
        dataset="digits",
        model="mlp",
        status="finished",
        best_val_accuracy=None,
        seconds=0.0,
        global_step=0,
        config={},
    )


def test_the_card_says_each_classes_accuracy_before_and_after(tmp_path):
    # Rows: the label as fixed; columns: predicted. No fox image is left.
    before = np.array([[8, 2, 0], [1, 3, 0], [0, 0, 0]])
    after = np.array([[9, 1, 0], [2, 2, 0], [0, 0, 0]])
    result = BeforeAfter(("cat", "dog", "fox"), before, after, 14, 1, 2)
    old, new = _run(tmp_path, "run-before"), _run(tmp_path, "run-after")
    text = report_text(result, old, new)
    assert text.startswith(
        "<b>Trained again with the fixes: finished</b>, accuracy before \u2192 "
        "after on the same 14 validation images<br>"
    )
    assert "Before: run-before, the newest finished run of these settings" in text
    assert "After: run-after." in text
    assert (
        "The images: the validation split with the fixes (1 excluded, 2 "
        "relabelled, counted as their new class)."
    ) in text
    # 11/14 both times: no change, no colour.
    assert "<b>Overall</b> (14): 78.6% \u2192 <b>78.6%</b> (+0.0 pts)<br>" in text
    assert (
        f"cat (10): 80.0% \u2192 <b>90.0%</b> "
        f"<span style='color:{UP}'>(+10.0 pts)</span><br>"
    ) in text
    assert (
        f"dog (4): 75.0% \u2192 <b>50.0%</b> "
        f"<span style='color:{DOWN}'>(-25.0 pts)</span><br>"
    ) in text
    assert "fox (" not in text
    assert "No validation image left of: fox." in text
    stopped = report_text(result, old, new, stopped=True)
    assert stopped.startswith("<b>Trained again with the fixes: stopped early</b>")
    # Ten classes: two columns of five lines, side by side.
    ten = BeforeAfter(tuple("abcdefghij"), np.eye(10), np.eye(10), 10, 0, 0)
    lines = report_text(ten, old, new).split("<table")[1]
    assert lines.index("e (1)") < lines.index("</td>") < lines.index("f (1)")
    # Without a run before: this run's scores alone, and why.
    alone = BeforeAfter(("cat", "dog", "fox"), None, after, 14, 0, 0)
    text = report_text(alone, None, new)
    assert NO_BEFORE in text
    assert "cat (10): <b>90.0%</b><br>" in text
    assert "the fixes change training images only" in text


def _hand_scores(run: RunSummary, images: torch.Tensor, labels: torch.Tensor):
    """Each class's accuracy and the overall one of ``run``'s final weights."""
    payload = load_checkpoint(run.folder.checkpoint_path)
    info = info_of(payload)
    x = (images.float().unsqueeze(1) / 255 - info.mean[0]) / info.std[0]
    with torch.no_grad():
        predicted = eval_model(payload)(x).argmax(1)
    right = predicted == labels
    per_class = [float(right[labels == c].float().mean()) for c in range(10)]
    return per_class, float(right.float().mean())


def test_train_again_trains_with_the_fixes_and_compares_on_the_same_images(
    qtbot, window, runs_root, monkeypatch, tmp_path
):
    monkeypatch.setattr(dialogs, "confirm", lambda *_args: True)  # train the folds
    cfg = FAST.replace(precision="fp32")  # the card's numbers, run.json's exactly
    window.apply_config(cfg)
    run_to_end(qtbot, window)  # the run before: these settings, no fixes
    (before,) = list_runs(runs_root)
    window.reset_run()
    window.apply_config(cfg.replace(folds=3))
    dialog = _find(qtbot, window)
    finder = window.data_issues
    assert not dialog.retrain_button.isEnabled()  # no fix yet
    # Fixes of two validation images (one excluded, one relabelled) and of
    # many training images (so the run learns something else): the validation
    # split changes.
    issues = dialog.issues
    assert issues is not None
    given = {
        name: int(label)
        for name, label in zip(issues.names, issues.labels, strict=True)
    }
    assert dialog.fixes.record(
        [
            ("val #0", "exclude", ""),
            ("val #1", "relabel", str((given["val #1"] + 1) % 10)),
            ("train #0", "relabel", str((given["train #0"] + 1) % 10)),
            *((f"train #{i}", "exclude", "") for i in range(1, 400)),
        ]
    )
    entries = dialog.fixes_entries()
    assert [action for _key, action, _label in entries].count("relabel") == 2
    assert len(entries) == 402
    assert dialog.retrain_button.isEnabled()
    assert "as the Data panel's Use fixes does" in dialog.retrain_button.toolTip()

    with qtbot.waitSignal(window.controller.run_finished, timeout=TIMEOUT_MS):
        dialog.retrain_button.click()
        assert window.state != "idle"  # the window's own run: its Stop stops it
        assert "Training again with fixes 'fixes'" in dialog.card.text()
        assert not dialog.retrain_button.isEnabled()
    qtbot.waitUntil(lambda: not finder.rerun.busy, timeout=TIMEOUT_MS)
    assert dialog.retrain_button.isEnabled()
    # An ordinary run of the ledger, with the fixes: the panels say so too.
    (after,) = [r for r in list_runs(runs_root) if r.config["fixes"]]
    assert after.config["fixes"] == [list(e) for e in entries]
    assert (after.config["folds"], after.config["fixes_name"]) == (1, "fixes")
    assert window.data_panel.fixes_check.isChecked()
    assert window.current_config().fixes == entries
    assert run_before(TrainConfig.from_dict(after.config)).id == before.id

    # Both runs' final weights on the validation images as fixed, by hand.
    fixed = named_images(TrainConfig.from_dict(after.config))
    images, labels = fixed.arrays.test_images, fixed.arrays.test_labels
    assert len(labels) == 359  # 360, one excluded
    old, old_all = _hand_scores(before, images, labels)
    new, new_all = _hand_scores(after, images, labels)
    # The run with fixes validated on these very images: its run.json agrees.
    recorded = json.loads((after.folder.path / "run.json").read_text())
    assert new == pytest.approx(recorded["class_scores"]["recall"], abs=1e-6)
    result = finder.rerun.result
    assert result is not None
    assert (result.images, result.excluded, result.relabelled) == (359, 1, 1)
    support = result.after.sum(axis=1)
    assert support.tolist() == torch.bincount(labels, minlength=10).tolist()
    assert np.diag(result.before) / support == pytest.approx(old)
    assert np.diag(result.after) / support == pytest.approx(new)
    text = dialog.card.text()
    assert f"Before: {before.id}, the newest finished run" in text
    assert f"After: {after.id}." in text
    assert "after on the same 359 validation images" in text
    assert "the validation split with the fixes (1 excluded, 1 relabelled" in text
    assert old != new  # the fixes changed what the run learnt
    overall = (
        f"<b>Overall</b> (359): {100 * old_all:.1f}% \u2192 <b>{100 * new_all:.1f}%"
    )
    assert overall in text
    for c in range(10):
        line = (
            f"{c} ({support[c]}): {100 * old[c]:.1f}% \u2192 <b>{100 * new[c]:.1f}%</b>"
        )
        assert line in text
    assert window.status_label.text().startswith("Trained again with the fixes: ")
    # It reads at the default size and at 800x600 (looked at by eye too).
    for size, name in (((900, 640), "card.png"), ((800, 600), "card-800.png")):
        dialog.resize(*size)
        qtbot.waitUntil(lambda s=size: (dialog.width(), dialog.height()) == s)
        assert dialog.grab().save(str(tmp_path / name))
        assert dialog.card.isVisible()
        assert dialog.card.height() >= 80
        assert dialog.tabs.height() >= 150
