"""The runs list, reread cheaply: only the ``run.json`` files that changed.

A window lists the runs folder again whenever it changes (a run starts or
ends, another process adds a run). :class:`RunIndex` keeps each run's summary
with the identity of the ``run.json`` it was read from (its inode, size and
modification time: ``run.json`` is replaced atomically on every write), so a
look at hundreds of runs costs one ``stat`` each.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.runs.folder import RUN_FILE, RunFolder, runs_dir
from workbench.core.runs.listing import RunSummary, summarize

_Key = tuple[int, int, int]


class RunIndex:
    """:func:`~workbench.core.runs.listing.list_runs`, remembering what it read."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[_Key, RunSummary]] = {}

    def runs(self, root: Path | None = None) -> list[RunSummary]:
        """Every run with a readable ``run.json``, newest first.

        Parameters
        ----------
        root : Path, optional
            The runs folder (default :func:`~workbench.core.runs.folder.runs_dir`).

        Returns
        -------
        list[RunSummary]
            As :func:`~workbench.core.runs.listing.list_runs` returns them.
        """
        root = root or runs_dir()
        try:
            with os.scandir(root) as entries:
                # Names, not Paths: sorting 300 Paths costs more than reading.
                paths = sorted((e.path for e in entries if e.is_dir()), reverse=True)
        except OSError:
            self._seen = {}
            return []
        seen: dict[str, tuple[_Key, RunSummary]] = {}
        for path in paths:
            try:
                stat = os.stat(os.path.join(path, RUN_FILE))
            except OSError:
                continue
            key = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            known = self._seen.get(path)
            summary = (
                known[1]
                if known and known[0] == key
                else summarize(RunFolder(Path(path)))
            )
            if summary is not None:
                seen[path] = (key, summary)
        self._seen = seen
        return [summary for _, summary in seen.values()]
