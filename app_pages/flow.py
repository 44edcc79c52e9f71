"""Flow hole filling: optical flow with NaN holes, filled by multi-scale masked means."""

from __future__ import annotations

import hashlib

import numpy as np
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from core.flowfill import (
    MAX_SIDE,
    NOTES_CLAIM_REF,
    NOTES_CLAIM_ZH,
    NOTES_NUMPY_MAX_HOLES,
    NOTES_NUMPY_METHOD,
    NOTES_TORCH_METHOD,
    SYNTHETIC_FIELDS,
    FlowCase,
    FlowSpec,
    build_flow,
    case_from_flow,
    case_from_images,
    compare_methods,
    decode_image,
    flow_to_rgb,
    load_flow_file,
    notes_callouts,
    notes_numpy_snippet_for,
    notes_speed_claim,
    notes_window_sizes,
    snippet_for,
    window_sizes,
)
from core.notes import NotesCallout
from ui.code import show_code
from ui.notes_callout import notes_callout
from ui.settings import current_settings
from ui.state import keep_widget_state

IMAGE_CAP = 1024  # uploaded image pairs: Farneback + every method must stay interactive
SOURCES = {
    "synthetic": "Synthetic field (ground truth)",
    "stereo": "Real: motorcycle stereo pair (Farneback)",
    "affine": "Real: image + known affine warp (Farneback, ground truth)",
    "upload_flow": "Upload a flow file (.flo / .npy)",
    "upload_pair": "Upload two images (Farneback)",
}
MASKS = {
    "random": "Random pixels",
    "blobs": "Blobs",
    "stripes": "Stripes",
    "border": "Border band",
    "fb": "Forward-backward check",
}
SIZES = {"240x320": (240, 320), "480x640": (480, 640), "720x1280": (720, 1280)}
WINDOW_CHOICES = [3, 5, 9, 17, 33, 65, 129]
HEAT_MAX_SIDE = 640  # a full 720x1280 float heat map is ~12 MB of plotly JSON per chart and rerun

st.title("Flow hole filling")
st.caption(
    "What you will see: optical flow with NaN holes, filled by the average over window sizes "
    "3, 5, 9, ... of masked box means -- compared with inpainting and nearest-valid fill, "
    "for accuracy and speed."
)
settings = current_settings()
# Value widgets (not the uploads) come back as the user left them after a visit to another page.
keep_widget_state(
    f"flow.{name}"
    for name in (
        "source", "field", "size", "noise", "mask", "fraction", "hole_size", "fb_threshold",
        "max_window", "per_scale", "notes", "notes_numpy", "epe_method",
    )
)  # fmt: skip


@st.cache_data(max_entries=8, show_spinner=False)
def _built_case(spec: FlowSpec) -> FlowCase:
    return build_flow(spec)


@st.cache_resource(show_spinner=False)
def _callouts() -> list[NotesCallout]:
    """The notes' claims about this method, each checked by a live run (once per process)."""
    return notes_callouts()


@st.cache_data(max_entries=4, show_spinner=False)
def _uploaded_flow(name: str, data: bytes) -> np.ndarray:
    return load_flow_file(name, data)


def _image_fig(img: np.ndarray, title: str) -> go.Figure:
    fig = px.imshow(img, title=title)
    fig.update_layout(margin=dict(l=0, r=0, t=30, b=0), height=300)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    return fig


