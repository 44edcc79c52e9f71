"""AppTest for the affine warp playground: three ways to define M, every mode, bad input."""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
import re
from urllib.parse import parse_qsl, urlencode

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from core.images import load_sample
from lessons.warp.affine import compare_warps, warp_affine
from lessons.warp.matrix_inputs import matrix_from_params
from lessons.warp.validation import INTERPOLATIONS, PADDING_MODES
from testing.apptest import switch_to
from tests.app import conftest


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def interior_mean(at) -> float:
    return float(metrics(at)["Interior mean |Δ|"])


def interior_max(at) -> float:
    return float(metrics(at)["Interior max |Δ|"])


def formulas(at) -> list[str]:
    """Every formula on the page: display formulas (st.latex) and the inline-maths matrices."""
    return [f.value for f in at.latex] + [m.value for m in at.markdown if m.value.startswith("$")]


def errors(at) -> str:
    return " ".join(e.value for e in at.error)


def png_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def page(open_page):
    at = open_page("warp")
    assert not at.exception, at.exception
    return at


def test_default_view(page):
    at = page
    assert not at.error
    assert at.title[0].value == "Affine warp playground"
    assert interior_max(at) <= 2 and interior_mean(at) <= 0.5
    assert len(formulas(at)) >= 7  # formula, normalization and N_src, M^-1, N_dst, theta, M
    assert any("size is the output grid" in c.value for c in at.caption)
    assert at.success  # "Correct theta: the two paths agree ..."
    assert not any(r"M_{\theta}" in f for f in formulas(at))  # shown with the notes' theta


def test_sliders_define_the_transform(page):
    at = page
    at.slider(key="warp.angle").set_value(-120.0).run()
    at.slider(key="warp.scale").set_value(2.5).run()
    at.slider(key="warp.shear_x").set_value(0.4).run()
    at.slider(key="warp.shear_y").set_value(-0.3).run()
    at.slider(key="warp.tx").set_value(-30).run()
    at.slider(key="warp.ty").set_value(20).run()
    at.slider(key="warp.cx").set_value(10).run()
    at.slider(key="warp.cy").set_value(90).run()
    assert not at.exception and not at.error
    assert interior_max(at) <= 2 and interior_mean(at) <= 0.5
    assert any("getRotationMatrix2D" in c.value and "angle=-120" in c.value for c in at.caption)


def test_sliders_singular_shear(page):
    at = page
    at.slider(key="warp.shear_x").set_value(1.0).run()
    at.slider(key="warp.shear_y").set_value(1.0).run()
    assert not at.exception
    assert "singular" in errors(at) and "Hint" in errors(at)
    at.slider(key="warp.shear_y").set_value(0.0).run()
    assert not at.error


def test_matrix_entries(page):
    at = page
    at.radio(key="warp.definition").set_value("Matrix entries").run()
    assert not at.exception and not at.error
    at.text_area(key="warp.matrix_text").input("[[0.8, 0.3, 20], [-0.2, 1.1, -10]]").run()
    assert not at.exception and not at.error
    assert interior_max(at) <= 2
    assert any("M =" in f and "0.8" in f for f in formulas(at))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("0 0 0\n0 0 0", "singular"),
        ("1 2 0\n2 4 0", "singular"),
        ("nan 0 0\n0 1 0", "NaN"),
        ("1 0 inf\n0 1 0", "infinite"),
        ("1 0\n0 1", "needs 6 numbers"),
        ("1 0 x\n0 1 0", "not a number"),
    ],
)
def test_matrix_entries_bad_input(page, text, fragment):
    at = page
    at.radio(key="warp.definition").set_value("Matrix entries").run()
    at.text_area(key="warp.matrix_text").input(text).run()
    assert not at.exception
    assert fragment in errors(at)
    # The page keeps working: fix the matrix and the error is gone.
    at.text_area(key="warp.matrix_text").input("1 0 3\n0 1 4").run()
    assert not at.error and not at.exception


