"""Images, matrices and strategies the warp lesson's tests share."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from lessons.warp.affine import BORDER_PX
from lessons.warp.matrix_inputs import matrix_from_params
from lessons.warp.sampling import source_coordinates


def smooth_image(h: int, w: int) -> np.ndarray:
    """(h, w, 3) uint8: a gradient plus low-frequency sinusoids (a few grey levels per pixel)."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    u, v = xx / max(w - 1, 1), yy / max(h - 1, 1)
    chans = [
        40 + 150 * u + 50 * v,
        128 + 80 * np.sin(2 * np.pi * 1.5 * u) * np.cos(2 * np.pi * v),
        200 - 120 * v + 30 * np.sin(2 * np.pi * 2 * (u + v) / 2),
    ]
    return np.clip(np.rint(np.stack(chans, -1)), 0, 255).astype(np.uint8)


def random_matrix(
    angle: float,
    scale: float,
    shx: float,
    shy: float,
    fx: float,
    fy: float,
    cx: float,
    cy: float,
    w: int,
    h: int,
) -> np.ndarray:
    """The family the property tests draw from: rotation, scale, shear, translation up to +-W
    (fx, fy in -1..1)."""
    return matrix_from_params(
        angle, scale, shx, shy, tx=fx * w, ty=fy * h, center=(cx * (w - 1), cy * (h - 1))
    )


unit = st.floats(-1.0, 1.0)
matrices = st.tuples(
    st.floats(-180.0, 180.0),  # angle
    st.floats(0.3, 3.0),  # scale
    st.floats(-0.5, 0.5),  # shear x
    st.floats(-0.5, 0.5),  # shear y
    unit,  # tx / W
    unit,  # ty / H
    st.floats(0.0, 1.0),  # centre x / W
    st.floats(0.0, 1.0),  # centre y / H
)
sides = st.integers(16, 80)


def interior(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return d[BORDER_PX:-BORDER_PX, BORDER_PX:-BORDER_PX]


def covered_fraction(M: np.ndarray, src_hw: tuple[int, int], dsize: tuple[int, int]) -> float:
    xy = source_coordinates(M, dsize)
    h, w = src_hw
    inside = (xy[..., 0] >= 0) & (xy[..., 0] <= w - 1) & (xy[..., 1] >= 0) & (xy[..., 1] <= h - 1)
    return float(inside.mean())


def seeded_cases(n: int, seed: int = 7, min_cover: float = 0.3):
    """n random cases (image, M, dsize) whose output is at least ``min_cover`` image content."""
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < n:
        sh, sw, dh, dw = (int(v) for v in rng.integers(24, 96, 4))
        params = (
            rng.uniform(-180, 180),
            rng.uniform(0.3, 3),
            *rng.uniform(-0.5, 0.5, 2),
            *rng.uniform(-1, 1, 2),
            *rng.uniform(0, 1, 2),
        )
        M = random_matrix(*params, sw, sh)
        if covered_fraction(M, (sh, sw), (dw, dh)) >= min_cover:
            cases.append((smooth_image(sh, sw), M, (dw, dh)))
    return cases


#: OpenCV's identity matrix: the output is the input's top-left window.
IDENTITY = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
