"""Break each promise on purpose, one at a time, and check a test notices.

Every entry of ``bench/mutations.py`` replaces one piece of product code with a
broken version (a resume that forgets the random-number state, a save without
fsync, a confusion matrix painted transposed, ...). For each, this script copies
the tree to a scratch folder, applies that one change, and runs the tests named
for it. A breakage is *caught* when a test fails on it; it *survived* when every
test still passes, which means a promise is no longer pinned by the suite.

    .venv/bin/python bench/mutation_check.py              # every breakage
    .venv/bin/python bench/mutation_check.py --only rng-restore --only no-fsync
    .venv/bin/python bench/mutation_check.py --list
    .venv/bin/python bench/mutation_check.py --jobs 2     # two scratch copies at once

Prints one line per breakage and exits 0 only when every one is caught. The
tests named for the breakages are first run on the unbroken copy: a breakage
"caught" by a test that fails anyway proves nothing. A breakage whose anchor
names no definition, or whose ``old`` text no longer occurs exactly once inside
it, is reported as STALE and fails the check.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Queue

from mutation_anchors import AnchorError, Definition, apply, index
from mutations import MUTATIONS, Mutation

ROOT = Path(__file__).resolve().parents[1]
_COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "__pycache__", "*.egg-info", ".ruff_cache", "assets"
)
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


def run_tests(scratch: Path, tests: list[str], timeout: float) -> tuple[int, str]:
    """Run ``tests`` in ``scratch`` (its code first on the path); code and output."""
    env = {
        **os.environ,
        # Before the editable install's path: subprocesses the tests start
        # (python -m workbench, the CLI) import the broken copy too.
        "PYTHONPATH": str(scratch),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    mnist = ROOT.parent / "shared" / "data" / "mnist"
    if mnist.is_dir():
        env.setdefault("PTCORE_TEST_MNIST_DIR", str(mnist))
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-rfE",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=--strict-markers",
        *tests,
    ]
    try:
        done = subprocess.run(
            command,
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        text = out.decode(errors="replace") if isinstance(out, bytes) else out
        return -1, text
    return done.returncode, done.stdout + done.stderr


def check(
    mutation: Mutation, scratch: Path, definitions: list[Definition], timeout: float
) -> tuple[str, str]:
    """Apply ``mutation`` in ``scratch``, run its tests, undo it; (verdict, detail)."""
    try:
        target, original = apply(
            mutation.where, mutation.old, mutation.new, scratch, definitions
        )
    except AnchorError as exc:
        return "STALE", str(exc)
    try:
        code, output = run_tests(scratch, list(mutation.tests), timeout)
    finally:
        target.write_text(original)
    if code == 1:
        failed = _FAILED.findall(output)
        return "caught", f"by {failed[0] if failed else '(a failing test)'}"
    if code == 0:
        return "SURVIVED", "every named test passed"
    if code == -1:
        return "TIMEOUT", f"tests still running after {timeout:.0f} s"
    # 2-5: interrupted, internal error, usage error, no tests: not a real catch.
    tail = " | ".join(output.strip().splitlines()[-3:])
    return "ERROR", f"pytest exit {code}: {tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="NAME")
    parser.add_argument("--list", action="store_true", help="list and exit")
    parser.add_argument("--timeout", type=float, default=900.0, metavar="S")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="breakages checked at once"
    )
    args = parser.parse_args(argv)

    names = [m.name for m in MUTATIONS]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        parser.error(f"duplicate mutation names: {sorted(duplicates)}")
    unknown = set(args.only) - set(names)
    if unknown:
        parser.error(f"unknown mutations: {sorted(unknown)}")
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.list:
        for m in chosen:
            print(f"{m.name:34} {m.where}: {m.promise}")
        return 0

    base = Path(tempfile.mkdtemp(prefix="mutation-check-"))
    # One scratch copy per job: a breakage is applied to a tree no other job reads.
    scratches = [base / f"tree-{i}" for i in range(max(1, args.jobs))]
    for scratch in scratches:
        shutil.copytree(ROOT, scratch, ignore=_COPY_IGNORE)
    try:
        tests = sorted({t for m in chosen for t in m.tests})
        started = time.perf_counter()
        code, output = run_tests(scratches[0], tests, args.timeout * 2)
        if code != 0:
            print(output[-3000:])
            print(f"the named tests fail on the unbroken tree (exit {code})")
            return 2
        print(
            f"{len(tests)} named tests pass on the unbroken tree "
            f"({time.perf_counter() - started:.0f} s)\n"
        )
        definitions = index(scratches[0])
        free: Queue[Path] = Queue()
        for scratch in scratches:
            free.put(scratch)

        def one(m: Mutation) -> str:
            scratch = free.get()
            try:
                started = time.perf_counter()
                verdict, detail = check(m, scratch, definitions, args.timeout)
            finally:
                free.put(scratch)
            seconds = time.perf_counter() - started
            print(f"{verdict:8} {m.name:34} {detail} ({seconds:.0f} s)", flush=True)
            return verdict

        with ThreadPoolExecutor(max_workers=len(scratches)) as pool:
            results = list(pool.map(one, chosen))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    caught = results.count("caught")
    print(f"\n{caught} of {len(results)} breakages caught")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
