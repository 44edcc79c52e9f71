"""lessons.warp.snippet: the page's code runs and reproduces the lesson's warps exactly."""

from __future__ import annotations

import numpy as np
import pytest

from core.images import load_sample
from lessons.warp.affine import compare_warps
from lessons.warp.matrix_inputs import matrix_from_params
from lessons.warp.snippet import image_code_for, snippet_for


@pytest.mark.parametrize(
    ("align_corners", "mode", "padding_mode", "notes"),
    [
        (False, "bilinear", "zeros", False),
        (True, "nearest", "reflection", False),
        (False, "bicubic", "border", False),
        (False, "bilinear", "zeros", True),
    ],
)
def test_snippet_runs_and_matches_core(align_corners, mode, padding_mode, notes, capsys):
    img = load_sample("chelsea.png").rgb
    M = matrix_from_params(-25, 1.3, 0.2, 0, 10, -5, (200, 150))
    dsize = (320, 200)
    code = snippet_for(
        M, dsize, align_corners=align_corners, mode=mode, padding_mode=padding_mode, notes=notes
    )
    namespace: dict = {}
    exec(compile(code, "<warp snippet>", "exec"), namespace)
    assert "interior |grid_sample - cv2.warpAffine|" in capsys.readouterr().out
    np.testing.assert_array_equal(namespace["img"], img)
    cmp = compare_warps(
        img,
        M,
        dsize,
        align_corners=align_corners,
        mode=mode,
        padding_mode=padding_mode,
        notes=notes,
    )
    np.testing.assert_array_equal(namespace["out"], cmp.warped)
    np.testing.assert_array_equal(namespace["ref"], cmp.reference)


def test_image_code_reads_the_sample_or_your_own_file():
    assert image_code_for(False, "camera.png") == (
        "np.array(Image.open(Path(skimage.data.data_dir) / 'camera.png').convert('RGB'))"
    )
    assert "your_image.png" in image_code_for(True, "camera.png")
