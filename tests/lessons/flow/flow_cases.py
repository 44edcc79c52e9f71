"""Flows the flow lesson's tests share, and the tolerance the fills are compared with."""

from __future__ import annotations

import numpy as np

TOL = {"rtol": 1e-5, "atol": 1e-5, "equal_nan": True}
CPU_BACKENDS = ("cv2", "torch")


def random_flow(rng: np.random.Generator, h: int, w: int, c: int, p: float, shared: bool):
    x = (rng.standard_normal((h, w, c)) * 5).astype(np.float32)
    if shared:
        x[rng.random((h, w)) < p] = np.nan
    else:
        x[rng.random((h, w, c)) < p] = np.nan
    return x
