"""The exceptions the core raises with text meant for the user.

Anything else escaping the core is a bug; callers show these as plain messages
(the command line: one line and exit code 2; the window: a dialog).
"""

from __future__ import annotations

from workbench.core.checkpoints.io import CheckpointError
from workbench.core.config import ConfigError
from workbench.core.data.registry import DataError
from workbench.core.export.formats import ExportError
from workbench.core.predict import PredictError
from workbench.core.train.devices import DeviceError
from workbench.core.train.engine import TrainingError
from workbench.core.train.freezing import FreezeError

USER_ERRORS: tuple[type[Exception], ...] = (
    ConfigError,
    CheckpointError,
    DataError,
    DeviceError,
    TrainingError,
    ExportError,
    FreezeError,
    PredictError,
)
