"""An export's ``predict.py``: the workbench's answer, without the workbench.

The script runs in a fresh interpreter with ``-I`` (no PYTHONPATH, no user
site), from the export folder, and must print the class and every probability
that ``ptcore-workbench predict --checkpoint`` computes for the same picture.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from tests import prefetch
from tests.idx_files import write_mnist_raw
from tests.image_folders import make_folder
from tests.warm_python import SIDE_BY_SIDE, WarmPythons
from workbench.cli.commands import main
from workbench.core.checkpoints.io import (
    config_of,
    eval_model,
    info_of,
    load_checkpoint,
)
from workbench.core.data.preprocess import _resize
from workbench.core.export import formats as X
from workbench.core.predict import (
    PHOTO_DATASETS,
    load_image,
    photo_input,
    predict,
    preprocess,
)

# Trains and exports three runs (in the background), and starts a fresh
# interpreter per check.
pytestmark = pytest.mark.slow

TOLERANCE = 1e-5
# What predict.py may import: the standard library's and the runtimes'.
ALLOWED_IMPORTS = {
    "__future__",
    "argparse",
    "collections",
    "contextlib",
    "importlib",
    "json",
    "pathlib",
    "sys",
    "typing",
    "warnings",
    "numpy",
    "PIL",
    "torch",
    "onnxruntime",
}


WORKBENCH = [sys.executable, "-m", "workbench"]


@prefetch.plan("exported")
def exported_plan(folder: Path):
    """Checkpoint and export folder per recipe: digits, MNIST-style, photos."""
    env = {**os.environ, **SIDE_BY_SIDE}
    env |= {"PTCORE_RUNS_DIR": str(folder / "runs")}
    env |= {"PTCORE_DATA_DIR": str(folder / "cache")}
    write_mnist_raw(folder / "mnist", "mnist")
    photos = make_folder(folder / "photos", 3, per_class=8, size=24)
    recipes = {
        "digits": ("--model", "small-cnn"),
        "mnist": (
            *("--dataset", "mnist", "--data-dir", str(folder / "mnist")),
            *("--no-download", "--model", "mlp"),
        ),
        "photo": (
            *("--dataset", "folder", "--data-dir", str(photos)),
            *("--image-size", "16", "--model", "small-cnn"),
        ),
    }
    train = [*WORKBENCH, "train", "--quiet", "--max-steps", "3"]
    trained = yield {
        name: prefetch.Command(
            [*train, *flags, "--save", str(folder / f"{name}.pt")], env, processes=2
        )
        for name, flags in recipes.items()
    }
    prefetch.succeeded(trained)
    export = [*WORKBENCH, "export"]
    exported = yield {
        name: prefetch.Command(
            [*export, str(folder / f"{name}.pt"), "--out", _out(folder, name)],
            env,
            processes=2,
        )
        for name in recipes
    }
    prefetch.succeeded(exported)
    return {name: (folder / f"{name}.pt", Path(_out(folder, name))) for name in recipes}


def _out(folder: Path, name: str) -> str:
    return str(folder / f"export-{name}")


@pytest.fixture(scope="module")
def exported(prefetched):
    return prefetched.result(exported_plan)


def _seven(path: Path) -> Path:
    """A dark 7 on white paper, off-centre: inverted, cropped and centred."""
    image = Image.new("L", (120, 90), 235)
    draw = ImageDraw.Draw(image)
    draw.line([(20, 12), (62, 12), (38, 78)], fill=20, width=7)
    draw.line([(30, 44), (54, 44)], fill=40, width=4)
    image.save(path)
    return path


def _one(path: Path) -> Path:
    """A thin upright stroke: its 20x20 fit is one pixel wide."""
    pixels = np.zeros((140, 100), dtype=np.uint8)
    pixels[20:120, 60:62] = 250
    pixels[20:30, 56:60] = 180  # a small serif, so the column is not uniform
    Image.fromarray(pixels).save(path)
    return path


def _photo(path: Path, size: tuple[int, int], seed: int) -> Path:
    """A colour picture of another size and aspect ratio than the model's."""
    rng = np.random.default_rng(seed)
    h, w = size
    ramp = np.linspace(0, 255, w, dtype=np.float64)[None, :, None]
    noise = rng.integers(0, 80, (h, w, 3))
    pixels = np.clip(ramp * np.array([1.0, 0.5, 0.2]) + noise, 0, 255)
    Image.fromarray(pixels.astype(np.uint8)).save(path)
    return path


def _pictures(recipe: str, folder: Path) -> list[Path]:
    if recipe == "photo":
        return [
            _photo(folder / "wide.png", (30, 45), 0),
            _photo(folder / "tall.jpg", (90, 64), 1),  # JPEG: decoded at 1/2 scale
        ]
    return [_seven(folder / "seven.png"), _one(folder / "one.png")]


