"""The run lifecycle both front-ends share: Start's plan, folders, weights, repeats."""

from __future__ import annotations

import multiprocessing

import pytest
import torch

from workbench.core import events as E
from workbench.core.checkpoints.io import CheckpointError, save_checkpoint
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.model_offer import offer_weights
from workbench.core.models.builtins import build_model
from workbench.core.runs.listing import read_events
from workbench.core.session import RunPrepared, Session
from workbench.core.start_plan import RESUME_SAFE, StartKind, plan_start
from workbench.core.train.engine import TrainControl
from workbench.core.train.freezing import frozen_names, set_frozen

QUICK = TrainConfig(
    dataset="digits", model="mlp", batch_size=64, epochs=1, max_steps=6, log_every=1
)


def _train(session: Session, cfg: TrainConfig, stop_at: int | None = None) -> list:
    """Plan, begin and train ``cfg``; stop after step ``stop_at`` if given."""
    plan = session.plan(cfg)
    session.begin(plan)
    control = TrainControl()
    events = []
    for event in session.train(plan, control):
        events.append(event)
        if stop_at is not None and isinstance(event, E.StepMetrics):
            if event.global_step >= stop_at:
                control.request_stop()
    session.finish(next((e for e in events if isinstance(e, E.TrainResult)), None))
    return events


@pytest.fixture
def stopped_session():
    """A session whose run stopped at step 3 of 6."""
    session = Session(origin="test")
    _train(session, QUICK, stop_at=3)
    assert session.run.global_step == 3
    return session


def test_no_run_means_a_new_run():
    assert plan_start(None, QUICK).kind is StartKind.NEW


def test_the_same_settings_continue(stopped_session):
    plan = stopped_session.plan(QUICK)
    assert (plan.kind, plan.changed) == (StartKind.CONTINUE, ())


def test_a_changed_freeze_mask_still_continues(stopped_session):
    plan = stopped_session.plan(QUICK.replace(frozen=("hidden.1.*",)))
    assert plan.kind is StartKind.CONTINUE


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"max_steps": 8}, StartKind.RESUME),
        ({"log_every": 2}, StartKind.RESUME),
        ({"loader": "dataloader"}, StartKind.RESUME),
        ({"lr": 0.5}, StartKind.NEW),
        ({"seed": 7}, StartKind.NEW),
        ({"model": "small-cnn"}, StartKind.NEW),
        ({"batch_size": 32}, StartKind.NEW),
    ],
)
def test_safe_changes_resume_and_others_begin_anew(stopped_session, change, kind):
    plan = stopped_session.plan(QUICK.replace(**change))
    assert plan.kind is kind
    assert plan.changed == tuple(sorted(change))
    if kind is StartKind.NEW:
        assert plan.why_new.startswith(f"{next(iter(change))} changed")
    assert (next(iter(change)) in RESUME_SAFE) == (kind is StartKind.RESUME)


def test_a_run_with_nothing_left_to_train_begins_anew():
    session = Session(origin="test")
    _train(session, QUICK)
    plan = session.plan(QUICK)
    assert plan.kind is StartKind.NEW
    assert plan.why_new.startswith("nothing left to train: the run is at step 6")
    assert session.plan(QUICK.replace(max_steps=9)).kind is StartKind.RESUME


def test_resuming_with_max_steps_behind_the_run_says_nothing_is_left():
    session = Session(origin="test")
    _train(session, QUICK)
    with pytest.raises(ConfigError, match="nothing left to train") as caught:
        session.plan_resume(QUICK.replace(max_steps=2), "run.pt")
    assert str(caught.value).startswith(
        "cannot resume run.pt: nothing left to train: the run is at step 6 and "
        "these settings end it at step 2"
    )
    assert session.plan_resume(QUICK.replace(max_steps=9), "run.pt").kind is (
        StartKind.RESUME
    )


def test_train_yields_the_prepared_run_first_and_the_result_last(runs_root):
    session = Session(origin="test")
    events = _train(session, QUICK)
    assert isinstance(events[0], RunPrepared)
    assert events[0].run is session.run
    assert isinstance(events[1], E.RunStarted)
    assert isinstance(events[-1], E.TrainResult)
    steps = [e.global_step for e in events if isinstance(e, E.StepMetrics)]
    assert steps == [1, 2, 3, 4, 5, 6]
    info = session.folder.info()
    assert (info["status"], info["origin"]) == ("finished", "test")
    assert session.folder.path.parent == runs_root
    kinds = [(e["kind"], e.get("plan")) for e in read_events(session.folder)]
    assert kinds == [("start", "new"), ("finish", None)]


