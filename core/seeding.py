"""One function that seeds every random number generator the app uses."""

from __future__ import annotations

import random

import numpy as np
import torch

MAX_SEED = 2**32 - 1


def seed_everything(seed: int) -> int:
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and all CUDA devices).

    ``torch.manual_seed`` also seeds every CUDA device, lazily, without creating a CUDA
    context on machines that have none.

    Args:
        seed: an integer in ``[0, 2**32 - 1]`` (NumPy's limit).

    Returns:
        The seed that was applied.

    Raises:
        ValueError: if ``seed`` is not an integer in range.

    >>> seed_everything(0)
    0
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"seed must be between 0 and {MAX_SEED}, got {seed}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return seed