def test_point_pairs(page):
    at = page
    at.radio(key="warp.definition").set_value("Point pairs").run()
    assert not at.exception and not at.error
    at.number_input(key="warp.p0_dx").set_value(40.0).run()
    at.number_input(key="warp.p2_dy").set_value(260.0).run()
    assert not at.exception and not at.error
    assert interior_max(at) <= 2


def test_point_pairs_collinear(page):
    at = page
    at.radio(key="warp.definition").set_value("Point pairs").run()
    for key, value in [
        ("warp.p0_sx", 10.0),
        ("warp.p0_sy", 10.0),
        ("warp.p1_sx", 20.0),
        ("warp.p1_sy", 20.0),
        ("warp.p2_sx", 30.0),
        ("warp.p2_sy", 30.0),
    ]:
        at.number_input(key=key).set_value(value)
    at.run()
    assert not at.exception
    assert "collinear" in errors(at)


@pytest.mark.parametrize(
    ("size_mode", "shape"),
    [("Half (shrink)", (150, 226)), ("Double (enlarge)", (600, 902))],
)
def test_output_size_modes(page, size_mode, shape):
    at = page
    at.radio(key="warp.size_mode").set_value(size_mode).run()
    assert not at.exception and not at.error
    assert interior_max(at) <= 2
    assert any(f"size=(1, 3, {shape[0]}, {shape[1]})" in c.value for c in at.caption)


@pytest.mark.parametrize(("w", "h", "fragment"), [(0, 100, "too small"), (5000, 100, "cap")])
def test_output_size_bad(page, w, h, fragment):
    at = page
    at.radio(key="warp.size_mode").set_value("Custom").run()
    at.number_input(key="warp.out_w").set_value(w)
    at.number_input(key="warp.out_h").set_value(h).run()
    assert not at.exception
    assert fragment in errors(at)
    at.number_input(key="warp.out_w").set_value(123).run()
    assert not at.error


def test_custom_output_size(page):
    at = page
    at.radio(key="warp.size_mode").set_value("Custom").run()
    at.number_input(key="warp.out_w").set_value(97)
    at.number_input(key="warp.out_h").set_value(403).run()
    assert not at.exception and not at.error
    assert interior_max(at) <= 2


def test_every_mode(page):
    """All 3 interpolations x 3 paddings x 2 align_corners agree with cv2 (the flag mapping)."""
    at = page
    at.slider(key="warp.scale").set_value(0.6).run()  # shows plenty of padding
    for mode, padding, align in itertools.product(
        INTERPOLATIONS, PADDING_MODES, (False, True)
    ):
        at.selectbox(key="warp.mode").select(mode)
        at.selectbox(key="warp.padding").select(padding)
        at.toggle(key="warp.align_corners").set_value(align).run()
        assert not at.exception, (mode, padding, align)
        assert not at.error, (mode, padding, align)
        assert interior_mean(at) <= 0.5, (mode, padding, align)
        if mode == "nearest":  # differences only where the sample point is a rounding tie
            assert any(" 0 of them away from a rounding tie" in c.value for c in at.caption)
        else:
            assert interior_max(at) <= 2, (mode, padding, align)


@pytest.mark.parametrize("align_corners", [False, True])
def test_notes_toggle_shows_the_error(page, align_corners):
    at = page
    at.toggle(key="warp.align_corners").set_value(align_corners).run()
    correct_mean = interior_mean(at)
    at.toggle(key="warp.notes").set_value(True).run()
    assert not at.exception and not at.error
    assert interior_mean(at) > correct_mean + 0.5
    text = at.warning[0].value
    assert "notes' affine2theta" in text
    if not align_corners:
        assert "|shift| = 0.366 px" in text  # 30 degrees, scale 1: A^-1 (1/2, 1/2) - (1/2, 1/2)
    else:
        assert "2/(W−1)" in text
    assert any("theta_{correct}" in f for f in formulas(at))
    # the notes' theta read back as the OpenCV matrix it really applies
    assert any(r"M_{\theta}" in f for f in formulas(at))
    (read_back,) = [c.value for c in at.caption if "read back as an OpenCV matrix" in c.value]
    assert ("2×2 part A is M's" in read_back) is not align_corners


