"""lessons.saliency.session: the classifier's warm-up, the image through the model, its top-5
table, and the map on screen."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from lessons.saliency import session as Q
from lessons.saliency.maps import MapChoice, SaliencyResult, warm_up
from lessons.saliency.models import LoadedModel, top_k


def test_warmed_up_times_one_pass_and_says_none_when_it_fails(lite0: LoadedModel) -> None:
    loaded, warm_ms = Q.warmed_up(lite0)
    assert loaded is lite0 and warm_ms > 0
    broken = LoadedModel(lite0.name, nn.Identity(), lite0.preprocessing, lite0.categories,
                         lite0.device, lite0.source)  # fmt: skip
    assert Q.warmed_up(broken) == (broken, None)  # no (N, classes) logits: the map says why
    with pytest.raises(ValueError):
        warm_up(broken.model, torch.zeros(1, 3, 8, 8))


def test_through_model_is_the_input_the_view_and_the_top5(lite0: LoadedModel,
                                                          chelsea: np.ndarray) -> None:  # fmt: skip
    x, view, top5, classes = Q.through_model(lite0, chelsea)
    torch.testing.assert_close(x, lite0.preprocess(chelsea))
    np.testing.assert_array_equal(view, lite0.model_view(chelsea))
    assert (top5, classes) == Q.classify(lite0, x) and classes == 1000
    with torch.no_grad():
        assert top5 == top_k(lite0.model(x), lite0.categories, 5)
    assert top5[0][0] == 285  # the cat


def test_top5_columns_round_the_probability() -> None:
    columns = Q.top5_columns([(285, "Egyptian cat", 0.781234), (281, "tabby", 0.1)])
    assert columns == {"class": [285, 281], "name": ["Egyptian cat", "tabby"],
                       "probability": [0.7812, 0.1]}  # fmt: skip


def _choice(method: str = "smoothgrad") -> MapChoice:
    return MapChoice(2, "app", method, "logit", "sum", 4, 0.2, 32, "black", 99.0, 0.5, "jet", 7)


def test_the_map_on_screen() -> None:
    logits = torch.tensor([0.0, 1.0, 2.0])
    result = SaliencyResult("vanilla", "logit", "sum", 2, torch.zeros(2, 2), logits,
                            forward_ms=1.0, backward_ms=2.0, images=1)  # fmt: skip
    subject = Q.Subject(torch.zeros(1, 3, 2, 2), np.zeros((2, 2, 3), np.uint8), [], 3, "img", "m")
    choice = _choice()
    assert subject.map_key(choice) == choice.key("m", "img")
    assert subject.map_key(choice, "vanilla") == choice.key("m", "img", "vanilla")
    shown = Q.ShownMap(result, subject.map_key(choice, "vanilla"), subject.map_key(choice), 40.0,
                       "Computed just now.", "class two")  # fmt: skip
    assert shown.method == "vanilla"  # the placeholder's, while the chosen one waits
    assert shown.prob == pytest.approx(float(torch.softmax(logits, 0)[2]))


def test_a_classifier_is_keyed_by_its_weights_source_and_device(lite0: LoadedModel) -> None:
    model = Q.Classifier(lite0, 12.0)
    assert model.model_key == f"{lite0.source} · cpu"
