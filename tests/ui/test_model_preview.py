"""The freeze tree's preview of a large model is built aside (issue 34, items 35,
27, 26): the window stays usable and says "Building…", only the last choice is
built, Start waits for it, the freeze selection carries over to the next model,
and the Model panel says what training costs and what the feature cache does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from PySide6.QtCore import QTimer

from workbench.core.models.private_random import BuildCancelled
from workbench.ui.panels.model import feature_cache_line
from workbench.ui.window import preview as preview_part

from .helpers import FAST, run_to_end

pytestmark = pytest.mark.gui

HIDDEN = ("hidden.1.weight", "hidden.1.bias", "hidden.3.weight", "hidden.3.bias")


def choose(window, model: str) -> None:
    combo = window.model_panel.model_combo
    combo.setCurrentIndex(combo.findData(model))


def choose_dataset(window, dataset: str) -> None:
    combo = window.data_panel.dataset_combo
    combo.setCurrentIndex(combo.findData(dataset))


def frozen(window) -> list[str]:
    model = window.freeze_panel.model
    return [n for n, p in model.named_parameters() if not p.requires_grad]


@dataclass
class Gate:
    """Preview builds that wait in their thread until ``release`` is set."""

    release: threading.Event = field(default_factory=threading.Event)
    started: list[str] = field(default_factory=list)
    honour_cancel: bool = True


@pytest.fixture
def slow_builds(monkeypatch) -> Iterator[Gate]:
    """Every preview counts as large, and its build blocks until released."""
    gate = Gate()
    real = preview_part.build_preview

    def build(key, seed=None, cancel=lambda: False):
        gate.started.append(key[0])
        # Never for ever: built on the GUI thread it would hang the suite.
        for _ in range(250):
            if gate.release.wait(0.02):
                break
            if gate.honour_cancel and cancel():
                raise BuildCancelled("superseded")
        return real(key, seed)  # a stale build comes back too: it must be dropped

    monkeypatch.setattr(preview_part, "estimate_parameters", lambda key: 600_000_000)
    monkeypatch.setattr(preview_part, "build_preview", build)
    yield gate
    gate.release.set()


# ---------------------------------------------------------------- built aside


def test_a_large_preview_is_built_aside_while_the_window_works(
    qtbot, window, slow_builds
):
    choose(window, "cnn")  # returns at once: the build waits in its thread
    assert window.preview.building
    assert slow_builds.started == ["cnn"]
    panel = window.freeze_panel
    assert panel.model is None
    assert panel.summary_label.text().startswith("Building cnn\u2026")
    assert panel.tree.topLevelItem(0).text(0).startswith("Building cnn\u2026")
    assert "building cnn" in window.model_panel.count_label.text()
    # The event loop runs meanwhile.
    timer = QTimer(window, singleShot=True, interval=10)
    with qtbot.waitSignal(timer.timeout, timeout=2_000):
        timer.start()
    with qtbot.waitSignal(window.preview.built, timeout=30_000):
        slow_builds.release.set()
    assert not window.preview.building
    assert type(panel.model).__name__ == "ClassicCNN"
    total = sum(p.numel() for p in panel.model.parameters())
    assert window.model_panel.count_label.text() == f"{total:,}"
    assert panel.tree.topLevelItem(0).text(0) == "ClassicCNN"


def test_walking_the_list_builds_only_the_last_choice(qtbot, window, slow_builds):
    slow_builds.honour_cancel = False  # the worst case: the stale build finishes
    shown: list[str] = []
    real_set_model = window.freeze_panel.set_model

    def set_model(model):
        if model is not None:  # None: "Building…"
            shown.append(type(model).__name__)
        real_set_model(model)

    window.freeze_panel.set_model = set_model
    choose(window, "cnn")
    choose(window, "small-cnn")  # waits for the build under way, then is dropped
    choose(window, "lazy-cnn")
    assert slow_builds.started == ["cnn"]
    with qtbot.waitSignal(window.preview.built, timeout=30_000):
        slow_builds.release.set()
    assert slow_builds.started == ["cnn", "lazy-cnn"]
    assert shown == ["LazyCNN"]  # the stale ClassicCNN never reached the tree
    assert type(window.freeze_panel.model).__name__ == "LazyCNN"
    assert window.current_config().model == "lazy-cnn"


def test_start_waits_for_the_preview_and_runs_with_its_mask(qtbot, window, slow_builds):
    window.apply_config(FAST.replace(frozen=("head",)))
    choose(window, "small-cnn")  # it has a head too: the mask carries over
    window.training_panel.start_button.click()
    assert window.state == "idle"
    assert window.status_label.text().startswith("Start waits for small-cnn")
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000):
        slow_builds.release.set()
    run = window.current_run
    assert run.config.model == "small-cnn"
    assert run.config.frozen == ("head.weight", "head.bias")
    assert window.freeze_panel.model is run.model


# ---------------------------------------------------------------- carried over


@pytest.mark.parametrize("aside", [False, True], ids=["here", "aside"])
def test_the_freeze_selection_survives_a_dataset_change(
    qtbot, window, monkeypatch, aside
):
    if aside:  # built in a thread, released at once
        monkeypatch.setattr(
            preview_part, "estimate_parameters", lambda key: 600_000_000
        )
    window.apply_config(FAST.replace(frozen=("hidden",)))
    before = window.freeze_panel.model
    assert frozen(window) == list(HIDDEN)
    window.set_status("")
    choose_dataset(window, "cifar10")  # 3x32x32 images: a new mlp
    if aside:
        qtbot.waitUntil(lambda: not window.preview.building, timeout=30_000)
    assert window.chosen_model_key()[2] == (3, 32, 32)
    assert window.freeze_panel.model is not before
    assert frozen(window) == list(HIDDEN)
    assert window.current_config().frozen == HIDDEN
    assert "Freeze selection" not in window.status_label.text()  # nothing lost


def test_a_selection_another_model_cannot_take_is_said_once(qtbot, window, monkeypatch):
    said: list[str] = []
    real_set_status = window.set_status

    def set_status(text: str) -> None:
        said.append(text)
        real_set_status(text)

    monkeypatch.setattr(window, "set_status", set_status)
    window.apply_config(FAST.replace(frozen=("hidden", "head.weight")))
    choose(window, "small-cnn")  # has head.weight, none of hidden.*
    assert frozen(window) == ["head.weight"]
    assert window.status_label.text() == (
        "Freeze selection partly kept: small-cnn has 1 of mlp's 5 frozen "
        "parameters; the other 4 are not in it"
    )
    choose(window, "cnn")  # nothing in common
    assert frozen(window) == []
    assert window.status_label.text() == (
        "Freeze selection cleared: cnn has none of small-cnn's 1 frozen parameters"
    )
    window.loader_panel.batch_spin.setValue(32)  # other edits: nothing more said
    window.training_panel.seed_spin.setValue(7)
    notes = [text for text in said if text.startswith("Freeze selection")]
    assert notes == [
        "Freeze selection partly kept: small-cnn has 1 of mlp's 5 frozen "
        "parameters; the other 4 are not in it",
        "Freeze selection cleared: cnn has none of small-cnn's 1 frozen parameters",
    ]


# ---------------------------------------------------------------- Model panel


def test_a_large_model_says_what_training_it_costs_here(
    qtbot, window, slow_builds, monkeypatch
):
    monkeypatch.setattr(preview_part, "device_memory", lambda kind: 8 * 2**30)
    label = window.model_panel.cost_label
    assert not label.isVisibleTo(window)  # the mlp is small
    choose(window, "cnn")  # estimated at 600 M parameters while it builds
    assert label.isVisibleTo(window)
    assert label.text() == (
        "Training needs about 8.9 GiB for weights, gradients and Adam state "
        "(600.0 M parameters \u00d7 16 bytes): more than this computer's 8.0 GiB"
    )
    with qtbot.waitSignal(window.preview.built, timeout=30_000):
        slow_builds.release.set()
    assert not label.isVisibleTo(window)  # built: 1.2 M parameters, small


def test_the_feature_cache_line_follows_the_shown_model_and_mask(qtbot, window):
    label = window.model_panel.feature_cache_label
    assert label.text() == "Feature cache: off: every layer trains"
    window.freeze_panel.head_button.click()  # all but the head
    assert label.text() == (
        "Feature cache: decided when a run starts (every layer before the head "
        "is frozen)"
    )
    window.apply_config(FAST.replace(frozen=("hidden.1",)))
    assert label.text() == (
        "Feature cache: off: hidden.3.weight trains, before the head (head)"
    )
    window.apply_config(FAST.replace(frozen=("hidden",), max_steps=2))
    run_to_end(qtbot, window)
    assert label.text().startswith("Feature cache: on: the head (head) trains on ")
    choose(window, "small-cnn")  # another model: the run's word is not its
    assert label.text() == "Feature cache: off: every layer trains"


@pytest.mark.parametrize(
    ("status", "every_layer_trains", "line"),
    [
        ("", False, "Feature cache: decided when a run starts"),
        (
            "feature cache: on (20 features of size 512, computed in 0.1 s)",
            False,
            "Feature cache: on: the head (fc) trains on the frozen layers' kept "
            "output (20 features of size 512, computed in 0.1 s)",
        ),
        (
            "feature cache: off: conv1.weight is trainable",
            True,
            "Feature cache: off: every layer trains",
        ),
        (
            "feature cache: off: layer4.1.bn2.bias is trainable",
            False,
            "Feature cache: off: layer4.1.bn2.bias trains, before the head (fc)",
        ),
        (
            "feature cache: off from step 6: layer4.0.conv1.weight is trainable; "
            "the full model trains from here",
            False,
            "Feature cache: off from step 6: layer4.0.conv1.weight trains again, "
            "before the head (fc); the full model trains from here",
        ),
        (
            "feature cache: off: augmentation is on",
            False,
            "Feature cache: off: augmentation is on",
        ),
    ],
)
def test_each_feature_cache_status_reads_plainly(status, every_layer_trains, line):
    assert feature_cache_line(status, "fc", every_layer_trains=every_layer_trains) == (
        line
    )