def test_grayscale_sample(page):
    at = page
    at.selectbox(key="warp.image.sample").select("camera.png").run()
    assert not at.exception and not at.error
    assert any("grayscale" in info.value for info in at.info)
    assert interior_max(at) <= 2


def test_grayscale_upload(page):
    at = page
    at.radio(key="warp.image.source").set_value("Upload a file").run()
    gray = np.tile(np.arange(64, dtype=np.uint8) * 4, (48, 1))
    at.file_uploader(key="warp.image.upload").set_value(("g.png", png_bytes(gray), "image/png"))
    at.run()
    assert not at.exception and not at.error
    assert any("grayscale" in info.value for info in at.info)


def test_one_pixel_image(page):
    at = page
    at.radio(key="warp.image.source").set_value("Upload a file").run()
    tiny = np.full((1, 1, 3), 200, np.uint8)
    at.file_uploader(key="warp.image.upload").set_value(("t.png", png_bytes(tiny), "image/png"))
    at.run()
    assert not at.exception
    assert "1x1" in errors(at) and "at least 2x2" in errors(at)


def test_timing_button(page):
    at = page
    at.button(key="warp.time").click().run()
    assert not at.exception and not at.error
    shown = metrics(at)
    assert shown["cv2.warpAffine (CPU)"].endswith(" ms")
    assert "torch end to end (cpu)" in shown


@pytest.mark.parametrize("notes", [False, True])
def test_snippet_runs_and_matches_page(page, notes, capsys):
    at = page
    at.slider(key="warp.angle").set_value(-40.0)
    at.slider(key="warp.tx").set_value(10)
    at.selectbox(key="warp.mode").select("bicubic")
    at.toggle(key="warp.notes").set_value(notes).run()
    code = next(c.value for c in at.code if "ref = cv2.warpAffine(" in c.value)
    namespace: dict = {}
    exec(compile(code, "<warp page snippet>", "exec"), namespace)
    assert "interior |grid_sample - cv2.warpAffine|" in capsys.readouterr().out
    img = load_sample("chelsea.png").rgb
    np.testing.assert_array_equal(namespace["img"], img)
    M = matrix_from_params(
        -40.0, 1.0, tx=0.1 * img.shape[1], center=((img.shape[1] - 1) / 2, (img.shape[0] - 1) / 2)
    )
    np.testing.assert_allclose(namespace["M"], M, atol=1e-12)
    expected = compare_warps(img, M, (img.shape[1], img.shape[0]), mode="bicubic", notes=notes)
    np.testing.assert_array_equal(namespace["out"], expected.warped)


def _colorscale_colours(node) -> list[str]:
    """Every colour in every ``colorscale`` of a plotly spec (nested dicts and lists)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "colorscale" and isinstance(value, list):
                found += [str(stop[1]) for stop in value]
            else:
                found += _colorscale_colours(value)
    elif isinstance(node, list):
        for item in node:
            found += _colorscale_colours(item)
    return found


def test_heatmap_colours_survive_streamlit(page):
    """Streamlit's browser code rewrites #000001..#000010 in plotly specs (theme placeholders),
    so Inferno's #000004 showed zero error in lavender; no colour scale may use them."""
    at = page
    charts = at.get("plotly_chart")
    colours = [c for chart in charts for c in _colorscale_colours(json.loads(chart.proto.spec))]
    assert len(colours) >= 10  # the |Δ| heatmap's scale at least
    assert "rgb(0, 0, 4)" in colours  # Inferno still starts at (almost) black
    reserved = [c for c in colours if re.fullmatch(r"#0000(0[1-9]|10)", c.lower())]
    assert not reserved


