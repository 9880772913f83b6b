"""Training throughput on the main thread vs a worker thread vs a child process.

Trains ``small-cnn`` and ``cnn`` (Adam, batch 256, MNIST-sized images) for a fixed
number of steps under each condition, alternating the conditions round by round
(the order rotates every round), and prints the median images/s, its ratio to the
main-thread median (``ratio``), the median of same-round ratios (``paired``), and
three diagnostics per condition:

``csw/step``
    voluntary context switches per training step of the process, less those of
    an idle main thread. 0-2 means the OpenMP helpers spin between ops; about
    one per parallel region (~160 for small-cnn) means they sleep in futex and
    are woken by a syscall for every op.
``cpu``
    process CPU seconds per wall second (2.0 = both cores busy).
``other``
    CPUs that *other* processes kept busy meanwhile. A sample with ``other``
    above ``--quiet-other`` (default 0.15) shared the machine and is left out of
    the medians (it is still listed, in brackets); on a busy 2-core machine the
    ranking of the conditions flips (spinning OpenMP helpers lose), so mixing
    quiet and busy samples would measure the neighbours, not the threads.

Conditions:

main            the loop on the main thread
thread          ``threading.Thread``; the main thread waits in ``join()``
thread+fix      the same with ``prepare_main_thread()`` before ``start()`` and
                ``prepare_training_thread()`` first thing in the thread
qt              a thread while the main thread runs a ``QCoreApplication`` event
                loop with a 10 ms ``QTimer`` (offscreen), like the window
qt+fix          the same with the fix
process         a child process (multiprocessing spawn), kept alive across rounds

As in the window, the main thread prepares each run's batches (normalising the
images, a multi-threaded torch op) before the training starts. Data: real MNIST
read by torchvision from ``--data-dir`` when present, else random tensors.

Run: ``.venv/bin/python bench/thread_throughput.py`` (about 2.5 minutes on a quiet
2-core machine; ``--budget-s`` drops the last rounds on a busy one).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from workbench.core.host import threads
from workbench.core.models.builtins import build_model

BATCH = 256
MODELS = ("small-cnn", "cnn")
CONDITIONS = ("main", "thread", "thread+fix", "qt", "qt+fix", "process")
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081


def load_images(data_dir: str) -> tuple[torch.Tensor, torch.Tensor, str]:
    """uint8 images (N, 28, 28) and labels: MNIST train if present, else random."""
    try:
        from torchvision.datasets import MNIST

        ds = MNIST(data_dir, train=True, download=False)
        return ds.data, ds.targets, f"MNIST train ({len(ds.data)} images)"
    except (ImportError, RuntimeError, OSError):
        gen = torch.Generator().manual_seed(0)
        images = torch.randint(
            0, 256, (20000, 28, 28), dtype=torch.uint8, generator=gen
        )
        labels = torch.randint(0, 10, (20000,), generator=gen)
        return images, labels, "random uint8 tensors (MNIST not found)"


def make_batches(
    images: torch.Tensor, labels: torch.Tensor, n: int, offset: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``n`` normalised batches; runs multi-threaded in the calling thread."""
    idx = (torch.arange(n * BATCH) + offset) % len(images)
    x = images[idx].unsqueeze(1).float().div_(255).sub_(MNIST_MEAN).div_(MNIST_STD)
    y = labels[idx]
    return list(zip(x.split(BATCH), y.split(BATCH), strict=True))


