"""The run lifecycle both front-ends share: which run is current, and what Start does.

A :class:`Session` owns the current run (a ``TrainingRun``), its run folder and
recorder, weights waiting for the next new run, and the datasets in memory.
The window (through its ``RunController``) and ``ptcore-workbench train`` call
the same methods, so they make the same decisions:

- :meth:`Session.plan` decides what Start does with a config: **continue** the
  run unchanged, **resume** it with settings that are safe to change mid-run,
  or begin a **new** run (a setting that shapes the model or the optimisation
  changed, or nothing is left to train);
- :meth:`Session.begin` opens the run folder (calling thread);
- :meth:`Session.train` prepares the run and iterates the engine, recording
  every event; the thread that iterates it owns the model meanwhile;
- :meth:`Session.finish` closes the ledger and checks a reproduction.

Opening a checkpoint, loading weights (exact or partial), fine-tuning on the
user's drawings and reproducing a past run are methods here too.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import nn

from workbench.core import events as E
from workbench.core.checkpoints.io import (
    CheckpointError,
    checkpoint_dict,
    config_of,
    load_checkpoint,
    restore_run,
)
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.cache import ArraysCache
from workbench.core.data.registry import FOLDER, DownloadProgress, ImageArrays
from workbench.core.data.sources import load_run_arrays
from workbench.core.distributed.ddp import check_batch
from workbench.core.distributed.env import is_main, world_size
from workbench.core.distributed.reshard import resize_notice, saved_world_size
from workbench.core.finetune import FineTune, fine_tune_config, prepare_fine_tune
from workbench.core.model_offer import WeightsOffer, model_key
from workbench.core.models.builtins import snapshot_state
from workbench.core.models.source import SHA_KEY, model_file_change, model_sha
from workbench.core.models.state_dict_match import load_exact, load_partial
from workbench.core.runs.best_or_latest import run_folder_of, which_weights
from workbench.core.runs.data_record import record_data
from workbench.core.runs.folder import RunFolder, folder_of
from workbench.core.runs.recorder import RunRecorder
from workbench.core.runs.reproduce import (
    Reproduction,
    compare_with_folder,
    original_config,
)
from workbench.core.runs.writer_lock import WriterLock
from workbench.core.start_plan import (
    InitialWeights,
    Plan,
    StartKind,
    plan_start,
    usable_here,
)
from workbench.core.train.class_weights import check_class_count
from workbench.core.train.engine import (
    TrainControl,
    TrainingRun,
    evaluate_predictions,
    iter_fit,
    prepare_run,
)
from workbench.core.train.freezing import all_but_head, frozen_names, set_frozen

ProgressFn = Callable[[DownloadProgress], None]
CancelFn = Callable[[], bool]


@dataclass(frozen=True)
class RunPrepared:
    """First event of :meth:`Session.train`: the run that trains (and its fine-tune)."""

    run: TrainingRun
    fine_tune: FineTune | None = None


@dataclass(frozen=True)
class Opened:
    """A checkpoint restored off the GUI thread, waiting to become the current run."""

    path: Path
    run: TrainingRun
    notes: tuple[str, ...]
    evaluation: E.Evaluation | None


@dataclass(frozen=True)
class Finished:
    """What :meth:`Session.finish` found: a reproduction's verdict, if one ran."""

    reproduction_of: RunFolder | None = None
    reproduction: Reproduction | None = None  # None: it stopped before the end


