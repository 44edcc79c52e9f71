"""Saliency: which pixels drive a real ImageNet classifier's decision, with a sanity check."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

from core.text import N_
from lessons.saliency import maps as S
from lessons.saliency import models as M
from ui.caching import MAX_SHARED_MODEL_BYTES, SHARED_TTL_S, bounded_cache
from ui.charts import show_chart
from ui.code import show_code
from ui.heavy import budget_s, heavy_gate, heavy_job
from ui.i18n import _, cite, tr, translator
from ui.image_input import image_input
from ui.images import digest, upload_digest
from ui.lesson import lesson_layout
from ui.links import BOUND
from ui.markdown import plain
from ui.notes_callout import callouts_of, notes_callout, notes_citation
from ui.settings import current_settings

#: Used to announce a run's time before any gradient pass was measured (forward + backward, CPU):
#: one image alone (vanilla), and per image in batches (SmoothGrad n=25 in batches of 8 took
#: 0.98 s here, ~40 ms an image; benchmarks/saliency.py). A single pass's time says little about
#: a batched one, so each kind falls back to its own figure.
FALLBACK_PER_IMAGE_MS = 160.0
FALLBACK_BATCHED_PER_IMAGE_MS = 40.0
# Choice values stay English (tests and code compare them); only their display is translated,
# each label one catalog message (a link's English label is translated by exact lookup).
TARGET_MODES = [N_("Predicted class"), N_("Any class")]
METHOD_NAMES = {
    "vanilla": N_("Vanilla gradient"),
    "grad_x_input": N_("Gradient x input"),
    "smoothgrad": N_("SmoothGrad"),
    "integrated_gradients": N_("Integrated Gradients"),
}
RECIPE_NAMES = {"app": N_("The app's (default)"), "notes": N_("The notes' (000:2)")}
MODEL_SOURCES = [N_("From the registry"), N_("Upload your own")]
BASELINE_NAMES = {"black": N_("black"), "blur": N_("blur")}
OBJECTIVE_NAMES = {"logit": N_("class score (Simonyan)"), "loss": N_("loss (notes)")}
REDUCE_NAMES = {"sum": N_("sum |grad| (notes)"), "max": N_("max |grad| (Simonyan)")}
WHAT_TO_CHANGE = N_("{message}\n\n**What to change:** {hint}")

layout = lesson_layout(
    N_("Saliency: which pixels drive the decision?"),
    N_(
        "the bright pixels of the map and the overlay: the gradient of the explained class's "
        "score with respect to each input pixel, on the picture the model actually sees."
    ),
)


settings = current_settings()
# Every value control is bound to the URL (**BOUND): a link opens this view, and a control keeps
# its value after a visit to another page or while it is hidden (another method, the notes'
# recipe, the upload step). Buttons and the model upload are not carried by a link.


R = TypeVar("R")


@dataclass
class _SharedRuns:
    """Process-wide notes about the shared caches: the keys being computed now, pass times.

    Whether a map or a sanity check is made is asked of its cache (:func:`_held`), never kept
    here: a list of made keys outlives the cache's entries (evicted after 32, gone after an
    hour), and a key it still named would open a heavy view with no click and outside the
    queue, computing it again."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    computing: dict[tuple, int] = field(default_factory=dict)  # key -> callers computing it
    per_image_ms: dict[tuple[str, bool], float] = field(default_factory=dict)


@st.cache_resource(show_spinner=False)
def _shared_runs() -> _SharedRuns:
    return _SharedRuns()


class _NotCached(Exception):
    """Raised by a shared cached function called with ``_probe=True`` on a miss: Streamlit
    stores nothing when the function raises, so asking never computes nor fills the cache."""


def _held(runs: _SharedRuns, key: tuple, probe: Callable[[], R]) -> R | None:
    """``probe()`` (a shared cached function called with ``_probe=True``) when its cache holds
    the result now, else None; never computes. Asked under ``runs.lock`` and skipped while
    ``key`` is being computed (:func:`_computing`): on a miss Streamlit takes the key's compute
    lock, and waiting there for someone else's long computation would hold this script's turn
    (ui.turns), stopping every other page, with nothing on screen."""
    with runs.lock:
        if runs.computing.get(key):
            return None
        try:
            return probe()
        except _NotCached:
            return None


@contextlib.contextmanager
def _computing(runs: _SharedRuns, key: tuple) -> Iterator[None]:
    """Mark ``key`` as being computed for the block (see :func:`_held`)."""
    with runs.lock:
        runs.computing[key] = runs.computing.get(key, 0) + 1
    try:
        yield
    finally:
        with runs.lock:
            left = runs.computing.pop(key) - 1
            if left:
                runs.computing[key] = left


def _warmed(loaded: M.LoadedModel) -> tuple[M.LoadedModel, float | None]:
    """One untimed gradient pass right after loading, so the page's Forward/Backward times do not
    include one-time lazy initialisation. Returns the model and the warm-up time (None: failed;
    the real computation then reports the problem)."""
    try:
        x = torch.zeros(1, 3, loaded.preprocessing.crop, loaded.preprocessing.crop)
        return loaded, S.warm_up(loaded.model, x.to(loaded.device))
    except (ValueError, RuntimeError):
        return loaded, None


@bounded_cache(max_entries=4, ttl=SHARED_TTL_S, kind="resource", max_bytes=MAX_SHARED_MODEL_BYTES)
def _registry_model(
    name: str, device: str, allow_download: bool
) -> tuple[M.LoadedModel, float | None]:
    # Shared by all sessions: the model is in eval mode with frozen parameters and every core
    # function works on per-call input tensors (or a deep copy), so nothing here is mutated.
    return _warmed(M.load_model(name, device, allow_download=allow_download))


@bounded_cache(max_entries=2, ttl=SHARED_TTL_S, kind="resource", max_bytes=MAX_SHARED_MODEL_BYTES)
def _custom_model(
    digest: str, filename: str, architecture: str, device: str, _data: bytes
) -> tuple[M.LoadedModel, float | None]:
    return _warmed(
        M.load_custom_model(_data, filename=filename, architecture=architecture, device=device)
    )


