"""``python -m workbench``: the same entry point as ``ptcore-workbench``."""

import sys

from workbench.cli import main

sys.exit(main())
