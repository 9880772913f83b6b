"""The experiment as one plain PyTorch script (the Code tab and ``script``).

writer   write_script: a config as one runnable file
parts    the code blocks a script is made of
model    the model half: definition, initialisation, freezing
folder_data  reading an image folder as the workbench does
"""

__all__ = [
    "folder_data",
    "model",
    "parts",
    "writer",
]
