"""The window's panels, one widget per group of PyTorch knobs.

Each panel shows part of a ``TrainConfig``: ``apply_config(cfg)`` fills it in
(without emitting ``changed``), ``config_values()`` returns its fields, and
``changed`` fires when the user edits one.
"""
