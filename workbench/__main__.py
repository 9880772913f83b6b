"""``python -m workbench``: the same entry point as ``ptcore-workbench``."""

import sys

from workbench.cli import interrupts

# Before the imports below (torch takes seconds): a rank keeps an early Ctrl+C.
interrupts.install_if_rank()

from workbench.cli.commands import main  # noqa: E402

sys.exit(main())