def _classify(loaded: M.LoadedModel, x: torch.Tensor) -> tuple[list[tuple[int, str, float]], int]:
    """Top-5 (class, name, probability) of the preprocessed ``x`` (1, 3, S, S), and the class
    count."""
    with torch.no_grad():
        logits = loaded.model(x)
    return M.top_k(logits, loaded.categories, 5), int(logits.shape[1])


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _shared_classification(
    model_key: str, image_digest: str, _loaded: M.LoadedModel, _x: torch.Tensor
) -> tuple[list[tuple[int, str, float]], int]:
    """:func:`_classify` once per registry model and image for the whole server: a class opening
    the page at its defaults runs one forward pass, not fifty. (An uploaded model's key is its
    file name, which two students may share; those are classified per session.)"""
    return _classify(_loaded, _x)


def _compute(model, x, target: int, method: str, params: dict, label: str):
    """Run lessons.saliency.maps.compute_saliency with a progress bar; returns (result,
    seconds, when).
    ``label`` is already in the session's language."""
    bar = st.progress(0.0, text=label)
    t0 = time.perf_counter()
    try:
        result = S.compute_saliency(
            model,
            x,
            target,
            method,
            progress=lambda f, text: bar.progress(
                min(max(f, 0.0), 1.0), text=f"{label}: {tr(text)}"
            ),
            **params,
        )
    finally:
        bar.empty()
    return result, time.perf_counter() - t0, time.time()


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _shared_saliency(
    model_key: str,
    image_digest: str,
    target: int,
    method: str,
    params_key: tuple,
    _label: str,
    _model,
    _x: torch.Tensor,
    _params: dict,
    _ran: list,
    _probe: bool = False,
) -> tuple[S.SaliencyResult, float, float]:
    # One map per (model, image bytes, class, method and its parameters) for the whole server:
    # the result does not depend on the session, and Streamlit computes a key once while other
    # sessions asking for the same key wait for it. `_ran` tells the caller it was computed here;
    # `_probe` only asks whether the map is cached (see _held).
    if _probe:
        raise _NotCached
    _ran.append(True)
    return _compute(_model, _x, target, method, _params, _label)


def _randomize(model, x, target: int, method: str, k: int, percentile: float, params: dict):
    """lessons.saliency.maps.randomization_test of the top ``k`` layers, with a progress bar."""
    bar = st.progress(0.0, text=_("Randomizing ..."))
    try:
        return S.randomization_test(
            model,
            x,
            target,
            method,
            k,
            progress=lambda f, text: bar.progress(min(max(f, 0.0), 1.0), text=tr(text)),
            percentile=percentile,
            **params,
        )
    finally:
        bar.empty()


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _shared_sanity(
    model_key: str,
    image_digest: str,
    target: int,
    method: str,
    params_key: tuple,
    k: int,
    percentile: float,
    _model,
    _x: torch.Tensor,
    _params: dict,
    _probe: bool = False,
) -> S.RandomizationResult:
    # One sanity check per (model, image, class, method and its parameters, layers, percentile)
    # for the whole server, like the maps: a class opening a lesson link with the test on runs it
    # once. (The random weights come from the seed in params_key.) `_probe`: see _held.
    if _probe:
        raise _NotCached
    return _randomize(_model, _x, target, method, k, percentile, _params)


def _model_input(loaded: M.LoadedModel, image: np.ndarray) -> tuple[torch.Tensor, np.ndarray]:
    """The preprocessed input (1, 3, S, S) and the (S, S, 3) uint8 picture the model sees."""
    return loaded.preprocess(image), loaded.model_view(image)


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S, kind="resource")
def _shared_model_input(
    model_key: str, image_digest: str, _loaded: M.LoadedModel, _image: np.ndarray
) -> tuple[torch.Tensor, np.ndarray]:
    """:func:`_model_input` once per registry model and image: shared and read-only (the
    gradient passes clone ``x`` before asking for its gradient)."""
    return _model_input(_loaded, _image)


@dataclass(frozen=True)
class _Pictures:
    """What the page draws from one map: scaled, coloured and encoded once (PNG bytes go to
    st.image and the download buttons as they are)."""

    comparison: S.ScalingComparison
    notes_scaled: bool  # the map is the notes' scaling (else the app's)
    share: float  # of the total saliency at or above the percentile
    map_png: bytes  # the (S, S) uint8 map in grey (download)
    heat_png: bytes  # the map through the colormap
    overlay_png: bytes
    app_png: bytes  # the app's scaling, coloured
    notes_png: bytes | None  # the notes' scaling, coloured (None: undefined on a flat map)
    view_png: bytes  # what the model sees


def _make_pictures(
    saliency: torch.Tensor, view: np.ndarray, use_notes: bool, percentile: float,
    alpha: float, colormap: str,
) -> _Pictures:  # fmt: skip
    """Scale the (S, S) map the notes' way (``use_notes`` and defined) or the app's, colour it,
    blend it over ``view`` and encode each picture."""
    comparison = S.compare_scalings(saliency, S.NOTES_PERCENTILE)
    notes_scaled = use_notes and comparison.notes is not None
    saliency_u8 = comparison.notes if notes_scaled else S.scale_percentile(saliency, percentile)
    notes_png = None
    if comparison.notes is not None:
        notes_png = S.png_bytes(S.colorize(comparison.notes, colormap))
    return _Pictures(
        comparison=comparison,
        notes_scaled=notes_scaled,
        share=S.mass_above_percentile(saliency, percentile),
        map_png=S.png_bytes(saliency_u8),
        heat_png=S.png_bytes(S.colorize(saliency_u8, colormap)),
        overlay_png=S.png_bytes(S.overlay(view, saliency_u8, alpha, colormap)),
        app_png=S.png_bytes(S.colorize(comparison.app, colormap)),
        notes_png=notes_png,
        view_png=S.png_bytes(view),
    )


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S, kind="resource")
def _shared_pictures(
    cache_key: tuple, use_notes: bool, percentile: float, alpha: float, colormap: str,
    _saliency: torch.Tensor, _view: np.ndarray,
) -> _Pictures:  # fmt: skip
    """:func:`_make_pictures` once per shared map (``cache_key``) and drawing options: a class
    on the same link scales, colours and encodes the map once, not fifty times."""
    return _make_pictures(_saliency, _view, use_notes, percentile, alpha, colormap)


