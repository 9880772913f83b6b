"""The Model panel: every model by family, a filter, weights, the user's model files.

Also what follows from the choice elsewhere: the Data panel's preprocessing
line, the Draw tab of a 3-channel model (image files, no canvas) and the
pretrained weights' download, with progress and Cancel, from a local server.
"""

from __future__ import annotations

import http.server
import threading
import time
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import torch
import torchvision
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from workbench.core.models import pretrained as weights_cache
from workbench.core.predict import load_image, preprocess
from workbench.ui import dialogs
from workbench.ui.panels.model import ModelPanel
from workbench.ui.window import state as window_state

from .helpers import BACK_TO_IDLE, FAST, run_to_end

pytestmark = pytest.mark.gui


def choose(window, model: str, weights: str | None = None) -> None:
    combo = window.model_panel.model_combo
    combo.setCurrentIndex(combo.findData(model))
    if weights is not None:
        box = window.model_panel.weights_combo
        box.setCurrentIndex(box.findData(weights))


# ---------------------------------------------------------------- the list


def test_every_model_is_listed_under_its_family(qtbot):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    combo = panel.model_combo
    assert combo.group_of("mlp") == "Built-in"
    assert combo.group_of("resnet18") == "ResNet"
    assert combo.group_of("mobilenet_v3_small") == "MobileNet"
    assert combo.group_of("vit_b_16") == "Vision Transformer"
    assert combo.group_of("efficientnet_b0") == "EfficientNet"
    # Family titles are bold rows nobody can choose; the built-ins come first.
    assert combo.itemText(0) == "Built-in"
    assert combo.is_header(0)
    header = combo.model().item(0)
    assert not header.isEnabled()
    assert not header.isSelectable()
    assert header.font().bold()
    assert combo.currentData() == "small-cnn"
    assert "torchvision" in combo.itemData(combo.findData("resnet18"), Qt.ToolTipRole)


def test_the_search_box_filters_by_name_and_enter_picks_a_match(qtbot):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    combo, view = panel.model_combo, panel.model_combo.view()
    panel.search_edit.setText("mobilenet")
    shown = combo.shown_models()
    assert shown
    assert all("mobilenet" in name for name in shown)
    assert "mobilenet_v3_small" in shown
    assert view.isRowHidden(combo.findData("resnet18"))
    resnet_header = combo.findText("ResNet")
    assert view.isRowHidden(resnet_header)  # no ResNet left: its title goes too
    assert not view.isRowHidden(combo.findText("MobileNet"))
    with qtbot.waitSignal(panel.changed):
        panel.search_edit.returnPressed.emit()
    assert panel.model() == shown[0]
    panel.search_edit.setText("RESNET1")  # case does not matter
    assert set(combo.shown_models()) == {
        "resnet18",
        "resnet101",
        "resnet152",
        "wide_resnet101_2",
    }
    panel.search_edit.clear()
    assert len(combo.shown_models()) == combo.count() - sum(
        combo.is_header(row) for row in range(combo.count())
    )


# ---------------------------------------------------------------- weights


def test_resnet18_with_imagenet_weights_sets_the_config(qtbot, window):
    panel = window.model_panel
    weights = panel.weights_combo
    assert window.current_config().model == "mlp"
    assert not weights.isEnabled()  # a built-in: random weights only
    assert "Pretrained weights come with torchvision" in weights.toolTip()
    assert not panel.head_label.isVisibleTo(window)

    choose(window, "resnet18")
    assert window.current_config().model == "resnet18"
    assert window.current_config().weights == "none"
    assert weights.isEnabled()
    choices = [weights.itemData(i) for i in range(weights.count())]
    assert choices == ["none", "default", "IMAGENET1K_V1"]
    assert weights.itemText(1) == "default (IMAGENET1K_V1)"
    # The preview in the freeze tree is the 3-channel ResNet (built aside).
    qtbot.waitUntil(lambda: not window.preview.building, timeout=60_000)
    assert type(window.freeze_panel.model).__name__ == "ResNet"
    assert window.chosen_model_key()[2][0] == 3

    choose(window, "resnet18", "IMAGENET1K_V1")
    cfg = window.current_config()
    assert (cfg.model, cfg.weights) == ("resnet18", "IMAGENET1K_V1")
    assert panel.head_label.isVisibleTo(window)
    assert "classifier head (fc) is replaced" in panel.head_label.text()
    line = window.data_panel.preprocessing_label.line()
    assert line.startswith("Preprocessing: 28x28; gray repeated to 3 channels")
    assert "from ResNet18_Weights.IMAGENET1K_V1" in line
    assert "mean (0.485, 0.456, 0.406)" in line
    # Another ResNet keeps the weights choice; a built-in goes back to none.
    choose(window, "resnet34")
    assert panel.weights() == "IMAGENET1K_V1"
    choose(window, "small-cnn")
    assert panel.weights() == "none"
    assert window.current_config().weights == "none"
    assert "gray" not in window.data_panel.preprocessing_label.line()


