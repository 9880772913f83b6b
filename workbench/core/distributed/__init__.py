"""One run on several processes (torchrun, DistributedDataParallel).

env        torchrun's environment, the process group, rank and world size
ddp        DDP around the engine's model: sharding, agreed stops, rank RNGs
sync_bn    BatchNorm statistics per process, or shared (SyncBatchNorm) on CUDA
reshard    resuming a checkpoint on another number of processes
"""

__all__ = [
    "ddp",
    "env",
    "reshard",
    "sync_bn",
]
