"""The process the engine runs in: threads, memory and child processes.

threads        OpenMP threads of a worker thread: as fast as the main thread
memory         keeping freed memory in the process (glibc malloc settings)
process_tree   finding a job's processes, reparented or not
"""

__all__ = [
    "memory",
    "process_tree",
    "threads",
]