def test_continuing_trains_the_rest_in_the_same_folder(stopped_session):
    folder = stopped_session.folder
    model = stopped_session.run.model
    events = _train(stopped_session, QUICK)
    assert stopped_session.folder == folder
    assert stopped_session.run.model is model  # the same run, not a rebuilt one
    steps = [e.global_step for e in events if isinstance(e, E.StepMetrics)]
    assert steps == [4, 5, 6]
    assert [s for s, _ in stopped_session.run.history.steps] == list(range(1, 7))
    plans = [e.get("plan") for e in read_events(folder) if e["kind"] == "start"]
    assert plans == ["new", "continue"]


def test_resuming_with_more_steps_rebuilds_the_run_where_it_was(stopped_session):
    events = _train(stopped_session, QUICK.replace(max_steps=8))
    steps = [e.global_step for e in events if isinstance(e, E.StepMetrics)]
    assert steps == [4, 5, 6, 7, 8]
    starts = [e for e in read_events(stopped_session.folder) if e["kind"] == "start"]
    assert starts[-1]["plan"] == "resume"
    assert starts[-1]["changed"] == ["max_steps"]


def test_a_new_run_gets_a_new_folder(stopped_session):
    first = stopped_session.folder
    _train(stopped_session, QUICK.replace(lr=0.01))
    assert stopped_session.folder != first
    assert stopped_session.run.global_step == 6


def test_an_unwritable_runs_folder_means_no_autosave_not_no_run(monkeypatch, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(blocked / "runs"))
    session = Session(origin="test")
    notes = session.begin(session.plan(QUICK))
    assert notes
    assert notes[0].startswith("No autosave for this run")
    events = list(session.train(session.plan(QUICK), TrainControl()))
    assert isinstance(events[-1], E.TrainResult)
    assert session.folder is None


def test_data_loaded_once_is_reused(monkeypatch):
    session = Session(origin="test")
    _train(session, QUICK)
    cached = session.arrays.get("digits", None)
    assert cached is not None

    def no_loading(*args, **kwargs):
        raise AssertionError("loaded again")

    monkeypatch.setattr("workbench.core.session.load_run_arrays", no_loading)
    _train(session, QUICK.replace(seed=5))
    assert session.run.loaders is not None


def test_an_opened_checkpoint_becomes_the_run_to_continue(stopped_session, tmp_path):
    path = save_checkpoint(tmp_path / "half.pt", stopped_session.run)
    session = Session(origin="test")
    opened = session.open(path, evaluate=False)
    assert opened.evaluation is None
    session.adopt(opened)
    assert session.run.global_step == 3
    assert session.plan(QUICK).kind is StartKind.CONTINUE
    events = _train(session, QUICK)
    assert [e.global_step for e in events if isinstance(e, E.StepMetrics)] == [4, 5, 6]


def test_weights_that_fit_start_the_next_new_run(tmp_path):
    source = build_model("mlp", 10, seed=11)
    torch.save(source.state_dict(), tmp_path / "weights.pt")
    session = Session(origin="test")
    offer = offer_weights(tmp_path / "weights.pt", QUICK)
    assert offer.diff.exact
    _model, weights = session.accept_weights(offer)
    assert weights.summary.startswith("all ")
    plan = session.plan(QUICK)
    assert plan.initial_weights is weights
    assert plan.started_from == "weights from weights.pt"
    plan = session.plan(QUICK.replace(max_steps=1))
    control = TrainControl()
    control.request_stop()  # prepare only: the weights are in before any step
    events = list(session.train(plan, control))
    loaded = events[0].run.model.state_dict()
    for name, tensor in source.state_dict().items():
        assert torch.equal(loaded[name], tensor), name
    # Another architecture does not take them.
    assert session.plan(QUICK.replace(model="small-cnn")).initial_weights is None


def test_weights_of_another_head_load_in_part(tmp_path):
    five = build_model("mlp", 5, seed=1).state_dict()
    torch.save(five, tmp_path / "five.pt")
    session = Session(origin="test")
    offer = offer_weights(tmp_path / "five.pt", QUICK)
    assert offer.diff.partial
    assert not offer.diff.exact
    fresh = build_model("mlp", 10, seed=QUICK.seed).state_dict()
    _model, weights = session.accept_weights(offer)
    for name, tensor in weights.state.items():
        if name.startswith("head."):  # 10 classes here: initialised afresh
            assert tensor.shape == fresh[name].shape
            assert tensor.shape != five[name].shape
        else:  # the body comes from the file
            assert torch.equal(tensor, five[name]), name


