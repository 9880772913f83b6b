"""torch.compile explained: graph breaks at the user's line, recompiles, their causes.

Recompiles are provoked with the ``eager`` backend: the guards that fail and the
``recompiles`` log come from Dynamo whatever the backend, and inductor takes
about 20 s per model on the 2-core CPU.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch
from torch import nn

from workbench.core.models.builtins import build_model
from workbench.core.models.catalog import BUILTIN_MODELS, LEGACY_MODELS
from workbench.core.perf.graph_breaks import (
    BATCH_SIZE,
    MODE,
    NUMBER,
    OTHER,
    SHAPE,
    CompileReport,
    GraphBreak,
    Recompile,
    explain_graph_breaks,
    parse_recompile,
    recompile_cause,
    report_lines,
    watch_recompiles,
)

# A user's model file whose forward reads a Python number off a tensor.
ITEM_NET = """\
from torch import nn


class Net(nn.Module):
    def __init__(self, num_classes, in_channels=1):
        super().__init__()
        self.head = nn.Linear(28 * 28 * in_channels, num_classes)

    def forward(self, x):
        x = x.flatten(1)
        scale = x.abs().max().item()
        return self.head(x / scale)
"""
ITEM_LINE = ITEM_NET.splitlines().index("        scale = x.abs().max().item()") + 1

LOOP_NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, num_classes, in_channels=1):
        super().__init__()
        self.head = nn.Linear(28 * 28 * in_channels, num_classes)

    def forward(self, x):
        x = x.flatten(1)
        for _ in range(2):
            x = x / x.abs().max().item()
        return self.head(x)
"""
LOOP_LINE = LOOP_NET.splitlines().index("            x = x / x.abs().max().item()") + 1


def _model_file(folder: Path, text: str) -> nn.Module:
    path = folder / "item_net.py"
    path.write_text(text)
    return build_model(f"{path}:Net", num_classes=10, seed=0)


def test_an_item_in_forward_is_one_break_at_its_line(tmp_path: Path) -> None:
    report = explain_graph_breaks(
        _model_file(tmp_path, ITEM_NET), torch.zeros(2, 1, 28, 28) + 1
    )

    assert report.error == ""
    assert report.graphs == 2  # before the break, and the rest after it
    (brk,) = report.breaks
    assert (Path(brk.file), brk.line) == (tmp_path / "item_net.py", ITEM_LINE)
    assert brk.code == "scale = x.abs().max().item()"
    assert "item()" in brk.reason


def test_a_break_inside_a_loop_says_the_function_is_skipped(tmp_path: Path) -> None:
    # Dynamo gives up on the whole forward: no graph, and no graph to blame.
    report = explain_graph_breaks(
        _model_file(tmp_path, LOOP_NET), torch.ones(2, 1, 28, 28)
    )

    assert report.graphs == 0
    (brk,) = report.breaks
    assert brk.line == LOOP_LINE
    assert "item()" in brk.reason
    assert "skips this whole function" in brk.detail


class _AdaptiveHead(nn.Module):
    """Its break is deep in torch (``nonzero`` in ``nn/modules/adaptive.py``)."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 8])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        target = torch.zeros(x.shape[0], dtype=torch.long)
        return self.head(x, target).loss


# Dynamo's own warning after the break; the suite turns warnings into errors.
@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor:UserWarning")
def test_a_break_inside_torch_is_placed_at_the_user_line_calling_it() -> None:
    report = explain_graph_breaks(_AdaptiveHead(), torch.randn(2, 16))

    (brk,) = report.breaks
    line = _AdaptiveHead.forward.__code__.co_firstlineno + 2
    assert (brk.file, brk.line) == (__file__, line)
    assert brk.code == "return self.head(x, target).loss"


@pytest.mark.parametrize("name", BUILTIN_MODELS + LEGACY_MODELS)
def test_the_built_in_models_compile_to_one_graph(name: str) -> None:
    model = build_model(name, num_classes=10, seed=0, input_shape=(1, 28, 28))

    report = explain_graph_breaks(model, torch.randn(2, 1, 28, 28))

    assert report == CompileReport(graphs=1, breaks=())
    assert report_lines(report) == ["no graph breaks: the model compiles to one graph"]


class _Counting:
    """An eager backend that counts the graphs it is given (the trainer's compiles)."""

    def __init__(self) -> None:
        self.graphs = 0

    def __call__(self, gm: torch.fx.GraphModule, _inputs: object) -> object:
        self.graphs += 1
        return gm.forward


def _train_step(model: nn.Module, batch: int) -> None:
    x, y = torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))
    nn.functional.cross_entropy(model(x), y).backward()