def test_hidden_controls_keep_their_values(page):
    """Looking at another way of defining M (or a preset size) does not reset the inputs."""
    at = page
    at.slider(key="warp.angle").set_value(-60.0).run()
    at.radio(key="warp.definition").set_value("Point pairs").run()
    at.number_input(key="warp.p0_dx").set_value(40.0).run()
    at.radio(key="warp.definition").set_value("Matrix entries").run()
    at.text_area(key="warp.matrix_text").input("1 0 3\n0 1 4").run()
    at.radio(key="warp.definition").set_value("Sliders").run()
    assert at.slider(key="warp.angle").value == -60.0
    assert any("angle=-60" in c.value for c in at.caption)
    at.radio(key="warp.definition").set_value("Point pairs").run()
    assert at.number_input(key="warp.p0_dx").value == 40.0
    at.radio(key="warp.definition").set_value("Matrix entries").run()
    assert at.text_area(key="warp.matrix_text").value == "1 0 3\n0 1 4"
    at.radio(key="warp.size_mode").set_value("Custom").run()
    at.number_input(key="warp.out_w").set_value(97).run()
    at.radio(key="warp.size_mode").set_value("Half (shrink)").run()
    at.radio(key="warp.size_mode").set_value("Custom").run()
    assert at.number_input(key="warp.out_w").value == 97
    assert not at.exception and not at.error
    assert not at.warning  # no "default value but also set via the Session State API" notice


def test_output_without_interior(page):
    """A 4x4 output has no pixels left once 2 px are excluded: no 'nan', whole-image figures."""
    at = page
    at.radio(key="warp.image.source").set_value("Upload a file").run()
    small = (np.arange(48, dtype=np.uint8).reshape(4, 4, 3) * 5).astype(np.uint8)
    at.file_uploader(key="warp.image.upload").set_value(("s.png", png_bytes(small), "image/png"))
    at.run()
    assert not at.exception and not at.error
    shown = " ".join([*metrics(at).values(), *(s.value for s in at.success)])
    assert "nan" not in shown.lower()
    assert metrics(at)["Interior mean |Δ|"] == "n/a"
    assert any("no interior" in info.value for info in at.info)
    assert "over the whole image" in at.success[0].value
    at.toggle(key="warp.notes").set_value(True).run()
    assert not at.exception and "nan" not in at.warning[0].value.lower()
    at.radio(key="warp.size_mode").set_value("Half (shrink)").run()  # 2x2: still fine
    assert not at.exception and not at.error
    at.toggle(key="warp.notes").set_value(False).run()
    at.radio(key="warp.image.source").set_value("Upload a file").run()
    tiny = np.full((3, 3, 3), 90, np.uint8)  # half of 3 px rounds to 2 ... of 2 px to 1
    at.file_uploader(key="warp.image.upload").set_value(("t.png", png_bytes(tiny), "image/png"))
    at.run()
    assert not at.exception and not at.error
    tiny2 = np.full((2, 2, 3), 90, np.uint8)
    at.file_uploader(key="warp.image.upload").set_value(("u.png", png_bytes(tiny2), "image/png"))
    at.run()
    assert "too small" in errors(at) and "'Half (shrink)' gives 1×1" in errors(at)


def test_reflection_far_outside_is_refused(page):
    """cv2's reflection slows down with distance: a far-off translation gets a message, fast."""
    at = page
    at.radio(key="warp.definition").set_value("Matrix entries").run()
    at.text_area(key="warp.matrix_text").input("1 0 1e7\n0 1 0").run()
    assert not at.error  # zeros padding: fine, an empty output
    at.selectbox(key="warp.padding").select("reflection").run()
    assert not at.exception
    assert "reflection padding" in errors(at) and "Hint" in errors(at)
    at.text_area(key="warp.matrix_text").input("1 0 30\n0 1 0").run()
    assert not at.error and not at.exception


