"""Finding good settings before (or between) runs.

preserve   a run's whole state kept and put back exactly (weights, optimizer,
           schedule, random states, data position)
lr_find    the learning-rate range test
lr_suggest the valley and steepest rules read off its curve
lr_probe   the probe runs that check a suggestion; find_rate, the whole find
space      a sweep's search space, checked, and a trial's config from it
sweep      Optuna trials (ask and tell), each trained as a run of the ledger
"""