class Session:
    """The current run and everything around it, for one front-end.

    Parameters
    ----------
    origin : str
        Who starts runs (``"window"``, ``"command line"``): recorded in run folders.
    arrays : ArraysCache, optional
        Datasets in memory, shared with e.g. the window's data preview.
    """

    def __init__(self, *, origin: str, arrays: ArraysCache | None = None) -> None:
        self.origin = origin
        self.arrays = arrays if arrays is not None else ArraysCache()
        self.run: TrainingRun | None = None
        self.folder: RunFolder | None = None
        self._writer_lock: WriterLock | None = None  # this session writes folder
        self.recorder: RunRecorder | None = None
        self.initial_weights: InitialWeights | None = None
        self.fine_tune: FineTune | None = None
        self.reproducing: RunFolder | None = None
        self.tensorboard = False
        self._training = False
        # Which of a run folder's weights an opened run holds ("best.pt: the
        # best epoch, 8 of 10 ..."); "" once it trains on or for other runs.
        self.weights_origin = ""

    # ------------------------------------------------------------------ planning

    def plan(self, cfg: TrainConfig) -> Plan:
        """What Start does with ``cfg`` (see :func:`plan_start`)."""
        plan = plan_start(self.run, cfg)
        init = self.initial_weights
        if plan.kind is StartKind.NEW and init and init.model_key == model_key(cfg):
            plan = dataclasses.replace(
                plan, initial_weights=init, started_from=f"weights from {init.source}"
            )
        return plan

    def plan_resume(self, cfg: TrainConfig, source: str) -> Plan:
        """The plan to resume the opened run; ConfigError if nothing is left.

        Resuming ``source`` asked for more steps: training none and calling
        it done would hide that the limit is already behind the run.
        """
        plan = self.plan(cfg)
        if plan.finished:
            raise ConfigError(f"cannot resume {source}: {plan.why_new}")
        return plan

    def plan_fine_tune(self, *, epochs: int, replay: int) -> tuple[Plan, list[str]]:
        """A new run that trains the current model on the user's drawings.

        Freezes everything but the head when nothing is frozen (the notes say so).

        Raises
        ------
        ConfigError
            With no current run, or when the model cannot be fine-tuned.
        """
        run = self.run
        if run is None:
            raise ConfigError(
                "Fine-tuning starts from a trained model: train a run or open a "
                "checkpoint first."
            )
        mask = tuple(frozen_names(run.model))
        notes = []
        if not mask:
            mask = tuple(all_but_head(run.model))
            set_frozen(run.model, mask)
            notes.append(
                "Nothing was frozen, so everything but the head is: the default "
                "for fine-tuning. Edit the freeze tree to change it."
            )
        cfg = fine_tune_config(run.config, mask, replay=replay, epochs=epochs)
        source = f"fine-tune of {self.folder.id if self.folder else 'a model'}"
        plan = Plan(
            StartKind.NEW,
            cfg,
            fine_tune_from=snapshot_state(run.model),
            started_from=source,
        )
        return plan, notes

    def reproduce(self, folder: RunFolder) -> TrainConfig:
        """Forget the current run; the next new run repeats ``folder``'s run.

        Raises
        ------
        ConfigError
            With :func:`~workbench.core.runs.reproduce.reproducible`'s reason (the
            Runs tab disables Reproduce for the same runs).
        """
        cfg = original_config(folder)
        self.reset()
        self.reproducing = folder
        return cfg

    def reset(self) -> None:
        """Forget the current run and any loaded weights: Start begins afresh."""
        if self.run is not None:
            self.run.loaders.release_workers()
        self.run = None
        self.folder = None
        self.recorder = None
        self.initial_weights = None
        self.weights_origin = ""

    # ------------------------------------------------------------------ starting

    def begin(self, plan: Plan) -> list[str]:
        """Open the run folder and recorder for ``plan``; notices for the user.

        A new run gets a new folder; a continued one keeps its folder (unless it
        was deleted meanwhile). A folder that cannot be written means no
        autosave, not no run.
        """
        cfg = plan.config
        self.recorder = None
        self.weights_origin = ""
        # Before a folder exists: a batch that cannot split makes no run, nor
        # class weights that do not fit an image folder's classes.
        check_batch(cfg.batch_size, world_size())
        check_class_count(cfg)
        if not is_main():
            # Several processes train this run: the first one records it alone.
            self.folder = None
            return []
        notes = []
        try:
            folder = self.folder
            kept = plan.kind is not StartKind.NEW and folder is not None
            if kept and folder is not None and not folder.info():
                notes.append(
                    f"{folder.path} is damaged or gone: a new folder records it"
                )
            if not kept or notes:
                self.folder = RunFolder.create(
                    cfg, origin=self.origin, started_from=plan.started_from
                )
                self._hold(self.folder)
            else:
                self._hold(folder)  # before claiming it: FolderBusy if another has it
                folder.claim(cfg)
        except OSError as exc:
            self.folder = None
            return [f"No autosave for this run: cannot write its folder ({exc})"]
        self.recorder = RunRecorder(
            self.folder, cfg.autosave_every, tensorboard=self.tensorboard
        )
        step = (
            self.run.global_step if self.run and plan.kind is not StartKind.NEW else 0
        )
        self.recorder.log_event(
            "start",
            step=step,
            plan=plan.kind.value,
            changed=list(plan.changed) if plan.kind is not StartKind.NEW else [],
            frozen=list(cfg.frozen),  # the mask may change between runs
        )
        return notes

    def _hold(self, folder: RunFolder) -> None:
        """Hold ``folder``'s writer lock (and drop the previous folder's)."""
        lock = self._writer_lock
        if lock is not None and lock.folder == folder.path:
            return  # a Continue: this session writes it already
        self._writer_lock = WriterLock(folder.path)
        if lock is not None:
            lock.release()

    def _record_data(self, run: TrainingRun) -> str | None:
        """Keep the data fingerprint and model file hash in the run's folder.

        A message if that failed.
        """
        if self.folder is None:
            return None
        try:
            sha = model_sha(run.model)
            if sha is not None:
                self.folder.update(**{SHA_KEY: sha})
            if run.loaders.fingerprint is not None:
                record_data(self.folder, run.loaders.fingerprint)
        except OSError as exc:
            return f"The run's data fingerprint was not saved: {exc}"
        return None

    def train(
        self,
        plan: Plan,
        control: TrainControl,
        *,
        progress: ProgressFn | None = None,
    ) -> Iterator[Any]:
        """Prepare the run ``plan`` describes, then train it, recording each event.

        Yields :class:`RunPrepared` first, then the engine's events (and a
        ``Notice`` whenever the ledger could not be written). Iterate it in one
        thread: that thread owns the model until the iteration ends.
        """

        def cancel() -> bool:
            return control.stop_requested

        if plan.kind is StartKind.CONTINUE:
            control.notify_mask_changed()  # the mask may have changed since
        recorder = self.recorder
        started = time.monotonic()  # preparing counts to the run's first step
        # A new run whose set-up fails (data, weights, a model file) never
        # trained: its folder says so instead of "running" for ever. A resumed
        # one stays resumable (once its process is gone it reads interrupted).
        new = recorder if plan.kind is StartKind.NEW else None
        try:
            run = self._prepare(plan, progress, cancel)
            self.run = run
            problem = self._record_data(run)
        except KeyboardInterrupt:
            if new is not None:
                new.mark("stopped")  # stopped before it trained: no failure
            raise
        except Exception:
            if new is not None:
                new.mark("failed")
            raise
        if problem is not None:
            yield E.Notice(problem)
        yield RunPrepared(run, self.fine_tune)
        if control.stop_requested:
            if recorder is not None:
                recorder.mark("stopped")
            return
        if recorder is not None:
            problem = recorder.start(run)
            if problem:
                yield E.Notice(problem)
        self._training = True
        try:
            for event in iter_fit(run, control):
                problem = recorder.on_event(event, run) if recorder else None
                if isinstance(event, E.RunStarted) and recorder is not None:
                    problem = recorder.prepared(time.monotonic() - started)
                yield event
                if problem:
                    yield E.Notice(problem)
        except Exception:
            if recorder is not None:
                recorder.mark("failed")
            raise
        finally:
            self._training = False

    def trial_run(
        self,
        plan: Plan,
        progress: ProgressFn | None = None,
        cancel: CancelFn = lambda: False,
    ) -> TrainingRun:
        """The run Start would train, prepared but neither trained nor adopted.

        The learning-rate finder tries rates on it and puts it back; for a run
        that continues, it is the current run itself.
        """
        if plan.fine_tune_from is not None:
            raise ConfigError("finding a learning rate is for training runs")
        kept = self.fine_tune
        try:
            return self._prepare(plan, progress, cancel)
        finally:
            self.fine_tune = kept

    def _prepare(
        self, plan: Plan, progress: ProgressFn | None, cancel: CancelFn
    ) -> TrainingRun:
        cfg = plan.config
        self.fine_tune = None
        if plan.kind is StartKind.CONTINUE:
            assert self.run is not None
            return self.run
        if plan.kind is StartKind.RESUME:
            assert self.run is not None
            payload = checkpoint_dict(self.run)
            arrays = self.load_arrays(cfg, progress, cancel)
            return restore_run(
                payload, config=cfg, arrays=arrays, progress=progress, cancel=cancel
            )
        if plan.fine_tune_from is not None:
            base = self.arrays.get(cfg.base_dataset, cfg.data_dir)
            tune = prepare_fine_tune(
                cfg,
                plan.fine_tune_from,
                base_arrays=base,
                progress=progress,
                cancel=cancel,
            )
            self.fine_tune = tune
            return tune.run
        arrays = self.load_arrays(cfg, progress, cancel)
        run = prepare_run(cfg, arrays=arrays, progress=progress, cancel=cancel)
        if plan.initial_weights is not None:
            load_exact(run.model, plan.initial_weights.state)
        return run

    def load_arrays(
        self, cfg: TrainConfig, progress: ProgressFn | None, cancel: CancelFn | None
    ) -> ImageArrays | None:
        """``cfg``'s data, from memory when loaded before.

        My digits change with every drawing: they are read afresh each time and
        only their base dataset is kept. An image folder: None, its loaders read
        it (from the disk cache of decoded images when its files are unchanged).
        """
        if cfg.dataset == FOLDER:
            return None
        if cfg.dataset == "my-digits":
            base = self.arrays.get(cfg.base_dataset, cfg.data_dir)
            return load_run_arrays(
                cfg, progress=progress, cancel=cancel, base_arrays=base
            )
        cached = self.arrays.get(cfg.dataset, cfg.data_dir)
        if cached is not None:
            return cached
        arrays = load_run_arrays(cfg, progress=progress, cancel=cancel)
        self.arrays.put(cfg.dataset, cfg.data_dir, arrays)
        return arrays

    # ------------------------------------------------------------------ during a run

    def log(self, kind: str, **data: Any) -> None:
        """Record what the user did (pause, a freeze edit) in the run's ledger."""
        if self.recorder is not None and self._training:
            step = self.run.global_step if self.run is not None else 0
            self.recorder.log_event(kind, step=step, **data)

    def mask_changed(self, frozen: list[str]) -> None:
        """The freeze mask changed while the run was paused: ledger and run.json.

        The run is then no longer what its first config describes, so it cannot
        be reproduced from it (``original_config`` says so).
        """
        self.log("freeze", frozen=frozen)
        if self.folder is not None and self.run is not None:
            try:
                self.folder.record_mask_change(self.run.global_step, frozen)
            except OSError:
                pass  # the ledger line above is the record; a full disk says so

    def finish(self, result: E.TrainResult | None) -> Finished:
        """After :meth:`train` ended (``result``: its last event, if any).

        A reproduce run's losses are compared with the original's here. The
        run's DataLoader workers stop (Continue starts them again).
        """
        if self.run is not None:
            self.run.loaders.release_workers()
        original, self.reproducing = self.reproducing, None
        if original is None or self.run is None:
            return Finished()
        if result is None or result.stopped:
            return Finished(original)
        verdict = compare_with_folder(original, self.run.history.steps)
        original.update(last_reproduction=verdict.describe())
        if self.folder is not None:
            self.folder.update(reproduction_of=original.id)
        return Finished(original, verdict)

    def score_fine_tune(self) -> Any:
        """The finished fine-tune's scores and frozen check (slow: a worker's job)."""
        if self.fine_tune is None:
            raise ConfigError("no fine-tune to measure")
        return self.fine_tune.finish()

    # ------------------------------------------------------------------ files

    def open(
        self,
        path: str | Path,
        *,
        progress: ProgressFn | None = None,
        cancel: CancelFn | None = None,
        evaluate: bool = True,
    ) -> Opened:
        """Restore the run saved in ``path`` (slow: any thread); :meth:`adopt` it.

        The device and precision fall back to what this machine has (the notes
        say so). ``evaluate``: also predict every validation image, for the
        evaluation view of the opened model.
        """
        path = Path(path)
        payload = load_checkpoint(path)
        cfg, notes = usable_here(config_of(payload))
        changed = model_file_change(cfg.model, payload.get(SHA_KEY), path.name)
        if changed is not None:
            notes.append(changed[0].upper() + changed[1:] + ".")
        arrays = self.load_arrays(cfg, progress, cancel)
        run = restore_run(
            payload, config=cfg, arrays=arrays, progress=progress, cancel=cancel
        )
        resized = resize_notice(saved_world_size(payload), world_size(), run.model)
        if resized is not None:
            notes.append(resized)
        evaluation = evaluate_predictions(run) if evaluate else None
        return Opened(path, run, tuple(notes), evaluation)

    def adopt(self, opened: Opened) -> None:
        """Make an opened checkpoint the current run (its folder too, if it has one)."""
        if self.run is not None:
            self.run.loaders.release_workers()
        self.run = opened.run
        self.folder = folder_of(opened.path)
        self.recorder = None
        self.initial_weights = None
        self.weights_origin = ""
        folder = run_folder_of(opened.path)
        if folder is not None and folder.best_path.is_file():  # two to tell apart
            which = which_weights(opened.path, opened.run.epoch, folder.info())
            self.weights_origin = f"{opened.path.name}: {which}"

    def accept_weights(
        self, offer: WeightsOffer, frozen: tuple[str, ...] = ()
    ) -> tuple[nn.Module, InitialWeights]:
        """Load what fits of ``offer`` into its model; the next new run starts there.

        Loads everything when the file fits exactly, else every tensor whose
        name and shape match (the rest keep their fresh initialisation).

        Raises
        ------
        CheckpointError
            When nothing in the file fits the model.
        """
        diff = offer.diff
        if diff.exact:
            load_exact(offer.model, offer.state)
            summary = f"all {len(diff.matched)} tensors loaded"
        elif diff.partial:
            summary = load_partial(offer.model, offer.state).summary()
        else:
            raise CheckpointError(
                f"{offer.path.name} and {offer.model_key[0]}: {diff.summary()}"
            )
        set_frozen(offer.model, frozen)
        self.reset()
        self.initial_weights = InitialWeights(
            offer.model_key, snapshot_state(offer.model), offer.path.name, summary
        )
        return offer.model, self.initial_weights