def workbench_reading(ckpt: Path, image: Path) -> tuple[str, dict[str, float]]:
    """The class and probabilities ``ptcore-workbench predict`` computes."""
    payload = load_checkpoint(ckpt)
    cfg, info = config_of(payload), info_of(payload)
    if cfg.dataset in PHOTO_DATASETS:
        batch = photo_input(image, info)
    else:
        batch = preprocess(load_image(image), cfg.style_dataset, cfg.model, cfg.weights)
    result = predict(eval_model(payload), batch, info.class_names)[0]
    probs = dict(zip(info.class_names, result.probabilities, strict=True))
    return info.class_names[result.label], probs


# What predict.py may import, loaded once by the parent its processes fork from.
RUNTIMES = ("numpy", "PIL.Image", "torch", "onnxruntime")


def run_script(
    warm_python: WarmPythons, folder: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """``python -I predict.py ...`` in ``folder``: no PYTHONPATH, no workbench.

    A new process forked from one that imported the runtimes already.
    """
    return warm_python.run(
        ["predict.py", *args],
        cwd=folder,
        timeout=120,
        preload=RUNTIMES,
        isolated=True,
    )


def _largest_difference(warm_python, ckpt, out, images, *flags: str):
    done = run_script(warm_python, out, *map(str, images), "--json", *flags)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["image"] for r in records] == [str(p) for p in images]
    worst = 0.0
    for image, record in zip(images, records, strict=True):
        label, expected = workbench_reading(ckpt, image)
        assert record["label"] == label, image.name
        assert record["probabilities"].keys() == expected.keys()
        for name, p in expected.items():
            worst = max(worst, abs(record["probabilities"][name] - p))
    return worst, records


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
@pytest.mark.parametrize("recipe", ["digits", "mnist", "photo"])
def test_predict_script_matches_the_workbench_in_a_fresh_interpreter(
    exported, recipe, runtime, tmp_path, warm_python
):
    ckpt, out = exported[recipe]
    images = _pictures(recipe, tmp_path)
    worst, records = _largest_difference(
        warm_python, ckpt, out, images, "--runtime", runtime
    )
    assert worst <= TOLERANCE, f"{recipe}/{runtime}: {worst:.2e}"
    expected_file = "model.pt2" if runtime == "torch" else "model.onnx"
    assert {(r["runtime"], r["model"]) for r in records} == {(runtime, expected_file)}


def test_the_recipe_numbers_are_in_preprocess_json(exported):
    digits = json.loads((exported["digits"][1] / "preprocess.json").read_text())
    mnist = json.loads((exported["mnist"][1] / "preprocess.json").read_text())
    photo = json.loads((exported["photo"][1] / "preprocess.json").read_text())
    assert (digits["recipe"], digits["style"], digits["low_size"]) == (
        "canvas",
        "digits",
        8,
    )
    assert (mnist["style"], mnist["field_size"], mnist["box_size"]) == ("mnist", 28, 20)
    assert (photo["recipe"], photo["size"]) == ("image", 16)


def test_the_default_output_is_the_command_lines(
    exported, tmp_path, capsys, warm_python
):
    ckpt, out = exported["digits"]
    seven = str(_seven(tmp_path / "seven.png"))
    assert main(["predict", "--checkpoint", str(ckpt), seven]) == 0
    # onnx: the faster start
    done = run_script(warm_python, out, seven, "--runtime", "onnx")
    assert done.returncode == 0, done.stderr
    assert done.stdout == capsys.readouterr().out


def test_without_model_pt2_torch_runs_model_pt(exported, tmp_path, warm_python):
    ckpt, out = exported["mnist"]
    copy = tmp_path / "copy"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("model.pt2"))
    images = _pictures("mnist", tmp_path)
    worst, records = _largest_difference(warm_python, ckpt, copy, images)
    assert worst <= TOLERANCE
    assert records[0]["model"] == "model.pt"


