"""Run ▸ Diagnose speed…: the diagnosis, measured gains, Apply sets the panels."""

from __future__ import annotations

from workbench.core.perf.speed_doctor import DoctorReport, Finding
from workbench.core.perf.timed_rounds import DoctorProgress
from workbench.ui.run_controller import RunState
from workbench.ui.window import speed_doctor_dialog

FOUND = (
    Finding(
        "the fast loader",
        "loader",
        "no per-image work",
        (("loader", "fast"), ("workers", 0)),
        3.2,
        3.0,
        3.5,
        4,
        True,
        "recommended",
    ),
    Finding(
        "bf16",
        "precision",
        "half the bytes",
        (("precision", "bf16"),),
        1.01,
        0.97,
        1.04,
        4,
        False,
        "within the noise",
    ),
)


def _fake_diagnose(cfg, **_kwargs):
    for done in range(1, 4):
        yield DoctorProgress(done, 3, done, 3, "baseline")
    yield DoctorReport(
        device="cpu", precision="fp32", images_per_s=1234.0, noise=0.03, steps=8,
        rounds=4, data_share=0.8, diagnosis="data-bound: 80% of each step waits "
        "for the loader", findings=FOUND, seconds=2.0,
    )  # fmt: skip


def test_the_doctor_shows_its_advice_and_apply_sets_only_the_panels(
    qtbot, window, monkeypatch
):
    monkeypatch.setattr(speed_doctor_dialog, "diagnose", _fake_diagnose)
    window.apply_config(window.current_config().replace(loader="dataloader"))
    before = window.current_config()
    window.commands.diagnose_speed.trigger()
    dialog = window.speed_doctor
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not dialog.running, timeout=10_000)
    assert dialog.diagnosis_label.text().startswith("data-bound: 80%")
    assert dialog.status_label.text().startswith("Timed: 1,234 img/s on cpu")
    assert dialog.table.rowCount() == 2
    assert dialog.table.item(0, 1).text() == "3.20x (3.00-3.50)"
    assert dialog.table.item(1, 2).text() == "within the noise"
    assert dialog.table.cellWidget(1, 3) is None  # no Apply for what did not win
    assert window.current_config() == before  # the doctor changed nothing itself
    dialog.table.cellWidget(0, 3).click()
    after = window.current_config()
    assert after.loader == "fast"
    assert after.workers == 0
    assert after.replace(loader="dataloader") == before
    assert "Applied the fast loader (--loader fast --workers 0)" in (
        window.status_label.text()
    )
    dialog.close()


def test_the_doctor_waits_for_a_run_to_end(window, monkeypatch):
    monkeypatch.setattr(window.controller, "state", RunState.RUNNING)
    assert speed_doctor_dialog.open_speed_doctor(window) is None
    assert "Stop or finish the run first" in window.status_label.text()
