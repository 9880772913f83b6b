"""The promises the test suite pins, each as one deliberate breakage.

``bench/mutation_check.py`` applies each entry alone (``old`` replaced by ``new``
in ``file``, which must hold ``old`` exactly once) and runs ``tests``: one of
them must fail. When code moves, move its entry with it; when an issue adds a
promise, add its breakage here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    """One breakage: where, what it breaks, and the tests that must notice."""

    name: str
    promise: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


_RESUME = "tests/core/test_exact_resume.py"
_CKPT = "tests/core/test_checkpoints.py"

MUTATIONS: list[Mutation] = [
    # --------------------------------------------------------- exact resume
    Mutation(
        "rng-restore",
        "a resumed run continues with the random numbers it stopped with (dropout)",
        "workbench/core/checkpoints.py",
        '        set_rng_states(payload["rng"])\n',
        "        pass\n",
        (
            f"{_RESUME}::test_dropout_model_resumes_with_the_random_numbers_it_"
            "stopped_with",
        ),
    ),
    Mutation(
        "next-epoch-order",
        "each epoch trains in the order its checkpoint stores",
        "workbench/core/engine.py",
        "run.loaders.train.set_epoch(epoch)",
        "run.loaders.train.set_epoch(epoch + 1)",
        (f"{_RESUME}::test_a_checkpoint_stores_the_order_its_epoch_is_trained_in",),
    ),
    Mutation(
        "mask-not-in-checkpoint",
        "a freeze mask edited mid-run is stored in the checkpoint and restores",
        "workbench/core/checkpoints.py",
        '"config": _config_with_current_mask(run).to_dict(),',
        '"config": run.config.to_dict(),',
        (f"{_RESUME}::test_a_mask_edited_mid_run_is_stored_and_restores",),
    ),
    # ------------------------------------------------------- durable saves
    Mutation(
        "no-fsync",
        "a checkpoint's bytes reach the disk before it replaces the old file",
        "workbench/core/files.py",
        "            os.fsync(handle.fileno())\n",
        "            pass\n",
        (f"{_CKPT}::test_save_syncs_the_file_then_renames_then_syncs_the_folder",),
    ),
    Mutation(
        "no-folder-sync",
        "the rename of a saved checkpoint survives a power loss",
        "workbench/core/files.py",
        "    sync_folder(path.parent)\n    return path\n",
        "    return path\n",
        (f"{_CKPT}::test_save_syncs_the_file_then_renames_then_syncs_the_folder",),
    ),
    # ----------------------------------------------------------- evaluation
    Mutation(
        "validate-in-train-mode",
        "validation runs in eval() (no BatchNorm learning from it, no dropout)",
        "workbench/core/engine.py",
        "    was_training = model.training\n    model.eval()\n",
        "    was_training = model.training\n",
        ("tests/core/test_exact_resume.py::test_validation_runs_in_eval_mode",),
    ),
]