def _heat_step(shape: tuple[int, ...]) -> int:
    """Stride that keeps a heat map at most HEAT_MAX_SIDE pixels a side (1 = full resolution)."""
    return -(-max(shape[:2]) // HEAT_MAX_SIDE)


def _heat_fig(z: np.ndarray, title: str, colorbar: str, **kw: object) -> go.Figure:
    step = _heat_step(z.shape)
    z = np.ascontiguousarray(z[::step, ::step], dtype=np.float32)
    fig = px.imshow(z, title=title, color_continuous_scale="viridis", **kw)
    fig.update_layout(margin=dict(l=0, r=0, t=30, b=0), height=300,
                      coloraxis_colorbar=dict(title=colorbar))
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    return fig


def _fail(message: str, hint: str) -> None:
    st.error(f"{message}\n\n**What to change:** {hint}")
    st.stop()


# ---------------------------------------------------------------- controls
src_col, mask_col, win_col = st.columns(3)
with src_col:
    source = st.selectbox("Flow source", list(SOURCES), format_func=SOURCES.get,
                          key="flow.source")
    field, size, noise = "rotation", "240x320", 0.0
    upload = None
    pair: tuple[object, object] = (None, None)
    if source == "synthetic":
        field = st.selectbox("Motion field", SYNTHETIC_FIELDS, index=1, key="flow.field")
        size = st.selectbox("Size (H x W)", list(SIZES), key="flow.size")
        noise = st.slider("Noise (px std)", 0.0, 1.0, 0.2, 0.05, key="flow.noise",
                          help="Gaussian noise on the observed flow; the ground truth stays clean.")
    elif source == "upload_flow":
        upload = st.file_uploader(
            "Flow file", type=["flo", "npy"], key="flow.file",
            help=f"Middlebury .flo or a .npy of shape (H, W, 2) float, at most {MAX_SIDE} px "
            "a side. NaN in the file are its holes; a file without NaN gets the mask below.",
        )
    elif source == "upload_pair":
        pair = (
            st.file_uploader("First image", type=["png", "jpg", "jpeg", "bmp"],
                             key="flow.image1"),
            st.file_uploader("Second image", type=["png", "jpg", "jpeg", "bmp"],
                             key="flow.image2"),
        )
with mask_col:
    image_source = source in ("stereo", "affine", "upload_pair")
    mask_options = list(MASKS) if image_source else [m for m in MASKS if m != "fb"]
    mask = st.selectbox("Hole mask", mask_options, format_func=MASKS.get, key="flow.mask",
                        index=mask_options.index("fb") if image_source else 0)
    fraction, hole_size, fb_threshold = 0.3, 12, 1.0
    if mask in ("random", "blobs", "stripes"):
        fraction = st.slider("Hole fraction", 0.05, 1.0, 0.3, 0.05, key="flow.fraction")
    if mask in ("blobs", "stripes", "border"):
        hole_size = st.slider("Blob radius / stripe or band width (px)", 1, 80, 12,
                              key="flow.hole_size")
    if mask == "fb":
        fb_threshold = st.slider("Round-trip threshold (px)", 0.1, 5.0, 1.0, 0.1,
                                 key="flow.fb_threshold",
                                 help="Hole where flow there and back misses by more than this.")
with win_col:
    max_window = st.select_slider("max_window", WINDOW_CHOICES, value=33, key="flow.max_window",
                                  help="Largest window; the sizes are 2**k + 1 up to it.")
    windows = window_sizes(int(max_window))
    st.markdown("**Windows in use:** " + ", ".join(f"`{k}x{k}`" for k in windows))
    per_scale = st.toggle("Show what each scale contributes", key="flow.per_scale")
    with_notes = st.toggle("Run the notes' avg_pool2d reference (slow on CPU)", value=True,
                           key="flow.notes")
    with_numpy = st.toggle(
        "Run the notes' original NumPy loop (one hole at a time)", key="flow.notes_numpy",
        help=f"The notes' first version (000:79): a Python loop over the hole pixels, a few "
        f"hundred microseconds each, so it runs only up to {NOTES_NUMPY_MAX_HOLES:,} hole "
        "pixels.",
    )

h, w = SIZES[size]
spec = FlowSpec(source=source if source in ("synthetic", "stereo", "affine") else "synthetic",
                field=field, height=h, width=w, noise=noise, mask=mask, fraction=fraction,
                hole_size=hole_size, fb_threshold=fb_threshold, seed=settings.seed % 2**31)

# ---------------------------------------------------------------- build the case
case: FlowCase | None = None
try:
    with st.spinner("Preparing the flow (Farneback runs both ways for real images)..."):
        if source in ("synthetic", "stereo", "affine"):
            case = _built_case(spec)
        elif source == "upload_flow":
            if upload is None:
                st.info("Upload a .flo or .npy flow file to continue.")
                st.stop()
            case = case_from_flow(_uploaded_flow(upload.name, upload.getvalue()), spec)
        else:
            if pair[0] is None or pair[1] is None:
                st.info("Upload two images of the same size to compute their flow.")
                st.stop()
            img1 = decode_image(pair[0].getvalue(), "the first image", max_side=IMAGE_CAP)
            img2 = decode_image(pair[1].getvalue(), "the second image", max_side=IMAGE_CAP)
            case = case_from_images(img1, img2, spec)
except ValueError as exc:
    _fail(str(exc), "pick another file or source, or change the mask settings.")

assert case is not None
# Every method (the slow notes' reference included) runs only when an input changes: a rerun
# from a display-only widget (which EPE map to show) reuses this session's last comparison.
if source == "upload_flow":
    origin: tuple[object, ...] = ("file", upload.name, hashlib.sha256(upload.getvalue()).digest())
elif source == "upload_pair":
    origin = ("pair", *(hashlib.sha256(f.getvalue()).digest() for f in pair))
else:
    origin = ("built-in",)
hole_pixels = int(np.count_nonzero(case.mask))
numpy_skipped = with_numpy and hole_pixels > NOTES_NUMPY_MAX_HOLES
run_numpy = with_numpy and not numpy_skipped
if numpy_skipped:
    st.warning(
        f"The notes' NumPy loop is skipped: it visits one hole pixel at a time, and this flow "
        f"has {hole_pixels:,} hole pixels, more than the page's limit of "
        f"{NOTES_NUMPY_MAX_HOLES:,}. Pick the 240x320 size or a lower hole fraction."
    )
run_key = (origin, spec, int(max_window), settings.device, with_notes, run_numpy, per_scale)
last = st.session_state.get("flow.last_comparison")
if last is not None and last[0] == run_key:
    comp = last[1]
else:
    bar = None
    if run_numpy:
        bar = st.progress(0.0, text="The notes' NumPy loop: starting...")

    def _report(done: int, total: int) -> None:
        if bar is not None:
            bar.progress(done / max(total, 1),
                         text=f"The notes' NumPy loop: {done:,} of {total:,} hole pixels")

    try:
        with st.spinner(f"Filling with every method on {settings.device}..."):
            comp = compare_methods(case, max_window=int(max_window), device=settings.device,
                                   with_notes=with_notes, with_notes_numpy=run_numpy,
                                   with_per_scale=per_scale, progress=_report)
    except ValueError as exc:
        _fail(str(exc), "lower the hole fraction or the band width, or load another flow.")
    if bar is not None:
        bar.empty()
    st.session_state["flow.last_comparison"] = (run_key, comp)

fill = comp.fill
main = comp.methods[0]
hole_px = comp.hole_pixels
total_px = case.mask.size

# ---------------------------------------------------------------- pictures
st.subheader("Flow, holes and the fill", anchor=False)
pictures = [case.flow, main.filled]
if case.reference is not None:
    pictures.append(case.reference)
rgb = flow_to_rgb(*pictures)
c1, c2, c3 = st.columns(3)
c1.plotly_chart(_image_fig(rgb[0], "Flow with holes (black)"), width="stretch")
c2.plotly_chart(_image_fig(np.repeat(case.mask[..., None], 3, axis=2).astype(np.uint8) * 255,
                          "NaN mask (white = hole)"),
                width="stretch")
c3.plotly_chart(_image_fig(rgb[1], "Filled: gradual mean"), width="stretch")
st.caption(
    f"{case.description}: {total_px:,} pixels, {hole_px:,} holes ({hole_px / total_px:.0%}). "
    "Colours: torchvision's flow_to_image, hue = direction, saturation = speed, one shared scale."
)
heat_step = _heat_step(case.mask.shape)
if heat_step > 1:
    nth = {2: "2nd", 3: "3rd"}.get(heat_step, f"{heat_step}th")
    st.caption(f"The heat maps below are drawn from every {nth} pixel in each direction, to "
               "keep the page responsive at this size.")
if case.reference is not None:
    with st.expander(f"Reference flow ({case.reference_kind})"):
        st.plotly_chart(_image_fig(rgb[2], case.reference_kind), width="stretch")

# ---------------------------------------------------------------- windows
st.subheader("Window sizes", anchor=False)
used = fill.scales_used[..., 0].astype(float)
used[~case.mask] = np.nan
s1, s2 = st.columns(2)
s1.plotly_chart(_heat_fig(used, "How many scales contributed (holes only)", "scales",
                          zmin=0, zmax=len(windows)), width="stretch")
hist = np.bincount(fill.scales_used[..., 0][case.mask], minlength=len(windows) + 1)
bar = px.bar(x=[str(i) for i in range(len(windows) + 1)], y=hist,
             labels={"x": "scales that had a valid sample", "y": "hole pixels"},
             title="Hole pixels by number of contributing scales")
bar.update_layout(margin=dict(l=0, r=0, t=30, b=0), height=300)
s2.plotly_chart(bar, width="stretch")
all_scales = int(hist[len(windows)])
st.markdown(
    f"With `max_window={max_window}` the fill averages {len(windows)} window means "
    f"({', '.join(map(str, windows))}). {all_scales:,} of {hole_px:,} hole pixels had a valid "
    f"sample at every scale; the others sit deep inside a hole, so only the larger windows "
    f"reach valid flow. **{fill.unfilled:,} hole values stayed NaN** (no valid sample within "
    f"{windows[-1]}x{windows[-1]})"
    + (" -- raise max_window to reach them." if fill.unfilled else ".")
)
if fill.unfilled:
    st.warning(f"{fill.unfilled:,} hole values are still NaN: no valid sample lies within the "
               f"largest window ({windows[-1]}x{windows[-1]}). Raise max_window.")
if per_scale and comp.per_scale:
    st.markdown("Each scale's masked mean on its own (holes only; black = that window saw no "
                "valid sample). The fill is the average of the non-black ones.")
    per = []
    for k in windows:
        m = comp.per_scale[k].copy()
        m[~case.mask] = np.nan
        per.append(m)
    per_rgb = flow_to_rgb(*per, main.filled)
    tabs = st.tabs([f"{k}x{k}" for k in windows])
    for tab, k, img in zip(tabs, windows, per_rgb[:-1], strict=True):
        tab.plotly_chart(_image_fig(img, f"window {k}x{k}"), width="stretch")

# ---------------------------------------------------------------- accuracy and timing
st.subheader("Accuracy and speed", anchor=False)
rows = [
    {
        "method": m.name,
        "mean EPE on holes (px)": m.mean_epe,
        "median EPE on holes (px)": m.median_epe,
        "time (ms)": round(m.ms, 2),
        "device": m.device,
        "NaN left": m.unfilled,
        "max |diff| vs notes": m.max_diff_vs_notes,
    }
    for m in comp.methods
]
st.dataframe(rows, width="stretch", hide_index=True)
if case.reference is None:
    st.info("This flow brought its own holes, so there is nothing to compare the fill with: "
            "upload a flow without NaN to get EPE numbers against the pre-mask flow.")
else:
    names = [m.name for m in comp.methods]
    pick = st.selectbox("EPE map of", names, key="flow.epe_method")
    chosen = comp.methods[names.index(pick)]
    epe = chosen.epe.copy()
    epe[~case.mask] = np.nan
    a1, a2 = st.columns(2)
    a1.plotly_chart(_heat_fig(epe, f"Endpoint error vs {case.reference_kind} (holes)", "px"),
                    width="stretch")
    timing = px.bar(x=[m.ms for m in comp.methods], y=names, orientation="h", log_x=True,
                    labels={"x": "ms (log scale)", "y": ""}, title="Time per method")
    timing.update_layout(margin=dict(l=0, r=0, t=30, b=0), height=300)
    a2.plotly_chart(timing, width="stretch")
    best = min((m for m in comp.methods if np.isfinite(m.mean_epe)),
               key=lambda m: m.mean_epe, default=None)
    near = comp.methods[-1]
    if best is not None:
        st.markdown(
            f"Against the {case.reference_kind}, the gradual mean's mean EPE on the holes is "
            f"**{main.mean_epe:.3f} px**, nearest-valid fill's is **{near.mean_epe:.3f} px**; "
            f"the most accurate here is *{best.name}*. Averaging many valid neighbours cancels "
            "noise, and on linear motion the mean of a symmetric window is exact; at motion "
            "boundaries (try *piecewise*) large windows mix both motions."
        )
notes_row = next((m for m in comp.methods if m.name == NOTES_TORCH_METHOD), None)
if notes_row is not None:
    fast = min(comp.methods[:2], key=lambda m: m.ms)
    st.markdown(
        f"Speed on `{settings.device}`: the notes' avg_pool2d version took "
        f"{notes_row.ms:.1f} ms, the fastest backend ({fast.name}) {fast.ms:.1f} ms -- "
        f"**{notes_row.ms / max(fast.ms, 1e-6):.0f}x** faster, with a largest difference of "
        f"{max(m.max_diff_vs_notes or 0.0 for m in comp.methods[:2]):.1e}. avg_pool2d adds up "
        "k*k values per pixel; a box filter keeps a running sum (O(1) per pixel), and the fast "
        "backends do the divisions only at the holes."
    )
    with st.container(border=True, key="flow.three_ms"):
        claim, measured = st.columns(2)
        claim.markdown(f"**The notes say** (notes {NOTES_CLAIM_REF}, after the NumPy loop)")
        claim.text(NOTES_CLAIM_ZH)
        claim.text("In English: vectorised with PyTorch, it gets to about 3 ms.")
        measured.markdown("**Measured here just now**")
        measured.metric("avg_pool2d version, this flow", f"{notes_row.ms:.1f} ms",
                        help="The notes' claim is 3 ms.")
        measured.text(notes_speed_claim(notes_row.ms, settings.device, case.flow.shape))
else:
    st.caption(f"Switch on the notes' avg_pool2d reference to time it against the notes' "
               f"\"about 3 ms\" (notes {NOTES_CLAIM_REF}).")

st.subheader("The notes' first version: a per-pixel NumPy loop", anchor=False)
numpy_row = next((m for m in comp.methods if m.name == NOTES_NUMPY_METHOD), None)
sizes = notes_window_sizes(int(max_window) - 1)
st.markdown(
    f"Before vectorising, the notes (000:77-79) filled each hole in turn with the mean of its "
    f"window means for windows {', '.join(map(str, sizes))} (here `max_window_size = "
    f"{int(max_window) - 1}`, beside this page's {', '.join(map(str, windows))}). Their code "
    "differs from the vectorised method in four ways: the window `(cx - w//2, cy - w//2, "
    "cx + w, cy + w)` is **not centred** (it reaches w - 1 pixels right and down, w/2 left "
    "and up), `crop_rect` pads outside the image with **zeros that count as flow**, every "
    "fill is written back at once so **later holes average earlier fills**, and an early "
    "`break` after a window with no valid sample would leave the hole NaN (the in-place "
    "filling makes that unreachable with the default mask: the row above a hole is always "
    "the zero border or already filled)."
)
if numpy_row is not None and case.reference is not None:
    vectorised = notes_row or main  # same method; the fast backend when the reference is off
    ratio = numpy_row.mean_epe / max(vectorised.mean_epe, 1e-12)
    per_hole_us = numpy_row.ms * 1e3 / max(hole_px, 1)
    st.markdown(
        f"On this flow the notes' NumPy loop has a mean EPE on the holes of "
        f"**{numpy_row.mean_epe:.3f} px**, against **{vectorised.mean_epe:.3f} px** for the "
        f"vectorised method ({vectorised.name}): **{ratio:.1f}x** the error. It took "
        f"**{numpy_row.ms / 1e3:.2f} s** on the CPU ({per_hole_us:.0f} us per hole pixel). "
        "The time is for the notes' loop with one change that leaves every bit of the output "
        "alone: `crop_rect` pads the whole image for every window of every hole, which this "
        "loop skips by building only the window; the code as printed is slower still."
    )
elif numpy_row is not None:
    differs = (f"; its largest difference from the avg_pool2d version on this flow is "
               f"{numpy_row.max_diff_vs_notes:.2f} px" if numpy_row.max_diff_vs_notes else "")
    st.markdown(
        f"The notes' NumPy loop took **{numpy_row.ms / 1e3:.2f} s** on the CPU{differs}. This "
        "flow has no reference, so neither can be scored."
    )
elif not numpy_skipped:
    st.info(
        "Switch on *Run the notes' original NumPy loop* above to add it to the table, with "
        f"its error and time (up to {NOTES_NUMPY_MAX_HOLES:,} hole pixels; it shows its "
        "progress while it runs)."
    )
show_code(
    notes_numpy_snippet_for(
        spec if source in ("synthetic", "stereo", "affine") else None,
        int(max_window),
        upload_name=upload.name if upload is not None else None,
    ),
    title="Run the notes' NumPy loop beside the avg_pool2d version in Python",
)
with st.expander("The formula"):
    st.latex(
        r"\hat x_c(p)=\frac{1}{|S(p)|}\sum_{k\in S(p)}"
        r"\frac{\sum_{q\in W_k(p)} m_c(q)\,x_c(q)}{\sum_{q\in W_k(p)} m_c(q)},\quad "
        r"S(p)=\{k : \textstyle\sum_{W_k(p)} m_c>0\}"
    )
    st.markdown("`m_c` is 1 where channel c is valid; windows `W_k` are k x k, zero-padded at "
                "the borders; only NaN values are replaced.")

st.subheader("What the notes say, checked live", anchor=False)
for callout in _callouts():
    notes_callout(callout)

show_code(
    snippet_for(
        spec if source in ("synthetic", "stereo", "affine") else None,
        int(max_window),
        upload_name=upload.name if upload is not None else None,
    )
)
