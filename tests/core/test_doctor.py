"""The checkpoint doctor: what fits a model, partial loads, foreign files, migration."""

from __future__ import annotations

import pytest
import torch

from workbench.core import events as E
from workbench.core.checkpoints.io import (
    CheckpointError,
    checkpoint_dict,
    load_checkpoint,
    load_weights_file,
    restore_run,
    write_checkpoint,
)
from workbench.core.config import TrainConfig
from workbench.core.models.builtins import build_model
from workbench.core.models.state_dict_match import (
    WeightsMismatch,
    compare_state,
    load_exact,
    load_partial,
)
from workbench.core.train.engine import TrainControl, fit, iter_fit, prepare_run


def _states_equal(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("classes", [2, 26])
def test_a_10_class_checkpoint_loads_partially_into_another_head(classes):
    source = build_model("small-cnn", 10, seed=1)
    target = build_model("small-cnn", classes, seed=2)
    fresh_head = build_model("small-cnn", classes, seed=2).head
    diff = compare_state(target, source.state_dict())
    assert diff.partial
    assert not diff.exact
    assert diff.not_loaded == ("head.bias", "head.weight")
    assert "partial fit" in diff.summary()
    with pytest.raises(WeightsMismatch, match=r"shape mismatch: head\.bias"):
        load_exact(target, source.state_dict())

    torch.manual_seed(123)
    report = load_partial(target, source.state_dict())
    assert report.reinitialised == ("head.bias", "head.weight")
    assert set(report.kept) == set(source.state_dict()) - {"head.weight", "head.bias"}
    for name in report.kept:
        assert torch.equal(target.state_dict()[name], source.state_dict()[name]), name
    # The head was reinitialised: neither the file's nor its previous values.
    assert target.head.weight.shape == (classes, 576)
    assert not torch.equal(target.head.weight, fresh_head.weight)
    assert "kept" in report.summary()
    assert "head.weight" in report.summary()


def test_nothing_in_common_is_refused_and_the_model_untouched():
    target = build_model("cnn", 10, seed=0)
    before = {k: v.clone() for k, v in target.state_dict().items()}
    state = build_model("mlp", 10, seed=0).state_dict()
    diff = compare_state(target, state)
    assert not diff.matched
    assert "nothing in common" in diff.summary()
    with pytest.raises(WeightsMismatch, match="nothing in common"):
        load_partial(target, state)
    assert _states_equal(target.state_dict(), before)


@pytest.mark.slow
def test_compiled_weights_load_into_an_eager_model_and_back():
    eager = build_model("small-cnn", 10, seed=3)
    compiled = torch.compile(build_model("small-cnn", 10, seed=4))
    # torch.compile(m) wraps the module: its state_dict keys gain "_orig_mod.".
    assert next(iter(compiled.state_dict())).startswith("_orig_mod.")
    load_exact(eager, compiled.state_dict())
    assert torch.equal(eager.head.weight, compiled._orig_mod.head.weight)
    other = build_model("small-cnn", 10, seed=5)
    load_exact(compiled, other.state_dict())
    assert torch.equal(compiled._orig_mod.head.weight, other.head.weight)


def test_plain_state_dicts_from_tutorials_are_accepted(tmp_path):
    model = build_model("cnn", 10, seed=0)
    for name, payload in {
        "plain.pt": model.state_dict(),
        "lightning.ckpt": {"state_dict": model.state_dict(), "epoch": 3},
        "tutorial.pth": {"model_state_dict": model.state_dict()},
    }.items():
        torch.save(payload, tmp_path / name)
        state, checkpoint = load_weights_file(tmp_path / name)
        assert checkpoint is None
        assert _states_equal(state, model.state_dict())
    torch.save({"note": "no tensors here"}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="holds no model weights"):
        load_weights_file(tmp_path / "other.pt")


def test_corrupted_bytes_are_reported(tmp_path, tiny_arrays):
    run = prepare_run(TrainConfig(model="mlp", epochs=1), arrays=tiny_arrays)
    path = write_checkpoint(tmp_path / "run.pt", checkpoint_dict(run))
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)  # a zeroed block, as a bad sector
    path.write_bytes(bytes(data))
    # torch.load alone would load it: the damage sits inside a tensor's bytes.
    assert torch.load(path, weights_only=True)["global_step"] == 0
    with pytest.raises(CheckpointError, match=r"corrupted: the bytes of .* checksum"):
        load_checkpoint(path)


def _v1_payload(run) -> dict:
    """What format 1 wrote: no data order (a fixture of the old layout), and
    small-cnn for the layout now called small-cnn-v1."""
    payload = checkpoint_dict(run)
    del payload["data_order"]
    payload["format_version"] = 1
    payload["config"] = {**payload["config"], "model": "small-cnn"}
    return payload


def test_a_version_1_checkpoint_migrates_and_resumes_exactly(tmp_path, tiny_arrays):
    cfg = TrainConfig(
        model="small-cnn-v1", epochs=2, batch_size=64, log_every=1, seed=4
    )
    straight = [
        e.loss
        for e in fit(prepare_run(cfg, arrays=tiny_arrays))
        if isinstance(e, E.StepMetrics)
    ]
    first = prepare_run(cfg, arrays=tiny_arrays)
    control = TrainControl()
    part1 = []
    for event in iter_fit(first, control):
        if isinstance(event, E.StepMetrics):
            part1.append(event.loss)
            if event.global_step == 6:  # mid-way through epoch 2
                control.request_stop()
    write_checkpoint(tmp_path / "v1.pt", _v1_payload(first))
    payload = load_checkpoint(tmp_path / "v1.pt")
    assert payload["format_version"] == 3
    assert payload["data_order"] is None
    assert payload["config"]["model"] == "small-cnn-v1"
    resumed = restore_run(payload, arrays=tiny_arrays)
    part2 = [e.loss for e in fit(resumed) if isinstance(e, E.StepMetrics)]
    assert part1 + part2 == straight


def test_the_stored_data_order_is_the_one_a_resumed_run_draws(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=64)
    run = prepare_run(cfg, arrays=tiny_arrays)
    payload = checkpoint_dict(run)
    order = payload["data_order"]["order"]
    assert payload["data_order"]["epoch"] == 0
    assert torch.equal(order.long(), run.loaders.train.epoch_order(0))
    # A stored order wins over the recomputed one (say, a future shuffle change).
    reversed_order = order.flip(0)
    payload["data_order"]["order"] = reversed_order
    resumed = restore_run(payload, arrays=tiny_arrays)
    first_batch_y = next(iter(resumed.loaders.train.iter_from(0)))[1]
    assert torch.equal(
        first_batch_y, tiny_arrays.train_labels[reversed_order[:64].long()]
    )
    # A stored order that does not fit the data is a notice, not a crash.
    payload["data_order"]["order"] = order[:10]
    changed = restore_run(payload, arrays=tiny_arrays)
    assert any("not an exact continuation" in n for n in changed.notices)


def test_format_versions_that_make_no_sense_are_refused(tmp_path, tiny_arrays):
    run = prepare_run(TrainConfig(model="mlp", epochs=1), arrays=tiny_arrays)
    for bad in (0, "2", 2.0):
        payload = checkpoint_dict(run)
        payload["format_version"] = bad
        write_checkpoint(tmp_path / "bad.pt", payload)
        with pytest.raises(CheckpointError, match="invalid checkpoint format"):
            load_checkpoint(tmp_path / "bad.pt")