def test_weights_with_nothing_in_common_are_refused(tmp_path):
    torch.save({"other.weight": torch.zeros(3)}, tmp_path / "other.pt")
    session = Session(origin="test")
    offer = offer_weights(tmp_path / "other.pt", QUICK)
    with pytest.raises(CheckpointError, match="nothing in common"):
        session.accept_weights(offer)
    assert session.initial_weights is None


def test_weights_offer_names_the_checkpoints_own_architecture(
    stopped_session, tmp_path
):
    path = save_checkpoint(tmp_path / "mlp.pt", stopped_session.run)  # an mlp
    offer = offer_weights(path, QUICK.replace(model="small-cnn"))
    assert offer.saved_from == "mlp"
    assert offer.other_architecture == "mlp"  # switch to it rather than load a part
    assert offer.diff.fit_fraction == pytest.approx(1 / 26)  # the head.bias
    assert offer.mostly_unfit
    same = offer_weights(path, QUICK)
    assert same.diff.exact
    assert same.other_architecture is None
    bare = tmp_path / "bare.pt"
    torch.save(stopped_session.run.model.state_dict(), bare)  # no config to read
    assert offer_weights(bare, QUICK.replace(model="cnn")).other_architecture is None


def test_a_file_where_one_of_six_tensors_fits_is_mostly_unfit(tmp_path):
    # The size-10 bias of the head fits; nothing else does.
    torch.save(
        {"head.bias": torch.zeros(10), "x.weight": torch.zeros(3)}, tmp_path / "f"
    )
    offer = offer_weights(tmp_path / "f", QUICK)
    assert offer.diff.partial
    assert offer.diff.fit_fraction == pytest.approx(1 / 6)
    assert offer.mostly_unfit
    letters = tmp_path / "letters.pt"
    torch.save(build_model("mlp", 26).state_dict(), letters)  # only the head differs
    assert offer_weights(letters, QUICK).diff.fit_fraction == pytest.approx(4 / 6)
    assert not offer_weights(letters, QUICK).mostly_unfit


def test_fine_tuning_needs_a_run():
    with pytest.raises(ConfigError, match="train a run or open a checkpoint"):
        Session(origin="test").plan_fine_tune(epochs=1, replay=0)


def test_a_reproduce_run_is_compared_with_the_original():
    session = Session(origin="test")
    _train(session, QUICK)
    original = session.folder
    cfg = session.reproduce(original)
    assert session.run is None
    plan = session.plan(cfg)
    assert plan.kind is StartKind.NEW
    session.begin(plan)
    result = None
    for event in session.train(plan, TrainControl()):
        if isinstance(event, E.TrainResult):
            result = event
    finished = session.finish(result)
    assert finished.reproduction_of == original
    assert finished.reproduction.reproduced
    assert session.folder.info()["reproduction_of"] == original.id
    assert session.reproducing is None


def test_a_run_whose_mask_changed_mid_run_is_not_reproduced_from_its_config():
    session = Session(origin="test")
    plan = session.plan(QUICK)
    session.begin(plan)
    control = TrainControl()
    result = None
    for event in session.train(plan, control):
        if isinstance(event, E.StepMetrics) and event.global_step == 3:
            # What the window does while paused: freeze in place, then say so.
            set_frozen(session.run.model, ["hidden.1.*"])
            control.notify_mask_changed()
            session.mask_changed(frozen_names(session.run.model))
        if isinstance(event, E.TrainResult):
            result = event
    session.finish(result)
    folder = session.folder
    assert folder.info()["status"] == "finished"
    assert "frozen" in folder.info()["changed_on_resume"]
    # run.json says how it trained: from step 3 on, the first layer was frozen.
    assert folder.info()["mask_changes"] == [
        {"step": 3, "frozen": ["hidden.1.weight", "hidden.1.bias"]}
    ]
    assert [e["kind"] for e in read_events(folder)] == ["start", "freeze", "finish"]
    with pytest.raises(ConfigError, match="changed its freeze mask while it trained"):
        Session(origin="test").reproduce(folder)


@pytest.mark.slow
def test_dataloader_workers_stop_when_the_run_stops():
    # persistent_workers keep them between epochs; after the run they must go.
    cfg = QUICK.replace(loader="dataloader", workers=1, max_steps=4)
    session = Session(origin="test")
    plan = session.plan(cfg)
    session.begin(plan)
    control = TrainControl()
    alive_during = []
    result = None
    for event in session.train(plan, control):
        if isinstance(event, E.StepMetrics) and event.global_step == 2:
            alive_during = multiprocessing.active_children()
            control.request_stop()
        if isinstance(event, E.TrainResult):
            result = event
    assert alive_during, "the run trained without its worker process"
    session.finish(result)
    for process in alive_during:
        process.join(timeout=10)
    assert not multiprocessing.active_children()
