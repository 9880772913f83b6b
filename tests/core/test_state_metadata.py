"""Weights keep their modules' versions wherever they are copied or saved.

MNASNet's loading checks the version a ``state_dict`` records in its
``_metadata``; a copy that drops it fails with "version should be set to 1 or
2 instead of None" (issue 34, item 34).
"""

from __future__ import annotations

import io
from collections import OrderedDict

import pytest
import torch

from workbench.core.checkpoints.io import load_model_state
from workbench.core.models.builtins import build_model, build_unseeded, snapshot_state
from workbench.core.models.state_dict_match import load_exact, strip_wrapper_prefixes

SHAPE = (3, 32, 32)


@pytest.fixture(scope="module")
def mnasnet():
    return build_model("mnasnet0_5", 4, seed=0, input_shape=SHAPE)


def _equal_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_a_snapshot_keeps_the_module_versions_and_loads_into_mnasnet(mnasnet):
    snapshot = snapshot_state(mnasnet)
    assert snapshot._metadata == mnasnet.state_dict()._metadata
    reader = build_unseeded("mnasnet0_5", 4, SHAPE)
    load_model_state(reader, snapshot)
    assert _equal_weights(reader, mnasnet)


def test_a_saved_state_loads_back_into_mnasnet(mnasnet):
    buffer = io.BytesIO()
    torch.save({"model_state": mnasnet.state_dict()}, buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)["model_state"]
    reader = build_unseeded("mnasnet0_5", 4, SHAPE)
    load_exact(reader, state)
    assert _equal_weights(reader, mnasnet)


def test_a_compiled_models_prefixed_state_keeps_its_versions_unprefixed(mnasnet):
    own = mnasnet.state_dict()
    prefixed = OrderedDict((f"_orig_mod.{k}", v) for k, v in own.items())
    prefixed._metadata = {"": {"version": 1}}
    prefixed._metadata.update(
        {f"_orig_mod.{k}" if k else "_orig_mod": v for k, v in own._metadata.items()}
    )
    cleaned = strip_wrapper_prefixes(prefixed)
    assert list(cleaned) == list(own)
    assert cleaned._metadata == own._metadata
    reader = build_unseeded("mnasnet0_5", 4, SHAPE)
    load_exact(reader, prefixed)
    assert _equal_weights(reader, mnasnet)


def test_a_plain_dict_without_versions_loads_as_this_codes_versions(mnasnet):
    plain = {k: v.clone() for k, v in mnasnet.state_dict().items()}
    reader = build_unseeded("mnasnet0_5", 4, SHAPE)
    load_exact(reader, plain)
    assert _equal_weights(reader, mnasnet)
