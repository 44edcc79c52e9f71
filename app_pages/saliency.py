"""Saliency: which pixels drive a real ImageNet classifier's decision, with a sanity check."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

from core import models as M
from core import saliency as S
from core.notes import cite
from ui.code import show_code
from ui.image_input import image_input
from ui.notes_callout import notes_callout, notes_citation
from ui.settings import current_settings
from ui.state import keep_widget_state

st.title("Saliency: which pixels drive the decision?")
st.caption(
    "Pick an image and a classifier: the gradient of the class score with respect to every "
    "input pixel is turned into a heat map, and a sanity check shows whether it explains the model."
)

settings = current_settings()
# Value widgets (not buttons, uploads or tabs) come back as the user left them after a visit
# to another page, or after switching the method away and back.
keep_widget_state(
    f"saliency.{name}"
    for name in (
        "model_source", "model", "architecture", "target_mode", "target_class", "recipe", "method",
        "objective", "reduce", "n", "sigma", "steps", "baseline", "percentile", "alpha",
        "colormap", "sanity_layers",
    )
)  # fmt: skip


def _warmed(loaded: M.LoadedModel) -> tuple[M.LoadedModel, float | None]:
    """One untimed gradient pass right after loading, so the page's Forward/Backward times do not
    include one-time lazy initialisation. Returns the model and the warm-up time (None: failed;
    the real computation then reports the problem)."""
    try:
        x = torch.zeros(1, 3, loaded.preprocessing.crop, loaded.preprocessing.crop)
        return loaded, S.warm_up(loaded.model, x.to(loaded.device))
    except (ValueError, RuntimeError):
        return loaded, None


@st.cache_resource(show_spinner=False, max_entries=4)
def _registry_model(
    name: str, device: str, allow_download: bool
) -> tuple[M.LoadedModel, float | None]:
    # Shared by all sessions: the model is in eval mode with frozen parameters and every core
    # function works on per-call input tensors (or a deep copy), so nothing here is mutated.
    return _warmed(M.load_model(name, device, allow_download=allow_download))


@st.cache_resource(show_spinner=False, max_entries=2)
def _custom_model(
    digest: str, filename: str, architecture: str, device: str, _data: bytes
) -> tuple[M.LoadedModel, float | None]:
    return _warmed(
        M.load_custom_model(_data, filename=filename, architecture=architecture, device=device)
    )


@st.cache_resource(show_spinner=False)
def _callouts() -> list:
    # Live runs of the notes checks, once per process (NotesCallout is frozen).
    return S.notes_callouts()


def _fail(message: str, hint: str) -> None:
    st.error(f"{message}\n\n**What to change:** {hint}", icon=":material/error:")
    st.stop()


# ---------------------------------------------------------------- inputs: image and model
col_image, col_model = st.columns(2)
with col_image:
    image = image_input("saliency.image")
with col_model:
    source = st.radio(
        "Classifier",
        ["From the registry", "Upload your own"],
        horizontal=True,
        key="saliency.model_source",
    )
    loaded: M.LoadedModel | None = None
    warm_ms: float | None = None
    if source == "From the registry":
        entries = {entry.spec.name: entry for entry in M.list_models()}
        name = st.selectbox(
            "Model",
            list(entries),
            format_func=lambda n: (
                entries[n].spec.title + ("" if entries[n].available else " (unavailable offline)")
            ),
            key="saliency.model",
            help="EfficientNet-Lite0 ships with a pip package and always works offline. "
            "torchvision models need their weight file in the local torch hub cache.",
        )
        entry = entries[name]
        if not entry.available:
            st.warning(
                f"{entry.spec.title} is unavailable: {entry.reason}", icon=":material/block:"
            )
            if entry.weights_path is not None:
                st.caption("Put the weight file exactly here:")
                st.code(str(entry.weights_path), language=None)
            if st.button("Try to download the weights", key="saliency.download_weights"):
                with st.spinner(f"Downloading {entry.spec.title} ..."):
                    try:
                        loaded, warm_ms = _registry_model(name, settings.device, True)
                    except ValueError as error:
                        st.error(str(error))
            if loaded is None:
                st.info("Choose EfficientNet-Lite0 to continue offline.")
                st.stop()
        else:
            with st.spinner(f"Loading {entry.spec.title} ..."):
                try:
                    loaded, warm_ms = _registry_model(name, settings.device, False)
                except ValueError as error:
                    _fail(str(error), "choose EfficientNet-Lite0, which works offline.")
    else:
        architecture = st.selectbox(
            "Architecture (for a state_dict) / preprocessing (for TorchScript)",
            list(M.CUSTOM_ARCHITECTURES),
            index=list(M.CUSTOM_ARCHITECTURES).index("resnet18"),
            key="saliency.architecture",
            help="A state_dict is loaded into this architecture with strict key checking. "
            "A TorchScript file brings its own architecture; its input is preprocessed the way "
            "this architecture expects.",
        )
        upload = st.file_uploader(
            "TorchScript (torch.jit.save) or state_dict (torch.save) file",
            key="saliency.model_upload",
            help="Loaded safely with torch.jit.load or torch.load(weights_only=True): "
            "no pickled code is executed.",
        )
        if upload is None:
            st.info("Upload a model file to continue, or use the registry.")
            st.stop()
        data = upload.getvalue()
        with st.spinner(f"Loading {upload.name} ..."):
            try:
                loaded, warm_ms = _custom_model(
                    hashlib.sha256(data).hexdigest(), upload.name, architecture,
                    settings.device, data,
                )  # fmt: skip
            except ValueError as error:
                _fail(
                    str(error),
                    "upload a TorchScript file, or a state_dict saved from the architecture "
                    "chosen above with a 1000-class head.",
                )
    assert loaded is not None
    st.caption(f"Weights: {loaded.source} · device `{loaded.device}`")

if image is None:
    st.info("Choose a sample or upload an image to see its saliency map.")
    st.stop()

image, notice = M.ensure_min_side(image)
if notice:
    st.warning(notice, icon=":material/zoom_in:")

with st.expander("Preprocessing: what the model actually sees"):
    st.markdown(f"**{loaded.name}**: {loaded.describe_preprocessing()}.")
    st.caption("All maps below live on this resized and cropped view; the overlay is drawn on it.")

try:
    x = loaded.preprocess(image)
    view = loaded.model_view(image)
    with torch.no_grad():
        logits = loaded.model(x)
    top5 = M.top_k(logits, loaded.categories, 5)
except (ValueError, RuntimeError) as error:
    _fail(f"The model could not classify this image: {error}", "try another image or model.")
num_classes = int(logits.shape[1])

# ---------------------------------------------------------------- predictions and target
col_pred, col_target = st.columns(2)
with col_pred:
    st.subheader("Top-5 predictions", anchor=False)
    st.dataframe(
        pd.DataFrame(
            {
                "class": [index for index, _, _ in top5],
                "name": [label for _, label, _ in top5],
                "probability": [round(p, 4) for _, _, p in top5],
            }
        ),
        hide_index=True,
        width="stretch",
        key="saliency.top5",
    )
with col_target:
    st.subheader("Explain which class?", anchor=False)
    target_mode = st.radio(
        "Target", ["Predicted class", "Any class"], horizontal=True, key="saliency.target_mode"
    )
    if target_mode == "Predicted class":
        target = top5[0][0]
    else:
        target = st.selectbox(
            "Class (type to search)",
            list(range(num_classes)),
            index=top5[0][0],
            format_func=lambda i: f"{i}: {loaded.categories[i]}",
            key="saliency.target_class",
        )
    st.caption(f"Explaining class {target}: **{loaded.categories[target]}**")

    recipe = st.radio(
        "Recipe",
        list(S.RECIPES),
        format_func=S.RECIPES.get,
        key="saliency.recipe",
        help="The notes' recipe is the code in the notes (000:2), reproduced exactly: "
        "vanilla gradient of the loss, sum of |grad| over R, G, B, then "
        "cvglue.scale_min_max(s, 0, 255, percentile=99) and np.uint8.",
    )
    n, sigma, steps, baseline = 25, 0.15, 32, "black"
    if recipe == "notes":
        method, objective, reduce = "vanilla", "loss", "sum"
        st.caption(
            f"The notes' recipe ({cite(S.NOTES_RECIPE_REF)}): loss.backward() on the "
            "cross-entropy for the explained class (the notes leave target_loss open), "
            "sum of |x.grad| over channels, P1..P99 stretched to 0..255 and clipped, "
            "np.uint8 truncation. Method, objective and scaling are fixed to theirs."
        )
    else:
        st.caption(
            "The default. It explains the class score itself and never divides by zero; "
            "the tab 'The notes' recipe' measures how far the notes' recipe is from it."
        )
        method = st.selectbox(
            "Method",
            list(S.METHODS),
            format_func=S.METHODS.get,
            key="saliency.method",
        )
        c1, c2 = st.columns(2)
        objective = c1.radio(
            "Objective",
            list(S.OBJECTIVES),
            format_func={
                "logit": "class score (Simonyan)",
                "loss": "cross-entropy loss (notes)",
            }.get,
            key="saliency.objective",
        )
        reduce = c2.radio(
            "Channel reduction",
            list(S.REDUCTIONS),
            format_func={"sum": "sum |grad| (notes)", "max": "max |grad| (Simonyan)"}.get,
            key="saliency.reduce",
        )
    if method == "smoothgrad":
        n = st.slider("Noisy samples n", 1, 50, 25, key="saliency.n")
        sigma = st.slider(
            "Noise sigma (fraction of the input range)", 0.0, 0.5, 0.15, 0.01,
            key="saliency.sigma",
        )  # fmt: skip
    elif method == "integrated_gradients":
        steps = st.slider("Steps on the path", 4, 128, 32, key="saliency.steps")
        baseline = st.radio("Baseline", list(S.BASELINES), horizontal=True, key="saliency.baseline")

c1, c2, c3 = st.columns(3)
if recipe == "notes":
    percentile = S.NOTES_PERCENTILE
    c1.caption(f"Scaling: P1..P{percentile:g} to 0..255 (fixed by the notes' recipe)")
else:
    percentile = c1.slider(
        "Saturate at percentile", 50.0, 100.0, 99.0, 0.5, key="saliency.percentile"
    )
alpha = c2.slider("Overlay alpha", 0.0, 1.0, 0.5, 0.05, key="saliency.alpha")
colormap = c3.selectbox("Colormap", list(S.COLORMAPS), key="saliency.colormap")

# ---------------------------------------------------------------- compute (cached per session)
image_digest = hashlib.sha256(image.tobytes() + str(image.shape).encode()).hexdigest()
params = dict(
    objective=objective,
    reduce=reduce,
    n=int(n),
    sigma=float(sigma),
    steps=int(steps),
    baseline=baseline,
    black_level=loaded.black_level(),
    seed=settings.seed,
)
cache_key = (
    loaded.source, loaded.device, image_digest, int(target), method, objective, reduce,
    int(n), float(sigma), int(steps), baseline, settings.seed,
)  # fmt: skip
cached = st.session_state.get("saliency._result")
if cached is not None and cached[0] == cache_key:
    result: S.SaliencyResult = cached[1]
else:
    bar = st.progress(0.0, text=f"Computing {S.METHODS[method]} ...")
    try:
        result = S.compute_saliency(
            loaded.model,
            x,
            int(target),
            method,
            progress=lambda f, text: bar.progress(min(max(f, 0.0), 1.0), text=text),
            **params,
        )
    except (ValueError, RuntimeError) as error:
        bar.empty()
        _fail(str(error), "change the target class, the method or the objective.")
    bar.empty()
    st.session_state["saliency._result"] = (cache_key, result)

comparison = S.compare_scalings(result.saliency, S.NOTES_PERCENTILE)
if recipe == "notes" and comparison.notes is not None:
    saliency_u8 = comparison.notes
    map_caption = f"The notes' recipe ({cite(S.NOTES_RECIPE_REF)}): loss, sum, P1..P99, uint8"
else:
    if recipe == "notes":
        st.warning(
            f"{comparison.notes_error}. The map below uses the app's scaling instead.",
            icon=":material/warning:",
        )
    saliency_u8 = S.scale_percentile(result.saliency, percentile)
    map_caption = f"{S.METHODS[method]}, {objective}, {reduce}"
heat = S.colorize(saliency_u8, colormap)
picture = S.overlay(view, saliency_u8, alpha, colormap)

tab_map, tab_sanity, tab_notes = st.tabs(
    ["Saliency map", "Sanity check", "The notes' recipe"], key="saliency.tab"
)
with tab_map:
    c1, c2, c3 = st.columns(3)
    c1.image(view, caption="What the model sees", width="stretch")
    c2.image(heat, caption=map_caption, width="stretch")
    c3.image(picture, caption=f"Overlay (alpha {alpha:.2f})", width="stretch")
    d1, d2, _ = st.columns(3)
    d1.download_button(
        "Download map (PNG)",
        S.png_bytes(saliency_u8),
        file_name=f"saliency_{method}_{target}.png",
        mime="image/png",
        key="saliency.download_map",
    )
    d2.download_button(
        "Download overlay (PNG)",
        S.png_bytes(picture),
        file_name=f"saliency_overlay_{method}_{target}.png",
        mime="image/png",
        key="saliency.download_overlay",
    )
    m1, m2, m3 = st.columns(3)
    timing_help = (
        "Wall-clock time measured when this map was computed, summed over "
        f"{result.batches} pass(es). Excluded: model loading, preprocessing, scaling, drawing, "
        "and the one-time warm-up pass after loading. On a busy CPU it includes time spent "
        "waiting for other work (other sessions, the browser)."
    )
    m1.metric("Forward", f"{result.forward_ms:.0f} ms", help=timing_help)
    m2.metric("Backward (input gradient)", f"{result.backward_ms:.0f} ms", help=timing_help)
    m3.metric("Images through the model", result.images)
    per_image = (
        f" ({result.forward_ms / result.images:.0f} + {result.backward_ms / result.images:.0f} ms "
        "per image)"
        if result.images > 1
        else ""
    )
    warm_text = (
        f"a one-time warm-up pass after loading ({warm_ms:.0f} ms) is not included"
        if warm_ms is not None
        else "no warm-up pass ran, so one-time initialisation may be included"
    )
    st.caption(
        f"Timed once, when this map was computed: {result.images} image(s) in {result.batches} "
        f"forward + backward pass(es) on `{loaded.device}`{per_image}, wall clock. Model "
        f"loading is not included; {warm_text}. Other work on the CPU (other sessions or "
        "programs, the browser drawing this page) slows a single run; "
        "`python benchmarks/saliency.py` prints steady-state medians."
    )
    if st.button("Measure again: median of 5 passes", key="saliency.retime"):
        with st.spinner("Timing 5 forward + backward passes ..."):
            try:
                st.session_state["saliency._retime"] = (
                    cache_key,
                    S.time_gradient_pass(loaded.model, x, int(target), objective=objective),
                )
            except (ValueError, RuntimeError) as error:
                st.error(f"{error}\n\n**What to change:** try another model or objective.")
    retimed = st.session_state.get("saliency._retime")
    if retimed is not None and retimed[0] == cache_key:
        timing: S.PassTiming = retimed[1]
        st.caption(
            f"Median of {timing.repeats} back-to-back passes on one image, measured on request: "
            f"forward {timing.forward_ms:.0f} ms, backward {timing.backward_ms:.0f} ms."
        )
    share = S.mass_above_percentile(result.saliency, percentile)
    prob = float(torch.softmax(result.logits, 0)[int(target)])
    lines = [
        f"The model gives **{loaded.categories[target]}** a probability of {prob:.3f}. "
        f"Each pixel's brightness is |d {'score' if objective == 'logit' else 'loss'} / d pixel| "
        f"reduced by **{reduce}** over R, G, B.",
        (
            f"Pixels at or below the 1st percentile ({comparison.p_low:.3g}) are black and "
            f"pixels at or above the 99th ({comparison.p_high:.3g}) full colour; they hold "
            f"{share:.1%} of the total saliency. In between, 255 (s - P1) / (P99 - P1) is "
            "truncated to an integer by np.uint8, as cvglue.scale_min_max and the notes do."
            if saliency_u8 is comparison.notes
            else f"Pixels at or above the {percentile:g}th percentile are drawn at full colour; "
            f"they hold {share:.1%} of the total saliency. Values are divided by that percentile "
            "plus 1e-12 and rounded, so a flat map stays black instead of dividing by zero."
        ),
    ]
    if result.completeness is not None:
        total, delta = result.completeness
        lines.append(
            f"Integrated Gradients completeness: attributions sum to {total:.3f}, while "
            f"f(image) - f(baseline) = {delta:.3f}. More steps bring the two closer."
        )
    if method == "smoothgrad":
        lines.append(
            f"SmoothGrad averaged {n} noisy copies (sigma {sigma:.2f}) in batches; "
            "noise averages away the speckle of a single gradient."
        )
    st.markdown("\n\n".join(lines))

with tab_sanity:
    st.markdown(
        "**Cascading randomization** (Adebayo et al. 2018): a copy of the model gets its "
        "layers re-drawn at random from the top down, and the map is recomputed after each "
        "layer. If the map does not change, it was explaining the image, not the model."
    )
    layer_names = S.randomizable_layers(loaded.model)
    if not layer_names:
        st.warning("This model exposes no parameterized layers to randomize.")
    else:
        k = st.slider(
            "Layers to randomize (from the top)",
            1,
            len(layer_names),
            min(len(layer_names), 6),
            key="saliency.sanity_layers",
        )
        cost = (k + 1) * result.images
        st.caption(
            f"{k + 1} saliency maps = {cost} images through the model with the current method."
        )
        if st.button("Run the sanity check", key="saliency.sanity_run", type="primary"):
            bar = st.progress(0.0, text="Randomizing ...")
            try:
                sanity = S.randomization_test(
                    loaded.model,
                    x,
                    int(target),
                    method,
                    k,
                    progress=lambda f, text: bar.progress(min(max(f, 0.0), 1.0), text=text),
                    percentile=percentile,
                    **params,
                )
                st.session_state["saliency._sanity"] = (cache_key, k, sanity)
            except (ValueError, RuntimeError) as error:
                st.error(f"{error}\n\n**What to change:** try fewer layers or the vanilla method.")
            bar.empty()
        stored = st.session_state.get("saliency._sanity")
        if stored is not None and stored[0] == cache_key:
            sanity: S.RandomizationResult = stored[2]
            steps_axis = list(range(len(sanity.layers) + 1))
            fig = go.Figure(
                go.Scatter(
                    x=steps_axis,
                    y=[1.0, *sanity.correlations],
                    mode="lines+markers",
                    text=["original", *sanity.layers],
                    hovertemplate="%{x} layer(s), last: %{text}<br>"
                    "Spearman %{y:.3f}<extra></extra>",
                )
            )
            fig.update_layout(
                xaxis_title="number of randomized layers (top down)",
                yaxis_title="Spearman rank correlation with the original map",
                yaxis_range=[-0.2, 1.05],
                height=360,
                margin=dict(l=10, r=10, t=30, b=10),
            )
            st.plotly_chart(fig, width="stretch", key="saliency.sanity_chart")
            st.markdown(S.read_randomization(sanity))
            shown = np.linspace(0, len(sanity.maps) - 1, num=min(4, len(sanity.maps)), dtype=int)
            cols = st.columns(len(shown) + 1)
            cols[0].image(
                S.colorize(sanity.original, colormap), caption="original", width="stretch"
            )
            for col, i in zip(cols[1:], shown, strict=True):
                col.image(
                    S.colorize(sanity.maps[i], colormap),
                    caption=f"{i + 1} layer(s): up to {sanity.layers[i]}",
                    width="stretch",
                )
        elif stored is not None:
            st.caption("The settings changed since the last run: run the sanity check again.")

with tab_notes:
    st.markdown(
        f"**The notes' recipe** ({cite(S.NOTES_RECIPE_REF)}) backpropagates a *loss*, sums "
        "|x.grad| over R, G, B, and scales with `cvglue.scale_min_max(s, 0, 255, "
        "percentile=99)`: P1 and P99 (NumPy's default linear percentiles) are stretched to "
        "0 and 255, values outside are clipped, and `np.uint8` truncates. Choose "
        "*The notes'* under **Recipe** to see their map, reproduced exactly."
    )
    st.subheader("Same map, two scalings", anchor=False)
    n1, n2, _ = st.columns(3)
    n1.image(
        S.colorize(comparison.app, colormap),
        caption="The app's: s / (P99 + 1e-12), rounded",
        width="stretch",
    )
    if comparison.notes is None:
        n2.warning(f"The notes' scaling: {comparison.notes_error}.", icon=":material/warning:")
        st.caption("The app divides by P99 + 1e-12 instead, so a flat map never divides by zero.")
    else:
        n2.image(
            S.colorize(comparison.notes, colormap),
            caption="The notes': (s - P1) / (P99 - P1), clipped, truncated",
            width="stretch",
        )
        st.markdown(
            f"On this map (the current {objective} gradient) P1 = {comparison.p_low:.4g} and "
            f"P99 = {comparison.p_high:.4g}. The two scalings differ by up to "
            f"**{comparison.max_diff} grey levels** (mean {comparison.mean_diff:.2f}; "
            f"{comparison.share_differing:.1%} of the pixels differ): the notes subtract P1 "
            f"({comparison.p_low / comparison.p_high:.1%} of P99) and truncate, the app does "
            "not subtract and rounds."
        )
    st.subheader("Why the app's recipe is the default", anchor=False)
    p_target = float(torch.softmax(result.logits, 0)[int(target)])
    st.markdown(
        "- **Objective.** The class score's gradient explains the class itself (Simonyan et "
        "al.). The cross-entropy loss's gradient is -(1 - p) times that gradient plus the "
        "other classes' score gradients weighted by their probabilities: here p = "
        f"{p_target:.3f}, so the explained class contributes with weight {1 - p_target:.3f} "
        "and the rest comes from the competitors; the more confident the model, the more the "
        "loss map is about the other classes.\n"
        "- **Scaling.** Dividing by P99 + 1e-12 keeps zero gradient black and is defined for "
        "every map; `cvglue.scale_min_max` divides by P99 - P1, which is zero when the "
        "middle 98% of the map has one value (a flat map gives 0 / 0 = NaN), and truncation "
        "sits half a grey level below rounding on average.\n"
        "- The notes' recipe stays one click away under **Recipe**, reproduced bit for bit."
    )
    st.subheader("What the notes say, and what PyTorch does", anchor=False)
    for callout in _callouts():
        notes_callout(callout)

show_code(
    S.snippet_for(
        method,
        model_name=loaded.name,
        custom_file=upload.name if source == "Upload your own" else None,
        architecture=architecture if source == "Upload your own" else None,
        target=int(target),
        objective=objective,
        reduce=reduce,
        n=int(n),
        sigma=float(sigma),
        steps=int(steps),
        baseline=baseline,
        percentile=percentile,
        alpha=alpha,
        colormap=colormap,
        device=loaded.device,
        seed=settings.seed,
        recipe=recipe,
    )
)
if recipe == "notes":
    notes_citation(S.NOTES_RECIPE_REF, verbatim=False)
