"""lessons.saliency.sanity: rank correlation against scipy, the layers in order, the reading,
the chart and its thumbnails."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.text import T
from lessons.saliency import sanity as R
from lessons.saliency.models import LoadedModel


class TestRankCorrelationAndLayers:
    def test_spearman_matches_scipy(self) -> None:
        scipy_stats = pytest.importorskip("scipy.stats")
        rng = np.random.default_rng(3)
        a = rng.integers(0, 5, 200).astype(float)  # many ties
        b = a + rng.normal(0, 2, 200)
        assert R.spearman(a, b) == pytest.approx(scipy_stats.spearmanr(a, b).statistic, abs=1e-12)
        np.testing.assert_allclose(R.rankdata(a), scipy_stats.rankdata(a))
        assert R.spearman(a, a) == pytest.approx(1.0)
        assert np.isnan(R.spearman(np.zeros(5), np.arange(5)))

    @settings(max_examples=30, deadline=None)
    @given(a=arrays(np.float64, st.integers(2, 40), elements=st.floats(-10, 10)))
    def test_property_spearman_of_monotone_map_is_one(self, a: np.ndarray) -> None:
        if np.unique(a).size < 2:
            return
        assert R.spearman(a, 2 * a) == pytest.approx(1.0)  # scaling by 2 is exact
        assert R.spearman(a, -a) == pytest.approx(-1.0)

    def test_layers_top_down(self, lite0: LoadedModel) -> None:
        layers = R.randomizable_layers(lite0.model)
        assert layers[:4] == ["_fc", "_bn1", "_conv_head", "_blocks.15"]
        assert layers[-1] == "_conv_stem" and len(layers) == 21


    def test_randomize_module_redraws_weights_and_permutes_biases(self) -> None:
        import torch
        from torch import nn

        layer = nn.Linear(50, 40)
        bias = layer.bias.detach().clone()
        weight = layer.weight.detach().clone()
        R.randomize_module(layer, torch.Generator().manual_seed(0))
        assert not torch.equal(layer.weight, weight)
        assert layer.weight.std().item() == pytest.approx(math.sqrt(2 / 50), rel=0.1)  # He
        assert torch.equal(layer.bias.sort().values, bias.sort().values)  # a permutation


def _result(correlations: tuple[float, ...]) -> R.RandomizationResult:
    layers = tuple(f"layer{i}" for i in range(len(correlations)))
    maps = tuple(np.full((2, 2), i, np.uint8) for i in range(len(correlations)))
    return R.RandomizationResult("vanilla", layers, correlations, np.zeros((2, 2), np.uint8), maps)


class TestReading:
    def test_sentence_follows_the_numbers(self) -> None:
        passes = R.read_randomization(_result((0.3, 0.1)))
        assert "passes this sanity check" in passes and passes.args["first"] == "0.30"
        assert "Treat it with care" in R.read_randomization(_result((0.95, 0.9)))
        assert "changes partly" in R.read_randomization(_result((0.9, 0.4)))
        flat = R.read_randomization(_result((math.nan, math.nan)))
        assert "undefined" in flat and isinstance(flat, T)
        # a flat step among defined ones: its value is a catalog text (translated by the page)
        first_flat = R.read_randomization(_result((math.nan, 0.2)))
        assert isinstance(first_flat.args["first"], T)

    def test_thumbnails_spread_from_the_first_layer_to_the_last(self) -> None:
        assert R.thumbnail_steps(_result((0.1,) * 21)) == [0, 6, 13, 20]
        assert R.thumbnail_steps(_result((0.1, 0.2))) == [0, 1]
        assert R.thumbnail_steps(_result((0.1,) * 9), most=1) == [0]
        with pytest.raises(ValueError, match="most must be >= 1 thumbnail, got 0"):
            R.thumbnail_steps(_result((0.1,)), most=0)

    def test_thumbnails_are_the_original_then_the_spread_steps_with_their_captions(self) -> None:
        result = _result((0.1,) * 5)
        pictures, captions = R.thumbnails(result, most=2)
        steps = R.thumbnail_steps(result, most=2)
        assert pictures[0] is result.original and steps == [0, 4]
        assert all(p is result.maps[i] for p, i in zip(pictures[1:], steps, strict=True))
        assert captions[0] == ("original", "The original saliency map.")
        caption, alt = captions[2]
        assert caption == f"5 layer(s): up to {result.layers[4]}" and isinstance(alt, T)
        assert alt == f"Saliency map after randomizing 5 layer(s), up to {result.layers[4]}."

    def test_chart_plots_every_step_from_the_original(self) -> None:
        result = _result((0.5, 0.25, -0.125))
        fig = R.correlation_chart(result, translate=str.upper)
        (trace,) = fig.data
        assert list(trace.x) == [0, 1, 2, 3] and list(trace.y) == [1.0, 0.5, 0.25, -0.125]
        assert trace.text[0] == "ORIGINAL" and fig.layout.yaxis.title.text == "SPEARMAN VS ORIGINAL"
        alt = R.correlation_chart_alt(result)
        assert alt.endswith("0.50, 0.25, -0.12") and "{values}" in alt.template