def _main_thread_switches() -> int:
    """Voluntary context switches of the main thread so far (Linux), else 0."""
    tid = threading.main_thread().native_id
    try:
        status = Path(f"/proc/self/task/{tid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    return 0


def _system_busy_s() -> float:
    """CPU seconds all processes have used since boot (Linux), else 0."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def train(
    model_name: str, batches: list[tuple[torch.Tensor, torch.Tensor]], warmup: int
) -> dict[str, float]:
    """Train a fresh model over ``batches``; time all but the first ``warmup``."""
    on_main = threading.current_thread() is threading.main_thread()
    model = build_model(model_name, 10, seed=0)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    t0, r0, main0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF), 0
    busy0 = 0.0
    for i, (x, y) in enumerate(batches):
        if i == warmup:
            main0 = 0 if on_main else _main_thread_switches()
            t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
            busy0 = _system_busy_s()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    busy = _system_busy_s() - busy0
    # The idle main thread's own wake-ups (Qt timer) are not the trainer's.
    main_csw = 0 if on_main else _main_thread_switches() - main0
    steps = len(batches) - warmup
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {
        "ips": steps * BATCH / wall,
        "csw": (r1.ru_nvcsw - r0.ru_nvcsw - main_csw) / steps,
        "cpu": cpu / wall,
        # CPUs other processes kept busy meanwhile (jiffy resolution).
        "other": max(0.0, busy - cpu) / wall,
        "loss": loss.detach().item(),
    }


def _in_thread(
    work: Callable[[], dict[str, float]], fix: bool, qt: bool, gui_work_s: float
) -> dict[str, float]:
    out: dict[str, dict[str, float]] = {}

    def body() -> None:
        if fix:
            threads.prepare_training_thread()
        out["r"] = work()

    worker = threading.Thread(target=body, name="trainer")
    if fix:
        threads.prepare_main_thread()
    if not qt:
        worker.start()
        worker.join()
    else:
        from PySide6.QtCore import QCoreApplication, QTimer

        app = QCoreApplication.instance() or QCoreApplication([])
        timer = QTimer()
        timer.setInterval(10)

        def tick() -> None:
            end = time.perf_counter() + gui_work_s
            while time.perf_counter() < end:  # stands in for redrawing plots
                pass
            if not worker.is_alive():
                app.quit()

        timer.timeout.connect(tick)
        timer.start()
        worker.start()
        app.exec()
        timer.stop()
        worker.join()
    return out["r"]


def _child(conn, data_dir: str) -> None:  # pragma: no cover - runs in a child
    images, labels, _ = load_images(data_dir)
    while True:
        msg = conn.recv()
        if msg is None:
            return
        model_name, n, offset, warmup = msg
        conn.send(train(model_name, make_batches(images, labels, n, offset), warmup))


def cpu_pressure() -> str:
    """The 'some avg10' CPU pressure in percent, or 'n/a'."""
    try:
        text = Path("/proc/pressure/cpu").read_text()
        return text.split("avg10=", 1)[1].split()[0] + "%"
    except (OSError, IndexError):
        return "n/a"


def main() -> None:
    """Run the rounds and print one table per model."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default="/work/shared/data/mnist")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument(
        "--steps",
        type=str,
        default="small-cnn=25,cnn=8",
        help="timed steps per model, e.g. small-cnn=60,cnn=20",
    )
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument(
        "--budget-s",
        type=float,
        default=165.0,
        help="start no further round that would likely end after this many seconds",
    )
    ap.add_argument(
        "--quiet-other",
        type=float,
        default=0.15,
        help="leave out samples while other processes used more CPUs than this",
    )
    ap.add_argument(
        "--gui-work-ms",
        type=float,
        default=0.0,
        help="Python work (holding the GIL) in each 10 ms Qt timer tick",
    )
    args = ap.parse_args()
    steps = {k: int(v) for k, v in (kv.split("=") for kv in args.steps.split(","))}
    conditions = args.conditions.split(",")
    models = args.models.split(",")
    images, labels, what = load_images(args.data_dir)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
        f"{os.cpu_count()} CPUs; data: {what}; batch {BATCH}, {args.warmup} warm-up "
        f"+ {steps} timed steps; {args.rounds} rounds; libgomp: "
        f"{[Path(p).name for p in threads._loaded_gomp_paths()]}"
    )
    print(f"CPU pressure (some, avg10) at start: {cpu_pressure()}", flush=True)

    conn = None
    if "process" in conditions:
        parent, child_end = mp.get_context("spawn").Pipe()
        proc = mp.get_context("spawn").Process(
            target=_child, args=(child_end, args.data_dir), daemon=True
        )
        proc.start()
        conn = parent

    # Untimed: the first run in a process pays for first-touch allocations.
    for model_name in models:
        train(model_name, make_batches(images, labels, args.warmup + 3, 0), args.warmup)

    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    t_start = time.perf_counter()
    rounds_done = 0
    for rnd in range(args.rounds):
        elapsed = time.perf_counter() - t_start
        if rnd and elapsed + elapsed / rnd > args.budget_s:
            print(f"  (stopping after {rnd} rounds: --budget-s {args.budget_s:.0f})")
            break
        rounds_done = rnd + 1
        for m, model_name in enumerate(models):
            n = args.warmup + steps.get(model_name, 30)
            shift = (rnd + m) % len(conditions)
            for cond in conditions[shift:] + conditions[:shift]:
                offset = (rnd * 7919 + len(results)) * BATCH
                if cond == "process":
                    assert conn is not None
                    conn.send((model_name, n, offset, args.warmup))
                    r = conn.recv()
                else:
                    # The main thread prepares the data, as the window does.
                    batches = make_batches(images, labels, n, offset)

                    def work(b=batches, name=model_name) -> dict[str, float]:
                        return train(name, b, args.warmup)

                    if cond == "main":
                        r = work()
                    else:
                        r = _in_thread(
                            work,
                            fix=cond.endswith("+fix"),
                            qt=cond.startswith("qt"),
                            gui_work_s=args.gui_work_ms / 1000,
                        )
                results.setdefault((model_name, cond), []).append(r)
                print(
                    f"  round {rnd} {model_name:9s} {cond:10s} {r['ips']:7.0f} img/s "
                    f"csw/step {r['csw']:6.1f} cpu {r['cpu']:.2f} "
                    f"other {r['other']:.2f}",
                    flush=True,
                )
    if conn is not None:
        conn.send(None)

    print(
        f"\nCPU pressure (some, avg10) at end: {cpu_pressure()}; "
        f"{time.perf_counter() - t_start:.0f} s of rounds"
    )
    print_summary(results, models, conditions, rounds_done, args.quiet_other)