def test_explaining_a_compiled_model_leaves_its_training_alone() -> None:
    model = build_model("small-cnn", num_classes=10, seed=0)
    backend = _Counting()
    model.compile(backend=backend)
    _train_step(model, 8)
    config = torch._dynamo.config.get_config_copy()
    state = {k: v.clone() for k, v in model.state_dict().items()}

    with watch_recompiles() as watch:
        report = explain_graph_breaks(model, torch.randn(2, 1, 28, 28))
        # BatchNorm statistics: the trace ran on a copy
        assert all(torch.equal(v, model.state_dict()[k]) for k, v in state.items())
        _train_step(model, 8)

    assert report.breaks == ()
    assert report.graphs == 1
    assert backend.graphs == 1  # the trainer's graph is still there, not traced again
    assert watch.recompiles == ()
    assert torch._dynamo.config.get_config_copy() == config


def test_compiling_after_an_explain_is_not_a_recompile() -> None:
    model = build_model("cnn", num_classes=10, seed=0)
    explain_graph_breaks(model, torch.randn(2, 1, 28, 28))
    backend = _Counting()
    model.compile(backend=backend)

    with watch_recompiles() as watch:
        _train_step(model, 8)
        _train_step(model, 8)

    assert backend.graphs == 1
    assert watch.recompiles == ()


@pytest.fixture
def fresh_dynamo() -> None:
    """Dynamo as in a new process: ``_Scaled`` is compiled by several tests, and
    sizes or values seen by one would make the next one's shapes dynamic."""
    torch._dynamo.reset()


def test_a_torch_compile_wrapper_is_explained_as_its_model() -> None:
    backend = _Counting()
    wrapped = torch.compile(build_model("mlp", num_classes=10, seed=0), backend=backend)

    report = explain_graph_breaks(wrapped, torch.randn(2, 1, 28, 28))

    assert report == CompileReport(graphs=1, breaks=())
    assert backend.graphs == 0


