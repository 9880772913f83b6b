"""K fold runs one after another, recorded as one group: what both front-ends drive.

The command line loops over the folds in its process; the window starts the
next fold when one finishes. Either way each fold is an ordinary run (its own
folder, checkpoint and Reproduce); :class:`FoldCampaign` checks the data before
any folder is made, names the group in each fold's ``run.json`` and keeps each
finished fold's held-out predictions and scores in the group.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.crossval.folds import check_folds
from workbench.core.crossval.group import RUN_KEY, FoldGroup
from workbench.core.crossval.held_out import (
    fold_model,
    fold_scores,
    held_out_predictions,
)
from workbench.core.crossval.stats import Estimate
from workbench.core.data.fixes import apply_fixes, builtin_keys
from workbench.core.data.folder import scan_folder, split_pairs
from workbench.core.data.registry import FOLDER, ImageArrays, dataset_info
from workbench.core.runs.folder import RunFolder
from workbench.core.training_run import TrainingRun

MIN_FOLDS = 2
LoadArrays = Callable[[TrainConfig], ImageArrays | None]


def check_fold_count(folds: int) -> None:
    """ConfigError unless ``folds`` can cross-validate (2 or more)."""
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < MIN_FOLDS:
        raise ConfigError(
            f"--folds {folds!r}: cross-validation needs {MIN_FOLDS} folds or more"
        )


class FoldCampaign:
    """Fold runs 0..K-1 of ``cfg`` (``cfg.folds`` is K) and their group.

    Parameters
    ----------
    cfg : TrainConfig
        Any fold of the cross-validation: its folds, seed and settings.
    root : Path, optional
        The runs folder (default: :func:`runs_dir`).
    """

    def __init__(self, cfg: TrainConfig, root: Path | None = None) -> None:
        check_fold_count(cfg.folds)
        if cfg.autosave_every == 0:
            raise ConfigError(
                "autosave_every 0 keeps no fold model: cross-validation keeps each "
                "fold's (give 1, or the number of epochs to save each fold once)"
            )
        self.config = cfg.replace(fold=0)
        self.root = root
        self.group: FoldGroup | None = None

    @property
    def folds(self) -> int:
        return self.config.folds

    def fold_config(self, fold: int) -> TrainConfig:
        """The config of fold ``fold``'s run."""
        return self.config.replace(fold=fold)

    def check_data(self, load_arrays: LoadArrays) -> None:
        """DataError before any folder exists: a class with fewer images than folds.

        ``load_arrays``: the session's (an image folder is only listed here).
        """
        cfg = self.config
        if cfg.dataset == FOLDER:
            assert cfg.data_dir is not None  # validated by TrainConfig
            listing = scan_folder(cfg.data_dir)
            train, _val = split_pairs(listing, cfg.val_fraction, cfg.seed)
            check_folds([label for _p, label in train], cfg.folds, listing.classes)
            return
        arrays = load_arrays(cfg)
        if arrays is not None:
            names = dataset_info(cfg.dataset).class_names
            arrays = apply_fixes(arrays, builtin_keys(arrays), cfg, names)
            check_folds(arrays.train_labels.numpy(), cfg.folds, names)

    def started(self, fold: int, folder: RunFolder | None) -> None:
        """Fold ``fold``'s run began in ``folder``: group and run name each other.

        The group is made with the first fold's run. Raises OSError when either
        file cannot be written.
        """
        if self.group is None:
            self.group = FoldGroup.create(self.config, self.root)
        if folder is not None:
            self.group.add_run(fold, folder.id)
            folder.update(
                **{RUN_KEY: {"group": self.group.id, "fold": fold, "of": self.folds}}
            )

    def finished(self, run: TrainingRun, folder: RunFolder | None) -> dict[str, float]:
        """Fold run ``run`` ended: its held-out predictions and scores are kept."""
        if self.group is None:
            self.group = FoldGroup.create(self.config, self.root)
        predictions = held_out_predictions(run, fold_model(run, folder))
        scores = fold_scores(predictions)
        self.group.add_fold(run.config.fold, predictions, scores)
        return scores

    def estimates(self) -> dict[str, Estimate]:
        """Each score's mean and 95% interval over the folds finished so far."""
        return {} if self.group is None else self.group.estimates()
