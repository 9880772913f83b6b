"""A throwaway PostgreSQL server on 127.0.0.1 for the sweep storage's tests.

Debian's ``postgresql`` package puts ``initdb`` and ``pg_ctl`` under
``/usr/lib/postgresql/<version>/bin``. The server runs from a temporary
folder, trusts local connections, listens on a free port of 127.0.0.1 only,
and is stopped at the end of the session. PostgreSQL refuses to run as root:
as root the server runs as the package's ``postgres`` user.

Where the server is not installed the tests that need it are skipped, saying
why, unless ``PTCORE_REQUIRE_POSTGRES=1`` (set by ``.ci/run``, which installs
it) makes that a failure.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _missing(why: str) -> None:
    if os.environ.get("PTCORE_REQUIRE_POSTGRES") == "1":
        pytest.fail(why)
    pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A running server; :meth:`database` makes a fresh database, its URL."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._made = 0

    def database(self) -> str:
        import psycopg

        self._made += 1
        name = f"sweep_{self._made}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"


def start_server() -> tuple[Server, Callable[[], None]]:
    """Start a server (or skip/fail saying why); it and how to stop it."""
    binaries = _binaries()
    if binaries is None:
        _missing("PostgreSQL's server is not installed (apt-get install postgresql)")
    as_user: Callable[[], None] | None = None
    folder = Path(tempfile.mkdtemp(prefix="ptcore-postgres-"))
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            _missing("running as root, and there is no 'postgres' user to run it")
        os.chown(folder, owner.pw_uid, owner.pw_gid)

        def as_user() -> None:
            os.setgid(owner.pw_gid)
            os.setuid(owner.pw_uid)

    data, port = folder / "data", _free_port()

    def run(*command: str) -> None:
        done = subprocess.run(
            command, capture_output=True, text=True, preexec_fn=as_user, cwd=folder
        )
        if done.returncode != 0:
            pytest.fail(f"{command[0]} failed: {done.stderr.strip()[-500:]}")

    run(str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
        "--no-sync", "-E", "UTF8")  # fmt: skip
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {folder} -c fsync=off"
    run(str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"),
        "-o", options, "-w", "start")  # fmt: skip

    def stop() -> None:
        subprocess.run(
            [str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            preexec_fn=as_user,
            cwd=folder,
        )
        shutil.rmtree(folder, ignore_errors=True)

    return Server(port), stop
