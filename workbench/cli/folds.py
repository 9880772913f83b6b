"""``train --folds K``: K fold runs one after another, then the scores over folds.

Each fold is an ordinary run with its own folder; the group (see
:mod:`workbench.core.crossval`) keeps their held-out predictions and scores.
Ctrl+C stops the fold in progress after its batch, saved, and the folds after it
never start.
"""

from __future__ import annotations

import argparse

from workbench.cli.console import percent, say
from workbench.cli.progress import DownloadBars
from workbench.cli.train_flags import config_from_args
from workbench.cli.train_loop import folder_line, follow_training
from workbench.core import config as C
from workbench.core.crossval.campaign import FoldCampaign, check_fold_count
from workbench.core.crossval.report import estimate_text
from workbench.core.session import Session

# Flags that make sense for one run and not for K of them.
_ONE_RUN_FLAGS = {
    "resume": "--resume",
    "init_from": "--init-from",
    "save": "--save",
    "metrics_json": "--metrics-json",
    "profile_steps": "--profile-steps",
}


def train_folds(args: argparse.Namespace) -> int:
    """Train every fold of ``--folds K``; 0 when all finished, 130 when stopped."""
    check_fold_count(args.folds)
    for name, flag in _ONE_RUN_FLAGS.items():
        if getattr(args, name, None):
            raise C.ConfigError(f"{flag} is for one run: --folds trains {args.folds}")
    if args.nproc > 1:
        raise C.ConfigError(
            "--folds trains its folds one after another in this process: give --nproc 1"
        )
    base = C.load_config(args.config) if args.config else C.TrainConfig()
    campaign, code = cross_validate(
        config_from_args(args, base), args.quiet, args.tensorboard
    )
    if code:
        return code
    assert campaign.group is not None
    say(f"cross-validation over {campaign.folds} folds:")
    for name, value in campaign.estimates().items():
        say(f"  {estimate_text(name, value)}")
    say(f"group: {campaign.group.path} (held-out predictions of every training image)")
    return 0


def cross_validate(
    cfg: C.TrainConfig, quiet: bool, tensorboard: bool = False
) -> tuple[FoldCampaign, int]:
    """Train the ``cfg.folds`` folds of ``cfg``, saying how each went.

    Returns the campaign (its group holds what finished) and 0, or 130 when
    a fold was stopped (the folds after it never start).
    """
    campaign = FoldCampaign(cfg)
    session = Session(origin="command line")
    session.tensorboard = tensorboard
    downloads = DownloadBars(quiet)
    # Before any folder: a class with fewer images than folds is one line.
    campaign.check_data(lambda c: session.load_arrays(c, downloads, None))
    cfg = campaign.config
    say(
        f"{cfg.folds}-fold cross-validation of {cfg.model} on {cfg.dataset} "
        f"(seed {cfg.seed}): {cfg.folds} runs, one after another"
    )
    for fold in range(cfg.folds):
        session.reset()
        plan = session.plan(campaign.fold_config(fold))
        for note in session.begin(plan):
            say(f"warning: {note}")
        try:
            campaign.started(fold, session.folder)
        except OSError as exc:
            say(f"warning: the group could not name this run: {exc}")
        say(f"fold {fold + 1} of {cfg.folds}:")
        if session.folder is not None:
            say(folder_line(session.folder, plan.config))
        run, result = follow_training(session, plan, quiet, downloads)
        session.finish(result)
        if result is None or result.stopped or run is None:
            if campaign.group is not None:
                campaign.group.update(status="stopped")
            say(f"stopped in fold {fold + 1}: the folds after it were not trained")
            return campaign, 130
        scores = campaign.finished(run, session.folder)
        say(
            f"fold {fold + 1}: held-out accuracy {percent(scores['val_accuracy'])}, "
            f"loss {scores['val_loss']:.4f}, macro-F1 {percent(scores['macro_f1'])}"
        )
    return campaign, 0
