"""Tests for lessons.flow.sources: synthetic fields, Farneback flow and the uploaded images."""

from __future__ import annotations

import numpy as np
import pytest

from lessons.flow.fill import (
    FlowSpec,
    build_flow,
    endpoint_error,
)
from lessons.flow.sources import SYNTHETIC_FIELDS, decode_image, farneback_flow, synthetic_flow


def test_synthetic_fields():
    for kind in SYNTHETIC_FIELDS:
        obs, truth = synthetic_flow(kind, 40, 50, noise=0.5, seed=1)
        assert obs.shape == truth.shape == (40, 50, 2) and obs.dtype == np.float32
        assert np.isfinite(truth).all() and not np.array_equal(obs, truth)
        assert np.abs(truth).max() > 0.5
    with pytest.raises(ValueError, match="kind must be one of"):
        synthetic_flow("spiral")
    with pytest.raises(ValueError, match="size cap"):
        synthetic_flow("zoom", 5000, 100)


def test_farneback_and_real_sources():
    img = (np.random.default_rng(0).random((64, 80, 3)) * 255).astype(np.uint8)
    fwd, bwd = farneback_flow(img, img)
    assert fwd.shape == (64, 80, 2) and np.abs(fwd).max() < 0.5
    with pytest.raises(ValueError, match="same size"):
        farneback_flow(img, img[:-1])
    with pytest.raises(ValueError, match="size cap"):
        farneback_flow(np.zeros((10, 3000), np.uint8), np.zeros((10, 3000), np.uint8))
    stereo = build_flow(FlowSpec(source="stereo", max_side=160, mask="fb"))
    assert stereo.reference_kind == "pre-mask flow" and stereo.mask.any()
    affine = build_flow(FlowSpec(source="affine", max_side=160, mask="blobs", hole_size=5))
    assert affine.reference_kind == "ground truth"
    # Farneback recovers the known affine motion reasonably where it is valid
    epe = endpoint_error(affine.reference, np.nan_to_num(affine.flow))
    assert np.median(epe[~affine.mask]) < 1.5
    with pytest.raises(ValueError, match="needs an image pair"):
        build_flow(FlowSpec(source="synthetic", mask="fb"))


def test_decode_image_refuses_bad_uploads_through_the_shared_decoder():
    from tests.shared.test_images import png_header_only

    # The header claims 30000x30000: refused before any pixel is decoded (core.images).
    with pytest.raises(ValueError, match="too large"):
        decode_image(png_header_only(30_000, 30_000), "the first image")
    with pytest.raises(ValueError, match="the second image: .*not an image"):
        decode_image(b"definitely not an image", "the second image")
    with pytest.raises(ValueError, match="empty"):
        decode_image(b"", "the first image")


def test_decode_image_checks_the_side_cap_on_the_header():
    """A 20 Mpx image (under the decoder's 25 Mpx budget) over a 1024 px cap is refused from its
    header: this one holds almost no pixel data, so decoding it would fail differently."""
    from tests.shared.test_images import png_header_only

    with pytest.raises(ValueError, match="4000x5000 pixels, over the size cap of 1024"):
        decode_image(png_header_only(5000, 4000), "the first image", max_side=1024)
