"""The augmentation strip: redraws when the choices change, and only then."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.core.config import AUGMENTATIONS
from workbench.ui.widgets.augment_strip import GAP, AugmentStrip

pytestmark = pytest.mark.gui


def _images(n: int, channels: int | None, side: int = 12) -> np.ndarray:
    rng = np.random.default_rng(0)
    shape = (n, side, side) if channels is None else (n, channels, side, side)
    return rng.integers(0, 256, shape, dtype=np.uint8)


def _shown(strip: AugmentStrip):
    return strip.image_label.pixmap().toImage()


@pytest.mark.parametrize("channels", [None, 1, 3])
def test_the_strip_changes_with_the_choices_and_not_without(qtbot, channels):
    strip = AugmentStrip(count=4, scale=1)
    qtbot.addWidget(strip)
    images = _images(2, channels)
    c = 1 if channels is None else channels
    strip.set_images(images, (0.5,) * c, (0.25,) * c)
    plain, plain_pixels = _shown(strip), strip.strip()
    assert not strip.image_label.pixmap().isNull()
    # Two rows of the image and four copies, unchanged without augmentation.
    side = 12
    assert plain_pixels.shape[:2] == (2 * side + GAP, 5 * side + 4 * GAP)
    tile = plain_pixels[:side, -side:]  # the last copy of the first image
    expected = images[0].reshape(c, side, side)
    expected = expected[0] if c == 1 else expected.transpose(1, 2, 0)
    assert np.array_equal(tile, expected)

    strip.set_choices(["flip", "rotate"])
    assert _shown(strip) != plain
    assert "horizontal flip" in strip.caption.text()
    strip.set_choices(AUGMENTATIONS)
    everything = _shown(strip)
    assert everything != plain
    strip.set_choices(AUGMENTATIONS)
    assert _shown(strip) == everything  # the same choices draw the same picture
    strip.set_choices(())
    assert _shown(strip) == plain
    assert np.array_equal(strip.strip(), plain_pixels)


def test_each_copy_is_augmented_differently(qtbot):
    strip = AugmentStrip(count=6, scale=1)
    qtbot.addWidget(strip)
    strip.set_images(_images(1, 3, side=28), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    strip.set_choices(["crop"])
    pixels = strip.strip()
    tiles = [pixels[:, k * (28 + GAP) : k * (28 + GAP) + 28] for k in range(1, 7)]
    assert len({t.tobytes() for t in tiles}) == 6


def test_no_images_show_nothing_and_bad_choices_are_refused(qtbot):
    strip = AugmentStrip()
    qtbot.addWidget(strip)
    strip.set_choices(["jitter"])
    assert strip.strip() is None
    assert strip.image_label.pixmap().isNull()
    with pytest.raises(ValueError, match="unknown augmentation"):
        strip.set_choices(["blur"])
    assert strip.choices() == ("jitter",)
