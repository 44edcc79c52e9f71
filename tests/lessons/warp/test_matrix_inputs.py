"""lessons.warp.matrix_inputs: the page's three ways to define M."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from lessons.warp.matrix_inputs import (
    default_points,
    matrix_from_params,
    matrix_from_points,
    matrix_text_is_usable,
    params_formula,
    parse_matrix_text,
)
from lessons.warp.theta import matrix_latex
from lessons.warp.validation import is_grayscale
from tests.lessons.warp.cases import smooth_image


def test_matrix_from_params_matches_cv2():
    M = matrix_from_params(33, 1.7, center=(30, 20))
    np.testing.assert_allclose(M, cv2.getRotationMatrix2D((30, 20), 33, 1.7), atol=1e-12)
    sheared = matrix_from_params(0, 1, shear_x=0.5, center=(10, 10), tx=3)
    # The centre moves only by the translation; a point right of it moves by the shear.
    np.testing.assert_allclose(sheared @ [10, 10, 1], [13, 10], atol=1e-12)
    np.testing.assert_allclose(sheared @ [10, 12, 1], [14, 12], atol=1e-12)


def test_matrix_from_points_maps_points():
    src = [(0, 0), (40, 0), (0, 30)]
    dst = [(5, 3), (42, 10), (-2, 31)]
    M = matrix_from_points(src, dst)
    mapped = np.hstack([np.array(src, float), np.ones((3, 1))]) @ M.T
    np.testing.assert_allclose(mapped, dst, atol=1e-3)


def test_parse_matrix_text_and_helpers():
    np.testing.assert_array_equal(
        parse_matrix_text("[[1, 0, 5],\n [0, 1, -2]]"), [[1, 0, 5], [0, 1, -2]]
    )
    with pytest.raises(ValueError, match="'x' in the matrix is not a number"):
        parse_matrix_text("1 0 x\n0 1 0")
    with pytest.raises(ValueError, match="NaN"):
        parse_matrix_text("nan 0 0\n0 1 0")
    src, dst = default_points(451, 300)
    assert matrix_from_points(src, dst).shape == (2, 3)
    assert is_grayscale(np.dstack([smooth_image(5, 5)[..., 0]] * 3))
    assert not is_grayscale(smooth_image(5, 5))
    assert matrix_latex(np.eye(2, 3)).startswith(r"\begin{bmatrix}1 & 0 & 0")


@pytest.mark.parametrize(
    ("text", "usable"),
    [
        ("[[0.8, 0.3, 20], [-0.2, 1.1, -10]]", True),
        ("1 2 0\n2 4 0", True),  # six numbers, singular: the page says why
        ("nan 0 0\n0 1 0", True),
        ("1 0 x\n0 1 0", False),
        ("1 0\n0 1", False),
        ("7" * 401, False),  # longer than any matrix (MATRIX_MAX_CHARS)
    ],
)
def test_matrix_text_is_usable_for_six_numbers_only(text, usable):
    assert matrix_text_is_usable(text) is usable


def test_params_formula_names_the_values():
    text = params_formula(-40, 1.3, (45.1, -7.0), (225, 149.5))
    assert text == (
        "M = T(45.1, -7.0 px) · cv2.getRotationMatrix2D(centre=(225.0, 149.5), angle=-40, "
        "scale=1.3) · Shear(centre)"
    )