def print_summary(
    results: dict[tuple[str, str], list[dict[str, float]]],
    models: list[str],
    conditions: list[str],
    rounds: int,
    quiet_other: float,
) -> None:
    """Medians over quiet samples per model and condition, ratios to ``main``.

    ``ratio`` divides the medians; ``paired`` is the median over rounds of
    (this condition / main) within the same round, which cancels slow drift.
    """

    def is_quiet(r: dict[str, float]) -> bool:
        return r["other"] <= quiet_other

    for model_name in models:
        mains = results.get((model_name, "main"), [])
        main_quiet = [r["ips"] for r in mains if is_quiet(r)]
        base = statistics.median(main_quiet) if main_quiet else None
        print(
            f"\n{model_name}: medians over the quiet samples of {rounds} rounds "
            f"(other processes <= {quiet_other:.2f} CPUs)"
        )
        print(
            f"  {'condition':11s} {'img/s':>7s} {'ratio':>6s} {'paired':>6s} "
            f"{'csw/step':>8s} {'cpu':>5s} {'quiet':>5s}  samples img/s ([busy])"
        )
        for cond in conditions:
            rs = results[(model_name, cond)]
            quiet = [r for r in rs if is_quiet(r)]
            samples = " ".join(
                f"{r['ips']:.0f}" if is_quiet(r) else f"[{r['ips']:.0f}]" for r in rs
            )
            n = f"{len(quiet)}/{len(rs)}"
            if not quiet:
                print(
                    f"  {cond:11s} {'-':>7s} {'-':>6s} {'-':>6s} {'-':>8s} {'-':>5s} "
                    f"{n:>5s}  {samples}"
                )
                continue
            med = statistics.median(r["ips"] for r in quiet)
            pairs = [
                r["ips"] / m["ips"]
                for r, m in zip(rs, mains, strict=False)
                if is_quiet(r) and is_quiet(m)
            ]
            ratio = f"{med / base:6.2f}" if base else f"{'-':>6s}"
            paired = f"{statistics.median(pairs):6.2f}" if pairs else f"{'-':>6s}"
            csw = statistics.median(r["csw"] for r in quiet)
            cpu = statistics.median(r["cpu"] for r in quiet)
            print(
                f"  {cond:11s} {med:7.0f} {ratio} {paired} {csw:8.1f} {cpu:5.2f} "
                f"{n:>5s}  {samples}"
            )


if __name__ == "__main__":
    main()
