"""lessons.saliency.snippet: every method's code runs and reproduces the map; the notes'
recipe too."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lessons.saliency import maps
from lessons.saliency import snippet as S
from lessons.saliency.models import LoadedModel
from lessons.saliency.scaling import scale_like_notes


class TestSnippet:
    @pytest.mark.parametrize(
        ("objective", "reduce"), [("logit", "max"), ("loss", "sum")]
    )  # fmt: skip
    def test_vanilla_snippet_runs_and_matches(
        self, lite0: LoadedModel, x_cat: torch.Tensor, objective: str, reduce: str
    ) -> None:
        code = S.snippet_for("vanilla", target=285, objective=objective, reduce=reduce)
        namespace: dict = {}
        exec(compile(code, "<snippet>", "exec"), namespace)
        expected = maps.vanilla_saliency(
            lite0.model, x_cat, 285, objective=objective, reduce=reduce
        )
        torch.testing.assert_close(namespace["saliency"], expected, atol=1e-6, rtol=0)
        assert namespace["picture"].shape == (224, 224, 3)

    def test_smoothgrad_snippet_runs_and_matches(
        self, lite0: LoadedModel, x_cat: torch.Tensor
    ) -> None:
        code = S.snippet_for("smoothgrad", target=None, n=2, sigma=0.1, seed=3)
        namespace: dict = {}
        exec(compile(code, "<snippet>", "exec"), namespace)
        assert namespace["target"] == 285
        expected = maps.smoothgrad(lite0.model, x_cat, 285, n=2, sigma=0.1, seed=3)
        torch.testing.assert_close(namespace["saliency"], expected, atol=1e-6, rtol=0)

    def test_every_method_snippet_compiles(self) -> None:
        for method in maps.METHODS:
            compile(S.snippet_for(method), "<snippet>", "exec")
        code = S.snippet_for("vanilla", custom_file="mine.pt", architecture="resnet18")
        compile(code, "<snippet>", "exec")
        assert "load_custom_model" in code


    def test_notes_snippet_runs_and_matches(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        code = S.snippet_for("smoothgrad", target=285, recipe="notes")  # method is ignored
        assert "loss.backward()" in code
        assert "scale_min_max(saliency_map, 0, 255, percentile=99)" in code
        namespace: dict = {}
        exec(compile(code, "<snippet>", "exec"), namespace)
        expected = maps.vanilla_saliency(lite0.model, x_cat, 285, objective="loss", reduce="sum")
        torch.testing.assert_close(namespace["saliency"], expected, atol=0, rtol=0)
        np.testing.assert_array_equal(namespace["saliency_u8"], scale_like_notes(expected))
        assert namespace["picture"].shape == (224, 224, 3)
        assert all(p.grad is None for p in lite0.model.parameters())  # frozen: x.grad only



    def test_snippet_of_the_page_s_choice_and_classifier(self, lite0: LoadedModel) -> None:
        from lessons.saliency.maps import MapChoice
        from lessons.saliency.session import Classifier

        choice = MapChoice(292, "app", "integrated_gradients", "loss", "max", 25, 0.15, 16,
                           "blur", 95.0, 0.3, "bone", 3)  # fmt: skip
        expected = S.snippet_for("integrated_gradients", model_name=lite0.name, target=292,
                                 objective="loss", reduce="max", steps=16, baseline="blur",
                                 percentile=95.0, alpha=0.3, colormap="bone", seed=3,
                                 device=lite0.device)  # fmt: skip
        assert S.snippet_of(choice, Classifier(lite0, None)) == expected
        uploaded = Classifier(lite0, None, False, "mine.pt", "resnet18")
        assert "mine.pt" in S.snippet_of(choice, uploaded)
        assert S.snippet_of(choice, uploaded) == S.snippet_for(
            "integrated_gradients", model_name=lite0.name, custom_file="mine.pt",
            architecture="resnet18", target=292, objective="loss", reduce="max", steps=16,
            baseline="blur", percentile=95.0, alpha=0.3, colormap="bone", seed=3,
            device=lite0.device)  # fmt: skip

    def test_exception(self) -> None:
        with pytest.raises(ValueError, match="recipe must be one of"):
            S.snippet_for(recipe="cvglue")
        with pytest.raises(ValueError, match="method must be one of"):
            S.snippet_for("gradcam")
