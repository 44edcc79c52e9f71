"""Fixtures the saliency tests share: the offline classifier and the cat it sees."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.images import load_sample
from lessons.saliency.models import LoadedModel, load_model


@pytest.fixture(scope="module")
def lite0() -> LoadedModel:
    return load_model("efficientnet_lite0", device="cpu")


@pytest.fixture(scope="module")
def chelsea() -> np.ndarray:
    return load_sample("chelsea.png").rgb


@pytest.fixture(scope="module")
def x_cat(lite0: LoadedModel, chelsea: np.ndarray) -> torch.Tensor:
    return lite0.preprocess(chelsea)
