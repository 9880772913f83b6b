"""The window's panels, one widget per group of PyTorch knobs.

Each config panel shows part of a ``TrainConfig``: ``apply_config(cfg)`` fills
it in (without emitting ``changed``), ``config_values()`` returns its fields,
and ``changed`` fires when the user edits one.

base            what every config panel shares
training        optimizer and schedule, length and seed, the run's controls
data            which dataset, where it lives, downloading it, what it looks like
image_folder    the Data panel's image folder and its Check data row
fixes_check     the Data panel's Use fixes box: the overlay's fixes in the config
samples         the Data panel's pictures: examples per class, augmented ones
model           the architecture, its pretrained weights, what trains
device          CPU, each CUDA GPU, MPS (the unavailable ones say why), processes
loader          batch size, in-memory path or a DataLoader, workers, pin_memory
speed           precision and torch.compile, with measured step times
freeze          the freeze tree: every module and parameter, a checkbox each
draw            the Draw tab: draw a digit, see what the model sees, teach it
draw_layout     the Draw tab's widgets and their layout
draw_keys       the Draw tab's keys: digits, Enter, Esc, Ctrl+Z
my_digits_box   the Draw tab's "My digits" group: label, Add, drawings kept
fine_tune_card  the texts of the Draw tab's fine-tune card
predict_folder  the Draw tab's reading of a dropped folder or several files
predictions_table  the table of those files: class, confidence, Export CSV
evaluation      the Evaluation tab: confusion matrix per epoch, hard images
health          layer health: gradient and weight norms, weight histograms
runs            the Runs tab: every run folder, renamed, tagged, compared
runs_table      the Runs tab's table: one row per run, sortable by value
"""

__all__ = [
    "base",
    "data",
    "device",
    "draw",
    "draw_keys",
    "draw_layout",
    "evaluation",
    "fine_tune_card",
    "fixes_check",
    "freeze",
    "health",
    "image_folder",
    "loader",
    "model",
    "my_digits_box",
    "predict_folder",
    "predictions_table",
    "runs",
    "runs_table",
    "speed",
]
