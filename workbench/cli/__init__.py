"""The command line: ``ptcore-workbench COMMAND``, headless over the same ``Session``.

commands      the parser, ``main(argv)``: the window when no command is given, else
              the command it names
train         train: headless training, --init-from, --metrics-json, the last line
train_flags   train's flags, one per config field
run_outputs   the files train rewrites each epoch: --save, --metrics-json
predict       predict: images classified with a checkpoint
inspect       inspect: what a checkpoint holds, and how it fits a model
check_data    check-data: a folder of labelled images checked before training
devices       devices: CPU/CUDA/MPS and why one is unavailable
runs          runs list / show / reproduce: the run ledger
export        export: a checkpoint as TorchScript / ONNX / a verified folder
script        script: a config or checkpoint as one plain PyTorch script
lr_find       lr-find: the learning-rate range test, checked by probe runs
sweep         sweep (--parallel, --join, the [sweep] table): Optuna trials, each a run
sweep_show    sweep show STUDY, sweep ledger: the trials and what mattered
models        models and summary: the architectures, and one sized layer by layer
distributed   train --nproc: the torchrun launch, and each rank's run
progress      the download and step progress bars of a terminal
class_table   train's last lines: each class's precision, recall and F1
console       what a command says, and percentages
interrupts    the first Ctrl+C stops a run after its batch, the second aborts
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ptcore-workbench`` with ``argv`` (see :mod:`workbench.cli.commands`)."""
    # Before the command's imports (torch takes seconds): an early Ctrl+C or
    # SIGTERM is kept, then acted on once the command runs.
    from workbench.cli import interrupts

    previous = interrupts.hold()
    try:
        from workbench.cli.commands import main as run

        return run(argv)
    finally:
        interrupts.restore(previous)
