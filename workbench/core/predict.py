"""From a picture of a digit to class probabilities, the way the data was made.

MNIST digits were cropped to their ink, scaled into a 20x20 box keeping the
aspect ratio, and placed by centre of mass in a 28x28 field. A drawing or a
photo must go through the same steps, or the model sees something it never
trained on.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch
from torch import nn

from workbench.core.checkpoints.io import load_model_state
from workbench.core.data.folder_images import (
    UnreadableImage,
    as_channels,
    decode_image,
    decoding_limits,
    read_image_bytes,
    read_square,
)
from workbench.core.data.preprocess import (
    INVERT_ABOVE,
    PredictError,
    digits_style,
    mnist_style,
    naive_resize,
    style_image,
    style_of,
)
from workbench.core.data.registry import DATASET_INFO, DatasetInfo
from workbench.core.host.threads import single_threaded
from workbench.core.models.builtins import build_unseeded
from workbench.core.models.catalog import is_torchvision
from workbench.core.models.inputs import fit_to_model

__all__ = [
    "PredictError",
    "Prediction",
    "ScoredImage",
    "digits_style",
    "load_image",
    "mnist_style",
    "naive_resize",
    "photo_input",
    "photo_pixels",
    "predict",
    "preprocess",
    "stored_input",
    "to_model_input",
]


@dataclass(frozen=True, slots=True)
class Prediction:
    """Class probabilities for one image; ``top`` is sorted, most likely first."""

    probabilities: tuple[float, ...]
    class_names: tuple[str, ...]

    @property
    def label(self) -> int:
        """Index of the most likely class."""
        return int(np.argmax(self.probabilities))

    def top(self, k: int = 3) -> list[tuple[str, float]]:
        """The ``k`` most likely (class name, probability) pairs."""
        order = np.argsort(self.probabilities)[::-1][:k]
        return [(self.class_names[i], self.probabilities[i]) for i in order]


def load_image(path: str | Path) -> np.ndarray:
    """Read an image file as float32 in [0, 1], white ink on black.

    Dark-on-light pictures (a scan, a photo of paper) are inverted, judged by
    the border, which is background in any sensible digit picture.
    """
    path = Path(path)
    if not path.is_file():
        raise PredictError(f"no image at {path}")
    try:
        with decoding_limits():  # the same rule as check-data and a run
            image, _original = decode_image(read_image_bytes(path), DIGIT_DECODE_SIDE)
    except UnreadableImage as exc:
        raise PredictError(f"{path}: {exc}") from None
    gray = np.asarray(image.convert("L"), dtype=np.float32) / 255.0
    border = np.concatenate([gray[0], gray[-1], gray[:, 0], gray[:, -1]])
    if border.mean() > INVERT_ABOVE:
        gray = 1.0 - gray
    return gray


def _info(dataset: str | DatasetInfo) -> DatasetInfo:
    return dataset if isinstance(dataset, DatasetInfo) else DATASET_INFO[dataset]


def to_model_input(image28: np.ndarray, dataset: str | DatasetInfo) -> torch.Tensor:
    """A (1, C, 28, 28) tensor normalised with ``dataset``'s statistics.

    C is ``dataset``'s channels: 1, or 3 for a torchvision model's inputs
    (``model_inputs.fit_to_model``), the gray drawing repeated as the loaders do.
    """
    info = _info(dataset)
    tensor = torch.as_tensor(image28, dtype=torch.float32)
    return info.normalise(tensor[None, None].expand(1, info.channels, -1, -1))


def stored_input(image: np.ndarray, dataset: str | DatasetInfo) -> torch.Tensor:
    """A stored uint8 dataset image as a run's loaders feed it: (1, C, H, W).

    ``image`` is (H, W) (one channel) or (C, H, W). The operations and their
    order are the loaders' (``x / 255``, minus the mean, over the std, in
    float32), so the tensor is bit for bit the one a run scored.
    """
    info = _info(dataset)
    x = torch.as_tensor(np.ascontiguousarray(image)).to(torch.float32)
    if x.ndim == 3:
        return info.normalise(x.div(255)[None])
    return info.normalise(x.div(255)[None, None])


# Datasets of photos: an image file is brought to size, not given a digit recipe.
PHOTO_DATASETS = ("cifar10", "folder")
# A picture of a digit decodes at a JPEG's reduced scale down to this side:
# the recipe brings it to 28 pixels anyway.
DIGIT_DECODE_SIDE = 256


def photo_pixels(path: str | Path, info: DatasetInfo) -> np.ndarray:
    """An image file as a photo run's loaders store it: uint8 (C, S, S).

    Resized (shorter side) and centre-cropped to the run's size, with the
    run's channels.

    Raises
    ------
    PredictError
        No such file, or no image this program reads (empty, truncated, ...).
    """
    path = Path(path)
    if not path.is_file():
        raise PredictError(f"no image at {path}")
    try:
        decoded = read_square(path, info.image_shape[1])
    except UnreadableImage as exc:
        raise PredictError(f"{path}: {exc}") from None
    # A writable copy: torch refuses to wrap Pillow's read-only buffers.
    return np.array(as_channels(decoded.pixels, info.channels), order="C")


def photo_input(path: str | Path, info: DatasetInfo) -> torch.Tensor:
    """An image file as a photo run's loaders feed it: (1, C, S, S), normalised.

    Resized and centre-cropped to the run's size, with the run's channels.
    """
    pixels = photo_pixels(path, info)
    x = torch.from_numpy(pixels).to(torch.float32)
    return info.normalise(x.div(255)[None])


def preprocess(
    image: np.ndarray, dataset: str, model: str | None = None, weights: str = "none"
) -> torch.Tensor:
    """The recipe that matches ``dataset``, ready for the model.

    With ``model`` (and its ``weights``), the inputs that model takes: a
    torchvision model gets three channels and their statistics, as in training.
    """
    info = DATASET_INFO[dataset]
    if model is not None:
        info = fit_to_model(info, model, weights)
    return to_model_input(style_image(image, style_of(dataset)), info)


def predict(
    model: nn.Module, batch: torch.Tensor, class_names: tuple[str, ...]
) -> list[Prediction]:
    """Probabilities for each image of ``batch`` with the model in ``eval()`` mode.

    The model's own training flag is restored afterwards.
    """
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            probs = torch.softmax(model(batch.to(device)).float(), dim=1).cpu()
    finally:
        model.train(was_training)
    return [Prediction(tuple(row.tolist()), class_names) for row in probs]


@dataclass(frozen=True, slots=True, eq=False)
class ScoredImage:
    """A validation image as an evaluation scored it, to be read again as it was.

    Attributes
    ----------
    image : numpy.ndarray
        uint8 as stored: (H, W) white ink on black for the digit datasets, or
        (C, H, W) for photos. No recipe applies to it.
    label : int
        Its true class.
    predicted : int
        The class the evaluation predicted.
    confidence : float
        The softmax probability of ``predicted`` the evaluation gave it.
    index : int
        Its index in the validation split.
    epoch : int
        0-based epoch whose weights scored it.
    """

    image: np.ndarray
    label: int
    predicted: int
    confidence: float
    index: int
    epoch: int

    def pixels(self) -> np.ndarray:
        """The image as float32 in [0, 1]."""
        return self.image.astype(np.float32) / np.float32(255.0)


@dataclass(frozen=True, slots=True, eq=False)
class Reading:
    """What the model made of one image, and exactly what it was shown.

    Attributes
    ----------
    probabilities : numpy.ndarray
        Softmax over the classes, float64 (num_classes,).
    class_names : tuple of str
        Display name of each class.
    field : numpy.ndarray
        The float32 picture in [0, 1] that was normalised into ``input``:
        (H, W) for one channel (28x28 for the digit datasets), (C, H, W) else.
    input : torch.Tensor
        The (1, C, H, W) tensor passed to the model, unchanged.
    saliency : numpy.ndarray or None
        |d logit[predicted] / d input|, the largest over channels, scaled to
        [0, 1] (H, W), when asked for.
    naive : bool
        True when the field is a plain resize instead of the dataset's recipe.
    """

    probabilities: np.ndarray
    class_names: tuple[str, ...]
    field: np.ndarray
    input: torch.Tensor
    saliency: np.ndarray | None
    naive: bool

    @property
    def label(self) -> int:
        """Index of the most likely class."""
        return int(np.argmax(self.probabilities))

    @property
    def confidence(self) -> float:
        """Probability of the most likely class."""
        return float(self.probabilities[self.label])


def _field(pixels: np.ndarray) -> np.ndarray:
    """uint8 (H, W) or (C, H, W) as float32 [0, 1]; one channel as (H, W)."""
    field = pixels.astype(np.float32) / np.float32(255.0)
    return field[0] if field.ndim == 3 and field.shape[0] == 1 else field


class Predictor:
    """A private eval-mode copy of a model, for reading single images.

    The copy never trains and never shares tensors with the model it was
    copied from, so reading an image cannot race a training thread or change
    the trained model's ``train()``/``eval()`` mode. Feed it fresh weights with
    :meth:`load_weights` (a :func:`~workbench.core.models.builtins.snapshot_state`).

    Parameters
    ----------
    model_name : str
        A config's ``model``: a built-in, a torchvision name or file.py:Name.
    dataset : str
        The dataset the inputs are prepared like (``TrainConfig.style_dataset``):
        a digit dataset's drawings get its recipe; an image file for a photo
        dataset (:data:`PHOTO_DATASETS`) is resized and centre-cropped.
    class_names : tuple of str, optional
        Display names, one per output; by default those of ``info``.
    info : DatasetInfo, optional
        The inputs' description: shape, channels, per-channel statistics (a
        run's ``loaders.info``, a checkpoint's ``info_of``). By default the
        built-in ``dataset``'s.
    weights : str
        The run's ``weights``: a pretrained torchvision model is built as it
        trained (GoogLeNet's input transform), its weights loaded next.
    """

    def __init__(
        self,
        model_name: str,
        dataset: str,
        class_names: tuple[str, ...] | None = None,
        *,
        info: DatasetInfo | None = None,
        weights: str = "none",
    ) -> None:
        self.model_name = model_name
        self.dataset = dataset
        self.info = info if info is not None else DATASET_INFO[dataset]
        names = self.info.class_names if class_names is None else class_names
        self.class_names = tuple(names)
        # No random initialisation: it would touch the generator a run in
        # another thread draws from, and real weights are loaded next anyway.
        self.model = build_unseeded(
            model_name, len(self.class_names), self.info.image_shape, weights
        )
        self.model.eval()
        # Saliency needs gradients for the input only, never for the weights.
        self.model.requires_grad_(False)

    @property
    def is_photo(self) -> bool:
        """True when inputs are photos brought to size, not digit drawings.

        torchvision's models take 3 channels: they read image files, also when
        trained on gray digits (repeated to 3 channels), never the canvas.
        """
        return self.dataset in PHOTO_DATASETS or is_torchvision(self.model_name)

    @property
    def input_shape(self) -> tuple[int, int, int]:
        """``(channels, height, width)`` of one model input."""
        return self.info.image_shape

    def _threads(self) -> AbstractContextManager[None]:
        """A digit reader reads on the calling thread alone; a photo model not.

        One 28x28 image through a digit model is too little work to share: on
        busy cores its OpenMP team waits for a descheduled helper (up to a
        second, ``bench/canvas_bench.py``). A photo model's forward pass (a
        ResNet at 224x224) is work enough for every thread.
        """
        return nullcontext() if self.is_photo else single_threaded()

    def load_weights(self, state: dict[str, torch.Tensor]) -> None:
        """Copy ``state`` into the private model (keys as in a checkpoint).

        Raises
        ------
        CheckpointError
            When the weights belong to another architecture.
        """
        load_model_state(self.model, state)

    def prepare(self, image: np.ndarray, *, naive: bool = False) -> np.ndarray:
        """The 28x28 field the model will see of ``image`` (float32, [0, 1])."""
        if naive:
            return naive_resize(image)
        return style_image(image, style_of(self.dataset))

    def read(
        self, image: np.ndarray, *, naive: bool = False, saliency: bool = False
    ) -> Reading:
        """Prepare a drawing, run the model in ``eval()`` mode, optionally explain.

        Parameters
        ----------
        image : numpy.ndarray
            Float (H, W) in [0, 1], white ink on black (a canvas, a photo).
        naive : bool
            Squash the whole picture to 28x28 instead of the dataset's recipe.
        saliency : bool
            Also compute the input gradient of the predicted class's logit.

        Raises
        ------
        PredictError
            When the image holds no ink, or the model reads photos.
        """
        if self.is_photo:
            raise PredictError(
                "this model reads photos, not drawings: open an image file"
            )
        with self._threads():
            return self._read_drawing(image, naive, saliency)

    def _read_drawing(self, image: np.ndarray, naive: bool, saliency: bool) -> Reading:
        field = self.prepare(image, naive=naive)
        return self._read(to_model_input(field, self.info), field, naive, saliency)

    def read_file(
        self, path: str | Path, *, naive: bool = False, saliency: bool = False
    ) -> Reading:
        """Read an image file the way this model's data was made.

        A photo dataset's file is resized and centre-cropped like the run's
        images (:func:`photo_input`, bit for bit); a digit dataset's is read
        as a picture of a digit (:func:`load_image`) and given its recipe,
        whatever the model (a torchvision model gets it in 3 channels).

        Raises
        ------
        PredictError
            No such file, no image this program reads, or (digits) no ink.
        """
        with self._threads():
            if self.dataset not in PHOTO_DATASETS:
                # A digit dataset's recipe, also for a torchvision model (which
                # reads files, not the canvas): the digit centred, gray to 3.
                return self._read_drawing(load_image(path), naive, saliency)
            pixels = photo_pixels(path, self.info)
            x = torch.from_numpy(pixels).to(torch.float32)
            x = self.info.normalise(x.div(255)[None])
            return self._read(x, _field(pixels), False, saliency)

    def read_stored(self, image: np.ndarray, *, saliency: bool = False) -> Reading:
        """Read a stored dataset image exactly as a run's loaders feed it.

        No recipe: ``image`` already is a model input (a validation image), so
        the reading is the one an evaluation with the same weights made.

        Parameters
        ----------
        image : numpy.ndarray
            uint8 (H, W) (white ink on black) or (C, H, W), as stored.
        saliency : bool
            Also compute the input gradient of the predicted class's logit.
        """
        with self._threads():
            field = _field(image)
            x = stored_input(image, self.info)
            return self._read(x, field, False, saliency)

    def _read(
        self, x: torch.Tensor, field: np.ndarray, naive: bool, saliency: bool
    ) -> Reading:
        model = self.model
        # eval() walks every module (0.2 ms); a look finds them in eval mode.
        if any(module.training for module in model.modules()):
            model.eval()
        if saliency:
            # One forward pass serves both: its logits give the same
            # probabilities as an inference-mode pass, bit for bit.
            leaf = x.detach().clone().requires_grad_(True)
            with torch.enable_grad():
                logits = model(leaf)
                probs = _softmax(logits.detach())
                label = int(np.argmax(probs))
                heat = _input_gradient(logits[0, label], leaf)
        else:
            with torch.inference_mode():
                probs = _softmax(model(x))
            label, heat = int(np.argmax(probs)), None
        return Reading(
            probabilities=probs,
            class_names=self.class_names,
            field=field,
            input=x,
            saliency=heat,
            naive=naive,
        )

    def explain(self, reading: Reading) -> Reading:
        """``reading`` with its saliency: the input gradient of its answer.

        A reading made without saliency can be shown at once and explained
        next (a second forward pass, with autograd, then the backward pass):
        the window paints the answer before it spends time on the heat map.
        """
        with self._threads():
            heat = self.saliency(reading.input, reading.label)
        return replace(reading, saliency=heat)

    def saliency(self, x: torch.Tensor, label: int) -> np.ndarray:
        """|gradient of logit ``label`` with respect to ``x``|, scaled to [0, 1].

        Of several channels, each pixel keeps its largest: (H, W).
        """
        # A fresh leaf: ``x`` may be an inference tensor, which autograd refuses.
        leaf = x.detach().clone().requires_grad_(True)
        with torch.enable_grad():
            return _input_gradient(self.model(leaf)[0, label], leaf)


def _softmax(logits: torch.Tensor) -> np.ndarray:
    """Probabilities of a (1, classes) batch, float64 (classes,)."""
    return torch.softmax(logits.float(), dim=1)[0].double().numpy()


def _input_gradient(logit: torch.Tensor, leaf: torch.Tensor) -> np.ndarray:
    """|d logit / d leaf|, the largest over channels, scaled to [0, 1]: (H, W)."""
    (grad,) = torch.autograd.grad(logit, leaf)
    magnitude = grad.abs()[0].amax(dim=0).numpy()
    peak = float(magnitude.max())
    return magnitude / peak if peak > 0 else magnitude