def test_the_preprocessing_line_follows_model_weights_and_dataset(qtbot, window):
    label = window.data_panel.preprocessing_label
    assert label.isVisibleTo(window)
    assert label.line().startswith("Preprocessing: 28x28; mean (")
    choose(window, "mobilenet_v3_small")
    assert "gray repeated to 3 channels" in label.line()
    assert "from" not in label.line()
    choose(window, "mobilenet_v3_small", "default")
    assert "MobileNet_V3_Small_Weights.IMAGENET1K_V1" in label.line()
    combo = window.data_panel.dataset_combo
    combo.setCurrentIndex(combo.findData("cifar10"))
    # CIFAR-10 takes the weights' size (224), says so and what it costs, and
    # has colour: nothing repeated. The Image size field shows it, automatic.
    assert label.line().startswith(
        "Preprocessing: 224x224 (auto: the weights' size, 49x the pixels and time "
        "of 32x32); mean (0.485"
    )
    size = window.data_panel.size_spin
    assert size.text() == "224 px (auto)"
    assert window.current_config().image_size is None
    size.setValue(96)  # as the user would: their own size, no longer automatic
    assert size.text() == "96 px"
    assert window.current_config().image_size == 96
    assert label.line().startswith("Preprocessing: 96x96; mean (0.485")


def test_restored_window_shows_the_saved_model_and_weights(qtbot, window):
    choose(window, "resnet18", "IMAGENET1K_V1")
    window.save_window_state()
    from workbench.ui.main_window import MainWindow

    again = MainWindow()
    qtbot.addWidget(again)
    assert again.model_panel.model() == "resnet18"
    assert again.model_panel.weights() == "IMAGENET1K_V1"
    again.close()


# ---------------------------------------------------------------- model files

GOOD = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, num_classes, in_channels=1):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.LazyLinear(32), nn.ReLU())
        self.head = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.head(self.body(x))


def _private():
    pass
