"""Pictures of flows for the Flow page: colour-wheel images of flows on one shared scale."""

from __future__ import annotations

import numpy as np
import torch


def flow_to_rgb(*flows: np.ndarray) -> list[np.ndarray]:
    """Colour-wheel pictures of flows with ONE shared scale (``torchvision.utils.flow_to_image``).

    Args:
        flows: (H, W, 2) float arrays of the same shape; NaN marks a hole.

    Returns:
        One (H, W, 3) uint8 RGB image per flow; holes are drawn black.
    """
    from torchvision.utils import flow_to_image

    if not flows:
        return []
    shape = flows[0].shape
    for f in flows:
        if f.shape != shape or f.ndim != 3 or f.shape[2] != 2:
            raise ValueError(f"flows must all be (H, W, 2) of one shape, got {f.shape}")
    batch = np.stack([np.nan_to_num(np.asarray(f, np.float32), nan=0.0) for f in flows])
    # one call on the whole batch: flow_to_image normalises by the batch's largest vector
    imgs = flow_to_image(torch.from_numpy(batch).permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
    out = imgs.numpy().copy()
    for i, f in enumerate(flows):
        out[i][np.isnan(f).any(axis=2)] = 0
    return list(out)
