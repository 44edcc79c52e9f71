"""The page's three ways to define OpenCV's matrix ``M``: sliders, typed entries, point pairs.

Each way ends in a validated (2, 3) float64 ``M`` (source pixel -> destination pixel) or a
``ValueError`` that says which input to change.

Nothing here imports Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from core.text import N_, T
from lessons.warp.validation import homogeneous, validate_affine

#: The ways to define M, as the ``warp.definition`` control offers them (its URL values).
DEFINITIONS = (N_("Sliders"), N_("Matrix entries"), N_("Point pairs"))
#: The error hint under a matrix that cannot be used, for each way of defining M.
DEFINITION_HINTS = {
    "Sliders": N_("Hint: change the sliders of M; the picture updates as soon as M is valid."),
    "Matrix entries": N_(
        "Hint: change the matrix entries of M; the picture updates as soon as M is valid."
    ),
    "Point pairs": N_(
        "Hint: change the point pairs of M; the picture updates as soon as M is valid."
    ),
}
# A matrix is a few dozen characters, a pasted NumPy array a few hundred: longer text (a link
# can carry any) is not a matrix.
MATRIX_MAX_CHARS = 400
MAX_POINT_COORD = 1e6  # px; cv2.getAffineTransform solves in float32 (overflow past ~3e38)


def matrix_from_params(
    angle_deg: float = 0.0,
    scale: float = 1.0,
    shear_x: float = 0.0,
    shear_y: float = 0.0,
    tx: float = 0.0,
    ty: float = 0.0,
    center: Sequence[float] = (0.0, 0.0),
) -> np.ndarray:
    """Compose M = T(tx, ty) @ R(center, angle, scale) @ Shear(center).

    The rotation and scale come from ``cv2.getRotationMatrix2D(center, angle, scale)``
    (positive angle = counter-clockwise on screen). The shear ``[[1, shear_x], [shear_y, 1]]``
    acts about the same centre, then the result is translated by ``(tx, ty)`` pixels.

    Returns:
        (2, 3) float64.

    Raises:
        ValueError: non-finite values, scale <= 0, or shear_x * shear_y == 1 (singular).

    >>> matrix_from_params(tx=3).tolist()
    [[1.0, 0.0, 3.0], [0.0, 1.0, 0.0]]
    """
    values = {"angle": angle_deg, "scale": scale, "shear x": shear_x, "shear y": shear_y}
    values |= {"tx": tx, "ty": ty, "centre x": center[0], "centre y": center[1]}
    for name, v in values.items():
        if not math.isfinite(float(v)):
            raise ValueError(f"{name} must be a finite number, got {v}")
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    cx, cy = float(center[0]), float(center[1])
    rot = homogeneous(cv2.getRotationMatrix2D((cx, cy), float(angle_deg), float(scale)))
    to_c = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]], dtype=np.float64)
    from_c = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], dtype=np.float64)
    shear = np.array([[1, shear_x, 0], [shear_y, 1, 0], [0, 0, 1]], dtype=np.float64)
    trans = np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]], dtype=np.float64)
    return validate_affine((trans @ rot @ to_c @ shear @ from_c)[:2])


def params_formula(
    angle_deg: float, scale: float, shift: Sequence[float], center: Sequence[float]
) -> str:
    """How :func:`matrix_from_params` composes M from the sliders, with their values (``shift``
    and ``center`` in pixels).

    >>> params_formula(30, 1.0, (0, 0), (225, 149.5)).split(" · ")[1]
    'cv2.getRotationMatrix2D(centre=(225.0, 149.5), angle=30, scale=1)'
    """
    return (
        f"M = T({shift[0]:.1f}, {shift[1]:.1f} px) · "
        f"cv2.getRotationMatrix2D(centre=({center[0]:.1f}, {center[1]:.1f}), "
        f"angle={angle_deg:g}, scale={scale:g}) · Shear(centre)"
    )


def _triangle_area(pts: np.ndarray) -> float:
    (x0, y0), (x1, y1), (x2, y2) = pts
    return 0.5 * abs((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0))


# matrix_from_points' messages for each side, whole sentences (one catalog message each).
_POINT_ERRORS = {
    "source": {
        "nan": N_("source points contain NaN or infinite values: {values}"),
        "range": N_(
            "source point coordinates must lie within ±{limit:,.0f} px "
            "(OpenCV solves in float32), got {largest:.3g}"
        ),
        "collinear": N_(
            "the three source points {shown} are collinear (they lie on one line), so "
            "they do not define an invertible affine map; move one point off the line"
        ),
    },
    "destination": {
        "nan": N_("destination points contain NaN or infinite values: {values}"),
        "range": N_(
            "destination point coordinates must lie within ±{limit:,.0f} px "
            "(OpenCV solves in float32), got {largest:.3g}"
        ),
        "collinear": N_(
            "the three destination points {shown} are collinear (they lie on one line), so "
            "they do not define an invertible affine map; move one point off the line"
        ),
    },
}


def matrix_from_points(
    src_pts: Sequence[Sequence[float]], dst_pts: Sequence[Sequence[float]]
) -> np.ndarray:
    """The M that sends three source points onto three destination points.

    Uses ``cv2.getAffineTransform`` (float32 points, as OpenCV requires).

    Args:
        src_pts: three (x, y) source pixel coordinates.
        dst_pts: three (x, y) destination pixel coordinates.

    Returns:
        (2, 3) float64.

    Raises:
        ValueError: not 3 points each, non-finite values, or collinear (or repeated) points on
            either side: three points on a line do not pin down an invertible affine map.
    """
    sets = {}
    for name, pts in (("source", src_pts), ("destination", dst_pts)):
        texts = _POINT_ERRORS[name]
        try:
            arr = np.array(pts, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name} points must be three (x, y) pairs, got {pts!r}") from error
        if arr.shape != (3, 2):
            raise ValueError(f"{name} points must be three (x, y) pairs, got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(T(texts["nan"], values=arr.tolist()))
        if np.abs(arr).max() > MAX_POINT_COORD:
            raise ValueError(
                T(texts["range"], limit=MAX_POINT_COORD, largest=float(np.abs(arr).max()))
            )
        span = float(np.ptp(arr, axis=0).max())
        if span == 0.0 or _triangle_area(arr) <= 1e-6 * span * span:
            shown = ", ".join(f"({x:g}, {y:g})" for x, y in arr)
            raise ValueError(T(texts["collinear"], shown=shown))
        sets[name] = arr
    m = cv2.getAffineTransform(
        sets["source"].astype(np.float32), sets["destination"].astype(np.float32)
    )
    return validate_affine(m)


def parse_matrix_text(text: str) -> np.ndarray:
    """Parse a 2x3 matrix typed or pasted as text, then validate it.

    Accepts two lines of three numbers separated by spaces or commas; brackets are ignored,
    so ``[[1, 0, 5], [0, 1, 0]]`` pasted from Python works too. ``nan`` and ``inf`` parse (and
    are then rejected by :func:`validate_affine` with a clear message).

    Returns:
        (2, 3) float64.

    Raises:
        ValueError: a token that is not a number, a wrong count, NaN/inf, or a singular matrix.

    >>> parse_matrix_text("1 0 5\\n0 1 0").tolist()
    [[1.0, 0.0, 5.0], [0.0, 1.0, 0.0]]
    """
    cleaned = text.replace("[", " ").replace("]", " ").replace(",", " ").replace(";", "\n")
    rows = [line.split() for line in cleaned.splitlines() if line.strip()]
    tokens = [tok for row in rows for tok in row]
    values = []
    for tok in tokens:
        try:
            values.append(float(tok))
        except ValueError:
            raise ValueError(T("{tok!r} in the matrix is not a number", tok=tok)) from None
    if len(values) != 6:
        raise ValueError(
            T(
                "the matrix needs 6 numbers (2 rows of 3: a b c / d e f), got {count}",
                count=len(values),
            )
        )
    return validate_affine(np.array(values).reshape(2, 3))


def matrix_text_is_usable(text: str) -> bool:
    """Whether a link's ``warp.matrix_text`` is six numbers the page can show M for.

    Text that does not parse (a word, five numbers, 10,000 characters) is not: the control opens
    at its default. Six numbers that make no usable M (singular, NaN) are: the page says why, as
    it does for a typed matrix, which is the point of such a link.

    >>> matrix_text_is_usable("1 2 0\\n2 4 0"), matrix_text_is_usable("1 0\\n0 1")
    (True, False)
    """
    if len(text) > MATRIX_MAX_CHARS:
        return False
    try:
        parse_matrix_text(text)
    except ValueError as error:
        return "is not a number" not in str(error) and "needs 6 numbers" not in str(error)
    return True


def default_points(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Three source points spread over a ``width`` x ``height`` image and a gently moved copy.

    Returns:
        ``(src, dst)``, each (3, 2) float64 ``(x, y)`` pixel coordinates, rounded to 0.1 px.
    """
    w, h = float(width), float(height)
    src = np.array([[0.2 * w, 0.2 * h], [0.8 * w, 0.2 * h], [0.2 * w, 0.8 * h]])
    dst = np.array([[0.25 * w, 0.12 * h], [0.85 * w, 0.32 * h], [0.12 * w, 0.82 * h]])
    return np.round(src, 1), np.round(dst, 1)