def _fail(message: str, hint: str) -> None:
    """An error in the figure's place and stop; both texts already in the session's language."""
    layout.figure.error(
        # core's message can quote an uploaded file (its name, an archive entry): not markdown
        _(WHAT_TO_CHANGE).format(message=plain(message), hint=hint), icon=":material/error:"
    )
    st.stop()


def _target_widgets(top1: int, num_classes: int, categories: list[str]) -> int:
    """The "Explain" radio and class box; returns the class to explain.

    Both are bound to the URL (``?saliency.target_class=292: tiger``) and keep their values while
    hidden (the upload step, a page switch) through Streamlit's own persistence, which also tells
    the browser the kept value, so the box always shows the class the map explains (issue 12).
    Their defaults are fixed (the predicted class): a default that followed the last choice would
    leave that choice out of the link.
    """
    mode = st.radio(
        _("Explain"),
        TARGET_MODES,
        format_func=translator(),
        horizontal=True,
        key="saliency.target_mode",
        **BOUND,
    )
    if mode == TARGET_MODES[0]:
        target = top1
    else:
        target = st.selectbox(
            _("Class (type to search)"),
            list(range(num_classes)),
            index=top1,
            format_func=lambda i: f"{i}: {categories[i]}",
            key="saliency.target_class",
            **BOUND,
        )
    st.caption(
        _("Explaining class {target}: **{name}**").format(target=target, name=categories[target])
    )
    return int(target)


details = layout.details
with details:
    how_area = st.container()
    predictions_area = st.container()
    setup_area = st.container()
    sanity_area = st.container()
    notes_area = st.container()
    code_area = st.container()

# ---------------------------------------------------------------- classifier (in the details)
with setup_area:
    st.header(_("Classifier and preprocessing"), anchor=False)
    # Open when the classifier is not the default one; a link's value is in the URL (defaults
    # never are) before the control has read it.
    changed = any(
        key in st.query_params or st.session_state.get(key, default) != default
        for key, default in (
            ("saliency.model_source", MODEL_SOURCES[0]),
            ("saliency.model", "efficientnet_lite0"),
        )
    )
    with st.expander(_("Classifier: choose a model or upload your own"), expanded=changed):
        source = st.radio(
            _("Classifier"),
            MODEL_SOURCES,
            format_func=translator(),
            horizontal=True,
            key="saliency.model_source",
            **BOUND,
        )
        loaded: M.LoadedModel | None = None
        warm_ms: float | None = None
        upload = None
        architecture = None
        if source == MODEL_SOURCES[0]:
            entries = {entry.spec.name: entry for entry in M.list_models()}
            missing = [_(entry.spec.title) for entry in entries.values() if not entry.available]
            # The option text is the link's value, so it names the model only: whether its
            # weights are here differs between machines, and a link must open on every one.
            say = translator()
            name = st.selectbox(
                _("Model"),
                list(entries),
                format_func=lambda n: say(entries[n].spec.title),
                key="saliency.model",
                **BOUND,
                help=(
                    _(
                        "EfficientNet-Lite0 ships with a pip package and always works offline. "
                        "torchvision models need their weight file in the local torch hub "
                        "cache. Unavailable offline here: {models}."
                    ).format(models=", ".join(missing))
                    if missing
                    else _(
                        "EfficientNet-Lite0 ships with a pip package and always works offline. "
                        "torchvision models need their weight file in the local torch hub cache."
                    )
                ),
            )
            entry = entries[name]
            title = _(entry.spec.title)
            if not entry.available:
                st.warning(
                    _("{title} is unavailable: {reason}").format(
                        title=title, reason=tr(entry.reason)
                    ),
                    icon=":material/block:",
                )
                if entry.weights_path is not None:
                    st.caption(_("Put the weight file exactly here:"))
                    st.code(str(entry.weights_path), language=None)
                if st.button(_("Try to download the weights"), key="saliency.download_weights"):
                    with st.spinner(_("Downloading {title} ...").format(title=title)):
                        try:
                            loaded, warm_ms = _registry_model(name, settings.device, True)
                        except ValueError as error:
                            st.error(tr(error))
                if loaded is None:
                    layout.figure.info(
                        _(
                            "{title} is unavailable offline (see **Classifier** below). "
                            "Choose EfficientNet-Lite0 to continue offline."
                        ).format(title=title),
                        icon=":material/block:",
                    )
                    st.stop()
            else:
                with layout.figure, st.spinner(_("Loading {title} ...").format(title=title)):
                    try:
                        loaded, warm_ms = _registry_model(name, settings.device, False)
                    except ValueError as error:
                        _fail(tr(error), _("choose EfficientNet-Lite0, which works offline."))
        else:
            architecture = st.selectbox(
                _("Architecture the weights belong to"),
                list(M.CUSTOM_ARCHITECTURES),
                index=list(M.CUSTOM_ARCHITECTURES).index("resnet18"),
                key="saliency.architecture",
                **BOUND,
                help=_(
                    "The uploaded state_dict is loaded into this architecture with strict key "
                    "and shape checks (a 1000-class ImageNet head), and images are preprocessed "
                    "the way it expects."
                ),
            )
            upload = st.file_uploader(
                _("Weights file: a state_dict (.pt, .pth) or .safetensors"),
                type=["pt", "pth", "safetensors"],
                key="saliency.model_upload",
                help=_(
                    "Weights only, at most {limit} MB: nothing in the file is ever run. "
                    "TorchScript and whole pickled models are refused, because loading them "
                    "would run their code on this server. A .pt/.pth must be a torch.save "
                    "archive; its records are checked (uncompressed, sizes within the file) "
                    "before torch.load(weights_only=True) reads it. Export the weights with "
                    "`{torch_save}` or `{safetensors_save}`."
                ).format(
                    limit=M.MAX_UPLOAD_MB,
                    torch_save=M.SAVE_STATE_DICT,
                    safetensors_save=M.SAVE_SAFETENSORS,
                ),
            )
            if upload is None:
                layout.figure.info(
                    _(
                        "Upload a weights file (.pt, .pth or .safetensors) under **Classifier** "
                        "below to continue, or use the registry."
                    ),
                    icon=":material/upload:",
                )
                st.stop()
            data = upload.getvalue()
            with layout.figure, st.spinner(_("Loading {file} ...").format(file=plain(upload.name))):
                try:
                    loaded, warm_ms = _custom_model(
                        upload_digest(upload), upload.name, architecture,
                        settings.device, data,
                    )  # fmt: skip
                except ValueError as error:
                    _fail(
                        tr(error),
                        _(
                            "upload weights only (a state_dict saved with torch.save, or a "
                            ".safetensors file) for the architecture chosen under Classifier, "
                            "with a 1000-class head."
                        ),
                    )
        assert loaded is not None
        st.caption(
            _("Weights: {source} · device `{device}`").format(
                source=plain(tr(loaded.source)), device=loaded.device
            )
        )
    st.markdown(
        _("**{model}**: {preprocessing}.").format(
            model=plain(loaded.name), preprocessing=plain(tr(loaded.describe_preprocessing()))
        )
    )
    st.caption(_("All maps live on this resized and cropped view; the overlay is drawn on it."))

