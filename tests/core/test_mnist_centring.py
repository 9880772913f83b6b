"""The MNIST recipe places a digit by its centre of mass, not by its bounding box.

Every expectation here is worked out by hand from the input, never by calling
the recipe: shapes drawn at exactly 20 pixels tall are not resized (scale 1),
so where the ink lands in the 28x28 field can be computed exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.core.data.preprocess import mnist_style


def centre_of_mass(field: np.ndarray) -> tuple[float, float]:
    ys, xs = np.indices(field.shape)
    mass = field.sum()
    return float((ys * field).sum() / mass), float((xs * field).sum() / mass)


def ink_box(field: np.ndarray, threshold: float = 0.1) -> tuple[int, int, int, int]:
    """(first row, last row, first column, last column) holding ink."""
    rows = np.flatnonzero((field > threshold).any(axis=1))
    cols = np.flatnonzero((field > threshold).any(axis=0))
    return int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])


def stem_and_blob(canvas: int = 60, top: int = 17, left: int = 23) -> np.ndarray:
    """A 20 x 10 (rows x columns) shape: a stem on the right, a blob top-left.

    Stem: rows 0-19, columns 7-9 (60 px). Blob: rows 0-5, columns 0-6 (42 px).
    """
    image = np.zeros((canvas, canvas), np.float32)
    image[top : top + 20, left + 7 : left + 10] = 1.0
    image[top : top + 6, left : left + 7] = 1.0
    return image


# Worked out by hand for stem_and_blob (digit coordinates, before placement):
#   mass = 60 + 42 = 102
#   row centre    = (9.5 * 60 + 2.5 * 42) / 102 = 675 / 102 = 6.618
#   column centre = (8.0 * 60 + 3.0 * 42) / 102 = 606 / 102 = 5.941
# The bounding box centre is (9.5, 4.5): the centre of mass is 2.9 rows higher
# and 1.4 columns further right. The 20x10 digit is placed at top = (28-20)//2
# = 4, left = (28-10)//2 = 9, so its centre of mass lands at (10.618, 14.941).
# Moving it to (13.5, 13.5): dy = round(2.882) = +3, dx = round(-1.441) = -1,
# both inside the clip (dy in [-4, 4], dx in [-9, 9]). The ink ends at
# rows 7-26 and columns 8-17, with its centre of mass at (13.618, 13.941).
SHIFT = (3, -1)
BOX_TOP_LEFT = (4, 9)  # where the 20x10 box is put before the shift


def stem_and_blob_field(top: int, left: int) -> np.ndarray:
    """The 28x28 field holding stem_and_blob's shape with its box at (top, left)."""
    field = np.zeros((28, 28), np.float32)
    field[top : top + 20, left + 7 : left + 10] = 1.0
    field[top : top + 6, left : left + 7] = 1.0
    return field


ORIENTATIONS = {
    "as drawn": lambda a: a,
    "mirrored left-right": np.fliplr,
    "upside down": np.flipud,
    "transposed": np.transpose,
}


@pytest.mark.parametrize("orient", ORIENTATIONS.values(), ids=ORIENTATIONS.keys())
def test_an_asymmetric_digit_is_moved_by_the_hand_computed_shift(orient):
    """The exact field: the shape placed at the box position plus (3, -1).

    The recipe treats rows and columns alike and 28 - 20 and 28 - 10 are even,
    so a mirrored or transposed drawing gives the mirrored or transposed field.
    """
    out = mnist_style(np.ascontiguousarray(orient(stem_and_blob())))
    top, left = BOX_TOP_LEFT
    expected = np.ascontiguousarray(
        orient(stem_and_blob_field(top + SHIFT[0], left + SHIFT[1]))
    )
    by_box = np.ascontiguousarray(orient(stem_and_blob_field(top, left)))
    assert not np.array_equal(out, by_box), "placed by bounding box, not by mass"
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("orient", ORIENTATIONS.values(), ids=ORIENTATIONS.keys())
def test_the_centre_of_mass_ends_within_half_a_pixel_of_the_centre(orient):
    out = mnist_style(np.ascontiguousarray(orient(stem_and_blob())))
    cy, cx = centre_of_mass(out)
    assert abs(cy - 13.5) <= 0.5, (cy, cx)
    assert abs(cx - 13.5) <= 0.5, (cy, cx)
    # ...while the bounding box is off-centre: the mass, not the box, decides.
    top, bottom, left, right = ink_box(out)
    box_cy, box_cx = (top + bottom) / 2, (left + right) / 2
    assert max(abs(box_cy - 13.5), abs(box_cx - 13.5)) >= 2.5


def test_a_scaled_down_asymmetric_digit_is_centred_by_mass():
    """The same shape drawn 5x larger (100 x 50) is resized, then centred by mass."""
    image = np.zeros((200, 200), np.float32)
    image[30:130, 95:110] = 1.0  # stem: 100 x 15
    image[30:60, 60:95] = 1.0  # blob top-left: 30 x 35
    out = mnist_style(image)
    top, bottom, left, right = ink_box(out)
    assert bottom - top + 1 == 20  # the long side fills the 20-pixel box
    assert right - left + 1 == 10  # aspect kept: 100 x 50 -> 20 x 10
    cy, cx = centre_of_mass(out)
    assert abs(cy - 13.5) <= 0.5
    assert abs(cx - 13.5) <= 0.5
    # The box itself is moved off-centre, as worked out above: 3 down, 1 left.
    assert (top + bottom) / 2 - 13.5 == pytest.approx(SHIFT[0], abs=0.5)
    assert (left + right) / 2 - 13.5 == pytest.approx(SHIFT[1], abs=0.5)


def test_the_shift_is_clipped_so_the_digit_stays_whole():
    """A lone dot top-left and a heavy 8x8 block bottom-right of a 20x20 box.

    Mass: 1 + 64 = 65. Centre (both axes) = (0 * 1 + 15.5 * 64) / 65 = 15.262,
    placed at 4 + 15.262 = 19.262, so the wanted shift is round(-5.762) = -6 on
    both axes; the box sits at 4 in the field, so the clip allows only -4. The
    digit ends in rows/columns 0-19: the dot at (0, 0), the block at 12-19, and
    nothing wraps around to the far side of the field.
    """
    image = np.zeros((40, 40), np.float32)
    image[5, 5] = 1.0
    image[17:25, 17:25] = 1.0
    out = mnist_style(image)
    expected = np.zeros((28, 28), np.float32)
    expected[0, 0] = 1.0
    expected[12:20, 12:20] = 1.0
    np.testing.assert_array_equal(out, expected)
    cy, cx = centre_of_mass(out)
    # The clip leaves the centre of mass short of the middle: 4 + 15.262 - 4.
    assert cy == pytest.approx(15.5 * 64 / 65)
    assert cx == pytest.approx(cy)
