"""The command line: ``ptcore-workbench COMMAND``, headless over the same ``Session``.

main          the parser, ``main(argv)`` and the window when no command is given
train         ...
progress      the download and step progress bars of a terminal
console       what a command says, and percentages
interrupts    the first Ctrl+C stops a run after its batch, the second aborts
runs          runs list / show / reproduce / rename / tag / delete
export        export: a checkpoint as TorchScript / ONNX / a verified folder
script        script: a config or checkpoint as one plain PyTorch script
models        models: the built-in and torchvision architectures
distributed   the --processes / torchrun launch of a multi-process run
"""

from workbench.cli.commands import main

__all__ = ["main"]