# ---------------------------------------------------------------- controls beside the figure
with layout.controls:
    image = image_input("saliency.image")
if image is None:
    layout.figure.info(
        _("Choose a sample or upload an image to see its saliency map."), icon=":material/image:"
    )
    st.stop()

image, notice = M.ensure_min_side(image)
if notice:
    layout.controls.warning(tr(notice), icon=":material/zoom_in:")

image_digest = digest(image)
model_key = f"{loaded.source} · {loaded.device}"
shared = source == MODEL_SOURCES[0]  # an uploaded model's name is not a safe shared key
try:
    if shared:
        x, view = _shared_model_input(model_key, image_digest, loaded, image)
        top5, num_classes = _shared_classification(model_key, image_digest, loaded, x)
    else:
        x, view = _model_input(loaded, image)
        top5, num_classes = _classify(loaded, x)
except (ValueError, RuntimeError) as error:
    _fail(
        _("The model could not classify this image: {error}").format(error=tr(error)),
        _("try another image or model."),
    )

with predictions_area:
    st.header(_("Top-5 predictions"), anchor=False)
    st.dataframe(
        pd.DataFrame(
            {
                _("class"): [index for index, _name, _p in top5],
                _("name"): [label for _i, label, _p in top5],
                _("probability"): [round(p, 4) for _i, _name, p in top5],
            }
        ),
        hide_index=True,
        width="stretch",
        key="saliency.top5",
    )

with layout.controls:
    target = _target_widgets(top5[0][0], num_classes, loaded.categories)
    say = translator()
    recipe = st.radio(
        _("Recipe"),
        list(S.RECIPES),
        format_func=lambda v: say(RECIPE_NAMES[v]),
        horizontal=True,
        key="saliency.recipe",
        **BOUND,
        help=_(
            "The app's: {app}. The notes': {notes}, the code in the notes (000:2) reproduced "
            "exactly: vanilla gradient of the loss, sum of |grad| over R, G, B, then "
            "cvglue.scale_min_max(s, 0, 255, percentile=99) and np.uint8."
        ).format(app=_(S.RECIPES["app"]), notes=_(S.RECIPES["notes"])),
    )
    n, sigma, steps, baseline = 25, 0.15, 32, "black"
    if recipe == "notes":
        method, objective, reduce = "vanilla", "loss", "sum"
    else:
        method = st.selectbox(
            _("Method"),
            list(S.METHODS),
            format_func=lambda v: say(METHOD_NAMES[v]),
            key="saliency.method",
            **BOUND,
            help=" · ".join(_(text) for text in S.METHODS.values()),
        )
    if method == "smoothgrad":
        n = st.slider(_("Noisy samples n"), 1, 50, 25, key="saliency.n", **BOUND)
        sigma = st.slider(
            _("Noise sigma"), 0.0, 0.5, 0.15, 0.01, key="saliency.sigma", **BOUND,
            help=_("Standard deviation of the noise, as a fraction of the input range."),
        )  # fmt: skip
    elif method == "integrated_gradients":
        # At most 64 steps: the completeness gap (the lesson's point about steps) already
        # shrinks visibly from 4 to 64 steps on the bundled classifier, while each step is one
        # more image through the model (128 steps: ~20 s of the shared CPU for one map, and
        # 22 times that for a sanity check of all layers).
        steps = st.slider(_("Steps on the path"), 4, 64, 32, key="saliency.steps", **BOUND)
        baseline = st.radio(
            _("Baseline"),
            list(S.BASELINES),
            format_func=lambda v: say(BASELINE_NAMES[v]),
            horizontal=True,
            key="saliency.baseline",
            **BOUND,
        )
    with st.expander(_("Map options")):
        if recipe != "notes":
            objective = st.radio(
                _("Objective"),
                list(S.OBJECTIVES),
                format_func=lambda v: say(OBJECTIVE_NAMES[v]),
                key="saliency.objective",
                **BOUND,
                help=_(
                    "Backpropagate the class score (logit), or the cross-entropy loss for the "
                    "explained class as the notes do."
                ),
            )
            reduce = st.radio(
                _("Channel reduction"),
                list(S.REDUCTIONS),
                format_func=lambda v: say(REDUCE_NAMES[v]),
                key="saliency.reduce",
                **BOUND,
            )
        if recipe == "notes":
            percentile = S.NOTES_PERCENTILE
            st.caption(
                _("Scaling: P1..P{percentile:g} to 0..255 (fixed by the notes' recipe)").format(
                    percentile=percentile
                )
            )
        else:
            percentile = st.slider(
                _("Saturate at percentile"), 50.0, 100.0, 99.0, 0.5, key="saliency.percentile",
                **BOUND,
            )  # fmt: skip
        alpha = st.slider(_("Overlay alpha"), 0.0, 1.0, 0.5, 0.05, key="saliency.alpha", **BOUND)
        colormap = st.selectbox(_("Colormap"), list(S.COLORMAPS), key="saliency.colormap", **BOUND)