def test_grid_hover_and_live_matrices(page):
    """Grid hover pairs an output pixel with the input point it reads; N follows align_corners."""
    at = page
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    hover = [t for spec in specs for trace in spec["data"] for t in trace.get("text") or []]
    assert any(t.startswith("output (0, 0) ← input (") for t in hover)
    # Default 30 degree rotation about the centre of chelsea (451x300): output (0, 0) reads
    # M^-1 (0, 0), which the hover shows to 2 decimals.
    img = load_sample("chelsea.png").rgb
    h, w = img.shape[:2]
    M = matrix_from_params(30.0, 1.0, center=((w - 1) / 2, (h - 1) / 2))
    x, y = np.linalg.solve(M[:, :2], -M[:, 2])
    assert f"output (0, 0) ← input ({x:.2f}, {y:.2f})" in hover
    n_src = [f for f in formulas(at) if "N_{src} =" in f]
    assert n_src and "0.004435" in n_src[0]  # 2/451: align_corners=False
    at.toggle(key="warp.align_corners").set_value(True).run()
    n_src = [f for f in formulas(at) if "N_{src} =" in f]
    assert "0.004444" in n_src[0]  # 2/450: align_corners=True
    assert any(r"\frac{2x}{W-1}" in f for f in formulas(at))


def size_caption(at) -> str:
    (caption,) = [c.value for c in at.caption if "size is the output grid" in c.value]
    return caption


def test_half_with_identity_is_the_top_left_crop(page):
    """With theta recomputed from the output size, 'Half (shrink)' with the identity is
    exactly the top-left crop, not a denser sampling."""
    at = page
    at.slider(key="warp.angle").set_value(0.0).run()
    at.radio(key="warp.size_mode").set_value("Half (shrink)").run()
    assert not at.exception and not at.error
    img = load_sample("chelsea.png").rgb
    assert np.array_equal(
        matrix_from_params(0.0, 1.0, center=((img.shape[1] - 1) / 2, (img.shape[0] - 1) / 2)),
        np.eye(2, 3),
    )
    out = warp_affine(img, np.eye(2, 3), (226, 150))
    np.testing.assert_array_equal(out, img[:150, :226])
    caption = size_caption(at)
    assert "denser" not in caption and "only changes how densely" not in caption
    assert "size=(1, 3, 150, 226)" in caption
    assert "works as OpenCV's `dsize = (width, height)`, a canvas" in caption
    assert "this 226×150 output is exactly the top-left 226×150 window" in caption
    assert "exactly the input's top-left crop `img[:150, :226]`, not a resampled copy" in caption
    assert interior_max(at) == 0  # cv2's dsize crops the same pixels


def test_rotated_half_still_a_window(page):
    at = page  # default: 30 degrees
    at.radio(key="warp.size_mode").set_value("Half (shrink)").run()
    caption = size_caption(at)
    assert "Checked now: this 226×150 output is" in caption
    assert "top-left crop" not in caption  # not the identity


def test_notes_callout_on_size_is_drawn_when_opened(page):
    at = page
    assert not any("notes 000:18" in m.value for m in at.markdown)  # collapsed: not built
    at = conftest.open_expanders(at, "warp.size_notes_box")
    texts = " ".join(t.value for t in at.text)
    quotes = " ".join(html.unescape(h.value) for h in at.html if 'lang="zh-CN"' in h.value)
    assert "size 代表的是输出网格的分辨率而非 OpenCV 的从输出空间中截取的区域大小 dsize" in quotes
    assert "the 4x4 output IS the top-left crop img[:4, :4]" in texts
    assert any("notes 000:18" in m.value for m in at.markdown)


# ------------------------------------------------------------------------------------------
# Picture first, legible labels, alt text, a difference map that fills its axes
# ------------------------------------------------------------------------------------------


def chart_spec(at, key: str) -> dict:
    (chart,) = [c for c in at.get("plotly_chart") if c.proto.id and key in c.proto.id]
    return json.loads(chart.proto.spec)


def test_every_image_and_chart_has_alt_text(page):
    """axe-core's critical image-alt rule: both warped images and every chart carry alt text."""
    at = page
    alts = [img.alt for element in at.image for img in element.proto.imgs]
    assert len(alts) == 2 and all(alt.strip() for alt in alts)
    assert any("cv2.warpAffine" in alt for alt in alts)
    charts = at.get("plotly_chart")
    assert len(charts) >= 4 and all(chart.proto.alt.strip() for chart in charts)


