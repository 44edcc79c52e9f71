"""Tests for lessons/batchnorm/figures.py: the running-statistics chart, the train()/eval()
histograms, the normalizations' diagram and the tables, in English and through a translator."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lessons.batchnorm.figures import (
    anatomy_tables,
    histogram_bins,
    modes_histogram,
    norms_diagram,
    norms_table,
    running_chart,
)
from lessons.batchnorm.layer import simulate
from lessons.batchnorm.modes import compare_modes
from lessons.batchnorm.norms import NORM_NAMES, compare_norms
from lessons.batchnorm.real_modules import anatomy_of
from lessons.batchnorm.stream import Stream, sample_batch

DEFAULT_STREAM = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))


def shout(message: str) -> str:
    """A stand-in translator: every catalog message in capitals, placeholders kept."""
    return message.upper().replace("{CHANNEL}", "{channel}").replace("{MEAN:.3F}", "{mean:.3f}") \
        .replace("{STD:.3F}", "{std:.3f}").replace("{SIZE}", "{size}")


class TestRunningChart:
    def test_traces_follow_the_history(self):
        history = simulate(DEFAULT_STREAM, 12, 8, spatial=(2,))
        fig = running_chart(history, 1)
        names = [t.name for t in fig.data]
        assert names == ["batch statistic", "true value", "running_mean/var"] * 2
        batch, true, running = fig.data[:3]
        assert list(batch.x) == list(range(1, 13))
        np.testing.assert_array_equal(batch.y, history.batch_mean[:, 1])
        np.testing.assert_array_equal(running.y, history.running_mean[:, 1])
        assert list(true.y) == [-1.0] * 12
        np.testing.assert_array_equal(fig.data[5].y, history.running_var[:, 1])
        assert fig.layout.legend.orientation == "h" and fig.layout.legend.y >= 1.0

    def test_untracked_has_no_red_line_and_the_shift_is_marked(self):
        stream = Stream(mean=(0.0,), std=(1.0,), shift_step=3, shifted_mean=(2.0,),
                        shifted_std=(1.0,))
        fig = running_chart(simulate(stream, 6, 8, track_running_stats=False), 0)
        assert "running_mean/var" not in [t.name for t in fig.data]
        assert [s.x0 for s in fig.layout.shapes] == [3.5, 3.5]  # both panels

    def test_fresh_layer_shows_the_fresh_buffers(self):
        fig = running_chart(simulate(DEFAULT_STREAM, 0, 8), 0)
        running = [t for t in fig.data if t.name == "running_mean/var"]
        assert list(running[0].y) == [0.0] and running[0].mode == "lines+markers"

    def test_translated(self):
        fig = running_chart(simulate(DEFAULT_STREAM, 2, 8), 2, shout)
        assert fig.data[0].name == "BATCH STATISTIC"
        assert fig.layout.yaxis.title.text == "MEAN, CHANNEL 2"
        assert fig.layout.xaxis.title.text == "TRAINING STEP"

    def test_exception(self):
        with pytest.raises(ValueError, match=r"channel must be in \[0, 2\], got 3"):
            running_chart(simulate(DEFAULT_STREAM, 2, 8), 3)


class TestModesHistogram:
    def test_shared_bins_and_means(self):
        history = simulate(DEFAULT_STREAM, 5, 16, spatial=(4, 4))
        comparison = compare_modes(sample_batch(DEFAULT_STREAM, 4, 16, (4, 4)), history.state,
                                   eps=1e-5)
        fig = modes_histogram(comparison, 0, shout)
        train, evaluation = fig.data
        assert train.xbins == evaluation.xbins
        assert train.name.startswith("TRAIN(): MEAN") and evaluation.name.startswith("EVAL()")
        assert [s.x0 for s in fig.layout.shapes] == pytest.approx(
            [comparison.train_mean[0], comparison.eval_mean[0]])

    def test_histogram_bins(self):
        bins = histogram_bins([np.array([0.0, 2.0]), np.array([4.0, np.nan])], count=4)
        assert bins == {"start": 0.0, "end": 4.0 + 1e-9, "size": 1.0}
        assert histogram_bins([np.array([np.nan])])["start"] == -1.0  # nothing finite


class TestNorms:
    def test_diagram_has_one_grid_per_normalization(self):
        fig = norms_diagram(3, 4, 2)
        assert [a.text for a in fig.layout.annotations] == list(NORM_NAMES)
        group_norm = np.array(fig.data[3].z)
        assert group_norm.shape == (4, 3) and len(np.unique(group_norm)) == 6

    def test_table(self):
        results = compare_norms(torch.randn(2, 4, 3, 3), 2)
        table = norms_table(results)
        assert table["normalization"] == list(NORM_NAMES)
        assert table["pools over"][3] == ("C/G, H, W (one statistic per sample and group of 2 "
                                          "channels)")
        assert table["values per statistic"] == [18, 36, 9, 18]  # N·H·W, C·H·W, H·W, C/G·H·W
        translated = norms_table(results, shout)
        assert translated["POOLS OVER"][3].startswith("C/G, H, W (ONE STATISTIC PER SAMPLE")
        assert translated["POOLS OVER"][3].endswith("GROUP OF 2 CHANNELS)")

    def test_anatomy_tables(self):
        parameters, buffers, keys = anatomy_tables(anatomy_of(3, 2))
        assert parameters == {"name": ["weight", "bias"], "shape": ["(3,)", "(3,)"],
                              "requires_grad": ["True", "True"]}
        assert buffers["name"] == ["running_mean", "running_var", "num_batches_tracked"]
        assert buffers["dtype"][-1] == "int64"
        assert keys["key"][0] == "weight"
        bare = anatomy_tables(anatomy_of(3, 0, affine=False, track_running_stats=False), shout)
        assert bare[0]["NAME"] == ["(NONE)"] and bare[2] == {"KEY": ["(EMPTY)"]}