# ---------------------------------------------------------------- compute (shared cache)
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
# The black level (Integrated Gradients' black baseline) comes with the model, in model_key.
params_key = (objective, reduce, int(n), float(sigma), int(steps), baseline, settings.seed)
cache_key = (model_key, image_digest, int(target), method, params_key)
runs = _shared_runs()
with runs.lock:
    per_image_ms = runs.per_image_ms.get((model_key, method == "vanilla"))
# Not the warm-up time: it includes one-time initialisation (seconds on a cold CPU).
per_image_ms = per_image_ms or (
    FALLBACK_PER_IMAGE_MS if method == "vanilla" else FALLBACK_BATCHED_PER_IMAGE_MS)
estimate = S.estimate_run(method, n=int(n), steps=int(steps), per_image_ms=per_image_ms)
session_cached = st.session_state.get("saliency._result")

gate_area = layout.figure.container()
figure_slot = layout.figure.empty()


def _held_map(key: tuple, map_method: str) -> tuple[S.SaliencyResult, float, float] | None:
    """The map ``key`` from the shared cache when it holds it now (a registry model), else
    None. Asked inside the figure's slot: a cache hit replays the progress bar the computation
    drew, which the slot's next content replaces."""
    if not shared:
        return None
    with figure_slot.container():
        return _held(runs, key, lambda: _shared_saliency(
            model_key, image_digest, int(target), map_method, params_key, "", loaded.model, x,
            params, [], _probe=True))  # fmt: skip


# The map drawn: the chosen method's, or the vanilla gradient while that one waits for a click.
# The controls (and the sanity check below) keep the chosen method and its key.
map_method, map_key, map_estimate = method, cache_key, estimate
map_in_session = session_cached is not None and session_cached[0] == map_key
held = None if map_in_session else _held_map(map_key, map_method)
# A map of several images whose expected time is above the budget waits for a click that states
# it, whether its settings came from a link or from this session's controls (a link is anyone's
# input). Until then the page shows the vanilla gradient, one pass, so the whole lesson is there
# at once. A map the shared cache holds now, or this session's last one, needs no click. One
# image is the cheapest map there is, so it never waits.
if estimate.images > 1:
    with gate_area:
        may = heavy_gate(
            "saliency.map", estimate.seconds, cache_key,
            what=_("the {method} map of {images} images").format(
                method=_(METHOD_NAMES[method]), images=estimate.images),
            ready=held is not None or map_in_session,
        )  # fmt: skip
        if not may:
            st.caption(_("Meanwhile: the vanilla gradient (one pass through the model)."))
            map_method = "vanilla"
            map_key = (model_key, image_digest, int(target), map_method, params_key)
            with runs.lock:
                vanilla_ms = runs.per_image_ms.get((model_key, True)) or per_image_ms
            map_estimate = S.estimate_run(map_method, per_image_ms=vanilla_ms)
            map_in_session = session_cached is not None and session_cached[0] == map_key
            held = None
label = _("{method}: {images} image(s) through the model, about {seconds:.1f} s").format(
    method=_(METHOD_NAMES[map_method]), images=map_estimate.images,
    seconds=map_estimate.seconds,
)
# Heavy work runs as one of the server's few heavy jobs, the others waiting with their place;
# the estimate alone decides, since a map in hand (held, this session's) is not computed here.
heavy = map_estimate.seconds > budget_s()

ran: list = []
made_s, made_at = 0.0, time.time()
if held is not None:
    result, made_s, made_at = held
elif map_in_session:
    result, made_s, made_at = session_cached[1]
else:
    with figure_slot.container(), (heavy_job(label) if heavy else contextlib.nullcontext()):
        st.caption(
            _("{label} ... (if another session is making the same map, you get theirs)").format(
                label=label
            )
        )
        try:
            if shared:
                with _computing(runs, map_key):
                    result, made_s, made_at = _shared_saliency(
                        model_key, image_digest, int(target), map_method, params_key, label,
                        loaded.model, x, params, ran,
                    )  # fmt: skip
            else:
                ran.append(True)
                result, made_s, made_at = _compute(
                    loaded.model, x, int(target), map_method, params, label
                )
        except (ValueError, RuntimeError) as error:
            figure_slot.empty()
            _fail(tr(error), _("change the target class, the method or the objective."))
figure_slot.empty()
st.session_state["saliency._result"] = (map_key, (result, made_s, made_at))
if ran and result.images:
    with runs.lock:
        ms = (result.forward_ms + result.backward_ms) / result.images
        runs.per_image_ms[(model_key, map_method == "vanilla")] = ms
        if map_method == "vanilla":
            runs.per_image_ms[(model_key, True)] = ms
if ran:
    provenance = _("Computed just now in {made:.1f} s (announced: about {seconds:.1f} s).").format(
        made=made_s, seconds=map_estimate.seconds
    )
elif map_in_session:
    provenance = _("Kept from this session's last run (made in {made:.1f} s).").format(made=made_s)
else:
    provenance = _(
        "From the shared cache: made {ago:.0f} s ago in {made:.1f} s (by this or another "
        "session), so nothing was recomputed."
    ).format(ago=time.time() - made_at, made=made_s)

draw = (recipe == "notes", float(percentile), float(alpha), colormap)
if shared:
    pictures = _shared_pictures(map_key, *draw, result.saliency, view)
