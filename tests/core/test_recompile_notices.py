"""A compiled run says when it compiled again and why; an eager run says nothing."""

from __future__ import annotations

import torch

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.perf.graph_breaks import BATCH_SIZE
from workbench.core.train.engine import fit, prepare_run


def test_the_partial_last_batch_recompile_is_a_notice_with_its_cause(tiny_arrays):
    torch._dynamo.reset()  # another test's compiled mlp would be reused
    # 256 images in batches of 96: the epoch's last batch (64) compiles again.
    cfg = TrainConfig(model="mlp", compile=True, epochs=1, batch_size=96, log_every=1)
    events = fit(prepare_run(cfg, arrays=tiny_arrays))
    notices = [e.message for e in events if isinstance(e, E.Notice)]
    again = [m for m in notices if m.startswith("torch.compile compiled again: ")]
    assert any(BATCH_SIZE in m and "expected 96, actual 64" in m for m in again), again
    # Said by the time the recompiled step's CompileFinished arrives.
    kinds = [type(e).__name__ for e in events]
    second = [i for i, e in enumerate(events) if isinstance(e, E.CompileFinished)][1]
    assert any(
        kinds[i] == "Notice" and BATCH_SIZE in events[i].message for i in range(second)
    )


def test_an_eager_run_has_no_recompile_notices(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=96, log_every=1)
    events = fit(prepare_run(cfg, arrays=tiny_arrays))
    assert not any(
        isinstance(e, E.Notice) and "compiled again" in e.message for e in events
    )
