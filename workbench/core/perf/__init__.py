"""Why a run is slow: measured advice, compile's graph breaks, traces on demand.

graph_breaks  torch.compile explained: graph breaks with their file and line, recompiles
profiling     a torch.profiler trace of a few steps, and its top operators
recompile_probe  the recompiles an epoch will cause, from a walk of a model copy
speed_doctor  candidate settings timed against the run's own, advice past the noise
timed_rounds  the doctor's clock: configs timed in alternating rounds; the noise rule

The always-on split of each step's time lives with the engine
(``workbench.core.train.step_clock``).
"""

__all__ = [
    "graph_breaks",
    "profiling",
    "recompile_probe",
    "speed_doctor",
    "timed_rounds",
]
