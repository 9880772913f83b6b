from __future__ import annotations

import os
import pickle

import pytest
import torch

from workbench.core import events as E
from workbench.core.checkpoints.io import (
    FORMAT_VERSION,
    CheckpointError,
    checkpoint_dict,
    load_checkpoint,
    load_model_state,
    restore_run,
    save_checkpoint,
    write_checkpoint,
)
from workbench.core.config import TrainConfig
from workbench.core.models.builtins import build_model
from workbench.core.train.engine import TrainControl, fit, iter_fit, prepare_run


@pytest.fixture
def trained_run(tiny_arrays):
    cfg = TrainConfig(
        model="mlp", epochs=2, batch_size=64, log_every=1, frozen=("hidden.1.*",)
    )
    run = prepare_run(cfg, arrays=tiny_arrays)
    fit(run)
    return run


def test_round_trip_keeps_everything(tmp_path, trained_run, tiny_arrays):
    path = save_checkpoint(tmp_path / "run.pt", trained_run)
    payload = load_checkpoint(path)
    assert payload["format_version"] == FORMAT_VERSION
    assert payload["epoch"] == 2
    assert payload["global_step"] == 8
    assert payload["frozen"] == ["hidden.1.weight", "hidden.1.bias"]
    assert set(payload["rng"]) >= {"python", "numpy", "torch"}
    assert len(payload["history"]["steps"]) == 8
    restored = restore_run(payload, arrays=tiny_arrays)
    for (name, a), b in zip(
        trained_run.model.state_dict().items(),
        restored.model.state_dict().values(),
        strict=True,
    ):
        assert torch.equal(a, b), name
    assert restored.config == trained_run.config
    assert [n for n, p in restored.model.named_parameters() if not p.requires_grad] == [
        "hidden.1.weight",
        "hidden.1.bias",
    ]
    assert restored.history.steps == trained_run.history.steps
    assert restored.history.epochs == trained_run.history.epochs  # typed, matrices
    assert all(e.confusion is not None for e in restored.history.epochs)
    assert (
        restored.optimizer.state_dict()["state"].keys()
        == trained_run.optimizer.state_dict()["state"].keys()
    )


def test_resume_continues_the_same_loss_sequence(tmp_path, tiny_arrays):
    cfg = TrainConfig(model="small-cnn", epochs=2, batch_size=64, log_every=1, seed=1)
    full = prepare_run(cfg, arrays=tiny_arrays)
    straight = [e.loss for e in fit(full) if isinstance(e, E.StepMetrics)]

    first = prepare_run(cfg, arrays=tiny_arrays)
    control = TrainControl()
    part1 = []
    for event in iter_fit(first, control):  # stop mid-epoch, after step 3 of 4
        if isinstance(event, E.StepMetrics):
            part1.append(event.loss)
            if event.global_step == 3:
                control.request_stop()
    save_checkpoint(tmp_path / "half.pt", first)
    resumed = restore_run(
        load_checkpoint(tmp_path / "half.pt"), config=cfg, arrays=tiny_arrays
    )
    part2 = [e.loss for e in fit(resumed) if isinstance(e, E.StepMetrics)]
    assert part1 + part2 == straight


def test_missing_empty_truncated_and_foreign_files(tmp_path, trained_run):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "none.pt")
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(CheckpointError, match="empty"):
        load_checkpoint(tmp_path / "empty.pt")
    good = save_checkpoint(tmp_path / "good.pt", trained_run).read_bytes()
    (tmp_path / "cut.pt").write_bytes(good[: len(good) // 2])
    with pytest.raises(CheckpointError, match="truncated or corrupted"):
        load_checkpoint(tmp_path / "cut.pt")
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(CheckpointError, match=r"text\.pt is a text file, not a"):
        load_checkpoint(tmp_path / "text.pt")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "foreign.pt")
    with pytest.raises(CheckpointError, match="not a ptcore-workbench checkpoint"):
        load_checkpoint(tmp_path / "foreign.pt")


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))


def test_a_file_that_would_run_code_is_refused_and_nothing_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pt"
    torch.save(
        {
            "format_version": 1,
            "model_state": {},
            "config": {},
            "epoch": 0,
            "global_step": 0,
            "payload": _Exploit(),
        },
        path,
    )
    with pytest.raises(CheckpointError, match="could run code"):
        load_checkpoint(path)
    assert not (tmp_path / "PWNED").exists()
    # A plain pickle, not a torch zip file, is refused too.
    path.write_bytes(pickle.dumps(_Exploit()))
    with pytest.raises(CheckpointError):
        load_checkpoint(path)
    assert not (tmp_path / "PWNED").exists()


def test_newer_format_is_refused(tmp_path, trained_run):
    payload = checkpoint_dict(trained_run)
    payload["format_version"] = FORMAT_VERSION + 1
    write_checkpoint(tmp_path / "new.pt", payload)
    with pytest.raises(CheckpointError, match="upgrade"):
        load_checkpoint(tmp_path / "new.pt")


