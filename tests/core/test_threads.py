from __future__ import annotations

import _thread
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from workbench.core.host import threads

needs_libgomp = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not threads._loaded_gomp_paths(),
    reason="torch here does not use GNU OpenMP (libgomp)",
)
needs_two_threads = pytest.mark.skipif(
    torch.get_num_threads() < 2, reason="needs at least 2 intra-op threads"
)


@pytest.fixture(autouse=True)
def _restore_torch_threading(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with nothing recorded and leaves torch as it found it."""
    monkeypatch.setattr(threads, "_starter_settings", None)
    num_threads = torch.get_num_threads()
    flushed = threads._denormals_flushed()
    yield
    torch.set_num_threads(num_threads)
    torch.set_flush_denormal(flushed)


def run_in_thread(
    body: Callable[[threading.Event], Any],
    after_start: Callable[[], None] = lambda: None,
) -> Any:
    """Run ``body(go)`` in a new thread; ``after_start`` runs here before ``go``."""
    out: dict[str, Any] = {}
    go = threading.Event()

    def target() -> None:
        try:
            out["value"] = body(go)
        except BaseException as exc:  # re-raised in the test's thread
            out["error"] = exc

    worker = threading.Thread(target=target)
    worker.start()
    try:
        after_start()
    finally:
        go.set()
        worker.join(timeout=120)
    assert not worker.is_alive()
    if "error" in out:
        raise out["error"]
    return out["value"]


def parallel_op() -> None:
    """One op big enough for ATen to open an OpenMP parallel region."""
    torch.ones(1 << 20).mul_(2.0)


def test_new_thread_has_main_threads_count_after_prepare():
    def body(go: threading.Event) -> int:
        go.wait()
        threads.prepare_training_thread()
        return torch.get_num_threads()

    assert run_in_thread(body) == torch.get_num_threads()


def test_thread_count_set_after_the_worker_started_is_copied():
    # ATen applies torch.set_num_threads to a new thread only until that thread's
    # first parallel op; the worker here has run one before the main thread changes.
    target = 1 if torch.get_num_threads() > 1 else 2
    ran_parallel_op = threading.Event()

    def body(go: threading.Event) -> tuple[int, int]:
        parallel_op()
        ran_parallel_op.set()
        go.wait()
        before = torch.get_num_threads()
        threads.prepare_training_thread()
        return before, torch.get_num_threads()

    def change_main() -> None:
        assert ran_parallel_op.wait(timeout=60)
        torch.set_num_threads(target)
        threads.prepare_main_thread()

    before, after = run_in_thread(body, change_main)
    assert torch.get_num_threads() == target
    assert after == target
    assert before != target  # what the copy is for; torch leaves it stale


def test_flush_denormal_set_after_the_worker_started_is_copied():
    if not torch.set_flush_denormal(False):
        pytest.skip("this CPU cannot flush denormals")

    def body(go: threading.Event) -> tuple[bool, bool]:
        go.wait()
        before = threads._denormals_flushed()
        threads.prepare_training_thread()
        return before, threads._denormals_flushed()

    def change_main() -> None:
        torch.set_flush_denormal(True)
        threads.prepare_main_thread()

    before, after = run_in_thread(body, change_main)
    assert threads._denormals_flushed()
    assert (before, after) == (False, True)


def test_prepare_main_thread_records_this_threads_settings():
    threads.prepare_main_thread()
    assert threads._starter_settings == threads.current_settings()
    assert threads._starter_settings.num_threads == torch.get_num_threads()


def test_prepare_training_thread_is_idempotent(monkeypatch: pytest.MonkeyPatch):
    threads.prepare_main_thread()

    def body(go: threading.Event) -> tuple[int, int]:
        go.wait()
        threads.prepare_training_thread()
        calls: list[object] = []
        with monkeypatch.context() as m:
            m.setattr(torch, "set_num_threads", calls.append)
            m.setattr(torch, "set_flush_denormal", calls.append)
            m.setattr(torch, "get_num_threads", lambda: calls.append("get") or 1)
            threads.prepare_training_thread()
            threads.prepare_training_thread()
        return len(calls), torch.get_num_threads()

    n_calls, count = run_in_thread(body)
    assert n_calls == 0  # a repeat call touches no torch setting at all
    assert count == torch.get_num_threads()


def test_a_reused_thread_picks_up_newly_recorded_settings():
    target = 1 if torch.get_num_threads() > 1 else 2
    results: list[int] = []
    first_run_done = threading.Event()

    def body(go: threading.Event) -> list[int]:
        threads.prepare_training_thread()
        parallel_op()
        results.append(torch.get_num_threads())
        first_run_done.set()
        go.wait()
        threads.prepare_training_thread()
        results.append(torch.get_num_threads())
        return results

    def change_main() -> None:
        assert first_run_done.wait(timeout=60)
        torch.set_num_threads(target)
        threads.prepare_main_thread()

    first, second = run_in_thread(body, change_main)
    assert first != target
    assert second == target


def task_ids() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def task_count() -> int:
    return len(task_ids())


@needs_libgomp
@needs_two_threads
def test_release_frees_the_calling_threads_openmp_helpers():
    parallel_op()  # the main thread now owns a pool of num_threads - 1 helpers
    with_pool = task_count()
    assert threads.release_openmp_pool() is True
    # The helpers exit on their own after the release: give them a moment.
    freed = with_pool - (torch.get_num_threads() - 1)
    deadline = time.monotonic() + 2.0
    while task_count() > freed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert task_count() <= freed
    # Idempotent, and torch still computes (a new pool is built on demand).
    assert threads.release_openmp_pool() is True
    before_rebuild = task_ids()
    x = torch.arange(1 << 20, dtype=torch.float64)
    assert float(x.mul(2.0).sum()) == float((1 << 20) * ((1 << 20) - 1))
    # Counted as new thread ids: another test's thread ending meanwhile
    # must not read as a missing helper.
    assert len(task_ids() - before_rebuild) >= torch.get_num_threads() - 1


def test_release_is_harmless_in_a_thread_without_a_pool():
    def body(go: threading.Event) -> bool:
        go.wait()
        return threads.release_openmp_pool()

    released = run_in_thread(body)
    has_gomp = sys.platform.startswith("linux") and bool(threads._gomp_runtimes())
    assert released is has_gomp


def voluntary_switches(tid: int) -> int:
    status = Path(f"/proc/self/task/{tid}/status").read_text()
    key = "voluntary_ctxt_switches:"
    return int(next(x for x in status.splitlines() if x.startswith(key)).split()[1])


def worker_switches_per_op(fix: bool, ops: int = 200) -> float:
    """Voluntary context switches per parallel op of a worker thread's team.

    Not a timing: libgomp's helpers either spin between ops (~0 switches) or
    sleep in futex and are woken for each op (>= 1 switch per op).
    """
    parallel_op()  # the main thread owns an OpenMP pool, as in the window
    main_tid = threading.main_thread().native_id

    def body(go: threading.Event) -> float:
        go.wait()
        if fix:
            threads.prepare_training_thread()
        x = torch.ones(1 << 20)
        for _ in range(20):
            x.mul_(1.0)  # builds this thread's pool
        main0 = voluntary_switches(main_tid)
        r0 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
        for _ in range(ops):
            x.mul_(1.0)
        r1 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
        return (r1 - r0 - (voluntary_switches(main_tid) - main0)) / ops

    return run_in_thread(body, threads.prepare_main_thread if fix else lambda: None)


@needs_libgomp
@needs_two_threads
def test_fix_lets_a_worker_threads_openmp_helpers_spin_like_the_main_threads():
    # The measured cause of the slow worker thread: with the main thread's pool
    # alive, libgomp counts more threads than CPUs and its helpers sleep in
    # futex after every op instead of spinning for the next one.
    unfixed = worker_switches_per_op(fix=False)
    fixed = worker_switches_per_op(fix=True)
    assert unfixed >= 0.5
    assert fixed < unfixed / 2


def test_a_thread_python_did_not_start_is_prepared_without_a_thread_object():
    # The window's trainer is a QThread: a native thread Python knows nothing of.
    # threading.current_thread() there would register a dummy Thread object that
    # threading keeps after the thread ends: one more per run in active_count().
    threads.prepare_main_thread()
    before = threading.active_count()
    done = threading.Event()

    def body() -> None:
        try:
            threads.prepare_training_thread()
        finally:
            done.set()

    _thread.start_new_thread(body, ())
    assert done.wait(60)
    time.sleep(0.05)  # the native thread ends right after setting done
    assert threading.active_count() == before


@needs_two_threads
def test_single_threaded_runs_one_thread_and_restores_the_count():
    before = torch.get_num_threads()
    with threads.single_threaded():
        assert torch.get_num_threads() == 1
        parallel_op()
    assert torch.get_num_threads() == before
    with pytest.raises(ZeroDivisionError), threads.single_threaded():
        1 / 0  # noqa: B018 - an error inside still restores the count
    assert torch.get_num_threads() == before


@needs_libgomp
@needs_two_threads
def test_single_threaded_work_builds_no_openmp_pool():
    def body(go: threading.Event) -> tuple[int, int, int]:
        go.wait()
        start = task_count()  # a new thread: no pool of its own yet
        with threads.single_threaded():
            for _ in range(5):
                parallel_op()
        inside = task_count()
        parallel_op()  # the same op outside builds this thread's pool
        outside = task_count()
        threads.release_openmp_pool()
        return start, inside, outside

    start, inside, outside = run_in_thread(body)
    assert inside == start
    assert outside > start


@needs_libgomp
def test_every_libgomp_in_the_process_maps_is_found():
    mapped = {
        line.split(maxsplit=5)[-1].strip()
        for line in Path("/proc/self/maps").read_text().splitlines()
        if Path(line.split(maxsplit=5)[-1].strip()).name.startswith("libgomp")
    }
    found = {os.path.realpath(p) for p in threads._loaded_gomp_paths()}
    assert found == {os.path.realpath(p) for p in mapped}


def test_elsewhere_the_linux_tunings_are_skipped_and_said_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    monkeypatch.setattr(sys, "platform", "darwin")
    threads._say_skipped.cache_clear()
    monkeypatch.setattr(
        os, "setpriority", lambda *a: pytest.fail("a nice value was set")
    )
    with caplog.at_level("INFO", logger=threads.__name__):
        for _ in range(2):
            assert threads.release_openmp_pool() is False
            assert threads.lower_training_priority() is None
    said = [r.getMessage() for r in caplog.records]
    threads._say_skipped.cache_clear()
    assert len(said) == 2, said  # each tuning once, however often it is called
    assert all("skipped: not Linux" in text for text in said)
    assert any("OpenMP pool" in text for text in said)
    assert any("priority" in text for text in said)
