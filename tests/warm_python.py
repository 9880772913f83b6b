"""Python processes forked from a parent that has already imported torch.

Most of a test's ``python -m workbench ...`` on a small machine is importing
torch. A warm parent imports the heavy libraries once, then forks a child for
each command; the child sets its arguments, environment, working directory and
output files and runs the module, code or script as ``python`` would, with none
of the workbench imported yet. To the test it is a new process: its own pid,
exit code and signals, its own module state, nothing shared with pytest.

What a fork cannot renew is what a library read while it was imported (the
OpenMP thread count from ``OMP_NUM_THREADS``, for one): a parent serves only
children whose environment agrees with its own on those variables, and
:class:`WarmPythons` starts one parent per such environment. Tests whose point
is a fresh interpreter (what gets imported at all) keep using ``subprocess``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

# For processes a test runs side by side on few cores. With libgomp's default
# wait policy each one's OpenMP helpers spin for the next op and take the time
# slice the other needs: two small CNNs trained 14 times slower side by side
# than alone on 2 cores. Sleeping helpers cost about 10% alone, so a process
# that runs alone keeps the default. libgomp reads it once, when it loads.
SIDE_BY_SIDE = {"OMP_WAIT_POLICY": "PASSIVE"}

# Variables read when torch, OpenMP, the allocator or Python start: a child is
# forked only from a parent started with the same values.
_IMPORT_TIME = ("OMP_", "MKL_", "KMP_", "GOMP_", "MALLOC_", "LD_", "PYTHON", "TORCH_")
# ... except these, which torch reads when it needs them (tests set their own).
_READ_LATER = frozenset({"TORCH_HOME"})

_PARENT = r"""
import io, json, os, runpy, select, signal, sys, traceback, types

for name in sys.argv[1].split(","):
    if name:
        __import__(name)
# The parent only forks: each command runs in its own child, so nothing one
# command does reaches the next.
_stdin, _stdout, _running = sys.stdin.buffer, sys.stdout, {}


def _run(req):
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = io.TextIOWrapper(open(0, "rb", closefd=False))
    sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False))
    sys.stderr = io.TextIOWrapper(
        open(2, "wb", closefd=False), errors="backslashreplace", line_buffering=True
    )
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    args = req["args"]
    # The parent ran -c, which put "" (the current directory) first; a child
    # starts from the path python would give its own command line.
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    code = 0
    try:
        if args[0] == "-m":
            sys.argv = [args[1], *args[2:]]
            if not sys.flags.isolated:
                sys.path.insert(0, os.getcwd())
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        elif args[0] == "-c":
            sys.argv = ["-c", *args[2:]]
            if not sys.flags.isolated:
                sys.path.insert(0, "")
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(args[1], "<string>", "exec"), main.__dict__)
        else:
            sys.argv = list(args)
            if not sys.flags.isolated:
                sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        code = -signal.SIGINT
    except BaseException:
        traceback.print_exc()
        code = 1
    import atexit, threading

    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    if code < 0:  # as python does: die of the signal that interrupted it
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


def _reply(message):
    _stdout.write(json.dumps(message) + "\n")
    _stdout.flush()


pending = b""
while True:
    ready, _, _ = select.select([_stdin], [], [], 0.05)
    if ready:
        chunk = os.read(_stdin.fileno(), 65536)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            req = json.loads(line)
            pid = os.fork()
            if pid == 0:
                try:
                    _run(req)
                finally:
                    os._exit(70)
            _running[pid] = req["id"]
            _reply({"id": req["id"], "pid": pid})
    while _running:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            break
        code = os.waitstatus_to_exitcode(status)
        _reply({"id": _running.pop(pid), "returncode": code})