else:
    pictures = _make_pictures(result.saliency, view, *draw)
comparison = pictures.comparison
notes_warning = None
if pictures.notes_scaled:
    map_caption = _("The notes' recipe ({ref}): loss, sum, P1..P99, uint8").format(
        ref=cite(S.NOTES_RECIPE_REF)
    )
else:
    if recipe == "notes":
        notes_warning = _("{reason}. The map uses the app's scaling instead.").format(
            reason=tr(comparison.notes_error)
        )
    map_caption = f"{_(METHOD_NAMES[map_method])}, {objective}, {reduce}"
prob = float(torch.softmax(result.logits, 0)[int(target)])
class_name = loaded.categories[target]

# ---------------------------------------------------------------- the main figure
with layout.figure:
    # The map first (first on a phone too), then the overlay, then the model's view, smaller.
    c_map, c_overlay, c_view = st.columns([1, 1, 0.75], gap="small")
    c_map.image(
        pictures.heat_png,
        output_format="PNG",
        caption=map_caption,
        alt=_(
            "Saliency map ({method}) for class {target}, {name}: bright where the class score "
            "is most sensitive to the pixel."
        ).format(method=_(METHOD_NAMES[map_method]), target=target, name=class_name),
        width="stretch",
    )
    c_overlay.image(
        pictures.overlay_png,
        output_format="PNG",
        caption=_("Overlay (alpha {alpha:.2f})").format(alpha=alpha),
        alt=_("The saliency map for {name} drawn over the image.").format(name=class_name),
        width="stretch",
    )
    c_view.image(
        pictures.view_png,
        output_format="PNG",
        caption=_("What the model sees"),
        alt=_("The input image resized and cropped to what the classifier sees."),
        width="stretch",
    )
    if notes_warning:
        st.warning(notes_warning, icon=":material/warning:")
    st.markdown(
        _("Explaining **{target}: {name}** (p = {prob:.3f}) with {method}. {provenance}").format(
            target=target,
            name=class_name,
            prob=prob,
            method=_(METHOD_NAMES[map_method]),
            provenance=provenance,
        )
    )

# ---------------------------------------------------------------- details: how the map was made
with how_area:
    st.header(_("How this map was made"), anchor=False)
    if recipe == "notes":
        st.caption(
            _(
                "The notes' recipe ({ref}): loss.backward() on the cross-entropy for the "
                "explained class (the notes leave target_loss open), sum of |x.grad| over "
                "channels, P1..P99 stretched to 0..255 and clipped, np.uint8 truncation. Method, "
                "objective and scaling are fixed to theirs."
            ).format(ref=cite(S.NOTES_RECIPE_REF))
        )
    else:
        st.caption(
            _(
                "The default. It explains the class score itself and never divides by zero; "
                "the section 'The notes' recipe' measures how far the notes' recipe is from it."
            )
        )
    share = pictures.share
    lines = [
        (
            _(
                "The model gives **{name}** a probability of {prob:.3f}. Each pixel's brightness "
                "is |d score / d pixel| reduced by **{reduce}** over R, G, B."
            )
            if objective == "logit"
            else _(
                "The model gives **{name}** a probability of {prob:.3f}. Each pixel's brightness "
                "is |d loss / d pixel| reduced by **{reduce}** over R, G, B."
            )
        ).format(name=class_name, prob=prob, reduce=reduce),
        (
            _(
                "Pixels at or below the 1st percentile ({low:.3g}) are black and pixels at or "
                "above the 99th ({high:.3g}) full colour; they hold {share:.1%} of the total "
                "saliency. In between, 255 (s - P1) / (P99 - P1) is truncated to an integer by "
                "np.uint8, as cvglue.scale_min_max and the notes do."
            ).format(low=comparison.p_low, high=comparison.p_high, share=share)
            if pictures.notes_scaled
            else _(
                "Pixels at or above the {percentile:g}th percentile are drawn at full colour; "
                "they hold {share:.1%} of the total saliency. Values are divided by that "
                "percentile plus 1e-12 and rounded, so a flat map stays black instead of "
                "dividing by zero."
            ).format(percentile=percentile, share=share)
        ),
    ]
    if result.completeness is not None:
        total, delta = result.completeness
        lines.append(
            _(
                "Integrated Gradients completeness: attributions sum to {total:.3f}, while "
                "f(image) - f(baseline) = {delta:.3f}. More steps bring the two closer."
            ).format(total=total, delta=delta)
        )
    if map_method == "smoothgrad":
        lines.append(
            _(
                "SmoothGrad averaged {n} noisy copies (sigma {sigma:.2f}) in batches; "
                "noise averages away the speckle of a single gradient."
            ).format(n=n, sigma=sigma)
        )
    st.markdown("\n\n".join(lines))

    m1, m2, m3 = st.columns(3)
    timing_help = _(
        "Wall-clock time measured when this map was computed, summed over {batches} pass(es). "
        "Excluded: model loading, preprocessing, scaling, drawing, and the one-time warm-up pass "
        "after loading. On a busy CPU it includes time spent waiting for other work (other "
        "sessions, the browser)."
    ).format(batches=result.batches)
    m1.metric(_("Forward"), f"{result.forward_ms:.0f} ms", help=timing_help)
    m2.metric(_("Backward (input gradient)"), f"{result.backward_ms:.0f} ms", help=timing_help)
    m3.metric(_("Images through the model"), result.images)
    per_image = (
        _(" ({forward:.0f} + {backward:.0f} ms per image)").format(
            forward=result.forward_ms / result.images, backward=result.backward_ms / result.images
        )
        if result.images > 1
        else ""
    )
    warm_text = (
        _("a one-time warm-up pass after loading ({ms:.0f} ms) is not included").format(ms=warm_ms)
        if warm_ms is not None
        else _("no warm-up pass ran, so one-time initialisation may be included")
    )
    st.caption(
        _(
            "Timed once, when this map was computed: {images} image(s) in {batches} forward + "
            "backward pass(es) on `{device}`{per_image}, wall clock. Model loading is not "
            "included; {warm}. Other work on the CPU (other sessions or programs, the browser "
            "drawing this page) slows a single run; `python -m benchmarks.saliency` prints "
            "steady-state medians. Maps made for the bundled classifiers are shared by all "
            "sessions (same image, class, method and settings): {provenance}"
        ).format(
            images=result.images,
            batches=result.batches,
            device=loaded.device,
            per_image=per_image,
            warm=warm_text,
            provenance=provenance,
        )
    )
    d1, d2, d3 = st.columns(3)
    d1.download_button(
        _("Map (PNG)"),
        pictures.map_png,
        file_name=f"saliency_{map_method}_{target}.png",
        mime="image/png",
        key="saliency.download_map",
        icon=":material/download:",
    )
    d2.download_button(
        _("Overlay (PNG)"),
        pictures.overlay_png,
        file_name=f"saliency_overlay_{map_method}_{target}.png",
        mime="image/png",
        key="saliency.download_overlay",
        icon=":material/download:",
    )
    retime = d3.button(
        _("Time again"),
        key="saliency.retime",
        help=_("Median of 5 back-to-back forward + backward passes on one image."),
    )
    if retime:
        with st.spinner(_("Timing 5 forward + backward passes ...")):
            try:
                st.session_state["saliency._retime"] = (
                    map_key,
                    S.time_gradient_pass(loaded.model, x, int(target), objective=objective),
                )
            except (ValueError, RuntimeError) as error:
                st.error(
                    _(WHAT_TO_CHANGE).format(
                        message=tr(error), hint=_("try another model or objective.")
                    )
                )
    retimed = st.session_state.get("saliency._retime")
    if retimed is not None and retimed[0] == map_key:
        timing: S.PassTiming = retimed[1]
        st.caption(
            _(
                "Median of {repeats} back-to-back passes on one image, measured on request: "
                "forward {forward:.0f} ms, backward {backward:.0f} ms."
            ).format(repeats=timing.repeats, forward=timing.forward_ms, backward=timing.backward_ms)
        )

