"""Finding good settings before (or between) runs.

preserve   a run's whole state kept and put back exactly (weights, optimizer,
           schedule, random states, data position)
lr_find    the learning-rate range test, its suggestions, and the probe runs
           that check them
"""
