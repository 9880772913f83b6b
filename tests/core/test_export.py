"""``export``: every built-in model to every format, each proven equal."""

from __future__ import annotations

import json

import pytest
import torch

from workbench.cli.commands import main
from workbench.core.checkpoints.io import info_of, load_checkpoint
from workbench.core.export import formats as X
from workbench.core.export import verify as V

MODELS = ("small-cnn", "cnn", "lazy-cnn", "mlp")


def _train(path, model: str) -> None:
    flags = ["train", "--quiet", "--max-steps", "3", "--model", model]
    assert main([*flags, "--save", str(path)]) == 0


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """One tiny digits checkpoint per built-in model, trained once."""
    folder = tmp_path_factory.mktemp("export-ckpts")
    mp = pytest.MonkeyPatch()
    mp.setenv("PTCORE_RUNS_DIR", str(tmp_path_factory.mktemp("export-runs")))
    paths = {}
    try:
        for model in MODELS:
            paths[model] = folder / f"{model}.pt"
            _train(paths[model], model)
    finally:
        mp.undo()
    return paths


@pytest.fixture(scope="module")
def exports(checkpoints, tmp_path_factory):
    """Each model exported to all three formats through the command line."""
    done = {}
    for model, path in checkpoints.items():
        out = tmp_path_factory.mktemp(f"export-{model}")
        code = main(["export", str(path), "--out", str(out)])
        done[model] = (code, out)
    return done


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_every_built_in_model_exports_to_every_format_and_verifies(
    model, exports, checkpoints
):
    code, out = exports[model]
    assert code == 0
    for name in X.FILE_NAMES.values():
        assert (out / name).is_file()
    assert not (out / X.FAILED_MARKER).exists()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", X.FORMATS)
def test_each_format_matches_the_eager_model_at_batch_1_and_64(
    fmt, exports, checkpoints
):
    payload = load_checkpoint(checkpoints["small-cnn"])
    model = X.eval_model(payload)
    run = V.load_runner(fmt, exports["small-cnn"][1] / X.FILE_NAMES[fmt])
    shape = info_of(payload).image_shape
    for batch in (1, 64, 5):
        x = torch.randn(batch, *shape)
        with torch.no_grad():
            assert torch.allclose(run(x), model(x), atol=1e-4)