# ---------------------------------------------------------------- details: sanity check
with sanity_area:
    st.header(_("Sanity check"), anchor=False)
    st.markdown(
        _(
            "**Cascading randomization** (Adebayo et al. 2018): a copy of the model gets its "
            "layers re-drawn at random from the top down, and the map is recomputed after each "
            "layer. If the map does not change, it was explaining the image, not the model."
        )
    )
    layer_names = S.randomizable_layers(loaded.model)
    if not layer_names:
        st.warning(_("This model exposes no parameterized layers to randomize."))
    else:
        k = st.slider(
            _("Layers to randomize (from the top)"),
            1,
            len(layer_names),
            min(len(layer_names), 6),
            key="saliency.sanity_layers",
            **BOUND,
        )
        sanity_estimate = S.estimate_sanity(
            method, int(k), n=int(n), steps=int(steps), per_image_ms=per_image_ms
        )
        st.caption(
            _(
                "{maps} saliency maps = {images} images through the model with the current "
                "method, about {seconds:.0f} s."
            ).format(maps=k + 1, images=sanity_estimate.images, seconds=sanity_estimate.seconds)
        )
        # A toggle, not a button, so a lesson link can open the page with the test run
        # (?saliency.sanity=true); while it is on, every rerun shows the test for the current
        # settings, from the shared cache (or this session's, for an uploaded model) when the
        # map, class and layers are unchanged.
        run_sanity = st.toggle(
            _("Run the randomisation test"),
            value=False,
            key="saliency.sanity",
            **BOUND,
            help=_(
                "Recomputed whenever the map, the class or the number of layers changes while "
                "this is on."
            ),
        )
        sanity_key = (cache_key, int(k), float(percentile))
        stored = st.session_state.get("saliency._sanity")
        held_sanity = None
        if run_sanity and (stored is None or stored[0] != sanity_key) and shared:
            probe_slot = st.empty()  # a cache hit replays the test's progress bar: cleared
            with probe_slot.container():
                held_sanity = _held(runs, sanity_key, lambda: _shared_sanity(
                    model_key, image_digest, int(target), method, params_key, int(k),
                    float(percentile), loaded.model, x, params, _probe=True))  # fmt: skip
            probe_slot.empty()
        if run_sanity and (stored is None or stored[0] != sanity_key):
            # Like the map: above the budget the test waits for a click stating its time (a
            # link may ask for it, ?saliency.sanity=true), unless the shared cache holds it.
            run_sanity = heavy_gate(
                "saliency.sanity", sanity_estimate.seconds, sanity_key,
                what=_("the sanity check: {maps} maps, {images} images").format(
                    maps=k + 1, images=sanity_estimate.images),
                ready=held_sanity is not None,
            )  # fmt: skip
        if run_sanity and (stored is None or stored[0] != sanity_key):
            sanity_job = (
                heavy_job(_("Sanity check"))
                if sanity_estimate.seconds > budget_s() and held_sanity is None
                else contextlib.nullcontext()
            )
            try:
                with sanity_job:
                    if held_sanity is not None:
                        outcome = held_sanity
                    elif shared:
                        with _computing(runs, sanity_key):
                            outcome = _shared_sanity(
                                model_key, image_digest, int(target), method, params_key,
                                int(k), float(percentile), loaded.model, x, params,
                            )  # fmt: skip
                    else:
                        outcome = _randomize(
                            loaded.model, x, int(target), method, int(k), float(percentile),
                            params,
                        )
            except (ValueError, RuntimeError) as error:
                outcome = error.args[0] if len(error.args) == 1 else str(error)  # T or str
            stored = (sanity_key, outcome)
            st.session_state["saliency._sanity"] = stored
        if run_sanity and isinstance(stored[1], str):
            st.error(
                _(WHAT_TO_CHANGE).format(
                    message=tr(stored[1]), hint=_("try fewer layers or the vanilla method.")
                )
            )
        elif run_sanity:
            sanity: S.RandomizationResult = stored[1]
            steps_axis = list(range(len(sanity.layers) + 1))
            fig = go.Figure(
                go.Scatter(
                    x=steps_axis,
                    y=[1.0, *sanity.correlations],
                    mode="lines+markers",
                    text=[_("original"), *sanity.layers],
                    hovertemplate=_(
                        "%{x} layer(s), last: %{text}<br>Spearman %{y:.3f}<extra></extra>"
                    ),
                )
            )
            fig.update_layout(
                xaxis_title=_("randomized layers (top down)"),
                yaxis_title=_("Spearman vs original"),
                yaxis_range=[-0.2, 1.05],
                height=360,
                margin=dict(l=10, r=10, t=30, b=10),
            )
            show_chart(
                fig,
                alt=_(
                    "Spearman rank correlation between the original saliency map and the map "
                    "after randomizing more and more layers from the top: {values}"
                ).format(values=", ".join(f"{c:.2f}" for c in sanity.correlations)),
                width="stretch",
                key="saliency.sanity_chart",
            )
            st.markdown(tr(S.read_randomization(sanity)))
            shown = np.linspace(0, len(sanity.maps) - 1, num=min(4, len(sanity.maps)), dtype=int)
            cols = st.columns(len(shown) + 1)
            cols[0].image(
                S.colorize(sanity.original, colormap),
                caption=_("original"),
                alt=_("The original saliency map."),
                width="stretch",
            )
            for col, i in zip(cols[1:], shown, strict=True):
                col.image(
                    S.colorize(sanity.maps[i], colormap),
                    caption=_("{k} layer(s): up to {layer}").format(
                        k=i + 1, layer=sanity.layers[i]
                    ),
                    alt=_("Saliency map after randomizing {k} layer(s), up to {layer}.").format(
                        k=i + 1, layer=sanity.layers[i]
                    ),
                    width="stretch",
                )

