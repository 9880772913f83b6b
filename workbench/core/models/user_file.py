"""A model from the user's own Python file: ``path/to/file.py:Name``.

``Name`` is an ``nn.Module`` subclass or a function returning one; it is called
with ``num_classes=`` (and ``in_channels=`` when it accepts it). Loading runs
the code in that file: the user's choice, which the window says plainly. Every
failure (a syntax error, an exception while building, no such name, a wrong
output shape) becomes one :class:`ModelFileError` naming the file and line.
:func:`defined_names` lists a file's names without running it.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn


class ModelFileError(Exception):
    """A model file that cannot give a model; the text names the file and line."""


@dataclass(frozen=True, slots=True)
class ModelFile:
    """``path:name``, and the SHA-256 of the file's bytes when it was read."""

    path: Path
    name: str
    sha256: str

    @property
    def spec(self) -> str:
        return f"{self.path}:{self.name}"


def parse_spec(spec: str) -> ModelFile:
    """``path/to/file.py:Name`` as a :class:`ModelFile` (the file is read and hashed).

    Raises
    ------
    ModelFileError
        Not of that form, no such file, or not readable.
    """
    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text.endswith(".py") or not name.isidentifier():
        raise ModelFileError(
            f"{spec!r}: give a model file as path/to/file.py:Name (a class or a "
            "function in that file)"
        )
    path = Path(path_text).expanduser()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ModelFileError(
            f"{path}: cannot read it ({exc.strerror or exc})"
        ) from None
    return ModelFile(path, name, hashlib.sha256(data).hexdigest())


def build_from_file(
    model_file: ModelFile,
    num_classes: int,
    input_shape: tuple[int, int, int] | None = None,
) -> nn.Module:
    """Run the file, call ``Name``, and check the model it gives.

    ``input_shape`` (C, H, W): also run two blank inputs through the model (in
    ``eval()``, without gradients) and check the output is ``(2, num_classes)``.

    Raises
    ------
    ModelFileError
        With the file and line of whatever went wrong.
    """
    path = model_file.path
    namespace = _run_file(path)
    if model_file.name not in namespace:
        defined = sorted(
            key
            for key, value in namespace.items()
            if not key.startswith("_")
            and (inspect.isclass(value) or callable(value))
            and getattr(value, "__module__", None) == namespace["__name__"]
        )
        listed = ", ".join(defined) or "nothing callable"
        raise ModelFileError(
            f"{path}: no {model_file.name!r} in it; it defines {listed}"
        )
    builder = namespace[model_file.name]
    if not callable(builder):
        raise ModelFileError(f"{path}: {model_file.name} is not a class or a function")
    kwargs: dict[str, int] = {"num_classes": num_classes}
    if input_shape is not None and _accepts(builder, "in_channels"):
        kwargs["in_channels"] = input_shape[0]
    try:
        model = builder(**kwargs)
    except SystemExit as exc:
        raise ModelFileError(_exited(path, exc)) from None
    except Exception as exc:
        raise ModelFileError(
            _where(path, exc, f"{model_file.name}(...) failed")
        ) from exc
    if not isinstance(model, nn.Module):
        raise ModelFileError(
            f"{path}: {model_file.name}(...) gave a {type(model).__name__}, not an "
            "nn.Module"
        )
    if input_shape is not None:
        _check_output(model, model_file, num_classes, input_shape)
    return model


def _run_file(path: Path) -> dict[str, object]:
    try:
        source = path.read_text(encoding="utf-8")
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise ModelFileError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelFileError(f"{path}: cannot read it as Python ({exc})") from None
    module = types.ModuleType(f"workbench_model_file_{path.stem}")
    module.__file__ = str(path)
    try:
        exec(code, module.__dict__)  # the user's own file: their choice to run it
    except SystemExit as exc:
        raise ModelFileError(_exited(path, exc)) from None
    except Exception as exc:
        raise ModelFileError(_where(path, exc, "running the file failed")) from exc
    return module.__dict__


def _exited(path: Path, exc: SystemExit) -> str:
    return (
        f"{path}: it called sys.exit({exc.code!r}) while it ran: a model file "
        "should define the model, not end the program"
    )


def _accepts(builder: object, name: str) -> bool:
    try:
        parameters = inspect.signature(builder).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return name in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _where(path: Path, exc: BaseException, what: str) -> str:
    """``path:line: what: ExcType: text`` with the deepest line of ``path``."""
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)
    ]
    line = f":{frames[-1].lineno}" if frames else ""
    return f"{path}{line}: {what}: {type(exc).__name__}: {exc}"


def _check_output(
    model: nn.Module,
    model_file: ModelFile,
    num_classes: int,
    input_shape: tuple[int, int, int],
) -> None:
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = model(torch.zeros(2, *input_shape))
    except SystemExit as exc:
        raise ModelFileError(_exited(model_file.path, exc)) from None
    except Exception as exc:
        raise ModelFileError(
            _where(
                model_file.path,
                exc,
                f"forward of a (2, {', '.join(map(str, input_shape))}) batch failed",
            )
        ) from exc
    finally:
        model.train(was_training)
    shape = tuple(out.shape) if isinstance(out, torch.Tensor) else None
    if shape != (2, num_classes):
        got = f"{shape}" if shape is not None else f"a {type(out).__name__}"
        raise ModelFileError(
            f"{model_file.path}: {model_file.name} gives {got} for a batch of 2; "
            f"it must give (2, {num_classes}): one score per class"
        )


def defined_names(path: str | Path) -> list[str]:
    """The top-level classes and functions of ``path``, read with ``ast``.

    The file is parsed, never run: a window can offer its names before the
    user decides to run it.

    Raises
    ------
    ModelFileError
        No such file, not readable, or a syntax error (with its line).
    """
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise ModelFileError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelFileError(f"{path}: cannot read it as Python ({exc})") from None
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return [
        node.name
        for node in tree.body
        if isinstance(node, kinds) and not node.name.startswith("_")
    ]