class _Raises(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("images must be 32x32")


def test_a_failing_forward_is_reported_not_raised() -> None:
    report = explain_graph_breaks(_Raises(), torch.randn(2, 1, 28, 28))

    assert report.error == "ValueError: images must be 32x32"
    # Dynamo also lists the raise itself as a break that skips forward.
    assert report_lines(report)[0] == (
        "torch.compile could not trace the model: ValueError: images must be 32x32"
    )


class _Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.scale = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * self.scale


@pytest.mark.usefixtures("fresh_dynamo")
def test_a_partial_last_batch_recompiles_once() -> None:
    model = _Scaled()
    model.compile(backend="eager")

    with watch_recompiles() as watch:
        for batch in (8, 8, 5, 3):  # the third size is traced dynamic already
            model(torch.randn(batch, 4))

    (recompile,) = watch.recompiles
    assert recompile.cause == BATCH_SIZE
    assert (
        recompile.reason == "tensor 'x' size mismatch at index 0. expected 8, actual 5"
    )


@pytest.mark.usefixtures("fresh_dynamo")
def test_a_changing_python_float_recompiles_once() -> None:
    model = _Scaled()
    model.compile(backend="eager")

    with watch_recompiles() as watch:
        for step in range(4):  # like a scheduler's value read in forward
            model.scale = 1.0 / (step + 1)
            model(torch.randn(8, 4))

    # torch 2.14 traces the float as a symbol after its first change.
    (recompile,) = watch.recompiles
    assert recompile.cause == NUMBER
    assert recompile.reason == "self.scale == 1.0"
    line = _Scaled.forward.__code__.co_firstlineno + 1
    assert recompile.where == f"{__file__}:{line}"


def test_watching_prints_nothing_and_puts_the_log_settings_back(
    capfd, fresh_dynamo
) -> None:
    log = logging.getLogger("torch._dynamo.guards.__recompiles")
    before = (log.level, log.propagate, list(log.handlers))
    model = _Scaled()
    model.compile(backend="eager")

    with watch_recompiles() as watch:
        model(torch.randn(8, 4))
        model(torch.randn(6, 4))

    assert len(watch.recompiles) == 1
    assert (log.level, log.propagate, list(log.handlers)) == before
    assert not torch._logging._internal.log_state.is_artifact_enabled("recompiles")
    assert "Recompiling" not in capfd.readouterr().err


@pytest.mark.usefixtures("fresh_dynamo")
def test_watching_keeps_a_recompiles_log_the_user_asked_for() -> None:
    torch._logging.set_logs(recompiles=True)
    try:
        model = _Scaled()
        model.compile(backend="eager")
        with watch_recompiles() as watch:
            model(torch.randn(8, 4))
            model(torch.randn(7, 4))
        assert len(watch.recompiles) == 1
        assert torch._logging._internal.log_state.is_artifact_enabled("recompiles")
    finally:
        torch._logging.set_logs()


SIZE = """Recompiling function forward in /m/model.py:80
    triggered by the following guard failure(s):
    - 0/1: tensor 'x' size mismatch at index 0. expected 8, actual 5
    - 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 5"""
INT = """Recompiling function forward in /m/model.py:20
    triggered by the following guard failure(s):
    - 1/1: self.k == 3         # return self.fc(x) * self.k  # m/model.py:21 (HINT: ...)
    - User stack trace:
    -   File "/m/model.py", line 21, in forward
    -     return self.fc(x) * self.k
    - 1/0: self.k == 2         # return self.fc(x) * self.k  # m/model.py:21
    - User stack trace:
    -   File "/m/other.py", line 9, in forward"""


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            SIZE,
            Recompile(
                "tensor 'x' size mismatch at index 0. expected 8, actual 5", BATCH_SIZE
            ),
        ),
        (INT, Recompile("self.k == 3", NUMBER, "/m/model.py:21")),
    ],
    ids=["size", "int"],
)
def test_a_recompile_message_parses_to_its_newest_guard_failure(
    message, expected
) -> None:
    assert parse_recompile(message) == expected


@pytest.mark.parametrize(
    ("reason", "cause"),
    [
        ("tensor 'x' size mismatch at index 0. expected 256, actual 104", BATCH_SIZE),
        ("tensor 'x' size mismatch at index 2. expected 28, actual 32", SHAPE),
        ("L['lr'] == 0.001", NUMBER),
        ("self.k == -2", NUMBER),
        ("GLOBAL_STATE changed: grad_mode ", MODE),
        ("fn.__self__._modules['1'].training == True", MODE),
        ("tensor 'x' dtype mismatch. expected Float, actual Double.", OTHER),
    ],
)
def test_guard_failures_get_a_plain_cause(reason: str, cause: str) -> None:
    assert recompile_cause(reason) == cause


def test_the_report_text() -> None:
    brk = GraphBreak(
        "Unsupported Tensor.item() call", "/u/model.py", 12, "s = x.item()", "why"
    )
    size = Recompile(
        "tensor 'x' size mismatch at index 0. expected 8, actual 5", BATCH_SIZE
    )
    lr = Recompile("self.lr == 0.1", NUMBER, "/u/model.py:14")
    report = CompileReport(2, (brk,), (size, lr, size))

    assert report_lines(report) == [
        "1 graph break (2 graphs):",
        "  model.py:12  s = x.item()  \u2014 Unsupported Tensor.item() call",
        "      why",
        "3 recompiles:",
        f"  {BATCH_SIZE}: {size.reason} \u00d72",
        f"  {NUMBER}: self.lr == 0.1 (model.py:14)",
    ]
    failed = CompileReport(0, (), error="RuntimeError: boom")
    assert report_lines(failed) == [
        "torch.compile could not trace the model: RuntimeError: boom"
    ]


def test_a_configs_model_is_explained_on_its_own_images():
    from workbench.core.config import TrainConfig
    from workbench.core.perf.speed_doctor import explain_config

    report = explain_config(TrainConfig(model="small-cnn", compile=True))
    assert report.error == ""
    assert report.breaks == ()
    assert report.graphs == 1
