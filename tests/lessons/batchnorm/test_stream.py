"""Tests for lessons/batchnorm/stream.py: the synthetic stream, its batches and the page's boxes."""

from __future__ import annotations

import pytest
import torch

from core.text import T
from lessons.batchnorm.stream import (
    Stream,
    cap_spatial,
    channel_text_usable,
    parse_channel_values,
    sample_batch,
    stream_from_text,
)

DEFAULT_STREAM = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))


class TestStream:
    def test_exception(self):
        with pytest.raises(ValueError, match="must be > 0, got 0.0"):
            Stream(mean=(0.0,), std=(0.0,))
        with pytest.raises(ValueError, match="std for channel 1 must be > 0, got -1.0"):
            Stream(mean=(0.0, 0.0), std=(1.0, -1.0))
        with pytest.raises(ValueError, match="NaN/inf"):
            Stream(mean=(float("nan"),), std=(1.0,))
        # finite in float64 but inf (or inf squared) in the float32 batches
        with pytest.raises(ValueError, match="std for channel 0 is 1e\\+39; keep it within"):
            Stream(mean=(0.0,), std=(1e39,))
        with pytest.raises(ValueError, match="mean after the shift for channel 0 is -1e\\+30"):
            Stream(mean=(0.0,), std=(1.0,), shift_step=1, shifted_mean=(-1e30,),
                   shifted_std=(1.0,))

    def test_parse_channel_values(self):
        assert parse_channel_values("1, 2;3", 3, name="mean") == (1.0, 2.0, 3.0)
        assert parse_channel_values(" 4 ", 2, name="mean") == (4.0, 4.0)
        with pytest.raises(ValueError, match="mean for channel 1 is NaN"):
            parse_channel_values("1, nan", 2, name="mean")
        with pytest.raises(ValueError, match="'abc' is not a number"):
            parse_channel_values("abc", 2, name="std")
        with pytest.raises(ValueError, match="got 2 values for 3 channels"):
            parse_channel_values("1, 2", 3, name="std")
        with pytest.raises(ValueError, match="infinite"):
            parse_channel_values("inf", 1, name="std")

    def test_cap_spatial(self):
        assert cap_spatial(4, dims=2, batch_size=16, channels=3).notice is None
        capped = cap_spatial(4096, dims=2, batch_size=16, channels=3)
        assert capped.side == 73 and 16 * 3 * 73**2 <= 262_144 < 16 * 3 * 74**2
        assert "capped at 73" in capped.notice
        assert cap_spatial(10**6, dims=1, batch_size=2, channels=2).side == 65_536
        assert cap_spatial(99, dims=0, batch_size=2, channels=2).notice is None

    def test_sample_batch_is_deterministic_per_index(self):
        a = sample_batch(DEFAULT_STREAM, 7, 4, (2,), seed=3)
        b = sample_batch(DEFAULT_STREAM, 7, 4, (2,), seed=3)
        c = sample_batch(DEFAULT_STREAM, 8, 4, (2,), seed=3)
        assert torch.equal(a, b) and not torch.equal(a, c)

    def test_stream_from_text(self):
        stream = stream_from_text("2, -1", "3", 2, shift=(4, 1.0, 2.0), nan_step=3)
        assert stream.mean == (2.0, -1.0) and stream.std == (3.0, 3.0)
        assert stream.shift_step == 4
        assert stream.shifted_mean == (3.0, 0.0) and stream.shifted_std == (6.0, 6.0)
        assert stream.nan_step == 3
        plain = stream_from_text("1", "1", 3)
        assert plain.shift_step is None and plain.shifted_mean is None and plain.nan_step is None

    @pytest.mark.parametrize(("mean", "std", "shift", "words", "box"), [
        ("1, 2", "1", None, "got 2 values for 3 channels", "stream mean"),
        ("1", "a", None, "is not a number", "stream std"),
        ("1", "1", (2, 0.0, 0.0), "must be > 0", "std after the shift"),
    ])
    def test_errors_name_the_box_as_a_text_of_its_own(self, mean, std, shift, words, box):
        """The box's name is a T inside the message, so a page translates it too."""
        with pytest.raises(ValueError, match=words) as error:
            stream_from_text(mean, std, 3, shift=shift)
        message = error.value.args[0]
        assert isinstance(message, T)
        names = [v for v in message.args.values() if isinstance(v, T)]
        assert [str(n) for n in names] == [box]

    def test_channel_text_usable(self):
        assert channel_text_usable("1, 2, 3", 3, std=False, max_chars=200)
        assert channel_text_usable("0.5", 3, std=True, max_chars=200)
        assert not channel_text_usable("1, 2", 3, std=False, max_chars=200)
        assert not channel_text_usable("1, 0, 1", 3, std=True, max_chars=200)
        assert channel_text_usable("-1", 3, std=False, max_chars=200)
        assert not channel_text_usable("-1", 3, std=True, max_chars=200)
        assert not channel_text_usable("7" * 201, 1, std=False, max_chars=200)
