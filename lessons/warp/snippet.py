"""The page's code snippet: a self-contained script that reproduces the current warp.

It warps with ``F.affine_grid`` + ``F.grid_sample`` (the correct normalization, or the notes'
half-pixel-off one), warps again with ``cv2.warpAffine`` and prints how far apart they are.
The tests run it and compare its ``out`` with :func:`lessons.warp.affine.warp_affine`.

Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lessons.warp.affine import CV2_BORDER_NAMES, CV2_INTERPOLATION_NAMES, cv2_flags
from lessons.warp.validation import validate_affine, validate_dsize, validate_modes


def snippet_for(
    M: np.ndarray | Sequence[Sequence[float]],
    dsize: Sequence[int],
    *,
    align_corners: bool = False,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    device: str = "cpu",
    notes: bool = False,
    image_code: str = "np.array(Image.open(Path(skimage.data.data_dir) / 'chelsea.png')"
    ".convert('RGB'))",
) -> str:
    """A self-contained script reproducing the current warp; it defines ``img``, ``out``, ``ref``.

    Args:
        M, dsize, align_corners, mode, padding_mode, device: the current settings.
        notes: reproduce the notes' (half-pixel-off) normalization instead of the correct one.
        image_code: a Python expression producing the (H, W, 3) uint8 input.

    Returns:
        Python source; ``exec`` it and compare its ``out`` with :func:`warp_affine`.
    """
    m = validate_affine(M)
    w, h = validate_dsize(dsize)
    validate_modes(mode, padding_mode)
    interp, border = cv2_flags(mode, padding_mode, align_corners)
    rows = ",\n    ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in m)
    if notes:
        norm = (
            "def to_normalized(w, h):\n"
            "    # THE NOTES' VERSION: 2x/W - 1 matches neither grid_sample convention\n"
            "    # (half a pixel off with align_corners=False).\n"
            "    return np.array([[2 / w, 0, -1], [0, 2 / h, -1], [0, 0, 1]])\n"
        )
    else:
        norm = (
            "def to_normalized(w, h):\n"
            '    """3x3: pixel coordinates -> the [-1, 1] coordinates grid_sample reads."""\n'
            "    if align_corners:  # x_n = 2x / (W - 1) - 1\n"
            "        return np.array([[2 / (w - 1), 0, -1], [0, 2 / (h - 1), -1], [0, 0, 1]])\n"
            "    # x_n = (2x + 1) / W - 1\n"
            "    return np.array([[2 / w, 0, 1 / w - 1], [0, 2 / h, 1 / h - 1], [0, 0, 1]])\n"
        )
    return f"""from pathlib import Path

import cv2
import numpy as np
import skimage.data
import torch
import torch.nn.functional as F
from PIL import Image

img = {image_code}  # (H, W, 3) uint8: use your own image here
M = np.array([
    {rows},
])  # OpenCV: source pixel -> destination pixel
out_w, out_h = {w}, {h}  # dsize: OpenCV's output canvas; theta below is recomputed from it
align_corners = {bool(align_corners)}
device = {str(device)!r}


{norm}

# affine_grid maps OUTPUT normalized coords to INPUT normalized coords: invert M, normalize.
h, w = img.shape[:2]
M3 = np.vstack([M, [0, 0, 1]])
theta = to_normalized(w, h) @ np.linalg.inv(M3) @ np.linalg.inv(to_normalized(out_w, out_h))
theta = torch.tensor(theta[:2], dtype=torch.float32, device=device).unsqueeze(0)  # (1, 2, 3)

x = torch.from_numpy(img).to(device).permute(2, 0, 1).unsqueeze(0).float()  # (1, C, H, W)
grid = F.affine_grid(theta, [1, x.shape[1], out_h, out_w], align_corners=align_corners)
y = F.grid_sample(x, grid, mode={mode!r}, padding_mode={padding_mode!r},
                  align_corners=align_corners)
out = y[0].permute(1, 2, 0).round().clamp(0, 255).to(torch.uint8).cpu().numpy()

ref = cv2.warpAffine(img, M, (out_w, out_h), flags={CV2_INTERPOLATION_NAMES[interp]},
                     borderMode={CV2_BORDER_NAMES[border]})
diff = np.abs(out.astype(int) - ref.astype(int))[2:-2, 2:-2]  # 2 px border excluded
print(f"interior |grid_sample - cv2.warpAffine|: max {{diff.max()}}, mean {{diff.mean():.4f}}")
"""


def image_code_for(uploaded: bool, sample: str = "chelsea.png") -> str:
    """The snippet's expression for its input image: the bundled ``sample`` (skimage's data
    folder), or a file of the reader's own when the page's image was ``uploaded``.

    >>> image_code_for(True)
    "np.array(Image.open('your_image.png').convert('RGB'))"
    """
    if uploaded:
        return "np.array(Image.open('your_image.png').convert('RGB'))"
    return f"np.array(Image.open(Path(skimage.data.data_dir) / {str(sample)!r}).convert('RGB'))"
