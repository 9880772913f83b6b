"""What Reproduce says about a pair of runs, and which runs it refuses, and why.

Issue 33: "reproduced" only when every logged loss is identical (any other
loss, however close, is a mismatch); a run is refused with its reason when its
config alone cannot repeat it, or when what it was made from (its model file,
its image folder) changed since or was not recorded. The command line's check
records no run of its own: the verdict goes into the original's ``run.json``.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest

from tests.image_folders import make_folder
from tests.model_files import NET, sha_of
from workbench.cli.commands import main
from workbench.core.checkpoints.io import checkpoint_dict, write_checkpoint
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.folder import fingerprint_folder, scan_folder
from workbench.core.events import StepMetrics
from workbench.core.models.source import SHA_KEY
from workbench.core.runs.data_record import DATA_FILE, record_data
from workbench.core.runs.folder import METRICS_FILE, RUN_FILE, RunFolder
from workbench.core.runs.listing import list_runs, summarize
from workbench.core.runs.reproduce import (
    compare,
    compare_with_folder,
    original_config,
    reproducible,
)
from workbench.core.session import Session
from workbench.core.train.engine import fit, prepare_run


def _logged(*pairs: tuple[int, float]) -> list[StepMetrics]:
    return [StepMetrics.from_record({"global_step": s, "loss": x}) for s, x in pairs]


def _finished(cfg: TrainConfig, **fields) -> RunFolder:
    folder = RunFolder.create(cfg, origin="test")
    folder.update(status="finished", **fields)
    return folder


def _refusal(folder: RunFolder) -> str:
    """original_config's refusal, checked to be the session's very words."""
    with pytest.raises(ConfigError) as refused:
        original_config(folder)
    with pytest.raises(ConfigError) as session_refused:
        Session(origin="test").reproduce(folder)
    assert str(session_refused.value) == str(refused.value)
    return str(refused.value)


# ------------------------------------------------------------------ the verdicts

_ORIGINAL = ((400, 0.5), (800, 0.25), (1200, 0.125))


def test_identical_losses_are_reproduced():
    verdict = compare(_logged(*_ORIGINAL), list(_ORIGINAL))
    assert verdict.reproduced
    assert verdict.compared == 3
    assert verdict.describe() == "reproduced: all 3 logged losses are identical"


@pytest.mark.parametrize(
    ("repeated", "step", "said"),
    [
        (
            [(400, 0.5), (800, 0.25), (1200, math.nextafter(0.125, 1))],
            1200,
            "not reproduced: the losses first differ at step 1,200 "
            f"(0.125 vs {math.nextafter(0.125, 1)!r})",
        ),
        (
            [(400, 0.5), (800, 0.2500001), (1200, 0.0)],
            800,
            "not reproduced: the losses first differ at step 800 (0.25 vs 0.2500001)",
        ),
        (
            [(400, -0.5), (800, 0.25), (1200, 0.125)],
            400,
            "not reproduced: the losses first differ at step 400 (0.5 vs -0.5)",
        ),
        (
            [(400, 0.5), (800, 0.25), (1200, math.nan)],
            1200,
            "not reproduced: the losses first differ at step 1,200 (0.125 vs nan)",
        ),
    ],
    ids=["one-ulp", "first-of-two", "sign", "nan"],
)
def test_any_other_loss_is_not_reproduced_and_names_the_first(repeated, step, said):
    verdict = compare(_logged(*_ORIGINAL), repeated)
    assert not verdict.reproduced
    assert verdict.first_difference == step
    assert verdict.describe() == said


def test_other_steps_with_the_same_losses_are_not_reproduced():
    repeated = [(400, 0.5), (800, 0.25), (1000, 0.125)]
    verdict = compare(_logged(*_ORIGINAL), repeated)
    assert not verdict.reproduced
    assert verdict.first_difference == 1200
    assert verdict.describe() == (
        "not reproduced: the runs logged different steps, from the original's "
        "step 1,200 on"
    )


@pytest.mark.parametrize(
    ("repeated", "same"),
    [(list(_ORIGINAL[:2]), 2), ([*_ORIGINAL, (1600, 0.0625)], 3)],
    ids=["shorter", "longer"],
)
def test_a_repeat_of_another_length_is_not_reproduced(repeated, same):
    verdict = compare(_logged(*_ORIGINAL), repeated)
    assert not verdict.reproduced
    assert (verdict.first_difference, verdict.compared) == (None, same)
    assert verdict.describe() == (
        "not reproduced: one run logged more steps than the other (the same "
        f"first {same})"
    )


@pytest.mark.parametrize(
    ("original", "repeated"),
    [((), list(_ORIGINAL)), (_ORIGINAL, []), ((), [])],
    ids=["original-empty", "repeat-empty", "both-empty"],
)
def test_no_logged_losses_prove_nothing(original, repeated):
    verdict = compare(_logged(*original), repeated)
    assert not verdict.reproduced
    assert verdict.describe() == "not reproduced: no logged losses to compare"


def test_the_losses_compared_are_the_ones_the_ledger_kept(runs_root):
    folder = _finished(TrainConfig(model="mlp", epochs=1))
    lines = [
        json.dumps({"kind": "step", "global_step": s, "loss": x}) for s, x in _ORIGINAL
    ]
    lines.insert(1, json.dumps({"kind": "epoch", "epoch": "damaged"}))  # skipped
    text = "\n".join(lines) + '\n{"kind": "step", "global_st'  # torn by a crash
    (folder.path / METRICS_FILE).write_text(text, encoding="utf-8")
    assert compare_with_folder(folder, list(_ORIGINAL)).reproduced
    late = compare_with_folder(folder, [(400, 0.5), (800, 0.25), (1200, 0.5)])
    assert (late.first_difference, late.original, late.repeated) == (1200, 0.125, 0.5)


# ------------------------------------------------------------ refused by the ledger


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (
            lambda f, cfg: f.update(status="running"),
            "run {id} is still training (or was interrupted): only a finished run "
            "can be reproduced step for step",
        ),
        *(
            (
                lambda f, cfg, s=status: f.update(status=s),
                f"run {{id}} did not finish ({status}): only a finished run can be "
                "reproduced step for step",
            )
            for status in ("stopped", "failed", "closed", "dismissed")
        ),
        (
            lambda f, cfg: f.update(started_from="weights from w.pt"),
            "run {id} started from weights from w.pt, not from its seed: its config "
            "alone cannot repeat it",
        ),
        (
            lambda f, cfg: f.record_mask_change(3, ["head.weight"]),
            "run {id} changed its freeze mask while it trained: its starting config "
            "would train other layers, so it cannot repeat it",
        ),
        (
            lambda f, cfg: f.update(changed_on_resume=["epochs", "lr"]),
            "run {id} was resumed with other settings (epochs, lr): no single config "
            "repeats it",
        ),
        (
            lambda f, cfg: f.update(config={}),
            "run {id} has no config in its run.json",
        ),
        (
            lambda f, cfg: f.update(config={**cfg.to_dict(), "lr": -1.0}),
            "run {id} has no usable config: lr",
        ),
    ],
    ids=[
        "running",
        "stopped",
        "failed",
        "closed",
        "dismissed",
        "weights",
        "mask",
        "resumed",
        "no-config",
        "bad-config",
    ],
)
def test_every_run_its_config_cannot_repeat_is_refused_with_why(
    runs_root, setup, reason
):
    cfg = TrainConfig(model="mlp", epochs=1)
    folder = _finished(cfg)
    assert reproducible(summarize(folder)) is None
    setup(folder, cfg)
    why = reproducible(summarize(folder))
    assert why is not None
    assert why.startswith(reason.format(id=folder.id))
    assert _refusal(folder) == why


def test_a_damaged_or_missing_run_json_is_refused(runs_root):
    folder = _finished(TrainConfig(model="mlp", epochs=1))
    (folder.path / RUN_FILE).write_text('{"status": "finished", "conf', "utf-8")
    why = reproducible(summarize(folder))
    assert why is not None
    assert why.startswith(f"run {folder.id} is damaged: run.json is not valid JSON")
    assert _refusal(folder) == why
    (folder.path / RUN_FILE).unlink()
    with pytest.raises(ConfigError, match=f"run {folder.id} has no readable run.json"):
        original_config(folder)


# --------------------------------------------------- refused for what it was made of


def test_an_image_folder_run_is_repeated_only_on_the_data_it_recorded(
    runs_root, tmp_path
):
    root = make_folder(tmp_path / "d", 2, per_class=2, size=8)
    cfg = TrainConfig(dataset="folder", data_dir=str(root), image_size=8, model="mlp")
    folder = _finished(cfg)
    assert _refusal(folder) == (
        f"run {folder.id} did not record its data ({DATA_FILE} is missing)"
    )
    (folder.path / DATA_FILE).write_text("[1, 2", encoding="utf-8")  # damaged
    assert "did not record its data" in _refusal(folder)

    record_data(folder, fingerprint_folder(scan_folder(root)))
    assert original_config(folder) == cfg  # the same files: repeated
    (root / "class00" / "000.jpg").write_bytes(b"other bytes")
    assert _refusal(folder) == (
        f"the data of run {folder.id} changed since it trained: 1 file changed "
        "(class00/000.jpg)"
    )
    shutil.rmtree(root)
    assert _refusal(folder).startswith(
        f"the data of run {folder.id} cannot be read now: no such folder"
    )


@pytest.mark.parametrize("recorded", [None, 12, ["abc"]], ids=["none", "int", "list"])
def test_a_model_file_run_without_its_hash_is_refused(runs_root, net_file, recorded):
    cfg = TrainConfig(model=f"{net_file}:Net", epochs=1)
    folder = _finished(cfg)
    if recorded is not None:
        folder.update(**{SHA_KEY: recorded})
    assert _refusal(folder) == (
        f"run {folder.id} does not record the hash of {net_file}: whether the file "
        "changed since cannot be told"
    )


def test_a_model_file_run_is_repeated_only_from_the_same_file(runs_root, net_file):
    cfg = TrainConfig(model=f"{net_file}:Net", epochs=1)
    then = sha_of(net_file)
    folder = _finished(cfg, **{SHA_KEY: then})
    assert original_config(folder) == cfg  # the same file: repeated
    net_file.write_text(NET + "# edited\n", encoding="utf-8")
    assert _refusal(folder) == (
        f"{net_file} changed since run {folder.id} was made from it (SHA-256 "
        f"{then[:12]} then, {sha_of(net_file)[:12]} now): it may build another model"
    )
    net_file.unlink()
    assert _refusal(folder) == (
        f"the model file of run {folder.id} cannot be read now: {net_file}: no such "
        "file"
    )


def test_opening_a_checkpoint_without_its_model_files_hash_says_so(
    tmp_path, net_file, tiny_arrays
):
    cfg = TrainConfig(model=f"{net_file}:Net", max_steps=1, batch_size=64)
    run = prepare_run(cfg, arrays=tiny_arrays)
    fit(run)
    payload = checkpoint_dict(run)
    assert payload[SHA_KEY] == sha_of(net_file)
    payload[SHA_KEY] = None
    path = write_checkpoint(tmp_path / "net.pt", payload)
    opened = Session(origin="test").open(path, evaluate=False)
    (note,) = [n for n in opened.notes if "hash" in n]
    assert note.endswith(
        f"does not record the hash of {net_file}: whether the file changed since "
        "cannot be told."
    )


# ------------------------------------------------------------ on the command line


def test_runs_reproduce_records_no_run_and_keeps_the_verdict(runs_root, capsys):
    flags = ["--model", "mlp", "--max-steps", "2", "--log-every", "1"]
    assert main(["train", "--quiet", *flags]) == 0
    (original,) = list_runs()
    capsys.readouterr()
    assert main(["runs", "reproduce", original.id]) == 0
    out = capsys.readouterr().out
    assert "reproduced: all 2 logged losses are identical" in out
    assert [r.id for r in list_runs()] == [original.id]  # the check is no run
    assert original.folder.info()["last_reproduction"] == (
        "reproduced: all 2 logged losses are identical"
    )

    metrics = original.folder.path / METRICS_FILE
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    step = next(r for r in records if r["kind"] == "step" and r["global_step"] == 2)
    step["loss"] = 9.0  # as if the first run had trained otherwise
    metrics.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["runs", "reproduce", original.id]) == 1
    said = original.folder.info()["last_reproduction"]
    assert said.startswith("not reproduced: the losses first differ at step 2 (9.0 vs ")
    assert said in capsys.readouterr().out
    assert [r.id for r in list_runs()] == [original.id]


def test_runs_reproduce_refuses_a_run_of_several_processes_saying_where(
    runs_root, capsys
):
    flags = ["--model", "mlp", "--max-steps", "2", "--log-every", "1"]
    assert main(["train", "--quiet", *flags]) == 0
    (original,) = list_runs()
    original.folder.update(world_size=2)  # as `train --nproc 2` records it
    capsys.readouterr()
    assert main(["runs", "reproduce", original.id]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"ptcore-workbench runs: error: run {original.id} trained on 2 processes: "
        "here a repeat trains on one, which is not the same run; reproduce it "
        "from the window's Runs tab, which trains it on 2\n"
    )
    assert "last_reproduction" not in original.folder.info()
