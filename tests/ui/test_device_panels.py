"""Device, loader and speed options: unavailable ones are disabled and say why."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from workbench.core.train import precision
from workbench.core.train.devices import DeviceInfo, list_devices
from workbench.ui.panels.device import DevicePanel
from workbench.ui.panels.loader import LoaderPanel
from workbench.ui.panels.speed import SpeedPanel

pytestmark = pytest.mark.gui

FAKE = [
    DeviceInfo("cpu", "cpu", "Test CPU", True),
    DeviceInfo("cuda", "cuda", "CUDA", False, "no CUDA GPU or driver found"),
    DeviceInfo(
        "mps", "mps", "Apple GPU (Metal)", False, "MPS needs macOS on Apple silicon"
    ),
]
FAKE_CUDA = [
    DeviceInfo("cpu", "cpu", "Test CPU", True),
    DeviceInfo("cuda:0", "cuda", "Test GPU 80GB", True),
    DeviceInfo("mps", "mps", "Apple GPU (Metal)", False, "MPS needs macOS"),
]


def _items(combo):
    model = combo.model()
    return [
        (
            combo.itemData(i),
            model.item(i).isEnabled(),
            combo.itemData(i, Qt.ItemDataRole.ToolTipRole),
        )
        for i in range(combo.count())
    ]


def test_unavailable_devices_are_disabled_with_the_reason(qtbot):
    panel = DevicePanel(devices=FAKE)
    qtbot.addWidget(panel)
    items = {spec: (enabled, tip) for spec, enabled, tip in _items(panel.device_combo)}
    assert items["cpu"][0]
    assert items["auto"][0]
    assert items["cuda"] == (False, "Unavailable: no CUDA GPU or driver found")
    assert items["mps"] == (False, "Unavailable: MPS needs macOS on Apple silicon")
    assert "Test CPU" in panel.device_combo.itemText(panel.device_combo.findData("cpu"))
    assert panel.kind() == "cpu"


def test_available_gpu_is_listed_by_name(qtbot):
    panel = DevicePanel(devices=FAKE_CUDA)
    qtbot.addWidget(panel)
    index = panel.device_combo.findData("cuda:0")
    assert "Test GPU 80GB" in panel.device_combo.itemText(index)
    assert panel.device_combo.model().item(index).isEnabled()
    assert panel.kind() == "cuda"  # auto picks the GPU


def test_this_machines_devices(window):
    combo = window.device_panel.device_combo
    for info in list_devices():
        index = combo.findData(info.spec)
        assert index >= 0
        assert combo.model().item(index).isEnabled() == info.available
        if not info.available:
            assert info.reason in combo.itemData(index, Qt.ItemDataRole.ToolTipRole)


def test_pin_memory_only_where_it_acts(qtbot):
    panel = LoaderPanel()
    qtbot.addWidget(panel)
    panel.set_device_kind("cpu")
    assert not panel.pin_check.isEnabled()
    assert "CPU" in panel.pin_check.toolTip()
    assert "CUDA" in panel.pin_check.toolTip()
    panel.set_device_kind("cuda")
    assert not panel.pin_check.isEnabled()  # the fast path copies no batches
    assert not panel.workers_spin.isEnabled()
    panel.loader_combo.setCurrentIndex(panel.loader_combo.findData("dataloader"))
    assert panel.pin_check.isEnabled()
    assert panel.workers_spin.isEnabled()
    panel.pin_check.setChecked(True)
    panel.workers_spin.setValue(2)
    assert panel.config_values() == {
        "batch_size": panel.batch_spin.value(),
        "loader": "dataloader",
        "workers": 2,
        "pin_memory": True,
        "class_weights": "none",
        "balanced_sampler": False,
    }
    panel.set_device_kind("cpu")
    assert panel.config_values()["pin_memory"] is False


def test_fp16_needs_cuda(qtbot):
    panel = SpeedPanel()
    qtbot.addWidget(panel)
    combo = panel.precision_combo
    fp16 = combo.findData("fp16")
    panel.set_device_kind("cpu")
    assert not combo.model().item(fp16).isEnabled()
    assert "CUDA" in combo.itemData(fp16, Qt.ItemDataRole.ToolTipRole)
    assert combo.model().item(combo.findData("bf16")).isEnabled()
    panel.set_device_kind("cuda")
    assert combo.model().item(fp16).isEnabled()
    combo.setCurrentIndex(fp16)
    panel.set_device_kind("cpu")  # falls back to the default
    assert panel.config_values()["precision"] == "auto"


@pytest.mark.parametrize("native", [True, False])
def test_auto_precision_says_what_it_picks_on_the_chosen_device(
    qtbot, monkeypatch, native
):
    monkeypatch.setattr(precision, "native_bf16_cpu", lambda: native)
    panel = SpeedPanel()
    qtbot.addWidget(panel)
    combo = panel.precision_combo
    assert combo.currentData() == "auto"  # the default
    panel.set_device_kind("cpu")
    assert combo.itemText(0) == f"auto ({'bf16' if native else 'fp32'} here)"
    tip = combo.itemData(0, Qt.ItemDataRole.ToolTipRole)
    assert ("computes natively" if native else "has no native bf16") in tip
    panel.set_device_kind("cuda")
    assert combo.itemText(0) == "auto (fp32 here)"
    assert panel.config_values()["precision"] == "auto"


def test_compile_mode_follows_the_toggle_and_times_are_measured(qtbot):
    panel = SpeedPanel()
    qtbot.addWidget(panel)
    assert not panel.mode_combo.isEnabled()
    panel.compile_check.setChecked(True)
    assert panel.mode_combo.isEnabled()
    assert "slower" in panel.compile_check.toolTip()
    panel.show_measurements(0.0123, 0.0150, 21.5)
    assert panel.step_label.text() == "eager 12.3 ms · compiled 15.0 ms"
    assert "21.5 s" in panel.compile_label.text()


def test_step_times_with_and_without_compile_are_kept_apart(qtbot, window):
    cfg = window.current_config()
    window.run_view.run_config = cfg
    window.run_view._measure(step_s=0.010)
    window.run_view.run_config = cfg.replace(compile=True)
    window.run_view._measure(step_s=0.020, compile_s=30.0)
    assert window.speed_panel.step_label.text() == "eager 10.0 ms · compiled 20.0 ms"