def test_mismatched_model_names_keys_and_leaves_the_model_untouched(trained_run):
    other = build_model("mlp", 26, seed=0)
    before = {k: v.clone() for k, v in other.state_dict().items()}
    with pytest.raises(
        CheckpointError,
        match=r"shape mismatch: head\.bias.*head\.weight: file \(10, 128\) vs model",
    ):
        load_model_state(other, trained_run.model.state_dict())
    for key, value in other.state_dict().items():
        assert torch.equal(value, before[key])
    cnn = build_model("cnn", seed=0)
    with pytest.raises(CheckpointError, match=r"missing in the file: conv1\.bias"):
        load_model_state(cnn, trained_run.model.state_dict())


def test_compiled_and_dataparallel_prefixes_are_stripped(trained_run):
    state = trained_run.model.state_dict()
    wrapped = {f"module._orig_mod.{k}": v for k, v in state.items()}
    fresh = build_model("mlp", seed=9)
    load_model_state(fresh, wrapped)
    assert torch.equal(fresh.head.weight, trained_run.model.head.weight)


def test_read_only_folder_gives_a_clear_error(tmp_path, trained_run, monkeypatch):
    # Root ignores chmod, so the refusal the OS would give is simulated.
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(CheckpointError, match="no permission to write"):
        save_checkpoint(tmp_path / "run.pt", trained_run)
    assert not (tmp_path / "run.pt").exists()


def test_temp_files_of_killed_saves_are_cleared_by_the_next_save(tmp_path, trained_run):
    from workbench.core.atomic_files import STALE_AFTER_S

    old = tmp_path / ".run.pt.abc123.tmp"  # what a SIGKILL mid-save leaves
    old.write_bytes(b"half a checkpoint")
    hour_ago = os.path.getmtime(old) - STALE_AFTER_S - 60
    os.utime(old, (hour_ago, hour_ago))
    fresh = tmp_path / ".run.pt.def456.tmp"  # perhaps a save under way elsewhere
    fresh.write_bytes(b"in progress")
    save_checkpoint(tmp_path / "run.pt", trained_run)
    assert not old.exists()
    assert fresh.exists()


def test_save_syncs_the_file_then_renames_then_syncs_the_folder(
    tmp_path, trained_run, monkeypatch
):
    """The order that makes a save survive a power loss, not just a crash."""
    import stat

    calls: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        kind = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        target = os.readlink(f"/proc/self/fd/{fd}")
        calls.append((f"fsync {kind}", os.path.basename(target)))
        real_fsync(fd)

    def replace(src, dst):
        calls.append(("replace", os.path.basename(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    (tmp_path / "ckpt").mkdir()
    save_checkpoint(tmp_path / "ckpt" / "run.pt", trained_run)

    assert [kind for kind, _ in calls] == ["fsync file", "replace", "fsync folder"]
    temp_name = calls[0][1]
    assert temp_name.startswith(".run.pt.")
    assert temp_name.endswith(".tmp")
    assert calls[1:] == [("replace", "run.pt"), ("fsync folder", "ckpt")]
    assert load_checkpoint(tmp_path / "ckpt" / "run.pt")["global_step"] == 8


def test_a_checkpoint_with_the_old_dict_history_opens_typed(
    tmp_path, trained_run, tiny_arrays
):
    payload = checkpoint_dict(trained_run)
    # As the code before typed histories wrote it: plain dicts, the matrix as
    # lists; the oldest checkpoints have no matrix at all.
    old = [e.to_dict() for e in trained_run.history.epochs]
    matrix = trained_run.history.epochs[0].confusion
    assert old[0]["confusion"] == [list(row) for row in matrix]
    del old[0]["confusion"]
    payload["history"]["epochs"] = old
    path = tmp_path / "old.pt"
    torch.save(payload, path)
    restored = restore_run(load_checkpoint(path), arrays=tiny_arrays)
    first, second = restored.history.epochs
    assert isinstance(first, E.EpochMetrics)
    assert first.confusion is None
    assert second == trained_run.history.epochs[1]
    assert first.val_accuracy == trained_run.history.epochs[0].val_accuracy


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(64), "a PNG image"),
        (b"\xff\xd8\xff\xe0" + bytes(64), "a JPEG image"),
        (b"epoch,loss\n1,0.5\n", "a text file"),
    ],
)
def test_a_file_that_is_plainly_no_checkpoint_is_named_for_what_it_is(
    tmp_path, content, kind
):
    path = tmp_path / "picked.pt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    message = str(caught.value)
    assert message.startswith(f"picked.pt is {kind}, not a checkpoint: open a .pt")
    assert "weights_only" not in message


def test_an_unreadable_file_never_repeats_torchs_weights_only_advice(tmp_path):
    path = tmp_path / "noise.pt"
    path.write_bytes(bytes(range(256)) * 4)  # binary, no known kind
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    message = str(caught.value)
    assert "is not a readable checkpoint" in message
    assert "weights_only" not in message
