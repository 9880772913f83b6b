"""The experiment as one plain PyTorch script (the Code tab and ``script``).

writer   write_script: a config as one runnable file
parts    the code blocks a script is made of
model    the model half: definition, initialisation, freezing
data_code  the data half of main(): reading, batching, the DataLoader path
folder_data  reading an image folder as the workbench does
cifar_data   reading CIFAR-10's binary records as the workbench does
my_digits_data  reading the user's drawings (and the replayed base images)
augment_code  the seeded batch augmentation, written as plain torch
"""

__all__ = [
    "augment_code",
    "cifar_data",
    "data_code",
    "folder_data",
    "model",
    "my_digits_data",
    "parts",
    "writer",
]
