"""The exceptions the core raises with text meant for the user.

Anything else escaping the core is a bug; callers show these as plain messages
(the command line: one line and exit code 2; the window: a dialog).
"""

from __future__ import annotations

from workbench.core.checkpoints import CheckpointError
from workbench.core.config import ConfigError
from workbench.core.data import DataError
from workbench.core.devices import DeviceError
from workbench.core.engine import TrainingError
from workbench.core.export import ExportError
from workbench.core.freezing import FreezeError
from workbench.core.predict import PredictError

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
