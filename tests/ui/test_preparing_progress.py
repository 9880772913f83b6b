"""Preparing a run says what it is doing, with a count, and Stop cancels it."""

from __future__ import annotations

import pytest

from workbench.core import events as E
from workbench.core.models.builtins import build_model
from workbench.core.train.freezing import all_but_head

from .helpers import FAST, event_signal, run_to_end

pytestmark = pytest.mark.gui


def test_the_feature_cache_shows_its_count_while_it_is_computed(qtbot, window):
    head_only = tuple(all_but_head(build_model("small-cnn", 10, seed=0)))
    window.apply_config(
        FAST.replace(model="small-cnn", frozen=head_only, feature_cache="on")
    )
    seen = []

    def look(ev: E.FeaturesProgress) -> None:
        training = window.training_panel
        seen.append(
            (
                ev.done,
                window.status_label.text(),
                training.progress_bar.format(),
                training.stop_button.isEnabled(),
            )
        )

    event_signal(window, E.FeaturesProgress).connect(look)
    run_to_end(qtbot, window)
    total = window.current_run.loaders.train.num_samples
    assert seen[0][0] == 0
    assert seen[-1][0] == total
    for done, status, bar, stop_enabled in seen:
        assert status == (
            "Computing the frozen layers' features once (the feature cache): "
            f"{done:,} of {total:,} images; Stop cancels"
        )
        assert bar == f"preparing: features {done:,} / {total:,}"
        assert stop_enabled
    # Then the run trains: nothing is left saying it computes.
    assert window.status_label.text().startswith("Finished at step 4: ")


def test_stop_while_the_features_are_computed_trains_nothing(qtbot, window):
    head_only = tuple(all_but_head(build_model("small-cnn", 10, seed=0)))
    window.apply_config(
        FAST.replace(model="small-cnn", frozen=head_only, feature_cache="on")
    )
    stop = window.training_panel.stop_button

    def stop_once(ev: E.FeaturesProgress) -> None:
        if ev.done > 0 and stop.isEnabled():
            stop.click()

    event_signal(window, E.FeaturesProgress).connect(stop_once)
    run_to_end(qtbot, window)
    assert window.current_run.global_step == 0
    assert window.status_label.text().startswith(
        "Stopped before the first step: nothing was trained"
    )
    assert window.loss_plot.point_count("loss") == 0
