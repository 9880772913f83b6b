"""A freeze selection carried to another model by parameter name (issue 34, 27)."""

from __future__ import annotations

from workbench.core.models.builtins import build_model
from workbench.core.train.freezing import carry_mask


def names(model) -> list[str]:
    return [n for n, _ in model.named_parameters()]


def test_the_same_architecture_keeps_every_frozen_parameter():
    # Another dataset: other classes and input size, the same parameter names.
    digits, colour = (
        build_model("mlp", 10),
        build_model("mlp", 3, input_shape=(3, 8, 8)),
    )
    frozen = [n for n in names(digits) if not n.startswith("head.")]
    carried = carry_mask(frozen, names(colour))
    assert carried.frozen == tuple(frozen)
    assert carried.lost == ()
    assert carried.message("mlp", "mlp") == ""


def test_names_the_new_model_lacks_are_lost_and_said():
    mlp, cnn = build_model("mlp", 10), build_model("small-cnn", 10)
    frozen = names(mlp)  # hidden.* and head.*: small-cnn has a head too
    carried = carry_mask(frozen, names(cnn))
    assert carried.frozen == ("head.weight", "head.bias")  # in the new model's order
    assert set(carried.lost) == set(frozen) - {"head.weight", "head.bias"}
    total = len(frozen)
    assert carried.message("mlp", "small-cnn") == (
        f"Freeze selection partly kept: small-cnn has 2 of mlp's {total} frozen "
        f"parameters; the other {total - 2} are not in it"
    )


def test_nothing_in_common_clears_the_selection_and_says_so():
    hidden = [n for n in names(build_model("mlp", 10)) if n.startswith("hidden.")]
    carried = carry_mask(hidden, names(build_model("cnn", 10)))
    assert carried.frozen == ()
    assert carried.lost == tuple(hidden)
    assert carried.message("mlp", "cnn") == (
        f"Freeze selection cleared: cnn has none of mlp's {len(hidden)} frozen "
        "parameters"
    )


def test_nothing_frozen_carries_nothing_and_says_nothing():
    carried = carry_mask([], ["a.weight", "b.weight"])
    assert (carried.frozen, carried.lost) == ((), ())
    assert carried.message("x", "y") == ""


def test_repeated_names_count_once_and_the_new_order_wins():
    carried = carry_mask(["b", "a", "b", "gone"], ["a", "b", "c"])
    assert carried.frozen == ("a", "b")
    assert carried.lost == ("gone",)
    assert "has 2 of x's 3 frozen parameters" in carried.message("x", "y")
