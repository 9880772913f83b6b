"""One run on several processes (torchrun, DistributedDataParallel).

env        torchrun's environment, the process group, rank and world size
ddp        DDP around the engine's model: sharding, agreed stops, rank RNGs
sync_bn    BatchNorm statistics per process, or shared (SyncBatchNorm) on CUDA
reshard    resuming a checkpoint on another number of processes
job        the command of a multi-process run started as a child, and its folder
"""

__all__ = [
    "ddp",
    "env",
    "job",
    "reshard",
    "sync_bn",
]