# ---------------------------------------------------------------- details: the notes' recipe
with notes_area:
    st.header(_("The notes' recipe"), anchor=False)
    st.markdown(
        _(
            "**The notes' recipe** ({ref}) backpropagates a *loss*, sums |x.grad| over R, G, B, "
            "and scales with `cvglue.scale_min_max(s, 0, 255, percentile=99)`: P1 and P99 "
            "(NumPy's default linear percentiles) are stretched to 0 and 255, values outside "
            "are clipped, and `np.uint8` truncates. Choose *The notes'* under **Recipe** to see "
            "their map, reproduced exactly."
        ).format(ref=cite(S.NOTES_RECIPE_REF))
    )
    st.subheader(_("Same map, two scalings"), anchor=False)
    n1, n2, _n3 = st.columns(3)
    n1.image(
        pictures.app_png,
        output_format="PNG",
        caption=_("The app's: s / (P99 + 1e-12), rounded"),
        alt=_("The current map with the app's scaling."),
        width="stretch",
    )
    if comparison.notes is None:
        n2.warning(
            _("The notes' scaling: {reason}.").format(reason=tr(comparison.notes_error)),
            icon=":material/warning:",
        )
        st.caption(
            _("The app divides by P99 + 1e-12 instead, so a flat map never divides by zero.")
        )
    else:
        n2.image(
            pictures.notes_png,
            output_format="PNG",
            caption=_("The notes': (s - P1) / (P99 - P1), clipped, truncated"),
            alt=_("The current map with the notes' scaling."),
            width="stretch",
        )
        st.markdown(
            (
                _(
                    "On this map (the current logit gradient) P1 = {low:.4g} and P99 = "
                    "{high:.4g}. The two scalings differ by up to **{max_diff} grey levels** "
                    "(mean {mean_diff:.2f}; {share:.1%} of the pixels differ): the notes "
                    "subtract P1 ({ratio:.1%} of P99) and truncate, the app does not subtract "
                    "and rounds."
                )
                if objective == "logit"
                else _(
                    "On this map (the current loss gradient) P1 = {low:.4g} and P99 = "
                    "{high:.4g}. The two scalings differ by up to **{max_diff} grey levels** "
                    "(mean {mean_diff:.2f}; {share:.1%} of the pixels differ): the notes "
                    "subtract P1 ({ratio:.1%} of P99) and truncate, the app does not subtract "
                    "and rounds."
                )
            ).format(
                low=comparison.p_low,
                high=comparison.p_high,
                max_diff=comparison.max_diff,
                mean_diff=comparison.mean_diff,
                share=comparison.share_differing,
                ratio=comparison.p_low / comparison.p_high,
            )
        )
    st.subheader(_("Why the app's recipe is the default"), anchor=False)
    st.markdown(
        _(
            "- **Objective.** The class score's gradient explains the class itself (Simonyan "
            "et al.). The cross-entropy loss's gradient is -(1 - p) times that gradient plus "
            "the other classes' score gradients weighted by their probabilities: here p = "
            "{prob:.3f}, so the explained class contributes with weight {weight:.3f} and the "
            "rest comes from the competitors; the more confident the model, the more the loss "
            "map is about the other classes.\n"
            "- **Scaling.** Dividing by P99 + 1e-12 keeps zero gradient black and is defined "
            "for every map; `cvglue.scale_min_max` divides by P99 - P1, which is zero when the "
            "middle {middle} of the map has one value (a flat map gives 0 / 0 = NaN), and "
            "truncation sits half a grey level below rounding on average.\n"
            "- The notes' recipe stays one click away under **Recipe**, reproduced bit for bit."
        ).format(prob=prob, weight=1 - prob, middle="98%")  # "% o" in a msgid reads as %-format
    )
    st.subheader(_("What the notes say, and what PyTorch does"), anchor=False)
    for callout in callouts_of("lessons.saliency.maps").values():
        notes_callout(callout)

with code_area:
    show_code(
        S.snippet_for(
            method,
            model_name=loaded.name,
            custom_file=upload.name if upload is not None else None,
            architecture=architecture if upload is not None else None,
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
