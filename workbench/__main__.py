"""``python -m workbench``: the same entry point as ``ptcore-workbench``."""

import sys

from workbench.cli import interrupts

# Before the imports below: an early Ctrl+C or SIGTERM is kept (see interrupts).
interrupts.hold()
interrupts.end_with_launcher()

from workbench.cli import main  # noqa: E402

sys.exit(main())