"""


class WarmProcess:
    """A forked command with the part of ``subprocess.Popen`` tests use."""

    def __init__(self, args: list[str], stdout: Path, stderr: Path) -> None:
        self.args = args
        self.pid: int | None = None
        self.returncode: int | None = None
        self._stdout, self._stderr = stdout, stderr
        self._started, self._ended = threading.Event(), threading.Event()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        assert self.returncode is not None
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.wait(timeout)
        return self.output()

    def output(self) -> tuple[str, str]:
        """stdout and stderr as written so far."""
        return _text(self._stdout), _text(self._stderr)

    def send_signal(self, signum: int) -> None:
        self._started.wait()
        if self.returncode is None and self.pid is not None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _text(path: Path) -> str:
    """What a child wrote to ``path``; nothing yet before it opened it."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


class WarmPython:
    """One warm parent: forks each command from its already-imported state."""

    def __init__(self, preload: tuple[str, ...], env: dict[str, str], isolated: bool):
        self._folder = Path(tempfile.mkdtemp(prefix="warm-python-"))
        flags = ["-I"] if isolated else []
        self._parent = subprocess.Popen(
            [sys.executable, *flags, "-c", _PARENT, ",".join(preload)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=self._folder,
        )
        self._lock = threading.Lock()
        self._processes: dict[int, WarmProcess] = {}
        self._count = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._parent.stdout is not None
        for line in self._parent.stdout:
            message = json.loads(line)
            process = self._processes[message["id"]]
            if "pid" in message:
                process.pid = message["pid"]
                process._started.set()
            else:
                process.returncode = message["returncode"]
                process._ended.set()
        for process in self._processes.values():  # the parent died
            if process.returncode is None:
                process.returncode = -9
                process._started.set()
                process._ended.set()

    def popen(self, args: list[str], env: dict[str, str], cwd: str) -> WarmProcess:
        with self._lock:
            self._count += 1
            key = self._count
            process = WarmProcess(
                list(args),
                self._folder / f"{key}.out",
                self._folder / f"{key}.err",
            )
            self._processes[key] = process
            request = {
                "id": key,
                "args": list(args),
                "env": env,
                "cwd": cwd,
                "stdout": str(process._stdout),
                "stderr": str(process._stderr),
            }
            assert self._parent.stdin is not None
            self._parent.stdin.write(json.dumps(request).encode() + b"\n")
            self._parent.stdin.flush()
        return process

    def close(self) -> None:
        """End the parent: it holds nothing a clean exit would save, and
        exiting an interpreter with torch loaded takes a second or two."""
        self._parent.kill()
        self._parent.wait()
        if self._parent.stdin is not None:
            self._parent.stdin.close()
        self._reader.join(timeout=10)
        if self._parent.stdout is not None:
            self._parent.stdout.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def _import_time_env(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            (k, v)
            for k, v in env.items()
            if k.startswith(_IMPORT_TIME) and k not in _READ_LATER
        )
    )


class WarmPythons:
    """Warm parents by what they preload, started on first use, one per
    import-time environment; ``popen``/``run`` mirror ``subprocess``'s."""

    def __init__(self) -> None:
        self._parents: dict[Any, WarmPython] = {}
        self._lock = threading.Lock()

    def popen(
        self,
        args: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        preload: tuple[str, ...] = ("torch", "torch._dynamo"),
        isolated: bool = False,
    ) -> WarmProcess:
        """Start ``python ARGS`` (``-m module``, ``-c code`` or a script)."""
        env = dict(os.environ if env is None else env)
        key = (preload, isolated, _import_time_env(env))
        with self._lock:
            parent = self._parents.get(key)
            if parent is None:
                parent = self._parents[key] = WarmPython(preload, env, isolated)
        return parent.popen(args, env, str(cwd or os.getcwd()))

    def run(
        self,
        args: list[str],
        *,
        timeout: float | None = None,
        **options: Any,
    ) -> subprocess.CompletedProcess[str]:
        """Run to the end; ``stdout`` and ``stderr`` as text, like
        ``subprocess.run(..., capture_output=True, text=True)``."""
        process = self.popen(args, **options)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        return subprocess.CompletedProcess(args, process.wait(), stdout, stderr)

    def close(self) -> None:
        for parent in self._parents.values():
            parent.close()
        self._parents.clear()
