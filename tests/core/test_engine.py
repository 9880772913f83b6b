from __future__ import annotations

import dataclasses
import itertools
import math
import threading
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.train import engine as engine_module
from workbench.core.train import step_clock as step_clock_module
from workbench.core.train import step_reports as step_reports_module
from workbench.core.train.engine import (
    TrainControl,
    TrainingError,
    fit,
    iter_fit,
    prepare_run,
)


def _losses(events):
    return [e.loss for e in events if isinstance(e, E.StepMetrics)]


def test_events_come_in_order_and_carry_plain_data(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=2, batch_size=64, log_every=2)
    events = fit(prepare_run(cfg, arrays=tiny_arrays))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "RunStarted"
    assert kinds[-1] == "TrainResult"
    # 256 samples / 64 = 4 steps an epoch, logged every 2, then the epoch's
    # predictions, weight histograms and metrics; the layers' health is sampled
    # every 10 steps and at the last one.
    log = ["StepMetrics"]
    epoch_end = ["Evaluation", "WeightHistograms", "EpochMetrics"]
    last = ["StepMetrics", "LayerHealth"]
    assert kinds[1:-1] == log * 2 + epoch_end + log + last + epoch_end
    steps = [e for e in events if isinstance(e, E.StepMetrics)]
    assert [s.global_step for s in steps] == [2, 4, 6, 8]
    assert [s.epoch for s in steps] == [0, 0, 1, 1]
    plain = (int, float, str, bool, tuple)
    for event in events:
        for field in dataclasses.fields(event):
            value = getattr(event, field.name)
            if isinstance(event, E.Evaluation) and isinstance(value, np.ndarray):
                continue  # per-image predictions: NumPy copies, never tensors
            assert type(value) in plain, (event, field.name)
            assert not isinstance(value, torch.Tensor)


def test_evaluation_holds_every_validation_prediction(tiny_arrays):
    cfg = TrainConfig(model="small-cnn", epochs=2, batch_size=64, log_every=2)
    run = prepare_run(cfg, arrays=tiny_arrays)
    events = fit(run)
    evaluations = [e for e in events if isinstance(e, E.Evaluation)]
    epochs = [e for e in events if isinstance(e, E.EpochMetrics)]
    assert [e.epoch for e in evaluations] == [0, 1]
    for ev, metrics, record in zip(
        evaluations, epochs, run.history.epochs, strict=True
    ):
        assert np.array_equal(ev.labels, tiny_arrays.test_labels.numpy())
        matrix = ev.confusion()
        assert matrix.sum() == len(tiny_arrays.test_labels)  # every image, once
        assert record == metrics  # the history holds the events it yielded
        assert record.confusion == tuple(map(tuple, matrix.tolist()))
        assert np.trace(matrix) / matrix.sum() == pytest.approx(metrics.val_accuracy)
        assert float(ev.losses.mean()) == pytest.approx(metrics.val_loss, rel=1e-5)
        for true in range(10):
            for predicted in range(10):
                cell = ev.cell(true, predicted)
                assert len(cell) == matrix[true, predicted]
                assert np.all(np.diff(ev.losses[cell]) <= 0)  # hardest first


def test_layer_health_shows_frozen_layers_with_zero_gradient(tiny_arrays):
    cfg = TrainConfig(model="small-cnn", epochs=1, batch_size=64, log_every=1)
    run = prepare_run(cfg.replace(frozen=("block1.*",)), arrays=tiny_arrays)
    events = fit(run)
    health = [e for e in events if isinstance(e, E.LayerHealth)]
    assert [h.global_step for h in health] == [4]  # the last step (of 4)
    sample = health[-1]
    assert sample.layers[:2] == ("block1.0", "block1.2")
    assert sample.layers[-1] == "head"
    grads = dict(zip(sample.layers, sample.grad_norms, strict=True))
    assert grads["block1.0"] == 0.0
    assert grads["block1.2"] == 0.0
    assert all(grads[name] > 0 for name in sample.layers[2:])
    head = torch.cat([run.model.head.weight.flatten(), run.model.head.bias]).detach()
    assert sample.weight_norms[-1] == pytest.approx(float(head.norm()), rel=1e-5)
    (hist,) = [e for e in events if isinstance(e, E.WeightHistograms)]
    assert hist.layers == sample.layers
    for counts, name in zip(hist.counts, hist.layers, strict=True):
        params = dict(run.model.named_modules())[name].parameters(recurse=False)
        assert sum(counts) == sum(p.numel() for p in params)


