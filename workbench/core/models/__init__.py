"""The models a run can train, and the weights they start from.

catalog              which names a run can give: built-ins, torchvision, a file
builtins             the built-in networks, build_model, materialising lazy ones
torchvision_models   torchvision's classifiers fitted to a run's classes and images
user_file            a model from the user's own file (path/to/file.py:Name)
source               whether a model file changed since a run was made from it
pretrained           pretrained weights in torch's hub cache, or downloaded
state_dict_match     comparing saved weights with a model, loading what fits
inputs               the inputs a model takes, from the data a run reads
summary              shapes, parameters, MACs and activation memory per layer
preview              a model before its run: size, training cost, a build off-thread
private_random       a thread's random draws sent to a private generator
"""

__all__ = [
    "builtins",
    "catalog",
    "inputs",
    "pretrained",
    "preview",
    "private_random",
    "source",
    "state_dict_match",
    "summary",
    "torchvision_models",
    "user_file",
]