def test_labels_fit_with_details_in_help(page):
    """The notes' toggle and the interior metric keep short labels, so they are not cut off at
    1280 px; the rest is in their help."""
    at = page
    toggle = at.toggle(key="warp.notes")
    assert len(toggle.label) <= 16 and "affine2theta" in toggle.help
    (metric,) = [m for m in at.metric if m.label.startswith("Interior max")]
    assert metric.label == "Interior max |Δ|"
    assert "2 px border" in metric.proto.help


@pytest.mark.parametrize(("size", "aspect"), [(None, 300 / 451), ((400, 100), 100 / 400)])
def test_difference_map_fills_its_axes(page, size, aspect):
    """The |Δ| map's axes hug the picture (constrain='domain') and the chart's height follows
    the output's aspect ratio, so the map does not sit small inside a fixed box."""
    at = page
    if size is not None:
        at.radio(key="warp.size_mode").set_value("Custom").run()
        at.number_input(key="warp.out_w").set_value(size[0])
        at.number_input(key="warp.out_h").set_value(size[1]).run()
    spec = chart_spec(at, "warp.diff_chart")
    layout = spec["layout"]
    assert layout["xaxis"]["constrain"] == "domain" and layout["yaxis"]["constrain"] == "domain"
    assert layout["yaxis"]["scaleanchor"] == "x"
    plot_height = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    # About 270 px of plot width beside the colour bar: the height matches the picture's.
    assert plot_height == pytest.approx(270 * aspect, abs=25)


def test_difference_map_is_pooled_for_the_browser(page):
    """The map is ~300 px wide: its data is max-pooled to at most 320 px a side, and the
    pooled maximum is the true maximum (no error hides)."""
    at = page
    at.toggle(key="warp.notes").set_value(True).run()
    spec = chart_spec(at, "warp.diff_chart")
    z = spec["data"][0]["z"]
    if isinstance(z, dict):  # plotly 6 sends arrays as base64 typed arrays
        shape = [int(n) for n in str(z["shape"]).split(",")]
        z = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)
    z = np.asarray(z, dtype=float)
    assert max(z.shape) <= 320
    assert float(z.max()) == pytest.approx(float(metrics(at)["Whole-image max |Δ|"]), rel=1e-2)


# ------------------------------------------------------------------------------------------
# Lesson links: every control is in the URL, and a link opens the same computed view
# ------------------------------------------------------------------------------------------


def open_cold(params: dict[str, str]) -> AppTest:
    """The warp page opened from a link, as a student clicking it: a new session, no state."""
    at = conftest.open_cold("warp", params)
    assert not at.exception, at.exception
    return at


def url_value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def set_widget(at: AppTest, kind: str, key: str, value: object) -> None:
    widget = getattr(at, kind)(key=key)
    if kind == "text_area":
        widget.input(value)
    elif kind == "selectbox":
        widget.select(value)
    else:
        widget.set_value(value)
    at.run()
    assert not at.exception, at.exception


def computed(at: AppTest) -> dict[str, object]:
    """What the warp produced: the four |Δ| metrics, the verdict, and every matrix shown."""
    return {
        "metrics": metrics(at),
        "verdict": [v.value for v in (*at.warning, *at.success)],
        "errors": errors(at),
        "formulas": formulas(at),
    }


# (kind, key, value) in the order a user sets them: one link per way of defining M.
LINKS = {
    "sliders": [
        ("slider", "warp.angle", -40.0),
        ("slider", "warp.scale", 1.3),
        ("slider", "warp.shear_x", 0.2),
        ("slider", "warp.tx", 10),
        ("selectbox", "warp.padding", "border"),
        ("radio", "warp.size_mode", "Half (shrink)"),
    ],
    "matrix": [
        ("radio", "warp.definition", "Matrix entries"),
        ("text_area", "warp.matrix_text", "[[0.8, 0.3, 20], [-0.2, 1.1, -10]]"),
        ("toggle", "warp.notes", True),
        ("toggle", "warp.align_corners", True),
        ("selectbox", "warp.mode", "bicubic"),
    ],
    "points": [
        ("radio", "warp.definition", "Point pairs"),
        ("number_input", "warp.p0_dx", 40.0),
        ("number_input", "warp.p2_dy", 260.0),
        ("radio", "warp.size_mode", "Custom"),
        ("number_input", "warp.out_w", 300),
        ("number_input", "warp.out_h", 200),
        ("toggle", "warp.notes", True),
    ],
}