def test_the_model_learns(tiny_arrays):
    cfg = TrainConfig(model="small-cnn", epochs=3, batch_size=32, log_every=1)
    events = fit(prepare_run(cfg, arrays=tiny_arrays))
    losses = _losses(events)
    assert sum(losses[-4:]) / 4 < 0.5 * sum(losses[:4]) / 4
    result = events[-1]
    assert isinstance(result, E.TrainResult)
    assert result.val_accuracy >= 0.9
    assert result.epochs_completed == 3
    assert not result.stopped
    assert result.images_per_s > 0


def test_step_seconds_is_the_time_of_one_step_even_a_short_last_one(
    tiny_arrays, monkeypatch
):
    # 256 samples in batches of 96: two full steps and a last one of 64 each
    # epoch. The engine's clock moves only when a batch is fetched (200 ms
    # each), so the figures are exact on a busy machine too;
    # batch_size / images_per_s would make the short step 1.5 times longer.
    cfg = TrainConfig(model="mlp", epochs=2, batch_size=96, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    fetch = run.loaders.train.iter_from
    clock = [100.0]

    def slow(start):
        for batch in fetch(start):
            clock[0] += 0.2
            yield batch

    monkeypatch.setattr(run.loaders.train, "iter_from", slow)
    fake_time = SimpleNamespace(perf_counter=lambda: clock[0])
    monkeypatch.setattr(engine_module, "time", fake_time)
    monkeypatch.setattr(step_clock_module, "time", fake_time)
    monkeypatch.setattr(step_reports_module, "time", fake_time)
    steps = [e for e in fit(run) if isinstance(e, E.StepMetrics)]
    assert [s.step for s in steps] == [1, 2, 3] * 2
    assert [s.step_seconds for s in steps] == pytest.approx([0.2] * 6)
    # The first step's time is what the run took to get there.
    assert steps[0].elapsed_s == pytest.approx(0.2)
    assert steps[-1].elapsed_s == pytest.approx(1.2)


def test_step_seconds_covers_a_log_interval(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=32, log_every=4)
    steps = [
        e
        for e in fit(prepare_run(cfg, arrays=tiny_arrays))
        if isinstance(e, E.StepMetrics)
    ]
    assert [s.global_step for s in steps] == [4, 8]
    for before, after in itertools.pairwise(steps):
        # Four steps between two logs, the logging and hand-off between them
        # included: they are a step's "other" time.
        between = after.elapsed_s - before.elapsed_s
        assert 4 * after.step_seconds == pytest.approx(between, rel=0.05, abs=2e-3)


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_same_seed_same_losses_on_cpu(tiny_arrays, loader):
    cfg = TrainConfig(
        model="small-cnn",
        epochs=2,
        batch_size=64,
        log_every=1,
        seed=3,
        loader=loader,
        device="cpu",
    )
    first = _losses(fit(prepare_run(cfg, arrays=tiny_arrays)))
    second = _losses(fit(prepare_run(cfg, arrays=tiny_arrays)))
    assert first == second
    other = _losses(fit(prepare_run(cfg.replace(seed=4), arrays=tiny_arrays)))
    assert other != first


def test_max_steps_counts_global_steps(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=5, batch_size=64, max_steps=6, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    events = fit(run)
    assert run.total_steps == 6
    assert events[-1].global_step == 6
    # The second epoch stopped after 2 of 4 batches: it is reported but not completed.
    epochs = [e for e in events if isinstance(e, E.EpochMetrics)]
    assert [e.global_step for e in epochs] == [4, 6]
    assert run.epoch == 1
    assert run.batch_in_epoch == 2


def test_stop_finishes_the_batch_and_still_returns(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=3, batch_size=16, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    control = TrainControl()
    events = []
    for event in iter_fit(run, control):
        events.append(event)
        if isinstance(event, E.StepMetrics) and event.global_step == 5:
            control.request_stop()
    result = events[-1]
    assert isinstance(result, E.TrainResult)
    assert result.stopped
    assert result.global_step == 5
    assert run.global_step == 5
    assert run.batch_in_epoch == 5


def test_pause_blocks_until_resumed(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=16, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    control = TrainControl()
    seen: list[int] = []
    paused_at = threading.Event()
    finished = threading.Event()

    def worker():
        for event in iter_fit(run, control):
            if isinstance(event, E.StepMetrics):
                seen.append(event.global_step)
                if event.global_step == 3:
                    control.pause()
                    paused_at.set()
        finished.set()

    thread = threading.Thread(target=worker)
    thread.start()
    assert paused_at.wait(10)
    assert not finished.wait(0.5)  # held before step 4
    assert seen == [1, 2, 3]
    control.resume()
    thread.join(10)
    assert finished.is_set()
    assert seen == list(range(1, 17))


def test_stop_releases_a_pause(tiny_arrays):
    run = prepare_run(TrainConfig(model="mlp", batch_size=16), arrays=tiny_arrays)
    control = TrainControl()
    control.pause()
    done = []
    thread = threading.Thread(target=lambda: done.append(fit(run, control)[-1]))
    thread.start()
    control.request_stop()
    thread.join(10)
    assert done
    assert done[0].stopped
    assert done[0].global_step == 0


def test_non_finite_loss_stops_with_a_clear_error(tiny_arrays):
    cfg = TrainConfig(
        model="mlp",
        lr=1e12,
        optimizer="sgd",
        schedule="constant",
        batch_size=32,
        log_every=1,
    )
    with pytest.raises(TrainingError, match=r"loss became (nan|inf).*learning rate"):
        fit(prepare_run(cfg, arrays=tiny_arrays))


def test_mask_change_while_paused_reaches_the_optimizer(tiny_arrays):
    from workbench.core.train.freezing import set_frozen

    cfg = TrainConfig(model="mlp", epochs=1, batch_size=32, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    control = TrainControl()
    hidden_before = None
    for event in iter_fit(run, control):
        if isinstance(event, E.StepMetrics) and event.global_step == 2:
            set_frozen(run.model, ["hidden.*"])
            control.notify_mask_changed()
            hidden_before = run.model.hidden[1].weight.detach().clone()
    held = run.optimizer.param_groups[0]["params"]
    assert [id(p) for p in held] == [id(run.model.head.weight), id(run.model.head.bias)]
    assert torch.equal(run.model.hidden[1].weight, hidden_before)


@pytest.mark.slow
def test_bf16_autocast_trains_on_cpu(tiny_arrays):
    """bf16 autocast really computes in bf16, and learns as well as fp32 does."""
    results, losses = {}, {}
    for precision, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        cfg = TrainConfig(
            model="small-cnn", precision=precision, epochs=2, batch_size=64, log_every=1
        )
        run = prepare_run(cfg, arrays=tiny_arrays)
        seen = set()
        # Training steps only: validation scores in fp32 whatever the run trains in.
        run.model.head.register_forward_hook(
            lambda m, a, out, seen=seen: seen.add(out.dtype) if m.training else None
        )
        events = fit(run)
        assert seen == {dtype}, precision  # the layers ran in that precision
        results[precision] = events[-1]
        losses[precision] = _losses(events)
    fp32, bf16 = results["fp32"], results["bf16"]
    assert math.isfinite(bf16.val_loss)
    # Same data, same seed: bf16 ends within a few points of fp32...
    assert bf16.val_accuracy >= fp32.val_accuracy - 0.03
    assert bf16.val_accuracy > 0.5
    assert bf16.val_loss == pytest.approx(fp32.val_loss, abs=0.1, rel=0.25)
    # ...and its training loss falls, step for step close to fp32's.
    steps = losses["bf16"]
    assert len(steps) == len(losses["fp32"]) == 8  # 256 images / 64, twice
    assert sum(steps[-4:]) / 4 < 0.25 * steps[0]
    np.testing.assert_allclose(steps, losses["fp32"], atol=0.1)


def test_fp16_without_cuda_is_refused(tiny_arrays):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA, where fp16 is allowed")
    with pytest.raises(TrainingError, match="fp16 needs a CUDA"):
        prepare_run(TrainConfig(precision="fp16", device="cpu"), arrays=tiny_arrays)


def test_lazy_model_trains_with_its_parameters_in_the_optimizer(tiny_arrays):
    run = prepare_run(
        TrainConfig(model="lazy-cnn", epochs=1, batch_size=64), arrays=tiny_arrays
    )
    held = run.optimizer.param_groups[0]["params"]
    assert len(held) == len(list(run.model.parameters())) == 8
    before = run.model.fc1.weight.detach().clone()
    fit(run)
    assert not torch.equal(before, run.model.fc1.weight)


@pytest.mark.slow
def test_compile_in_place_keeps_clean_keys_and_reports_compile_time(tiny_arrays):
    # 256 images in batches of 96: the epoch's last batch (64) compiles again.
    cfg = TrainConfig(model="mlp", compile=True, epochs=2, batch_size=96, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    events = fit(run)
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("CompileStarted") < kinds.index("CompileFinished")
    started = [
        (e.batch_size, e.first) for e in events if isinstance(e, E.CompileStarted)
    ]
    assert started == [(96, True), (64, False)]  # once per batch size, said each time
    finished = next(e for e in events if isinstance(e, E.CompileFinished))
    result = events[-1]
    assert result.global_step == 6
    assert finished.seconds > 0
    # The recompiled step is kept out of the speed: no logged step took its time.
    steps = [e for e in events if isinstance(e, E.StepMetrics)]
    recompile = [e for e in events if isinstance(e, E.CompileFinished)][1]
    assert all(e.step_seconds < recompile.seconds for e in steps)
    assert result.compile_seconds > result.step_seconds
    assert not any(k.startswith("_orig_mod") for k in run.model.state_dict())


def test_freezing_everything_mid_run_is_a_clear_error(tiny_arrays):
    from workbench.core.train.freezing import set_frozen

    run = prepare_run(TrainConfig(model="mlp", batch_size=32), arrays=tiny_arrays)
    control = TrainControl()
    events = iter_fit(run, control)
    while not isinstance(next(events), E.StepMetrics):
        pass
    set_frozen(run.model, ["*"])
    control.notify_mask_changed()

    def drain() -> None:
        for event in events:  # raised before the next batch trains
            assert not isinstance(event, E.StepMetrics)

    with pytest.raises(TrainingError, match="nothing to train"):
        drain()


def test_weights_requested_mid_run_are_those_after_that_step(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=16, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    control = TrainControl()
    copies: dict[int, dict[str, torch.Tensor]] = {}
    reference: dict[int, dict[str, torch.Tensor]] = {}
    for event in iter_fit(run, control):
        if isinstance(event, E.StepMetrics) and event.global_step in (3, 9):
            # What the model holds right after this step, for comparison.
            reference[event.global_step] = {
                k: v.clone() for k, v in run.model.state_dict().items()
            }
            control.request_weights()
        elif isinstance(event, E.WeightsReady):
            taken = control.take_weights()
            assert taken is not None
            step, state = taken
            assert step == event.global_step
            copies[step] = state
    assert sorted(copies) == [3, 9]
    for step, state in copies.items():
        assert state.keys() == reference[step].keys()
        for key, tensor in state.items():
            assert torch.equal(tensor, reference[step][key])
            # A copy: training on did not change it.
            assert tensor.data_ptr() != run.model.state_dict()[key].data_ptr()
    assert not control.weights_requested
    assert control.take_weights() is None


def test_serving_weights_does_not_change_the_run(tiny_arrays):
    cfg = TrainConfig(model="small-cnn", epochs=1, batch_size=32, log_every=1)
    plain = _losses(fit(prepare_run(cfg, arrays=tiny_arrays)))
    control = TrainControl()
    served = []
    events = []
    for event in iter_fit(prepare_run(cfg, arrays=tiny_arrays), control):
        events.append(event)
        if isinstance(event, E.StepMetrics):
            control.request_weights()
        if isinstance(event, E.WeightsReady):
            served.append(control.take_weights())
    assert len(served) == len(plain) - 1  # every step but the last is followed
    assert _losses(events) == plain


def test_weight_histograms_survive_weights_gone_nan(tiny_arrays):
    from workbench.core.train.engine import weight_histograms

    run = prepare_run(TrainConfig(model="mlp", epochs=1), arrays=tiny_arrays)
    with torch.no_grad():
        run.model.head.weight[0, 0] = float("nan")
        run.model.head.bias.fill_(float("nan"))
    hist = weight_histograms(run, 0)
    head = hist.layers.index("head")
    assert sum(hist.counts[head]) == run.model.head.weight.numel() - 1


def test_the_automatic_log_interval_logs_every_step_of_a_short_run(tiny_arrays):
    """Live curves show every step of a short run; long runs thin to ~5,000 points."""
    cfg = TrainConfig(model="mlp", epochs=2, batch_size=64, log_every=None)
    steps = [
        e.global_step
        for e in fit(prepare_run(cfg, arrays=tiny_arrays))
        if isinstance(e, E.StepMetrics)
    ]
    assert steps == list(range(1, 9))
    explicit = prepare_run(cfg.replace(log_every=3), arrays=tiny_arrays)
    assert [e.global_step for e in fit(explicit) if isinstance(e, E.StepMetrics)] == [
        3,
        6,
        8,
    ]


def test_the_automatic_log_interval_thins_only_long_runs():
    from workbench.core.train.engine import AUTO_LOG_POINTS, resolve_log_every

    assert AUTO_LOG_POINTS == 5000
    assert resolve_log_every(None, 235) == 1  # one MNIST epoch at batch 256
    assert resolve_log_every(None, 5000) == 1
    assert resolve_log_every(None, 5001) == 2
    assert resolve_log_every(None, 70_350) == 15  # 300 MNIST epochs
    assert resolve_log_every(10, 235) == 10


@pytest.mark.parametrize(
    ("log_every", "expected"),
    [(1, [10, 20, 25]), (2, [10, 20, 25]), (3, [12, 24, 25]), (10, [10, 20, 25])],
)
def test_layer_health_is_sampled_every_10_steps_whatever_the_log_interval(
    tiny_arrays, log_every, expected
):
    """Logging every step must not sample every layer's norms every step too."""
    cfg = TrainConfig(model="mlp", epochs=7, batch_size=64, max_steps=25)
    events = fit(prepare_run(cfg.replace(log_every=log_every), arrays=tiny_arrays))
    health = [e.global_step for e in events if isinstance(e, E.LayerHealth)]
    logged = {e.global_step for e in events if isinstance(e, E.StepMetrics)}
    assert health == expected
    assert set(health) <= logged  # a health sample comes with a logged step


@pytest.mark.parametrize("channels_last", [True, False])
def test_the_model_is_kept_in_the_memory_format_asked_for(tiny_arrays, channels_last):
    cfg = TrainConfig(model="small-cnn", batch_size=32, channels_last=channels_last)
    run = prepare_run(cfg, arrays=tiny_arrays)
    # A conv of more than one input channel: the two layouts differ there.
    conv = next(p for p in run.model.parameters() if p.dim() == 4 and p.shape[1] > 1)
    assert conv.is_contiguous(memory_format=torch.channels_last) == channels_last
    assert conv.is_contiguous() != channels_last