"""

BROKEN = {
    "syntax": ("def Net(:\n    pass\n", "Net", ":1: syntax error"),
    "init": (
        "from torch import nn\n\n\nclass Net(nn.Module):\n"
        "    def __init__(self, num_classes):\n"
        "        super().__init__()\n"
        "        raise RuntimeError('no layers yet')\n",
        "Net",
        "no layers yet",
    ),
    "shape": (
        "from torch import nn\n\n\ndef Net(num_classes):\n"
        "    return nn.Sequential(nn.Flatten(), nn.Linear(784, 3))\n",
        "Net",
        "(2, 10)",
    ),
    "name": (GOOD, "Nope", "no 'Nope' in it"),
}


def add_file(monkeypatch, panel, path: Path, name: str | None) -> list:
    asked: list = []

    def get_item(parent, title, label, items):
        asked.append(list(items))
        return name

    monkeypatch.setattr(dialogs, "get_open_path", lambda *a, **k: path)
    monkeypatch.setattr(dialogs, "get_item", get_item)
    panel.add_file_button.click()
    return asked


def test_a_model_file_is_added_listed_remembered_and_trusted_plainly(
    qtbot, window, tmp_path, monkeypatch
):
    path = tmp_path / "my_net.py"
    path.write_text(GOOD)
    panel = window.model_panel
    asked = add_file(monkeypatch, panel, path, "Net")
    assert asked == [["Net"]]  # found with ast: the file did not run for this
    spec = f"{path.resolve()}:Net"
    assert window.current_config().model == spec
    assert panel.model_combo.group_of(spec) == "Model files"
    assert panel.model_combo.currentText() == "my_net.py:Net"
    assert panel.trust_label.isVisibleTo(window)
    assert panel.trust_label.text() == (
        f"This runs the code in {path.resolve()}: only add files you trust."
    )
    assert not panel.problem_label.isVisibleTo(window)
    assert not panel.weights_combo.isEnabled()
    assert "head.weight" in dict(window.freeze_panel.model.named_parameters())
    # Remembered: a new panel lists it; choosing a built-in hides the notice.
    again = ModelPanel()
    qtbot.addWidget(again)
    assert again.model_combo.findData(spec) >= 0
    assert window_state.model_files(window_state.open_window_settings()) == [spec]
    choose(window, "mlp")
    assert not panel.trust_label.isVisibleTo(window)
    # The Draw tab reads with it on the canvas (one 28x28 channel).
    choose(window, spec)
    assert not window.draw_panel.photo_mode


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_model_file_says_what_and_where(
    qtbot, window, tmp_path, monkeypatch, kind
):
    source, name, expected = BROKEN[kind]
    path = tmp_path / f"broken_{kind}.py"
    path.write_text(source)
    panel = window.model_panel
    add_file(monkeypatch, panel, path, name)
    assert panel.problem_label.isVisibleTo(window)
    text = panel.problem_label.text()
    assert str(path) in text, text
    assert expected in text, text
    if kind == "syntax":  # nothing to choose from: not added
        assert window.current_config().model == "mlp"
        return
    assert window.current_config().model == f"{path.resolve()}:{name}"
    assert panel.trust_label.isVisibleTo(window)
    if kind == "init":  # the line of the raise in the user's file
        assert f"{path}:7" in text or "line 7" in text, text
    # Another model clears the message; the window still works.
    choose(window, "mlp")
    assert not panel.problem_label.isVisibleTo(window)
    assert type(window.freeze_panel.model).__name__ == "MLP"


# ---------------------------------------------------------------- Draw tab


@pytest.mark.slow
def test_a_resnet18_run_reads_image_files_not_the_canvas(
    qtbot, window, tmp_path, monkeypatch
):
    window.apply_config(FAST.replace(model="resnet18", max_steps=1, batch_size=8))
    panel = window.draw_panel
    assert panel.photo_mode  # before a run too
    run_to_end(qtbot, window, timeout=120_000)
    assert window.current_run.config.model == "resnet18"
    # The run's model is the one the freeze tree shows (same 3-channel key).
    assert window.freeze_panel.model is window.current_run.model
    window.tabs.setCurrentWidget(window.draw_page)
    assert panel.photo_mode
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Try an image"
    assert not panel.canvas.isVisibleTo(window)
    assert panel.photo.isVisibleTo(window)
    picture = tmp_path / "seven.png"
    pixels = np.zeros((40, 40), np.uint8)
    pixels[8:32, 18:22] = 255
    Image.fromarray(pixels).save(picture)
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(picture)], "")
    )
    panel.open_image_button.click()
    reading = panel.reading
    assert reading is not None
    assert tuple(reading.input.shape) == (1, 3, 28, 28)
    assert len(reading.probabilities) == 10
    # The digits' recipe (centred, gray repeated to 3 channels), as `predict` does.
    expected = preprocess(load_image(picture), "digits", "resnet18")
    assert torch.equal(reading.input, expected)
    assert torch.equal(reading.input[0, 0], reading.input[0, 2])


@pytest.mark.slow
def test_the_model_panel_says_whether_the_feature_cache_is_on(qtbot, window):
    backbone = ("conv1.*", "bn1.*", "layer*")  # all but the head, fc
    window.apply_config(
        FAST.replace(model="resnet18", max_steps=2, batch_size=8, frozen=backbone)
    )
    run_to_end(qtbot, window, timeout=120_000)
    label = window.model_panel.feature_cache_label
    assert label.isVisibleTo(window)
    assert label.text().startswith(
        "Feature cache: on: the head (fc) trains on the frozen layers' kept output ("
    )
    window.apply_config(FAST.replace(model="resnet18", max_steps=2, batch_size=8))
    run_to_end(qtbot, window, timeout=120_000)
    assert label.text() == "Feature cache: off: every layer trains"


# ---------------------------------------------------------------- download

WEIGHTS_FILE = "squeezenet1_1-b8a52dc0.pth"


class _SlowFiles(http.server.BaseHTTPRequestHandler):
    """Serves one file in small pieces, slowly while ``slow`` is set."""

    body = b""
    slow = threading.Event()
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        if not self.path.endswith("/" + WEIGHTS_FILE):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        try:
            for start in range(0, len(self.body), 64 * 1024):
                self.wfile.write(self.body[start : start + 64 * 1024])
                if self.slow.is_set():
                    time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def weights_server(tmp_path, monkeypatch):
    path = tmp_path / WEIGHTS_FILE
    model = torchvision.models.get_model("squeezenet1_1", weights=None)
    torch.save(model.state_dict(), path)
    _SlowFiles.body = path.read_bytes()
    _SlowFiles.requests = []
    _SlowFiles.slow.set()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SlowFiles)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(
        weights_cache.MIRROR_ENV, f"http://127.0.0.1:{server.server_port}"
    )
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    # The file made here cannot have the SHA-256 torchvision's name promises.
    monkeypatch.setattr(weights_cache, "_HASH_PREFIX", __import__("re").compile("^$"))
    yield _SlowFiles
    server.shutdown()
    server.server_close()


def test_weights_download_shows_progress_and_stop_cancels_it(
    qtbot, window, weights_server, error_dialogs
):
    window.apply_config(
        FAST.replace(model="squeezenet1_1", weights="IMAGENET1K_V1", max_steps=1)
    )
    cache = weights_cache.cache_dir()
    window.training_panel.start_button.click()
    status = window.status_label
    qtbot.waitUntil(lambda: "Downloading" in status.text(), timeout=60_000)
    text = status.text()
    assert "SqueezeNet1_1_Weights.IMAGENET1K_V1" in text
    assert WEIGHTS_FILE in text
    assert "MB" in text
    assert window.training_panel.stop_button.isEnabled()
    with qtbot.waitSignal(window.controller.state_changed, **BACK_TO_IDLE):
        window.training_panel.stop_button.click()
    assert window.current_run is None
    notes = window.training_panel.notes_label.text()
    assert "The download was cancelled: the run did not start" in notes
    assert not (cache / WEIGHTS_FILE).exists()
    assert not list(cache.glob("*.part"))  # nothing half-written is left
    # At full speed the next Start downloads the file and trains.
    weights_server.slow.clear()
    run_to_end(qtbot, window, timeout=120_000)
    assert (cache / WEIGHTS_FILE).is_file()
    assert window.current_run.config.weights == "IMAGENET1K_V1"
    assert window.model_panel.head_label.isVisibleTo(window)
    assert "(classifier.1)" in window.model_panel.head_label.text()


# ---------------------------------------------------------------- earlier layouts


def test_a_checkpoint_of_the_earlier_small_cnn_opens_under_the_built_ins(
    qtbot, window, tmp_path
):
    """A format-2 small-cnn checkpoint holds the layout now named small-cnn-v1."""
    from workbench.core.checkpoints.io import checkpoint_dict, write_checkpoint
    from workbench.core.data.sources import load_arrays
    from workbench.core.train.engine import fit, prepare_run

    cfg = FAST.replace(model="small-cnn-v1")
    run = prepare_run(cfg, arrays=load_arrays("digits"))
    fit(run)
    payload = checkpoint_dict(run)
    payload["format_version"] = 2
    payload["config"] = {**payload["config"], "model": "small-cnn"}
    path = write_checkpoint(tmp_path / "earlier.pt", payload)
    with qtbot.waitSignal(
        window.controller.state_changed, timeout=30_000, **BACK_TO_IDLE
    ):
        window.files.open_checkpoint(path)
    combo = window.model_panel.model_combo
    assert window.model_panel.model() == "small-cnn-v1"
    assert combo.group_of("small-cnn-v1") == "Built-in"
    assert "before 2026-12" in window.model_panel.model_combo.currentText() + (
        combo.itemData(combo.currentIndex(), Qt.ToolTipRole)
    )
    assert window.current_run.global_step == 4