@pytest.mark.slow
def test_the_command_prints_one_line_per_format_and_a_final_line(
    checkpoints, tmp_path, capsys
):
    out = tmp_path / "out"
    code = main(["export", str(checkpoints["mlp"]), "--out", str(out)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert [line.split()[0] for line in lines[:3]] == list(X.FORMATS)
    for line in lines[:3]:
        assert "agreement 100.00% (360/360)" in line
        assert "max |diff|" in line
        assert line.endswith("ok")
    assert lines[3].startswith("exported mlp to")
    assert "3/3 verified" in lines[3]


@pytest.mark.slow
def test_format_subset_writes_only_those_files(checkpoints, tmp_path):
    out = tmp_path / "out"
    code = main(
        ["export", str(checkpoints["mlp"]), "--format", "onnx", "--out", str(out)]
    )
    assert code == 0
    names = {p.name for p in out.iterdir()}
    assert names == {
        "model.onnx",
        "preprocess.json",
        "labels.json",
        "MODEL_CARD.md",
        "predict.py",
    }


def _shift_last_bias(real):
    """An exporter that saves a model whose logits all moved by 1e-3.

    Every top-1 class stays the same: only the difference threshold can see it.
    """

    def exporter(model, shape, path):
        last = [m for m in model.modules() if isinstance(m, torch.nn.Linear)][-1]
        with torch.no_grad():
            last.bias += 1e-3
        real(model, shape, path)

    return exporter


@pytest.mark.slow
def test_a_wrong_artifact_fails_with_exit_1_and_a_marker(
    checkpoints, tmp_path, monkeypatch, capsys
):
    real = X.EXPORTERS["exported"]
    monkeypatch.setitem(X.EXPORTERS, "exported", _shift_last_bias(real))
    out = tmp_path / "out"
    # Two formats are enough to show that only the wrong one is marked.
    formats = ["--format", "torchscript", "exported"]
    code = main(["export", str(checkpoints["mlp"]), *formats, "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 1
    assert (out / "model.pt2").is_file()  # kept, but marked
    marker = (out / X.FAILED_MARKER).read_text()
    assert "exported" in marker
    assert "torchscript" not in marker
    line = next(s for s in text.splitlines() if s.startswith("exported "))
    assert "agreement 100.00%" in line
    assert "FAILED" in line
    assert "FAILED" in text.splitlines()[-1]
    assert "VERIFICATION FAILED" in (out / "MODEL_CARD.md").read_text()


@pytest.mark.slow
def test_an_artifact_wrong_only_at_batch_1_fails(checkpoints, tmp_path, monkeypatch):
    real = V.load_runner

    def runner(fmt, path):
        run = real(fmt, path)
        if fmt != "onnx":
            return run
        # Right for every batch of 64, wrong for a single image.
        return lambda x: run(x) + (1.0 if len(x) == 1 else 0.0)

    monkeypatch.setattr(V, "load_runner", runner)
    result = X.export_checkpoint(checkpoints["mlp"], tmp_path / "out")
    by_format = {r.format: r for r in result.formats}
    assert by_format["torchscript"].passed
    assert by_format["exported"].passed
    assert not by_format["onnx"].passed
    assert by_format["onnx"].verification.agreement == 1.0
    assert (tmp_path / "out" / X.FAILED_MARKER).is_file()


@pytest.mark.slow
def test_a_format_that_cannot_take_the_model_says_why(
    checkpoints, tmp_path, monkeypatch, capsys
):
    def refuses(model, shape, path):
        raise RuntimeError("unsupported operator: aten::frobnicate\nmore detail")

    monkeypatch.setitem(X.EXPORTERS, "onnx", refuses)
    code = main(["export", str(checkpoints["mlp"]), "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert code == 1
    assert "onnx" in text
    assert "cannot export mlp: unsupported operator: aten::frobnicate" in text
    assert "more detail" not in text
    assert (tmp_path / "model.pt").is_file()
    assert (tmp_path / "model.pt2").is_file()
    assert not (tmp_path / "model.onnx").exists()


def test_a_bad_checkpoint_path_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(["export", str(tmp_path / "missing.pt"), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("ptcore-workbench export: error: ")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_preprocess_and_labels_match_the_checkpoint(checkpoints, exports):
    for model in ("small-cnn", "mlp"):
        info = info_of(load_checkpoint(checkpoints[model]))
        out = exports[model][1]
        assert json.loads((out / "labels.json").read_text()) == list(info.class_names)
        doc = json.loads((out / "preprocess.json").read_text())
        assert doc["recipe"] == "canvas"
        assert doc["input_shape"] == list(info.image_shape)
        assert doc["channels"] == info.channels
        assert doc["mean"] == list(info.mean)
        assert doc["std"] == list(info.std)


@pytest.mark.slow
def test_the_model_card_states_the_verification_figures(exports):
    card = (exports["cnn"][1] / "MODEL_CARD.md").read_text()
    assert "digits" in card
    assert "validation accuracy" in card
    assert "360 validation images" in card
    for fmt in X.FORMATS:
        assert f"| {fmt} |" in card
    assert "100.00% (360/360)" in card
    assert "All exported files reproduce the eager model." in card
    assert torch.__version__ in card


def test_a_changed_class_fails_even_within_the_tolerance():
    assert V.Verification(360, 360, 0.0).passed
    assert not V.Verification(359, 360, 0.0).passed
    assert not V.Verification(360, 360, 2e-4).passed
    assert not V.Verification(360, 360, 0.0, error="batch of 1: refused").passed


@pytest.mark.slow
@pytest.mark.parametrize("model", ["resnet18", "mobilenet_v3_small"])
def test_torchvision_models_export_to_every_format_and_verify(model, tmp_path, capsys):
    """A torchvision model (3 channels on digits) takes all three formats."""
    ckpt = tmp_path / f"{model}.pt"
    flags = ["train", "--quiet", "--max-steps", "1", "--model", model]
    assert main([*flags, "--save", str(ckpt)]) == 0
    capsys.readouterr()
    assert main(["export", str(ckpt), "--out", str(tmp_path / "out")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(line.endswith("ok") for line in lines[:3])
    doc = json.loads((tmp_path / "out" / "preprocess.json").read_text())
    assert doc["channels"] == 3


@pytest.mark.slow
def test_an_out_path_that_is_a_file_is_one_line_and_exit_2(
    checkpoints, tmp_path, capsys
):
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    code = main(["export", str(checkpoints["mlp"]), "--out", str(taken)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("ptcore-workbench export: error: cannot create")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_model_card_has_the_data_fingerprint_and_confusion_matrix(exports):
    cards = {m: (exports[m][1] / "MODEL_CARD.md").read_text() for m in ("cnn", "mlp")}
    card = cards["cnn"]
    assert "## Confusion matrix" in card
    matrix = card.split("## Confusion matrix", 1)[1].split("\n## ", 1)[0]
    rows = [
        line
        for line in matrix.splitlines()
        if line.startswith("| ") and "|---" not in line
    ]
    table = [row for row in rows if row.split("|")[1].strip().isdigit()]
    assert len(table) == 10
    counts = [sum(int(v) for v in row.split("|")[2:-1]) for row in table]
    assert sum(counts) == 360
    fingerprints = {
        m: next(line for line in text.splitlines() if "fingerprint" in line)
        for m, text in cards.items()
    }
    # The same validation data under two models: the same fingerprint.
    assert fingerprints["cnn"] == fingerprints["mlp"]
    assert len(fingerprints["cnn"].split("`")[1]) == 64


def test_verification_images_stream_instead_of_being_held_at_once():
    made = []

    def endless():
        while True:
            made.append(1)
            yield torch.zeros(256, 1, 28, 28), torch.zeros(256, dtype=torch.long)

    stream = V.validation_batches(endless(), limit=1_000)
    x, y = next(stream)
    assert x.shape == (V.VERIFY_BATCH, 1, 28, 28)
    assert len(y) == V.VERIFY_BATCH
    assert len(made) == 1  # one source batch read, not all of them
    assert sum(len(x) for x, _ in stream) + V.VERIFY_BATCH == 1_000


@pytest.mark.slow
def test_exporting_again_leaves_no_stale_model_beside_the_new_card(
    checkpoints, tmp_path
):
    out = tmp_path / "out"
    X.export_checkpoint(checkpoints["mlp"], out)
    assert (out / "model.onnx").is_file()
    result = X.export_checkpoint(checkpoints["mlp"], out, ["torchscript"])
    assert result.passed
    assert result.out_dir == out
    assert not (out / "model.onnx").exists()
    assert not (out / "model.pt2").exists()
    assert (out / "model.pt").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".export-")]
