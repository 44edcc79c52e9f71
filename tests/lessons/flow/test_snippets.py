"""Tests for lessons.flow.snippets: the page's snippets run and give the page's numbers."""

from __future__ import annotations

import numpy as np
import pytest

from lessons.flow.fill import (
    FlowSpec,
    build_flow,
)
from lessons.flow.flow_files import save_flo
from lessons.flow.gradual_mean import gradual_mean_fill
from lessons.flow.references import (
    notes_gradual_mean_numpy,
    notes_gradual_mean_torch,
)
from lessons.flow.snippets import notes_numpy_snippet_for, snippet_for
from lessons.flow.sources import synthetic_flow
from tests.lessons.flow.flow_cases import TOL


@pytest.mark.parametrize("max_window", [9, 33])
def test_snippet_runs_and_matches(max_window):
    spec = FlowSpec(height=40, width=56, field="shear", mask="stripes", hole_size=4, seed=3)
    code = snippet_for(spec, max_window)
    namespace: dict = {}
    exec(compile(code, "<snippet>", "exec"), namespace)
    expected = gradual_mean_fill(build_flow(spec).flow, max_window).filled
    np.testing.assert_allclose(namespace["filled"], expected, **TOL)
    upload = snippet_for(None, max_window, upload_name="my flow<script>.flo")
    assert "my_flow.flo" in upload and "<script>" not in upload


def test_notes_numpy_snippet_runs_for_an_upload(tmp_path, monkeypatch):
    flow = synthetic_flow("zoom", 24, 30)[0]
    flow[5:9, 6:12] = np.nan
    (tmp_path / "my_flow.flo").write_bytes(save_flo(flow))
    monkeypatch.chdir(tmp_path)
    code = notes_numpy_snippet_for(None, 9, upload_name="my_flow.flo")
    assert "notes_gradual_mean_numpy(flow, 8)  # notes 000:79, windows 8, 4, 2" in code
    printed: list[str] = []
    exec(compile(code, "<snippet>", "exec"),
         {"print": lambda *a, **k: printed.append(" ".join(map(str, a)))})
    expected = np.abs(notes_gradual_mean_numpy(flow, 8) - notes_gradual_mean_torch(flow, 9))
    assert printed == ["NaN left by the notes' loop: 0",
                       f"largest |difference| on the holes: {float(expected[5:9, 6:12].max())}"]
