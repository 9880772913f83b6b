"""The Qt-free engine both front-ends (the window and the command line) drive.

At the top, what both front-ends call directly or every wing shares:

config         one run's configuration: a validated frozen dataclass, JSON/TOML
events         the plain-data events the engine yields (steps, epochs, results)
training_run   a run's state: what the engine trains and a checkpoint stores
session        the run lifecycle: plan, begin, train, finish, open, reproduce
start_plan     what Start does with a config: continue, resume or begin anew
finetune       teaching a trained model the user's handwriting, and its cost
model_offer    which model a config asks for, and weights offered to it
predict        from a picture to class probabilities, the way the data was made
predict_batch  many files read like one: a folder's images, the CSV of them
errors         the exceptions the core raises, with text meant for the user
atomic_files   writing files so a crash or a full disk never leaves a broken one

The wings, one package each:

train/         the engine, probes, feature cache, freezing, precision, devices
data/          datasets, downloads, image folders, loaders, augmentation
models/        built-ins, torchvision, the catalog, user files, weights
checkpoints/   versioned checkpoints: io, schema, the inspect report
runs/          the runs ledger: folders, recorder, listing, reproduce
export/        TorchScript / torch.export / ONNX, verified, with a model card
script/        the run as one plain PyTorch script
distributed/   torchrun and DistributedDataParallel: env, ddp, resharding
host/          the process itself: OpenMP threads, memory, process trees
tuning/        finding settings: the learning-rate finder and its probes
crossval/      k-fold cross-validation: fold runs as a group, out-of-fold predictions
data_issues/   label errors, top losses, confused pairs, duplicates over a dataset

No module here imports Qt (tests/core/test_core_is_qt_free.py).
"""

__all__ = [
    "atomic_files",
    "checkpoints",
    "config",
    "crossval",
    "data",
    "data_issues",
    "distributed",
    "errors",
    "events",
    "export",
    "finetune",
    "host",
    "model_offer",
    "models",
    "predict",
    "predict_batch",
    "runs",
    "script",
    "session",
    "start_plan",
    "train",
    "training_run",
    "tuning",
]
