"""Finding good settings before (or between) runs.

preserve   a run's whole state kept and put back exactly (weights, optimizer,
           schedule, random states, data position)
lr_find    the learning-rate range test
lr_suggest the valley and steepest rules read off its curve
lr_probe   the probe runs that check a suggestion; find_rate, the whole find
space      a sweep's search space, checked, and a trial's config from it
study      where a study lives, the plan it records, which worker holds a trial
sweep      one worker's loop: Optuna trials (ask and tell), each a run of the ledger
workers    several local workers of one sweep (--parallel)
importance which settings mattered, over a study or the whole ledger
"""