def test_the_script_imports_no_workbench():
    tree = ast.parse(X.PREDICT_TEMPLATE.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert "workbench" not in imported
    assert imported <= ALLOWED_IMPORTS, imported - ALLOWED_IMPORTS


def test_every_export_holds_the_script(exported):
    for _ckpt, out in exported.values():
        assert (out / X.PREDICT_SCRIPT).read_bytes() == X.PREDICT_TEMPLATE.read_bytes()


def _one_line_exit_2(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0]


def test_a_missing_image_is_one_line_and_exit_2(exported, tmp_path, warm_python):
    missing = tmp_path / "no-such-digit.png"
    done = run_script(
        warm_python, exported["digits"][1], str(missing), "--runtime", "onnx"
    )
    _one_line_exit_2(done, str(missing), "no image at")


def test_an_unreadable_image_is_one_line_and_exit_2(exported, tmp_path, warm_python):
    fake = tmp_path / "notes.png"
    fake.write_text("not a picture")
    for recipe in ("digits", "photo"):
        done = run_script(
            warm_python, exported[recipe][1], str(fake), "--runtime", "onnx"
        )
        _one_line_exit_2(done, str(fake), "not an image")


def test_a_missing_model_file_is_one_line_and_exit_2(exported, tmp_path, warm_python):
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("predict.py", "preprocess.json", "labels.json"):
        shutil.copy(exported["digits"][1] / name, bare / name)
    image = str(_seven(tmp_path / "seven.png"))
    _one_line_exit_2(run_script(warm_python, bare, image), "nothing to run")
    _one_line_exit_2(
        run_script(warm_python, bare, image, "--runtime", "onnx"), "no model.onnx"
    )
    _one_line_exit_2(
        run_script(warm_python, bare, image, "--runtime", "torch"), "model.pt2"
    )


def test_a_one_pixel_wide_resize_is_pillows_bilinear():
    """The workbench's resize and predict.py's Pillow agree, 1 pixel wide too."""
    rng = np.random.default_rng(0)
    for height, width, out_h, out_w in [
        (100, 3, 20, 1),
        (7, 1, 15, 1),
        (40, 60, 9, 13),
    ]:
        image = rng.random((height, width), dtype=np.float32)
        pillow = Image.fromarray(image).resize(
            (out_w, out_h), Image.Resampling.BILINEAR
        )
        expected = np.clip(np.asarray(pillow), 0, 1)
        np.testing.assert_allclose(_resize(image, out_h, out_w), expected, atol=1e-5)


# ------------------------------------------------- tampered or mismatched files


def _template():
    """predict.py as a module (it imports no workbench)."""
    spec = importlib.util.spec_from_file_location(
        "exported_predict", X.PREDICT_TEMPLATE
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PHOTO_RECIPE = {
    "recipe": "image",
    "input_name": "input",
    "channels": 3,
    "mean": [0.5, 0.4, 0.3],
    "std": [0.2, 0.2, 0.2],
    "size": 16,
}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            {"mean": "0.5"},
            "mean must be a list of one number per channel (3), not '0.5'",
        ),
        (
            {"mean": [0.5]},
            "mean must be a list of one number per channel (3), not [0.5]",
        ),
        (
            {"std": [0, 1, 1]},
            "std must be above 0 (pixels are divided by it), not [0, 1, 1]",
        ),
        (
            {"std": [1, float("nan"), 1]},
            "std must be a list of one number per channel (3)",
        ),
        ({"recipe": "crop"}, 'recipe must be "canvas" or "image", not \'crop\''),
        ({"size": "16"}, "size must be a whole number of pixels >= 1, not '16'"),
        ({"channels": 0}, "channels must be a whole number >= 1, not 0"),
        ({"recipe": "canvas", "style": "emnist"}, 'style must be "mnist" or "digits"'),
    ],
)
def test_a_tampered_preprocess_json_is_refused_in_one_line(change, said):
    predict = _template()
    with pytest.raises(predict.Refused) as refused:
        predict.check_recipe({**PHOTO_RECIPE, **change})
    assert str(refused.value).startswith(f"preprocess.json: {said}")
    assert predict.check_recipe(dict(PHOTO_RECIPE)) == PHOTO_RECIPE


@pytest.mark.parametrize("labels", [{"0": "cat"}, [], ["cat", 1], ["cat", "cat"]])
def test_a_tampered_labels_json_is_refused_in_one_line(labels):
    predict = _template()
    with pytest.raises(predict.Refused, match=r"^labels\.json (must be|names)"):
        predict.check_labels(labels)


def test_a_zero_std_or_other_labels_end_predict_py_with_one_line(
    exported, tmp_path, warm_python
):
    out = exported["photo"][1]
    image = str(_pictures("photo", tmp_path)[0])
    zero_std = tmp_path / "zero-std"
    shutil.copytree(out, zero_std)
    recipe = json.loads((zero_std / "preprocess.json").read_text())
    recipe["std"] = [0] * len(recipe["std"])
    (zero_std / "preprocess.json").write_text(json.dumps(recipe))
    done = run_script(warm_python, zero_std, image, "--runtime", "onnx")
    _one_line_exit_2(done, "preprocess.json: std must be above 0")

    other_labels = tmp_path / "other-labels"
    shutil.copytree(out, other_labels)
    labels = json.loads((other_labels / "labels.json").read_text())
    (other_labels / "labels.json").write_text(json.dumps(labels[:-1]))
    done = run_script(warm_python, other_labels, image, "--runtime", "onnx")
    _one_line_exit_2(
        done,
        f"labels.json names {len(labels) - 1} classes, the model gives "
        f"{len(labels)} outputs",
    )
