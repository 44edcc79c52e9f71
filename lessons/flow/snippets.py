"""The code snippets under the page: Python that rebuilds the page's flow and fills it, and one
that runs the notes' NumPy loop beside their avg_pool2d version. Runnable from the repository root.
"""

from __future__ import annotations

from pathlib import Path

from lessons.flow.fill import FlowSpec
from lessons.flow.gradual_mean import window_sizes
from lessons.flow.references import notes_window_sizes

_SNIPPET_FILL = '''

def gradual_mean_fill(flow, max_window={max_window}):
    """Fill NaN with the average, over windows 3, 5, 9, ..., max_window, of the masked box mean."""
    valid = ~np.isnan(flow)
    x0 = np.where(valid, flow, 0).astype(np.float32)  # NaN -> 0 before summing
    v = valid.astype(np.float32)
    total = np.zeros_like(x0)
    count = np.zeros_like(x0)
    k = 3
    while k <= max_window:
        box = dict(ddepth=-1, ksize=(k, k), normalize=False, borderType=cv2.BORDER_CONSTANT)
        num = cv2.boxFilter(x0, **box)  # sum of the valid values in the k x k window
        den = cv2.boxFilter(v, **box)  # how many valid values
        ok = den > 0.5
        total += np.where(ok, num / np.maximum(den, 1), 0)
        count += ok
        k = 2 * k - 1  # 3, 5, 9, 17, 33, ...
    fill = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return np.where(valid, flow, fill)  # replace only the holes


filled = gradual_mean_fill(flow, {max_window})
unfilled = int(np.isnan(filled).sum())  # no valid value within the largest window
print(f"filled {{int(np.isnan(flow).sum()) - unfilled}} hole values, {{unfilled}} left NaN")
'''


_SNIPPET_NOTES_NUMPY = '''
from lessons.flow.fill import endpoint_error, epe_stats
from lessons.flow.references import notes_gradual_mean_numpy, notes_gradual_mean_torch

notes_loop = notes_gradual_mean_numpy(flow, {size})  # notes 000:79, windows {sizes}
vectorised = notes_gradual_mean_torch(flow, {max_window})  # avg_pool2d, windows {windows}
holes = np.isnan(flow).any(axis=2)
print("NaN left by the notes' loop:", int(np.isnan(notes_loop).sum()))
{compare}'''

_SNIPPET_NOTES_NUMPY_EPE = '''
for name, filled in (("notes' loop", notes_loop), ("avg_pool2d", vectorised)):
    mean_epe, median_epe = epe_stats(endpoint_error(filled, case.reference), holes)
    print(f"{name}: mean EPE on the holes {mean_epe:.3f} px")
'''

_SNIPPET_NOTES_NUMPY_DIFF = '''print("largest |difference| on the holes:",
      float(np.nanmax(np.abs(notes_loop - vectorised)[holes], initial=0.0)))
'''


def notes_numpy_snippet_for(
    spec: FlowSpec | None, max_window: int = 33, *, upload_name: str | None = None
) -> str:
    """Python code that runs the notes' NumPy loop beside the avg_pool2d version on the page's
    flow and prints their EPE against the reference (or their difference, for an upload).

    Args and the runnable setting are those of :func:`snippet_for`; the loop uses
    ``max_window_size = max_window - 1`` (32, 16, 8, 4, 2 for 33), as the page does.
    """
    windows = window_sizes(max_window)
    head = _snippet_head(spec, upload_name)
    has_reference = spec is not None
    return head + _SNIPPET_NOTES_NUMPY.format(
        size=max_window - 1,
        sizes=", ".join(map(str, notes_window_sizes(max_window - 1))),
        max_window=max_window,
        windows=", ".join(map(str, windows)),
        compare=_SNIPPET_NOTES_NUMPY_EPE if has_reference else _SNIPPET_NOTES_NUMPY_DIFF,
    )


def _snippet_head(spec: FlowSpec | None, upload_name: str | None) -> str:
    head = "import cv2\nimport numpy as np\n\n"
    if spec is not None:
        return head + (
            "from lessons.flow.fill import FlowSpec, build_flow\n\n"
            f"case = build_flow({spec!r})\n"
            "flow = case.flow  # (H, W, 2) float32, NaN = hole\n"
        )
    name = upload_name or "my_flow.flo"
    safe = name if name.replace(".", "").replace("_", "").replace("-", "").isalnum() else (
        "my_flow" + Path(name).suffix
    )
    return head + (
        "from lessons.flow.flow_files import load_flow_file\n\n"
        f"with open({safe!r}, 'rb') as f:\n"
        f"    flow = load_flow_file({safe!r}, f.read())  # (H, W, 2) float32, NaN = hole\n"
    )


def snippet_for(
    spec: FlowSpec | None, max_window: int = 33, *, upload_name: str | None = None
) -> str:
    """Python code that rebuilds the page's flow and fills it with plain NumPy + OpenCV.

    Args:
        spec: the built-in case, or None for an uploaded file/pair.
        max_window: largest window, ``2**k + 1``.
        upload_name: the uploaded file name (used when ``spec`` is None).

    Returns:
        Source text that defines ``flow`` and ``filled``; runnable from the repository root
        (for an upload, after saving the file next to it).
    """
    window_sizes(max_window)
    return _snippet_head(spec, upload_name) + _SNIPPET_FILL.format(max_window=max_window)
