"""The runs ledger: a folder per run, written as it trains, read back by the list.

folder        a run folder: its files, run.json, interrupted runs, rename/tag/delete
recorder      the ledger written event by event, and the checkpoint autosaved
listing       the runs list, finding a run, its metrics and events read back
run_file      reading run.json, and what is wrong with a damaged one
index         the runs list reread cheaply: only the run.json files that changed
tail          following a file another process appends to, whole lines only
compare       which config fields differ between runs, and how they scored
data_record   what data a run read, and whether it changed since
reproduce     running a finished run again and the verdict on it
best_or_latest  a run's best.pt or latest checkpoint.pt, and words saying which
"""

__all__ = [
    "best_or_latest",
    "compare",
    "data_record",
    "folder",
    "index",
    "listing",
    "recorder",
    "reproduce",
    "run_file",
    "tail",
]