@pytest.mark.parametrize("name", list(LINKS))
def test_cold_link_computes_what_the_widgets_compute(page, name):
    """A link with a mode, a text or point inputs and several values opens the same warp: the
    same |Δ| metrics, verdict (with its measured shift) and matrices as setting the controls."""
    at = page
    for kind, key, value in LINKS[name]:
        set_widget(at, kind, key, value)
    assert not at.error
    expected = computed(at)
    cold = open_cold({key: url_value(value) for _, key, value in LINKS[name]})
    assert not cold.toast, [t.value for t in cold.toast]  # the link was used whole
    for kind, key, value in LINKS[name]:
        assert getattr(cold, kind)(key=key).value == value, key
    assert computed(cold) == expected


DEFAULT_MATRIX_TEXT = "0.869333  0.232937  -5.42408\n-0.232937  0.869333  71.9455"  # chelsea


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("[[0.8, 0.3, 20], [-0.2, 1.1, -10]]", True),
        ("1 2 0\n2 4 0", True),  # six numbers, singular: the page says why (a lesson)
        ("1 0 x\n0 1 0", False),
        ("1 0\n0 1", False),
        ("7" * 10_000, False),
    ],
    ids=["valid", "singular", "not-a-number", "five-numbers", "10000-chars"],
)
def test_matrix_link(text, kept):
    """``?warp.definition=Matrix+entries&warp.matrix_text=...``: a matrix the page can show is
    used; text that is not six numbers opens the matrix at its default, with one notice."""
    at = open_cold({"warp.definition": "Matrix entries", "warp.matrix_text": text})
    box = at.text_area(key="warp.matrix_text")
    notices = [t.value for t in at.toast]
    if kept:
        assert box.value == text
        assert not notices
        if "singular" in errors(at):
            assert "determinant 0" in errors(at) and "Hint" in errors(at)
        else:
            assert not at.error and any("M =" in f and "0.8" in f for f in formulas(at))
    else:
        assert box.value == DEFAULT_MATRIX_TEXT
        assert not at.error and interior_max(at) <= 2  # the default matrix, warped
        assert len(notices) == 1 and "`warp.matrix_text`" in notices[0]
        assert "warp.matrix_text" not in at.query_params


def test_controls_keep_their_values_across_a_page_switch(page):
    """persist_state keeps every section's controls through a visit to another page,
    including those a choice hides (the other ways to define M)."""
    at = page
    for kind, key, value in [
        ("slider", "warp.angle", -60.0),
        ("slider", "warp.tx", 15),
        ("toggle", "warp.notes", True),
        ("selectbox", "warp.padding", "border"),
        ("radio", "warp.definition", "Matrix entries"),
        ("text_area", "warp.matrix_text", "1 0 3\n0 1 4"),
        ("radio", "warp.definition", "Point pairs"),
        ("number_input", "warp.p0_dx", 40.0),
        ("radio", "warp.size_mode", "Custom"),
        ("number_input", "warp.out_w", 97),
    ]:
        set_widget(at, kind, key, value)
    before = computed(at)
    switch_to(at, "home").run()
    assert not at.exception
    switch_to(at, "warp").run()
    assert not at.exception, at.exception
    assert at.radio(key="warp.definition").value == "Point pairs"
    assert at.number_input(key="warp.p0_dx").value == 40.0
    assert at.number_input(key="warp.out_w").value == 97
    assert at.toggle(key="warp.notes").value is True
    assert at.selectbox(key="warp.padding").value == "border"
    assert computed(at) == before
    set_widget(at, "radio", "warp.definition", "Matrix entries")
    assert at.text_area(key="warp.matrix_text").value == "1 0 3\n0 1 4"
    set_widget(at, "radio", "warp.definition", "Sliders")
    assert at.slider(key="warp.angle").value == -60.0
    assert at.slider(key="warp.tx").value == 15
    assert not at.warning or "notes' affine2theta" in at.warning[0].value


