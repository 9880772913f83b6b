"""The promises the test suite pins, each as one deliberate breakage.

``bench/mutation_check.py`` applies each entry alone (``old`` replaced by ``new``
inside the definition ``where`` names, which must hold ``old`` exactly once) and
runs ``tests``: one of them must fail. ``where`` is a qualified name found
through the AST (``bench/mutation_anchors.py``): ``RunRecorder.on_event`` when
it is unique, ``workbench.cli.commands:main`` when several modules define it. Moving a
file stales nothing; when an issue adds a promise, add its breakage here.
A promise that is "this call happens" (fsync before rename, ``weights_only``)
is pinned by a spy in its test instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    """One breakage: where, what it breaks, and the tests that must notice."""

    name: str
    promise: str
    where: str
    old: str
    new: str
    tests: tuple[str, ...]


_RESUME = "tests/core/test_exact_resume.py"
_CKPT = "tests/core/test_checkpoints.py"
_TV = "tests/core/test_torchvision_models.py"
_TV_CLI = "tests/core/test_torchvision_cli.py"
_WEIGHTS = "tests/core/test_weights_cache.py"
_MODEL_PANEL = "tests/ui/test_model_panel.py"
_FC = "tests/core/test_feature_cache.py"
_SCRIPT_RUN = (
    "tests/core/test_script_writer.py::test_the_script_repeats_train_bit_for_bit"
)
_PREDICT_PY = "tests/core/test_export_predict.py"
_SAME = "test_predict_script_matches_the_workbench_in_a_fresh_interpreter"
_CODE = "tests/ui/test_code_view.py"
_DDP = "tests/core/test_distributed.py"
_DDP_SAME = f"{_DDP}::test_two_processes_log_the_same_losses_as_one"
_DDP_STOP = "tests/core/test_distributed_stop.py"
_RESIZE = "tests/core/test_distributed_resume.py"
_SYNC_BN = "tests/core/test_distributed_batchnorm.py"
_JOB = "tests/ui/test_process_job.py"
_CFG_FUZZ = "tests/core/test_config_fuzz.py"
_LEDGER_FUZZ = "tests/core/test_ledger_fuzz.py"
_DIGITS_FUZZ = "tests/core/test_my_digits_fuzz.py"
_BAD_UI = "tests/ui/test_damaged_files_ui.py"

MUTATIONS: list[Mutation] = [
    # --------------------------------------------------------- exact resume
    Mutation(
        "next-epoch-order",
        "each epoch trains in the order its checkpoint stores",
        "workbench.core.train.engine:_train",
        "run.loaders.train.set_epoch(epoch)",
        "run.loaders.train.set_epoch(epoch + 1)",
        (f"{_RESUME}::test_a_checkpoint_stores_the_order_its_epoch_is_trained_in",),
    ),
    Mutation(
        "mask-not-in-checkpoint",
        "a freeze mask edited mid-run is stored in the checkpoint and restores",
        "checkpoint_dict",
        '"config": _config_with_current_mask(run).to_dict(),',
        '"config": run.config.to_dict(),',
        (f"{_RESUME}::test_a_mask_edited_mid_run_is_stored_and_restores",),
    ),
    # ------------------------------------------------------- durable saves
    # ----------------------------------------------------------- evaluation
    Mutation(
        "validate-in-train-mode",
        "validation runs in eval() (no BatchNorm learning from it, no dropout)",
        "evaluate_predictions",
        "    was_training = model.training\n    model.eval()\n",
        "    was_training = model.training\n",
        ("tests/core/test_exact_resume.py::test_validation_runs_in_eval_mode",),
    ),
    # ------------------------------------- promises the suite already pinned
    Mutation(
        "resume-ignores-stored-data-order",
        "a resumed run draws the interrupted epoch in the sample order stored in the checkpoint (exact resume)",
        "_restore_data_order",
        '        run.loaders.train.pin_order(int(stored["epoch"]), stored["order"])\n',
        "        pass\n",
        (
            "tests/core/test_doctor.py::test_the_stored_data_order_is_the_one_a_resumed_run_draws",
        ),
    ),
    Mutation(
        "checkpoint-write-not-atomic",
        "a checkpoint is written to a temp file and renamed in place: a failed or killed save leaves the previous file intact",
        "_replace_atomically",
        "        fill(fd, tmp_name)\n        os.replace(tmp_name, path)\n",
        "        os.close(fd)\n        os.unlink(tmp_name)\n"
        "        fill(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), str(path))\n",
        (
            "tests/core/test_run_outputs_full_disk.py::test_a_checkpoint_on_a_full_disk_keeps_the_previous_file",
        ),
    ),
    Mutation(
        "frozen-batchnorm-trains",
        "a fully frozen BatchNorm stays in eval mode during training, so its running statistics do not drift",
        "train_mode",
        "                module.eval()\n",
        "                module.train()\n",
        (
            "tests/core/test_freezing.py::test_frozen_batchnorm_keeps_its_running_statistics",
        ),
    ),
    Mutation(
        "epoch-order-with-replacement",
        "every training sample is drawn exactly once per epoch",
        "_epoch_order",
        '    return torch.randperm(num_samples, generator=generator, device="cpu")\n',
        "    return torch.randint(num_samples, (num_samples,), generator=generator)\n",
        (
            "tests/core/test_data.py::test_fast_loader_covers_every_sample_once_per_epoch",
        ),
    ),
    Mutation(
        "optimizer-holds-frozen-params",
        "the optimizer is built over the trainable (unfrozen) parameters only",
        "build_optimizer",
        "    params = trainable_parameters(model)\n",
        "    params = list(model.parameters())\n",
        ("tests/core/test_freezing.py::test_optimizer_sees_only_trainable_parameters",),
    ),
    Mutation(
        "mask-change-not-reconciled",
        "a freeze mask edited mid-run reaches the optimizer (reconcile_optimizer)",
        "reconcile_optimizer",
        '    group["params"] = wanted\n',
        "    pass\n",
        (
            "tests/core/test_freezing.py::test_reconcile_after_mask_change_keeps_one_group_and_valid_state",
            "tests/core/test_engine.py::test_mask_change_while_paused_reaches_the_optimizer",
        ),
    ),
    Mutation(
        "pause-does-not-hold",
        "Pause holds the run before its next batch until Resume",
        "workbench.core.train.engine:_train",
        "                control.wait_if_paused()\n",
        "                pass\n",
        ("tests/core/test_engine.py::test_pause_blocks_until_resumed",),
    ),
    Mutation(
        "log-step-off-by-one",
        "StepMetrics events arrive every log_every global steps (at steps log_every, 2*log_every, ...)",
        "workbench.core.train.engine:_train",
        "            is_log_step = run.global_step % run.log_every == 0 or run.finished\n",
        "            is_log_step = (run.global_step - 1) % run.log_every == 0 or run.finished\n",
        ("tests/core/test_engine.py::test_events_come_in_order_and_carry_plain_data",),
    ),
    Mutation(
        "confusion-cell-transposed",
        "Evaluation.cell(i, j) returns the images of true class i predicted as j",
        "Evaluation.cell",
        "        k = true * self.num_classes + predicted\n",
        "        k = predicted * self.num_classes + true\n",
        (
            "tests/core/test_evaluation.py::test_a_cell_holds_exactly_its_images_hardest_first",
        ),
    ),
    Mutation(
        "confusion-cell-easiest-first",
        "the images of a confusion cell come hardest (highest loss) first",
        "Evaluation.__post_init__",
        "        order = np.lexsort((-self.losses, flat)).astype(np.int64)\n",
        "        order = np.lexsort((self.losses, flat)).astype(np.int64)\n",
        (
            "tests/core/test_evaluation.py::test_a_cell_holds_exactly_its_images_hardest_first",
            "tests/core/test_evaluation.py::"
            "test_cells_are_each_image_once_hardest_first_ties_in_validation_order",
        ),
    ),
    Mutation(
        "validation-on-train-split",
        "validation loss, accuracy and predictions are computed on the validation split",
        "evaluate_predictions",
        "        for x, y in run.loaders.val:\n",
        "        for x, y in run.loaders.train:\n",
        (
            "tests/core/test_engine.py::test_evaluation_holds_every_validation_prediction",
        ),
    ),
    Mutation(
        "resume-drops-scheduler-state",
        "a resumed run continues the learning-rate schedule where it stopped",
        "restore_run",
        "            run.scheduler.load_state_dict(scheduler_state)\n",
        "            pass\n",
        (
            "tests/core/test_checkpoints.py::test_resume_continues_the_same_loss_sequence",
        ),
    ),
    Mutation(
        "crc-check-skipped",
        "a checkpoint whose bytes no longer match their stored CRC-32 is refused instead of loading wrong weights",
        "_check_crcs",
        "            bad = archive.testzip()\n",
        "            bad = None\n",
        ("tests/core/test_doctor.py::test_corrupted_bytes_are_reported",),
    ),
    Mutation(
        "per-class-accuracy-over-predicted",
        "per-class accuracy is the share of each true class predicted right",
        "Evaluation.per_class_accuracy",
        "        totals = matrix.sum(axis=1)\n",
        "        totals = matrix.sum(axis=0)\n",
        (
            "tests/core/test_evaluation.py::test_per_class_accuracy_is_the_share_of_each_true_class_read_right",
        ),
    ),
    Mutation(
        "confusion-matrix-transposed",
        "the confusion matrix has the true class in rows and the predicted class in columns",
        "Evaluation.__post_init__",
        "        flat = self.labels * c + self.predictions\n",
        "        flat = self.predictions * c + self.labels\n",
        (
            "tests/core/test_evaluation.py::test_rows_are_true_classes_and_columns_predictions",
        ),
    ),
    Mutation(
        "resume-drops-optimizer-state",
        "a resumed run restores the optimizer state (momenta) saved in the checkpoint",
        "_restore_optimizer",
        "        optimizer.load_state_dict(state)\n",
        "        pass\n",
        ("tests/core/test_checkpoints.py::test_round_trip_keeps_everything",),
    ),
    Mutation(
        "stop-returns-no-result",
        "Stop finishes the current batch and the run still ends with a TrainResult",
        "workbench.core.train.engine:_train",
        "                stopped = True\n",
        "                return\n",
        ("tests/core/test_engine.py::test_stop_finishes_the_batch_and_still_returns",),
    ),
    Mutation(
        "reader-in-train-mode",
        "the Draw tab's reader runs the model in eval mode",
        "Predictor._read",
        "            model.eval()\n        if saliency:\n",
        "            model.eval()\n        model.train()\n        if saliency:\n",
        ("tests/core/test_predict.py::test_predictor_reads_with_a_private_eval_copy",),
    ),
    Mutation(
        "predict-in-train-mode",
        "predict() runs the model in eval mode (deterministic, no dropout) and restores its training flag",
        "predict",
        "    was_training = model.training\n    model.eval()\n    try:\n",
        "    was_training = model.training\n    model.train()\n    try:\n",
        (
            "tests/core/test_predict.py::test_predict_uses_eval_mode_and_restores_training_mode",
        ),
    ),
    Mutation(
        "panel-per-class-accuracy-over-predicted",
        "the Evaluation tab's per-class bars show the share of each true class predicted right",
        "_per_class_accuracy",
        "    totals = matrix.sum(axis=1)\n",
        "    totals = matrix.sum(axis=0)\n",
        (
            "tests/ui/test_evaluation_panel.py::test_one_bar_item_shows_per_class_accuracy",
        ),
    ),
    Mutation(
        "stop-ignored",
        "Stop ends the run after the current batch",
        "workbench.core.train.engine:_train",
        "            if ddp.stop_agreed(control.stop_requested):\n",
        "            if False:\n",
        ("tests/core/test_engine.py::test_stop_finishes_the_batch_and_still_returns",),
    ),
    # ----------------------------------------------- what the window shows
    Mutation(
        "confusion-cells-transposed",
        "Each confusion-matrix cell (true t, predicted p) is painted at row t, column p in the colour of its own count",
        "ConfusionMatrix._paint_cells",
        "                rect = QRect(x0 + p * cell, y0 + t * cell, cell - 1, cell - 1)\n",
        "                rect = QRect(x0 + t * cell, y0 + p * cell, cell - 1, cell - 1)\n",
        (
            "tests/ui/test_evaluation_panel.py::test_cells_are_painted_where_their_counts_belong",
            "tests/ui/test_evaluation_panel.py::test_renders",
        ),
    ),
    Mutation(
        "selected-cell-outline-missing",
        "The selected confusion-matrix cell is outlined in blue (and no other cell is)",
        "ConfusionMatrix._paint_outlines",
        "        if self._selected is not None:\n            painter.setPen(QPen(_SELECTED, 3))\n",
        "        if self._selected is not None and False:\n            painter.setPen(QPen(_SELECTED, 3))\n",
        ("tests/ui/test_evaluation_panel.py::test_renders",),
    ),
    Mutation(
        "gallery-emits-image-by-row",
        "Open in canvas / double-click on a gallery item opens that item's own validation image",
        "CellImages._emit_image",
        "        i = int(item.data(_INDEX_ROLE))\n",
        "        i = self.gallery.row(item)\n",
        (
            "tests/ui/test_evaluation_panel.py::test_open_in_canvas_emits_the_chosen_items_own_image",
            "tests/ui/test_evaluation_ui.py::test_open_in_canvas_shows_the_cells_own_validation_image",
        ),
    ),
    Mutation(
        "window-feeds-val-images-reversed",
        "The window gives the evaluation gallery the run's validation images in prediction order, so the opened image is the cell's digit",
        "RunView.show_evaluation",
        "            arrays = images.numpy()\n",
        "            arrays = images.numpy()[::-1].copy()\n",
        (
            "tests/ui/test_evaluation_ui.py::test_open_in_canvas_shows_the_cells_own_validation_image",
        ),
    ),
    Mutation(
        "smoother-bias-correction-first-point-only",
        "The smoothed loss curve is the bias-corrected EMA at every point, not just the first",
        "Smoother.__call__",
        "        return self._acc / (1 - self.beta**self._count)\n",
        "        return self._acc / (1 - self.beta ** min(self._count, 1))\n",
        (
            "tests/ui/test_plots.py::test_smoother_is_the_bias_corrected_average",
            "tests/ui/test_evaluation_ui.py::test_open_in_canvas_shows_the_cells_own_validation_image",
        ),
    ),
    Mutation(
        "plot-refresh-never-backs-off",
        "Live plots refresh less often when drawing is expensive (interval = 100x the shared frame cost, 250..2000 ms)",
        "Refresher.tick",
        "            min(MAX_INTERVAL_MS, max(MIN_INTERVAL_MS, COST_FACTOR * cost_ms))\n",
        "            min(MAX_INTERVAL_MS, max(MIN_INTERVAL_MS, 0 * cost_ms))\n",
        (
            "tests/ui/test_plots.py::test_refresh_backs_off_when_drawing_is_expensive",
            "tests/ui/test_plots.py::test_a_slow_paint_slows_the_refresh",
        ),
    ),
    Mutation(
        "runs-selection-highlights-one-cell",
        "Selected runs are highlighted across their whole row in the Runs table",
        "RunsTable.select_ids",
        "            model.select(index, model.SelectionFlag.Select | model.SelectionFlag.Rows)\n",
        "            model.select(index, model.SelectionFlag.Select)\n",
        ("tests/ui/test_runs_panel.py::test_panel_renders",),
    ),
    Mutation(
        "runs-message-never-shown",
        "A message shown on the Runs tab (e.g. a reproduce verdict) is visible under the buttons",
        "RunsPanel.show_message",
        "        self.message_label.setVisible(bool(text))\n",
        "        self.message_label.setVisible(False)\n",
        ("tests/ui/test_runs_panel.py::test_panel_renders",),
    ),
    # ------------------------------ drawing, freezing, precision, run folders
    Mutation(
        "mnist-centring-no-shift",
        "A drawing prepared with the MNIST recipe is placed by its centre of mass at the field's centre, like MNIST digits",
        "workbench.core.data.preprocess:mnist_style",
        "    dy, dx = round(centre - cy), round(centre - cx)",
        "    dy, dx = 0, 0",
        (
            "tests/core/test_mnist_centring.py::test_an_asymmetric_digit_is_moved_by_the_hand_computed_shift",
            "tests/core/test_mnist_centring.py::test_the_centre_of_mass_ends_within_half_a_pixel_of_the_centre",
            "tests/core/test_mnist_centring.py::test_a_scaled_down_asymmetric_digit_is_centred_by_mass",
            "tests/core/test_mnist_centring.py::test_the_shift_is_clipped_so_the_digit_stays_whole",
            "tests/core/test_my_digits.py::test_added_drawings_are_listed_with_both_images",
        ),
    ),
    Mutation(
        "mnist-centring-wrong-sign",
        "The centre-of-mass shift moves the digit's mass towards the centre, not away from it",
        "workbench.core.data.preprocess:mnist_style",
        "    dy, dx = round(centre - cy), round(centre - cx)",
        "    dy, dx = round(cy - centre), round(cx - centre)",
        (
            "tests/core/test_mnist_centring.py::test_an_asymmetric_digit_is_moved_by_the_hand_computed_shift",
            "tests/core/test_mnist_centring.py::test_the_centre_of_mass_ends_within_half_a_pixel_of_the_centre",
            "tests/core/test_mnist_centring.py::test_a_scaled_down_asymmetric_digit_is_centred_by_mass",
            "tests/core/test_mnist_centring.py::test_the_shift_is_clipped_so_the_digit_stays_whole",
            "tests/core/test_my_digits.py::test_added_drawings_are_listed_with_both_images",
        ),
    ),
    Mutation(
        "mnist-centring-shift-not-clipped",
        "The centre-of-mass shift is clipped so the digit stays whole inside the 28x28 field (nothing wraps around)",
        "workbench.core.data.preprocess:mnist_style",
        "    dy = int(np.clip(dy, -top, FIELD - top - h))\n    dx = int(np.clip(dx, -left, FIELD - left - w))",
        "",
        (
            "tests/core/test_mnist_centring.py::test_the_shift_is_clipped_so_the_digit_stays_whole",
        ),
    ),
    Mutation(
        "continue-ignores-freeze-edits",
        "A freeze mask edited between Stop and Continue reaches the optimizer: unfrozen layers train, frozen ones stay bit-identical",
        "Session.train",
        "            control.notify_mask_changed()  # the mask may have changed since\n",
        "            pass\n",
        (
            "tests/ui/test_window.py::test_unfreezing_between_stop_and_continue_trains_that_layer",
            "tests/ui/test_window.py::test_freezing_between_stop_and_continue_keeps_that_layer_bit_identical",
        ),
    ),
    Mutation(
        "bf16-silently-runs-fp32",
        "Choosing bf16 precision really trains under bf16 autocast (and learns about as well as fp32)",
        "autocast_context",
        '    if precision == "fp32":\n        return contextlib.nullcontext()',
        '    if precision in ("fp32", "bf16"):\n        return contextlib.nullcontext()',
        ("tests/core/test_engine.py::test_bf16_autocast_trains_on_cpu",),
    ),
    Mutation(
        "open-keeps-previous-run-folder",
        "Opening a checkpoint saved outside the runs folder never autosaves over the previous run's folder",
        "Session.adopt",
        "        self.folder = folder_of(opened.path)\n",
        "        self.folder = folder_of(opened.path) or self.folder\n",
        ("tests/ui/test_autosave_ui.py::test_save_and_open_keep_the_run_folder_apart",),
    ),
    Mutation(
        "stopped-run-not-autosaved",
        "A run stopped mid-way (or by closing the window) is autosaved as it stood, so it can be resumed",
        "RunRecorder._record",
        "            message = self._save(run) if self.every else None",
        "            message = self._save(run) if self.every and not event.stopped else None",
        (
            "tests/ui/test_autosave_ui.py::test_closing_mid_run_is_offered_next_time_and_can_be_forgotten",
        ),
    ),
    Mutation(
        "restore-forgets-position-in-epoch",
        "Save then Open restores everything, including where in the epoch the run stopped",
        "restore_run",
        '    run.batch_in_epoch = int(payload.get("batch_in_epoch", 0))',
        "    run.batch_in_epoch = 0",
        ("tests/ui/test_checkpoints_ui.py::test_save_then_open_restores_everything",),
    ),
    Mutation(
        "import-cycle",
        "no module of workbench imports itself through others",
        "workbench.cli.console:",
        "import math\n",
        "import math\n\nfrom workbench import cli  # noqa: F401\n",
        ("tests/core/test_import_cycles.py::test_workbench_has_no_import_cycle",),
    ),
    Mutation(
        "digits-cache-misaligned",
        "the cached digits are exactly the digits scikit-learn gives",
        "_read_digits_cache",
        "torch.from_numpy(stored[k]) for k in _SPLITS",
        "torch.from_numpy(stored[k][::-1].copy()) for k in _SPLITS",
        (
            "tests/core/test_data.py::test_digits_are_cached_after_the_first_load_and_a_damaged_cache_is_remade",
        ),
    ),
    Mutation(
        "automatic-log-interval-fixed",
        "the automatic log interval logs every step of a short run",
        "resolve_log_every",
        "    return max(1, math.ceil(total_steps / AUTO_LOG_POINTS))\n",
        "    return 10\n",
        (
            "tests/core/test_engine.py::test_the_automatic_log_interval_logs_every_step_of_a_short_run",
        ),
    ),
    Mutation(
        "toml-optional-by-default-value",
        "a config saved as TOML loads back with its unset optional fields (log_every too)",
        "TrainConfig.from_dict",
        'if "None" in str(f.type))',
        "if f.default is None)",
        (
            "tests/core/test_config.py::test_round_trip_through_file",
            "tests/core/test_config.py::test_an_optional_field_reads_its_unset_mark_whatever_its_default",
        ),
    ),
    # ------------------------------------------------- one run lifecycle
    Mutation(
        "unsafe-change-resumes",
        "Start continues a run only when every changed setting is safe to change mid-run; the window and the command line decide alike",
        "plan_start",
        "    unsafe = sorted(set(changed) - RESUME_SAFE)\n",
        "    unsafe = []\n",
        (
            "tests/core/test_session.py::test_safe_changes_resume_and_others_begin_anew",
            "tests/ui/test_session_parity.py::test_the_window_and_the_command_line_make_the_same_decision",
        ),
    ),
    Mutation(
        "finished-run-continues",
        "A run that trained all its steps is not continued: Start begins a new one",
        "plan_start",
        "    if run.global_step >= total:\n",
        "    if run.global_step > total:\n",
        (
            "tests/core/test_session.py::test_a_run_with_nothing_left_to_train_begins_anew",
        ),
    ),
    Mutation(
        "loaded-weights-ignored",
        "Weights loaded with Load weights (or --init-from) are the next new run's starting point",
        "Session._prepare",
        "            load_exact(run.model, plan.initial_weights.state)\n",
        "            pass\n",
        ("tests/core/test_session.py::test_weights_that_fit_start_the_next_new_run",),
    ),
    Mutation(
        "data-loaded-every-run",
        "Data a run loaded stays in memory for the next run and the preview",
        "Session.load_arrays",
        "        self.arrays.put(cfg.dataset, cfg.data_dir, arrays)\n",
        "        pass\n",
        ("tests/core/test_session.py::test_data_loaded_once_is_reused",),
    ),
    Mutation(
        "progress-never-throttled",
        "The progress texts are redrawn at most four times a second, however often a run logs",
        "TrainingPanel.show_step",
        "        if now - self._shown_at < PROGRESS_INTERVAL_S and step < total:\n",
        "        if False:\n",
        (
            "tests/ui/test_window.py::test_progress_texts_are_redrawn_at_most_four_times_a_second",
        ),
    ),
    Mutation(
        "record-drops-step-seconds",
        "A ledger line keeps each step's time, and reads back as the event it was",
        "StepMetrics.from_record",
        '            step_seconds=_float(record, "step_seconds"),\n',
        "            step_seconds=math.nan,\n",
        (
            "tests/core/test_records.py::test_every_recorded_event_round_trips_through_a_json_line",
        ),
    ),
    Mutation(
        "history-loses-confusion",
        "A checkpoint keeps every epoch's confusion matrix, so opening it replays them",
        "EpochMetrics.to_dict",
        '            data["confusion"] = [list(row) for row in self.confusion]\n',
        "            pass\n",
        (
            "tests/core/test_records.py::test_every_recorded_event_round_trips_through_a_json_line",
            "tests/core/test_checkpoints.py::test_round_trip_keeps_everything",
        ),
    ),
    Mutation(
        "seeded-step-lines-unreadable",
        "Ledgers written by earlier versions (and a continued run's seeded lines) still read",
        "StepMetrics.from_record",
        '            accuracy=_float(record, "accuracy"),\n',
        '            accuracy=float(record["accuracy"]),\n',
        (
            "tests/core/test_records.py::test_a_ledger_written_by_the_old_code_still_reads",
        ),
    ),
    Mutation(
        "step-seconds-from-batch-size",
        "The step time is measured per step, even for a short last batch",
        "log_step",
        "        step_seconds=interval.seconds / max(interval.steps, 1),\n",
        "        step_seconds=run.config.batch_size * interval.seconds / interval.samples,\n",
        (
            "tests/core/test_engine.py::test_step_seconds_is_the_time_of_one_step_even_a_short_last_one",
        ),
    ),
    Mutation(
        "paint-budget-per-plot",
        "All live plots share one paint budget: more plots refresh less often, not each on its own clock",
        "Refresher.tick",
        "            self._frame_cost_s += drawn.refresh_cost_s + drawn.paint_cost_s\n",
        "            self._frame_cost_s = max(\n"
        "                self._frame_cost_s, drawn.refresh_cost_s + drawn.paint_cost_s\n"
        "            )\n",
        ("tests/ui/test_plots.py::test_the_paint_budget_is_shared_by_every_plot",),
    ),
    Mutation(
        "health-at-every-log-step",
        "Layer health is sampled every 10 steps whatever the log interval, so logging every step stays cheap",
        "workbench.core.train.engine:_train",
        "                if run.finished or health_due(run.global_step, run.log_every):\n",
        "                if True:\n",
        (
            "tests/core/test_engine.py::test_layer_health_is_sampled_every_10_steps_whatever_the_log_interval",
        ),
    ),
    Mutation(
        "mask-change-not-recorded",
        "A run whose freeze mask changed mid-run is refused by Reproduce, with that reason",
        "Session.mask_changed",
        "                self.folder.record_mask_change(self.run.global_step, frozen)\n",
        "                pass\n",
        (
            "tests/core/test_session.py::test_a_run_whose_mask_changed_mid_run_is_not_reproduced_from_its_config",
        ),
    ),
    Mutation(
        "workers-outlive-the-run",
        "DataLoader worker processes stop when the run stops or ends",
        "Session.finish",
        '        run\'s DataLoader workers stop (Continue starts them again).\n        """\n        if self.run is not None:\n            self.run.loaders.release_workers()\n',
        '        run\'s DataLoader workers stop (Continue starts them again).\n        """\n',
        (
            "tests/core/test_session.py::test_dataloader_workers_stop_when_the_run_stops",
        ),
    ),
    Mutation(
        "new-run-shows-old-progress",
        "A new run starts with an empty progress bar and no speed, not the last run's",
        "MainWindow.launch",
        '            self.training_panel.clear_progress("preparing…")\n',
        "            pass\n",
        ("tests/ui/test_window.py::test_a_new_run_starts_with_empty_progress",),
    ),
    Mutation(
        "text-file-called-corrupted",
        "A file that is plainly no checkpoint (an image, a text) is named for what it is",
        "_file_kind",
        '        return "a text file"\n',
        "        return None\n",
        (
            "tests/core/test_checkpoints.py::test_a_file_that_is_plainly_no_checkpoint_is_named_for_what_it_is",
        ),
    ),
    Mutation(
        "weights-only-advice-repeated",
        "Error texts never repeat PyTorch's advice to load with weights_only=False",
        "_read_untrusted",
        '        detail = "" if "weights_only" in first_line else f": {first_line}"\n',
        '        detail = f": {first_line}"\n',
        (
            "tests/core/test_checkpoints.py::test_an_unreadable_file_never_repeats_torchs_weights_only_advice",
        ),
    ),
    Mutation(
        "loaded-weights-lost-on-model-switch",
        "Loaded weights are what the freeze tree and the Draw tab show, also after switching the architecture away and back",
        "ModelPreview._adopt",
        "            load_exact(model, loaded.state)  # the next run starts from these\n",
        "            pass\n",
        (
            "tests/ui/test_window.py::test_loaded_weights_stay_what_the_reader_uses_after_a_model_switch",
        ),
    ),
    Mutation(
        "overlay-smoothed-differently",
        "An overlaid past run is smoothed like the live curve, so the two compare",
        "TrainingCurves.set_smoothing",
        "        self.overlay.set_smoothing(beta)\n",
        "        pass\n",
        (
            "tests/ui/test_runs_ui.py::test_an_overlaid_run_is_smoothed_like_the_live_curve",
            "tests/ui/test_runs_ui.py::test_the_smoothing_control_resmooths_the_live_and_the_overlaid_curves",
        ),
    ),
    # --------------------------------------------------------- issue 12: lead
    Mutation(
        "partial-load-default-ignores-fit",
        "Load what fits is not the default when fewer than half the tensors fit",
        "FileActions._offer_weights",
        "            load_by_default=not offer.mostly_unfit,\n",
        "            load_by_default=True,\n",
        (
            "tests/ui/test_load_weights.py::test_cancel_is_the_default_when_almost_nothing_fits",
        ),
    ),
    Mutation(
        "no-switch-to-saved-architecture",
        "Weights saved from another architecture offer to switch the model to it",
        "WeightsOffer.other_architecture",
        "        return self.saved_from\n",
        "        return None\n",
        (
            "tests/ui/test_load_weights.py::test_weights_of_another_architecture_offer_to_switch_to_it",
            "tests/core/test_session.py::test_weights_offer_names_the_checkpoints_own_architecture",
        ),
    ),
    Mutation(
        "borrowed-settings-kept",
        "After a fine-tune or a reproduction the panels show the user's own settings again",
        "RunView._on_controller_run_finished",
        "        self.give_back_settings()\n        self._compile_timer.stop()\n",
        "        self._compile_timer.stop()\n",
        (
            "tests/ui/test_user_settings.py::test_a_fine_tune_gives_the_users_settings_back",
            "tests/ui/test_user_settings.py::test_a_reproduction_gives_the_users_settings_back",
        ),
    ),
    Mutation(
        "reader-misses-loaded-weights",
        "Loaded weights are what the Draw tab reads with, at once, in every state",
        "FileActions._accept",
        '        w.set_notes([f"Next run starts from {weights.source}: {weights.summary}."])\n        w.draw_tab.refresh_reader()\n',
        '        w.set_notes([f"Next run starts from {weights.source}: {weights.summary}."])\n',
        (
            "tests/ui/test_load_weights.py::test_the_draw_tab_reads_with_loaded_weights_at_once",
        ),
    ),
    Mutation(
        "recompile-hidden",
        "torch.compile's recompile for an epoch's last, partial batch is said and kept out of images/s",
        "workbench.core.train.engine:_train",
        "            compiling = cfg.compile and len(x) not in compiled_sizes\n",
        "            compiling = cfg.compile and not compiled_sizes\n",
        (
            "tests/core/test_engine.py::test_compile_in_place_keeps_clean_keys_and_reports_compile_time",
        ),
    ),
    # --------------------------------------------------------- issue 12: plots
    Mutation(
        "smoothing-control-new-points-only",
        "Changing the loss smoothing smooths every point of the live curve anew, not only later ones",
        "TrainingCurves.set_smoothing",
        '            self.loss_plot.replace("smoothed", steps, self._smoother.feed(losses))\n',
        "            self._smoother.feed(losses)\n",
        (
            "tests/ui/test_curves.py::test_the_smoothing_control_smooths_every_point_anew_and_is_remembered",
            "tests/ui/test_runs_ui.py::test_the_smoothing_control_resmooths_the_live_and_the_overlaid_curves",
        ),
    ),
    Mutation(
        "smoothing-control-skips-overlay",
        "Changing the loss smoothing re-smooths every overlaid past run too, so they still compare",
        "RunOverlay.set_smoothing",
        "            self.loss_plot.replace(name, curves.loss_steps, self._smoothed(curves))\n",
        "            pass\n",
        (
            "tests/ui/test_runs_ui.py::test_the_smoothing_control_resmooths_the_live_and_the_overlaid_curves",
        ),
    ),
    Mutation(
        "new-run-keeps-old-axes",
        "A new run's plots range over its own points, not the previous run's (even after a zoom)",
        "LivePlot.clear_data",
        "        self.enableAutoRange()\n",
        "        pass\n",
        ("tests/ui/test_curves.py::test_a_new_run_gets_axes_for_its_own_points",),
    ),
    Mutation(
        "empty-plot-no-start-hint",
        "An empty loss plot says how to start training, until its first point and again after a clear",
        "LivePlot._update_hint",
        "            self._hint.setVisible(not any(s.n for s in self._series.values()))\n",
        "            self._hint.setVisible(False)\n",
        ("tests/ui/test_curves.py::test_the_empty_loss_plot_says_how_to_start",),
    ),
    Mutation(
        "lone-point-invisible",
        "A curve with a single point shows it (a dot), not nothing",
        "LivePlot.refresh",
        "            lone = s.n == 1 and s.symbol is None\n",
        "            lone = False\n",
        ("tests/ui/test_curves.py::test_a_lone_point_is_drawn",),
    ),
    Mutation(
        "axis-scale-factor",
        'Plot axes never say "(x0.001)": tiny losses and norms read as they are',
        "no_scale_factor",
        "        plot.getAxis(name).enableAutoSIPrefix(False)\n",
        "        plot.getAxis(name).enableAutoSIPrefix(True)\n",
        (
            "tests/ui/test_curves.py::test_axes_show_no_scale_factor",
            "tests/ui/test_health_panel.py::test_health_axes_show_no_scale_factor",
        ),
    ),
    Mutation(
        "class-accuracy-labels-overlap",
        "The per-class accuracy values never run into each other, at any width of the tab",
        "ClassAccuracyChart._label_texts",
        "            if widest + self.LABEL_GAP <= pitch:\n",
        "            if True:\n",
        (
            "tests/ui/test_class_accuracy.py::test_value_labels_never_overlap",
            "tests/ui/test_class_accuracy.py::test_labels_follow_the_width",
        ),
    ),
    Mutation(
        "health-legend-over-curves",
        "Layer health names every layer beside its plots, with no legend box over the curves (the head's)",
        "LayerHealthPanel.__init__",
        "            legend=False,  # the layer list names the curves\n",
        "            legend=True,\n",
        (
            "tests/ui/test_health_panel.py::test_every_layer_is_named_and_no_legend_covers_the_head",
        ),
    ),
    Mutation(
        "status-val-loss-nan",
        'The status line after an epoch without a validation loss leaves it out, never "val loss nan"',
        "validation_summary",
        "    if math.isfinite(loss):\n",
        "    if True:\n",
        (
            "tests/ui/test_epoch_status.py::test_validation_summary_leaves_out_what_was_not_measured",
            "tests/ui/test_epoch_status.py::test_an_epoch_without_validation_loss_never_shows_nan",
        ),
    ),
    # --------------------------------------------------------- issue 12: draw tab
    Mutation(
        "opened-image-read-through-recipe",
        "An image opened from the Evaluation gallery is read as the exact tensor the gallery scored, with the same class and percentage",
        "DrawPanel.read_now",
        "            if opened is not None:\n                # The very tensor",
        "            if opened is None:\n                # The very tensor",
        (
            "tests/ui/test_evaluation_ui.py::test_an_opened_image_reads_as_the_gallery_scored_it_until_drawn_on",
        ),
    ),
    Mutation(
        "stored-input-not-the-loaders",
        "An opened validation image is normalised with the loaders' own operations, bit for bit",
        "stored_input",
        "    return info.normalise(x.div(255)[None, None])\n",
        "    return ((x / 255 - info.mean[0]) * (1 / info.std[0]))[None, None]\n",
        (
            "tests/ui/test_evaluation_ui.py::test_an_opened_image_reads_as_the_gallery_scored_it_until_drawn_on",
        ),
    ),
    Mutation(
        "opened-image-label-not-preset",
        "Opening a gallery image presets the label to its true class: adding it is one key",
        "DrawPanel.open_scored",
        "            self.set_label(scored.label)\n",
        "            pass\n",
        (
            "tests/ui/test_evaluation_ui.py::test_an_opened_image_reads_as_the_gallery_scored_it_until_drawn_on",
        ),
    ),
    Mutation(
        "opened-image-added-as-enlargement",
        "An opened validation image is added to my digits as the image itself (its field exactly what the model was shown)",
        "DrawPanel.add_sample",
        "            if opened is not None:\n                # The image itself",
        "            if opened is None:\n                # The image itself",
        (
            "tests/ui/test_evaluation_ui.py::test_an_opened_image_reads_as_the_gallery_scored_it_until_drawn_on",
        ),
    ),
    Mutation(
        "drawing-on-opened-image-keeps-scored-reading",
        "Once the user draws on an opened image, the canvas recipe reads it again",
        "DigitCanvas.holds_only_picture",
        "            and len(self._strokes) == 1\n",
        "            and len(self._strokes) >= 1\n",
        (
            "tests/ui/test_evaluation_ui.py::test_an_opened_image_reads_as_the_gallery_scored_it_until_drawn_on",
        ),
    ),
    Mutation(
        "draw-keys-need-panel-focus",
        "The Draw tab's keys work wherever the focus is in the window while the tab is shown",
        "DrawKeys._window_shortcut",
        "        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)\n",
        "        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)\n",
        (
            "tests/ui/test_draw_keys.py::test_ctrl_2_gives_the_canvas_the_focus_and_the_keys_work_at_once",
        ),
    ),
    Mutation(
        "canvas-not-focused-when-tab-shown",
        "Showing the Draw tab (Ctrl+2) gives the canvas the keyboard focus",
        "DrawTab._on_tabs_current_changed",
        "            self.panel.focus_canvas()\n",
        "            pass\n",
        (
            "tests/ui/test_draw_keys.py::test_ctrl_2_gives_the_canvas_the_focus_and_the_keys_work_at_once",
        ),
    ),
    Mutation(
        "draw-keys-eat-typing",
        "Enter (and digits) typed in a field of the window still edit that field while the Draw tab is shown",
        "DrawKeys._on_app_focus_changed",
        "            shortcut.setEnabled(not typing)\n",
        "            shortcut.setEnabled(True)\n",
        (
            "tests/ui/test_draw_keys.py::test_typing_in_the_draw_tabs_own_fields_edits_them",
            "tests/ui/test_draw_keys.py::test_ctrl_2_gives_the_canvas_the_focus_and_the_keys_work_at_once",
        ),
    ),
    Mutation(
        "thumbnails-in-saved-recipe",
        "My digits' thumbnails show each drawing as the reader's recipe prepares it",
        "MyDigitsBox.refresh_samples",
        "                field = self.store.field_in_style(sample, self._style)\n",
        "                field = self.store.field(sample.id)\n",
        (
            "tests/ui/test_my_digits_views.py::test_thumbnails_follow_the_readers_recipe",
        ),
    ),
    Mutation(
        "counts-label-parts-digit-and-count",
        "The my-digits counts never wrap between a digit and its count",
        "MyDigitsBox.refresh_samples",
        '            per_digit = "  ".join(f"{d}:\\u00a0{n}" for d, n in enumerate(counts))\n',
        '            per_digit = "  ".join(f"{d}: {n}" for d, n in enumerate(counts))\n',
        (
            "tests/ui/test_my_digits_views.py::test_thumbnails_follow_the_readers_recipe",
        ),
    ),
    Mutation(
        "sample-strip-wraps-missing-digits",
        "The Data panel's sample strip keeps one column per class; a class without images leaves its column empty",
        "sample_strip",
        "        index = np.flatnonzero(labels == col)[:rows]\n",
        "        index = np.flatnonzero(labels == col % max(int(labels.max()) + 1, 1))[:rows]\n",
        (
            "tests/ui/test_my_digits_views.py::test_a_digit_without_images_leaves_its_column_empty",
        ),
    ),
    Mutation(
        "my-digits-strip-always-mnist",
        "The my-digits sample strip shows the drawings as the chosen base dataset's recipe prepares them",
        "DataPanel._show_strip",
        "            style = style_of(str(self.base_combo.currentData()))\n",
        '            style = "mnist"\n',
        (
            "tests/ui/test_my_digits_views.py::test_the_my_digits_strip_is_prepared_like_the_base_dataset",
        ),
    ),
    Mutation(
        "fast-stroke-leaves-dots",
        "A fast stroke is one unbroken line: each move is joined to the previous point",
        "DigitCanvas._add_point",
        "        painter = self._canvas_painter()\n        _paint_segment(painter, previous, point)\n",
        "        painter = self._canvas_painter()\n        _paint_segment(painter, None, point)\n",
        ("tests/ui/test_draw_widgets.py::test_a_fast_stroke_is_one_unbroken_line",),
    ),
    # --------------------------------------------------------- issue 12: window layout
    Mutation(
        "freeze-lock-note-pushes-the-tree",
        "Nothing in the window moves when a run starts, pauses or ends: the freeze tree's lock note keeps its space",
        "FreezePanel.__init__",
        "        policy.setRetainSizeWhenHidden(True)\n",
        "        policy.setRetainSizeWhenHidden(False)\n",
        (
            "tests/ui/test_layout.py::test_nothing_moves_when_a_run_starts_pauses_and_finishes",
        ),
    ),
    Mutation(
        "settings-column-cuts-its-panels",
        "The settings column is never narrower than its panels: nothing is cut at the right, even at the minimum window size",
        "workbench.ui.window.layout:FollowContentWidth.fit",
        "            area.setMinimumWidth(need)\n",
        "            area.setMaximumWidth(need)\n",
        (
            "tests/ui/test_layout.py::test_at_the_minimum_size_nothing_is_wider_than_the_window",
        ),
    ),
    Mutation(
        "narrow-window-squeezes-the-tabs",
        "On a narrow window (1024x700) the tabs keep priority: the model column folds so the Draw tab's canvas and bars are whole",
        "column_sizes",
        "    settings = min(settings, max(settings_min, room - tabs_need))\n    return [settings, 0, room - settings]\n",
        "    return [settings, model, room - settings - model]\n",
        ("tests/ui/test_layout.py::test_the_draw_tab_fits_a_1024x700_window",),
    ),
    Mutation(
        "first-window-bigger-than-the-screen",
        "The first window (no saved geometry) fits the screen",
        "fit_window",
        "    window.resize(size.boundedTo(available).expandedTo(window.minimumSize()))\n",
        "    window.resize(size.expandedTo(window.minimumSize()))\n",
        ("tests/ui/test_layout.py::test_a_first_window_fits_the_screen",),
    ),
    Mutation(
        "wide-screen-columns-restored-on-a-small-one",
        "Column widths saved for a wider window are not restored on a smaller screen: the tabs keep their room",
        "restore_layout",
        "            if width is None or int(width) > window.width():\n",
        "            if width is None:\n",
        (
            "tests/ui/test_layout.py::test_columns_saved_on_a_bigger_screen_leave_the_tabs_room",
        ),
    ),
    # --------------------------------------------------------- issue 12: stale views
    Mutation(
        "progress-outlives-its-model",
        "Another model shows no progress of the last run; the run's model shows where it stands",
        "ModelPreview._adopt",
        "        w.training_panel.clear_progress()  # the run's progress is not this model's\n",
        "        pass\n",
        (
            "tests/ui/test_stale_views.py::test_another_model_shows_no_progress_of_the_run",
        ),
    ),
    Mutation(
        "fine-tune-card-outlives-its-model",
        "The fine-tune card goes when its model does (New run, a new run, an opened checkpoint)",
        "MainWindow.clear_run_views",
        "        self.draw_panel.clear_fine_tune_report()\n",
        "",
        (
            "tests/ui/test_stale_views.py::test_a_verdict_and_a_fine_tune_card_go_with_their_run",
        ),
    ),
    Mutation(
        "reproduce-verdict-stays",
        "A reproduction's verdict goes when a new run begins",
        "MainWindow.clear_run_views",
        '        self.runs_panel.show_message("")\n',
        "",
        (
            "tests/ui/test_stale_views.py::test_a_verdict_and_a_fine_tune_card_go_with_their_run",
        ),
    ),
    # --------------------------------------------------------- issue 12: the Runs tab, Open recent
    Mutation(
        "runs-folder-unwatched",
        "Run folders that appear or go on disk (another process's run) are listed without Refresh",
        "RunsPanel.__init__",
        "        self._watcher.directoryChanged.connect(self._on_watcher_directory_changed)\n",
        "        pass\n",
        (
            "tests/ui/test_runs_panel.py::test_runs_appearing_or_going_on_disk_are_listed_without_refresh",
        ),
    ),
    Mutation(
        "running-runs-unwatched",
        "A running run's row follows its run.json (it ends: the row says finished)",
        "RunsPanel._watch",
        "        wanted = {str(root)} | running\n",
        "        wanted = {str(root)}\n",
        (
            "tests/ui/test_runs_panel.py::test_runs_appearing_or_going_on_disk_are_listed_without_refresh",
        ),
    ),
    Mutation(
        "runs-tab-stale-when-shown",
        "Showing the Runs tab lists what changed on disk while it was hidden",
        "RunsPanel.showEvent",
        "        super().showEvent(event)\n        self.refresh()\n",
        "        super().showEvent(event)\n",
        (
            "tests/ui/test_runs_panel.py::test_showing_the_tab_lists_what_changed_while_it_was_hidden",
        ),
    ),
    Mutation(
        "run-index-stale",
        "The runs list rereads a run.json that changed (and only those)",
        "RunIndex.runs",
        "                if known and known[0] == key\n",
        "                if known\n",
        (
            "tests/core/test_ledger.py::test_the_run_index_rereads_only_the_runs_that_changed",
        ),
    ),
    Mutation(
        "sort-arrow-qt-default",
        "The Runs table's sort arrow points down when the newest run is on top",
        "_SortArrowStyle.drawPrimitive",
        "        if element != QStyle.PrimitiveElement.PE_IndicatorHeaderArrow or not (\n",
        "        if True or not (\n",
        (
            "tests/ui/test_runs_panel.py::test_the_sort_arrow_points_the_way_the_rows_run",
        ),
    ),
    Mutation(
        "dates-sort-as-text",
        "Runs sort by the time they began, not by the text of it (time zones)",
        "_cells",
        "        (local_time(run.created), _timestamp(run.created)),\n",
        "        (local_time(run.created), run.created),\n",
        ("tests/ui/test_runs_panel.py::test_dates_sort_as_times_not_as_text",),
    ),
    Mutation(
        "runs-columns-uncapped",
        "Every column of the runs table is in view at the default window sizes",
        "RunsTable._fit_columns",
        "            if cap is not None and header.sectionSize(column) > cap:\n",
        "            if False:\n",
        (
            "tests/ui/test_runs_ui.py::test_every_runs_column_is_in_view_at_the_default_window_sizes",
        ),
    ),
    Mutation(
        "reproduce-enabled-when-refused",
        "Reproduce is disabled, with the reason, for a run the session would refuse",
        "RunsPanel._update_buttons",
        "            one is not None and why_not is None and not self._busy\n",
        '            one is not None and one.status == "finished" and not self._busy\n',
        (
            "tests/ui/test_runs_panel.py::test_reproduce_is_disabled_with_the_reason_for_runs_it_would_refuse",
        ),
    ),
    Mutation(
        "reproduce-empty-config",
        "A run without a config is not reproduced from the default settings",
        "reproducible",
        "    if not run.config:\n",
        "    if False:\n",
        (
            "tests/core/test_ledger.py::test_one_decision_says_which_runs_can_be_reproduced",
        ),
    ),
    Mutation(
        "recent-duplicates",
        "Open recent lists each file once, however its path was written",
        "recent_entries",
        "        if path not in unique:\n",
        "        if True:\n",
        (
            "tests/ui/test_checkpoints_ui.py::test_open_recent_lists_each_file_once_and_tells_same_names_apart",
        ),
    ),
    Mutation(
        "recent-same-names-untold",
        "Open recent tells files of the same name apart by their folders",
        "recent_entries",
        "        if len(same) == 1:\n",
        "        if True:\n",
        (
            "tests/ui/test_checkpoints_ui.py::test_open_recent_lists_each_file_once_and_tells_same_names_apart",
        ),
    ),
    Mutation(
        "recent-not-refilled-on-open",
        "Open recent shows a file that is gone disabled, and notices as the menu opens",
        "FileActions.fill_recent_menu",
        "            menu.aboutToShow.connect(self._on_recent_menu_about_to_show)\n",
        "            pass\n",
        (
            "tests/ui/test_checkpoints_ui.py::test_open_recent_lists_each_file_once_and_tells_same_names_apart",
        ),
    ),
    Mutation(
        "edit-silently-starts-anew",
        "An edit that turns Continue into a new run says so (status line and Start's tooltip)",
        "MainWindow._on_panel_changed",
        '            self.set_status(f"{status}. {note}" if note else status)\n',
        "            pass\n",
        (
            "tests/ui/test_stale_views.py::test_an_edit_that_turns_continue_into_a_new_run_says_so",
        ),
    ),
    Mutation(
        "wrapped-draw-texts-cut",
        "The Draw tab's wrapped texts are as tall as their lines, never cut (1024x700)",
        "WrappingLabel._fit_height",
        "        if needed > 0 and needed != self.minimumHeight():\n",
        "        if False:\n",
        ("tests/ui/test_layout.py::test_the_draw_tab_fits_a_1024x700_window",),
    ),
    Mutation(
        "model-column-stays-folded",
        "View > Model and freeze tree unfolds the column that folds on narrow windows",
        "ColumnSplitter.show_model_column",
        "            model = _min_width(self.widget(1))\n",
        "            model = 0\n",
        (
            "tests/ui/test_layout.py::test_the_view_menu_unfolds_and_folds_the_model_column",
        ),
    ),
    Mutation(
        "press-start-while-preparing",
        "While a run gets ready the empty loss plot says its first loss comes, not 'Press Start'",
        "MainWindow._on_controller_state_changed",
        "        self.curves.set_run_active(state.training)\n",
        "",
        (
            "tests/ui/test_stale_views.py::test_the_empty_loss_plot_says_the_run_is_coming_not_press_start",
        ),
    ),
    # --------------------------------------------------------- issue 12: first hour
    Mutation(
        "bar-lags-at-a-pause",
        "At a pause the progress bar shows the step the run paused at",
        "RunView._on_controller_pause_reached",
        '            self.window.training_panel.show_position(step, run.total_steps, "paused")\n',
        "            pass\n",
        (
            "tests/ui/test_first_hour.py::test_a_paused_run_shows_where_it_paused_on_the_bar",
            "tests/ui/test_first_hour.py::test_the_first_hour",
        ),
    ),
    Mutation(
        "one-drawings",
        "One drawing is counted in the singular",
        "MyDigitsBox.refresh_samples",
        "plural(len(samples), 'drawing')",
        "str(len(samples)) + ' drawings'",
        ("tests/ui/test_first_hour.py::test_one_drawing_is_counted_in_the_singular",),
    ),
    # --------------------------------------------------------- issue 13: check-data
    Mutation(
        "check-data-errors-ignored",
        "check-data exits 1 when the data cannot train (a missing folder, one class, an empty class)",
        "DataReport.can_train",
        '        return not any(f.severity == "error" for f in self.findings)\n',
        "        return True\n",
        (
            "tests/core/test_folder_check.py::test_data_that_cannot_train_is_an_error",
            "tests/core/test_folder_check.py::test_the_command_exits_0_when_it_can_train_and_1_when_not",
        ),
    ),
    Mutation(
        "check-data-misses-leaks",
        "check-data names an image that is in both train and val",
        "_check_duplicates",
        "            if split != first_split:\n",
        "            if False:\n",
        ("tests/core/test_folder_check.py::test_every_defect_is_named_with_its_file",),
    ),
    Mutation(
        "check-data-misses-truncation",
        "check-data decodes every pixel, so a truncated image is found before a run",
        "decode_image",
        "        image.load()  # every pixel: a truncated file raises here\n",
        # Pillow's lenient mode: a truncated file loads with its missing rows blank.
        '        __import__("PIL.ImageFile").ImageFile.LOAD_TRUNCATED_IMAGES = True\n'
        "        image.load()\n",
        ("tests/core/test_folder_check.py::test_every_defect_is_named_with_its_file",),
    ),
    # --------------------------------------------------------- issue 13: cifar10
    Mutation(
        "cifar-channels-interleaved",
        "CIFAR-10 pixels come out as the file stores them: red, green, blue planes, each row-major",
        "read_batch",
        "records[:, 1:].reshape(-1, CHANNELS, SIDE, SIDE)",
        "records[:, 1:].reshape(-1, SIDE, SIDE, CHANNELS).transpose(0, 3, 1, 2)",
        (
            "tests/core/test_cifar.py::test_channels_are_red_green_blue_planes_in_row_major_order",
        ),
    ),
    Mutation(
        "cifar-truncation-unchecked",
        "A CIFAR-10 batch file that is not whole records is a DataError naming it",
        "read_batch",
        "    if not raw or len(raw) % RECORD_BYTES:\n",
        "    if not raw:\n",
        (
            "tests/core/test_cifar.py::test_a_truncated_batch_file_is_a_data_error_naming_it",
        ),
    ),
    Mutation(
        "cifar-reader-unpickles",
        "CIFAR-10 loads without pickle (a tampered pickle runs code)",
        "read_batch",
        "        raw = path.read_bytes()\n",
        '        raw = __import__("pickle").loads(__import__("pickle").dumps(path.read_bytes()))\n',
        ("tests/core/test_cifar.py::test_loading_never_unpickles",),
    ),
    # --------------------------------------------------------- issue 13: data check in the window
    Mutation(
        "data-check-errors-let-start-go",
        "a run on an image folder whose check finds errors does not start; the report says why",
        "DataCheckRow.request_start",
        "        if report.can_train:\n            self.start_cleared.emit()\n",
        "        if True:\n            self.start_cleared.emit()\n",
        ("tests/ui/test_folder_dataset_ui.py::test_errors_hold_start_and_show_why",),
    ),
    Mutation(
        "data-check-bars-unsorted-counts",
        "the report's bars are as high as each class's readable images, in class order",
        "ClassCountChart.set_counts",
        "        heights = np.array([counts[n] for n in names], dtype=float)\n",
        "        heights = np.array(sorted(counts.values()), dtype=float)\n",
        (
            "tests/ui/test_data_check_view.py::test_the_report_shows_counts_as_bars_and_every_bad_file",
        ),
    ),
    Mutation(
        "data-panel-validation-share-dropped",
        "the Data panel gives back the validation share it shows (config round trip)",
        "DataPanel.config_values",
        '            "val_fraction": applied if round(100 * applied) == share else share / 100,\n',
        '            "val_fraction": applied,\n',
        (
            "tests/ui/test_folder_dataset_ui.py::test_the_panel_round_trips_folder_image_size_and_validation_share",
        ),
    ),
    # --------------------------------------------------------- issue 13: augmentation
    Mutation(
        "augment-one-crop-per-batch",
        "Each image of a batch gets its own random crop, not one crop for the batch",
        "BatchAugment._geometry",
        "            boxes = crop_boxes(total, h, w, generator)[part]\n",
        "            boxes = crop_boxes(1, h, w, generator).expand(n, 4)\n",
        ("tests/core/test_augment.py::test_each_image_gets_its_own_crop",),
    ),
    Mutation(
        "augment-draws-global-rng",
        "Augmentation draws from its own seeded generator, never the global RNG",
        "_uniform",
        "torch.rand(shape, generator=generator, dtype=torch.float64)",
        "torch.rand(shape, dtype=torch.float64)",
        (
            "tests/core/test_augment.py::test_same_seed_epoch_and_batch_give_the_same_output_and_leave_global_rng",
            "tests/core/test_augment.py::test_fast_loader_augments_reproducibly_without_the_global_rng",
        ),
    ),
    Mutation(
        "augment-resume-reseeds",
        "A mid-epoch resume augments each batch as the uninterrupted epoch did",
        "FastLoader._batches",
        "enumerate(batches, start=start_batch)",
        "enumerate(batches)",
        (
            "tests/core/test_augment.py::test_fast_loader_resumed_mid_epoch_yields_the_uninterrupted_batches",
        ),
    ),
    # --------------------------------------------------------- issue 13: your own images
    Mutation(
        "folder-split-not-seeded",
        "A folder without train/ and val/ is split per class by the run's seed",
        "split_pairs",
        "        order = torch.randperm(len(pairs), generator=generator).tolist()\n",
        "        order = list(range(len(pairs)))\n",
        (
            "tests/core/test_folder_dataset.py::test_a_folder_without_a_split_is_split_per_class_with_the_seed",
        ),
    ),
    Mutation(
        "folder-unreadable-stops-the-run",
        "A file that does not decode is skipped and named; it never stops the run",
        "_decode_all",
        '                skipped.append(f"{listing.relative(path)}: {result}")\n',
        "                raise DataError(str(result))\n",
        (
            "tests/core/test_folder_dataset.py::test_unreadable_files_are_skipped_and_named",
            "tests/core/test_bad_images.py::test_every_awkward_file_is_handled_and_the_run_trains",
        ),
    ),
    Mutation(
        "folder-cache-never-read",
        "The second run on the same files reads the decoded images from the disk cache",
        "load_folder",
        "    cached, damage = _read_cache(cache, fingerprint)\n",
        '    cached, damage = None, ""\n',
        (
            "tests/core/test_folder_dataset.py::test_the_second_load_reads_the_decoded_cache_without_decoding",
        ),
    ),
    Mutation(
        "fingerprint-ignores-contents",
        "The data fingerprint holds each file's content hash, not only its name",
        "fingerprint_folder",
        "                files[listing.relative(path)] = file_digest(path.read_bytes())\n",
        '                files[listing.relative(path)] = "present"\n',
        (
            "tests/core/test_folder_dataset.py::test_a_run_records_its_data_and_reproduce_names_a_change",
        ),
    ),
    Mutation(
        "reproduce-ignores-changed-data",
        "Reproduce refuses a run whose image folder changed, naming the difference",
        "original_config",
        "    changed = data_change(folder, cfg)\n",
        "    changed = None\n",
        (
            "tests/core/test_folder_dataset.py::test_a_run_records_its_data_and_reproduce_names_a_change",
        ),
    ),
    Mutation(
        "small-cnn-ignores-channels",
        "The built-in models adapt to the input's channels",
        "SmallCNN.__init__",
        "        self.block1 = block(channels, 16, stride=2)  # 28 -> 14\n",
        "        self.block1 = block(1, 16, stride=2)  # 28 -> 14\n",
        (
            "tests/core/test_folder_dataset.py::test_the_models_adapt_to_channels_size_and_classes",
        ),
    ),
    Mutation(
        "sixteen-bit-clipped",
        "16-bit images are scaled to 8 bits, not clipped to white",
        "_to_gray_or_rgb",
        "        return Image.fromarray(np.clip(wide / 257.0, 0, 255).round().astype(np.uint8))\n",
        "        return Image.fromarray(np.clip(wide, 0, 255).round().astype(np.uint8))\n",
        ("tests/core/test_folder_dataset.py::test_awkward_images_are_read",),
    ),
    Mutation(
        "memory-budget-ignored",
        "Beyond the memory budget a run reads the folder per batch instead of decoding it all",
        "over_budget",
        "    if needed <= budget:\n",
        "    if True:\n",
        (
            "tests/core/test_folder_dataset.py::test_beyond_the_memory_budget_a_dataloader_reads_the_files",
        ),
    ),
    Mutation(
        "checkpoint-without-dataset-info",
        "Checkpoints carry the class names and input shape of their data",
        "checkpoint_dict",
        '        "dataset_info": run.loaders.info.to_dict(),\n',
        "",
        (
            "tests/core/test_folder_dataset.py::test_checkpoints_carry_the_class_names_and_input_shape",
            "tests/core/test_bad_images.py::test_every_awkward_file_is_handled_and_the_run_trains",
        ),
    ),
    Mutation(
        "augment-not-wired",
        "The run's augmentation choices reach its training batches",
        "fast_loaders",
        "        augment=batch_augment(cfg, info),\n",
        "        augment=None,\n",
        (
            "tests/core/test_folder_dataset.py::test_builtin_datasets_augment_on_both_paths",
        ),
    ),
    Mutation(
        "loader-panel-path-not-shown",
        "The Loader panel says which path a run's batches take and why",
        "RunView._on_run_prepared",
        "        self.window.loader_panel.show_path(run.loaders.path)\n",
        "",
        (
            "tests/ui/test_folder_run_window.py::test_the_loader_panel_says_which_path_a_folder_run_took",
        ),
    ),
    # --------------------------------------------------------- issue 13: try any image
    Mutation(
        "photo-file-not-as-loaders",
        "An image file is read by a photo model as the run's loaders feed it, bit for bit (photo_input)",
        "Predictor.read_file",
        "        x = self.info.normalise(x.div(255)[None])\n",
        "        x = self.info.normalise(x[None] * (1 / 255))\n",
        (
            "tests/core/test_predict_photos.py::test_a_file_reads_as_the_model_on_photo_input_bit_for_bit",
        ),
    ),
    Mutation(
        "photo-preview-one-channels-statistics",
        "The Draw tab's preview is the tensor the model received, de-normalised with each channel's own statistics",
        "DrawPanel._show_preview",
        "            std = np.array(info.std, np.float32).reshape(-1, 1, 1)\n",
        "            std = np.float32(info.std[0])\n",
        (
            "tests/ui/test_draw_photos.py::test_a_folder_run_reads_opened_and_dropped_files_with_its_class_names",
        ),
    ),
    Mutation(
        "photo-reader-class-names-not-the-folders",
        "A folder run's readings and bars are named by its folders, not by class indices",
        "DrawTab.refresh_reader",
        "                self.panel.set_reader(cfg.model, recipe, info=info, weights=cfg.weights)\n",
        "                self.panel.set_reader(\n"
        "                    cfg.model,\n"
        "                    recipe,\n"
        "                    tuple(map(str, range(info.num_classes))),\n"
        "                    info=info,\n"
        "                )\n",
        (
            "tests/ui/test_draw_photos.py::test_a_folder_run_reads_opened_and_dropped_files_with_its_class_names",
        ),
    ),
    Mutation(
        "gallery-colour-planes-reversed",
        "Colour validation images are painted red, green, blue in that order (gallery and preview)",
        "_channels_last_uint8",
        "    a = a.transpose(1, 2, 0)\n",
        "    a = a[::-1].transpose(1, 2, 0)\n",
        (
            "tests/ui/test_draw_photos.py::test_the_gallery_paints_red_green_and_blue_planes_in_their_colours",
        ),
    ),
    Mutation(
        "augment-choices-editable-mid-run",
        "While a run uses the data, its augmentation choices cannot change",
        "DataPanel.set_run_active",
        "            *self.augment_box.checks.values(),\n",
        "",
        (
            "tests/ui/test_folder_run_window.py::test_the_loader_panel_says_which_path_a_folder_run_took",
        ),
    ),
    # --------------------------------------------------------- issue 14: model summary
    Mutation(
        "summary-conv-macs-ignore-groups",
        "A convolution's MACs count in_channels per group (grouped and depthwise convs)",
        "layer_macs",
        "        per_output = module.in_channels // module.groups * math.prod(",
        "        per_output = module.in_channels * math.prod(",
        (
            "tests/core/test_model_summary.py::test_grouped_convolutions_count_in_channels_per_group",
        ),
    ),
    Mutation(
        "summary-training-flag-not-restored",
        "Summarising a model leaves its train/eval flag as it was, even on error",
        "summarize_model",
        "        model.train(was_training)\n",
        "        pass\n",
        (
            "tests/core/test_model_summary.py::test_the_training_flag_is_restored_and_hooks_removed",
            "tests/core/test_model_summary.py::test_the_flag_is_restored_and_hooks_removed_when_the_forward_fails",
        ),
    ),
    Mutation(
        "summary-dialog-ignores-batch-size",
        "The window's model summary gives the activation memory at the chosen batch size",
        "show_model_summary",
        "        lines = summarize_model(model, key[2], batch_size=batch).lines()\n",
        "        lines = summarize_model(model, key[2]).lines()\n",
        (
            "tests/ui/test_summary_dialog.py::test_the_summary_shows_the_shown_models_table_at_the_batch_size",
        ),
    ),
    # --------------------------------------------- issue 14: freeze tree
    Mutation(
        "freeze-filter-hides-ancestors",
        "The freeze filter shows the ancestors of every matching row",
        "FreezePanel._apply_filter",
        "                    shown[parent] = True\n",
        "                    pass\n",
        (
            "tests/ui/test_freeze_tree_scale.py::test_filter_shows_matches_and_their_ancestors_and_clearing_restores",
        ),
    ),
    Mutation(
        "freeze-up-to-here-off-by-one",
        "Freeze up to here freezes the module's own last parameter too",
        "names_up_to",
        "    return names[: last + 1]\n",
        "    return names[:last]\n",
        ("tests/ui/test_freeze_tree_scale.py::test_freeze_up_to_layer2_from_its_menu",),
    ),
    # --------------------------------------------- issue 14: your own model file
    Mutation(
        "model-file-output-shape-unchecked",
        "A model file whose output is not one score per class is refused with the shapes",
        "_check_output",
        "    if shape != (2, num_classes):\n",
        "    if shape is None:\n",
        (
            "tests/core/test_model_file.py::test_every_failure_is_one_message_with_the_file_and_line",
        ),
    ),
    Mutation(
        "model-file-in-channels-not-passed",
        "A model file's builder gets in_channels= when it accepts it",
        "build_from_file",
        '        kwargs["in_channels"] = input_shape[0]\n',
        "        pass\n",
        (
            "tests/core/test_model_file.py::test_a_class_or_a_function_gives_a_checked_model",
        ),
    ),
    Mutation(
        "model-file-hash-not-saved",
        "A checkpoint keeps the SHA-256 of the model file it was trained from",
        "checkpoint_dict",
        "        SHA_KEY: model_sha(run.model),\n",
        "        SHA_KEY: None,\n",
        (
            "tests/core/test_model_source.py::test_the_hash_goes_into_the_checkpoint_and_run_json",
        ),
    ),
    Mutation(
        "model-file-change-not-told",
        "Open, resume, predict and Reproduce say when the model file changed",
        "model_file_change",
        "    if now != recorded:\n",
        "    if False:\n",
        (
            "tests/core/test_model_source.py::test_open_resume_predict_and_reproduce_say_the_file_changed",
        ),
    ),
    # --------------------------------------- issue 14: torchvision models, weights
    Mutation(
        "weights-hash-unchecked",
        "A download whose SHA-256 does not start with the file name's prefix is refused",
        "_damaged",
        "    if not digest.hexdigest().startswith(match.group(1)):\n",
        "    if False:\n",
        (f"{_WEIGHTS}::test_a_damaged_download_is_refused_and_nothing_kept",),
    ),
    Mutation(
        "weights-partial-download-kept",
        "A cancelled or failed download leaves no partial file in the cache",
        "fetch_file",
        "    finally:\n        tmp_path.unlink(missing_ok=True)\n",
        "    finally:\n        pass\n",
        (f"{_WEIGHTS}::test_cancel_mid_download_keeps_no_partial_file",),
    ),
    Mutation(
        "pretrained-head-not-replaced",
        "Pretrained weights keep the backbone and get a new head for the run's classes",
        "build_torchvision",
        "        _replace_head(model, head, num_classes)\n",
        "        pass\n",
        (f"{_WEIGHTS}::test_a_cached_file_is_loaded_and_the_head_replaced",),
    ),
    Mutation(
        "gray-not-repeated-dataloader",
        "The DataLoader path repeats gray images to a torchvision model's 3 channels",
        "_per_sample_datasets",
        "    to_rgb = dataset_info(cfg.dataset).channels < info.channels\n",
        "    to_rgb = False\n",
        (
            f"{_TV}::test_gray_digits_reach_resnet18_as_three_equal_channels_on_both_paths",
        ),
    ),
    Mutation(
        "gray-not-repeated-fast-loader",
        "The fast loader repeats gray images to a torchvision model's 3 channels",
        "FastLoader.__init__",
        "        self._rgb = self._images.shape[1] == 1 and len(self._mean) == 3\n",
        "        self._rgb = False\n",
        (
            f"{_TV}::test_gray_digits_reach_resnet18_as_three_equal_channels_on_both_paths",
            f"{_TV}::test_a_folder_of_gray_images_trains_resnet18",
        ),
    ),
    Mutation(
        "gray-statistics-not-repeated",
        "Repeated gray channels each carry the gray mean and std",
        "fit_to_model",
        "        mean, std = mean * channels, std * channels\n",
        "        pass\n",
        (f"{_TV}::test_fit_to_model_repeats_gray_statistics_or_takes_the_weights",),
    ),
    Mutation(
        "pretrained-crop-size-ignored",
        "Pretrained weights bring their crop size (224) to cifar10 and folders",
        "TrainConfig.resolved_image_size",
        "                return preprocess.crop\n",
        "                pass\n",
        (
            f"{_TV}::test_pretrained_weights_bring_their_crop_size_to_resizable_datasets",
        ),
    ),
    Mutation(
        "init-from-keyed-by-data-channels",
        "--init-from builds a torchvision model for the 3 channels it takes",
        "model_key",
        "model_input_shape(cfg.model, spec.image_shape)",
        "spec.image_shape",
        (
            f"{_TV}::test_the_model_key_has_the_channels_the_model_takes",
            f"{_TV_CLI}::test_init_from_a_resnet18_checkpoint",
            f"{_MODEL_PANEL}::test_a_resnet18_run_reads_image_files_not_the_canvas",
        ),
    ),
    Mutation(
        "predict-digits-gray-for-torchvision",
        "predict feeds a torchvision digits model the 3 channels it trained on",
        "preprocess",
        "        info = fit_to_model(info, model, weights)\n",
        "        pass\n",
        (f"{_TV_CLI}::test_predict_and_inspect_read_the_resnet18_checkpoint",),
    ),
    # ------------------------------------ issue 14: the Model and Data panels
    Mutation(
        "model-panel-built-ins-only",
        "The Model panel lists torchvision's models under their families",
        "ModelPanel._fill_models",
        "            for title, names in grouped_models()\n",
        "            for title, names in grouped_models()[:1]\n",
        (f"{_MODEL_PANEL}::test_every_model_is_listed_under_its_family",),
    ),
    Mutation(
        "model-search-does-not-filter",
        "The model search box hides the models whose name does not match",
        "ModelCombo.set_filter",
        "            view.setRowHidden(row, not match)\n",
        "            view.setRowHidden(row, False)\n",
        (
            f"{_MODEL_PANEL}::test_the_search_box_filters_by_name_and_enter_picks_a_match",
        ),
    ),
    Mutation(
        "weights-choice-not-in-config",
        "The weights chosen in the Model panel are the config's weights",
        "ModelPanel.config_values",
        '        return {"model": self.model(), "weights": self.weights()}\n',
        '        return {"model": self.model()}\n',
        (f"{_MODEL_PANEL}::test_resnet18_with_imagenet_weights_sets_the_config",),
    ),
    Mutation(
        "model-file-trust-notice-hidden",
        "While a model file is chosen the panel says plainly that it runs its code",
        "ModelPanel._show_model",
        "        self.trust_label.setVisible(chosen_file)\n",
        "        self.trust_label.setVisible(False)\n",
        (
            f"{_MODEL_PANEL}::test_a_model_file_is_added_listed_remembered_and_"
            "trusted_plainly",
        ),
    ),
    Mutation(
        "model-file-error-not-shown",
        "A model file that cannot build says why, with the file and line",
        "ModelPreview._replace",
        "            w.model_panel.show_problem(str(exc))\n",
        "            pass\n",
        (f"{_MODEL_PANEL}::test_a_broken_model_file_says_what_and_where",),
    ),
    Mutation(
        "preprocessing-line-ignores-the-model",
        "The Data panel's preprocessing line follows the chosen model and weights",
        "MainWindow._after_config_change",
        "            model, self.model_panel.weights(), dataset, shape[1], auto=auto\n",
        '            "mlp", "none", dataset, shape[1], auto=auto\n',
        (
            f"{_MODEL_PANEL}::test_the_preprocessing_line_follows_model_weights_"
            "and_dataset",
        ),
    ),
    Mutation(
        "torchvision-model-reads-the-canvas",
        "A 3-channel (torchvision) model's Draw tab reads image files, not the canvas",
        "Predictor.is_photo",
        "        return self.dataset in PHOTO_DATASETS or is_torchvision(self.model_name)\n",
        "        return self.dataset in PHOTO_DATASETS\n",
        (f"{_MODEL_PANEL}::test_a_resnet18_run_reads_image_files_not_the_canvas",),
    ),
    Mutation(
        "weights-download-status-without-file",
        "A weights download shows the weights' name and the file it fetches",
        "RunView._on_download_progress",
        '            f"Downloading {p.dataset}: {p.file_name} (file {p.file_index}/"\n',
        '            f"Downloading {p.dataset}: (file {p.file_index}/"\n',
        (f"{_MODEL_PANEL}::test_weights_download_shows_progress_and_stop_cancels_it",),
    ),
    # ------------------------------------------------------------ feature cache
    Mutation(
        "feature-cache-trainable-backbone",
        "The feature cache stays off while a parameter before the head is trainable",
        "trainable_before_head",
        "        if param.requires_grad and not name.startswith(inside):\n",
        "        if False:\n",
        (
            f"{_FC}::test_each_reason_to_stay_off_is_said",
            f"{_FC}::test_unfreezing_mid_run_falls_back_to_the_full_model_from_the_"
            "next_step",
        ),
    ),
    Mutation(
        "feature-cache-features-in-train-mode",
        "Features are computed with frozen BatchNorm in eval mode, as training uses it",
        "_Capture.features",
        "        with contextlib.suppress(_AtHead):\n            model(x)\n",
        "        model.train()\n        with contextlib.suppress(_AtHead):\n"
        "            model(x)\n",
        (
            f"{_FC}::test_a_stopped_cached_run_continues_mid_epoch_in_the_same_order",
            f"{_FC}::test_resnet18_head_only_trains_the_same_with_and_without_the_cache",
        ),
    ),
    Mutation(
        "feature-cache-order-differs",
        "Cached features come in the loader's seeded order of each epoch",
        "FeatureFeed.iter_from",
        "        order = loader.epoch_order()[start_batch * loader.batch_size :]\n",
        "        order = loader.epoch_order(0)[start_batch * loader.batch_size :]\n",
        (
            f"{_FC}::test_a_stopped_cached_run_continues_mid_epoch_in_the_same_order",
            f"{_FC}::test_resnet18_head_only_trains_the_same_with_and_without_the_cache",
        ),
    ),
    Mutation(
        "feature-cache-resume-from-epoch-start",
        "A cached run continued mid-epoch goes on from the batch it stopped at",
        "FeatureFeed.iter_from",
        "        order = loader.epoch_order()[start_batch * loader.batch_size :]\n",
        "        order = loader.epoch_order()\n",
        (f"{_FC}::test_a_stopped_cached_run_continues_mid_epoch_in_the_same_order",),
    ),
    Mutation(
        "feature-cache-no-fallback",
        "An unfreeze mid-run falls back to the full model from the next step",
        "FeatureFeed.recheck",
        "        why = backbone_blocker(self.run.model)\n",
        "        why = None\n",
        (
            f"{_FC}::test_unfreezing_mid_run_falls_back_to_the_full_model_from_the_"
            "next_step",
        ),
    ),
    Mutation(
        "feature-cache-dropout-ignored",
        "Active dropout before the head keeps the feature cache off",
        "_is_dropout",
        "        return module.p > 0\n",
        "        return False\n",
        (f"{_FC}::test_each_reason_to_stay_off_is_said",),
    ),
    Mutation(
        "feature-cache-augment-ignored",
        "Augmentation keeps the feature cache off",
        "run_blocker",
        "    if cfg.augment:\n",
        "    if False:\n",
        (f"{_FC}::test_each_reason_to_stay_off_is_said",),
    ),
    Mutation(
        "feature-cache-features-without-autocast",
        "Features are computed under the run's autocast (bf16), as the head receives them",
        "FeatureFeed._training_features",
        "        with torch.no_grad(), autocast_context(run.precision, run.device):\n",
        "        with torch.no_grad():\n",
        (f"{_FC}::test_bf16_features_are_kept_as_the_head_receives_them",),
    ),
    Mutation(
        "feature-cache-status-not-in-window",
        "The Model panel says whether the run's feature cache is on, or why not",
        "RunView._on_run_started",
        "        self.window.model_panel.show_feature_cache(ev.feature_cache)\n",
        "",
        (f"{_MODEL_PANEL}::test_the_model_panel_says_whether_the_feature_cache_is_on",),
    ),
    Mutation(
        "feature-cache-status-not-on-the-command-line",
        "The command line's start line says whether the feature cache is on",
        "describe_event",
        '            + (f", {event.feature_cache}" if event.feature_cache else "")\n',
        "",
        (f"{_TV_CLI}::test_the_start_line_says_whether_the_feature_cache_is_on",),
    ),
    Mutation(
        "replaced-head-not-said",
        "A pretrained run says which module its new head replaced",
        "_model_notices",
        "    return [replaced_head_notice(cfg.model, cfg.weights, head, info.num_classes)]\n",
        "    return []\n",
        (f"{_WEIGHTS}::test_a_pretrained_run_says_which_head_it_replaced",),
    ),
    Mutation(
        "torchvision-digits-file-read-as-photo",
        "A digits-trained torchvision model reads an image file with the digits' recipe",
        "Predictor.read_file",
        "        if self.dataset not in PHOTO_DATASETS:\n",
        "        if not self.is_photo:\n",
        (f"{_MODEL_PANEL}::test_a_resnet18_run_reads_image_files_not_the_canvas",),
    ),
]

_EXPORT = "tests/core/test_export.py"
_EXPORT_UI = "tests/ui/test_export_ui.py"

MUTATIONS += [
    # ------------------------------------------------------------------ export
    Mutation(
        "export-verifies-the-model-with-itself",
        "Each exported file is loaded back and compared with the eager model",
        "_export_into",
        "            runners[fmt] = V.load_runner(fmt, path)\n",
        "            runners[fmt] = model\n",
        (f"{_EXPORT}::test_a_wrong_artifact_fails_with_exit_1_and_a_marker",),
    ),
    Mutation(
        "export-threshold-ignored",
        "A logit further than 1e-4 from the eager one fails the export",
        "Verification.passed",
        "            and self.max_diff <= self.tolerance\n",
        "",
        (
            f"{_EXPORT}::test_a_wrong_artifact_fails_with_exit_1_and_a_marker",
            f"{_EXPORT}::test_a_changed_class_fails_even_within_the_tolerance",
        ),
    ),
    Mutation(
        "export-agreement-ignored",
        "A single changed top-1 class fails the export",
        "Verification.passed",
        "            and self.agreed == self.total\n",
        "",
        (f"{_EXPORT}::test_a_changed_class_fails_even_within_the_tolerance",),
    ),
    Mutation(
        "export-batch-1-not-checked",
        "Exported files are also checked one image at a time (batch 1)",
        "verify",
        "    for image in singles.split(1):\n",
        "    for image in singles.split(SINGLE_IMAGES):\n",
        (f"{_EXPORT}::test_an_artifact_wrong_only_at_batch_1_fails",),
    ),
    Mutation(
        "export-no-failed-marker",
        "A failed export leaves VERIFICATION_FAILED.txt beside its files",
        "_export_into",
        "    _mark(folder, result)\n",
        "",
        (f"{_EXPORT}::test_a_wrong_artifact_fails_with_exit_1_and_a_marker",),
    ),
    Mutation(
        "export-pt2-static-batch",
        "model.pt2 takes any batch size",
        "_exported",
        "        model, (_example(shape),), dynamic_shapes=(_batch_dim(),)\n",
        "        model, (_example(shape),)\n",
        (f"{_EXPORT}::test_every_built_in_model_exports_to_every_format_and_verifies",),
    ),
    Mutation(
        "export-onnx-static-batch",
        "model.onnx takes any batch size",
        "_onnx",
        "        dynamic_shapes=(_batch_dim(),),\n",
        "",
        (f"{_EXPORT}::test_every_built_in_model_exports_to_every_format_and_verifies",),
    ),
    Mutation(
        "export-refusal-crashes",
        "A format that cannot take the model says why; the others still export",
        "_export_into",
        '            reasons[fmt] = f"cannot export {name}: {V.first_line(exc)}"\n',
        "            raise\n",
        (f"{_EXPORT}::test_a_format_that_cannot_take_the_model_says_why",),
    ),
    Mutation(
        "export-card-without-figures",
        "MODEL_CARD.md states each format's verification figures",
        "write_card",
        "        *_figure_lines(result),\n",
        "",
        (f"{_EXPORT}::test_the_model_card_states_the_verification_figures",),
    ),
    # ------------------------------------------------------------------ export (window)
    Mutation(
        "export-ui-failure-looks-fine",
        "The window's export card says verification FAILED when an artifact differs",
        "result_summary",
        "    if result.verification_failed:\n",
        "    if False:\n",
        (f"{_EXPORT_UI}::test_a_wrong_artifact_shows_verification_failed_in_red",),
    ),
    Mutation(
        "export-ui-enabled-without-run",
        "File > Export model… is disabled while there is no run to export",
        "MainWindow.update_actions",
        "        a.export.setEnabled(run is not None and (idle or state.training))\n",
        "        a.export.setEnabled(True)\n",
        (f"{_EXPORT_UI}::test_no_run_no_export",),
    ),
    Mutation(
        "export-ui-while-training",
        "Export model… during training says to stop the run and asks nothing",
        "ExportActions.export_dialog",
        "        if c.state is not RunState.IDLE:\n            w.set_status(\n",
        "        if False:\n            w.set_status(\n",
        (f"{_EXPORT_UI}::test_a_training_run_says_stop_first",),
    ),
    Mutation(
        "export-ui-file-as-folder",
        "Exporting into a file is one clear message before any work",
        "ExportActions.export",
        "        if out.exists() and not out.is_dir():\n",
        "        if False:\n",
        (f"{_EXPORT_UI}::test_an_unusable_folder_is_one_clear_message",),
    ),
    Mutation(
        "export-ui-silent-progress",
        "The export's steps show in the status line while it runs",
        "RunController._run_task",
        "            progressed=self.task_progress.emit,\n",
        "",
        (f"{_EXPORT_UI}::test_export_writes_every_format_and_shows_them_verified",),
    ),
    Mutation(
        "export-ui-on-gui-thread",
        "The export runs in a background task: the window stays busy, not frozen",
        "RunController.export",
        '            "export",\n            work,\n            RunState.EXPORTING,\n',
        '            "export",\n            work,\n            RunState.IDLE,\n',
        (f"{_EXPORT_UI}::test_export_writes_every_format_and_shows_them_verified",),
    ),
    Mutation(
        "export-ui-temp-checkpoint-kept",
        "The run saved for an export is deleted once the export ends",
        "RunController.export.work",
        "                    checkpoint.unlink(missing_ok=True)\n",
        "",
        (f"{_EXPORT_UI}::test_export_writes_every_format_and_shows_them_verified",),
    ),
    Mutation(
        "gc-in-worker-threads",
        "Cycles are collected in the GUI thread, never in a trainer or task thread",
        "collect_in_gui_thread",
        "    _collector = GarbageCollector(interval=1.0)\n",
        "    return\n",
        (
            "tests/ui/test_gui_gc.py::test_a_task_thread_leaves_collection_to_the_gui_thread",
            "tests/ui/test_gui_gc.py::test_a_trainer_thread_pins_collection_too",
        ),
    ),
    Mutation(
        "script-model-init-shifts-dropout",
        "The script builds the model from a forked random stream, as train does",
        "model_functions",
        '        "    with torch.random.fork_rng(devices=[]):\\n"\n',
        '        "    if True:\\n"\n',
        (f"{_SCRIPT_RUN}[cnn-dropout-sgd-constant]",),
    ),
    Mutation(
        "script-loader-draws-global-rng",
        "The script's DataLoader has its own generator: dropout's stream is untouched",
        "LOADER_DATASETS",
        "        generator=torch.Generator().manual_seed(SEED),\n",
        "",
        (f"{_SCRIPT_RUN}[mnist-root-dataloader-cnn]",),
    ),
    Mutation(
        "script-same-order-every-epoch",
        "The script draws each epoch in train's seeded order",
        "SEEDING",
        "np.random.SeedSequence([SEED, epoch])",
        "np.random.SeedSequence([SEED, 0])",
        (f"{_SCRIPT_RUN}[small-cnn-adam-onecycle-fast]",),
    ),
    Mutation(
        "script-no-schedule-step",
        "The script steps the one-cycle schedule every batch",
        "_step_lines",
        '        update += "            scheduler.step()\\n"\n',
        '        update += ""\n',
        (f"{_SCRIPT_RUN}[small-cnn-adam-onecycle-fast]",),
    ),
    Mutation(
        "script-validates-in-train-mode",
        "The script evaluates under model.eval()",
        "EVALUATE",
        "    model.eval()  # dropout off, BatchNorm uses its running statistics\n",
        "",
        (f"{_SCRIPT_RUN}[small-cnn-adam-onecycle-fast]",),
    ),
    Mutation(
        "script-ignores-frozen",
        "The script freezes by requires_grad exactly what train freezes",
        "model_functions",
        '        "        param.requires_grad_(name not in FROZEN)\\n"\n',
        '        "        param.requires_grad_(True)\\n"\n',
        (f"{_SCRIPT_RUN}[small-cnn-frozen-block]",),
    ),
    Mutation(
        "script-writes-unknown-settings",
        "A setting the script cannot repeat is refused with one clear message",
        "workbench.core.script.writer:script_problem",
        "    if cfg.dataset == FOLDER:\n        return folder_data.folder_problem(cfg)\n",
        "    if False:\n        return folder_data.folder_problem(cfg)\n",
        (
            "tests/core/test_script_writer.py::"
            "test_a_config_the_writer_does_not_know_is_one_clear_message",
            "tests/core/test_cli_script.py::test_bad_input_is_one_clear_line_and_no_file",
        ),
    ),
    # ------------------------------------------- export: standalone predict.py
    Mutation(
        "predict-script-not-written",
        "Every export folder holds predict.py, a copy of the template",
        "_export_into",
        "    shutil.copyfile(PREDICT_TEMPLATE, folder / PREDICT_SCRIPT)\n",
        "",
        (f"{_PREDICT_PY}::test_every_export_holds_the_script",),
    ),
    Mutation(
        "predict-script-no-centring",
        "predict.py centres an MNIST-style digit by its mass, as the workbench does",
        "workbench.core.export.predict_template:mnist_style",
        "    return np.roll(field, (dy, dx), axis=(0, 1))\n",
        "    return field\n",
        (f"{_PREDICT_PY}::{_SAME}[mnist-onnx]",),
    ),
    Mutation(
        "predict-script-no-normalise",
        "predict.py normalises with preprocess.json's mean and std",
        "model_input",
        "    return ((pixels - mean) / std)[None]\n",
        "    return pixels[None]\n",
        (f"{_PREDICT_PY}::{_SAME}[digits-onnx]", f"{_PREDICT_PY}::{_SAME}[photo-onnx]"),
    ),
    Mutation(
        "predict-script-no-inversion",
        "predict.py inverts dark ink on light paper, as the workbench does",
        "read_drawing",
        '    if border.mean() > recipe["invert_above"]:\n        gray = 1.0 - gray\n',
        "",
        (f"{_PREDICT_PY}::{_SAME}[digits-onnx]",),
    ),
    Mutation(
        "predict-script-top-crop",
        "predict.py crops a photo's middle, as the workbench's loaders do",
        "workbench.core.export.predict_template:photo_pixels",
        "        top = round((height - size) / 2.0)\n",
        "        top = 0\n",
        (f"{_PREDICT_PY}::{_SAME}[photo-onnx]",),
    ),
    Mutation(
        "predict-script-no-jpeg-draft",
        "predict.py decodes a large JPEG at the reduced scale the workbench reads",
        "workbench.core.export.predict_template:photo_pixels",
        "        file.draft(None, (size, size))\n",
        "",
        (f"{_PREDICT_PY}::{_SAME}[photo-onnx]",),
    ),
    Mutation(
        "resize-one-pixel-wide-repeats-a-row",
        "A digit fitted 1 pixel wide keeps its column (torch's kernel repeats a row)",
        "_resize",
        "    if width == 1 and height > 1:\n",
        "    if False:\n",
        (
            f"{_PREDICT_PY}::test_a_one_pixel_wide_resize_is_pillows_bilinear",
            f"{_PREDICT_PY}::{_SAME}[mnist-onnx]",
        ),
    ),
    Mutation(
        "predict-script-image-error-traceback",
        "predict.py: a missing or unreadable image is one line and exit 2",
        "workbench.core.export.predict_template:main",
        "        except Refused as exc:\n            sys.stderr.write",
        "        except KeyError as exc:\n            sys.stderr.write",
        (
            f"{_PREDICT_PY}::test_a_missing_image_is_one_line_and_exit_2",
            f"{_PREDICT_PY}::test_an_unreadable_image_is_one_line_and_exit_2",
        ),
    ),
    Mutation(
        "predict-script-missing-model-traceback",
        "predict.py: a missing model file is one line and exit 2",
        "choose_runtime",
        "        if onnx_file is None:\n            raise Refused",
        "        if False:\n            raise Refused",
        (f"{_PREDICT_PY}::test_a_missing_model_file_is_one_line_and_exit_2",),
    ),
    Mutation(
        "script-pretrained-weights-not-loaded",
        "A script of a pretrained run loads the same published weights",
        "_torchvision_construct",
        '        "model.load_state_dict(state)",\n',
        "",
        (f"{_SCRIPT_RUN}[resnet18-pretrained-frozen-backbone]",),
    ),
    # --------------------------------------------------------- the Code tab
    Mutation(
        "code-tab-not-updated",
        "The Code tab writes the script again when a setting changes",
        "MainWindow._after_config_change",
        "        self.code_view.mark_stale()\n",
        "",
        (f"{_CODE}::test_a_settings_change_rewrites_the_script",),
    ),
    Mutation(
        "code-tab-copy-nothing",
        "Copy puts the whole script on the clipboard",
        "CodeView.copy",
        "        QGuiApplication.clipboard().setText(text)\n",
        "",
        (f"{_CODE}::test_copy_puts_the_whole_script_on_the_clipboard",),
    ),
    Mutation(
        "code-tab-save-nothing",
        "Save… writes the shown script to the chosen file",
        "CodeView.save",
        "            written = write_atomically(path, lambda handle: handle.write(data))\n",
        "            written = path\n",
        (f"{_CODE}::test_save_writes_the_shown_script",),
    ),
    Mutation(
        "code-tab-refusal-unexplained",
        "A config the script writer refuses shows the writer's reason",
        "CodeView._show_refusal",
        '            self.caption.setText(f"<b>No script for these settings:</b> {reason}")\n',
        '            self.caption.setText("<b>No script for these settings.</b>")\n',
        (f"{_CODE}::test_a_config_it_cannot_write_says_why",),
    ),
    Mutation(
        "export-stale-model-kept",
        "A re-export leaves no model file its card does not mention",
        "_publish",
        "            (out / stale).unlink(missing_ok=True)\n",
        "            pass\n",
        (
            "tests/core/test_export.py::"
            "test_exporting_again_leaves_no_stale_model_beside_the_new_card",
        ),
    ),
    Mutation(
        "export-failed-write-leaves-files",
        "A failed export write leaves nothing of itself in the folder",
        "export_model",
        "        shutil.rmtree(staging, ignore_errors=True)\n",
        "        pass\n",
        (
            "tests/core/test_export_full_disk.py::"
            "test_a_full_disk_is_one_line_and_leaves_the_folder_as_it_was",
        ),
    ),
    Mutation(
        "export-card-no-confusion-matrix",
        "The model card shows the exported model's confusion matrix",
        "_data_lines",
        "        *_confusion_lines(record, info.class_names),\n",
        "",
        (
            "tests/core/test_export.py::"
            "test_the_model_card_has_the_data_fingerprint_and_confusion_matrix",
        ),
    ),
    # ------------------------------------------------- several processes (DDP)
    Mutation(
        "ddp-shard-wrong-chunk",
        "each rank trains its own contiguous chunk of every global batch",
        "shard_batches",
        "shard_rows(len(batch), rank, world)",
        "shard_rows(len(batch), 0, world)",
        (
            f"{_DDP}::test_each_rank_takes_its_own_contiguous_chunk_of_every_"
            "global_batch",
            _DDP_SAME,
        ),
    ),
    Mutation(
        "ddp-uneven-batch-unscaled",
        "an unevenly split last batch trains as the full batch's mean loss",
        "backward_loss",
        "    return loss * (local_n * distributed.world_size() / global_n)\n",
        "    return loss\n",
        (_DDP_SAME,),
    ),
    Mutation(
        "ddp-every-rank-writes",
        "only rank 0 creates and writes the run folder",
        "Session.begin",
        "        if not is_main():\n",
        "        if False:\n",
        (
            f"{_DDP}::test_a_rank_other_than_0_opens_no_run_folder",
            f"{_DDP}::test_only_rank_0_prints_and_writes_the_run_folder",
        ),
    ),
    Mutation(
        "ddp-batchnorm-unsaid",
        "A BatchNorm model on several processes is told its statistics stay per process",
        "attach",
        "        run.notices.append(notice)\n",
        "        pass\n",
        (
            "tests/core/test_distributed.py::"
            "test_a_batchnorm_model_is_told_once_its_statistics_stay_per_process",
        ),
    ),
    Mutation(
        "ddp-stop-not-agreed",
        "Ctrl+C stops every rank after the same batch",
        "stop_agreed",
        "    return distributed.all_reduce_sum(flag).item() > 0\n",
        "    return requested\n",
        (
            f"{_DDP_STOP}::"
            "test_sigint_stops_every_rank_after_one_batch_and_rank_0_saves",
        ),
    ),
    Mutation(
        "ddp-stop-traceback",
        "a stopped several-process run ends with exit code 130, no traceback",
        "relaunch",
        "    except (SignalException, KeyboardInterrupt):\n",
        "    except KeyboardInterrupt:\n",
        (
            "tests/ui/test_process_job.py::"
            "test_stop_ends_every_process_and_the_run_is_stopped_with_a_checkpoint",
        ),
    ),
    Mutation(
        "ddp-failed-rank-unnamed",
        "a failed rank is named with its error in one line",
        "_report_failure",
        "    rank, failure = first_failure(failures)\n    sys.stderr.write(\n",
        "    rank, failure = first_failure(failures)\n    0 and sys.stderr.write(\n",
        (f"{_DDP_STOP}::test_a_failing_rank_ends_the_others_and_is_named",),
    ),
    Mutation(
        "ddp-lost-peer-named",
        "a rank that only lost its peer is never named as the cause",
        "first_failure.order",
        '        return (bool(own.get("peer_lost")), own.get("time", math.inf), rank)\n',
        '        return (False, own.get("time", math.inf), rank)\n',
        (f"{_DDP_STOP}::test_the_first_failure_is_the_cause_never_a_lost_peer",),
    ),
    Mutation(
        "ddp-lost-peer-traceback",
        "a rank that lost its peer exits quietly (the agent names the cause)",
        "run_rank",
        "            return 1  # not the cause: the agent names the rank that failed\n",
        "            raise\n",
        (f"{_DDP_STOP}::test_a_failing_rank_ends_the_others_and_is_named",),
    ),
    # ------------------------------- resuming on another number of processes
    Mutation(
        "world-size-not-stored",
        "a checkpoint records how many processes trained it",
        "checkpoint_dict",
        '        "world_size": world_size(),\n',
        "",
        (
            f"{_RESIZE}::test_a_checkpoint_records_how_many_processes_trained_it",
            f"{_RESIZE}::test_two_processes_resumed_on_two_repeat_the_run_bit_for_bit",
        ),
    ),
    Mutation(
        "resize-notice-unsaid",
        "resuming on another number of processes says once what differs",
        "Session.open",
        "            notes.append(resized)\n",
        "            pass\n",
        (f"{_RESIZE}::test_a_checkpoint_records_how_many_processes_trained_it",),
    ),
    Mutation(
        "resize-notice-at-the-same-size",
        "resuming on the number of processes that saved the run says nothing",
        "resize_notice",
        "    if saved == now:\n",
        "    if False:\n",
        (f"{_RESIZE}::test_the_notice_names_batchnorm_only_for_a_model_that_has_it",),
    ),
    # --------------------------------------------------------------- --sync-bn
    Mutation(
        "sync-bn-not-converted-on-cuda",
        "--sync-bn on CUDA turns the BatchNorm layers into SyncBatchNorm",
        "batchnorm_setup",
        "    return nn.SyncBatchNorm.convert_sync_batchnorm(model), None\n",
        "    return model, None\n",
        (f"{_SYNC_BN}::test_sync_bn_converts_the_batchnorm_layers_on_cuda_in_place",),
    ),
    Mutation(
        "sync-bn-cpu-notice-twice",
        "--sync-bn on the CPU says once that statistics stay per process",
        "batchnorm_setup",
        "        return model, SYNC_BN_CPU_NOTICE\n",
        '        return model, BATCHNORM_NOTICE + " " + SYNC_BN_CPU_NOTICE\n',
        (
            f"{_SYNC_BN}::test_where_batchnorm_stays_per_process_one_notice_says_so",
            f"{_SYNC_BN}::test_two_processes_with_per_process_batchnorm_reach_one_"
            "process_accuracy",
        ),
    ),
    Mutation(
        "ddp-rank-rng-not-restored",
        "each rank's dropout resumes from its own RNG state",
        "restore_run",
        '        restore_rank_rng(payload.get("rank_rng"))\n',
        "        pass\n",
        (f"{_RESIZE}::test_two_processes_resumed_on_two_repeat_the_run_bit_for_bit",),
    ),
    Mutation(
        "ddp-augment-rows-ignored",
        "several processes augment each image as one process does",
        "FastLoader._batches",
        "                    rows = (shard_rows(whole, rank, world)[0], whole)\n",
        "                    rows = None\n",
        (
            "tests/core/test_augment.py::"
            "test_ranks_augment_their_rows_as_one_process_does",
        ),
    ),
    # ------------------------------------- the window's runs on several processes
    Mutation(
        "job-follower-reads-partial-line",
        "the window follows a job's ledger by complete lines: a half-written one waits",
        "AppendedLines.read",
        '        end = data.rfind(b"\\n")\n',
        "        end = len(data)\n",
        (
            "tests/core/test_ledger_tail.py::"
            "test_a_partial_last_line_is_read_once_it_is_complete",
            f"{_JOB}::test_the_follower_waits_for_a_half_written_line",
        ),
    ),
    Mutation(
        "job-stop-not-signalled",
        "Stop sends SIGINT to the job's launcher (which stops every rank)",
        "ProcessJob.stop",
        "            self._signal(signal.SIGINT)\n",
        "            pass\n",
        (f"{_JOB}::test_stop_signals_the_launcher_alone",),
    ),
    Mutation(
        "job-close-does-not-ask",
        "closing the window while a job runs asks first, then stops every process",
        "MainWindow.closeEvent",
        "        if not self.jobs.may_close():\n",
        "        if False:\n",
        (f"{_JOB}::test_closing_asks_first_and_stops_the_job",),
    ),
    Mutation(
        "job-curves-not-fed",
        "a job's logged steps reach the loss curve while it runs",
        "JobView._on_step",
        "        w.curves.add_step(ev)\n",
        "",
        (f"{_JOB}::test_a_two_process_job_is_followed_live_and_finishes",),
    ),
    Mutation(
        "job-pausable",
        "a run on several processes offers no Pause (it trains outside the window)",
        "MainWindow.update_actions",
        "            pausable=self.controller.job is None,\n",
        "            pausable=True,\n",
        (f"{_JOB}::test_a_two_process_job_is_followed_live_and_finishes",),
    ),
    Mutation(
        "world-size-not-recorded",
        "run.json records how many processes train the run",
        "RunFolder.create",
        '                "world_size": world_size(),  # processes training it (--nproc)\n',
        "",
        (
            "tests/core/test_runs_world_size.py::"
            "test_run_json_records_the_world_size_and_old_runs_read_as_one",
        ),
    ),
    Mutation(
        "ddp-early-interrupt-kills",
        "a stop while the ranks start ends them quickly, without a traceback",
        "hold",
        "    return _install(_remember)\n",
        "    return {}\n",
        (
            f"{_DDP_STOP}::"
            "test_an_early_stop_while_the_ranks_start_ends_them_quickly_and_quietly",
            "tests/core/test_interrupts.py::test_ctrl_c_in_the_first_instant_of_train_is_one_line",
        ),
    ),
]
_SCHEMA = "tests/core/test_checkpoint_schema.py"
_FUZZ = "tests/core/test_checkpoint_fuzz.py"
MUTATIONS += [
    Mutation(
        "checkpoint-field-types-unchecked",
        "a checkpoint field of the wrong type is one message naming it",
        "migrate",
        "        check_payload(payload)\n",
        "        pass\n",
        (
            f"{_SCHEMA}::test_a_field_of_the_wrong_type_is_named",
            f"{_FUZZ}::test_every_damaged_checkpoint_loads_or_says_why",
        ),
    ),
    Mutation(
        "checkpoint-global-step-type-unchecked",
        "a checkpoint's global_step must be a whole number",
        "workbench.core.checkpoints.schema:_FIELDS",
        '    ("global_step", _simple("a whole number", _whole), False),\n',
        '    ("global_step", _simple("a whole number", lambda v: True), False),\n',
        (f"{_SCHEMA}::test_a_field_of_the_wrong_type_is_named",),
    ),
    Mutation(
        "optimizer-state-shape-unchecked",
        "an optimizer state of another shape is refused on resume, not mid-step",
        "_restore_optimizer",
        "            if value.shape != param.shape:\n",
        "            if False:\n",
        (
            f"{_SCHEMA}::test_an_optimizer_state_of_another_shape_is_refused",
            f"{_FUZZ}::test_damaged_checkpoints_on_the_command_line_are_one_line",
        ),
    ),
    Mutation(
        "scheduler-state-kinds-unchecked",
        "a scheduler value of another kind is refused on resume",
        "restore_run",
        "        _check_like(scheduler_state, run.scheduler.state_dict(), "
        '"scheduler_state")\n',
        "",
        (f"{_SCHEMA}::test_a_scheduler_value_of_another_kind_is_refused",),
    ),
    Mutation(
        "optimizer-settings-kinds-unchecked",
        "an optimizer setting of another kind (lr a string) is refused on resume",
        "_restore_optimizer",
        '        _check_like(group, settings, f"optimizer_state.param_groups[{index}]")\n',
        "",
        (f"{_SCHEMA}::test_an_optimizer_setting_of_another_kind_is_refused",),
    ),
    Mutation(
        "resume-with-nothing-left-trains-nothing",
        "resuming with max steps at or behind the checkpoint's step says so",
        "Session.plan_resume",
        "        if plan.finished:\n",
        "        if False:\n",
        (
            "tests/core/test_session.py::"
            "test_resuming_with_max_steps_behind_the_run_says_nothing_is_left",
            f"{_FUZZ}::test_damaged_checkpoints_on_the_command_line_are_one_line",
        ),
    ),
    Mutation(
        "rank-rng-error-escapes",
        "a damaged random state (a rank's included) is a clear message",
        "restore_run",
        "    except (TypeError, ValueError, RuntimeError, KeyError) as exc:\n",
        "    except (TypeError, ValueError, KeyError) as exc:\n",
        (f"{_RESIZE}::test_a_damaged_rank_rng_is_a_clear_message",),
    ),
    Mutation(
        "precision-auto-ignored",
        "a run with precision auto trains in what auto picks (bf16 on a native-bf16 CPU)",
        "prepare_run",
        "    precision, _ = resolve_precision(cfg.precision, device)\n",
        '    precision = "fp32" if cfg.precision == "auto" else cfg.precision\n',
        (
            "tests/core/test_precision.py::"
            "test_an_auto_run_trains_exactly_as_the_precision_it_picked",
        ),
    ),
    Mutation(
        "precision-auto-never-bf16",
        "auto picks bf16 on a CPU that computes it natively",
        "resolve_precision",
        '    if device.type == "cpu" and native_bf16_cpu():\n',
        "    if False:\n",
        (
            "tests/core/test_precision.py::test_auto_resolves_by_device_and_cpu",
            "tests/ui/test_device_panels.py::"
            "test_auto_precision_says_what_it_picks_on_the_chosen_device",
        ),
    ),
    Mutation(
        "script-precision-auto-unresolved",
        "a script written from an auto config trains in what auto picked",
        "write_script",
        "cfg.replace(precision=precision_for(cfg.precision, cfg.device))",
        'cfg.replace(precision=precision_for("fp32", cfg.device))',
        (
            "tests/core/test_precision.py::"
            "test_a_script_of_an_auto_run_trains_in_what_auto_picked",
        ),
    ),
    # --------------------------------------------------------- soak (long use)
    Mutation(
        "soak-keeps-every-run",
        "the window frees a run once another replaces it (no list of old runs)",
        "RunController._on_run_prepared",
        "    def _on_run_prepared(self, _event: RunPrepared) -> None:\n",
        "    _kept: list[Any] = []\n\n"
        "    def _on_run_prepared(self, _event: RunPrepared) -> None:\n"
        "        self._kept.append(_event)\n",
        (
            "tests/ui/test_soak.py::"
            "test_a_short_soak_keeps_memory_threads_and_every_run_folder",
        ),
    ),
    Mutation(
        "soak-thread-not-joined",
        "after many runs the process has as many threads as after the first few",
        "RunController.start",
        "        self.trainer.start_run(self.session, plan)\n",
        "        self.trainer.start_run(self.session, plan)\n"
        "        import threading\n\n"
        "        threading.Thread(target=threading.Event().wait, daemon=True).start()\n",
        (
            "tests/ui/test_soak.py::"
            "test_a_short_soak_keeps_memory_threads_and_every_run_folder",
        ),
    ),
    Mutation(
        "soak-qt-warning",
        "the window's runs make Qt say no warning (a child made in the worker)",
        "TrainerThread.run",
        "        prepare_training_thread()\n",
        "        prepare_training_thread()\n        QObject(self)\n",
        (
            "tests/ui/test_soak.py::"
            "test_a_short_soak_keeps_memory_threads_and_every_run_folder",
        ),
    ),
    Mutation(
        "soak-stopped-folder-left-running",
        "a stopped run's folder says how it ended (run.json's status)",
        "RunRecorder._record",
        '            return self.mark("stopped" if event.stopped else "finished") '
        "or message\n",
        "            return message\n",
        (
            "tests/ui/test_soak.py::"
            "test_a_short_soak_keeps_memory_threads_and_every_run_folder",
        ),
    ),
    Mutation(
        "soak-dummy-thread-per-run",
        "a trainer QThread leaves no Thread object behind in threading",
        "prepare_training_thread",
        "        threading.get_native_id(),\n",
        "        threading.current_thread().name,\n",
        (
            "tests/core/test_threads.py::"
            "test_a_thread_python_did_not_start_is_prepared_without_a_thread_object",
        ),
    ),
    # ---------------------------------------- damaged files (issue 17, badfiles)
    Mutation(
        "config-huge-whole-number-accepted",
        "a config whole number past int64 (1e100) is refused, naming the field",
        "_check_int",
        "    if value > MAX_WHOLE:\n",
        "    if False:\n",
        (
            f"{_CFG_FUZZ}::test_huge_and_negative_whole_numbers_name_the_field",
            f"{_CFG_FUZZ}::test_every_damaged_config_loads_or_says_why_in_one_line",
        ),
    ),
    Mutation(
        "config-deep-nesting-escapes",
        "a config nested thousands deep is a one-line message, not a RecursionError",
        "workbench.core.config:read_config_table",
        "    except RecursionError:  # brackets nested thousands deep: no config is\n",
        "    except ZeroDivisionError:\n",
        (f"{_CFG_FUZZ}::test_every_damaged_config_loads_or_says_why_in_one_line",),
    ),
    Mutation(
        "config-frozen-string-accepted",
        "frozen given as a string (not a list) is refused, naming the field",
        "workbench.core.config:validate",
        "    if not isinstance(cfg.frozen, tuple) or not all(\n",
        "    if not all(\n",
        (f"{_CFG_FUZZ}::test_a_list_of_names_is_needed_for_frozen_and_augment",),
    ),
    Mutation(
        "run-json-wrong-types-unchecked",
        "a run.json field of the wrong type marks the run damaged, never an exception",
        "read_run_file",
        "    problem = field_problem(data)\n",
        "    problem = None\n",
        (
            f"{_LEDGER_FUZZ}::test_every_damaged_ledger_is_listed_marked_and_left_as_it_is",
            f"{_LEDGER_FUZZ}::test_damaged_runs_are_listed_beside_a_healthy_one",
        ),
    ),
    Mutation(
        "damaged-run-json-rewritten",
        "a damaged run.json is never rewritten (rename, tag, resume, mask change)",
        "RunFolder._fields",
        "        if problem is not None:\n            raise DamagedRunFile(",
        "        if False:\n            raise DamagedRunFile(",
        (f"{_LEDGER_FUZZ}::test_a_damaged_run_json_is_never_rewritten",),
    ),
    Mutation(
        "damaged-run-dropped-from-list",
        "a run with a damaged run.json stays in the runs list, marked damaged",
        "summarize",
        "    if data is None:\n        return None\n    info = {} if problem else data\n",
        "    if data is None or problem:\n        return None\n    info = data\n",
        (
            f"{_LEDGER_FUZZ}::test_damaged_runs_are_listed_beside_a_healthy_one",
            f"{_BAD_UI}::test_the_window_opens_among_damaged_files_and_changes_none",
        ),
    ),
    Mutation(
        "ledger-deep-line-escapes",
        "a ledger line nested thousands deep is skipped like any unreadable line",
        "read_jsonl",
        "        except (ValueError, RecursionError):\n            continue",
        "        except ValueError:\n            continue",
        (
            f"{_LEDGER_FUZZ}::test_every_damaged_ledger_is_listed_marked_and_left_as_it_is",
        ),
    ),
    Mutation(
        "ledger-huge-number-escapes",
        "a ledger line with a step of 1e400 is skipped, not an OverflowError",
        "event_from_record",
        "            except OverflowError as exc:",
        "            except ZeroDivisionError as exc:",
        (
            f"{_LEDGER_FUZZ}::test_every_damaged_ledger_is_listed_marked_and_left_as_it_is",
        ),
    ),
    Mutation(
        "resume-drops-unreadable-ledger-lines",
        "resuming drops only the steps to log again; unreadable lines stay as they are",
        "forget_after",
        "if (_line_step(line) or 0) <= global_step]",
        "if (_line_step(line) or math.inf) <= global_step]",
        (
            f"{_LEDGER_FUZZ}::"
            "test_resuming_keeps_unreadable_ledger_lines_and_drops_later_steps",
        ),
    ),
    Mutation(
        "damaged-run-folder-claimed",
        "continuing a run whose run.json is damaged records it in a new folder",
        "Session.begin",
        "            if not kept or notes:\n",
        "            if not kept:\n",
        (
            f"{_LEDGER_FUZZ}::"
            "test_continuing_a_run_whose_run_json_is_damaged_records_it_anew",
        ),
    ),
    Mutation(
        "my-digits-id-as-path",
        "a my-digits id that is a path is damage: nothing outside the folder is touched",
        "MyDigits.samples",
        '                    id=_check_id(e["id"]),\n',
        '                    id=str(e["id"]),\n',
        (
            f"{_DIGITS_FUZZ}::test_an_id_that_is_a_path_is_damage_and_nothing_is_deleted",
        ),
    ),
    Mutation(
        "my-digits-duplicated-id-accepted",
        "a my-digits index listing an id twice is a clear message",
        "MyDigits.samples",
        "            if twice:\n",
        "            if False:\n",
        (
            f"{_DIGITS_FUZZ}::test_a_duplicated_id_is_named",
            f"{_DIGITS_FUZZ}::test_every_damaged_collection_says_why_and_keeps_every_file",
        ),
    ),
    Mutation(
        "one-bad-drawing-hides-all",
        "one unreadable drawing leaves the other drawings in the Draw tab's view",
        "MyDigitsBox.refresh_samples",
        "                unreadable.append(str(exc))\n                continue\n",
        "                unreadable.append(str(exc))\n                break\n",
        (f"{_BAD_UI}::test_one_unreadable_drawing_leaves_the_others_in_view",),
    ),
    Mutation(
        "damaged-run-renamable",
        "the Runs tab cannot rename or tag a damaged run (its run.json is kept)",
        "RunsPanel._update_buttons",
        "        self.rename_button.setEnabled(one is not None and not live and not damaged)",
        "        self.rename_button.setEnabled(one is not None and not live)",
        (f"{_BAD_UI}::test_the_window_opens_among_damaged_files_and_changes_none",),
    ),
    Mutation(
        "damaged-run-without-reason",
        "a damaged run's row says why in its tooltip",
        "RunsTable._set_row",
        "        if run.problem:  # every cell says why",
        "        if False:  # every cell says why",
        (f"{_BAD_UI}::test_the_window_opens_among_damaged_files_and_changes_none",),
    ),
    Mutation(
        "resume-nothing-left-silent",
        "the window's resume of a run with nothing left says so and trains nothing",
        "FileActions._continue_opened_run",
        '            self.window.set_status(f"Not continued: {plan.why_new}")',
        "            pass",
        (
            f"{_BAD_UI}::"
            "test_resuming_a_run_with_nothing_left_says_so_and_trains_nothing",
        ),
    ),
    Mutation(
        "damaged-window-config-escapes",
        "a damaged config in the window's settings opens the window with the defaults",
        "load_last_config",
        "    except (ConfigError, ValueError, TypeError, RecursionError) as exc:",
        "    except (ConfigError, ValueError, TypeError) as exc:",
        (f"{_BAD_UI}::test_the_window_opens_among_damaged_files_and_changes_none",),
    ),
    Mutation(
        "clipped-config-silent",
        "a loaded config a field cannot hold (lr 1e300) says what the window shows",
        "FileActions.load_config_dialog",
        "            if shown[k] != wanted[k]\n",
        "            if False\n",
        (
            f"{_BAD_UI}::test_a_loaded_config_the_fields_cannot_hold_says_what_they_show",
        ),
    ),
    # -------------------------------- CUDA exactness and the device check
    Mutation(
        "cuda-determinism-not-asked",
        "prepare_run asks for deterministic kernels for its device before loading",
        "prepare_run",
        "    deterministic_kernels(device)  # before the first CUDA computation\n",
        "",
        (
            "tests/core/test_cuda_exactness.py::"
            "test_prepare_run_sets_determinism_for_its_device_before_loading",
        ),
    ),
    Mutation(
        "cuda-deterministic-algorithms-off",
        "a CUDA run turns torch.use_deterministic_algorithms on (warn_only)",
        "deterministic_kernels",
        "    torch.use_deterministic_algorithms(True, warn_only=True)\n",
        "",
        (
            "tests/core/test_cuda_exactness.py::"
            "test_a_cuda_run_asks_for_deterministic_kernels_and_cublas_setting",
        ),
    ),
    Mutation(
        "cublas-workspace-not-set",
        "a CUDA run sets CUBLAS_WORKSPACE_CONFIG (unless the user did)",
        "deterministic_kernels",
        '    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE_CONFIG)\n',
        "",
        (
            "tests/core/test_cuda_exactness.py::"
            "test_a_cuda_run_asks_for_deterministic_kernels_and_cublas_setting",
        ),
    ),
    Mutation(
        "cublas-workspace-overrides-the-user",
        "a user's own CUBLAS_WORKSPACE_CONFIG is kept",
        "deterministic_kernels",
        '    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE_CONFIG)\n',
        '    os.environ["CUBLAS_WORKSPACE_CONFIG"] = CUBLAS_WORKSPACE_CONFIG\n',
        ("tests/core/test_cuda_exactness.py::test_a_users_own_cublas_setting_is_kept",),
    ),
    Mutation(
        "cudnn-benchmark-left-on",
        "a CUDA run switches cuDNN's benchmark search off",
        "deterministic_kernels",
        "    torch.backends.cudnn.benchmark = False\n",
        "",
        (
            "tests/core/test_cuda_exactness.py::"
            "test_a_cuda_run_asks_for_deterministic_kernels_and_cublas_setting",
        ),
    ),
    Mutation(
        "cuda-determinism-on-cpu-runs",
        "a CPU run leaves the process's determinism settings alone",
        "deterministic_kernels",
        '    if device.type != "cuda":\n        return\n',
        "",
        (
            "tests/core/test_cuda_exactness.py::test_a_cpu_run_leaves_the_process_settings_alone",
        ),
    ),
    Mutation(
        "cuda-rng-not-saved",
        "a checkpoint holds every GPU's RNG state",
        "rng_states",
        '        states["cuda"] = torch.cuda.get_rng_state_all()\n',
        "        pass\n",
        (
            "tests/core/test_cuda_exactness.py::"
            "test_a_checkpoint_keeps_every_gpus_rng_and_a_resume_restores_it",
        ),
    ),
    Mutation(
        "cuda-rng-not-restored",
        "a resumed run restores the GPUs' RNG states it stopped with",
        "set_rng_states",
        '        torch.cuda.set_rng_state_all(states["cuda"][: torch.cuda.device_count()])\n',
        "        pass\n",
        (
            "tests/core/test_cuda_exactness.py::"
            "test_a_checkpoint_keeps_every_gpus_rng_and_a_resume_restores_it",
        ),
    ),
    Mutation(
        "cuda-rng-restored-for-absent-gpus",
        "a machine with fewer GPUs restores the RNG states of the GPUs it has",
        "set_rng_states",
        'states["cuda"][: torch.cuda.device_count()]',
        'states["cuda"]',
        (
            "tests/core/test_cuda_exactness.py::test_a_machine_with_fewer_gpus_restores_the_gpus_it_has",
        ),
    ),
    Mutation(
        "fp16-without-gradscaler",
        "fp16 trains with torch.amp.GradScaler scaling the loss",
        "workbench.core.train.engine:_train",
        'enabled=run.precision == "fp16")',
        "enabled=False)",
        (
            "tests/core/test_cuda_exactness.py::"
            "test_fp16_trains_with_a_gradient_scaler_and_bf16_without",
        ),
    ),
    Mutation(
        "device-check-exit-code",
        "device_check exits non-zero when a row fails",
        "bench.device_check:main",
        '    return 1 if any(row.status == "FAIL" for row in rows) else 0\n',
        "    return 0\n",
        (
            "tests/core/test_device_check.py::"
            "test_a_failed_row_fails_the_script_and_the_rest_still_run",
        ),
    ),
    Mutation(
        "device-check-resume-row-blind",
        "device_check's exact-resume row fails when the resumed run differs",
        "check_exact_resume",
        "    passed = same_losses and same_weights and not missing\n",
        "    passed = True\n",
        (
            "tests/core/test_device_check.py::"
            "test_the_exact_resume_row_passes_on_the_cpu_and_fails_without_rng",
        ),
    ),
    Mutation(
        "device-check-fp16-row-blind-to-scaler",
        "device_check's fp16 row fails when the GradScaler is off",
        "_mixed",
        '    if scaled != (precision == "fp16"):\n',
        "    if False:\n",
        ("tests/core/test_device_check.py::test_the_fp16_row_fails_without_a_scaler",),
    ),
    # Issue 17, the Draw tab's canvas: a read is one thread, one pass, one repaint.
    Mutation(
        "single-threaded-keeps-all-threads",
        "single_threaded() runs the calling thread's torch ops on one thread",
        "single_threaded",
        "    torch.set_num_threads(1)\n    try:\n",
        "    torch.set_num_threads(before)\n    try:\n",
        (
            "tests/core/test_threads.py::"
            "test_single_threaded_runs_one_thread_and_restores_the_count",
            "tests/core/test_threads.py::"
            "test_single_threaded_work_builds_no_openmp_pool",
        ),
    ),
    Mutation(
        "reader-reads-drawings-on-all-threads",
        "the reader reads a drawing on the GUI thread alone (no OpenMP team)",
        "Predictor._threads",
        "        return nullcontext() if self.is_photo else single_threaded()\n",
        "        return nullcontext()\n",
        (
            "tests/core/test_predict.py::"
            "test_predictor_reads_on_one_thread_and_restores_the_count",
        ),
    ),
    Mutation(
        "saliency-takes-a-second-forward-pass",
        "the saliency overlay reuses the reading's forward pass",
        "Predictor._read",
        "                heat = _input_gradient(logits[0, label], leaf)\n",
        "                heat = self.saliency(x, label)\n",
        (
            "tests/core/test_predict.py::"
            "test_saliency_costs_one_forward_pass_and_changes_no_probability",
        ),
    ),
    Mutation(
        "pen-up-repaints-the-whole-canvas",
        "pen up repaints only the last segment, not the whole scaled canvas",
        "DigitCanvas._finish_stroke",
        "        # No repaint: the stroke's segments are on screen already, and the\n",
        "        self.update()\n",
        (
            "tests/ui/test_draw_widgets.py::"
            "test_pen_up_repaints_no_more_than_the_last_segment",
        ),
    ),
    Mutation(
        "reader-trusts-the-root-modules-mode",
        "the reader reads in eval mode even when one module was set to train",
        "Predictor._read",
        "        if any(module.training for module in model.modules()):\n",
        "        if model.training:\n",
        (
            "tests/core/test_predict.py::"
            "test_predictor_reads_in_eval_mode_whatever_a_module_was_set_to",
        ),
    ),
    Mutation(
        "live-weights-load-on-all-threads",
        "while a run trains, the reader's weights load on the GUI thread alone",
        "DrawPanel.set_weights",
        "            with single_threaded():\n"
        "                self._predictor.load_weights(state)\n",
        "            if True:\n                self._predictor.load_weights(state)\n",
        (
            "tests/ui/test_draw_panel.py::"
            "test_weights_load_on_one_thread_while_a_run_trains",
        ),
    ),
    Mutation(
        "preview-converts-on-every-paint",
        "the input preview paints from images converted once, to the same pixels",
        "InputPreview.set_image",
        "        self._image = _qimage_of(pixels).convertToFormat("
        "QImage.Format.Format_RGB32)\n",
        "        self._image = _qimage_of(pixels)\n",
        (
            "tests/ui/test_draw_widgets.py::"
            "test_input_preview_paints_from_ready_images_the_same_pixels",
        ),
    ),
    Mutation(
        "photo-read-keeps-its-openmp-pool",
        "while a run trains, a photo model's read gives its OpenMP pool back",
        "DrawPanel._release_pool",
        "        if self._training_active and self.photo_mode:\n",
        "        if False:\n",
        (
            "tests/ui/test_draw_panel.py::"
            "test_only_a_photo_models_read_gives_an_openmp_pool_back",
        ),
    ),
    # Epoch ends and hidden tabs (issue 17, stalls).
    Mutation(
        "stalls-hidden-evaluation-redrawn",
        "a hidden Evaluation tab draws nothing at an epoch end",
        "EvaluationPanel._refresh",
        "        if hidden_in_shown_window(self):\n",
        "        if False:\n",
        (
            "tests/ui/test_hidden_tabs.py::test_a_hidden_evaluation_tab_draws_nothing_then_the_latest_when_opened",
        ),
    ),
    Mutation(
        "stalls-evaluation-not-caught-up",
        "the Evaluation tab shows the latest epoch when it is opened",
        "EvaluationPanel.showEvent",
        "        if self.stale:\n            self._refresh()\n",
        "",
        (
            "tests/ui/test_hidden_tabs.py::test_a_hidden_evaluation_tab_draws_nothing_then_the_latest_when_opened",
        ),
    ),
    Mutation(
        "stalls-hidden-histogram-redrawn",
        "a hidden Layer health tab draws no histogram at an epoch end",
        "LayerHealthPanel._show_histogram",
        "        if hidden_in_shown_window(self):\n",
        "        if False:\n",
        (
            "tests/ui/test_hidden_tabs.py::test_a_hidden_layer_health_tab_draws_its_histogram_when_opened",
        ),
    ),
    Mutation(
        "stalls-histogram-not-caught-up",
        "the Layer health tab shows the latest histogram when it is opened",
        "LayerHealthPanel.showEvent",
        "        if self.stale:\n            self._show_histogram()\n",
        "",
        (
            "tests/ui/test_hidden_tabs.py::test_a_hidden_layer_health_tab_draws_its_histogram_when_opened",
        ),
    ),
    Mutation(
        "stalls-shown-tab-waits",
        "a shown Evaluation tab draws every epoch as it arrives",
        "hidden_in_shown_window",
        "    return not widget.isVisible() and widget.window().isVisible()\n",
        "    return widget.window().isVisible()\n",
        (
            "tests/ui/test_hidden_tabs.py::test_a_shown_tab_draws_each_epoch_as_it_comes",
        ),
    ),
    Mutation(
        "stalls-matrix-counted-on-read",
        "the confusion matrix is counted when the Evaluation is made, not when read",
        "Evaluation.confusion",
        "        return self._matrix\n",
        "        c = self.num_classes\n"
        "        flat = self.labels * c + self.predictions\n"
        "        return np.bincount(flat, minlength=c * c).reshape(c, c)\n",
        (
            "tests/core/test_evaluation.py::test_the_matrix_and_cells_are_worked_out_when_the_event_is_made",
        ),
    ),
    Mutation(
        "stalls-progress-bar-paints-in-step",
        "a logged step moves the progress bar without painting inside the handler",
        "set_value_later",
        "    bar.setUpdatesEnabled(False)\n",
        "",
        (
            "tests/ui/test_hidden_tabs.py::test_a_step_moves_the_progress_bar_with_the_next_repaint_"
            "not_at_once",
        ),
    ),
    Mutation(
        "stalls-gallery-keeps-old-thumbnails",
        "the gallery never shows a thumbnail of another run's images",
        "CellImages._icon",
        "        if images is not self._icons_of or len(self._icons) >= "
        "MAX_CACHED_ICONS:\n",
        "        if len(self._icons) >= MAX_CACHED_ICONS:\n",
        (
            "tests/ui/test_hidden_tabs.py::test_the_gallery_draws_each_image_once_and_never_another_runs",
        ),
    ),
    Mutation(
        "stalls-gallery-redraws-thumbnails",
        "a gallery rebuilt at an epoch end draws only the images it had not drawn",
        "CellImages._icon",
        "        icon = self._icons.get(i)\n",
        "        icon = None\n",
        (
            "tests/ui/test_hidden_tabs.py::test_the_gallery_draws_each_image_once_and_never_another_runs",
        ),
    ),
    Mutation(
        "stalls-plots-painted-together",
        "a frame draws its plots one per tick, never all paints at once",
        "Refresher.tick",
        "            self._stagger.start()\n            return\n",
        "            self.tick()\n            return\n",
        ("tests/ui/test_plots.py::test_the_paint_budget_is_shared_by_every_plot",),
    ),
    Mutation(
        "stalls-frame-never-ends",
        "points arriving during a frame wait for the next frame",
        "Refresher.tick",
        "        if not self._frame:\n",
        "        if True:\n",
        (
            "tests/ui/test_plots.py::"
            "test_points_arriving_during_a_frame_wait_for_the_next",
        ),
    ),
    Mutation(
        "stalls-axes-drawn-every-repaint",
        "a plot repaint draws its axes and grid again only when they change",
        "LivePlot.__init__",
        "                QGraphicsItem.CacheMode.DeviceCoordinateCache\n",
        "                QGraphicsItem.CacheMode.NoCache\n",
        (
            "tests/ui/test_plots.py::"
            "test_a_repaint_redraws_the_axes_only_when_they_change",
        ),
    ),
    Mutation(
        "stalls-steps-held-at-pause",
        "every step trained before a pause is shown when the run pauses",
        "TrainerThread._on_engine_paused",
        "        # The engine blocks now: every step trained so far is shown first.\n"
        "        self._send_steps()\n",
        "",
        (
            "tests/ui/test_hidden_tabs.py::"
            "test_steps_held_back_are_shown_when_the_run_pauses",
        ),
    ),
    Mutation(
        "stalls-steps-after-their-epoch",
        "steps sent together still reach the window before the epoch they belong to",
        "TrainerThread.run",
        "                    self._send_steps()  # in order: the steps before it first\n",
        "",
        (
            "tests/ui/test_hidden_tabs.py::"
            "test_fast_steps_reach_the_window_together_each_in_order",
        ),
    ),
    Mutation(
        "validation-under-autocast",
        "a bf16 run validates in fp32, so the gallery's scores are what the Draw tab reads",
        "evaluate_predictions",
        "    parts: list[tuple[torch.Tensor, ...]] = []\n    with torch.no_grad():\n",
        "    parts: list[tuple[torch.Tensor, ...]] = []\n"
        "    with torch.no_grad(), autocast_context(run.precision, run.device):\n",
        (
            "tests/ui/test_evaluation_ui.py::"
            "test_an_opened_image_reads_as_the_gallery_scored_it_until_drawn_on",
        ),
    ),
    Mutation(
        "trainer-thread-at-gui-priority",
        "the window's trainer thread runs below the GUI thread's CPU priority",
        "TrainerThread.run",
        "        lower_training_priority()\n        prepare_training_thread()\n",
        "        prepare_training_thread()\n",
        (
            "tests/ui/test_trainer_priority.py::"
            "test_the_trainer_thread_runs_below_the_gui_thread",
        ),
    ),
    Mutation(
        "training-priority-not-lowered",
        "lowering a training thread's priority lowers it, and its OpenMP helpers'",
        "lower_training_priority",
        "        os.setpriority(os.PRIO_PROCESS, 0, nice)\n",
        "        pass\n",
        (
            "tests/core/test_thread_priority.py::"
            "test_the_calling_thread_and_the_helpers_it_starts_run_lower",
        ),
    ),
    Mutation(
        "script-validates-under-autocast",
        "a written script validates in fp32, as the workbench does, so its scores repeat train's",
        "EVALUATE",
        "    with torch.inference_mode():\n",
        "    with torch.inference_mode(), precision_context():\n",
        (f"{_SCRIPT_RUN}[small-cnn-bf16]",),
    ),
    Mutation(
        "small-cnn-checkpoints-lose-their-layout",
        "a small-cnn checkpoint of format 2 or earlier opens as the layout it was saved with",
        "_from_v2",
        '    if isinstance(config, dict) and config.get("model") == "small-cnn":\n',
        '    if isinstance(config, dict) and config.get("model") == "small-cnn-v0":\n',
        (
            "tests/core/test_small_cnn_layout.py::"
            "test_a_format_2_small_cnn_checkpoint_predicts_as_it_did",
        ),
    ),
    Mutation(
        "model-panel-earlier-layout-among-files",
        "the earlier small-cnn layout of an opened checkpoint is listed with the built-ins",
        "ModelPanel._fill_models",
        "        if extra in LEGACY_MODELS:\n",
        "        if extra in ():\n",
        (
            f"{_MODEL_PANEL}::"
            "test_a_checkpoint_of_the_earlier_small_cnn_opens_under_the_built_ins",
        ),
    ),
    Mutation(
        "live-plot-axes-follow-every-point",
        "a live curve moves its axes in a few steps, not at every point",
        "stepped_range",
        "    if fresh or not (span > 0 and math.isfinite(span)):\n",
        "    if True:\n",
        (
            "tests/ui/test_plots.py::"
            "test_a_growing_curve_moves_the_axes_in_a_few_steps_and_shows_every_point",
        ),
    ),
    Mutation(
        "live-plot-data-leaves-the-view",
        "a stepped range still shows every point of a live curve",
        "stepped_range",
        "    out_lo, out_hi = lo + pad < c_lo, hi - pad > c_hi\n",
        "    out_lo, out_hi = lo + pad < c_lo, False\n",
        (
            "tests/ui/test_plots.py::"
            "test_a_growing_curve_moves_the_axes_in_a_few_steps_and_shows_every_point",
        ),
    ),
    Mutation(
        "live-plot-auto-button-keeps-headroom",
        "the auto-range button fits every point exactly, however often pyqtgraph fits",
        "SteppedViewBox._stepped",
        "        self._fitted[axis] = True\n",
        "        self._fresh[axis] = False\n",
        (
            "tests/ui/test_plots.py::"
            "test_auto_range_refits_exactly_after_a_zoom_and_a_new_run",
        ),
    ),
    Mutation(
        "draw-answer-not-painted-first",
        "the bars and label are painted before the saliency is computed",
        "DrawPanel._present",
        "            self.bars.repaint()\n            self.prediction_label.repaint()\n",
        "            pass\n",
        (
            "tests/ui/test_draw_panel.py::"
            "test_the_answer_is_painted_before_the_saliency_is_computed",
        ),
    ),
    Mutation(
        "explain-wrong-class",
        "a reading explained later has the saliency of its own answer",
        "Predictor.explain",
        "            heat = self.saliency(reading.input, reading.label)\n",
        "            heat = self.saliency(reading.input, (reading.label + 1) % 10)\n",
        (
            "tests/core/test_predict.py::"
            "test_explain_adds_the_saliency_a_one_pass_read_gives",
        ),
    ),
    Mutation(
        "probability-bars-height",
        "each probability bar is as tall as its value",
        "ProbabilityBars._bar_rect",
        "        height = plot.height() * min(max(value, 0.0), 1.0) / Y_TOP\n",
        "        height = plot.height() * min(max(value, 0.0), 1.0)\n",
        ("tests/ui/test_draw_widgets.py::test_probability_bars_show_values_and_names",),
    ),
    Mutation(
        "probability-bars-top-colour",
        "the most likely class's bar stands out in its own colour",
        "ProbabilityBars.paintEvent",
        "                color = self.TOP_COLOR if index == top else self.BAR_COLOR\n",
        "                color = self.BAR_COLOR\n",
        ("tests/ui/test_draw_widgets.py::test_probability_bars_show_values_and_names",),
    ),
    Mutation(
        "grid-stale-after-resize",
        "the grid lines follow the plot's range and size",
        "ViewGrid.viewTransformChanged",
        '        """pyqtgraph calls this when the view\'s range or size changes."""\n'
        "        self._levels = None\n",
        '        """pyqtgraph calls this when the view\'s range or size changes."""\n',
        (
            "tests/ui/test_plots.py::"
            "test_the_grid_lines_sit_at_the_axes_ticks_and_follow_the_range",
        ),
    ),
    Mutation(
        "grid-not-painted",
        "a live plot shows its grid",
        "ViewGrid.paint",
        "            painter.drawLines(lines)\n",
        "            pass\n",
        ("tests/ui/test_plots.py::test_the_grid_is_painted_on_the_view",),
    ),
    Mutation(
        "plot-frames-ten-a-second",
        "Live plots draw at most 4 frames a second however cheap a frame is (a CPU run's trainer pays for each)",
        "MIN_INTERVAL_MS",
        "MIN_INTERVAL_MS = 250\n",
        "MIN_INTERVAL_MS = 100\n",
        ("tests/ui/test_plots.py::test_refresh_backs_off_when_drawing_is_expensive",),
    ),
    Mutation(
        "curves-wait-for-a-frame-at-run-end",
        "When a run ends, its last points (the final epoch's accuracy) are on the curves at once, not a live frame later",
        "RunView._on_controller_run_finished",
        "        self.window.curves.show_all()  # the final points, not a frame later\n",
        "",
        ("tests/ui/test_curves.py::test_a_finished_run_shows_its_last_points_at_once",),
    ),
    Mutation(
        "plot-budget-counts-the-last-paint-only",
        "The live plots' paint budget counts every paint a refresh causes (a range change paints twice), not the last one only",
        "LivePlot.paintEvent",
        "        self.painted_s += time.perf_counter() - started\n",
        "        self.painted_s = time.perf_counter() - started\n",
        ("tests/ui/test_plots.py::test_every_paint_of_a_refresh_counts",),
    ),
    Mutation(
        "plot-range-fitted-during-the-paint",
        "A live plot's new range is fitted when its points are handed over, so one paint draws curve and axes (not two)",
        "LivePlot.refresh",
        "        view.prepareForPaint()\n",
        "",
        ("tests/ui/test_plots.py::test_a_refresh_that_moves_the_range_paints_once",),
    ),
    Mutation(
        "commands-leave-malloc-defaults",
        "Every command (the window and torchrun's workers too) keeps freed memory in the process first thing, so training steps do not fault their blocks in again",
        "workbench.cli.commands:_main",
        "    keep_freed_memory()  # before any tensor: every command trains or reads faster\n",
        "",
        ("tests/core/test_memory.py::test_every_command_keeps_freed_memory",),
    ),
    Mutation(
        "freed-memory-trimmed",
        "Freed memory stays in the process: a step's large blocks are reused, not given back and faulted in again",
        "TRIM_THRESHOLD",
        "TRIM_THRESHOLD = 256 * 1024 * 1024\n",
        "TRIM_THRESHOLD = 128 * 1024\n",
        (
            "tests/core/test_memory.py::test_kept_memory_is_not_faulted_in_again_each_step",
        ),
    ),
    Mutation(
        "trainer-thread-in-its-own-arena",
        "A worker thread (the window's trainer) allocates from the main thread's heap, not from an arena of its own that unmaps its heaps once free",
        "keep_freed_memory",
        "        and mallopt(_M_ARENA_MAX, ARENAS)\n",
        "",
        (
            "tests/core/test_memory.py::test_a_worker_threads_blocks_come_from_the_main_heap",
        ),
    ),
    Mutation(
        "trainer-starts-before-gui-caught-up",
        "A window run's first step waits until the GUI thread has set its views up for the run, so that work does not take the first steps' CPU",
        "TrainerThread.run",
        "                        self._wait_for_gui()\n",
        "                        pass\n",
        (
            "tests/ui/test_trainer_catch_up.py::test_the_first_step_waits_for_the_gui_threads_start_handling",
        ),
    ),
    Mutation(
        "catch-up-wait-ignores-stop",
        "Stop (or closing the window) ends the trainer's wait for the GUI thread at once",
        "TrainerThread._wait_for_gui",
        "        while not self.control.stop_requested and time.monotonic() < deadline:\n",
        "        while time.monotonic() < deadline:\n",
        ("tests/ui/test_trainer_catch_up.py::test_stop_ends_the_wait_at_once",),
    ),
    Mutation(
        "run-folder-imports-torchvision",
        "a headless run on the bundled digits never imports torchvision (about 3 s a process)",
        "workbench.core.runs.folder:versions",
        '"torchvision": _torchvision_version(),',
        '"torchvision": __import__("torchvision").__version__,',
        (
            "tests/core/test_core_is_qt_free.py::test_training_the_bundled_digits_headless_never_imports_torchvision",
        ),
    ),
]
# ------------------------- issue 33: Reproduce's verdicts and refusals, checkpoint values
_VERDICTS = "tests/core/test_ledger_verdicts.py"
_VALUES = "tests/core/test_checkpoint_values.py"
MUTATIONS += [
    Mutation(
        "reproduce-loss-tolerance",
        "Reproduce says reproduced only when every logged loss is identical: any other loss is a mismatch",
        "workbench.core.runs.reproduce:compare",
        "        if a != b:\n",
        "        if abs(a - b) > 1e-6:\n",
        (f"{_VERDICTS}::test_any_other_loss_is_not_reproduced_and_names_the_first",),
    ),
    Mutation(
        "reproduce-compares-step-counts-only",
        "A repeat that logged other steps is not reproduced, even with the same losses",
        "workbench.core.runs.reproduce:compare",
        "    if [s for s, _ in first] != [s for s, _ in repeated]:\n",
        "    if len(first) != len(repeated):\n",
        (f"{_VERDICTS}::test_other_steps_with_the_same_losses_are_not_reproduced",),
    ),
    Mutation(
        "reproduce-shorter-repeat-reproduced",
        "A repeat that logged fewer or more steps is not reproduced",
        "workbench.core.runs.reproduce:compare",
        "        return Reproduction(False, min(len(first), len(repeated)), mismatch)\n",
        "        return Reproduction(\n"
        "            mismatch is None, min(len(first), len(repeated)), mismatch\n"
        "        )\n",
        (f"{_VERDICTS}::test_a_repeat_of_another_length_is_not_reproduced",),
    ),
    Mutation(
        "reproduce-other-steps-said-as-losses",
        "Runs that logged other steps are told so, not as losses differing (None vs None)",
        "Reproduction.describe",
        "        if self.original is None or self.repeated is None:\n",
        "        if False:\n",
        (f"{_VERDICTS}::test_other_steps_with_the_same_losses_are_not_reproduced",),
    ),
    Mutation(
        "reproduce-folder-run-without-data-record",
        "Reproduce refuses an image-folder run that did not record its data (no data_files.json)",
        "data_change",
        '        return f"run {folder.id} did not record its data ({DATA_FILE} is missing)"\n',
        "        return None\n",
        (
            f"{_VERDICTS}::test_an_image_folder_run_is_repeated_only_on_the_data_it_recorded",
        ),
    ),
    Mutation(
        "reproduce-unreadable-data-passes",
        "Reproduce refuses an image-folder run whose folder cannot be read now",
        "data_change",
        '        return f"the data of run {folder.id} cannot be read now: {exc}"\n',
        "        return None\n",
        (
            f"{_VERDICTS}::test_an_image_folder_run_is_repeated_only_on_the_data_it_recorded",
        ),
    ),
    Mutation(
        "model-hash-missing-passes-as-unchanged",
        "A run or checkpoint of a model file with no recorded hash is not taken as unchanged",
        "model_file_change",
        "    if not isinstance(recorded, str):\n",
        "    if recorded is None:\n        return None\n    if not isinstance(recorded, str):\n",
        (
            f"{_VERDICTS}::test_a_model_file_run_without_its_hash_is_refused",
            f"{_VERDICTS}::test_opening_a_checkpoint_without_its_model_files_hash_says_so",
        ),
    ),
    Mutation(
        "model-file-unreadable-passes",
        "Reproduce refuses a model-file run whose file cannot be read now",
        "model_file_change",
        '        return f"the model file of {made} cannot be read now: {exc}"\n',
        "        return None\n",
        (f"{_VERDICTS}::test_a_model_file_run_is_repeated_only_from_the_same_file",),
    ),
    Mutation(
        "reproduce-ignores-model-file",
        "Reproduce refuses a model-file run whose file changed since",
        "original_config",
        '        changed = model_file_change(cfg.model, recorded, f"run {folder.id}")\n',
        "        changed = None\n",
        (f"{_VERDICTS}::test_a_model_file_run_is_repeated_only_from_the_same_file",),
    ),
    Mutation(
        "reproduce-accepts-closed-runs",
        "Only a finished run is reproduced: stopped, failed, closed and dismissed ones are refused",
        "reproducible",
        '    if run.status != "finished":\n',
        '    if run.status in ("stopped", "failed"):\n',
        (f"{_VERDICTS}::test_every_run_its_config_cannot_repeat_is_refused_with_why",),
    ),
    Mutation(
        "reproduce-damaged-run-not-named",
        "Reproduce refuses a run whose run.json is damaged, saying so",
        "reproducible",
        "    if run.problem:\n",
        "    if False:\n",
        (f"{_VERDICTS}::test_a_damaged_or_missing_run_json_is_refused",),
    ),
    Mutation(
        "runs-reproduce-records-a-run",
        "`runs reproduce` trains the check without recording it as a run (runs list does not show it)",
        "workbench.cli.runs:_reproduce",
        "    plan = session.plan(cfg)  # not session.begin(plan): no folder, no ledger\n",
        "    plan = session.plan(cfg)\n    session.begin(plan)\n",
        (f"{_VERDICTS}::test_runs_reproduce_records_no_run_and_keeps_the_verdict",),
    ),
    Mutation(
        "runs-reproduce-exit-0-on-mismatch",
        "`runs reproduce` exits 1 when the runs differ",
        "workbench.cli.runs:_reproduce",
        "    return 0 if verdict.reproduced else 1\n",
        "    return 0\n",
        (f"{_VERDICTS}::test_runs_reproduce_records_no_run_and_keeps_the_verdict",),
    ),
    Mutation(
        "reproduction-verdict-not-kept",
        "A reproduction's verdict is kept in the original's run.json (last_reproduction)",
        "Session.finish",
        "        original.update(last_reproduction=verdict.describe())\n",
        "",
        (f"{_VERDICTS}::test_runs_reproduce_records_no_run_and_keeps_the_verdict",),
    ),
    Mutation(
        "checkpoint-negative-count-accepted",
        "A checkpoint with a negative epoch, step or count does not load, open, resume or inspect",
        "workbench.core.checkpoints.schema:_whole",
        " and value >= 0",
        "",
        (
            f"{_VALUES}::test_a_count_that_is_negative_or_not_whole_is_refused",
            f"{_VALUES}::test_such_a_file_is_not_loaded_opened_resumed_or_inspected",
        ),
    ),
    Mutation(
        "checkpoint-zero-count-refused",
        "A count of 0 (a checkpoint before the first step) loads",
        "workbench.core.checkpoints.schema:_whole",
        "value >= 0",
        "value > 0",
        (f"{_VALUES}::test_zero_is_a_count_like_any_other",),
    ),
    Mutation(
        "checkpoint-bool-count-accepted",
        "true/false is not a checkpoint's count",
        "workbench.core.checkpoints.schema:_whole",
        "isinstance(value, int) and not isinstance(value, bool)",
        "isinstance(value, int)",
        (f"{_VALUES}::test_a_count_that_is_negative_or_not_whole_is_refused",),
    ),
    Mutation(
        "checkpoint-negative-count-said-as-type",
        "A negative count is told as such (global_step must be 0 or more, not -3)",
        "workbench.core.checkpoints.schema:_need",
        '    if negative and wanted == "a whole number":  # a count: the type was right\n',
        "    if False:\n",
        (
            f"{_VALUES}::test_a_count_that_is_negative_or_not_whole_is_refused",
            f"{_VALUES}::test_such_a_file_is_not_loaded_opened_resumed_or_inspected",
        ),
    ),
    Mutation(
        "checkpoint-batch-in-epoch-any-number",
        "A checkpoint's batch_in_epoch must be a whole number of 0 or more",
        "workbench.core.checkpoints.schema:_FIELDS",
        '    ("batch_in_epoch", _simple("a whole number", _whole), True),\n',
        '    ("batch_in_epoch", _simple("a whole number", _number), True),\n',
        (f"{_VALUES}::test_a_count_that_is_negative_or_not_whole_is_refused",),
    ),
    Mutation(
        "checkpoint-float-order-accepted",
        "A checkpoint's sample order of floats is refused",
        "workbench.core.checkpoints.schema:_data_order",
        "        and not order.is_floating_point()\n",
        "",
        (
            f"{_VALUES}::test_a_value_of_the_wrong_kind_is_refused_with_its_field",
            f"{_VALUES}::test_such_a_file_is_not_loaded_opened_resumed_or_inspected",
        ),
    ),
    Mutation(
        "checkpoint-2d-order-accepted",
        "A checkpoint's sample order is one row of sample numbers",
        "workbench.core.checkpoints.schema:_data_order",
        "        and order.dim() == 1\n",
        "        and order.dim() >= 1\n",
        (f"{_VALUES}::test_a_value_of_the_wrong_kind_is_refused_with_its_field",),
    ),
    Mutation(
        "checkpoint-torch-rng-any-tensor",
        "A checkpoint's torch random state is a uint8 tensor",
        "workbench.core.checkpoints.schema:_rng",
        "    ok = isinstance(state, torch.Tensor) and state.dtype == torch.uint8\n",
        "    ok = isinstance(state, torch.Tensor)\n",
        (f"{_VALUES}::test_a_value_of_the_wrong_kind_is_refused_with_its_field",),
    ),
    Mutation(
        "checkpoint-gauss-bool-accepted",
        "true/false is not a checkpoint's number (NumPy's gauss)",
        "workbench.core.checkpoints.schema:_number",
        " and not isinstance(value, bool)",
        "",
        (f"{_VALUES}::test_a_value_of_the_wrong_kind_is_refused_with_its_field",),
    ),
    Mutation(
        "checkpoint-frozen-names-unchecked",
        "A checkpoint's frozen list holds names only",
        "workbench.core.checkpoints.schema:_NAMES",
        "isinstance(v, list | tuple) and all(isinstance(n, str) for n in v)",
        "isinstance(v, list | tuple)",
        (f"{_VALUES}::test_a_value_of_the_wrong_kind_is_refused_with_its_field",),
    ),
]

# ------------------------------------ issue 33: image folders, both loader paths
_FP = "tests/core/test_folder_promises.py"
_LP = "tests/core/test_loader_paths.py"
_BUILTIN_AUG = (
    f"{_LP}::test_builtin_datasets_augment_training_images_and_never_validation"
)
MUTATIONS += [
    Mutation(
        "folder-colour-axes-swapped",
        "A colour image arrives with its rows, columns and channels where they belong, on both paths",
        "as_channels",
        "    return pixels.transpose(2, 0, 1)\n",
        "    return pixels.transpose(2, 1, 0)\n",
        (
            f"{_FP}::test_colour_images_arrive_with_rows_columns_and_channels_in_place[fast]",
            f"{_FP}::test_colour_images_arrive_with_rows_columns_and_channels_in_place[dataloader]",
        ),
    ),
    Mutation(
        "folder-stats-divided-by-channels",
        "A folder's per-channel mean and std are taken over images, rows and columns (not channels too)",
        "channel_stats",
        "    count = images.shape[0] * images.shape[2] * images.shape[3]\n",
        "    count = images.numel()\n",
        (
            f"{_FP}::test_per_channel_mean_and_std_are_the_training_images_own[fast]",
            f"{_FP}::test_per_channel_mean_and_std_are_the_training_images_own[dataloader]",
        ),
    ),
    Mutation(
        "folder-stats-include-validation",
        "A folder's pixel statistics are those of its training images, never its validation images",
        "load_folder",
        "    info = folder_info(listing, arrays.train_images)\n",
        "    info = folder_info(\n        listing, torch.cat([arrays.train_images, arrays.test_images])\n    )\n",
        (f"{_FP}::test_per_channel_mean_and_std_are_the_training_images_own[fast]",),
    ),
    Mutation(
        "folder-cache-ignores-seed",
        "Another seed gives another split, also when the decoded images come from the disk cache",
        "_cache_key",
        '{val_fraction!r}|{seed}"',
        '{val_fraction!r}"',
        (f"{_FP}::test_a_seed_gives_one_split_on_both_paths_and_another_seed_another",),
    ),
    Mutation(
        "folder-stream-split-unseeded",
        "The DataLoader path splits a folder by the run's seed, as the fast path does",
        "streamed_splits",
        "    train, val = split_pairs(listing, val_fraction, seed)\n",
        "    train, val = split_pairs(listing, val_fraction, 0)\n",
        (f"{_FP}::test_a_seed_gives_one_split_on_both_paths_and_another_seed_another",),
    ),
    Mutation(
        "folder-split-val-also-trained",
        "No image of a folder is both trained and validated on",
        "split_pairs",
        "            (val if index in chosen else train).append(pair)\n",
        "            if index in chosen:\n                val.append(pair)\n            train.append(pair)\n",
        (f"{_FP}::test_a_seed_gives_one_split_on_both_paths_and_another_seed_another",),
    ),
    Mutation(
        "run-skips-upper-case-suffixes",
        "A run trains on IMG_0001.JPG as on any image: every image check-data counts",
        "scan_folder",
        "                if path.suffix.lower() in IMAGE_SUFFIXES:\n",
        "                if path.suffix in IMAGE_SUFFIXES:\n",
        (
            f"{_FP}::test_a_run_trains_on_every_image_check_data_counts[fast]",
            f"{_FP}::test_a_run_trains_on_every_image_check_data_counts[dataloader]",
        ),
    ),
    Mutation(
        "check-data-skips-upper-case-suffixes",
        "check-data counts images whatever the case of their suffix",
        "check_folder",
        "                if path.suffix.lower() not in IMAGE_SUFFIXES:\n",
        "                if path.suffix not in IMAGE_SUFFIXES:\n",
        (f"{_FP}::test_check_data_counts_every_image_whatever_the_case_of_its_suffix",),
    ),
    Mutation(
        "check-data-counts-unreadable",
        "check-data counts only the images that decode: the ones a run trains on",
        "check_folder",
        "                    report.unreadable.append(path)\n",
        "                    report.unreadable.append(path)\n                    per_class[name] += 1\n",
        (f"{_FP}::test_check_data_counts_every_image_whatever_the_case_of_its_suffix",),
    ),
    Mutation(
        "check-data-small-by-longer-side",
        "check-data's far-smaller warning judges the shorter side: a thin strip is reported",
        "check_folder",
        "                if min(height, width) < SMALL_SHARE * image_size:\n",
        "                if max(height, width) < SMALL_SHARE * image_size:\n",
        (f"{_FP}::test_far_smaller_is_judged_by_the_shorter_side",),
    ),
    Mutation(
        "check-data-small-at-half",
        "check-data warns about images below half the training size, not at it",
        "check_folder",
        "                if min(height, width) < SMALL_SHARE * image_size:\n",
        "                if min(height, width) <= SMALL_SHARE * image_size:\n",
        (f"{_FP}::test_far_smaller_is_judged_by_the_shorter_side",),
    ),
    Mutation(
        "check-data-small-size-transposed",
        "check-data names a small image's size as width x height",
        "check_folder",
        '                            f"{width}x{height} is far smaller than the training "\n',
        '                            f"{height}x{width} is far smaller than the training "\n',
        (f"{_FP}::test_far_smaller_is_judged_by_the_shorter_side",),
    ),
    Mutation(
        "folder-cache-prunes-newest",
        "Pruning the decoded-image caches deletes the least recently used, never the one just written",
        "_prune",
        "reverse=True",
        "reverse=False",
        (f"{_FP}::test_pruning_keeps_the_four_most_recently_used_caches",),
    ),
    Mutation(
        "folder-cache-read-not-touched",
        "A decoded-image cache that was just read counts as recently used when pruning",
        "_read_cache",
        "    path.touch()  # pruning keeps the most recently used caches\n",
        "",
        (f"{_FP}::test_pruning_keeps_the_four_most_recently_used_caches",),
    ),
    Mutation(
        "folder-dataloader-unnormalised",
        "The DataLoader path normalises a folder's images with the run's statistics, as the fast path",
        "FolderDataset.__getitem__",
        "        return self.info.normalise(x), self.pairs[index][1]\n",
        "        return x, self.pairs[index][1]\n",
        (f"{_LP}::test_a_folder_reads_the_same_on_both_paths",),
    ),
    Mutation(
        "folder-dataloader-val-shuffled",
        "The DataLoader path validates a folder in the fast path's order",
        "folder_loaders",
        "            batch_size=val_batch_size,\n            shuffle=False,\n",
        "            batch_size=val_batch_size,\n            shuffle=True,\n",
        (f"{_LP}::test_a_folder_reads_the_same_on_both_paths",),
    ),
    Mutation(
        "dataloader-crop-default-scale",
        "The DataLoader path's random resized crop keeps the fast path's area share and ratio",
        "augment_transform",
        "                size, scale=CROP_SCALE, ratio=CROP_RATIO, antialias=True\n",
        "                size, antialias=True\n",
        (f"{_LP}::test_per_sample_crops_keep_the_fast_paths_area_and_ratio",),
    ),
    Mutation(
        "dataloader-rotation-one-way",
        "The DataLoader path rotates both ways within the fast path's angles",
        "augment_transform",
        "                MAX_DEGREES, interpolation=",
        "                (0, MAX_DEGREES), interpolation=",
        (f"{_LP}::test_per_sample_rotations_stay_within_the_fast_paths_angles",),
    ),
    Mutation(
        "dataloader-jitter-without-brightness",
        "The DataLoader path's colour jitter changes brightness within the fast path's range",
        "augment_transform",
        "            v2.ColorJitter(brightness=JITTER, contrast=JITTER, saturation=JITTER)\n",
        "            v2.ColorJitter(contrast=JITTER, saturation=JITTER)\n",
        (f"{_LP}::test_per_sample_jitter_and_flip_draw_from_the_fast_paths_ranges",),
    ),
    Mutation(
        "dataloader-flip-always",
        "The DataLoader path flips each image half the time, as the fast path",
        "augment_transform",
        "        steps.append(v2.RandomHorizontalFlip())\n",
        "        steps.append(v2.RandomHorizontalFlip(p=1.0))\n",
        (f"{_LP}::test_per_sample_jitter_and_flip_draw_from_the_fast_paths_ranges",),
    ),
    Mutation(
        "builtin-dataloader-val-augmented",
        "The DataLoader path never augments the validation images of MNIST-family datasets",
        "_per_sample_datasets",
        "            transform=transform,\n        )\n        train_set.transform = train_transform\n",
        "            transform=train_transform,\n        )\n",
        (f"{_BUILTIN_AUG}[mnist-dataloader]",),
    ),
    Mutation(
        "builtin-dataloader-train-not-augmented",
        "The DataLoader path augments the training images of MNIST-family datasets",
        "_per_sample_datasets",
        "        train_set.transform = train_transform\n",
        "",
        (f"{_BUILTIN_AUG}[mnist-dataloader]",),
    ),
    Mutation(
        "builtin-array-val-augmented",
        "The DataLoader path never augments CIFAR-10's validation images",
        "_per_sample_datasets",
        "arrays.test_labels.numpy(), transform)",
        "arrays.test_labels.numpy(), train_transform)",
        (f"{_BUILTIN_AUG}[cifar10-dataloader]",),
    ),
    Mutation(
        "fast-val-augmented",
        "The fast path never augments validation batches",
        "fast_loaders",
        "        shuffle=False,\n        **common,\n",
        "        shuffle=False,\n        augment=batch_augment(cfg, info),\n        **common,\n",
        (f"{_BUILTIN_AUG}[mnist-fast]", f"{_BUILTIN_AUG}[cifar10-fast]"),
    ),
    Mutation(
        "array-dataset-axes-swapped",
        "The DataLoader path hands a colour image to its transforms with rows and columns in place",
        "ArrayDataset.__getitem__",
        "pixels.transpose(1, 2, 0)",
        "pixels.transpose(2, 1, 0)",
        (f"{_BUILTIN_AUG}[cifar10-dataloader]",),
    ),
]
MUTATIONS += [
    Mutation(
        "check-data-misses-class-without-training-images",
        "check-data reports an error for a class with images in val/ but none to train on",
        "_check_classes",
        "        if training is not None and count and not training[name]:\n",
        "        if False:\n",
        (f"{_FP}::test_a_class_without_training_images_cannot_train_on_either_path",),
    ),
    Mutation(
        "dataloader-path-trains-class-without-images",
        "The DataLoader path refuses a class without training images, as the fast path does",
        "streamed_splits",
        "    check_splits(\n",
        "    (\n",
        (f"{_FP}::test_a_class_without_training_images_cannot_train_on_either_path",),
    ),
]

# ------------------ issue 33: model cards, replaced heads, model files' builders
_CARD = "tests/core/test_model_card.py"
_BUILD = "tests/core/test_model_builders.py"
MUTATIONS += [
    Mutation(
        "card-confusion-transposed",
        "The model card's confusion matrix has the true class in rows, the predicted in columns",
        "_confusion_lines",
        "for name, row in zip(names, matrix.tolist(), strict=True)",
        "for name, row in zip(names, matrix.T.tolist(), strict=True)",
        (f"{_CARD}::test_the_card_shows_the_confusion_matrix_cell_by_cell",),
    ),
    Mutation(
        "record-confusion-swapped",
        "The export's record counts each image in the cell of its true and predicted class",
        "EagerRecord.add",
        "(y.numpy(), logits.argmax(1).numpy())",
        "(logits.argmax(1).numpy(), y.numpy())",
        (f"{_CARD}::test_the_record_counts_each_true_and_predicted_pair_in_its_cell",),
    ),
    Mutation(
        "fingerprint-without-labels",
        "The card's data fingerprint covers the verification images' labels as well as their pixels",
        "EagerRecord.add",
        "        self._digest.update(y.to(torch.int64).numpy().tobytes())\n",
        "",
        (
            f"{_CARD}::test_the_fingerprint_is_the_sha256_of_the_inputs_and_labels_in_order",
        ),
    ),
    Mutation(
        "card-twenty-classes-not-a-table",
        "A card shows the confusion table up to 20 classes, one line a class beyond",
        "_confusion_lines",
        "    if len(names) <= _TABLE_CLASSES:\n",
        "    if len(names) < _TABLE_CLASSES:\n",
        (f"{_CARD}::test_twenty_classes_are_a_table_and_more_are_one_line_each",),
    ),
    Mutation(
        "card-per-class-totals-predicted",
        "A many-class card says, per class, how many of its images were right out of its images",
        "_confusion_lines",
        "    totals = matrix.sum(1)\n",
        "    totals = matrix.sum(0)\n",
        (f"{_CARD}::test_twenty_classes_are_a_table_and_more_are_one_line_each",),
    ),
    Mutation(
        "card-fingerprint-unsaid",
        "The model card names the data it was verified on: image count and fingerprint",
        "_data_lines",
        '        f"them): `{record.fingerprint}`",\n',
        '        "them)",\n',
        (
            f"{_CARD}::test_the_card_names_the_data_it_was_checked_on_and_its_fingerprint",
        ),
    ),
    Mutation(
        "card-figures-without-a-record",
        "A card with no record of the verification images shows no confusion matrix or fingerprint",
        "_data_lines",
        "    if record is None or not record.images:\n",
        "    if record is None:\n",
        (f"{_CARD}::test_a_card_without_a_record_has_no_figures_it_cannot_know",),
    ),
    Mutation(
        "card-agreement-not-percent",
        "The card's verification table gives each format's agreement in percent with its counts",
        "_figure_lines",
        "{100 * v.agreement:.2f}%",
        "{v.agreement:.2f}%",
        (
            f"{_CARD}::test_the_verification_table_has_one_line_per_format_with_its_figures",
        ),
    ),
    Mutation(
        "card-incomplete-export-looks-verified",
        "A card whose export lacks a format says verification FAILED or incomplete",
        "write_card",
        "        if result.passed\n",
        "        if not result.verification_failed\n",
        (f"{_CARD}::test_a_format_that_could_not_export_leaves_the_card_incomplete",),
    ),
    Mutation(
        "card-pretrained-weights-unsaid",
        "The card names the pretrained weights a model started from",
        "write_card",
        'if cfg.weights != "none" else ""',
        'if cfg.weights == "default" else ""',
        (f"{_CARD}::test_the_card_states_the_model_its_inputs_and_outputs",),
    ),
    Mutation(
        "card-input-without-channels",
        "The card gives the model's input as channels x height x width",
        "write_card",
        "'x'.join(map(str, info.image_shape))",
        "'x'.join(map(str, info.image_shape[1:]))",
        (f"{_CARD}::test_the_card_states_the_model_its_inputs_and_outputs",),
    ),
    Mutation(
        "card-accuracy-of-the-best-epoch",
        "The card's validation accuracy is the last epoch's, with the best beside it",
        "_accuracy_line",
        "    last = epochs[-1]\n",
        '    last = max(epochs, key=lambda e: e.get("val_accuracy", 0.0))\n',
        (f"{_CARD}::test_the_card_states_how_the_model_was_trained_and_with_what",),
    ),
    Mutation(
        "card-epoch-counted-from-zero",
        "The card counts epochs from 1, as the rest of the program shows them",
        "_accuracy_line",
        "after epoch {last['epoch'] + 1} ",
        "after epoch {last['epoch']} ",
        (f"{_CARD}::test_the_card_states_how_the_model_was_trained_and_with_what",),
    ),
    Mutation(
        "card-trained-versions-are-the-exporters",
        "The card keeps the torch and workbench versions the model was trained with",
        "write_card",
        "{payload.get('torch_version', '?')}",
        "{torch.__version__}",
        (
            f"{_CARD}::test_the_card_states_how_the_model_was_trained_and_with_what",
            f"{_CARD}::test_a_run_stopped_before_its_first_epoch_says_so",
        ),
    ),
    Mutation(
        "labels-sorted",
        "labels.json lists the class names in the model's output order",
        "write_labels",
        "list(info.class_names)",
        "sorted(info.class_names)",
        (f"{_CARD}::test_labels_are_the_class_names_in_output_order",),
    ),
    Mutation(
        "export-digits-stats-not-the-style-datasets",
        "A digit model's preprocess.json has the statistics of the dataset its drawings are styled on",
        "input_stats",
        "fit_to_model(dataset_info(cfg.style_dataset), cfg.model, cfg.weights)",
        "fit_to_model(dataset_info(cfg.dataset), cfg.model, cfg.weights)",
        (f"{_CARD}::test_a_digit_model_follows_its_style_datasets_statistics",),
    ),
    # --------------------------------------------------- replaced heads, inputs
    Mutation(
        "replaced-head-in-features-from-outputs",
        "A replaced Linear head takes the features the published head took",
        "_replace_head",
        "nn.Linear(old.in_features, num_classes, bias=old.bias is not None)",
        "nn.Linear(old.out_features, num_classes, bias=old.bias is not None)",
        (
            f"{_BUILD}::test_a_replaced_head_is_the_published_layer_for_the_runs_classes",
        ),
    ),
    Mutation(
        "replaced-head-loses-its-bias",
        "A replaced Linear head keeps the published head's bias",
        "_replace_head",
        "bias=old.bias is not None",
        "bias=False",
        (
            f"{_BUILD}::test_a_replaced_head_is_the_published_layer_for_the_runs_classes",
        ),
    ),
    Mutation(
        "replaced-conv-head-becomes-linear",
        "SqueezeNet's Conv2d head is replaced by a Conv2d of the same kernel",
        "_replace_head",
        "        new = nn.Conv2d(old.in_channels, num_classes, kernel_size=old.kernel_size)\n",
        "        new = nn.Linear(old.in_channels, num_classes)\n",
        (
            f"{_BUILD}::test_a_replaced_head_is_the_published_layer_for_the_runs_classes",
        ),
    ),
    Mutation(
        "head-is-the-first-layer-giving-the-classes",
        "The classifier head is the last layer giving the class count, not an earlier one of that width",
        "_find_head",
        "    for path, module in model.named_modules():\n",
        "    for path, module in reversed(list(model.named_modules())):\n",
        (f"{_BUILD}::test_the_head_is_the_last_layer_giving_the_classes",),
    ),
    Mutation(
        "pretrained-side-heads-kept",
        "Pretrained GoogLeNet and Inception v3 drop their 1,000-class side heads",
        "_drop_side_heads",
        "                setattr(model, side, None)\n",
        "                pass\n",
        (f"{_BUILD}::test_pretrained_googlenet_and_inception_drop_their_side_heads",),
    ),
    Mutation(
        "pretrained-googlenet-without-transform-input",
        "Pretrained GoogLeNet and Inception v3 re-normalise their inputs as their weights were trained",
        "_builder_options",
        '        options["transform_input"] = pretrained\n',
        '        options["transform_input"] = False\n',
        (f"{_BUILD}::test_pretrained_googlenet_and_inception_drop_their_side_heads",),
    ),
    Mutation(
        "pretrained-maxvit-size-unchecked",
        "Pretrained MaxViT refuses another image size before any download, naming the one it takes",
        "_check_pretrained_size",
        '    if not (name.startswith("vit_") or name == "maxvit_t"):\n',
        '    if not name.startswith("vit_"):\n',
        (
            f"{_BUILD}::test_pretrained_maxvit_refuses_another_image_size_before_any_download",
        ),
    ),
    Mutation(
        "weights-crop-is-the-resize",
        "A pretrained model's preprocessing crops to the size its weights were trained at",
        "weights_preprocess",
        "    crop = transform.crop_size\n",
        "    crop = transform.resize_size\n",
        (f"{_BUILD}::test_the_weights_preprocessing_is_what_torchvision_publishes",),
    ),
    Mutation(
        "preprocessing-line-says-gray-repeated-for-gray-models",
        "The Data panel's line says gray is repeated only when the model takes 3 channels",
        "preprocessing_text",
        "    gray = info.channels == 1 and fitted.channels == 3\n",
        "    gray = info.channels == 1\n",
        (f"{_BUILD}::test_the_data_panel_line_says_what_is_done_to_each_image",),
    ),
    Mutation(
        "replaced-head-notice-without-the-enum",
        "The replaced-head note names the weights as torchvision does (ResNet18_Weights.IMAGENET1K_V1)",
        "replaced_head_notice",
        '    label = f"{type(member).__name__}.{member.name}"\n',
        '    label = f"{member.name}"\n',
        (
            f"{_BUILD}::test_the_replaced_head_notice_names_the_weights_the_head_and_the_classes",
        ),
    ),
    # ------------------------------------------------------------ model files
    Mutation(
        "model-file-in-channels-is-a-side",
        "A model file's builder gets in_channels= the input's channel count",
        "build_from_file",
        '        kwargs["in_channels"] = input_shape[0]\n',
        '        kwargs["in_channels"] = input_shape[-1]\n',
        (
            f"{_BUILD}::test_a_builder_is_called_with_num_classes_and_in_channels_by_keyword",
        ),
    ),
    Mutation(
        "model-file-kwargs-builder-without-channels",
        "A model file's builder taking **kwargs gets in_channels= too",
        "_accepts",
        "    return name in parameters or any(\n",
        "    return name in parameters and any(\n",
        (
            f"{_BUILD}::test_a_builder_is_called_with_num_classes_and_in_channels_by_keyword",
        ),
    ),
    Mutation(
        "model-file-builder-called-positionally",
        "A model file's builder is called with keywords (num_classes=, in_channels=)",
        "build_from_file",
        "        model = builder(**kwargs)\n",
        "        model = builder(*kwargs.values())\n",
        (
            f"{_BUILD}::test_a_builder_is_called_with_num_classes_and_in_channels_by_keyword",
        ),
    ),
    Mutation(
        "model-file-hash-not-on-the-model",
        "A model built from a file carries the file's SHA-256 for the checkpoint and run.json",
        "_construct",
        "            model.model_file_sha256 = source.sha256  # type: ignore[assignment]\n",
        "",
        (f"{_BUILD}::test_the_model_carries_the_sha256_of_its_files_bytes",),
    ),
    Mutation(
        "model-file-checked-in-train-mode",
        "A model file's output check runs in eval mode: no BatchNorm statistics learnt from blank inputs",
        "_check_output",
        "    model.eval()\n",
        "",
        (f"{_BUILD}::test_the_output_check_leaves_the_model_as_its_builder_made_it",),
    ),
    Mutation(
        "model-file-mode-not-restored",
        "After its output check a model file's model is back in the mode its builder left it",
        "_check_output",
        "        model.train(was_training)\n",
        "        model.train()\n",
        (f"{_BUILD}::test_the_output_check_leaves_the_model_as_its_builder_made_it",),
    ),
    Mutation(
        "model-file-error-at-the-shallowest-line",
        "A failing model file is reported at the deepest line of that file, where it raised",
        "_where",
        '    line = f":{frames[-1].lineno}" if frames else ""\n',
        '    line = f":{frames[0].lineno}" if frames else ""\n',
        (
            f"{_BUILD}::test_a_builder_that_fails_is_one_line_at_the_deepest_line_of_the_file",
        ),
    ),
    Mutation(
        "model-file-unrecorded-hash-silent",
        "A checkpoint or run that recorded no model-file hash says the change cannot be told",
        "model_file_change",
        "    if not isinstance(recorded, str):\n        return (\n",
        "    if not isinstance(recorded, str):\n        return None\n        return (\n",
        (f"{_BUILD}::test_a_changed_unrecorded_or_missing_file_is_told",),
    ),
    Mutation(
        "model-file-change-hashes-swapped",
        "A changed model file's note gives the recorded hash as 'then' and the file's as 'now'",
        "model_file_change",
        "{recorded[:12]} then, {now[:12]} now",
        "{now[:12]} then, {recorded[:12]} now",
        (f"{_BUILD}::test_a_changed_unrecorded_or_missing_file_is_told",),
    ),
]

# ------------- issue 33: every run's start waits; the window's process job
_START_WAIT = (
    "tests/ui/test_run_start_wait.py::"
    "test_every_runs_first_step_waits_for_the_starts_repaints_and_what_they_posted"
)
_LAUNCH = "tests/ui/test_job_launch.py"
_LAUNCH_SESSION = (
    f"{_LAUNCH}::test_a_job_runs_in_a_session_of_its_own_and_its_lines_arrive_at_once"
)
_LAUNCH_FAILED = (
    f"{_LAUNCH}::test_a_failed_job_shows_its_last_error_line_and_leaves_no_rank_running"
)
_LAUNCH_CLOSE = f"{_LAUNCH}::test_closing_asks_first_and_no_keeps_the_job"
_LAUNCH_STUBBORN = (
    f"{_LAUNCH}::test_a_job_that_ignores_stop_is_ended_with_every_process"
)
_LAUNCH_THREADS = f"{_LAUNCH}::test_each_process_gets_an_equal_share_of_the_cores"

MUTATIONS += [
    Mutation(
        "catch-up-one-trip",
        "a run's first step waits until the start's repaints, and what painting "
        "posted, are done: not one trip through the event queue",
        "_CatchUp.start",
        "        self._trips_left = _CATCH_UP_TRIPS\n",
        "        self._trips_left = 1\n",
        (_START_WAIT,),
    ),
    Mutation(
        "catch-up-not-rearmed",
        "every run's start in the same window waits for the GUI thread, not the first",
        "TrainerThread._wait_for_gui",
        "        self._gui_caught_up.clear()\n",
        "",
        (_START_WAIT,),
    ),
    Mutation(
        "catch-up-overtakes-repaints",
        "the catch-up's trips queue behind the start's repaint requests (low priority)",
        "_CatchUp._post_trip",
        "Qt.EventPriority.LowEventPriority.value",
        "Qt.EventPriority.NormalEventPriority.value",
        (_START_WAIT,),
    ),
    Mutation(
        "job-not-in-own-session",
        "a job from the window runs in a session of its own: a terminal's Ctrl+C "
        "never reaches it",
        "ProcessJob.start",
        "                start_new_session=True,\n",
        "                start_new_session=False,\n",
        (_LAUNCH_SESSION,),
    ),
    Mutation(
        "job-lines-buffered",
        "rank 0's lines reach the window while the job runs (unbuffered output)",
        "ProcessJob.start",
        '        env = {**os.environ, "PYTHONUNBUFFERED": "1"}',
        "        env = dict(os.environ)",
        (_LAUNCH_SESSION,),
    ),
    Mutation(
        "job-environment-dropped",
        "a job runs in the window's environment (runs folder, threads, paths)",
        "ProcessJob.start",
        '        env = {**os.environ, "PYTHONUNBUFFERED": "1"}',
        '        env = {"PYTHONUNBUFFERED": "1"}',
        (_LAUNCH_SESSION,),
    ),
    Mutation(
        "job-stop-sent-twice",
        "Stop sends SIGINT once however often it is asked (a second one aborts)",
        "ProcessJob.stop",
        "        if self.running and not self.stop_requested:\n",
        "        if self.running:\n",
        (_LAUNCH_SESSION,),
    ),
    Mutation(
        "job-stop-button-stays",
        "once Stop is asked of a job, the Stop button is off",
        "RunController.stop",
        "            self.job.stop()  # every rank stops after its batch\n"
        "            self.state_changed.emit(self.state)\n",
        "            self.job.stop()  # every rank stops after its batch\n",
        (_LAUNCH_SESSION,),
    ),
    Mutation(
        "job-stop-shown-as-failure",
        "a job stopped by Stop (exit code 130) is shown as stopped, not failed",
        "JobEnded.outcome",
        "self.exit_code == STOPPED_EXIT_CODE",
        "self.exit_code == -signal.SIGINT",
        (_LAUNCH_SESSION,),
    ),
    Mutation(
        "job-rank-left-after-failure",
        "when a job's launcher exits, no rank of it stays running",
        "ProcessJob.poll",
        "            self._end_leftovers()\n",
        "",
        (_LAUNCH_FAILED,),
    ),
    Mutation(
        "job-failure-shows-a-rule",
        "a failed job shows the last line of its error output that says something",
        "ProcessJob._failure",
        'if re.search(r"\\w", s)]',
        "if s.strip()]",
        (_LAUNCH_FAILED,),
    ),
    Mutation(
        "job-failure-not-noted",
        "a failed job's reason is shown under the controls",
        "JobView._on_controller_job_ended",
        '            w.add_note(f"The run on several processes failed: {ended.message}")\n',
        "",
        (_LAUNCH_FAILED,),
    ),
    Mutation(
        "job-close-ignores-no",
        "answering No to closing keeps the window open and the job running",
        "MainWindow.closeEvent",
        "            event.ignore()\n",
        "",
        (_LAUNCH_CLOSE,),
    ),
    Mutation(
        "job-close-leaves-it-running",
        "closing the window (Yes) stops the job",
        "RunController.shutdown",
        "            job.shutdown()  # its ranks stop and rank 0 saves, or are ended\n",
        "            pass\n",
        (_LAUNCH_CLOSE,),
    ),
    Mutation(
        "job-shutdown-spares-leftovers",
        "a job that ignores Stop is ended with every process of it",
        "ProcessJob.shutdown",
        "        self._end_leftovers()\n        self._clean_up()\n",
        "        self._clean_up()\n",
        (_LAUNCH_STUBBORN,),
    ),
    Mutation(
        "job-threads-not-shared",
        "each process of a job gets an equal share of the cores (OMP_NUM_THREADS)",
        "relaunch",
        "    threads = max(1, (os.cpu_count() or 1) // nproc)\n",
        "    threads = max(1, os.cpu_count() or 1)\n",
        (_LAUNCH_THREADS,),
    ),
    Mutation(
        "job-threads-override-the-user",
        "an OMP_NUM_THREADS the user set stays theirs in every process of a job",
        "relaunch",
        '    os.environ.setdefault("OMP_NUM_THREADS", str(threads))\n',
        '    os.environ["OMP_NUM_THREADS"] = str(threads)\n',
        (_LAUNCH_THREADS,),
    ),
]

# ------------------- distributed guards as unit tests (issue 33: no torchrun launch)
_GUARDS = "tests/core/test_distributed_guards.py"
MUTATIONS += [
    Mutation(
        "ddp-last-batch-of-world-refused",
        "a last batch of as many samples as processes (or none) is accepted",
        "check_batch",
        "    if 0 < last < world:\n",
        "    if 0 < last <= world:\n",
        (
            f"{_GUARDS}::"
            "test_a_batch_is_refused_only_when_it_cannot_split_over_the_processes",
        ),
    ),
    Mutation(
        "ddp-last-batch-not-refused",
        "a last batch with fewer samples than processes is refused before training",
        "attach",
        "    check_batch(train.batch_size, world, train.num_samples)\n",
        "    check_batch(train.batch_size, world)\n",
        (
            f"{_GUARDS}::"
            "test_a_last_batch_smaller_than_the_processes_is_refused_before_training",
        ),
    ),
    Mutation(
        "ddp-uneven-batch-opens-folder",
        "a batch that cannot split over the processes opens no run folder",
        "Session.begin",
        "        check_batch(cfg.batch_size, world_size())\n",
        "",
        (
            f"{_GUARDS}::"
            "test_a_batch_that_cannot_split_opens_no_run_folder_even_on_rank_0",
        ),
    ),
    Mutation(
        "ddp-rank-saves-files",
        "a rank other than 0 writes no --save or --metrics-json file",
        "run_rank",
        "        args.save = args.metrics_json = None\n",
        "",
        (
            f"{_GUARDS}::test_another_rank_prints_nothing_and_writes_no_file",
            f"{_GUARDS}::"
            "test_another_rank_runs_quietly_and_its_ending_is_rank_0s_to_report",
        ),
    ),
    Mutation(
        "ddp-rank-prints",
        "a rank other than 0 prints nothing",
        "run_rank",
        '        sys.stdout = open(os.devnull, "w")  # kept open for the process\'s life\n',
        "",
        (f"{_GUARDS}::test_another_rank_prints_nothing_and_writes_no_file",),
    ),
    Mutation(
        "ddp-rank-stop-code-leaks",
        "only rank 0's exit code tells how the run ended (another rank exits 0)",
        "run_rank",
        "        return code if main else 0\n",
        "        return code\n",
        (
            f"{_GUARDS}::"
            "test_another_rank_runs_quietly_and_its_ending_is_rank_0s_to_report",
        ),
    ),
    Mutation(
        "ddp-user-error-on-every-rank",
        "a user error is said by rank 0 alone; the other ranks exit 2 quietly",
        "run_rank",
        "        if main:\n            raise\n        return 2\n",
        "        raise\n",
        (
            f"{_GUARDS}::"
            "test_another_rank_runs_quietly_and_its_ending_is_rank_0s_to_report",
        ),
    ),
    Mutation(
        "ddp-group-not-left",
        "every rank leaves the process group at the end of the command",
        "run_rank",
        "    finally:\n        distributed.stop()\n",
        "    finally:\n        pass\n",
        (
            f"{_GUARDS}::"
            "test_another_rank_runs_quietly_and_its_ending_is_rank_0s_to_report",
            f"{_GUARDS}::test_another_rank_prints_nothing_and_writes_no_file",
        ),
    ),
    Mutation(
        "ddp-every-rank-trains-chunk-0",
        "each rank trains its own chunk of every global batch (attach sets its shard)",
        "attach",
        "    train.shard = (distributed.rank(), world)\n",
        "    train.shard = (0, world)\n",
        (
            f"{_GUARDS}::test_rank_1_trains_its_own_half_of_every_global_batch",
            f"{_GUARDS}::"
            "test_a_resumed_rank_continues_with_its_share_of_the_stored_order",
        ),
    ),
    Mutation(
        "ddp-dataloader-path-unsharded",
        "the DataLoader path shards every global batch as the fast path does",
        "DataLoaderBatches.iter_from",
        "self._sampler.plan(self.cut(order[start_batch * self.batch_size :]))",
        "self._sampler.plan(split_batches(order[start_batch * self.batch_size :], self.batch_size))",
        (
            f"{_GUARDS}::"
            "test_rank_1_trains_its_own_half_of_every_global_batch[dataloader]",
        ),
    ),
    Mutation(
        "ddp-resume-skips-local-batches",
        "a rank resumed mid-epoch continues at the stored global batch",
        "FastLoader.iter_from",
        "order[start_batch * self.batch_size :]",
        "order[start_batch * (self.batch_size // self.shard[1]) :]",
        (
            f"{_GUARDS}::"
            "test_a_resumed_rank_continues_with_its_share_of_the_stored_order",
        ),
    ),
    Mutation(
        "ddp-feature-cache-on",
        "the feature cache is off on several processes, and says why",
        "run_blocker",
        "    if run.ddp is not None:\n",
        "    if False:\n",
        (
            f"{_GUARDS}::"
            "test_the_feature_cache_is_off_on_several_processes_and_says_why",
        ),
    ),
    Mutation(
        "ddp-batchnorm-notice-twice",
        "a BatchNorm model on several processes is told once (not twice) its statistics stay per process",
        "attach",
        "        run.notices.append(notice)\n",
        "        run.notices += [notice, notice]\n",
        (
            f"{_GUARDS}::"
            "test_the_feature_cache_is_off_on_several_processes_and_says_why",
        ),
    ),
    Mutation(
        "ddp-last-batch-weighed-as-full",
        "an uneven last batch's chunks are weighed by their share of that batch",
        "backward_loss",
        "    global_n = min(train.batch_size, train.num_samples - start)\n",
        "    global_n = train.batch_size\n",
        (
            f"{_GUARDS}::"
            "test_each_rank_weighs_its_chunk_so_the_gradient_is_the_batchs_mean",
        ),
    ),
    Mutation(
        "ddp-logged-loss-mean-of-ranks",
        "the logged loss is the whole batch's mean, not the mean of the ranks' means",
        "step_loss",
        "    pair = torch.tensor([loss.item() * share, share], dtype=torch.float64)\n",
        "    pair = torch.tensor([loss.item(), 1.0], dtype=torch.float64)\n",
        (f"{_GUARDS}::test_the_logged_loss_is_the_whole_batchs_mean_over_the_ranks",),
    ),
    Mutation(
        "ddp-sample-count-local",
        "epoch metrics count every rank's samples",
        "reduce_sums",
        "    sums.samples = round(samples)\n",
        "",
        (f"{_GUARDS}::test_epoch_sums_add_every_ranks_loss_correct_and_samples",),
    ),
    Mutation(
        "ddp-stop-needs-every-rank",
        "a stop asked of any one rank stops them all",
        "stop_agreed",
        "    return distributed.all_reduce_sum(flag).item() > 0\n",
        "    return distributed.all_reduce_sum(flag).item() >= distributed.world_size()\n",
        (f"{_GUARDS}::test_a_stop_asked_of_any_rank_stops_them_all",),
    ),
    Mutation(
        "ddp-rank-takes-rank-0-rng",
        "each rank resumes its own random-number state, not rank 0's",
        "restore_rank_rng",
        "    mine = states[distributed.rank()]\n",
        "    mine = states[0]\n",
        (f"{_GUARDS}::test_each_rank_resumes_its_own_random_numbers",),
    ),
    Mutation(
        "ddp-rng-from-another-count",
        "random states saved by another number of processes are not restored",
        "restore_rank_rng",
        "len(states) != world",
        "len(states) < world",
        (f"{_GUARDS}::test_each_rank_resumes_its_own_random_numbers",),
    ),
    Mutation(
        "world-size-zero-read",
        "a checkpoint's unreadable process count reads as one process",
        "saved_world_size",
        " or value < 1:",
        ":",
        (f"{_GUARDS}::test_an_unreadable_process_count_reads_as_one",),
    ),
    Mutation(
        "ddp-nccl-for-cpu-tensors",
        "a run on the CPU joins with gloo even on a CUDA machine",
        "workbench.core.distributed.env:start",
        '    backend = "nccl" if device.type == "cuda" else "gloo"\n',
        '    backend = "nccl" if torch.cuda.is_available() else "gloo"\n',
        (f"{_GUARDS}::test_joining_says_the_backend_the_rank_and_its_threads",),
    ),
    Mutation(
        "ddp-threads-notice-wrong",
        "each process says the threads it really has",
        "workbench.core.distributed.env:start",
        "    threads = torch.get_num_threads()\n",
        "    threads = os.cpu_count() or 1\n",
        (f"{_GUARDS}::test_joining_says_the_backend_the_rank_and_its_threads",),
    ),
    Mutation(
        "ddp-gpu-by-global-rank",
        "each rank trains on the GPU of its place on its own machine (LOCAL_RANK)",
        "rank_device",
        'torch.device("cuda", local_rank())',
        'torch.device("cuda", rank())',
        (f"{_GUARDS}::test_each_rank_trains_on_the_gpu_of_its_place_on_its_machine",),
    ),
    Mutation(
        "ddp-zero-threads",
        "more processes than cores still get one thread each",
        "relaunch",
        "max(1, (os.cpu_count() or 1) // nproc)",
        "(os.cpu_count() or 1) // nproc",
        (f"{_GUARDS}::test_each_process_gets_an_equal_share_of_the_cores[2-4-1]",),
    ),
    Mutation(
        "nproc-under-torchrun-accepted",
        "--nproc under torchrun is refused in one line",
        "relaunch",
        "    if distributed.world_size() > 1:\n",
        "    if False:\n",
        (f"{_GUARDS}::test_nproc_refuses_what_would_fail_in_every_process",),
    ),
    Mutation(
        "nproc-uneven-batch-launches",
        "--nproc refuses a batch that cannot split before starting any process",
        "relaunch",
        "    check_batch(cfg.batch_size, nproc)\n",
        "",
        (f"{_GUARDS}::test_nproc_refuses_what_would_fail_in_every_process",),
    ),
    Mutation(
        "ddp-user-error-reported-as-failure",
        "a user error rank 0 printed ends --nproc with exit code 2, no 'rank failed' line",
        "_report_failure",
        "first.exitcode in (2, 130)",
        "first.exitcode == 130",
        (
            f"{_GUARDS}::"
            "test_how_the_processes_ended_is_the_commands_exit_code[user-error]",
        ),
    ),
    Mutation(
        "early-interrupt-only-other-ranks",
        "every rank of several processes (rank 0 too) keeps an early Ctrl+C",
        "is_rank",
        'os.environ.get("WORLD_SIZE", "1").strip() not in ("", "1")',
        'os.environ.get("RANK", "0").strip() not in ("", "0")',
        (
            f"{_GUARDS}::"
            "test_a_rank_keeps_an_early_ctrl_c_and_stops_before_its_first_step",
        ),
    ),
    Mutation(
        "early-interrupt-forgotten",
        "a Ctrl+C kept before training stops the run before its first step",
        "stop_on_first_interrupt",
        "    if _take():  # a request came before the run could train\n",
        "    if False:\n",
        (
            f"{_GUARDS}::"
            "test_a_rank_keeps_an_early_ctrl_c_and_stops_before_its_first_step",
        ),
    ),
]
MUTATIONS += [
    Mutation(
        "reproduce-nothing-logged-is-reproduced",
        "Runs with no logged losses are never called reproduced",
        "workbench.core.runs.reproduce:compare",
        "    if not first or not repeated:  # nothing logged proves nothing\n",
        "    if False:\n",
        ("tests/core/test_ledger_verdicts.py::test_no_logged_losses_prove_nothing",),
    ),
]
MUTATIONS += [
    Mutation(
        "model-file-lists-torchvision",
        "a run of the user's own model file never imports torchvision to list its models",
        "is_torchvision",
        "    if name in BUILTIN_MODELS or is_model_file(name):\n",
        "    if name in BUILTIN_MODELS:\n",
        (
            "tests/core/test_model_file.py::test_a_model_file_run_never_lists_torchvisions_models",
        ),
    ),
]

# issue 34: the Code tab's script in a font whose columns line up.
MUTATIONS += [
    Mutation(
        name="code-view-proportional-font",
        promise="The Code tab shows its script in a fixed-width font (equal advances)",
        where="CodeView.__init__",
        old="QFontDatabase.SystemFont.FixedFont",
        new="QFontDatabase.SystemFont.GeneralFont",
        tests=(
            "tests/ui/test_code_view.py::test_the_code_tab_shows_the_run_as_a_plain_script",
        ),
    ),
]

# issue 33 second pass: distributed guards, thread sharing, the start wait, jobs
_P2 = "tests/core/test_distributed_second_pass.py"
_P2_UI = "tests/ui/test_start_wait_second_pass.py"
_P2_RNG = f"{_P2}::test_a_checkpoint_keeps_each_ranks_own_random_numbers_in_rank_order"
_P2_CUDA_RNG = f"{_P2}::test_a_resumed_rank_sets_its_cuda_random_numbers_on_its_own_gpu"
_P2_ATTACH = (
    f"{_P2}::test_ddp_wraps_each_ranks_model_on_its_gpu_with_the_batchnorm_asked_for"
)
_P2_PEER = f"{_P2}::test_a_rank_that_only_lost_its_peer_exits_quietly_and_says_so"
_P2_SIGNAL = f"{_P2_UI}::test_a_job_ended_by_a_signal_failed_and_says_which"
_P2_LINES = f"{_P2_UI}::test_the_lines_a_job_printed_as_it_exited_reach_the_window"
_P2_START = (
    f"{_P2_UI}::test_each_start_releases_the_gui_threads_pool_and_prepares_the_trainer"
)
_P2_WAIT = (
    "tests/ui/test_run_start_wait.py::"
    "test_every_runs_first_step_waits_for_the_starts_repaints_and_what_they_posted"
)
MUTATIONS += [
    Mutation(
        "ddp-every-rank-keeps-rank-0s-rng",
        "a checkpoint keeps each rank's own random-number state, in rank order",
        "gather_rng",
        "{key: gathered[key][r] for key in mine}",
        "{key: gathered[key][0] for key in mine}",
        (_P2_RNG,),
    ),
    Mutation(
        "ddp-cuda-rng-onto-the-default-gpu",
        "a resumed rank sets its CUDA random numbers on its own GPU (LOCAL_RANK)",
        "restore_rank_rng",
        '        device = distributed.rank_device(torch.device("cuda"))\n',
        '        device = torch.device("cuda")\n',
        (_P2_CUDA_RNG,),
    ),
    Mutation(
        "ddp-sync-bn-never-asked",
        "--sync-bn on CUDA reaches the model DDP wraps",
        "attach",
        "sync_bn=run.config.sync_bn, world=world",
        "sync_bn=False, world=world",
        (_P2_ATTACH,),
    ),
    Mutation(
        "ddp-wraps-on-gpu-0",
        "DDP wraps each rank's model on that rank's own GPU",
        "attach",
        "    device_ids = [run.device.index] if",
        "    device_ids = [0] if",
        (_P2_ATTACH,),
    ),
    Mutation(
        "main-rank-per-machine",
        "only the first process of all (rank 0), not each machine's first, writes",
        "is_main",
        "    return rank() == 0\n",
        "    return local_rank() == 0\n",
        (
            f"{_P2}::test_only_the_first_process_of_all_writes_not_each_machines_first",
            f"{_GUARDS}::"
            "test_another_rank_runs_quietly_and_its_ending_is_rank_0s_to_report",
        ),
    ),
    Mutation(
        "collectives-wait-ten-minutes",
        "collectives time out after 60 s, so nothing waits for ever",
        "workbench.core.distributed.env:TIMEOUT",
        "seconds=60",
        "seconds=600",
        (f"{_P2}::test_a_collective_waits_60_seconds_at_most",),
    ),
    Mutation(
        "resize-notice-ends-on-the-new-count",
        "the resize notice says the run would have been different on the count that saved it",
        "resize_notice",
        '        f"on {_processes(saved)}"\n',
        '        f"on {_processes(now)}"\n',
        (f"{_P2}::test_the_resize_notice_compares_with_the_count_that_saved_the_run",),
    ),
    Mutation(
        "rank-error-hidden-behind-rank-0s-stop",
        "a rank that failed with an error is named even when rank 0 stopped or refused",
        "_report_failure",
        "first.exitcode in (2, 130) and not raised:",
        "first.exitcode in (2, 130):",
        (f"{_P2}::test_a_ranks_error_is_named_even_when_rank_0_stopped_or_refused",),
    ),
    Mutation(
        "lost-peer-words-case-sensitive",
        "a rank whose peer reset the connection (any case) is never named as the cause",
        "peer_lost",
        "    text = str(exc).lower()\n",
        "    text = str(exc)\n",
        (_P2_PEER,),
    ),
    Mutation(
        "dist-error-not-a-lost-peer",
        "a torch.distributed error (DistError) marks a lost peer, whatever its words",
        "peer_lost",
        "isinstance(exc, dist.DistError) or any(",
        "any(",
        (_P2_PEER,),
    ),
    Mutation(
        "one-process-connection-error-silent",
        "one process's error about a connection still ends with its traceback",
        "run_rank",
        "        if peer_lost(exc) and distributed.world_size() > 1:\n",
        "        if peer_lost(exc):\n",
        (f"{_P2}::test_one_process_shows_a_connection_error_like_any_other",),
    ),
    Mutation(
        "failing-rank-error-not-written",
        "a rank that fails writes its error for the agent to name",
        "run_rank",
        "        record_failure(exc)\n",
        "",
        (f"{_P2}::test_a_rank_that_fails_writes_its_error_for_the_agent",),
    ),
    Mutation(
        "job-killed-reads-finished",
        "a job ended by a signal reads as failed, not finished",
        "JobEnded.outcome",
        "        if self.exit_code == 0:\n",
        "        if self.exit_code <= 0:\n",
        (_P2_SIGNAL,),
    ),
    Mutation(
        "job-warnings-not-shown",
        "rank 0's warnings are shown under the controls, as its notes are",
        "_NOTE_PREFIXES",
        '("warning: ", "note: ")',
        '("note: ",)',
        (_P2_LINES,),
    ),
    Mutation(
        "job-last-lines-missed",
        "what a job printed right before it exited still reaches the window",
        "ProcessJob.poll",
        "        code = process.poll()  # before reading: nothing written after is missed\n"
        "        for line in self._stdout.read():\n"
        "            self._on_output_line(line)\n",
        "        for line in self._stdout.read():\n"
        "            self._on_output_line(line)\n"
        "        code = process.poll()\n",
        (_P2_LINES,),
    ),
    Mutation(
        "job-signal-said-negative",
        "a job ended by a signal says which signal, with nothing on its error output",
        "ProcessJob._failure",
        "ended by signal {-code}",
        "ended by signal {code}",
        (_P2_SIGNAL,),
    ),
    Mutation(
        "job-failure-first-line",
        "a failed job shows the last line of its error output, not the first",
        "ProcessJob._failure",
        "            return lines[-1]\n",
        "            return lines[0]\n",
        (f"{_P2_UI}::test_a_failed_job_says_the_last_line_of_its_error_output",),
    ),
    Mutation(
        "job-uneven-batch-starts-processes",
        "the window refuses a batch that cannot split before starting any process",
        "JobView.start_if_several",
        "            check_batch(cfg.batch_size, nproc)\n",
        "",
        (f"{_P2_UI}::test_a_batch_that_cannot_split_starts_no_process",),
    ),
    Mutation(
        "catch-up-waits-out-the-deadline",
        "once the GUI thread has caught up, the first step goes at once",
        "TrainerThread._wait_for_gui",
        "            if self._gui_caught_up.wait(0.01):\n                return\n",
        "            self._gui_caught_up.wait(0.01)\n",
        (_P2_WAIT,),
    ),
    Mutation(
        "catch-up-two-trips",
        "the catch-up waits for the start's repaint and two passes of what it posted",
        "_CATCH_UP_TRIPS",
        "_CATCH_UP_TRIPS = 3",
        "_CATCH_UP_TRIPS = 2",
        (_P2_WAIT,),
    ),
    Mutation(
        "gui-pool-kept-at-start",
        "the GUI thread releases its OpenMP pool right before each run starts",
        "TrainerThread.start_run",
        "        prepare_main_thread()\n",
        "",
        (_P2_START,),
    ),
    Mutation(
        "trainer-not-prepared",
        "the training thread copies the GUI thread's torch settings before training",
        "TrainerThread.run",
        "        prepare_training_thread()\n",
        "",
        (_P2_START,),
    ),
    Mutation(
        "training-thread-keeps-stale-flush",
        "a training thread copies the starter's flush-denormal setting",
        "prepare_training_thread",
        "        torch.set_flush_denormal(wanted.flush_denormal)\n",
        "",
        (
            "tests/core/test_threads.py::"
            "test_flush_denormal_set_after_the_worker_started_is_copied",
        ),
    ),
    Mutation(
        "lost-peer-names-rank-0",
        "a user error or stop of rank 0 keeps its exit code when another rank only lost it",
        "_report_failure",
        '        if own.get("error") and not own.get("peer_lost")\n',
        '        if own.get("error")\n',
        (f"{_P2}::test_a_rank_that_only_lost_rank_0_leaves_its_ending_to_rank_0",),
    ),
]

# issue 33 second pass: image folders and the DataLoader path
_FOLDER_SP = "tests/core/test_folder_second_pass.py"
MUTATIONS += [
    Mutation(
        "split-small-class-not-validated",
        "Without a split, every class of two or more images keeps at least one for validation",
        "split_pairs",
        "            held = min(max(held, 1), len(pairs) - 1)\n",
        "            held = min(held, len(pairs) - 1)\n",
        (
            f"{_FOLDER_SP}::test_each_class_holds_out_its_rounded_share_and_at_least_one_image",
        ),
    ),
    Mutation(
        "split-two-image-class-not-split",
        "A class of two images gives one to training and one to validation",
        "split_pairs",
        "        if len(pairs) >= 2:  # each class in both splits when it can be\n",
        "        if len(pairs) > 2:  # each class in both splits when it can be\n",
        (
            f"{_FOLDER_SP}::test_each_class_holds_out_its_rounded_share_and_at_least_one_image",
        ),
    ),
    Mutation(
        "split-share-floored",
        "The validation share of each class is rounded to the nearest image, not down",
        "split_pairs",
        "        held = round(val_fraction * len(pairs))\n",
        "        held = int(val_fraction * len(pairs))\n",
        (
            f"{_FOLDER_SP}::test_each_class_holds_out_its_rounded_share_and_at_least_one_image",
        ),
    ),
    Mutation(
        "split-test-folder-ignored",
        "DIR/train beside DIR/test is the folder's own split, as DIR/val is",
        "split_folders",
        "        for name in VAL_FOLDERS:\n",
        "        for name in VAL_FOLDERS[:1]:\n",
        (f"{_FOLDER_SP}::test_train_beside_test_is_the_folders_own_split",),
    ),
    Mutation(
        "run-misses-nested-images",
        "A run trains on the images in sub-folders of a class folder, as check-data counts them",
        "scan_folder",
        'for p in class_dir.rglob("*") if p.is_file()',
        'for p in class_dir.glob("*") if p.is_file()',
        (f"{_FOLDER_SP}::test_a_run_trains_on_the_images_in_sub_folders_of_a_class",),
    ),
    Mutation(
        "check-data-leak-names-train-copy-twice",
        "check-data's leak warning is on the val copy and names the train copy",
        "_check_duplicates",
        '            report.findings.append(Finding("warning", message, path))\n',
        '            report.findings.append(Finding("warning", message, first))\n',
        (
            f"{_FOLDER_SP}::test_a_leak_is_reported_on_the_val_copy_and_names_the_train_copy",
        ),
    ),
    Mutation(
        "check-data-imbalance-above-ten",
        "check-data warns when the largest class holds ten times the smallest's images, or more",
        "_check_classes",
        "max(present) >= IMBALANCE_RATIO * min(present)",
        "max(present) > IMBALANCE_RATIO * min(present)",
        ("tests/core/test_folder_check.py::test_strong_imbalance_is_a_warning",),
    ),
    Mutation(
        "check-data-imbalance-names-empty-class",
        "check-data's imbalance warning names the smallest class that has images",
        "_check_classes",
        "        smallest = min((n for n in totals if totals[n]), key=totals.__getitem__)\n",
        "        smallest = min(totals, key=totals.__getitem__)\n",
        (
            f"{_FOLDER_SP}::test_the_imbalance_warning_names_the_smallest_class_with_images",
        ),
    ),
    Mutation(
        "stream-gray-if-last-file-gray",
        "On the DataLoader path a folder trains on three channels when any image is colour",
        "readable_pairs",
        "                gray = result.is_gray and gray\n",
        "                gray = result.is_gray\n",
        (
            f"{_FOLDER_SP}::test_one_colour_image_makes_the_folder_colour_whatever_its_place[dataloader]",
        ),
    ),
    Mutation(
        "stream-stats-first-images",
        "The DataLoader path's statistics come from a seeded random sample of the training images",
        "streamed_splits",
        "    sample = torch.randperm(len(train), generator=generator)[:STATS_SAMPLE].tolist()\n",
        "    sample = list(range(min(len(train), STATS_SAMPLE)))\n",
        (
            f"{_FOLDER_SP}::test_the_dataloader_paths_statistics_sample_draws_from_every_class",
        ),
    ),
    Mutation(
        "stream-unreadable-val-kept",
        "The DataLoader path leaves unreadable validation files out before the run starts",
        "streamed_splits",
        "    val = [p for p in val if p in readable]\n",
        "",
        (
            f"{_FOLDER_SP}::test_the_dataloader_path_leaves_unreadable_validation_files_out",
        ),
    ),
    Mutation(
        "memory-budget-env-in-gigabytes",
        "PTCORE_MEMORY_BUDGET_MB is in megabytes",
        "memory_budget",
        "            return int(float(override) * 1024**2)\n",
        "            return int(float(override) * 1024**3)\n",
        (
            f"{_FOLDER_SP}::test_the_budget_is_in_megabytes_and_counts_three_bytes_a_pixel",
        ),
    ),
    Mutation(
        "budget-counts-one-byte-a-pixel",
        "The memory budget counts a decoded image at three bytes a pixel",
        "decoded_bytes",
        "    return listing.count * 3 * image_size * image_size\n",
        "    return listing.count * image_size * image_size\n",
        (
            f"{_FOLDER_SP}::test_the_budget_is_in_megabytes_and_counts_three_bytes_a_pixel",
        ),
    ),
    Mutation(
        "over-budget-takes-configured-workers",
        "A fast-path folder over the budget is read by fallback_workers() processes",
        "folder_loaders",
        '        workers = cfg.workers if cfg.loader == "dataloader" else fallback_workers()\n',
        "        workers = cfg.workers\n",
        (
            f"{_FOLDER_SP}::test_over_the_budget_the_fast_path_reads_with_fallback_workers",
        ),
    ),
    Mutation(
        "skipped-notice-more-counts-all",
        "The skipped-files notice names three and says how many more",
        "folder_loaders",
        '        more = f" and {count - _SKIPPED_SHOWN} more" if count > _SKIPPED_SHOWN else ""\n',
        '        more = f" and {count} more" if count > _SKIPPED_SHOWN else ""\n',
        (
            f"{_FOLDER_SP}::test_the_skipped_notice_names_three_files_and_counts_the_rest",
        ),
    ),
    Mutation(
        "flat-channel-divides-by-zero",
        "A channel of one value everywhere is normalised with std 1, not divided by ~0",
        "channel_stats",
        "    std = torch.where(std < 1e-3, torch.ones_like(std), std)\n",
        "",
        (
            f"{_FOLDER_SP}::test_a_flat_channel_is_divided_by_one_not_by_nearly_zero[fast]",
            f"{_FOLDER_SP}::test_a_flat_channel_is_divided_by_one_not_by_nearly_zero[dataloader]",
        ),
    ),
    Mutation(
        "folder-cache-ignores-size",
        "A run at another image size decodes again instead of reading another size's cache",
        "_cache_key",
        "|{size}|",
        "|",
        (
            "tests/core/test_folder_dataset.py::test_the_second_load_reads_the_decoded_cache_without_decoding",
        ),
    ),
    Mutation(
        "folder-cache-ignores-val-fraction",
        "Another validation share gives another split, also when the cache is read",
        "_cache_key",
        "|{val_fraction!r}|",
        "|",
        (f"{_FOLDER_SP}::test_another_validation_share_decodes_another_split",),
    ),
    Mutation(
        "data-change-added-as-removed",
        "Reproduce names the files added since a run as added",
        "DataFingerprint.difference",
        "        added = sorted(now.files.keys() - self.files.keys())\n",
        "        added = sorted(self.files.keys() - now.files.keys())\n",
        (f"{_FOLDER_SP}::test_a_change_of_data_names_added_removed_and_changed_files",),
    ),
    Mutation(
        "data-change-and-zero-more",
        "A data change of exactly three files names them all, without 'and 0 more'",
        "_some",
        "if len(paths) > shown",
        "if len(paths) >= shown",
        (f"{_FOLDER_SP}::test_a_change_of_data_names_added_removed_and_changed_files",),
    ),
    Mutation(
        "decoding-progress-stops-short",
        "Decoding progress ends at every image decoded",
        "read_many",
        "                progress(start + len(chunk), len(paths))\n",
        "                progress(start, len(paths))\n",
        (f"{_FOLDER_SP}::test_decoding_progress_ends_at_every_image",),
    ),
    Mutation(
        "missing-last-class-trains",
        "A run refuses a folder whose last class has no readable training image",
        "check_splits",
        "    counts = torch.bincount(train_y, minlength=len(listing.classes))\n",
        "    counts = torch.bincount(train_y)\n",
        (
            "tests/core/test_folder_promises.py::test_a_class_without_training_images_cannot_train_on_either_path",
        ),
    ),
    Mutation(
        "no-validation-images-trains",
        "A run refuses a folder that leaves no readable image for validation",
        "check_splits",
        "    if len(val_y) == 0:\n",
        "    if False:\n",
        (
            f"{_FOLDER_SP}::test_a_folder_without_readable_validation_images_cannot_train[fast]",
            f"{_FOLDER_SP}::test_a_folder_without_readable_validation_images_cannot_train[dataloader]",
        ),
    ),
    Mutation(
        "dataloader-len-drops-last-batch",
        "The DataLoader path counts its last, smaller batch (len is the batches it yields)",
        "DataLoaderBatches.__len__",
        "        return math.ceil(self._num_samples / self.batch_size)\n",
        "        return self._num_samples // self.batch_size\n",
        ("tests/core/test_data.py::test_dataloader_batches_match_the_fast_loader",),
    ),
    Mutation(
        "resume-at-epoch-end-refused",
        "A loader resumed at its last batch boundary yields nothing instead of failing",
        "_check_start_batch",
        "    if not 0 <= start_batch <= num_batches:\n",
        "    if not 0 <= start_batch < num_batches:\n",
        (
            "tests/core/test_data.py::test_fast_loader_iter_from_is_the_tail_of_the_epoch",
        ),
    ),
]

# ------------------------------- issue 33 second pass: exports and model files
_N2 = "tests/core/test_export_model_second_pass.py"
_EXPORTED2 = (
    f"{_N2}::test_a_failed_file_is_marked_with_its_reason_and_a_refusal_leaves_no_file"
)
MUTATIONS += [
    Mutation(
        "verify-nothing-checked-passes",
        "An export checked on no image is not verified",
        "Verification.passed",
        "            and self.total > 0\n",
        "",
        (
            f"{_N2}::test_no_image_checked_or_a_logit_past_the_tolerance_is_not_verified",
        ),
    ),
    Mutation(
        "verify-tolerance-exclusive",
        "A logit exactly 1e-4 from the eager one still passes (no further than 1e-4)",
        "Verification.passed",
        "self.max_diff <= self.tolerance",
        "self.max_diff < self.tolerance",
        (
            f"{_N2}::test_no_image_checked_or_a_logit_past_the_tolerance_is_not_verified",
        ),
    ),
    Mutation(
        "verify-difference-signed",
        "A file whose logits are lower than the eager model's fails like one higher",
        "workbench.core.export.verify:verify",
        "float((got.float() - expected).abs().max())",
        "float((got.float() - expected).max())",
        (f"{_N2}::test_logits_lower_than_the_eager_ones_fail_like_higher_ones",),
    ),
    Mutation(
        "verify-difference-of-the-last-batch",
        "The largest difference is over every batch, not the last one compared",
        "workbench.core.export.verify:verify",
        "worst[fmt] = max(worst[fmt], float((got.float() - expected).abs().max()))",
        "worst[fmt] = float((got.float() - expected).abs().max())",
        (f"{_N2}::test_the_largest_difference_is_over_every_batch_not_the_last",),
    ),
    Mutation(
        "verify-logit-shape-unchecked",
        "A file giving logits of another shape fails with the shape it gave",
        "workbench.core.export.verify:verify",
        "        if got.shape != expected.shape:\n",
        "        if len(got) != len(expected):\n",
        (f"{_N2}::test_logits_of_another_shape_fail_with_the_shape_given",),
    ),
    Mutation(
        "export-formats-in-the-users-order",
        "Formats export in the standard order, each once, whatever order they are given in",
        "check_formats",
        "    return tuple(f for f in FORMATS if f in formats)\n",
        "    return tuple(formats)\n",
        (f"{_N2}::test_formats_come_in_the_standard_order_once_and_none_is_refused",),
    ),
    Mutation(
        "export-no-format-accepted",
        "An export of no format is refused, not reported verified",
        "check_formats",
        "    if unknown or not formats:\n",
        "    if unknown:\n",
        (f"{_N2}::test_formats_come_in_the_standard_order_once_and_none_is_refused",),
    ),
    Mutation(
        "export-stale-failure-marker-kept",
        "A verified export into a folder of a failed one removes the old failure marker",
        "_publish",
        "(*FILE_NAMES.values(), FAILED_MARKER)",
        "tuple(FILE_NAMES.values())",
        (_EXPORTED2,),
    ),
    Mutation(
        "export-marker-lists-passing-formats",
        "VERIFICATION_FAILED.txt names only the files that failed",
        "_mark",
        "        if r.verification is not None and not r.passed\n",
        "        if r.verification is not None\n",
        (_EXPORTED2,),
    ),
    Mutation(
        "export-refusal-is-a-failed-verification",
        "A format that could not export is not a failed verification (no marker, not 'files kept')",
        "ExportResult.verification_failed",
        "any(r.verification is not None and not r.passed for r in self.formats)",
        "any(not r.passed for r in self.formats)",
        (_EXPORTED2,),
    ),
    Mutation(
        "export-error-reason-lost",
        "A file that could not run a batch says why on its line",
        "workbench.core.export.formats:_result",
        '        message = f"FAILED: {check.error}"\n',
        '        message = "FAILED: could not run"\n',
        (_EXPORTED2,),
    ),
    Mutation(
        "export-refused-file-kept",
        "A format whose exporter fails leaves no half-written file in the export",
        "_export_into",
        "            path.unlink(missing_ok=True)\n",
        "            pass\n",
        (_EXPORTED2,),
    ),
    Mutation(
        "model-file-any-extension",
        "A model file must be a .py file: another is refused with the form to give",
        "workbench.core.models.user_file:parse_spec",
        'not sep or not path_text.endswith(".py") or ',
        "not sep or ",
        (f"{_N2}::test_a_model_file_must_be_a_py_file",),
    ),
    Mutation(
        "model-file-missing-name-lists-imports",
        "A missing name lists what the file itself defines, not what it imports",
        "build_from_file",
        '            and getattr(value, "__module__", None) == namespace["__name__"]\n',
        "",
        (f"{_N2}::test_a_missing_name_lists_what_the_file_itself_defines",),
    ),
    Mutation(
        "model-file-tuple-output-crashes",
        "A model whose forward gives a tuple is one ModelFileError saying what it gave",
        "_check_output",
        "    shape = tuple(out.shape) if isinstance(out, torch.Tensor) else None\n",
        "    shape = tuple(out.shape)\n",
        (f"{_N2}::test_a_forward_giving_a_tuple_is_one_error_saying_so",),
    ),
    Mutation(
        "model-file-error-line-outside-the-file",
        "A model file's error names a line of that file, never one of torch's",
        "_where",
        " if f.filename == str(path)",
        "",
        (f"{_N2}::test_a_forward_error_inside_torch_is_told_at_the_files_own_line",),
    ),
    Mutation(
        "model-file-without-its-path",
        "A model file runs with __file__ set to its path (it may read files beside it)",
        "_run_file",
        "    module.__file__ = str(path)\n",
        "",
        (f"{_N2}::test_a_model_file_can_read_the_files_beside_it",),
    ),
    Mutation(
        "defined-names-inside-classes",
        "A model file offers its top-level names only, not methods such as forward",
        "defined_names",
        "        for node in tree.body\n",
        "        for node in ast.walk(tree)\n",
        (f"{_N2}::test_defined_names_are_the_top_level_ones_only",),
    ),
    Mutation(
        "pretrained-weights-not-loaded",
        "A pretrained torchvision model starts from the published weights",
        "build_torchvision",
        "            model.load_state_dict(state)\n",
        "            pass\n",
        (
            f"{_N2}::test_a_pretrained_model_holds_the_published_weights_under_a_fresh_head",
        ),
    ),
    Mutation(
        "model-slug-keeps-the-folder",
        "A model file's run folder is named after the file's stem and name (net-Net)",
        "model_slug",
        'name = f"{PurePath(path).stem}-{attr}"',
        'name = f"{path}-{attr}"',
        (f"{_N2}::test_a_model_files_run_folder_is_named_after_its_stem_and_name",),
    ),
    Mutation(
        "predict-script-longer-side-rounded",
        "predict.py keeps the longer side rounded down when it resizes a photo, as the workbench does",
        "workbench.core.export.predict_template:photo_pixels",
        "longer = int(size * long / short)",
        "longer = round(size * long / short)",
        (f"{_N2}::test_predict_py_resizes_a_photo_like_the_workbench",),
    ),
]
# issue 33 second pass: the runs ledger's verdicts and checkpoint validation
_LEDGER2 = "tests/core/test_ledger_second_pass.py"
MUTATIONS += [
    Mutation(
        "interrupted-offers-a-live-run",
        "a run still training in a live process on this machine is not offered for resume",
        "workbench.core.runs.folder:still_training",
        "    return not isinstance(pid, int) or process_alive(pid)\n",
        "    return not isinstance(pid, int)\n",
        (
            f"{_LEDGER2}::test_only_runs_whose_process_is_gone_and_that_saved_are_offered_newest_first",
        ),
    ),
    Mutation(
        "interrupted-without-checkpoint-offered",
        "only an interrupted run with a checkpoint is offered for resume",
        "workbench.core.runs.folder:interrupted_runs",
        " or not folder.checkpoint_path.is_file()",
        "",
        (
            f"{_LEDGER2}::test_only_runs_whose_process_is_gone_and_that_saved_are_offered_newest_first",
        ),
    ),
    Mutation(
        "someone-elses-process-taken-as-dead",
        "a run whose process belongs to another user (no permission to signal it) is live, not interrupted",
        "workbench.core.host.process_tree:process_alive",
        "        return True  # someone else's live process\n",
        "        return False  # someone else's live process\n",
        (f"{_LEDGER2}::test_a_run_of_another_users_live_process_is_not_offered",),
    ),
    Mutation(
        "interrupted-oldest-first",
        "interrupted runs are offered newest first",
        "workbench.core.runs.folder:interrupted_runs",
        'key=lambda f: f.info().get("updated") or "", reverse=True)',
        'key=lambda f: f.info().get("updated") or "")',
        (
            f"{_LEDGER2}::test_only_runs_whose_process_is_gone_and_that_saved_are_offered_newest_first",
        ),
    ),
    Mutation(
        "stopped-run-offered-for-resume",
        "only interrupted (running) and closed runs are offered for resume, not stopped ones",
        "workbench.core.runs.folder:RESUMABLE",
        '("running", "closed")',
        '("running", "closed", "stopped")',
        (
            f"{_LEDGER2}::test_only_runs_whose_process_is_gone_and_that_saved_are_offered_newest_first",
        ),
    ),
    Mutation(
        "find-run-ambiguous-prefix-picks-one",
        "an id prefix several runs share is refused, naming them, not resolved to one",
        "find_run",
        "    if len(matches) == 1:\n",
        "    if matches:\n",
        (f"{_LEDGER2}::test_a_prefix_several_runs_share_is_refused_naming_them",),
    ),
    Mutation(
        "tag-run-keeps-blank-tags",
        "blank tags are dropped",
        "tag_run",
        "for t in tags if t.strip()}",
        "for t in tags}",
        (f"{_LEDGER2}::test_blank_tags_are_dropped",),
    ),
    Mutation(
        "delete-run-any-folder",
        "delete refuses a folder that is not a run's (no run.json)",
        "delete_run",
        "    if not (folder.path / RUN_FILE).is_file():\n",
        "    if False:\n",
        (f"{_LEDGER2}::test_delete_refuses_a_folder_that_is_no_run",),
    ),
    Mutation(
        "resume-forgets-earlier-changes",
        "every setting changed on any resume stays recorded (changed_on_resume accumulates)",
        "RunFolder.claim",
        'set(info.get("changed_on_resume") or []) | set(changed)',
        "set(changed)",
        (f"{_LEDGER2}::test_every_setting_changed_on_any_resume_stays_recorded",),
    ),
    Mutation(
        "best-val-accuracy-is-the-worst",
        "run.json's best validation accuracy is the best epoch's",
        "RunRecorder._record",
        "            best = max(\n",
        "            best = min(\n",
        (
            f"{_LEDGER2}::test_the_best_accuracy_is_the_best_measured_epochs[best-of-several]",
        ),
    ),
    Mutation(
        "best-val-accuracy-nan",
        "an epoch without a validation accuracy (NaN) never becomes the best nor damages run.json",
        "RunRecorder._record",
        "                    if not math.isnan(e.val_accuracy)\n",
        "",
        (f"{_LEDGER2}::test_the_best_accuracy_is_the_best_measured_epochs",),
    ),
    Mutation(
        "autosave-every-n-off-by-one",
        "--autosave-every N saves after every N-th completed epoch",
        "RunRecorder._record",
        "run.epoch % self.every == 0",
        "(run.epoch + 1) % self.every == 0",
        (
            f"{_LEDGER2}::test_autosave_every_n_saves_after_every_nth_epoch_and_at_the_end",
        ),
    ),
    Mutation(
        "resumed-run-forgets-its-seconds",
        "a resumed run's duration adds the time trained before",
        "RunRecorder._record",
        "                seconds=self._seconds_before + event.seconds,\n",
        "                seconds=event.seconds,\n",
        (f"{_LEDGER2}::test_a_continued_runs_duration_adds_the_time_trained_before",),
    ),
    Mutation(
        "runs-list-zero-accuracy-as-na",
        "runs list shows a best accuracy of 0 as 0.00%, n/a only when none was measured",
        "workbench.cli.runs:run_command",
        '"n/a" if r.best_val_accuracy is None else',
        '"n/a" if not r.best_val_accuracy else',
        (f"{_LEDGER2}::test_the_best_accuracy_is_the_best_measured_epochs[zero]",),
    ),
    Mutation(
        "runs-show-first-loss-as-last",
        "runs show says the last logged loss and its step",
        "_run_report",
        "last loss {steps[-1].loss:.4f}",
        "last loss {steps[0].loss:.4f}",
        (f"{_LEDGER2}::test_runs_show_says_the_last_logged_loss_and_its_step",),
    ),
    Mutation(
        "checkpoint-format-true-read-as-1",
        "a checkpoint whose format_version is true/false is refused, not read as version 1",
        "migrate",
        " or isinstance(version, bool)",
        "",
        (f"{_LEDGER2}::test_a_true_or_false_format_version_is_refused",),
    ),
    Mutation(
        "checkpoint-optimizer-entries-unchecked",
        "each entry of a checkpoint's optimizer state is checked to be a dict",
        "workbench.core.checkpoints.schema:_optimizer",
        '        _need(isinstance(entry, dict), f"{name}.state[{index!r}]", entry, "a dict")\n',
        "        pass\n",
        (f"{_LEDGER2}::test_each_optimizer_state_entry_and_history_step_is_checked",),
    ),
    Mutation(
        "checkpoint-history-triples-accepted",
        "a checkpoint's history steps are (step, loss) pairs",
        "workbench.core.checkpoints.schema:_history",
        "isinstance(s, list | tuple) and len(s) == 2 for s in steps",
        "isinstance(s, list | tuple) and len(s) >= 2 for s in steps",
        (f"{_LEDGER2}::test_each_optimizer_state_entry_and_history_step_is_checked",),
    ),
    Mutation(
        "weights-from-an-empty-dict",
        "a file holding an empty dict holds no model weights",
        "load_weights_file",
        "            and candidate\n",
        "",
        (
            f"{_LEDGER2}::test_weights_under_a_model_key_load_and_an_empty_dict_holds_none",
        ),
    ),
    Mutation(
        "weights-under-model-key-refused",
        "weights kept under 'model' (as some tutorials save them) load",
        "load_weights_file",
        '("state_dict", "model_state_dict", "model")',
        '("state_dict", "model_state_dict")',
        (
            f"{_LEDGER2}::test_weights_under_a_model_key_load_and_an_empty_dict_holds_none",
        ),
    ),
    Mutation(
        "schedule-restart-silent",
        "resuming with another run length says the learning-rate schedule starts over",
        "restore_run",
        "            run.notices.append(\n"
        '                "the learning-rate schedule starts over: the run\'s length changed"\n'
        "            )\n",
        "            pass\n",
        (
            f"{_LEDGER2}::test_resuming_for_another_length_says_the_schedule_starts_over",
        ),
    ),
    Mutation(
        "checkpoint-without-torch-version",
        "a checkpoint records the torch and workbench versions that wrote it",
        "checkpoint_dict",
        '        "torch_version": str(torch.__version__),\n',
        "",
        (f"{_LEDGER2}::test_a_checkpoint_records_the_versions_that_wrote_it",),
    ),
    Mutation(
        "checkpoint-int-setting-refused",
        "a saved optimizer or scheduler number may be whole where this program has a float (lr 1 for 1.0)",
        "check_like",
        "(_number(expected) and _number(value))\n            or (isinstance",
        "(isinstance",
        (f"{_LEDGER2}::test_saved_settings_are_checked_by_kind_not_by_exact_type",),
    ),
    Mutation(
        "checkpoint-setting-unset-here-refused",
        "a saved setting this program leaves unset (None, e.g. foreach) is not checked against None",
        "check_like",
        " or expected is None",
        "",
        (f"{_LEDGER2}::test_saved_settings_are_checked_by_kind_not_by_exact_type",),
    ),
]

# issue 34: a job with Epochs "auto" is plotted from its first step.
MUTATIONS += [
    Mutation(
        name="job-view-epochs-auto",
        promise="A job on several processes with Epochs auto is followed without errors",
        where="JobView._on_step",
        old="ev.total_steps // cfg.resolved_epochs",
        new="ev.total_steps // cfg.epochs",
        tests=(
            "tests/ui/test_job_view.py::test_a_job_is_plotted_from_its_first_step_whatever_its_epochs",
        ),
    ),
]

# issue 34: the wheel over an unfocused field scrolls the page, not the field.
MUTATIONS += [
    Mutation(
        name="wheel-guard-not-installed",
        promise="Scrolling the settings column never changes the spin box or combo under the pointer",
        where="workbench.ui.widgets.wheel_guard:install",
        old="app.installEventFilter(guard)",
        new="pass",
        tests=(
            "tests/ui/test_wheel_guard.py::test_the_wheel_passes_an_unfocused_field_on_to_the_column",
        ),
    ),
    Mutation(
        name="wheel-guard-blocks-focused-field",
        promise="A spin box or combo with the focus still takes the wheel",
        where="WheelGuard.eventFilter",
        old="and not watched.hasFocus()",
        new="",
        tests=("tests/ui/test_wheel_guard.py::test_a_focused_field_takes_the_wheel",),
    ),
    Mutation(
        name="wheel-focus-kept",
        promise="A real wheel over an unfocused field scrolls the page: it gives no focus",
        where="workbench.ui.widgets.wheel_guard:_take_no_wheel_focus",
        old="widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)",
        new="pass",
        tests=(
            "tests/ui/test_wheel_guard.py::test_no_field_takes_the_focus_from_the_wheel",
        ),
    ),
    Mutation(
        name="wheel-focus-kept-on-polish",
        promise="A field made after the guard takes no focus from a real wheel either",
        where="WheelGuard.eventFilter",
        old="kind == QEvent.Type.Polish and isinstance",
        new="False and isinstance",
        tests=(
            "tests/ui/test_wheel_guard.py::test_no_field_takes_the_focus_from_the_wheel",
        ),
    ),
    Mutation(
        name="wheel-focus-kept-before-install",
        promise="A field shown before the guard takes no focus from a real wheel either",
        where="workbench.ui.widgets.wheel_guard:install",
        old="_take_no_wheel_focus(widget)",
        new="pass",
        tests=(
            "tests/ui/test_wheel_guard.py::"
            "test_fields_shown_before_the_guard_lose_their_wheel_focus_too",
        ),
    ),
]

# issue 34: one rule for a stop request from the first line of main.
MUTATIONS += [
    Mutation(
        name="sigterm-not-a-stop-request",
        promise="SIGTERM stops a command-line run like Ctrl+C (after its batch, saved)",
        where="workbench.cli.interrupts:_install",
        old="for number in STOP_SIGNALS",
        new="for number in (signal.SIGINT,)",
        tests=(
            "tests/core/test_interrupts.py::test_sigterm_stops_training_like_ctrl_c_and_a_second_request_aborts",
        ),
    ),
    Mutation(
        name="held-request-not-raised-when-the-command-starts",
        promise="A stop request held while the command loaded interrupts it as it starts",
        where="workbench.cli.interrupts:release",
        old="    if _take():\n",
        new="    if False:\n",
        tests=(
            "tests/core/test_interrupts.py::test_a_request_while_the_command_loads_is_kept_then_raised",
        ),
    ),
    Mutation(
        name="command-leaves-its-handlers",
        promise="A command run in-process puts back the signal handlers it replaced",
        where="workbench.cli.commands:main",
        old="        interrupts.restore(previous)",
        new="        pass",
        tests=(
            "tests/core/test_interrupts.py::test_a_command_run_in_process_puts_the_handlers_back",
        ),
    ),
    Mutation(
        name="rank-raises-early-request-in-set-up",
        promise="A rank holds a stop request until its first step, with the other ranks",
        where="workbench.cli.commands:_main",
        old="        if not interrupts.is_rank():",
        new="        if True:",
        tests=(
            "tests/core/test_distributed_guards.py::test_a_rank_keeps_an_early_ctrl_c_and_stops_before_its_first_step",
        ),
    ),
]

# issue 34: --metrics-json on a folder or a full disk.
MUTATIONS += [
    Mutation(
        name="metrics-json-folder-accepted",
        promise="--metrics-json naming a folder is refused in one line before training",
        where="OutputFile.__init__",
        old="if self.path.is_dir():",
        new="if False:",
        tests=(
            "tests/core/test_run_outputs_full_disk.py::test_a_folder_is_refused_in_one_line_before_training",
        ),
    ),
    Mutation(
        name="metrics-json-warns-every-epoch",
        promise="A --metrics-json write failing mid-run is said once, not every epoch",
        where="OutputFile.write_during_run",
        old="            if self._warned:\n                return None\n",
        new="",
        tests=(
            "tests/core/test_run_outputs_full_disk.py::test_a_full_disk_is_said_once_and_the_run_finishes_saved",
        ),
    ),
    Mutation(
        name="metrics-json-full-disk-stops-run",
        promise="A full disk under --metrics-json never stops the run",
        where="OutputFile.write_during_run",
        old="        except (OSError, CheckpointError) as exc:",
        new="        except ValueError as exc:",
        tests=(
            "tests/core/test_run_outputs_full_disk.py::test_a_full_disk_is_said_once_and_the_run_finishes_saved",
        ),
    ),
    Mutation(
        name="metrics-json-final-failure-exits-0",
        promise="The final --metrics-json write failing makes the exit code 1",
        where="workbench.cli.train:_train",
        old="        return 1\n",
        new="        return 0\n",
        tests=(
            "tests/core/test_run_outputs_full_disk.py::test_a_full_disk_is_said_once_and_the_run_finishes_saved",
        ),
    ),
]

# issue 34: --config reads a regular file of sane size only.
MUTATIONS += [
    Mutation(
        name="config-reads-any-file-kind",
        promise="--config on /dev/zero, a named pipe or a folder is refused in one line",
        where="workbench.core.config:_read_config_bytes",
        old="    if not stat.S_ISREG(mode):\n",
        new="    if stat.S_ISDIR(mode):\n",
        tests=(
            "tests/core/test_config_file_kinds.py::test_dev_zero_is_refused_without_reading_it",
        ),
    ),
    Mutation(
        name="config-pipe-blocks",
        promise="A named pipe given as --config is refused, never waited on",
        where="workbench.core.config:_read_config_bytes",
        old="os.O_RDONLY | os.O_NONBLOCK",
        new="os.O_RDONLY",
        tests=(
            "tests/core/test_config_file_kinds.py::test_a_named_pipe_with_no_writer_is_refused_not_waited_on",
        ),
    ),
    Mutation(
        name="config-size-unbounded",
        promise="A config file over 1 MB is refused, not read whole",
        where="workbench.core.config:_read_config_bytes",
        old="    if len(data) > MAX_CONFIG_BYTES:\n",
        new="    if len(data) > 2 * MAX_CONFIG_BYTES:\n",
        tests=(
            "tests/core/test_config_file_kinds.py::test_a_huge_file_is_refused_and_a_config_at_the_limit_reads",
        ),
    ),
]

# issue 34: a trickling download is given up, and Cancel is heard as bytes come.
MUTATIONS += [
    Mutation(
        name="download-waits-for-whole-chunks",
        promise="Cancel is heard while a download trickles in, not after a 64 KB chunk",
        where="workbench.core.data.download:_stream",
        old="response.read1(_CHUNK_BYTES)",
        new="response.read(_CHUNK_BYTES)",
        tests=(
            "tests/core/test_download_stall.py::test_cancel_is_heard_while_bytes_trickle_in",
        ),
    ),
    Mutation(
        name="download-stall-never-given-up",
        promise="A server trickling bytes is given up as stalled, not waited on for ever",
        where="StallWatch.add",
        old="        if self._bytes < STALL_MIN_BYTES:\n",
        new="        if False:\n",
        tests=(
            "tests/core/test_download_stall.py::test_a_trickling_weights_server_is_given_up_as_stalled",
        ),
    ),
]

# issue 34: Load weights says why it cannot.
MUTATIONS += [
    Mutation(
        name="load-weights-data-error-swallowed",
        promise="File > Load weights says why in a dialog when the data cannot train",
        where="FileActions.load_weights",
        old="        except USER_ERRORS as exc:",
        new="        except (CheckpointError, ConfigError) as exc:",
        tests=(
            "tests/ui/test_load_weights_refusals.py::test_data_that_cannot_train_is_said_not_swallowed",
        ),
    ),
]

# issue 34: ranks end when their launcher dies.
MUTATIONS += [
    Mutation(
        name="ranks-outlive-a-killed-launcher",
        promise="kill -9 of a --nproc launcher stops its ranks (saved), not left training",
        where="workbench.cli.interrupts:end_with_launcher",
        old="        os.kill(os.getpid(), signal.SIGTERM)\n",
        new="        return\n",
        tests=(
            "tests/core/test_distributed_stop.py::test_ranks_stop_and_save_when_their_launcher_is_killed",
        ),
    ),
]

# issue 34: the Image size field shows the size a run will use.
MUTATIONS += [
    Mutation(
        name="image-size-auto-not-shown",
        promise="Image size shows the size the run uses (the weights' 224), marked auto",
        where="DataPanel.show_auto_size",
        old="            self.size_spin.setValue(side)\n",
        new="            pass\n",
        tests=(
            "tests/ui/test_model_panel.py::test_the_preprocessing_line_follows_model_weights_and_dataset",
        ),
    ),
    Mutation(
        name="image-size-auto-cost-unsaid",
        promise="The preprocessing line says an automatic size comes from the weights, and its cost",
        where="workbench.ui.widgets.preprocessing_label:preprocessing_line",
        old="    if auto and default is not None and side != default:\n",
        new="    if False:\n",
        tests=(
            "tests/ui/test_model_panel.py::test_the_preprocessing_line_follows_model_weights_and_dataset",
        ),
    ),
]

# issue 34: saved files get the user's usual mode; --nproc 0 is refused.
MUTATIONS += [
    Mutation(
        name="saved-files-private",
        promise="Checkpoints, scripts and configs are created with the umask's mode, not 0600",
        where="workbench.core.atomic_files:_replace_atomically",
        old="        os.fchmod(fd, mode_for(path))\n",
        new="",
        tests=(
            "tests/core/test_file_modes.py::test_a_script_the_user_saves_is_readable_like_their_other_files",
            "tests/core/test_file_modes.py::test_a_new_file_follows_the_umask",
        ),
    ),
    Mutation(
        name="replaced-file-loses-its-mode",
        promise="A file saved over keeps the mode the user gave it",
        where="workbench.core.atomic_files:mode_for",
        old="        return stat.S_IMODE(path.stat().st_mode)\n",
        new="        return new_file_mode()\n",
        tests=(
            "tests/core/test_file_modes.py::test_a_replaced_file_keeps_its_own_mode",
        ),
    ),
    Mutation(
        name="nproc-zero-accepted",
        promise="--nproc 0 is refused in one line",
        where="workbench.cli.distributed:process_count",
        old="    if count < 1:\n",
        new="    if count < 0:\n",
        tests=(
            "tests/core/test_nproc_flag.py::test_a_process_count_below_one_is_refused",
        ),
    ),
]

# issue 34: messages never name an internal object.
MUTATIONS += [
    Mutation(
        name="unreadable-image-names-a-buffer",
        promise="A file that is no image says so without naming Pillow's in-memory buffer",
        where="workbench.core.data.folder_images:decode_image",
        old="    except UnidentifiedImageError:\n",
        new="    except ZeroDivisionError:\n",
        tests=(
            "tests/ui/test_draw_photos.py::test_files_that_are_no_image_give_a_message_in_the_tab",
        ),
    ),
]

# issue 34: a run's ledger on a full disk.
MUTATIONS += [
    Mutation(
        name="ledger-glued-to-torn-line",
        promise="A record after a torn last line starts a line of its own (nothing glued, nothing lost)",
        where="workbench.core.atomic_files:append_jsonl",
        old='            line = b"\\n" + line\n',
        new="            pass\n",
        tests=(
            "tests/core/test_ledger_full_disk.py::test_a_record_after_a_torn_line_starts_a_line_of_its_own",
        ),
    ),
    Mutation(
        name="ledger-full-disk-fragment-kept",
        promise="A line a full disk cut short is taken back, so the next record reads",
        where="workbench.core.atomic_files:append_jsonl",
        old="                os.ftruncate(fd, size)\n",
        new="                pass\n",
        tests=(
            "tests/core/test_ledger_full_disk.py::test_a_line_the_disk_cut_short_is_taken_back",
        ),
    ),
    Mutation(
        name="ledger-failure-said-every-step",
        promise="A full disk under a run's ledger is said once, not at every step",
        where="RunRecorder._failed",
        old="        if what in self._said:\n            return None\n",
        new="",
        tests=(
            "tests/core/test_ledger_full_disk.py::test_a_full_disk_is_said_once_and_the_ledger_resumes_whole",
        ),
    ),
]

# issue 34: a checkpoint save on a real full disk.
MUTATIONS += [
    Mutation(
        name="checkpoint-full-disk-runtime-error",
        promise="A checkpoint save on a full disk says the disk is full (torch raises RuntimeError)",
        where="workbench.core.atomic_files:torch_save",
        old="        if recording.error is not None:\n            raise recording.error from None\n",
        new="",
        tests=(
            "tests/core/test_run_outputs_full_disk.py::test_a_checkpoint_on_a_full_disk_keeps_the_previous_file",
            "tests/core/test_run_outputs_full_disk.py::test_save_onto_a_full_disk_is_said_once_and_the_run_finishes",
        ),
    ),
]

# issue 34: export onto a full disk, and staging folders a killed export left.
MUTATIONS += [
    Mutation(
        name="export-torchscript-saved-from-cpp",
        promise="Export onto a full disk is one line, not a C++ abort (exit 134) with a half-written file",
        where="workbench.core.export.formats:_torchscript",
        old="    _write_bytes(path, buffer)\n",
        new="    traced.save(str(path))\n",
        tests=(
            "tests/core/test_export_full_disk.py::test_a_full_disk_is_one_line_and_leaves_the_folder_as_it_was",
        ),
    ),
    Mutation(
        name="export-disk-error-taken-for-a-refusal",
        promise="A full disk stops the whole export with one line; nothing there changes",
        where="workbench.core.export.formats:_export_into",
        old="        except OSError:\n            raise  # the disk (full, gone): the whole export stops, nothing kept\n",
        new="",
        tests=(
            "tests/core/test_export_full_disk.py::test_a_full_disk_is_one_line_and_leaves_the_folder_as_it_was",
        ),
    ),
    Mutation(
        name="export-abandoned-staging-kept",
        promise="Hidden staging folders a killed export left are removed by the next export",
        where="workbench.core.export.formats:remove_abandoned_staging",
        old="            shutil.rmtree(folder, ignore_errors=True)\n",
        new="            pass\n",
        tests=(
            "tests/core/test_export_full_disk.py::test_an_abandoned_staging_folder_goes_and_a_live_ones_stays",
        ),
    ),
    Mutation(
        name="export-removes-a-live-staging-folder",
        promise="An export leaves another running export's staging folder alone",
        where="workbench.core.export.formats:remove_abandoned_staging",
        old="        if not (owner.isdigit() and process_alive(int(owner))):\n",
        new="        if True:\n",
        tests=(
            "tests/core/test_export_full_disk.py::test_an_abandoned_staging_folder_goes_and_a_live_ones_stays",
        ),
    ),
]

# issue 34: what runs list says of dead runs; closed jobs are offered again.
MUTATIONS += [
    Mutation(
        name="dead-run-listed-as-running",
        promise="runs list shows a running run whose process is gone as interrupted",
        where="workbench.core.runs.listing:shown_status",
        old='    if status == "running" and not still_training(info):\n',
        new="    if False:\n",
        tests=(
            "tests/core/test_run_status_shown.py::test_a_running_run_whose_process_is_gone_is_listed_as_interrupted",
        ),
    ),
    Mutation(
        name="other-hosts-run-called-interrupted",
        promise="A run training on another host is not called interrupted from here",
        where="workbench.core.runs.folder:still_training",
        old='    if info.get("host") != socket.gethostname():\n        return True\n',
        new="",
        tests=(
            "tests/core/test_run_status_shown.py::test_a_running_run_whose_process_is_gone_is_listed_as_interrupted",
        ),
    ),
    Mutation(
        name="failed-set-up-left-running",
        promise="A new run whose set-up fails is marked failed, not running for ever",
        where="Session.train",
        old='                new.mark("failed")\n',
        new="                pass\n",
        tests=(
            "tests/core/test_run_status_shown.py::test_a_new_run_whose_set_up_fails_is_marked_failed",
        ),
    ),
    Mutation(
        name="closed-job-not-offered-again",
        promise="A job on several processes the closing window stopped is offered for resume on relaunch",
        where="RunController.shutdown",
        old="                mark_closed_if_stopped(RunFolder(job.folder))\n",
        new="                pass\n",
        tests=(
            "tests/ui/test_process_job.py::test_closing_asks_first_and_stops_the_job",
        ),
    ),
]

# issue 34: one run folder, one writer.
MUTATIONS += [
    Mutation(
        name="second-writer-admitted",
        promise="A second resume of a run folder being written is refused before it writes",
        where="WriterLock.__init__",
        old="            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n",
        new="            pass\n",
        tests=(
            "tests/core/test_one_writer.py::test_a_second_resume_of_a_run_being_written_is_refused",
        ),
    ),
]

# issue 34: the decoded-image cache proves its content; a full disk under it
# costs only a decode.
_CACHE_TESTS = "tests/core/test_folder_cache_integrity.py::"
MUTATIONS += [
    Mutation(
        name="folder-cache-digest-unchecked",
        promise="A decoded-image cache whose content fails its digest is not used: the images are decoded again and the cache rebuilt",
        where="workbench.core.data.folder:_read_cache",
        old='        if stored.get("digest") != _content_digest(stored):\n',
        new="        if False:\n",
        tests=(
            f"{_CACHE_TESTS}test_a_cache_with_other_pixels_is_refused_and_rebuilt",
            f"{_CACHE_TESTS}test_a_run_says_its_cache_was_damaged",
        ),
    ),
    Mutation(
        name="folder-cache-full-disk-stops-run",
        promise="A full disk under the decoded-image cache does not stop the run: it trains without the cache",
        where="workbench.core.data.folder:_write_cache",
        old="    except OSError as exc:  # a full or read-only disk costs the next run a decode\n",
        new="    except ValueError as exc:\n",
        tests=(
            f"{_CACHE_TESTS}test_a_full_disk_under_the_cache_trains_without_it_and_says_so",
        ),
    ),
    Mutation(
        name="folder-cache-note-unsaid",
        promise="A run says when its decoded-image cache was damaged or could not be written",
        where="workbench.core.data.folder_loading:folder_loaders",
        old="        if data.cache_note:\n",
        new="        if False:\n",
        tests=(
            f"{_CACHE_TESTS}test_a_run_says_its_cache_was_damaged",
            f"{_CACHE_TESTS}test_a_full_disk_under_the_cache_trains_without_it_and_says_so",
        ),
    ),
]

# issue 34: weights keep their modules' versions (MNASNet checks them).
_META_TESTS = "tests/core/test_state_metadata.py::"
MUTATIONS += [
    Mutation(
        name="snapshot-drops-module-versions",
        promise="A copy of a model's weights (the Draw tab's reader, fine-tuning, Load weights) keeps the modules' versions, so MNASNet loads it",
        where="workbench.core.models.builtins:snapshot_state",
        old="    return copy_metadata(copy, state)  # module versions, which loading may check\n",
        new="    return copy\n",
        tests=(
            f"{_META_TESTS}test_a_snapshot_keeps_the_module_versions_and_loads_into_mnasnet",
        ),
    ),
    Mutation(
        name="strip-prefixes-drops-module-versions",
        promise="Loading saved or compiled weights keeps their modules' versions (MNASNet's --resume, Open, predict)",
        where="workbench.core.models.state_dict_match:strip_wrapper_prefixes",
        old="    if metadata is not None:\n",
        new="    if False:\n",
        tests=(
            f"{_META_TESTS}test_a_saved_state_loads_back_into_mnasnet",
            f"{_META_TESTS}test_a_compiled_models_prefixed_state_keeps_its_versions_unprefixed",
        ),
    ),
    Mutation(
        name="plain-dict-has-no-module-versions",
        promise="A plain dict of weights without versions loads as this code's module versions",
        where="workbench.core.models.state_dict_match:load_exact",
        old='    if getattr(cleaned, "_metadata", None) is None:\n',
        new="    if False:\n",
        tests=(
            f"{_META_TESTS}test_a_plain_dict_without_versions_loads_as_this_codes_versions",
        ),
    ),
]

# issue 34: Reproduce trains on the run's own processes and always ends with a verdict.
_REPRO_TESTS = "tests/ui/test_reproduce_processes.py::"
MUTATIONS += [
    Mutation(
        name="reproduce-on-the-device-panels-processes",
        promise="Reproduce trains a run on its own number of processes, whatever the Device panel's Processes says",
        where="workbench.ui.window.runs:RunsTab.reproduce",
        old="        w.start(nproc=run.world_size)\n",
        new="        w.start()\n",
        tests=(
            f"{_REPRO_TESTS}test_a_one_process_run_is_reproduced_in_the_window_while_processes_is_two",
            f"{_REPRO_TESTS}test_a_two_process_run_is_reproduced_on_two_processes_with_a_verdict",
        ),
    ),
    Mutation(
        name="reproduce-job-never-judged",
        promise="A reproduction on several processes ends with a verdict comparing every logged loss",
        where="workbench.ui.window.runs:RunsTab.after_job",
        old="            verdict = judge_repeat(original, RunFolder(ended.folder))\n",
        new="            pass\n",
        tests=(
            f"{_REPRO_TESTS}test_a_two_process_run_is_reproduced_on_two_processes_with_a_verdict",
        ),
    ),
    Mutation(
        name="reproduce-job-left-pending-in-the-session",
        promise="A reproduction on several processes leaves nothing pending: the next run is not judged against the original",
        where="workbench.ui.window.runs:RunsTab.reproduce",
        old="            session.reproducing = None\n            self._job_reproducing = run.folder\n",
        new="            self._job_reproducing = run.folder\n",
        tests=(
            f"{_REPRO_TESTS}test_a_two_process_run_is_reproduced_on_two_processes_with_a_verdict",
        ),
    ),
    Mutation(
        name="reproduce-stopped-without-a-verdict",
        promise="A reproduction stopped early still ends with a verdict in the Runs tab and the status bar",
        where="workbench.ui.window.runs:RunsTab.after_run",
        old="        self.window.set_status(text)\n",
        new="",
        tests=(f"{_REPRO_TESTS}test_a_reproduction_stopped_early_ends_with_a_verdict",),
    ),
]
MUTATIONS += [
    Mutation(
        name="cli-reproduces-a-multi-process-run-on-one",
        promise="runs reproduce does not repeat a run of several processes on one: it says where to reproduce it",
        where="workbench.cli.runs:_reproduce",
        old="    if summary is not None and summary.world_size > 1:\n",
        new="    if False:\n",
        tests=(
            "tests/core/test_ledger_verdicts.py::test_runs_reproduce_refuses_a_run_of_several_processes_saying_where",
        ),
    ),
]

# issue 34: check-data names byte-identical images within and across classes.
MUTATIONS += [
    Mutation(
        name="check-data-misses-an-image-under-two-classes",
        promise="check-data names the same image filed under two classes",
        where="workbench.core.data.folder_check:_check_duplicates",
        old="            if name != first_class:\n",
        new="            if False:\n",
        tests=(
            "tests/core/test_folder_check.py::test_byte_identical_images_are_named_within_and_across_classes",
            "tests/core/test_folder_check.py::test_on_the_command_line_an_image_under_two_classes_is_reported",
        ),
    ),
    Mutation(
        name="check-data-misses-duplicates-in-one-class",
        promise="check-data names the same image twice in one class",
        where="workbench.core.data.folder_check:_check_duplicates",
        old="        for split, name, path in entries[1:]:\n",
        new="        for split, name, path in [e for e in entries[1:] if e[1] != first_class or e[0] != first_split]:\n",
        tests=(
            "tests/core/test_folder_check.py::test_byte_identical_images_are_named_within_and_across_classes",
        ),
    ),
]

# issue 34: one rule for images too large to decode (check-data, a run, predict).
_SIZE_RULE = "tests/core/test_image_size_rule.py::"
MUTATIONS += [
    Mutation(
        name="image-decoded-whatever-its-size",
        promise="An image that would take more than 256 MB decoded is refused, in one line, by check-data, a run and predict alike",
        where="workbench.core.data.folder_images:decode_image",
        old="        _check_decoded_size(image)\n",
        new="",
        tests=(
            f"{_SIZE_RULE}test_check_data_names_the_large_image_and_its_cost",
            f"{_SIZE_RULE}test_a_run_skips_it_with_the_same_reason",
            f"{_SIZE_RULE}test_predict_refuses_it_in_one_line_for_a_photo_and_a_digit_model",
        ),
    ),
    Mutation(
        name="digit-reader-has-its-own-image-rule",
        promise="predict on a digit model reads a file under the same rule as check-data and a run",
        where="workbench.core.predict:load_image",
        old="            image, _original = decode_image(read_image_bytes(path), DIGIT_DECODE_SIDE)\n",
        new="            image = Image.open(path)\n",
        tests=(
            f"{_SIZE_RULE}test_predict_refuses_it_in_one_line_for_a_photo_and_a_digit_model",
            f"{_SIZE_RULE}test_predict_on_the_command_line_says_one_line",
        ),
    ),
    Mutation(
        name="predict-cli-names-the-file-twice",
        promise="predict's line for a refused file names the file once",
        where="workbench.core.predict_batch:skip_reason",
        old='    return str(exc).removeprefix(f"{path}: ")\n',
        new="    return str(exc)\n",
        tests=(
            f"{_SIZE_RULE}test_predict_on_the_command_line_says_one_line",
            "tests/core/test_cli.py::test_predict_reports_unreadable_images",
        ),
    ),
]

# issue 34: a model file that ends the program or never finishes importing.
_EXITS = "tests/core/test_model_file_exits.py::"
MUTATIONS += [
    Mutation(
        name="ctrl-c-waits-for-a-step-that-never-comes",
        promise="Until the run is prepared, the first Ctrl+C ends train at once (a model file's import may never return)",
        where="workbench.cli.train_loop:follow_training",
        old="    control = TrainControl()\n",
        new="    control = TrainControl()\n    stop_on_first_interrupt(control)\n",
        tests=(f"{_EXITS}test_the_first_ctrl_c_ends_an_import_that_never_returns",),
    ),
    Mutation(
        name="model-file-sys-exit-ends-the-command",
        promise="A model file that calls sys.exit while it is imported is one line naming it, exit 2",
        where="workbench.core.models.user_file:_run_file",
        old="    except SystemExit as exc:\n        raise ModelFileError(_exited(path, exc)) from None\n",
        new="",
        tests=(
            f"{_EXITS}test_sys_exit_anywhere_in_the_file_is_one_line_naming_it",
            f"{_EXITS}test_train_says_so_and_exits_2_not_3",
        ),
    ),
    Mutation(
        name="model-builder-sys-exit-ends-the-command",
        promise="A model whose constructor or forward calls sys.exit is one line naming its file",
        where="workbench.core.models.user_file:build_from_file",
        old="    except SystemExit as exc:\n        raise ModelFileError(_exited(path, exc)) from None\n",
        new="",
        tests=(f"{_EXITS}test_sys_exit_anywhere_in_the_file_is_one_line_naming_it",),
    ),
]

# issue 34: predict.py validates the files beside it.
_EXPORT_PREDICT = "tests/core/test_export_predict.py::"
MUTATIONS += [
    Mutation(
        name="predict-py-divides-by-a-zero-std",
        promise="predict.py refuses a preprocess.json whose std is 0 (NaN probabilities otherwise), in one line",
        where="workbench.core.export.predict_template:check_recipe",
        old='    need("std", lambda v: all(s > 0 for s in v), "above 0 (pixels are divided by it)")\n',
        new="",
        tests=(
            f"{_EXPORT_PREDICT}test_a_tampered_preprocess_json_is_refused_in_one_line",
        ),
    ),
    Mutation(
        name="predict-py-trusts-preprocess-json",
        promise="predict.py checks preprocess.json before it reads a picture",
        where="workbench.core.export.predict_template:main",
        old='        recipe = check_recipe(read_json("preprocess.json"))\n',
        new='        recipe = read_json("preprocess.json")\n',
        tests=(
            f"{_EXPORT_PREDICT}test_a_zero_std_or_other_labels_end_predict_py_with_one_line",
        ),
    ),
    Mutation(
        name="predict-py-labels-of-another-export",
        promise="predict.py says so in one line when labels.json does not match the model's outputs",
        where="workbench.core.export.predict_template:main",
        old="        if len(probs) != len(labels):\n",
        new="        if False:\n",
        tests=(
            f"{_EXPORT_PREDICT}test_a_zero_std_or_other_labels_end_predict_py_with_one_line",
        ),
    ),
    Mutation(
        name="predict-py-takes-any-labels",
        promise="predict.py refuses a labels.json that is no list of distinct class names",
        where="workbench.core.export.predict_template:check_labels",
        old="    if len(set(labels)) != len(labels):\n",
        new="    if False:\n",
        tests=(f"{_EXPORT_PREDICT}test_a_tampered_labels_json_is_refused_in_one_line",),
    ),
]

# issue 34 item 30: the export folder dialog, and the Data panel's idle Cancel.
_EXPORT_DIALOG = "tests/ui/test_export_folder_dialog.py::"
MUTATIONS += [
    Mutation(
        name="export-dialog-opens-in-the-data-folder",
        promise="The export folder dialog opens where the last export went, else in the documents, never in the data folder",
        where="workbench.ui.dialogs:get_export_folder",
        old="    start = window_state.last_folder(settings, EXPORT_KIND) or str(_documents())\n",
        new='    start = window_state.last_folder(settings, "folder") or str(_documents())\n',
        tests=(
            f"{_EXPORT_DIALOG}test_the_dialog_opens_in_documents_not_the_data_folder_and_takes_a_new_name",
        ),
    ),
    Mutation(
        name="export-dialog-refuses-a-new-name",
        promise="The export folder dialog takes the name of a folder that does not exist yet",
        where="workbench.ui.dialogs:get_export_folder",
        old="    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)\n",
        new="    dialog.setFileMode(QFileDialog.FileMode.Directory)\n",
        tests=(
            f"{_EXPORT_DIALOG}test_the_dialog_opens_in_documents_not_the_data_folder_and_takes_a_new_name",
        ),
    ),
    Mutation(
        name="export-fills-a-folder-without-asking",
        promise="Exporting into a folder that holds files asks first; No writes nothing",
        where="workbench.ui.window.export:ExportActions._may_fill",
        old="        if not held:\n",
        new="        if True:\n",
        tests=(f"{_EXPORT_DIALOG}test_a_folder_that_holds_files_is_asked_about_first",),
    ),
    Mutation(
        name="download-cancel-enabled-when-idle",
        promise="The Data panel's Cancel is hidden and disabled with no download to cancel",
        where="workbench.ui.panels.download_row:DownloadRow.__init__",
        old="        self.cancel_button.setEnabled(False)  # nothing to cancel yet\n",
        new="",
        tests=(
            "tests/ui/test_data_panel.py::test_cancel_and_the_bar_stay_hidden_and_disabled_with_nothing_to_cancel",
        ),
    ),
]

# issue 34 item 31: said before Start.
MUTATIONS += [
    Mutation(
        name="code-tab-step-for-step-on-several-processes",
        promise="The Code tab promises step for step only when the window trains on one process",
        where="workbench.ui.code_view:CodeView.show_caption",
        old="            CAPTION if processes <= 1 else SEVERAL_CAPTION.format(processes=processes)\n",
        new="            CAPTION\n",
        tests=(
            "tests/ui/test_start_notes.py::test_the_code_tab_promises_step_for_step_only_on_one_process",
        ),
    ),
    Mutation(
        name="compile-cost-unsaid-beside-start",
        promise="torch.compile left on is said beside Start, with its cost and the feature cache it turns off",
        where="workbench.ui.panels.training:TrainingPanel.show_compile_note",
        old="        self.start_note.setVisible(compiling)\n",
        new="        self.start_note.setVisible(False)\n",
        tests=(
            "tests/ui/test_start_notes.py::test_torch_compile_left_on_is_said_beside_start",
        ),
    ),
]

# issue 34 item 28: the Runs tab and Open recent, readable.
_RUNS_PANEL = "tests/ui/test_runs_panel.py::"
MUTATIONS += [
    Mutation(
        name="runs-current-row-bolded-after-measuring",
        promise="The current run's bold cells in the Runs table are not elided",
        where="workbench.ui.panels.runs_table:RunsTable.mark_current",
        old="        self._fit_columns()  # bold text is wider: its cells must not be elided\n",
        new="",
        tests=(f"{_RUNS_PANEL}test_the_current_runs_bold_cells_are_not_elided",),
    ),
    Mutation(
        name="runs-diff-shows-a-long-list-whole",
        promise="A long config value (the frozen layers) is shortened in the comparison, whole in its tooltip, so the runs stay side by side",
        where="workbench.ui.panels.runs:_shown_value",
        old="    if len(text) <= SHOWN_CHARS:\n",
        new="    if True:\n",
        tests=(f"{_RUNS_PANEL}test_a_long_frozen_list_leaves_both_runs_side_by_side",),
    ),
    Mutation(
        name="recent-names-checkpoints-by-file",
        promise="Open recent names a run's checkpoint by its run (model, dataset, time or name), not five times checkpoint.pt",
        where="workbench.ui.window.recent_files:recent_entries",
        old="        run = run_label(p)\n",
        new='        run = ""\n',
        tests=(
            "tests/ui/test_checkpoints_ui.py::test_open_recent_names_a_runs_checkpoint_by_its_run",
        ),
    ),
]

# issue 34 item 33: predict a whole folder (predict DIR --csv, the Try-an-image table).
_PF = "tests/core/test_predict_folder.py::"
_PF_UI = "tests/ui/test_predict_folder_ui.py::"
MUTATIONS += [
    Mutation(
        name="folder-images-by-exact-suffix",
        promise="a folder's images are found by suffix in any case (.JPG, .Jpeg), in subfolders too, sorted",
        where="workbench.core.predict_batch:image_files",
        old="        if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file()\n",
        new="        if path.suffix in IMAGE_SUFFIXES and path.is_file()\n",
        tests=(
            f"{_PF}test_a_folders_images_are_listed_recursively_sorted_by_suffix_in_any_case",
        ),
    ),
    Mutation(
        name="folder-images-not-in-subfolders",
        promise="a folder's images include those of its subfolders",
        where="workbench.core.predict_batch:image_files",
        old='        for path in Path(folder).rglob("*")\n',
        new='        for path in Path(folder).glob("*")\n',
        tests=(
            f"{_PF}test_a_folders_images_are_listed_recursively_sorted_by_suffix_in_any_case",
            f"{_PF}test_predict_reads_a_folder_into_a_csv_as_it_reads_each_file",
        ),
    ),
    Mutation(
        name="unreadable-file-ends-the-batch",
        promise="a file that cannot be read is kept with its reason and the batch goes on",
        where="workbench.core.predict_batch:read_files",
        old="            yield FileResult(path, error=skip_reason(path, exc))\n",
        new="            return\n",
        tests=(
            f"{_PF}test_predict_reads_a_folder_into_a_csv_as_it_reads_each_file",
            f"{_PF_UI}test_a_dropped_folder_is_read_into_a_table_of_file_class_confidence",
        ),
    ),
    Mutation(
        name="batch-ignores-cancel",
        promise="Cancel stops reading the files after the one being read",
        where="workbench.core.predict_batch:read_files",
        old="        if cancel is not None and cancel():\n",
        new="        if False:\n",
        tests=(
            f"{_PF_UI}test_cancel_stops_after_the_file_being_read_and_shows_what_was_read",
        ),
    ),
    Mutation(
        name="csv-drops-the-skip-reason",
        promise="a skipped file's reason is in the CSV's error column",
        where="workbench.core.predict_batch:csv_text",
        old="        writer.writerow([*row, result.error])\n",
        new='        writer.writerow([*row, ""])\n',
        tests=(
            f"{_PF}test_predict_reads_a_folder_into_a_csv_as_it_reads_each_file",
            f"{_PF_UI}test_export_csv_writes_the_rows_shown_with_a_skipped_files_reason",
        ),
    ),
    Mutation(
        name="predict-skips-in-silence",
        promise="predict says each unreadable file in one line on stderr",
        where="workbench.cli.predict:_read_all",
        old='                tqdm.write(f"{result.path}: {result.error}", file=sys.stderr)\n',
        new="                pass\n",
        tests=(f"{_PF}test_predict_reads_a_folder_into_a_csv_as_it_reads_each_file",),
    ),
    Mutation(
        name="predict-exit-0-with-skipped-files",
        promise="predict exits 1 when a file was skipped",
        where="workbench.cli.predict:cmd_predict",
        old="    return 1 if skipped or empty else 0\n",
        new="    return 1 if empty else 0\n",
        tests=(f"{_PF}test_predict_reads_a_folder_into_a_csv_as_it_reads_each_file",),
    ),
    Mutation(
        name="predict-csv-write-failure-exit-0",
        promise="a --csv that cannot be written is one line and exit 1",
        where="workbench.cli.predict:cmd_predict",
        old='            sys.stderr.write(failed + "\\n")\n            return 1\n',
        new="            return 0\n",
        tests=(f"{_PF}test_a_csv_that_is_a_folder_or_cannot_be_written_is_one_line",),
    ),
    Mutation(
        name="predict-no-progress-bar",
        promise="predict shows a progress bar for many files on a terminal",
        where="workbench.cli.predict:_read_all",
        old="    show_bar = len(files) >= PROGRESS_FROM and sys.stderr.isatty()\n",
        new="    show_bar = False\n",
        tests=(f"{_PF}test_predict_shows_progress_for_many_files_on_a_terminal",),
    ),
    Mutation(
        name="table-sorts-confidence-as-text",
        promise="the table sorts confidence by value (9.5% before 10.2%), not by its text",
        where="workbench.ui.panels.predictions_table:_row",
        old='        _item(f"{100 * result.confidence:.1f}%", result.confidence, ranked),\n',
        new='        _item(f"{100 * result.confidence:.1f}%", f"{100 * result.confidence:.1f}%", ranked),\n',
        tests=(f"{_PF_UI}test_each_column_sorts_confidence_by_value_not_by_its_text",),
    ),
    Mutation(
        name="table-hides-the-skip-reason",
        promise="a skipped file's row in the table says why it was not read",
        where="workbench.ui.panels.predictions_table:_row",
        old='        why = _item(f"not read: {result.error}", "\\uffff" + result.error, result.error)\n',
        new='        why = _item("not read", "\\uffff" + result.error, result.error)\n',
        tests=(
            f"{_PF_UI}test_a_dropped_folder_is_read_into_a_table_of_file_class_confidence",
        ),
    ),
    Mutation(
        name="export-csv-in-file-order",
        promise="Export CSV writes the rows in the order the table shows them",
        where="PredictionsTable.export_dialog",
        old="            write_csv(path, self.results(), top=CSV_TOP)\n",
        new="            write_csv(path, self._results, top=CSV_TOP)\n",
        tests=(
            f"{_PF_UI}test_export_csv_writes_the_rows_shown_with_a_skipped_files_reason",
        ),
    ),
    Mutation(
        name="one-dropped-file-goes-to-the-table",
        promise="one file opened or dropped is read on the tab as before, not into the table",
        where="DrawPanel.open_paths",
        old="        if len(paths) == 1 and not paths[0].is_dir():\n",
        new="        if False:\n",
        tests=(
            f"{_PF_UI}test_several_chosen_files_fill_the_table_and_one_reads_as_before",
        ),
    ),
    Mutation(
        name="batch-reads-with-the-tabs-own-reader",
        promise="a batch reads every file with the weights it started with, whatever the tab loads meanwhile",
        where="FolderReading.start",
        old="        reader = copy.deepcopy(predictor)\n",
        new="        reader = predictor\n",
        tests=(f"{_PF_UI}test_weights_loaded_while_a_batch_reads_do_not_reach_it",),
    ),
    Mutation(
        name="table-does-not-name-the-folder",
        promise="the table names the folder it read",
        where="workbench.ui.panels.predict_folder:describe",
        old='        return f"Folder {folder.name or folder}: {count:,} image files", folder\n',
        new='        return f"{count:,} files", folder\n',
        tests=(
            f"{_PF_UI}test_a_dropped_folder_is_read_into_a_table_of_file_class_confidence",
        ),
    ),
]

# issue 34 item 29: captions and axes.
MUTATIONS += [
    Mutation(
        name="gallery-caption-cuts-the-confidence",
        promise="An evaluation thumbnail's confidence comes first, so long class names cannot cut it off",
        where="workbench.ui.widgets.cell_images:CellImages.show_images",
        old='                    self._icon(images, i), f"{confidence:.0%}\\n{title}"\n',
        new='                    self._icon(images, i), f"{title}\\n{confidence:.0%}"\n',
        tests=(
            "tests/ui/test_evaluation_panel.py::test_every_cell_lists_exactly_its_images_hardest_first",
        ),
    ),
    Mutation(
        name="accuracy-axis-unbounded",
        promise="The accuracy plot never shows negative epochs or more than 100 %",
        where="workbench.ui.plots.live_plot:LivePlot.__init__",
        old="        if y_limits is not None:\n",
        new="        if False:\n",
        tests=(
            "tests/ui/test_plots.py::test_the_axes_never_show_negative_epochs_or_more_than_100_percent",
        ),
    ),
    Mutation(
        name="cleared-plot-keeps-the-last-axes",
        promise="A cleared plot shows an empty view while the next run starts, not the last run's axes",
        where="workbench.ui.plots.live_plot:LivePlot.clear_data",
        old="        self.setRange(xRange=x_range, yRange=y_range, padding=0)\n",
        new="",
        tests=(
            "tests/ui/test_plots.py::test_a_cleared_plot_shows_an_empty_view_not_the_last_runs_axes",
        ),
    ),
]

# issue 34 item 26: texts right in the corner cases.
_TEXTS = "tests/ui/test_stale_texts.py::"
MUTATIONS += [
    Mutation(
        name="small-trainable-share-reads-zero",
        promise="A small trainable share keeps its digits (1,539 of 11 M reads 0.014%, not 0.0%)",
        where="workbench.ui.formatting:trainable_share",
        old='    return f"{share:.2g}%" if share >= 0.01 else "<0.01%"\n',
        new='    return f"{share:.1f}%"\n',
        tests=(
            f"{_TEXTS}test_a_small_trainable_share_keeps_its_digits",
            f"{_TEXTS}test_the_model_panel_counts_a_small_trainable_share",
        ),
    ),
    Mutation(
        name="unmeasured-speed-reads-nan",
        promise="No measured speed reads as a dash, not nan img/s",
        where="workbench.ui.formatting:rate",
        old='    return f"{images_per_s:,.0f}" if math.isfinite(images_per_s) else "\\u2013"\n',
        new='    return f"{images_per_s:,.0f}"\n',
        tests=(f"{_TEXTS}test_no_measured_speed_reads_as_a_dash_not_nan",),
    ),
    Mutation(
        name="one-classes",
        promise="check-data says 1 class, not 1 classes",
        where="workbench.core.data.folder_check:DataReport.lines",
        old='        named = f"{count} class" + ("" if count == 1 else "es")\n',
        new='        named = f"{count} classes"\n',
        tests=(f"{_TEXTS}test_one_class_is_not_one_classes",),
    ),
    Mutation(
        name="job-stopped-early-claims-a-checkpoint",
        promise="A job stopped while its processes start says nothing was trained or saved",
        where="workbench.ui.window.job_view:JobView._on_controller_job_ended",
        old="        elif last is None:  # stopped while the processes started: nothing trained\n",
        new="        elif False:\n",
        tests=(
            f"{_TEXTS}test_a_job_stopped_while_its_processes_start_claims_no_step_or_checkpoint",
        ),
    ),
]

# issue 34 item 24: the settings column fits its content.
_WIDTH = "tests/ui/test_settings_width.py::"
MUTATIONS += [
    Mutation(
        name="settings-column-keeps-its-first-width",
        promise="The settings column grows with its content (an image folder's rows) instead of cutting it at the right",
        where="workbench.ui.window.layout:FollowContentWidth.eventFilter",
        old="        if event.type() == QEvent.Type.LayoutRequest:\n",
        new="        if False:\n",
        tests=(
            f"{_WIDTH}test_an_image_folder_leaves_the_settings_column_whole[size0]",
            f"{_WIDTH}test_an_image_folder_leaves_the_settings_column_whole[size1]",
        ),
    ),
    Mutation(
        name="augment-strip-widens-the-settings",
        promise="Photos in the augmentation strip shrink to the column instead of widening it",
        where="workbench.ui.widgets.augment_strip:FitWidthLabel.__init__",
        old="        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)\n",
        new="        self.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Preferred)\n",
        tests=(
            f"{_WIDTH}test_an_image_folder_leaves_the_settings_column_whole[size0]",
        ),
    ),
]

# issue 34 items 35, 27 (and 26's feature-cache line): a large model's preview
# built aside, the freeze selection carried over, the Model panel's lines.
_PREVIEW = "tests/ui/test_model_preview.py::"
_PREVIEW_BUILD = "tests/core/test_preview_build.py::"
_ROUND_TRIP = "tests/core/test_catalog_round_trip.py::"
MUTATIONS += [
    Mutation(
        name="large-preview-built-on-the-gui-thread",
        promise="A large model's preview is built off the GUI thread while the tree says Building and the window keeps working",
        where="ModelPreview._replace",
        old="        if estimate is not None and estimate >= BACKGROUND_FROM:\n",
        new="        if False:\n",
        tests=(
            f"{_PREVIEW}test_a_large_preview_is_built_aside_while_the_window_works",
        ),
    ),
    Mutation(
        name="stale-preview-shown",
        promise="A preview that finishes for a model no longer chosen is dropped",
        where="ModelPreview._on_task_succeeded",
        old="        if build is None or build.token != token:\n",
        new="        if build is None:\n",
        tests=(f"{_PREVIEW}test_walking_the_list_builds_only_the_last_choice",),
    ),
    Mutation(
        name="every-choice-of-the-list-built",
        promise="Walking the model list builds only the last choice: one build at a time, the newest next",
        where="ModelPreview._build_later",
        old="        if self._task is None:\n            self._start_task()\n",
        new="        if True:\n            self._start_task()\n",
        tests=(f"{_PREVIEW}test_walking_the_list_builds_only_the_last_choice",),
    ),
    Mutation(
        name="start-ignores-the-preview-being-built",
        promise="Start pressed while a preview is built waits for it, then runs with the mask it shows",
        where="MainWindow.start",
        old="        if self.state is not RunState.IDLE or self.preview.start_waits(nproc):\n",
        new="        if self.state is not RunState.IDLE:\n",
        tests=(f"{_PREVIEW}test_start_waits_for_the_preview_and_runs_with_its_mask",),
    ),
    Mutation(
        name="freeze-selection-reset-by-a-new-preview",
        promise="Another dataset (or model) keeps the freeze selection for the parameters of the same name",
        where="ModelPreview._replace",
        old="        mask = Mask(tuple(frozen)) if frozen is not None else self._mask_now()\n",
        new="        mask = Mask(tuple(frozen)) if frozen is not None else None\n",
        tests=(
            f"{_PREVIEW}test_the_freeze_selection_survives_a_dataset_change",
            f"{_PREVIEW}test_a_selection_another_model_cannot_take_is_said_once",
        ),
    ),
    Mutation(
        name="lost-freeze-selection-unsaid",
        promise="A freeze selection another model cannot take is said once in the status bar",
        where="ModelPreview._apply_mask",
        old="        if self._note:\n            w.set_status(self._note)\n",
        new="",
        tests=(f"{_PREVIEW}test_a_selection_another_model_cannot_take_is_said_once",),
    ),
    Mutation(
        name="carried-mask-ignores-the-new-names",
        promise="A mask carries over only to parameters of the same name, in the new model's order",
        where="carry_mask",
        old="        frozen=tuple(n for n in present if n in wanted),\n",
        new="        frozen=tuple(wanted),\n",
        tests=(
            "tests/core/test_freezing_carry.py::test_names_the_new_model_lacks_are_lost_and_said",
        ),
    ),
    Mutation(
        name="preview-seeds-the-global-generator",
        promise="A preview built aside never seeds or draws from the global random generator a run uses",
        where="build_preview",
        old="        return build_model(key[0], key[1], input_shape=key[2])\n",
        new="        return build_model(key[0], key[1], seed=seed, input_shape=key[2])\n",
        tests=(
            f"{_PREVIEW_BUILD}test_the_preview_has_the_seeded_weights_and_never_seeds_the_global_generator",
        ),
    ),
    Mutation(
        name="preview-draws-from-the-global-generator",
        promise="A preview built aside has the seeded build's weights, drawn from its own generator",
        where="PrivateRandom.__torch_function__",
        old='        if draws and kwargs.get("generator") is None:\n',
        new="        if False:\n",
        tests=(
            f"{_PREVIEW_BUILD}test_the_preview_has_the_seeded_weights_and_never_seeds_the_global_generator",
        ),
    ),
    Mutation(
        name="cancelled-preview-leaves-grad-off",
        promise="A cancelled preview build stops at a tensor it makes, never in no_grad's exit (gradients stay on)",
        where="PrivateRandom.__torch_function__",
        old='        if (draws or getattr(func, "__name__", "") in _ALLOCATES) and self._cancel():\n',
        new="        if self._cancel():\n",
        tests=(
            f"{_PREVIEW_BUILD}test_a_cancelled_build_stops_at_a_tensor_it_makes_and_leaves_gradients_on",
        ),
    ),
    Mutation(
        name="training-cost-unsaid",
        promise="The Model panel says what a large model needs to train and whether this computer has it",
        where="ModelPreview._show_cost",
        old="        if parameters >= BACKGROUND_FROM:  # a large model: say what it takes\n",
        new="        if False:\n",
        tests=(f"{_PREVIEW}test_a_large_model_says_what_training_it_costs_here",),
    ),
    Mutation(
        name="training-cost-fits-inverted",
        promise="The training cost says 'more than' only when the memory is short",
        where="training_cost",
        old="    if need > memory:\n",
        new="    if need < memory:\n",
        tests=(
            f"{_PREVIEW_BUILD}test_the_training_cost_says_the_memory_and_whether_it_fits",
        ),
    ),
    Mutation(
        name="feature-cache-line-outlives-its-model",
        promise="The Model panel's feature-cache line is the shown model's: another model replaces the last run's word",
        where="ModelPreview.show_model",
        old="        w.model_panel.predict_feature_cache(trainable_before_head(model))\n",
        new="",
        tests=(
            f"{_PREVIEW}test_the_feature_cache_line_follows_the_shown_model_and_mask",
        ),
    ),
    Mutation(
        name="feature-cache-line-names-a-parameter-of-a-fully-trainable-model",
        promise="With nothing frozen the feature-cache line says every layer trains, not the first parameter",
        where="feature_cache_line",
        old="        if every_layer_trains:\n",
        new="        if False:\n",
        tests=(
            f"{_PREVIEW}test_each_feature_cache_status_reads_plainly",
            f"{_PREVIEW}test_the_feature_cache_line_follows_the_shown_model_and_mask",
        ),
    ),
]

# issue 34 item 25: a run's time includes its preparation, said apart.
MUTATIONS += [
    Mutation(
        name="preparation-time-unrecorded",
        promise="A run records the time from Start to its first step (data, model, feature cache) apart from its training time",
        where="workbench.core.session:Session.train",
        old="                if isinstance(event, E.RunStarted) and recorder is not None:\n",
        new="                if False:\n",
        tests=(
            "tests/core/test_prepare_time.py::test_the_preparation_is_recorded_apart_and_added_over_continues",
        ),
    ),
    Mutation(
        name="preparation-forgotten-on-continue",
        promise="The preparation time adds up over continues, like the training time",
        where="workbench.core.runs.recorder:RunRecorder.prepared",
        old="            self.folder.update(prepare_seconds=self._preparing_before + seconds)\n",
        new="            self.folder.update(prepare_seconds=seconds)\n",
        tests=(
            "tests/core/test_prepare_time.py::test_the_preparation_is_recorded_apart_and_added_over_continues",
        ),
    ),
    Mutation(
        name="took-leaves-out-the-preparation",
        promise="The Runs tab's Took is the whole time, the preparation in brackets",
        where="workbench.ui.panels.runs_table:time_text",
        old="    total = duration(run.seconds + run.prepare_seconds)\n",
        new="    total = duration(run.seconds)\n",
        tests=(
            "tests/ui/test_runs_time.py::test_the_runs_table_shows_the_whole_time_and_the_preparation",
        ),
    ),
]

# issue 34 item 32: the plain script reads an image folder as the workbench does.
_FOLDER_SCRIPT = "tests/core/test_script_folders.py"
_FOLDER_SAME = f"{_FOLDER_SCRIPT}::test_the_folder_script_repeats_train_bit_for_bit"
_FOLDER_BLOCKS = "workbench.core.script.folder_data:FOLDER_DATA"
MUTATIONS += [
    Mutation(
        name="folder-script-drops-upper-case-suffixes",
        promise="The script lists a folder's images as the workbench does, .PNG and .JPG included",
        where=_FOLDER_BLOCKS,
        old="                if path.suffix.lower() in IMAGE_SUFFIXES:\n",
        new="                if path.suffix in IMAGE_SUFFIXES:\n",
        tests=(f"{_FOLDER_SAME}[gray-auto-split-small-cnn]",),
    ),
    Mutation(
        name="folder-script-ignores-train-val-folders",
        promise="The script trains on a folder's own train/ and val/ split when it has one",
        where=_FOLDER_BLOCKS,
        old='    if (root / "train").is_dir():\n',
        new="    if False:\n",
        tests=(f"{_FOLDER_SAME}[colour-split-resnet18-pretrained]",),
    ),
    Mutation(
        name="folder-script-splits-with-another-seed",
        promise="The script holds out the same seeded, stratified share of each class",
        where=_FOLDER_BLOCKS,
        old="    generator = torch.Generator().manual_seed(SEED)\n",
        new="    generator = torch.Generator().manual_seed(SEED + 1)\n",
        tests=(f"{_FOLDER_SAME}[gray-auto-split-small-cnn]",),
    ),
    Mutation(
        name="folder-script-stretches-instead-of-cropping",
        promise="The script resizes an image's shorter side and crops its centre, as the workbench does",
        where=_FOLDER_BLOCKS,
        old="        image = TF.resize(image, IMAGE_SIZE)\n",
        new="        image = TF.resize(image, [IMAGE_SIZE, IMAGE_SIZE])\n",
        tests=(f"{_FOLDER_SAME}[gray-auto-split-small-cnn]",),
    ),
    Mutation(
        name="folder-script-fails-on-an-unreadable-file",
        promise="The script skips (and names) a file that does not decode, as the workbench does",
        where=_FOLDER_BLOCKS,
        old="        except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:\n",
        new="        except (SyntaxError, ValueError, Image.DecompressionBombError) as exc:\n",
        tests=(f"{_FOLDER_SAME}[gray-auto-split-small-cnn]",),
    ),
    Mutation(
        name="folder-script-always-colour",
        promise="A folder of gray images trains on one channel in the script, as in the workbench",
        where=_FOLDER_BLOCKS,
        old="    channels = 1 if all(pixels.ndim == 2 for pixels in decoded.values()) else 3\n",
        new="    channels = 3\n",
        tests=(f"{_FOLDER_SAME}[gray-auto-split-small-cnn]",),
    ),
    Mutation(
        name="folder-script-statistics-unrounded",
        promise="The script normalises with the training images' statistics exactly as the workbench computes them",
        where=_FOLDER_BLOCKS,
        old="        tuple(round(v, 6) for v in mean.tolist()),\n",
        new="        tuple(mean.tolist()),\n",
        tests=(f"{_FOLDER_SAME}[gray-auto-split-small-cnn]",),
    ),
    Mutation(
        name="folder-script-gray-statistics-not-repeated",
        promise="Gray images for a torchvision model: the script repeats the channel and its statistics",
        where="workbench.core.script.folder_data:folder_setup",
        old='                "    if channels == 1:  # gray repeated to three: its statistics too\\n"\n',
        new='                "    if False:  # gray repeated to three: its statistics too\\n"\n',
        tests=(f"{_FOLDER_SAME}[gray-resnet18-fresh]",),
    ),
    Mutation(
        name="folder-script-pretrained-with-own-statistics",
        promise="Pretrained weights on a folder: the script normalises with the weights' statistics",
        where="workbench.core.script.folder_data:folder_setup",
        old="    if pretrained:\n",
        new="    if False:\n",
        tests=(f"{_FOLDER_SAME}[colour-split-resnet18-pretrained]",),
    ),
    Mutation(
        name="folder-script-on-the-dataloader-path",
        promise="A folder on the DataLoader path is one clear refusal, not a script that differs",
        where="workbench.core.script.folder_data:folder_problem",
        old='    if cfg.loader != "fast":\n',
        new="    if False:\n",
        tests=(
            f"{_FOLDER_SCRIPT}::test_a_folder_on_the_dataloader_path_is_one_clear_refusal",
        ),
    ),
    Mutation(
        name="folder-script-hides-the-memory-budget",
        promise="A folder script's header says a folder past the memory budget is not repeated exactly",
        where="workbench.core.script.writer:_not_exact",
        old="    notes = [folder_data.FOLDER_NOTE] if cfg.dataset == FOLDER else []\n",
        new="    notes = []\n",
        tests=(
            f"{_FOLDER_SCRIPT}::test_a_folder_script_imports_nothing_of_the_workbench",
        ),
    ),
    Mutation(
        name="model-file-script-skips-the-blank-check",
        promise="The script builds a model file as the workbench does: the two-image check (where lazy layers take shape) under the seed",
        where="workbench.core.script.model:_MODEL_FILE_CONSTRUCT",
        old='    "    out = model(torch.zeros(2, *INPUT_SHAPE))",\n',
        new='    "    out = torch.zeros(2, NUM_CLASSES)",\n',
        tests=(f"{_FOLDER_SAME}[gray-model-file]",),
    ),
    Mutation(
        name="model-file-script-runs-the-file-unsaid",
        promise="A script that imports the user's model file says so at its top",
        where="workbench.core.script.writer:_header",
        old='            "as the workbench does: running it is your choice."\n',
        new='            "as the workbench does."\n',
        tests=(f"{_FOLDER_SAME}[gray-model-file]",),
    ),
]

# issue 34 item 32: the script writes CIFAR-10, my digits and augmentation.
_DATA_SAME = (
    "tests/core/test_script_datasets.py::test_the_script_repeats_train_bit_for_bit"
)
MUTATIONS += [
    Mutation(
        name="script-augment-same-draws-every-batch",
        promise="The script's augmentation draws each batch from the generator of (seed, epoch, batch), as train does",
        where="workbench.core.script.augment_code:BATCH_AUGMENT",
        old="np.random.SeedSequence([seed, epoch, batch, 0xA06])",
        new="np.random.SeedSequence([seed, epoch, 0, 0xA06])",
        tests=(f"{_DATA_SAME}[digits-augment-fast]",),
    ),
    Mutation(
        name="script-augment-skipped",
        promise="A fast-path script augments its training batches (the folder's with its own statistics)",
        where="workbench.core.script.augment_code:augmented_setup",
        old='    if not cfg.augment or cfg.loader != "fast":\n',
        new="    if True:\n",
        tests=(
            f"{_DATA_SAME}[digits-augment-fast]",
            f"{_FOLDER_SAME}[gray-resnet18-fresh]",
        ),
    ),
    Mutation(
        name="script-jitter-without-saturation",
        promise="The script's colour jitter blends colour images toward their grey, as train's",
        where="workbench.core.script.augment_code:BATCH_AUGMENT",
        old="            blend_(pixels, gray.unsqueeze(dim=-3), saturation)\n",
        new="            pass\n",
        tests=(f"{_DATA_SAME}[cifar-16px-crop-jitter-fast]",),
    ),
    Mutation(
        name="script-loader-path-not-augmented",
        promise="A DataLoader-path script composes train's torchvision augmentation for training samples",
        where="workbench.core.script.data_code:data_setup",
        old="    if cfg.augment:  # torchvision's random transforms first, for training only\n",
        new="    if False:\n",
        tests=(
            f"{_DATA_SAME}[cifar-dataloader-flip]",
            f"{_DATA_SAME}[my-digits-digits-dataloader-augment]",
        ),
    ),
    Mutation(
        name="script-cifar-planes-read-as-pixels",
        promise="The script reads a CIFAR-10 record as the red, green and blue planes, as the workbench",
        where="workbench.core.script.cifar_data:CIFAR_DATA",
        old="    return records[:, 1:].reshape(-1, 3, 32, 32).copy(), labels\n",
        new="    return records[:, 1:].reshape(-1, 32, 32, 3).transpose(0, 3, 1, 2).copy(), labels\n",
        tests=(f"{_DATA_SAME}[cifar-16px-crop-jitter-fast]",),
    ),
    Mutation(
        name="script-my-digits-holds-out-others",
        promise="The script holds out every fifth drawing of a digit for validation, as the workbench",
        where="workbench.core.script.my_digits_data:MY_DIGITS_DATA",
        old="        held_out = seen[label] % HOLD_OUT_EVERY == 0\n",
        new="        held_out = seen[label] % HOLD_OUT_EVERY == 1\n",
        tests=(f"{_DATA_SAME}[my-digits-mnist-replay-fast]",),
    ),
    Mutation(
        name="script-my-digits-stored-field-in-any-recipe",
        promise="The script makes a drawing's field again when it was saved in the other recipe",
        where="workbench.core.script.my_digits_data:MY_DIGITS_DATA",
        old='    if sample.get("style", "mnist") == STYLE:\n',
        new="    if True:\n",
        tests=(f"{_DATA_SAME}[my-digits-digits-dataloader-augment]",),
    ),
    Mutation(
        name="script-my-digits-replays-other-images",
        promise="The script replays the base images train picks with the seed",
        where="workbench.core.script.my_digits_data:LOAD_MIXED",
        old="    generator = torch.Generator().manual_seed(SEED)\n",
        new="    generator = torch.Generator().manual_seed(SEED + 1)\n",
        tests=(f"{_DATA_SAME}[my-digits-mnist-replay-fast]",),
    ),
]

# issue 34 item 26: what an edit does to Start, in the panels' words.
_STALE = "tests/ui/test_stale_views.py::test_an_edit_that_turns_continue_into_a_new_run_says_so"
MUTATIONS += [
    Mutation(
        name="why-new-run-in-field-names",
        promise="Why Start begins a new run names the settings as the panels do (Learning rate, not lr)",
        where="workbench.ui.formatting:why_new_run",
        old="    unsafe = [setting_label(c) for c in plan.changed if c not in RESUME_SAFE]\n",
        new="    unsafe = [c for c in plan.changed if c not in RESUME_SAFE]\n",
        tests=(_STALE,),
    ),
    Mutation(
        name="new-run-hint-outlives-its-edit",
        promise="A setting set back says Start continues again; the hint that it would begin a new run goes",
        where="workbench.ui.main_window:MainWindow._on_panel_changed",
        old="        elif why_before and not self._why_new:  # set back: the hint no longer holds\n",
        new="        elif False:\n",
        tests=(_STALE,),
    ),
]

# issue 34 item 25: the feature cache's computation shows a count; Stop cancels it.
_FEATURES_CORE = "tests/core/test_feature_cache.py::test_computing_the_features_reports_its_count_before_the_first_step"
_FEATURES_STOP = "tests/core/test_feature_cache.py::test_stop_while_the_features_are_computed_cancels_before_any_step"
_FEATURES_UI = "tests/ui/test_preparing_progress.py::test_the_feature_cache_shows_its_count_while_it_is_computed"
_FEATURES_UI_STOP = "tests/ui/test_preparing_progress.py::test_stop_while_the_features_are_computed_trains_nothing"
MUTATIONS += [
    Mutation(
        name="features-computed-without-a-count",
        promise="Computing the feature cache reports how many training images have their features, batch by batch",
        where="workbench.core.train.feature_cache:FeatureFeed._training_features",
        old="                done += len(index)\n                yield FeaturesProgress(done, total)\n",
        new="                done += len(index)\n",
        tests=(_FEATURES_CORE, _FEATURES_UI),
    ),
    Mutation(
        name="features-computation-ignores-stop",
        promise="Stop while the feature cache is computed cancels it at the next batch",
        where="workbench.core.train.feature_cache:FeatureFeed._training_features",
        old="                if stop():\n",
        new="                if False:\n",
        tests=(_FEATURES_STOP,),
    ),
    Mutation(
        name="features-progress-not-shown",
        promise="The window shows the feature cache's count in the status line and on the bar while it is computed",
        where="workbench.ui.window.run_view:RunView.__init__",
        old="            E.FeaturesProgress: self._on_features_progress,\n",
        new="",
        tests=(_FEATURES_UI,),
    ),
    Mutation(
        name="stopped-while-preparing-shows-empty-figures",
        promise="A run stopped before its first step says nothing was trained, not 'no validation' and no speed",
        where="workbench.ui.window.run_view:RunView._on_train_result",
        old="        if result.stopped and result.global_step == self._start_step:\n",
        new="        if False:\n",
        tests=(_FEATURES_UI_STOP,),
    ),
]

# issue 34 item 29: legends above the data; every step's speed survives a save.
_LEGENDS = "tests/ui/test_curves.py::test_the_legends_name_every_curve_above_the_data_not_over_it"
_SAVE_OPEN = "tests/ui/test_checkpoints_ui.py::test_save_then_open_restores_everything"
MUTATIONS += [
    Mutation(
        name="legend-box-over-the-curves",
        promise="A plot's legend names its curves under the title, not in a box over the data",
        where="workbench.ui.plots.live_plot:LivePlot._show_legend",
        old="        if not self._legend:\n            return\n",
        new="        if True:\n            self.getPlotItem().addLegend(offset=(-10, 10))\n            return\n",
        tests=(_LEGENDS,),
    ),
    Mutation(
        name="step-speeds-not-kept-in-the-history",
        promise="Every logged step's images/s is kept in the run's history (and so in checkpoints)",
        where="workbench.core.train.step_reports:log_step",
        old="    run.history.speeds.append((run.global_step, metrics.images_per_s))\n",
        new="",
        tests=(_SAVE_OPEN,),
    ),
    Mutation(
        name="opened-throughput-per-epoch-only",
        promise="An opened or resumed run's throughput plot shows every logged step's speed, as it did live",
        where="workbench.ui.plots.curves:TrainingCurves.show_history",
        old='            self.throughput_plot.extend("images/s", speeds[:, 0], speeds[:, 1])\n',
        new="            pass\n",
        tests=(_SAVE_OPEN,),
    ),
]

# issue 35: the learning-rate finder leaves no trace and checks its answer.
_LR_NO_TRACE = "tests/core/test_lr_find.py::test_a_run_after_a_find_and_probes_trains_as_if_there_had_been_none"
_LR_RAMP = "tests/core/test_lr_find.py::test_the_ramp_rises_exponentially_and_stops_once_the_loss_diverges"
_LR_PROBES = (
    "tests/core/test_lr_find.py::test_probes_measure_each_rate_and_the_best_is_offered"
)
MUTATIONS += [
    Mutation(
        name="lr-find-leaves-random-states",
        promise="After a find the torch/numpy/Python random states are as before: dropout draws the same",
        where="workbench.core.tuning.preserve:_put_back",
        old="    set_rng_states(kept.rng)\n",
        new="",
        tests=(_LR_NO_TRACE,),
    ),
    Mutation(
        name="lr-find-leaves-weights",
        promise="After a find the weights and BatchNorm statistics are bit for bit as before",
        where="workbench.core.tuning.preserve:_put_back",
        old="            value.copy_(kept.model[name])\n",
        new="            pass\n",
        tests=(_LR_NO_TRACE,),
    ),
    Mutation(
        name="lr-find-leaves-optimizer-state",
        promise="After a find the optimizer's state (Adam's moments, the rate) is as before",
        where="workbench.core.tuning.preserve:_put_back",
        old="    run.optimizer.load_state_dict(kept.optimizer)\n",
        new="",
        tests=(_LR_NO_TRACE,),
    ),
    Mutation(
        name="lr-find-never-stops-on-divergence",
        promise="The range test stops once the smoothed loss passes 4x its best",
        where="workbench.core.tuning.lr_find:_ramp",
        old="        if len(smoothed) > 1 and value > settings.diverge * best:\n",
        new="        if False:\n",
        tests=(_LR_RAMP,),
    ),
    Mutation(
        name="lr-find-smoothing-not-debiased",
        promise="The range test's loss is smoothed by a debiased moving average",
        where="workbench.core.tuning.lr_find:_ramp",
        old="        value = average / (1 - BETA ** (len(losses) + 1))\n",
        new="        value = average\n",
        tests=(_LR_RAMP,),
    ),
    Mutation(
        name="lr-probes-offer-the-worst",
        promise="The rate offered is the probe that measured best",
        where="workbench.core.tuning.lr_probe:best_probe",
        old="    return max(probes, key=lambda p: p.score, default=None)\n",
        new="    return min(probes, key=lambda p: p.score, default=None)\n",
        tests=(
            _LR_PROBES,
            "tests/core/test_lr_find.py::test_the_offered_probe_is_the_most_accurate_then_the_lowest_loss",
        ),
    ),
    Mutation(
        name="lr-valley-at-the-end-of-the-fall",
        promise="The valley rule picks the middle of the longest fall of the smoothed loss",
        where="workbench.core.tuning.lr_suggest:valley_index",
        old="    return start + int(third) + int(third / 2)\n",
        new="    return end\n",
        tests=(
            "tests/core/test_lr_find.py::test_the_valley_is_the_middle_of_the_longest_fall",
        ),
    ),
    # ------------------------------------- the catalog's round trip (issue 34)
    Mutation(
        name="torchscript-traced-with-gradients",
        promise="A vision transformer exports to TorchScript: traced without gradients, as trace's own check reruns it",
        where="_torchscript",
        old="    with warnings.catch_warnings(), torch.no_grad():\n",
        new="    with warnings.catch_warnings():\n",
        tests=(f"{_ROUND_TRIP}test_a_vision_transformer_exports_to_torchscript",),
    ),
    Mutation(
        name="regnet-reader-not-built",
        promise="A RegNet, which meta tensors cannot build, still gets its reader (predict, export, the Draw tab)",
        where="build_on_meta",
        old="    except ConfigError:\n",
        new="    except OSError:\n",
        tests=(
            f"{_ROUND_TRIP}test_a_regnets_reader_is_built_without_drawing_random_numbers",
        ),
    ),
    Mutation(
        name="regnet-reader-draws-from-the-global-generator",
        promise="A RegNet's reader is built without drawing from the random generator a run uses",
        where="build_on_meta",
        old="        with PrivateRandom(torch.Generator()):\n",
        new="        with torch.no_grad():\n",
        tests=(
            f"{_ROUND_TRIP}test_a_regnets_reader_is_built_without_drawing_random_numbers",
        ),
    ),
    Mutation(
        name="histogram-edges-in-float32",
        promise="Weights a few ulps apart (Swin V2's logit scales) still get their histogram",
        where="weight_histograms",
        old="        finite = values[np.isfinite(values)].astype(np.float64)\n",
        new="        finite = values[np.isfinite(values)]\n",
        tests=(f"{_ROUND_TRIP}test_weights_a_few_ulps_apart_still_get_a_histogram",),
    ),
]

# issue 35: Run ▸ Find learning rate… in the window.
_LR_UI = "tests/ui/test_lr_finder_ui.py::test_the_finder_shows_its_curve_and_probes_and_sets_the_rate"
_LR_UI_CANCEL = (
    "tests/ui/test_lr_finder_ui.py::test_cancel_ends_the_find_and_offers_nothing"
)
MUTATIONS += [
    Mutation(
        name="lr-finder-use-sets-nothing",
        promise="'Use this rate' sets the Training panel's learning rate to the rate offered",
        where="workbench.ui.window.lr_finder:LrFinderDialog.use_rate",
        old="        self.window_.training_panel.lr_spin.setValue(rate)\n",
        new="",
        tests=(_LR_UI,),
    ),
    Mutation(
        name="lr-finder-suggestions-not-marked",
        promise="The finder's plot marks both suggestions with a labelled line",
        where="workbench.ui.window.lr_finder:LrFinderDialog._draw",
        old="            plot.addItem(line)\n",
        new="            pass\n",
        tests=(_LR_UI,),
    ),
    Mutation(
        name="lr-finder-cancel-does-nothing",
        promise="Cancel ends the find early and offers no rate",
        where="workbench.ui.window.lr_finder:LrFinderDialog.__init__",
        old="        self.cancel_button.clicked.connect(window.controller.cancel_task)\n",
        new="",
        tests=(_LR_UI_CANCEL,),
    ),
]

# issue 35: sweeps whose trials are runs of the ledger.
_SWEEP_RUNS = "tests/core/test_sweep.py::test_every_trial_is_a_run_and_trial_0_is_the_users_settings"
_SWEEP_PRUNE = (
    "tests/core/test_sweep.py::test_pruning_stops_a_trial_after_an_epoch_and_keeps_it"
)
_SWEEP_BAD = (
    "tests/core/test_sweep.py::test_bad_sweeps_are_one_line_exit_2_and_leave_no_run"
)
_SWEEP_SPACE = "tests/core/test_sweep.py::test_a_space_that_cannot_work_is_one_line"
_SWEEP_CLI = "tests/core/test_sweep.py::test_the_command_line_sweeps_and_shows"
MUTATIONS += [
    Mutation(
        name="sweep-trial-0-not-the-users",
        promise="A sweep's trial 0 is the user's own settings",
        where="workbench.core.tuning.sweep:start_sweep",
        old="        study.enqueue_trial(settings.space.current(base), skip_if_exists=True)\n",
        new="        pass\n",
        tests=(_SWEEP_RUNS,),
    ),
    Mutation(
        name="sweep-trials-not-in-the-ledger",
        promise="Each trial's run.json names its study and trial number",
        where="workbench.core.tuning.sweep:_train_trial",
        old='        folder.update(**{SWEEP_KEY: {"study": study, "trial": trial.number}})\n',
        new="        pass\n",
        tests=(_SWEEP_RUNS,),
    ),
    Mutation(
        name="sweep-never-prunes",
        promise="Successive halving stops a poor trial after its epoch",
        where="workbench.core.tuning.sweep:_train_trial",
        old="            if trial.should_prune():\n",
        new="            if False:\n",
        tests=(_SWEEP_PRUNE,),
    ),
    Mutation(
        name="sweep-pruned-run-reads-stopped",
        promise="A pruned trial's run reads 'pruned' in the ledger",
        where="workbench.core.tuning.sweep:_train_trial",
        old="            folder.update(status=PRUNED)\n",
        new="            pass\n",
        tests=(_SWEEP_PRUNE, _SWEEP_RUNS),
    ),
    Mutation(
        name="sweep-sampler-unseeded",
        promise="The same seed proposes the same trials",
        where="workbench.core.tuning.study:open_study",
        old="    sampler = optuna.samplers.TPESampler(seed=seed)\n",
        new="    sampler = optuna.samplers.TPESampler(seed=None)\n",
        tests=(_SWEEP_RUNS,),
    ),
    Mutation(
        name="sweep-log-range-through-zero",
        promise="A log-scale range through zero is refused in one line",
        where="workbench.core.tuning.space:_log_range",
        old="    if low <= 0 or high <= 0:\n",
        new="    if low < 0 or high < 0:\n",
        tests=(_SWEEP_SPACE,),
    ),
    Mutation(
        name="sweep-show-makes-a-study",
        promise="'sweep show' of an unknown study says so and leaves no study file",
        where="workbench.core.tuning.study:open_study",
        old="    if not create and storage is None and not (sweep_folder(name) / JOURNAL).is_file():\n",
        new="    if False:\n",
        tests=(_SWEEP_BAD,),
    ),
    Mutation(
        name="runs-list-hides-the-sweep",
        promise="runs list shows each sweep trial's study and number",
        where="workbench.cli.runs:run_command",
        old='            name += f"  sweep {r.sweep}" if r.sweep else ""\n',
        new="",
        tests=(_SWEEP_CLI,),
    ),
]

MUTATIONS += [
    Mutation(
        name="lr-finder-rates-scaled",
        promise="The finder's rate axis labels rates as they are (no SI factor on a log axis)",
        where="workbench.ui.window.lr_finder:LrFinderDialog.__init__",
        old="        no_scale_factor(self.plot.getPlotItem())\n",
        new="",
        tests=(_LR_UI,),
    ),
]

# issue 35: several workers share a study; the [sweep] table; importances.
_W = "tests/core/test_sweep_workers.py::"
_DEAD = _W + "test_a_trial_whose_local_worker_died_fails_and_is_taken_again"
_RACE = _W + "test_the_budget_counts_running_trials_and_a_racing_ask_is_given_back"
_JOINED = _W + "test_a_joined_worker_reads_the_plan_from_the_study"
_REMOTE = _W + "test_a_silent_remote_workers_trial_fails_after_the_grace_and_runs_again"
_MANY = _W + "test_two_local_workers_and_a_joined_one_finish_the_sweep_despite_a_kill"
_HALT = (
    _W + "test_ctrl_c_stops_every_local_worker_after_its_batch_and_keeps_what_finished"
)
_SHARE = _W + "test_each_local_worker_gets_an_equal_share_of_the_cores"
_TABLE = "tests/core/test_sweep.py::test_a_config_files_sweep_table_is_the_space_and_flags_win"
_BAD_TABLE = "tests/core/test_sweep.py::test_a_bad_sweep_table_is_one_line"
_IMP = "tests/core/test_sweep_importance.py::"
_LEDGER = _IMP + "test_over_the_ledger_the_rate_ranks_first_when_only_the_rate_matters"
_SAME = _IMP + "test_too_few_runs_say_so_instead_of_a_number"
MUTATIONS += [
    Mutation(
        name="sweep-dead-local-worker-kept",
        promise="A trial whose local worker died is failed by the next worker to ask",
        where="workbench.core.tuning.study:fail_dead_workers",
        old='        if worker.get("host") != host or _alive(worker.get("pid")):\n',
        new="        if True:\n",
        tests=(_DEAD,),
    ),
    Mutation(
        name="sweep-dead-trial-not-retried",
        promise="A trial whose local worker died is queued again with its settings",
        where="workbench.core.tuning.study:fail_dead_workers",
        old="        if retries < RETRIES:\n",
        new="        if False:\n",
        tests=(_DEAD,),
    ),
    Mutation(
        name="sweep-budget-ignores-running",
        promise="Trials being trained count towards the budget",
        where="workbench.core.tuning.study:counted_trials",
        old="        TrialState.RUNNING,\n",
        new="",
        tests=(_RACE,),
    ),
    Mutation(
        name="sweep-racing-ask-kept",
        promise="A trial asked past the budget in a race is given back as surplus",
        where="workbench.core.tuning.study:take_trial",
        old="    if len(before) >= budget:\n",
        new="    if False:\n",
        tests=(_RACE,),
    ),
    Mutation(
        name="sweep-heartbeat-beats-once",
        promise="A worker's heartbeat goes on for as long as its trial trains",
        where="workbench.core.tuning.study:heartbeat",
        old="            if done.wait(interval):\n",
        new="            if True:\n",
        tests=(_REMOTE,),
    ),
    Mutation(
        name="sweep-silent-worker-never-failed",
        promise="A silent worker's trial is failed after the grace and tried again",
        where="workbench.core.tuning.study:fail_dead_workers",
        old="        optuna.storages.fail_stale_trials(study)\n",
        new="        pass\n",
        tests=(_REMOTE,),
    ),
    Mutation(
        name="sweep-joined-worker-same-seed",
        promise="Each joined worker draws with a seed of its own",
        where="workbench.core.tuning.study:use_plan_sampling",
        old="    study.sampler = optuna.samplers.TPESampler(seed=plan.seed + worker)\n",
        new="    study.sampler = optuna.samplers.TPESampler(seed=plan.seed)\n",
        tests=(_JOINED,),
    ),
    Mutation(
        name="sweep-plan-not-recorded",
        promise="The study records the sweep's plan, so a worker joins by name alone",
        where="workbench.core.tuning.sweep:start_sweep",
        old="    record_plan(study, plan)\n",
        new="",
        tests=(_JOINED,),
    ),
    Mutation(
        name="sweep-parallel-ctrl-c-not-passed-on",
        promise="A stop request to a parallel sweep is passed to every worker",
        where="workbench.core.tuning.workers:LocalWorkers.interrupt",
        old="                process.send_signal(signal.SIGINT)\n",
        new="                pass\n",
        tests=(_HALT,),
    ),
    Mutation(
        name="sweep-workers-take-every-core",
        promise="Local workers share the cores equally",
        where="workbench.core.tuning.workers:threads_per_worker",
        old="    return max(1, (os.cpu_count() or 1) // max(1, count))\n",
        new="    return max(1, os.cpu_count() or 1)\n",
        tests=(_SHARE,),
    ),
    Mutation(
        name="sweep-table-beats-flags",
        promise="A --sweep-FIELD flag wins over the config file's [sweep] table",
        where="workbench.cli.sweep:_settings",
        old="    raw = {f: table[f] for f in FIELDS if f in table}\n",
        new="    raw = {}\n",
        tests=(_TABLE,),
    ),
    Mutation(
        name="sweep-table-scalar-accepted",
        promise="A [sweep] field that is not a list is refused in one line",
        where="workbench.cli.sweep:sweep_table",
        old="        if field in table and not isinstance(table[field], list):\n",
        new="        if False:\n",
        tests=(_BAD_TABLE,),
    ),
    Mutation(
        name="importance-counts-unfinished-runs",
        promise="Ledger importances use finished runs of the same data and model only",
        where="workbench.core.tuning.importance:ledger_importances",
        old='        if run.status == "finished"\n',
        new="        if True\n",
        tests=(_LEDGER,),
    ),
    Mutation(
        name="importance-of-unvaried-settings",
        promise="A setting that never varied gets no share",
        where="workbench.core.tuning.importance:_distributions",
        old="        if len(values) < 2 or any(row[name] is None for row in rows):\n",
        new="        if any(row[name] is None for row in rows):\n",
        tests=(_LEDGER, _SAME),
    ),
]

_COORD = (
    "tests/core/test_sweep_coordinates.py::test_each_value_sits_where_its_axis_puts_it"
)
_PC = "tests/ui/test_parallel_coordinates.py::"
_PC_LINES = (
    _PC + "test_each_trial_is_drawn_where_its_values_are_in_its_accuracys_colour"
)
MUTATIONS += [
    Mutation(
        name="coordinates-rates-not-on-a-log-scale",
        promise="A rate axis of the parallel coordinates is on a log scale",
        where="workbench.core.tuning.coordinates:Axis.position",
        old="        if self.log:\n",
        new="        if False:\n",
        tests=(_COORD,),
    ),
    Mutation(
        name="coordinates-pruned-trial-off-the-accuracy-axis",
        promise="A pruned trial sits on the accuracy axis at its last reported value",
        where="workbench.core.tuning.coordinates:trial_accuracy",
        old="    if trial.intermediate_values:\n",
        new="    if False:\n",
        tests=(_COORD,),
    ),
    Mutation(
        name="coordinates-colours-reversed",
        promise="The best trials are drawn in the colour map's top colour",
        where="workbench.ui.plots.parallel_coordinates:ParallelCoordinates.colour",
        old='        return self._map.map(step / (COLOUR_STEPS - 1), mode="qcolor")\n',
        new='        return self._map.map(1 - step / (COLOUR_STEPS - 1), mode="qcolor")\n',
        tests=(_PC_LINES,),
    ),
    Mutation(
        name="coordinates-stale-band-kept",
        promise="Redrawing the trials leaves no line of the last drawing",
        where="workbench.ui.plots.parallel_coordinates:ParallelCoordinates.show_lines",
        old="            plot.removeItem(self.curves.pop(group))\n",
        new="            pass\n",
        tests=(_PC_LINES,),
    ),
]

_SD = "tests/ui/test_sweep_dialog.py::"
_SD_RUN = _SD + "test_a_sweep_runs_stops_resumes_and_offers_its_best"
_SD_CLOSE = _SD + "test_closing_the_window_stops_the_sweep_and_keeps_what_finished"
_SD_BAD = _SD + "test_a_bad_space_is_said_in_the_dialog_and_starts_nothing"
_BEST = "tests/core/test_sweep_importance.py::test_pruned_trials_are_neither_the_best_nor_compared"
_SORT_SWEEP = "tests/ui/test_runs_panel.py::test_sorting_by_sweep_puts_a_sweeps_trials_together_in_order"
MUTATIONS += [
    Mutation(
        name="sweep-dialog-stop-ignored",
        promise="Stop in the sweep dialog ends the sweep and keeps what finished",
        where="workbench.ui.window.sweep_dialog:SweepDialog.stop",
        old="            self.job.stop()\n",
        new="            pass\n",
        tests=(_SD_RUN,),
    ),
    Mutation(
        name="sweep-dialog-close-leaves-it-running",
        promise="Closing the window stops the sweep's workers, all kept",
        where="workbench.ui.window.sweep_dialog:SweepDialog.shutdown",
        old="            self.job.stop()\n",
        new="            pass\n",
        tests=(_SD_CLOSE,),
    ),
    Mutation(
        name="sweep-dialog-space-not-checked",
        promise="A space that cannot work is said in the dialog and starts nothing",
        where="workbench.ui.window.sweep_dialog:SweepDialog.space_flags",
        old="        SearchSpace.parse(raw)  # the command would refuse it: say so here\n",
        new="",
        tests=(_SD_BAD,),
    ),
    Mutation(
        name="sweep-dialog-best-not-used",
        promise="Use these settings puts the best trial's settings in the panels",
        where="workbench.ui.window.sweep_dialog:SweepDialog.use_best",
        old="        self.window_.apply_config(TrainConfig.from_dict(dict(run.config)))\n",
        new="",
        tests=(_SD_RUN,),
    ),
    Mutation(
        name="sweep-best-may-be-pruned",
        promise="The best trial is a complete one, never a pruned one's last report",
        where="workbench.core.tuning.study:best_of",
        old="    complete = [t for t in trials if t.state == TrialState.COMPLETE]\n",
        new="    complete = [t for t in trials if t.value is not None]\n",
        tests=(_BEST,),
    ),
    Mutation(
        name="runs-sweep-column-sorts-as-text",
        promise="Sorting by the Sweep column puts a sweep's trials in number order",
        where="workbench.ui.panels.runs_table:_sweep_key",
        old='    return f"{study} #{int(number):06d}" if number.isdigit() else label\n',
        new="    return label\n",
        tests=(_SORT_SWEEP,),
    ),
]

MUTATIONS += [
    Mutation(
        name="sweep-dialog-ledger-of-another-model",
        promise="The ledger's importances are over the panels' own data and model",
        where="workbench.ui.window.sweep_dialog:SweepDialog.show_ledger_importances",
        old="        found = ledger_importances(list_runs(), cfg.dataset, cfg.model)\n",
        new='        found = ledger_importances(list_runs(), cfg.dataset, "mlp")\n',
        tests=(
            _SD + "test_importances_over_the_ledger_are_the_panels_data_and_models",
        ),
    ),
]

_RANKS = _W + "test_trials_on_several_processes_are_pruned_by_the_worker_that_watches"
MUTATIONS += [
    Mutation(
        name="sweep-job-never-pruned",
        promise="A trial on several processes is pruned by the worker that watches it",
        where="workbench.core.tuning.job_trial:train_trial_as_job",
        old="                    if not pruned and not ended and trial.should_prune():\n",
        new="                    if False:\n",
        tests=(_RANKS,),
    ),
    Mutation(
        name="sweep-job-pruned-reads-stopped",
        promise="A pruned multi-process trial's run reads 'pruned'",
        where="workbench.core.tuning.job_trial:train_trial_as_job",
        old='                RunFolder(folder).update(status="pruned")\n',
        new="                pass\n",
        tests=(_RANKS,),
    ),
    Mutation(
        name="sweep-job-run-not-labelled",
        promise="A multi-process trial's run.json names its study and trial",
        where="workbench.core.tuning.job_trial:train_trial_as_job",
        old="                    RunFolder(folder).update(sweep=label)\n",
        new="                    pass\n",
        tests=(_RANKS,),
    ),
]

MUTATIONS += [
    Mutation(
        name="runs-sweep-column-always-shown",
        promise="The Sweep column takes no room until a sweep's trials or a "
        "cross-validation's folds are listed",
        where="workbench.ui.panels.runs_table:RunsTable.show_runs",
        old="        self.setColumnHidden(SWEEP_COLUMN, not any(r.sweep or r.fold for r in runs))\n",
        new="        self.setColumnHidden(SWEEP_COLUMN, False)\n",
        tests=(_SORT_SWEEP,),
    ),
]

_GROUPS = "tests/ui/test_runs_panel.py::test_choosing_a_sweep_lists_only_its_trials_in_trial_order"
MUTATIONS += [
    Mutation(
        name="runs-chosen-sweep-lists-every-run",
        promise="Choosing a sweep in the Runs tab's Show: lists only its trials",
        where="workbench.ui.panels.runs_groups:filter_runs",
        old="    if choice is ALL_RUNS:\n        return list(runs)\n",
        new="    if True:\n        return list(runs)\n",
        tests=(_GROUPS,),
    ),
]

_BEST = "tests/core/test_best_epoch.py::"
MUTATIONS += [
    Mutation(
        name="early-stop-one-epoch-late",
        promise="Early stopping ends the run after PATIENCE stale epochs, not more",
        where="workbench.core.train.best_epoch:early_stop_reason",
        old="    if best is None or best.stale < patience:\n",
        new="    if best is None or best.stale <= patience:\n",
        tests=(
            _BEST + "test_early_stop_waits_patience_stale_epochs_and_says_why",
            _BEST + "test_a_run_keeps_its_best_epoch_and_records_its_early_stop",
        ),
    ),
    Mutation(
        name="best-epoch-a-tie-improves",
        promise="An epoch is the new best only when it beats the best by more "
        "than the minimum improvement",
        where="workbench.core.train.best_epoch:best_epoch",
        old="        if math.isfinite(value) and gain > min_delta:\n",
        new="        if math.isfinite(value) and gain >= min_delta:\n",
        tests=(
            _BEST + "test_the_best_epoch_must_beat_the_best_by_more_than_the_delta",
        ),
    ),
    Mutation(
        name="best-pt-saved-every-epoch",
        promise="best.pt holds the best epoch's weights, not the latest",
        where="workbench.core.runs.recorder:RunRecorder._save_best",
        old="        if best is None or best.epoch != run.epoch - 1:\n",
        new="        if best is None:\n",
        tests=(_BEST + "test_a_run_keeps_its_best_epoch_and_records_its_early_stop",),
    ),
    Mutation(
        name="stopped-epoch-part-counts-as-the-epoch",
        promise="A stopped epoch's partial record is replaced by the record of "
        "the epoch once resumed and finished",
        where="workbench.core.train.best_epoch:completed_epochs",
        old="            last[record.epoch] = record\n",
        new="            last.setdefault(record.epoch, record)\n",
        tests=(
            _BEST + "test_a_resumed_epoch_replaces_its_stopped_part_and_nan_never_wins",
        ),
    ),
    Mutation(
        name="early-stopped-run-trains-on",
        promise="A run that stopped early is not continued unless the patience changes",
        where="workbench.core.start_plan:plan_start",
        old="    if early is not None:\n",
        new="    if False:\n",
        tests=(
            _BEST + "test_a_killed_and_resumed_run_stops_where_and_keeps_what_the_"
            "straight_one_did",
        ),
    ),
    Mutation(
        name="runs-tab-hides-early-stop",
        promise="The Runs tab says a run stopped early, and why",
        where="workbench.ui.panels.runs_table:status_text",
        old='    status = f"{run.status} early" if run.early_stop else run.status\n',
        new="    status = run.status\n",
        tests=(
            "tests/ui/test_runs_panel.py::test_a_run_that_stopped_early_says_so_and_why",
        ),
    ),
]

# ------------------------------------------- per-class precision, recall, F1
_SCORES = "tests/core/test_class_scores.py"
_SCORES_CLI = "tests/core/test_cli_class_scores.py"
_SCORES_UI = "tests/ui/test_class_scores_table.py"
_SCORES_RUNS = (
    "tests/ui/test_runs_panel.py::"
    "test_the_comparison_starts_with_each_runs_macro_and_weighted_f1"
)
MUTATIONS += [
    Mutation(
        name="class-precision-as-recall",
        promise="A class's precision divides its hits by the images predicted as it",
        where="workbench.core.train.class_scores:class_scores",
        old="precision = np.where(predicted > 0, hits / predicted, 0.0)",
        new="precision = np.where(support > 0, hits / support, 0.0)",
        tests=(f"{_SCORES}::test_each_class_matches_scikit_learn",),
    ),
    Mutation(
        name="class-macro-weighted-by-support",
        promise="The macro average counts every class present the same",
        where="ClassScores.macro",
        old="float(self.f1[keep].mean()),",
        new="float(np.average(self.f1[keep], weights=self.support[keep] + 1)),",
        tests=(f"{_SCORES}::test_the_averages_match_scikit_learn",),
    ),
    Mutation(
        name="class-macro-over-absent-classes",
        promise="The macro average leaves out a class neither labelled nor predicted",
        where="ClassScores.macro",
        old="keep = self.present",
        new="keep = np.ones_like(self.present)",
        tests=(f"{_SCORES}::test_the_averages_match_scikit_learn",),
    ),
    Mutation(
        name="class-worst-are-best",
        promise="The CLI's many-classes table lists the classes of lowest F1",
        where="ClassScores.worst",
        old='order = np.argsort(self.f1[present], kind="stable")',
        new='order = np.argsort(-self.f1[present], kind="stable")',
        tests=(
            f"{_SCORES}::test_the_worst_classes_are_the_present_ones_of_lowest_f1",
            f"{_SCORES_CLI}::test_more_than_twenty_classes_list_the_five_of_lowest_f1",
        ),
    ),
    Mutation(
        name="class-record-accepts-any-number",
        promise="A hand-edited class_scores average outside [0, 1] reads as none",
        where="recorded_average",
        old="return float(value) if 0.0 <= value <= 1.0 else None",
        new="return float(value)",
        tests=(f"{_SCORES}::test_a_damaged_record_reads_as_no_average",),
    ),
    Mutation(
        name="run-json-lacks-class-scores",
        promise="run.json keeps the last validation's class_scores",
        where="RunRecorder._record",
        old='{"class_scores": scores}',
        new="{}",
        tests=(
            f"{_SCORES_CLI}::test_run_json_keeps_the_last_validations_class_scores",
            _SCORES_RUNS,
        ),
    ),
    Mutation(
        name="train-prints-no-class-table",
        promise="train ends with each class's scores and both averages",
        where="workbench.cli.train:_train",
        old="class_score_lines(run.history.epochs, run.loaders.info.class_names)",
        new="class_score_lines([], run.loaders.info.class_names)",
        tests=(f"{_SCORES_CLI}::test_train_prints_each_class_and_both_averages",),
    ),
    Mutation(
        name="train-class-table-averages-swapped",
        promise="train's macro avg row is the macro average, weighted the weighted",
        where="class_score_lines",
        old='("macro avg", total, *macro), ("weighted avg", total, *weighted)',
        new='("macro avg", total, *weighted), ("weighted avg", total, *macro)',
        tests=(f"{_SCORES_CLI}::test_train_prints_each_class_and_both_averages",),
    ),
    Mutation(
        name="runs-show-no-class-scores",
        promise="runs show gives the macro and weighted F1 run.json keeps",
        where="workbench.cli.runs:_run_report",
        old='lines += _scores_line(info.get("class_scores"))',
        new="lines += []",
        tests=(f"{_SCORES_CLI}::test_runs_show_gives_both_averages_from_run_json",),
    ),
    Mutation(
        name="card-lacks-class-scores",
        promise="The model card scores each class and both averages",
        where="workbench.core.export.card:_data_lines",
        old="*_score_lines(record, info.class_names),",
        new="*_score_lines(record, info.class_names)[:0],",
        tests=(
            "tests/core/test_model_card.py::"
            "test_the_card_scores_each_class_and_both_averages",
        ),
    ),
    Mutation(
        name="card-precision-recall-swapped",
        promise="The model card's precision column is precision, recall recall",
        where="workbench.core.export.card:_score_lines",
        old="(scores.precision[i], scores.recall[i], scores.f1[i])",
        new="(scores.recall[i], scores.precision[i], scores.f1[i])",
        tests=(
            "tests/core/test_model_card.py::"
            "test_the_card_scores_each_class_and_both_averages",
        ),
    ),
    Mutation(
        name="compare-weighted-f1-is-macro",
        promise="The comparison's weighted F1 row is each run's weighted F1",
        where="score_rows",
        old="SCORE_ROWS[1]: [r.weighted_f1 for r in runs],",
        new="SCORE_ROWS[1]: [r.macro_f1 for r in runs],",
        tests=(
            f"{_SCORES}::test_the_comparison_reads_each_runs_averages_from_run_json",
            _SCORES_RUNS,
        ),
    ),
    Mutation(
        name="runs-tab-no-f1-rows",
        promise="The Runs tab's comparison starts with each run's macro and weighted F1",
        where="RunsPanel._update_diff",
        old="scores = score_rows(runs)",
        new="scores = {}",
        tests=(_SCORES_RUNS,),
    ),
    Mutation(
        name="eval-table-lacks-averages",
        promise="The Evaluation tab's table ends with the macro and weighted average",
        where="ClassScoresTable.set_matrix",
        old="self._average_rows(int(scores.support.sum()), scores)",
        new="pass",
        tests=(f"{_SCORES_UI}::test_each_class_and_both_averages_are_scikit_learns",),
    ),
    Mutation(
        name="eval-table-averages-hidden",
        promise="The table's averages stay in view under a long list of classes",
        where="ClassScoresTable.set_matrix",
        old="self.averages.setVisible(not empty)",
        new="self.averages.setVisible(False)",
        tests=(f"{_SCORES_UI}::test_the_averages_are_in_view_under_many_classes",),
    ),
    Mutation(
        name="eval-table-ignores-the-epoch",
        promise="The Evaluation tab's scores table follows the epoch shown",
        where="EvaluationPanel._refresh",
        old="self.scores_table.set_matrix(matrix, names)",
        new="pass",
        tests=(f"{_SCORES_UI}::test_the_table_follows_the_epoch_shown",),
    ),
    Mutation(
        name="eval-table-sorts-by-text",
        promise="The scores table sorts its classes by value, not by the text",
        where="_Cell.__lt__",
        old="return self.key < other.key",
        new="return self.text() < other.text()",
        tests=(
            f"{_SCORES_UI}::test_sorting_orders_the_classes_and_the_averages_stay_in_view",
        ),
    ),
    Mutation(
        name="accuracy-bars-past-twenty-classes",
        promise="The per-class accuracy chart draws more than 20 classes",
        where="ClassAccuracyChart._update_bar_labels",
        old="zip(self._bar_labels, accuracy[:n], strict=True)",
        new="zip(self._bar_labels, accuracy, strict=True)",
        tests=(
            "tests/ui/test_class_accuracy.py::"
            "test_more_classes_than_labels_draw_bars_without_labels",
        ),
    ),
]

# ------------------------------------------------- rare classes: class weights
_CW = "tests/core/test_class_weights.py::"
_CW_PANEL = "tests/ui/test_class_weights_panel.py::"
_CW_DDP = _CW + "test_two_processes_train_the_weighted_mean_that_one_does"
MUTATIONS += [
    Mutation(
        name="balanced-weights-inverted",
        promise="balanced class weights are n_samples / (n_classes * count), "
        "scikit-learn's, over the training split",
        where="workbench.core.train.class_weights:balanced_weights",
        old="    return counts.sum() / (len(counts) * counts)\n",
        new="    return len(counts) * counts / counts.sum()\n",
        tests=(
            _CW + "test_balanced_weights_are_scikit_learns_over_the_training_split",
        ),
    ),
    Mutation(
        name="class-weights-not-in-the-loss",
        promise="A training step's loss is the cross-entropy weighted by the run's "
        "class weights",
        where="workbench.core.train.class_weights:training_loss",
        old="weight=run.class_weights)",
        new="weight=None)",
        tests=(_CW + "test_a_training_step_uses_the_weighted_loss",),
    ),
    Mutation(
        name="lr-finder-loss-unweighted",
        promise="The learning-rate finder measures the run's own weighted loss",
        where="workbench.core.tuning.lr_find:train_step",
        old="        loss = training_loss(run, model(x), y)  # the run's own (weighted) loss\n",
        new="        loss = nn.functional.cross_entropy(model(x).float(), y)\n",
        tests=(_CW + "test_the_lr_finder_measures_the_runs_weighted_loss",),
    ),
    Mutation(
        name="ddp-weighted-chunk-scaled-by-samples",
        promise="With class weights each rank's chunk weighs its share of the "
        "batch's summed weights",
        where="workbench.core.distributed.ddp:backward_loss",
        old="    if local_weight is not None:\n",
        new="    if False:\n",
        tests=(
            _CW + "test_each_rank_weighs_its_chunk_by_its_share_of_the_batchs_weights",
            _CW_DDP,
        ),
    ),
    Mutation(
        name="ddp-engine-passes-no-weight-share",
        promise="Two processes train the same weighted mean as one",
        where="workbench.core.train.engine:_train",
        old="            scaler.scale(ddp.backward_loss(run, loss, len(y), share)).backward()\n",
        new="            scaler.scale(ddp.backward_loss(run, loss, len(y))).backward()\n",
        tests=(_CW_DDP,),
    ),
    Mutation(
        name="sampler-ignores-seed-and-epoch",
        promise="The balanced sampler draws each epoch anew, seeded by the run's "
        "seed and the epoch",
        where="_epoch_order",
        old="            weights, num_samples, replacement=True, generator=generator\n",
        new="            weights, num_samples, True, generator=torch.Generator()\n",
        tests=(_CW + "test_the_balanced_sampler_draws_every_class_about_equally",),
    ),
    Mutation(
        name="sampler-draws-by-sample-not-class",
        promise="The balanced sampler draws every class about equally often",
        where="workbench.core.data.balanced_sampler:balance",
        old="    loader.sample_weights = 1.0 / counts.double()[labels]\n",
        new="    loader.sample_weights = torch.ones(len(labels), dtype=torch.float64)\n",
        tests=(_CW + "test_the_balanced_sampler_draws_every_class_about_equally",),
    ),
    Mutation(
        name="sampler-draw-not-pinned",
        promise="A checkpoint's stored draw (with repeats) is what a resumed "
        "balanced run trains on",
        where="_EpochOrder.pin_order",
        old="        if self.sample_weights is not None:\n",
        new="        if False:\n",
        tests=(_CW + "test_a_stored_draw_must_fit_the_training_split",),
    ),
    Mutation(
        name="sampler-feature-cache-on",
        promise="The feature cache stays off with the balanced sampler (a draw "
        "leaves samples out)",
        where="run_blocker",
        old="    if cfg.balanced_sampler:\n",
        new="    if False:\n",
        tests=(_CW + "test_the_feature_cache_stays_off_with_the_balanced_sampler",),
    ),
    Mutation(
        name="weights-count-unchecked",
        promise="Weights for another number of classes are one line and exit 2",
        where="workbench.core.config:_validate_class_weights",
        old="    if len(value) < 2 or (classes is not None and len(value) != classes):\n",
        new="    if len(value) < 2:\n",
        tests=(_CW + "test_a_config_refuses_weights_it_cannot_use",),
    ),
    Mutation(
        name="folder-weights-checked-after-the-run-folder",
        promise="Weights that do not fit an image folder's classes make no run folder",
        where="Session.begin",
        old="        check_class_count(cfg)\n",
        new="",
        tests=(
            _CW + "test_weights_that_do_not_fit_a_folders_classes_make_no_run_folder",
        ),
    ),
    Mutation(
        name="weights-file-path-in-the-config",
        promise="--class-weights FILE puts the file's weights in the run's config, "
        "so Reproduce needs no file",
        where="config_from_args",
        old='        changes["class_weights"] = class_weights_value(changes["class_weights"])\n',
        new="        pass\n",
        tests=(_CW + "test_a_config_keeps_the_weights_and_reproduce_repeats_them",),
    ),
    Mutation(
        name="check-data-imbalance-no-advice",
        promise="check-data's imbalance warning says how to train on it",
        where="_check_classes",
        old='                advice="imbalance",\n',
        new='                advice="",\n',
        tests=(_CW + "test_check_data_says_how_to_train_on_imbalanced_classes",),
    ),
    Mutation(
        name="script-loss-unweighted",
        promise="A script of a weighted run weighs its loss as the run does",
        where="_loss_line",
        old='    weight = "" if cfg.class_weights == "none" else ", weight=class_weights"\n',
        new='    weight = ""\n',
        tests=(
            _CW + "test_a_script_weighs_its_loss_and_refuses_the_sampler",
            f"{_SCRIPT_RUN}[small-cnn-balanced-class-weights]",
        ),
    ),
    Mutation(
        name="panel-file-weights-dropped",
        promise="Class weights from a file in the Loader panel go into the config",
        where="LoaderPanel._class_weights",
        old="            return self._file_weights\n",
        new='            return "none"\n',
        tests=(
            _CW_PANEL + "test_from_file_reads_the_weights_into_the_config",
            _CW_PANEL + "test_a_loaded_config_shows_its_weights_and_gives_them_back",
        ),
    ),
]

_EARLY_UI = "tests/ui/test_early_stop_ui.py::"
MUTATIONS += [
    Mutation(
        name="best-flag-reads-the-latest",
        promise="predict and export --best read the run's best.pt and say so",
        where="workbench.core.runs.best_or_latest:pick_checkpoint",
        old="    return folder.best_path\n",
        new="    return folder.checkpoint_path\n",
        tests=(_BEST + "test_a_run_keeps_its_best_epoch_and_records_its_early_stop",),
    ),
    Mutation(
        name="card-hides-which-weights",
        promise="An export's model card says whether it holds the best epoch or "
        "the latest",
        where="workbench.core.export.card:write_card",
        old='        *([f"- weights: {weights}"] if weights else []),\n',
        new="        *([]),\n",
        tests=(_BEST + "test_a_run_keeps_its_best_epoch_and_records_its_early_stop",),
    ),
    Mutation(
        name="open-best-opens-the-latest",
        promise="The Runs tab's Open best opens the run's best epoch",
        where="workbench.ui.window.runs:RunsTab._on_panel_open_best_requested",
        old="        self.window.files.open_checkpoint(run.folder.best_path)\n",
        new="        self.window.files.open_checkpoint(run.folder.checkpoint_path)\n",
        tests=(_EARLY_UI + "test_a_run_that_stops_early_says_when_and_why",),
    ),
    Mutation(
        name="draw-tab-hides-which-weights",
        promise="The Draw tab says it reads the best epoch when best.pt is open",
        where="workbench.ui.window.teach:DrawTab.refresh_reader",
        old='                + (f"; {origin}" if origin else ""),\n',
        new='                + "",\n',
        tests=(_EARLY_UI + "test_a_run_that_stops_early_says_when_and_why",),
    ),
    Mutation(
        name="training-panel-drops-early-stop",
        promise="The Training panel's Early stop sets the run's patience",
        where="workbench.ui.panels.training:TrainingPanel.config_values",
        old='            "early_stop": self.patience_spin.value() or None,\n',
        new='            "early_stop": None,\n',
        tests=(
            _EARLY_UI
            + "test_the_training_panel_sets_early_stopping_and_the_best_metric",
        ),
    ),
]

MUTATIONS += [
    Mutation(
        name="scores-table-name-column-too-wide",
        promise="In a narrow Evaluation tab the scores table shows the scores, "
        "not a class column stretched over the width",
        where="workbench.ui.widgets.class_scores_table:ClassScoresTable._fit_columns",
        old="        self._widths = [min(name_width, _MAX_NAME_WIDTH)]\n",
        new="        self._widths = [360]\n",
        tests=(
            "tests/ui/test_class_scores_table.py::test_in_the_evaluation_tab_the_"
            "scores_are_in_view_not_stretched_names",
        ),
    ),
]

MUTATIONS += [
    Mutation(
        name="run-folder-name-reused",
        promise="Two runs begun in the same second never share a run folder",
        where="workbench.core.runs.folder:RunFolder.create",
        old="                (root / name).mkdir()\n",
        new="                (root / name).mkdir(exist_ok=True)\n",
        tests=(
            "tests/core/test_ledger.py::test_two_runs_begun_the_same_second_with_"
            "the_same_suffix_get_two_folders",
        ),
    ),
]

MUTATIONS += [
    Mutation(
        name="scores-table-beside-the-matrix",
        promise="At 1500 px the Evaluation tab shows every column of the scores "
        "table (class to F1) without a sideways scroll",
        where="workbench.ui.panels.evaluation:EvaluationPanel.__init__",
        old="        per_class.addWidget(self.scores_table)\n",
        new="        charts_layout.addWidget(self.scores_table, 2)\n",
        tests=(
            "tests/ui/test_class_scores_table.py::test_in_the_window_at_1500_px_"
            "every_column_is_in_view",
        ),
    ),
]

T_CROSSVAL = "tests/core/test_crossval.py::"
MUTATIONS += [
    Mutation(
        name="folds-sizes-uneven",
        promise="K folds are stratified and their sizes differ by one image at most",
        where="workbench.core.crossval.folds:fold_of_each",
        old="        start = (start + len(members)) % k\n",
        new="        start = 0\n",
        tests=(
            T_CROSSVAL + "test_five_folds_of_digits_are_disjoint_stratified_and_"
            "cover_every_image_once",
        ),
    ),
    Mutation(
        name="folds-train-on-the-held-out-fold",
        promise="A fold run never trains on the images it validates on",
        where="workbench.core.crossval.folds:fold_arrays",
        old="        arrays.train_images[train],\n        arrays.train_labels[train],\n",
        new="        arrays.train_images,\n        arrays.train_labels,\n",
        tests=(
            T_CROSSVAL + "test_five_folds_of_digits_are_disjoint_stratified_and_"
            "cover_every_image_once",
        ),
    ),
    Mutation(
        name="folds-ignore-the-seed",
        promise="The folds follow the run's seed",
        where="workbench.core.crossval.folds:fold_of_each",
        old="    generator = torch.Generator().manual_seed(seed)\n",
        new="    generator = torch.Generator().manual_seed(0)\n",
        tests=(T_CROSSVAL + "test_the_folds_follow_the_seed",),
    ),
    Mutation(
        name="folds-more-than-a-class-has",
        promise="More folds than a class has training images is one line, exit 2, "
        "nothing written",
        where="workbench.core.crossval.folds:check_folds",
        old="    if counts[smallest] < k:\n",
        new="    if counts[smallest] < 0:\n",
        tests=(
            T_CROSSVAL + "test_more_folds_than_a_class_has_images_is_refused_"
            "naming_the_class",
            T_CROSSVAL + "test_bad_folds_are_one_line_exit_2_and_nothing_written",
        ),
    ),
    Mutation(
        name="folds-normal-interval",
        promise="The interval over folds is Student's t, not the normal's 1.96",
        where="workbench.core.crossval.stats:estimate",
        old="    t = float(stdtrit(count - 1, 0.5 + CONFIDENCE / 2))\n",
        new="    t = 1.96\n",
        tests=(T_CROSSVAL + "test_the_interval_is_students_t_over_the_folds",),
    ),
    Mutation(
        name="folds-interval-past-100-percent",
        promise="An accuracy interval is cut at 100%",
        where="workbench.core.crossval.report:interval",
        old="    return max(low, value.low), min(high, value.high)\n",
        new="    return value.low, value.high\n",
        tests=(T_CROSSVAL + "test_an_interval_reaching_past_100_percent_is_cut_there",),
    ),
    Mutation(
        name="folds-predictions-misplaced",
        promise="Every training image is predicted once, by the fold model that "
        "did not train on it",
        where="workbench.core.crossval.held_out:held_out_predictions",
        old="        index=run.loaders.held_out.clone(),\n",
        new="        index=torch.arange(len(label)),\n",
        tests=(
            T_CROSSVAL + "test_train_folds_makes_k_ordinary_runs_a_group_and_held_"
            "out_predictions",
        ),
    ),
    Mutation(
        name="folds-ensemble-geometric-mean",
        promise="The fold models' ensemble averages their probabilities",
        where="workbench.core.crossval.ensemble:averaged",
        old="    return torch.logsumexp(logs, dim=0) - math.log(len(logits))\n",
        new="    return logs.mean(dim=0)\n",
        tests=(
            T_CROSSVAL + "test_the_ensemble_averages_probabilities_without_a_log_"
            "of_zero",
        ),
    ),
    Mutation(
        name="folds-ensemble-checked-on-a-fold",
        promise="The ensemble export is verified on the dataset's own validation "
        "images, which no fold model saw",
        where="workbench.core.crossval.ensemble:load_ensemble",
        old="    config.update(folds=1, fold=0)\n",
        new="",
        tests=(
            T_CROSSVAL + "test_train_folds_makes_k_ordinary_runs_a_group_and_held_"
            "out_predictions",
        ),
    ),
]

T_RUNS_FOLDS = "tests/ui/test_runs_folds.py::"
MUTATIONS += [
    Mutation(
        name="runs-group-lists-every-fold-run",
        promise="Choosing a cross-validation in the Runs tab lists exactly its folds",
        where="workbench.ui.panels.runs_groups:filter_runs",
        old="        return [r for r in runs if r.fold_group == choice.group]\n",
        new="        return [r for r in runs if r.fold_group]\n",
        tests=(
            T_RUNS_FOLDS
            + "test_choosing_a_group_lists_exactly_its_folds_in_fold_order",
        ),
    ),
    Mutation(
        name="runs-folds-sorted-as-text",
        promise="A cross-validation's folds are listed in fold order (10 after 2)",
        where="workbench.ui.panels.runs_table:_group_key",
        old='    return _sweep_key(f"{run.fold_group} #{number}")\n',
        new="    return run.fold\n",
        tests=(
            T_RUNS_FOLDS
            + "test_choosing_a_group_lists_exactly_its_folds_in_fold_order",
        ),
    ),
    Mutation(
        name="runs-group-summary-without-intervals",
        promise="A chosen cross-validation shows each score's mean and 95% interval",
        where="workbench.ui.panels.runs_folds:read_group",
        old="        estimates=group.estimates() if finished else {},\n",
        new="        estimates={},\n",
        tests=(
            T_RUNS_FOLDS + "test_the_summary_gives_each_scores_mean_and_interval_"
            "from_group_json",
        ),
    ),
]

T_DATA_ISSUES = "tests/core/test_data_issues.py::"
MUTATIONS += [
    Mutation(
        name="label-errors-threshold-not-the-mean",
        promise="Confident learning's per-class threshold is the class's mean "
        "self-confidence",
        where="workbench.core.data_issues.label_errors:class_thresholds",
        old="            thresholds[j] = probabilities[mine, j].mean()\n",
        new="            thresholds[j] = probabilities[mine, j].max()\n",
        tests=(T_DATA_ISSUES + "test_thresholds_are_each_class_mean_self_confidence",),
    ),
    Mutation(
        name="label-errors-without-thresholds",
        promise="An image no class is confidently is left out of the confident joint",
        where="workbench.core.data_issues.label_errors:confident_classes",
        old="    above = probabilities >= thresholds[None, :]\n",
        new="    above = probabilities >= 0\n",
        tests=(
            T_DATA_ISSUES + "test_the_confident_joint_flags_the_off_diagonal_with_a_"
            "suggestion",
        ),
    ),
    Mutation(
        name="label-errors-ranked-backwards",
        promise="Likely label errors come likeliest first",
        where="workbench.core.data_issues.label_errors:find_label_issues",
        old='    order = np.argsort(scores, kind="stable")\n',
        new='    order = np.argsort(-scores, kind="stable")\n',
        tests=(
            T_DATA_ISSUES + "test_the_confident_joint_flags_the_off_diagonal_with_a_"
            "suggestion",
        ),
    ),
    Mutation(
        name="most-confused-counts-the-diagonal",
        promise="The most-confused list is the confusion matrix's off-diagonal ranking",
        where="workbench.core.data_issues.rankings:most_confused",
        old="        if i != j and matrix[i, j] > 0\n",
        new="        if matrix[i, j] > 0\n",
        tests=(
            T_DATA_ISSUES + "test_the_most_confused_list_is_the_confusion_matrix_off_"
            "diagonal_ranking",
        ),
    ),
    Mutation(
        name="duplicates-only-exact",
        promise="A re-exposed copy of an image is found as a near-duplicate",
        where="workbench.core.data_issues.duplicates:find_duplicates",
        old="        rows, columns = torch.nonzero(block >= similarity, as_tuple=True)\n",
        new="        rows, columns = torch.nonzero(block > 1.5, as_tuple=True)\n",
        tests=(T_DATA_ISSUES + "test_copies_are_found_and_other_pictures_are_not",),
    ),
    Mutation(
        name="data-issues-never-reuses-its-folds",
        promise="data-issues reuses a finished cross-validation of the same data "
        "and settings instead of training the folds again",
        where="workbench.core.data_issues.held_out:matching_group",
        old="        if predictions is not None and torch.equal(predictions.label, labels):\n",
        new="        if False:\n",
        tests=(
            T_DATA_ISSUES + "test_data_issues_lists_a_flipped_label_writes_csv_and_"
            "reuses_its_folds",
        ),
    ),
]

T_FOLDS_WINDOW = "tests/ui/test_folds_window.py::"
MUTATIONS += [
    Mutation(
        name="folds-window-reproduce-runs-every-fold",
        promise="Reproduce of one fold run in the window trains that fold alone",
        where="workbench.ui.window.folds:FoldRunner.start_if_folds",
        old="        if cfg.folds < 2 or c.session.reproducing is not None:\n",
        new="        if cfg.folds < 2:\n",
        tests=(
            T_FOLDS_WINDOW + "test_three_folds_from_the_window_make_three_runs_a_"
            "group_and_reproduce_one",
        ),
    ),
    Mutation(
        name="folds-window-stop-starts-the-next-fold",
        promise="Stop in a fold saves it and starts no later fold",
        where="workbench.ui.window.folds:FoldRunner._on_controller_run_finished",
        old="        elif result.stopped:\n",
        new="        elif result.early_stop:\n",
        tests=(
            T_FOLDS_WINDOW + "test_stop_in_a_fold_saves_it_and_starts_no_later_fold",
        ),
    ),
    Mutation(
        name="folds-window-stop-during-the-check-starts-anyway",
        promise="Stop during the folds' data check starts no fold",
        where="workbench.ui.run_controller:RunController._on_task_finished",
        old="            outcome is None or (task is not None and task.cancel_requested)\n",
        new="            outcome is None\n",
        tests=(T_FOLDS_WINDOW + "test_stop_during_the_data_check_starts_nothing",),
    ),
    Mutation(
        name="folds-window-skips-the-last-fold",
        promise="The window trains every fold and the group holds K scores",
        where="workbench.ui.window.folds:FoldRunner._on_controller_fold_kept",
        old="        if self.fold + 1 < campaign.folds:\n",
        new="        if self.fold + 2 < campaign.folds:\n",
        tests=(
            T_FOLDS_WINDOW + "test_three_folds_from_the_window_make_three_runs_a_"
            "group_and_reproduce_one",
        ),
    ),
]

T_FIXES = "tests/core/test_fixes.py::"
MUTATIONS += [
    Mutation(
        name="fixes-exclusion-ignored",
        promise="An image the fixes exclude is left out of the run",
        where="workbench.core.data.fixes:apply_fixes",
        old="            kept[split][row] = False\n",
        new="            pass\n",
        tests=(
            T_FIXES + "test_a_built_in_datasets_fixes_relabel_exclude_undo_and_"
            "reproduce",
        ),
    ),
    Mutation(
        name="fixes-of-gone-images-applied-silently",
        promise="Fixes whose images are gone are not applied silently",
        where="workbench.core.data.fixes:_check",
        old="    if gone:\n",
        new="    if False:\n",
        tests=(T_FIXES + "test_fixes_whose_images_are_gone_are_not_applied_silently",),
    ),
    Mutation(
        name="fixes-keyed-by-file-name",
        promise="An image folder's fixes follow the picture, not its file name",
        where="workbench.core.data.fixes:folder_keys",
        old="    return [files[name] for name in train], [files[name] for name in val]\n",
        new="    return train, val\n",
        tests=(
            T_FIXES + "test_an_image_folders_fixes_follow_the_file_content_and_"
            "touch_no_file",
        ),
    ),
    Mutation(
        name="fixes-of-another-dataset-applied",
        promise="Fixes made for another dataset are refused in one line",
        where="workbench.core.data.fixes:Overlay.open",
        old="        if stored != overlay.dataset:\n",
        new="        if False:\n",
        tests=(
            T_FIXES + "test_a_damaged_or_foreign_overlay_is_one_line_and_left_as_it_is",
        ),
    ),
    Mutation(
        name="fixes-not-kept-in-the-config",
        promise="A run keeps its fixes in its config, so Reproduce repeats them",
        where="workbench.cli.train_flags:config_from_args",
        old="    return cfg.replace(fixes=entries, fixes_name=name)\n",
        new="    return cfg\n",
        tests=(
            T_FIXES + "test_a_built_in_datasets_fixes_relabel_exclude_undo_and_"
            "reproduce",
        ),
    ),
]

T_ISSUES_WINDOW = "tests/ui/test_data_issues_window.py::"
MUTATIONS += [
    Mutation(
        name="data-issues-filter-by-suggestion",
        promise="The data issues' class filter keeps the images of that given label",
        where="workbench.ui.issue_rows:label_error_rows",
        old="if _keep(int(given), given_class)",
        new="if _keep(int(suggested), given_class)",
        tests=(T_ISSUES_WINDOW + "test_the_class_filter_keeps_only_that_given_label",),
    ),
    Mutation(
        name="data-issues-lists-after-a-stop",
        promise="Find data issues opens its lists once the folds it trained finish",
        where="workbench.ui.window.data_issues:IssuesFinder._on_folds_ended",
        old='        if how == "finished":\n',
        new='        if how == "stopped":\n',
        tests=(
            T_ISSUES_WINDOW + "test_with_yes_the_folds_train_in_the_window_then_the_"
            "lists_open",
        ),
    ),
    Mutation(
        name="data-issues-ignores-the-folds-setting",
        promise="Find data issues uses the Folds setting (else 5) and reuses a "
        "finished cross-validation of the same settings",
        where="workbench.ui.window.data_issues:issues_config",
        old="    folds = cfg.folds if cfg.folds >= 2 else DEFAULT_FOLDS\n",
        new="    folds = DEFAULT_FOLDS\n",
        tests=(
            T_ISSUES_WINDOW + "test_a_finished_cross_validation_is_reused_without_"
            "training",
        ),
    ),
]

T_FIXES_WINDOW = "tests/ui/test_fixes_window.py::"
MUTATIONS += [
    Mutation(
        name="fixes-window-half-saved",
        promise="A fix that cannot be saved is shown and leaves the fixes as the "
        "file still has them",
        where="workbench.ui.issue_fixes:FixesRow._save",
        old="            overlay.fixes = before  # nothing half-saved: as the file still is\n",
        new="            pass\n",
        tests=(
            T_FIXES_WINDOW + "test_a_failed_save_is_shown_and_nothing_is_half_saved",
        ),
    ),
    Mutation(
        name="fixes-window-reproduce-takes-todays-overlay",
        promise="A run's own fixes are kept as recorded when its config is applied",
        where="workbench.ui.panels.fixes_check:FixesCheck.values",
        old='            "fixes": own if own is not None else self.overlay_entries,\n',
        new='            "fixes": self.overlay_entries,\n',
        tests=(
            T_FIXES_WINDOW + "test_a_configs_own_fixes_check_the_box_and_are_kept_"
            "as_given",
        ),
    ),
    Mutation(
        name="fixes-window-first-selected-row-only",
        promise="A fix applies to every selected row",
        where="workbench.ui.data_issues_view:DataIssuesDialog._on_fixes_requested",
        old="        for row in rows:\n",
        new="        for row in rows[:1]:\n",
        tests=(
            T_FIXES_WINDOW + "test_fixes_of_selected_rows_are_saved_in_order_and_"
            "undo_takes_the_last",
        ),
    ),
    Mutation(
        name="fixes-window-unchecked-box-applies",
        promise="Use fixes unchecked trains without fixes",
        where="workbench.ui.panels.fixes_check:FixesCheck.values",
        old="        if not self.isChecked():\n",
        new="        if False:\n",
        tests=(
            T_FIXES_WINDOW + "test_use_fixes_puts_exactly_the_overlays_fixes_in_the_"
            "config",
        ),
    ),
]

MUTATIONS += [
    Mutation(
        name="stubborn-errors-any-run-wrong",
        promise="Stubborn errors are the images every run on the same data got wrong",
        where="workbench.core.data_issues.stubborn:stubborn_errors",
        old="        wrong &= _predicted(model, pixels, labels, info) != labels\n",
        new="        wrong |= _predicted(model, pixels, labels, info) != labels\n",
        tests=(
            T_DATA_ISSUES + "test_stubborn_errors_are_the_images_every_run_on_the_"
            "same_data_got_wrong",
        ),
    ),
    Mutation(
        name="stubborn-errors-ask-fold-runs",
        promise="Stubborn errors ask only runs on the same data, not fold runs",
        where="workbench.core.data_issues.stubborn:_same_data",
        old="    if other.folds > 1:\n        return False\n",
        new="",
        tests=(
            T_DATA_ISSUES + "test_stubborn_errors_are_the_images_every_run_on_the_"
            "same_data_got_wrong",
        ),
    ),
]

# ------------------------------------------------ issue 38: why a run is slow
T_CLOCK = "tests/core/test_step_clock.py::"
T_SPLIT_UI = "tests/ui/test_step_split.py::"
T_PROFILED = "tests/core/test_profiled_steps.py::"
T_PROFILING = "tests/core/test_profiling.py::"
T_BREAKS = "tests/core/test_graph_breaks.py::"

MUTATIONS += [
    Mutation(
        name="step-split-forward-unmarked",
        promise="Each phase of a step is charged where its time went (forward apart from backward)",
        where="workbench.core.train.engine:_train",
        old="            clock.mark(FORWARD)\n",
        new="",
        tests=(T_CLOCK + "test_each_phase_of_a_step_is_charged_where_its_time_went",),
    ),
    Mutation(
        name="step-split-copy-left-in-data",
        promise="A copy made while a batch is fetched is charged to copy, not data",
        where="StepClock.copying",
        old="        self._charge(DATA, start, end, sign=-1.0)  # it was inside the data phase\n",
        new="",
        tests=(T_CLOCK + "test_a_copy_inside_the_fetch_is_charged_to_copy_not_data",),
    ),
    Mutation(
        name="step-split-compiling-step-kept",
        promise="A compiling step's time is left out of the step split",
        where="StepClock.drop_step",
        old="        self._totals, self._wall = list(totals), wall\n",
        new="",
        tests=(T_CLOCK + "test_a_compiling_step_is_left_out",),
    ),
    Mutation(
        name="step-split-wall-not-flushed",
        promise="The parts of a logged step add up to its measured step time",
        where="StepClock.take",
        old="            self._add_wall()\n",
        new="",
        tests=(T_CLOCK + "test_each_phase_of_a_step_is_charged_where_its_time_went",),
    ),
    Mutation(
        name="step-split-not-in-run-json",
        promise="run.json keeps the run's mean step split (step_time)",
        where="RunRecorder._record",
        old="            if event.phases:  # where the mean step's time went\n",
        new="            if False:\n",
        tests=(T_CLOCK + "test_the_runs_ledger_keeps_the_split",),
    ),
    Mutation(
        name="step-split-not-shown-live",
        promise="The Speed panel shows each logged step's split as it arrives",
        where="RunView._on_step",
        old="            self.window.speed_panel.show_split(ev.phases)\n",
        new="",
        tests=(
            T_SPLIT_UI
            + "test_each_logged_step_adds_to_the_strip_and_the_box_round_trips",
        ),
    ),
    Mutation(
        name="step-split-whole-run-not-shown",
        promise="At the end the Speed panel shows the whole run's mean split",
        where="RunView._on_train_result",
        old="        if result.phases:\n",
        new="        if False:\n",
        tests=(T_SPLIT_UI + "test_a_run_in_the_window_shows_its_split",),
    ),
    Mutation(
        name="step-split-bar-colours-shifted",
        promise="The stacked bar gives each phase its own colour, in order",
        where="workbench.ui.widgets.step_split_bar:_stack_across",
        old="    for name, seconds in zip(PHASES, phases, strict=True):\n",
        new="    for name, seconds in zip(reversed(PHASES), phases, strict=True):\n",
        tests=(T_SPLIT_UI + "test_the_bar_is_split_by_each_phases_share",),
    ),
    Mutation(
        name="step-split-not-printed",
        promise="train's summary says where the time went",
        where="workbench.cli.train:_train",
        old='        say(f"where the time went: {split}")\n',
        new="        pass\n",
        tests=(
            T_PROFILED
            + "test_train_profile_steps_prints_the_top_operators_and_how_to_open",
        ),
    ),
    Mutation(
        name="channels-last-ignored",
        promise="The model is kept in the memory format the config asks for",
        where="prepare_run",
        old="    layout = torch.channels_last if cfg.channels_last else torch.contiguous_format\n",
        new="    layout = torch.channels_last\n",
        tests=(
            "tests/core/test_engine.py::test_the_model_is_kept_in_the_memory_format_asked_for",
        ),
    ),
    Mutation(
        name="speed-panel-channels-last-dropped",
        promise="The Speed panel's channels_last box is the config's channels_last",
        where="SpeedPanel.config_values",
        old='            "channels_last": self.channels_last_check.isChecked(),\n',
        new='            "channels_last": True,\n',
        tests=(
            T_SPLIT_UI
            + "test_each_logged_step_adds_to_the_strip_and_the_box_round_trips",
        ),
    ),
    Mutation(
        name="profile-never-stepped",
        promise="A profile asked mid-run records the steps asked for",
        where="ProfiledSteps.after_step",
        old="        profiler.step()\n",
        new="",
        tests=(
            T_PROFILED
            + "test_a_profile_asked_mid_run_records_its_steps_with_each_phase_named",
        ),
    ),
    Mutation(
        name="profile-phases-unlabelled",
        promise="Each phase of a profiled step is named in the trace (workbench/<phase>)",
        where="ProfiledSteps.after_step",
        old="        self.clock.label_phases(profiler.labelling)\n",
        new="",
        tests=(
            T_PROFILED
            + "test_a_profile_asked_mid_run_records_its_steps_with_each_phase_named",
        ),
    ),
    Mutation(
        name="profile-run-ends-first-lost",
        promise="A run that ends before its profile is done still writes what it recorded",
        where="workbench.core.train.engine:_train",
        old="    yield from profiled.end()  # the run ended first: the steps it recorded\n",
        new="",
        tests=(T_PROFILED + "test_a_run_that_ends_first_writes_what_it_recorded",),
    ),
    Mutation(
        name="profile-dialog-not-shown",
        promise="A profile the window asked for opens its dialog",
        where="Profiles.show",
        old="        self.dialog.show()\n",
        new="",
        tests=(
            "tests/ui/test_profile_window.py::test_profiling_a_running_run_shows_its_trace_and_top_operators",
        ),
    ),
    Mutation(
        name="recompile-not-said",
        promise="A compiled run says when torch.compile compiled again, and why",
        where="with_recompile_notices",
        old="                    yield Notice(recompile_text(recompile))\n",
        new="                    pass\n",
        tests=(
            "tests/core/test_recompile_notices.py::test_the_partial_last_batch_recompile_is_a_notice_with_its_cause",
        ),
    ),
    Mutation(
        name="profile-trace-written-by-kineto",
        promise="A trace that does not fit is one clear error and leaves no file",
        where="export_trace_atomically",
        old="profile.export_chrome_trace(name, use_python_export=True)",
        new="profile.export_chrome_trace(name)",
        tests=(
            T_PROFILING
            + "test_a_trace_that_does_not_fit_is_one_clear_error_and_no_file",
        ),
    ),
    Mutation(
        name="profile-warmup-steps-counted",
        promise="A profile records exactly the steps asked for, after its warm-up",
        where="StepProfiler.step",
        old="        if self._profile.current_action in _RECORDING:\n",
        new="        if self._profile.current_action in _LABELLED:\n",
        tests=(
            T_PROFILING + "test_a_full_profile_is_a_chrome_trace_with_labelled_phases",
        ),
    ),
    Mutation(
        name="profile-top-operators-by-calls",
        promise="The top operators are ranked by self time",
        where="top_operators",
        old="    ranked = sorted(operators, key=lambda e: seconds[e.key], reverse=True)\n",
        new="    ranked = sorted(operators, key=lambda e: e.count, reverse=True)\n",
        tests=(
            T_PROFILING
            + "test_the_top_operators_are_by_self_time_and_their_shares_add_up",
        ),
    ),
    Mutation(
        name="profile-empty-trace-written",
        promise="A run that ends before recording leaves no trace file",
        where="StepProfiler._finish",
        old="        if self._profile is None or self._recorded == 0:\n",
        new="        if self._profile is None:\n",
        tests=(T_PROFILING + "test_a_run_that_ends_before_recording_leaves_no_file",),
    ),
    Mutation(
        name="graph-breaks-explain-shares-the-cache",
        promise="Explaining graph breaks does not make the training model recompile",
        where="explain_graph_breaks",
        old="                twin, backend=count_graphs, dynamic=False, isolate_recompiles=True\n",
        new="                twin, backend=count_graphs, dynamic=False, isolate_recompiles=False\n",
        tests=(T_BREAKS + "test_compiling_after_an_explain_is_not_a_recompile",),
    ),
    Mutation(
        name="graph-break-placed-inside-torch",
        promise="A graph break is placed at the user's line, not inside torch",
        where="_graph_break",
        old="    file, line = (users or frames)[-1]\n",
        new="    file, line = frames[-1]\n",
        tests=(
            T_BREAKS
            + "test_a_break_inside_torch_is_placed_at_the_user_line_calling_it",
        ),
    ),
    Mutation(
        name="graph-break-skipped-function-missed",
        promise="A break that makes Dynamo skip a whole function is reported",
        where="explain_graph_breaks",
        old="    found += [_from_log(message) for message in logged.messages]\n",
        new="    found += []\n",
        tests=(T_BREAKS + "test_a_break_inside_a_loop_says_the_function_is_skipped",),
    ),
    Mutation(
        name="recompile-watch-prints",
        promise="Watching recompiles prints nothing and puts the log settings back",
        where="_captured",
        old="            log.propagate = False\n",
        new="            log.propagate = True\n",
        tests=(
            T_BREAKS + "test_watching_prints_nothing_and_puts_the_log_settings_back",
        ),
    ),
]

MUTATIONS += [
    Mutation(
        name="fixes-one-copy-only",
        promise="Every byte-identical copy of a fixed image takes its fix, on both loaders",
        where="apply_fixes",
        old="            found.setdefault(key, []).append((split, row))\n",
        new="            found[key] = [(split, row)]\n",
        tests=(
            "tests/core/test_fixes.py::test_every_copy_of_a_fixed_image_takes_its_fix_on_"
            "both_loaders",
        ),
    ),
    Mutation(
        name="check-data-fixes-excluded-counted",
        promise="check-data --fixes leaves excluded images out of the counts",
        where="check_folder",
        old="                    report.excluded.append(path)\n                    continue\n",
        new="                    report.excluded.append(path)\n",
        tests=(
            "tests/core/test_check_data_fixes.py::test_check_data_counts_the_folder_as_"
            "the_overlay_makes_it",
        ),
    ),
    Mutation(
        name="check-data-fixes-relabel-ignored",
        promise="check-data --fixes counts a relabelled image under its new class",
        where="check_folder",
        old="                per_class[label] += 1\n",
        new="                per_class[name] += 1\n",
        tests=(
            "tests/core/test_check_data_fixes.py::test_check_data_counts_the_folder_as_"
            "the_overlay_makes_it",
        ),
    ),
    Mutation(
        name="check-data-fixes-gone-unchecked",
        promise="check-data --fixes refuses an overlay naming images that are gone",
        where="check_fixed_folder",
        old="check_fixes_found(cfg, sorted(report.fixed_keys), report.classes)",
        new="check_fixes_found(cfg, [fix[0] for fix in cfg.fixes], report.classes)",
        tests=(
            "tests/core/test_check_data_fixes.py::test_a_bad_overlay_is_one_line_and_exit_2",
        ),
    ),
    Mutation(
        name="predict-takes-fixes",
        promise="predict refuses --fixes: it reads no labels",
        where="cmd_predict",
        old="    if args.fixes is not None:\n",
        new="    if args.fixes is None:\n",
        tests=(
            "tests/core/test_check_data_fixes.py::test_predict_reads_no_labels_so_it_"
            "refuses_fixes",
        ),
    ),
]

T_DOCTOR = "tests/core/test_speed_doctor.py::"
MUTATIONS += [
    Mutation(
        name="doctor-gain-past-noise-ignored",
        promise="The doctor recommends a change only when it beats the baseline's own noise",
        where="workbench.core.perf.timed_rounds:judge",
        old="bound > 1 + max(noise, MIN_GAIN)",
        new="bound > 1 + MIN_GAIN",
        tests=(
            T_DOCTOR + "test_a_gain_is_recommended_only_when_its_worst_round_beats_"
            "the_noise",
        ),
    ),
    Mutation(
        name="doctor-judges-the-median-round",
        promise="The doctor judges a change by its worst round, not its median one",
        where="workbench.core.perf.timed_rounds:judge",
        old="    bound = ordered[min(spare_rounds(len(baseline)), len(ordered) - 1)]\n",
        new="    bound = ordered[len(ordered) // 2]\n",
        tests=(
            T_DOCTOR + "test_a_gain_is_recommended_only_when_its_worst_round_beats_"
            "the_noise",
        ),
    ),
    Mutation(
        name="doctor-pins-memory-on-the-cpu",
        promise="Pinned memory is a candidate only on CUDA",
        where="workbench.core.perf.speed_doctor:candidates",
        old='    if cuda and cfg.loader == "dataloader" and not cfg.pin_memory:\n',
        new='    if cfg.loader == "dataloader" and not cfg.pin_memory:\n',
        tests=(
            T_DOCTOR + "test_a_dataloader_run_is_offered_the_fast_loader_and_other_"
            "worker_counts",
        ),
    ),
    Mutation(
        name="doctor-flag-of-a-false-setting",
        promise="A change to off is written as its --no- flag",
        where="workbench.core.perf.speed_doctor:flags",
        old='            words.append(flag if value else "--no-" + flag[2:])\n',
        new="            words.append(flag)\n",
        tests=(
            "tests/core/test_cli_doctor_speed.py::test_changes_are_written_as_train_"
            "flags",
        ),
    ),
    Mutation(
        name="doctor-data-share-without-the-wait",
        promise="A slow loader is diagnosed data-bound from the step split's data share",
        where="workbench.core.perf.timed_rounds:_timing",
        old="        data = shares[DATA] + shares[COPY]  # what a loader change can touch\n",
        new="        data = shares[COPY]\n",
        tests=(
            T_DOCTOR + "test_a_slow_loader_is_diagnosed_data_bound_and_its_advice_"
            "measures_faster",
        ),
    ),
    Mutation(
        name="doctor-apply-changes-nothing",
        promise="The doctor's Apply sets the panels to the recommended change",
        where="SpeedDoctorDialog.apply",
        old="        self.window_.apply_config(cfg)\n",
        new="",
        tests=(
            "tests/ui/test_speed_doctor_dialog.py::test_the_doctor_shows_its_advice_"
            "and_apply_sets_only_the_panels",
        ),
    ),
    Mutation(
        name="doctor-apply-offered-for-a-loser",
        promise="Apply is offered only for a recommended change",
        where="SpeedDoctorDialog.show_report",
        old="            if finding.recommended:\n",
        new="            if True:\n",
        tests=(
            "tests/ui/test_speed_doctor_dialog.py::test_the_doctor_shows_its_advice_"
            "and_apply_sets_only_the_panels",
        ),
    ),
    Mutation(
        name="doctor-graph-breaks-of-another-batch",
        promise="doctor-speed explains the model's graph breaks on its own images",
        where="explain_config",
        old="        report = explain_graph_breaks(run.model, x[:2])\n",
        new="        report = explain_graph_breaks(run.model, torch.zeros(2, 3, 5, 5))\n",
        tests=(
            "tests/core/test_graph_breaks.py::test_a_configs_model_is_explained_on_its_"
            "own_images",
        ),
    ),
]

T_STUBBORN_UI = "tests/ui/test_stubborn_errors_window.py::"
T_AGAIN = "tests/ui/test_train_again_with_fixes.py::"
MUTATIONS += [
    Mutation(
        name="stubborn-window-order-reversed",
        promise="The window lists stubborn errors lowest self-confidence first",
        where="stubborn_order",
        old='    return rows[np.argsort(given, kind="stable")]\n',
        new='    return rows[np.argsort(-given, kind="stable")]\n',
        tests=(
            T_STUBBORN_UI
            + "test_stubborn_errors_are_listed_lowest_self_confidence_first",
        ),
    ),
    Mutation(
        name="stubborn-window-one-run-enough",
        promise="Stubborn errors are listed only when two or more runs were asked",
        where="workbench.ui.stubborn_view:listed",
        old="len(stubborn.runs) >= LEAST_RUNS",
        new="len(stubborn.runs) >= 1",
        tests=(
            T_STUBBORN_UI + "test_too_few_runs_or_none_wrong_say_why_nothing_is_listed",
        ),
    ),
    Mutation(
        name="fixes-card-accuracy-by-column",
        promise="The before/after card gives each class's accuracy (its recall)",
        where="class_accuracy",
        old="    support = matrix.sum(axis=1)\n",
        new="    support = matrix.sum(axis=0)\n",
        tests=(T_AGAIN + "test_the_card_says_each_classes_accuracy_before_and_after",),
    ),
    Mutation(
        name="train-again-without-the-fixes",
        promise="Train again with these fixes trains with the overlay's fixes",
        where="FixesRerun.request",
        old="cfg = cfg.replace(folds=1, fold=0, fixes=entries, fixes_name=DEFAULT_NAME)",
        new="cfg = cfg.replace(folds=1, fold=0)",
        tests=(
            T_AGAIN
            + "test_train_again_trains_with_the_fixes_and_compares_on_the_same_images",
        ),
    ),
]

T_PROBE = "tests/core/test_recompile_probe.py::"
T_SHARED = "tests/core/test_shared_features.py::"
MUTATIONS += [
    Mutation(
        name="shared-features-unchecked",
        promise="A kept feature that is not the fold's own ends the sharing",
        where="SharedFeatures.keep",
        old="        if known.any() and not torch.equal(\n",
        new="        if False and not torch.equal(\n",
        tests=(
            T_SHARED + "test_a_kept_feature_that_is_not_a_folds_own_ends_the_sharing",
        ),
    ),
    Mutation(
        name="cached-validation-through-the-backbone",
        promise="A frozen-backbone run validates its head on cached validation features",
        where="FeatureFeed.evaluate",
        old="        if self._val_batches is None:\n",
        new="        if True:\n",
        tests=(T_SHARED + "test_validation_on_kept_features_is_the_models_to_the_bit",),
    ),
    Mutation(
        name="ensemble-shares-different-backbones",
        promise="The ensemble shares a backbone only when every fold's is bit-equal",
        where="shared_backbone_heads",
        old="            k != j or not torch.equal(v, w)\n",
        new="            k != j\n",
        tests=(T_SHARED + "test_the_ensemble_runs_a_shared_backbone_once_per_batch",),
    ),
    Mutation(
        name="held-out-features-recomputed",
        promise="A frozen-backbone data-issues pass computes each image's features once",
        where="FeatureFeed._all_features",
        old="            why = yield from self._held_out_features(capture, stop, sharing)\n",
        new="            pass\n",
        tests=(
            "tests/core/test_data_issues.py::test_a_frozen_backbone_pass_computes_each_"
            "images_features_once",
        ),
    ),
    Mutation(
        name="engine-validates-through-the-backbone",
        promise="The engine validates a frozen-backbone run on cached features",
        where="workbench.core.train.engine:_train",
        old="        predictions = feed.evaluate()  # the head on cached features when it can\n",
        new="        predictions = evaluate_predictions(run)\n",
        tests=(
            T_SHARED + "test_a_pass_computes_each_image_once_and_predicts_exactly_as_"
            "without",
        ),
    ),
    Mutation(
        name="walk-skips-the-partial-batch",
        promise="The speed doctor lists the recompile of an epoch's partial last batch",
        where="epoch_recompiles",
        old="        if train_rest:\n",
        new="        if False:\n",
        tests=(T_PROBE + "test_the_walk_finds_the_recompiles_that_training_then_says",),
    ),
    Mutation(
        name="walk-skips-validation",
        promise="The speed doctor lists validation's mode switch as a recompile",
        where="epoch_recompiles",
        old="        with torch.no_grad():\n            compiled(x)\n",
        new="        compiled(x)\n",
        tests=(
            T_PROBE + "test_an_epoch_of_whole_batches_recompiles_only_for_validation",
        ),
    ),
    Mutation(
        name="walk-keeps-the-notes-it-found",
        promise="Explaining or walking a model leaves Dynamo's size notes as they were",
        where="dynamo_notes_kept",
        old="        state.clear()\n        state.update(saved)\n",
        new="        pass\n",
        tests=(
            T_PROBE + "test_the_walk_keeps_dynamos_notes_and_the_runs_model",
            T_PROBE + "test_the_walk_finds_the_recompiles_that_training_then_says",
        ),
    ),
    Mutation(
        name="walk-starts-from-the-processs-notes",
        promise="The walk predicts a new process's recompiles, whatever compiled before",
        where="epoch_recompiles",
        old="dynamo_notes_kept(start_empty=True)",
        new="dynamo_notes_kept()",
        tests=(T_PROBE + "test_the_walk_predicts_a_new_process_whatever_ran_before",),
    ),
    Mutation(
        name="doctor-arms-leave-their-notes",
        promise="A diagnosis leaves Dynamo's size notes as they were",
        where="diagnose",
        old="    with dynamo_notes_kept():\n",
        new="    with torch.enable_grad():\n",
        tests=(
            T_PROBE
            + "test_a_diagnosis_of_a_compiled_run_leaves_dynamos_notes_as_they_were",
        ),
    ),
    Mutation(
        name="doctor-walks-no-epoch",
        promise="The doctor's compile report includes an epoch's recompiles",
        where="explain_config",
        old="            report, recompiles=epoch_recompiles(run), epoch_walked=True\n",
        new="            report, epoch_walked=True\n",
        tests=(T_PROBE + "test_the_doctor_reports_an_epochs_recompiles",),
    ),
    Mutation(
        name="device-doctor-row-without-mnist",
        promise="device_check's speed doctor row is skipped, with why, without MNIST",
        where="bench.device_check:skip_reason",
        old='    if key in ("mnist99", "doctor") and not (data_dir / "MNIST").is_dir():\n',
        new='    if key in ("mnist99",) and not (data_dir / "MNIST").is_dir():\n',
        tests=("tests/core/test_device_check.py::test_skip_reasons",),
    ),
    Mutation(
        name="device-doctor-row-passes-a-cancelled-diagnosis",
        promise="device_check's speed doctor row reports the doctor's diagnosis",
        where="check_speed_doctor",
        old="    *_, report = diagnose(cfg, steps=steps, rounds=rounds)\n",
        new="    *_, report = diagnose(cfg, steps=steps, rounds=rounds, cancel=lambda: True)\n",
        tests=(
            "tests/core/test_device_check.py::test_the_speed_doctor_row_diagnoses_a_"
            "default_run_on_the_cpu",
        ),
    ),
    Mutation(
        name="doctor-spread-hides-the-spared-round",
        promise="The doctor's shown spread is the rounds it judged; a spared one is named",
        where="gain_text",
        old="    if finding.bound > finding.low:\n",
        new="    if False:\n",
        tests=(
            "tests/core/test_speed_doctor.py::test_the_gain_shows_the_rounds_judged_"
            "and_names_a_spared_one",
        ),
    ),
    Mutation(
        name="window-check-ignores-the-fixes",
        promise="The Data panel's check counts a folder as a run with Use fixes sees it",
        where="DataCheckRow._fixes_of",
        old="        values = self._fixes() if shown else {}\n",
        new="        values = {}\n",
        tests=(
            "tests/ui/test_fixes_window.py::test_check_data_counts_the_folder_as_a_"
            "run_with_its_fixes_sees_it",
            "tests/ui/test_fixes_window.py::test_check_data_with_a_fix_whose_image_"
            "is_gone_says_so",
        ),
    ),
    Mutation(
        name="window-check-keeps-a-report-of-other-fixes",
        promise="Toggling Use fixes checks the folder again with the fixes now in use",
        where="report_key",
        old="    return (str(root), image_size, folder_stamp(root), fixes, fixes_name)\n",
        new='    return (str(root), image_size, folder_stamp(root), (), "")\n',
        tests=(
            "tests/ui/test_fixes_window.py::test_check_data_counts_the_folder_as_a_"
            "run_with_its_fixes_sees_it",
        ),
    ),
    Mutation(
        name="gone-fixes-named-by-hash",
        promise="Fixes whose images are gone are named by the files they recorded",
        where="workbench.core.data.fixes:_check",
        old='        shown = ", ".join(files.get(key, key) for key in gone[:3]) + (\n',
        new='        shown = ", ".join(gone[:3]) + (\n',
        tests=(
            "tests/core/test_fixes.py::test_fixes_whose_images_are_gone_are_not_"
            "applied_silently",
        ),
    ),
    Mutation(
        name="gui-gc-stays-on-once-turned-on",
        promise="Cycle collection turned back on is off again before a worker thread starts",
        where="collect_in_gui_thread",
        old="        gc.disable()  # again: code that turned it back on must not win\n",
        new="        pass\n",
        tests=(
            "tests/ui/test_gui_gc.py::test_collection_turned_back_on_is_off_again_"
            "before_the_next_thread",
        ),
    ),
    Mutation(
        name="script-long-path-not-as-ruff-formats-it",
        promise="A script written for a long data path is code ruff format leaves as it is",
        where="workbench.core.script.parts:assignment",
        old="    if len(inner) <= LINE_LENGTH:\n",
        new="    if False:\n",
        tests=(
            "tests/core/test_script_long_paths.py::test_a_script_for_a_long_data_"
            "path_is_tidy",
        ),
    ),
    Mutation(
        name="tools-open-during-a-run",
        promise="The finder, the doctor and Find data issues wait for the run to end",
        where="config_when_idle",
        old="    if window.controller.state is not RunState.IDLE:\n",
        new="    if False:\n",
        tests=(
            "tests/ui/test_speed_doctor_dialog.py::test_the_doctor_waits_for_a_run_to_end",
        ),
    ),
]