def test_longest_link_fits(page):
    """Every bound control off its default and the longest matrix text the page takes, each of
    its characters one that URL-encodes to three: the link is still under 2,000 characters."""
    keys = set()
    for definition in ("Sliders", "Matrix entries", "Point pairs"):
        set_widget(page, "radio", "warp.definition", definition)
        for kind in ("slider", "selectbox", "radio", "toggle", "number_input", "text_area"):
            keys |= {w.key for w in getattr(page, kind) if w.key}
        if definition == "Matrix entries":
            max_chars = page.text_area(key="warp.matrix_text").proto.max_chars
    assert {"warp.matrix_text", "warp.p2_dy", "warp.cy", "sidebar.device"} <= keys
    assert 0 < max_chars <= 1000  # a 10,000-character paste is not a matrix
    params = {key: "-1234.5678" for key in keys}
    params["warp.definition"] = "Matrix entries"
    params["warp.matrix_text"] = "[" * max_chars
    assert len(f"http://localhost:8501/warp?{urlencode(params)}") < 2000


# The ready-made lessons for this page: query string -> the text that proves it.
LESSONS = {
    # The notes' affine2theta is half a pixel off with align_corners=False: 0.36 px at 30°, ×1.3.
    "warp.notes=true&warp.scale=1.3": "|shift| = 0.360 px",
    # With align_corners=True the same 2/W rescales about the top-left corner instead.
    "warp.notes=true&warp.align_corners=true": "misplaced by 0.372 px on average",
    # Rows proportional: the 2x2 part has determinant 0, so no inverse, no warp.
    "warp.definition=Matrix+entries&warp.matrix_text=1+2+0%0A2+4+0": "has determinant 0",
}


@pytest.mark.parametrize("query", list(LESSONS))
def test_lesson_link_shows_its_point(query):
    at = open_cold(dict(parse_qsl(query)))
    assert not at.toast
    shown = " ".join([errors(at), *(w.value for w in at.warning)])
    assert LESSONS[query] in shown


# ------------------------------------------------------------------------------------------
# The page in Chinese (the values and the computation stay the same)
# ------------------------------------------------------------------------------------------


def test_chinese_page_translates_labels_but_keeps_values():
    at = open_cold({"lang": "zh", "warp.definition": "Matrix entries"})
    assert at.title[0].value == "仿射变换演练场"
    radio = at.radio(key="warp.definition")
    assert radio.value == "Matrix entries" and "矩阵元素" in radio.options
    assert at.toggle(key="warp.notes").label == "笔记的 theta"
    assert {"内部最大 |Δ|", "内部平均 |Δ|"} <= {m.label for m in at.metric}
    assert any("size 是输出网格的分辨率" in c.value for c in at.caption)
    at = conftest.open_expanders(at, "warp.size_notes_box")  # the notes, drawn when opened
    texts = " ".join(t.value for t in at.text)
    assert "4x4 的输出就是左上角的裁剪 img[:4, :4]" in texts


def test_chinese_lesson_links_explain_in_chinese():
    """The lessons' messages, from core's T texts and the page's templates, in Chinese."""
    singular = open_cold(
        {"lang": "zh", "warp.definition": "Matrix entries", "warp.matrix_text": "1 2 0\n2 4 0"}
    )
    assert "行列式为 0" in errors(singular) and "提示" in errors(singular)
    notes = open_cold({"lang": "zh", "warp.notes": "true", "warp.scale": "1.3"})
    (warning,) = [w.value for w in notes.warning]
    assert "|偏移| = 0.360 px" in warning and "正在使用笔记中的 affine2theta" in warning
