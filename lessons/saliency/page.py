"""Saliency: which pixels drive a real ImageNet classifier's decision, with a sanity check.

The story is at the end: the classifier, the image and its top-5, the controls, the map, then
the details. Maps and sanity checks of the bundled classifiers are made once for the whole
server (shared caches); one above the time budget waits for a click that states its time and
runs as one of the server's few heavy jobs (ui.heavy). Numbers, pictures and longer texts come
from the lesson's pure modules (lessons/saliency/__init__.py lists them).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
import torch

from core.text import N_, T
from lessons.saliency import explanations as E
from lessons.saliency import maps as S
from lessons.saliency import models as M
from lessons.saliency import pictures as P
from lessons.saliency import sanity as R
from lessons.saliency import shared_runs as runs_of
from lessons.saliency.explanations import METHOD_NAMES, MODEL_SOURCES, TARGET_MODES
from lessons.saliency.scaling import NOTES_PERCENTILE, NOTES_RECIPE_REF, RECIPES
from lessons.saliency.shared_runs import NotInSharedCache, SharedRuns, computing, held
from lessons.saliency.snippet import snippet_for
from ui.caching import MAX_SHARED_MODEL_BYTES, SHARED_TTL_S, bounded_cache
from ui.charts import show_chart
from ui.code import show_code
from ui.heavy import budget_s, heavy_gate, heavy_job
from ui.i18n import _, cite, tr, translator
from ui.image_input import image_input
from ui.lesson import lesson_layout
from ui.links import BOUND
from ui.markdown import plain
from ui.notes_callout import callouts_of, notes_callout, notes_citation
from ui.pictures import digest, upload_digest
from ui.settings import current_settings

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


# ---------------------------------------------------------------- shared caches
@st.cache_resource(show_spinner=False)
def _shared_runs() -> SharedRuns:
    return SharedRuns()


def _warmed(loaded: M.LoadedModel) -> tuple[M.LoadedModel, float | None]:
    """The model and one untimed gradient pass's time right after loading (None: it failed; the
    map then reports the problem), so the page's times leave out one-time initialisation."""
    try:
        x = torch.zeros(1, 3, loaded.preprocessing.crop, loaded.preprocessing.crop)
        return loaded, S.warm_up(loaded.model, x.to(loaded.device))
    except (ValueError, RuntimeError):
        return loaded, None


@bounded_cache(max_entries=4, ttl=SHARED_TTL_S, kind="resource", max_bytes=MAX_SHARED_MODEL_BYTES)
def _registry_model(name: str, device: str, allow_download: bool):
    # Shared by all sessions: the model is in eval mode with frozen parameters and every core
    # function works on per-call input tensors (or a deep copy), so nothing here is mutated.
    return _warmed(M.load_model(name, device, allow_download=allow_download))


@bounded_cache(max_entries=2, ttl=SHARED_TTL_S, kind="resource", max_bytes=MAX_SHARED_MODEL_BYTES)
def _custom_model(digest: str, filename: str, architecture: str, device: str, _data: bytes):
    model = M.load_custom_model(_data, filename=filename, architecture=architecture, device=device)
    return _warmed(model)


def _classify(loaded: M.LoadedModel, x: torch.Tensor) -> tuple[list[tuple[int, str, float]], int]:
    """Top-5 (class, name, probability) of ``x`` (1, 3, S, S), and the class count."""
    with torch.no_grad():
        logits = loaded.model(x)
    return M.top_k(logits, loaded.categories, 5), int(logits.shape[1])


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _shared_classification(model_key: str, image_digest: str, _loaded: M.LoadedModel, _x):
    """:func:`_classify` once per registry model and image for the whole server: a class opening
    the page at its defaults runs one forward pass, not fifty. (An uploaded model's key is its
    file name, which two students may share; those are classified per session.)"""
    return _classify(_loaded, _x)


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S, kind="resource")
def _shared_model_input(model_key: str, image_digest: str, _loaded: M.LoadedModel, _image):
    """The input (1, 3, S, S) and the view (S, S, 3) once per registry model and image: shared
    and read-only (the gradient passes clone ``x`` before asking for its gradient)."""
    return _loaded.preprocess(_image), _loaded.model_view(_image)


@contextlib.contextmanager
def _progress_bar(label: str, prefix: bool = True):
    """A progress bar for the block; yields the ``progress(fraction, text)`` core calls."""
    bar = st.progress(0.0, text=label)

    def progress(f: float, text: str) -> None:
        bar.progress(min(max(f, 0.0), 1.0), text=f"{label}: {tr(text)}" if prefix else tr(text))

    try:
        yield progress
    finally:
        bar.empty()


def _compute(model, x, target: int, method: str, params: dict, label: str):
    """maps.compute_saliency with a progress bar; returns (result, seconds, when)."""
    t0 = time.perf_counter()
    with _progress_bar(label) as progress:
        result = S.compute_saliency(model, x, target, method, progress=progress, **params)
    return result, time.perf_counter() - t0, time.time()


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _shared_saliency(
    model_key: str, image_digest: str, target: int, method: str, params_key: tuple, _label: str,
    _model, _x: torch.Tensor, _params: dict, _ran: list, _probe: bool = False,
) -> tuple[S.SaliencyResult, float, float]:  # fmt: skip
    # One map per (model, image bytes, class, method and its parameters) for the whole server:
    # the result does not depend on the session, and Streamlit computes a key once while other
    # sessions asking for the same key wait for it. `_ran` tells the caller it was computed here;
    # `_probe` only asks whether the map is cached (shared_runs.held).
    if _probe:
        raise NotInSharedCache
    _ran.append(True)
    return _compute(_model, _x, target, method, _params, _label)


def _randomize(model, x, target: int, method: str, k: int, percentile: float, params: dict):
    """maps.randomization_test of the top ``k`` layers, with a progress bar."""
    with _progress_bar(_("Randomizing ..."), prefix=False) as progress:
        return S.randomization_test(model, x, target, method, k, progress=progress,
                                    percentile=percentile, **params)  # fmt: skip


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _shared_sanity(
    model_key: str, image_digest: str, target: int, method: str, params_key: tuple, k: int,
    percentile: float, _model, _x: torch.Tensor, _params: dict, _probe: bool = False,
) -> R.RandomizationResult:  # fmt: skip
    # One sanity check per (model, image, class, method and its parameters, layers, percentile)
    # for the whole server, like the maps: a class opening a lesson link with the test on runs it
    # once. (The random weights come from the seed in params_key.) `_probe`: as for the maps.
    if _probe:
        raise NotInSharedCache
    return _randomize(_model, _x, target, method, k, percentile, _params)


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S, kind="resource")
def _shared_pictures(
    cache_key: tuple, use_notes: bool, percentile: float, alpha: float, colormap: str,
    _saliency: torch.Tensor, _view: np.ndarray,
) -> P.Pictures:  # fmt: skip
    """pictures.make_pictures once per shared map (``cache_key``) and drawing options: a class
    on the same link scales, colours and encodes the map once, not fifty times."""
    return P.make_pictures(_saliency, _view, use_notes, percentile, alpha, colormap)


# ---------------------------------------------------------------- drawing pieces
def _fail(message: str, hint: str) -> None:
    """An error in the figure's place and stop; both texts already in the session's language."""
    # core's message can quote an uploaded file (its name, an archive entry): not markdown
    layout.figure.error(_(WHAT_TO_CHANGE).format(message=plain(message), hint=hint),
                        icon=":material/error:")  # fmt: skip
    st.stop()


def _bound(widget, label: str, options: list, key: str, names: dict | None = None, **kwargs):
    """``widget`` (st.radio, st.selectbox) bound to the URL; options shown by their translated
    ``names`` (the English values are the link's and the code's)."""
    if names is not None:
        say = translator()
        kwargs["format_func"] = lambda value: say(names[value])
    return widget(label, options, key=key, **BOUND, **kwargs)


def _images(columns, pngs, captions) -> None:
    """Pictures side by side: a PNG per column with its (caption, alt), translated here."""
    for column, png, (caption, alt) in zip(columns, pngs, captions, strict=True):
        column.image(png, output_format="PNG", caption=tr(caption), alt=tr(alt), width="stretch")


# ---------------------------------------------------------------- the classifier and the image
@dataclass(frozen=True)
class _Classifier:
    """The model the maps explain; ``shared``: from the registry, so all sessions share its
    results (an uploaded model's name is not a safe shared key)."""

    loaded: M.LoadedModel
    warm_ms: float | None
    shared: bool = True
    upload_name: str | None = None
    architecture: str | None = None


def _registry_classifier() -> _Classifier:
    """The model box; a model whose weights are not here offers a download, or stops."""
    entries = {entry.spec.name: entry for entry in M.list_models()}
    missing = [_(entry.spec.title) for entry in entries.values() if not entry.available]
    # The option text is the link's value, so it names the model only: whether its weights are
    # here differs between machines, and a link must open on every one.
    titles = {name: entry.spec.title for name, entry in entries.items()}
    name = _bound(st.selectbox, _("Model"), list(entries), "saliency.model", titles,
                  help=tr(E.model_help(missing)))  # fmt: skip
    entry, title = entries[name], _(titles[name])
    if entry.available:
        with layout.figure, st.spinner(_("Loading {title} ...").format(title=title)):
            try:
                return _Classifier(*_registry_model(name, settings.device, False))
            except ValueError as error:
                _fail(tr(error), _(E.REGISTRY_HINT))
    reason = tr(entry.reason)
    st.warning(_("{title} is unavailable: {reason}").format(title=title, reason=reason),
               icon=":material/block:")  # fmt: skip
    if entry.weights_path is not None:
        st.caption(_("Put the weight file exactly here:"))
        st.code(str(entry.weights_path), language=None)
    if st.button(_("Try to download the weights"), key="saliency.download_weights"):
        with st.spinner(_("Downloading {title} ...").format(title=title)):
            try:
                return _Classifier(*_registry_model(name, settings.device, True))
            except ValueError as error:
                st.error(tr(error))
    layout.figure.info(_(E.UNAVAILABLE_OFFLINE).format(title=title), icon=":material/block:")
    st.stop()


def _uploaded_classifier() -> _Classifier:
    """The architecture box and the weights upload (lessons.saliency.models reads weights only,
    never code); stops until a file is there, and says why one cannot be loaded."""
    architectures = list(M.CUSTOM_ARCHITECTURES)
    architecture = _bound(st.selectbox, _("Architecture the weights belong to"), architectures,
                          "saliency.architecture", index=architectures.index("resnet18"),
                          help=_(E.ARCHITECTURE_HELP))  # fmt: skip
    upload = st.file_uploader(_("Weights file: a state_dict (.pt, .pth) or .safetensors"),
                              type=["pt", "pth", "safetensors"], key="saliency.model_upload",
                              help=tr(E.upload_help()))  # fmt: skip
    if upload is None:
        layout.figure.info(_(E.UPLOAD_FIRST), icon=":material/upload:")
        st.stop()
    data = upload.getvalue()
    with layout.figure, st.spinner(_("Loading {file} ...").format(file=plain(upload.name))):
        try:
            loaded, warm_ms = _custom_model(upload_digest(upload), upload.name, architecture,
                                            settings.device, data)  # fmt: skip
        except ValueError as error:
            _fail(tr(error), _(E.UPLOAD_HINT))
    return _Classifier(loaded, warm_ms, False, upload.name, architecture)


def _classifier() -> _Classifier:
    """The "Classifier and preprocessing" section: choose or upload a model, see what it sees."""
    st.header(_("Classifier and preprocessing"), anchor=False)
    # Open when the classifier is not the default one; a link's value is in the URL (defaults
    # never are) before the control has read it.
    defaults = {"saliency.model_source": MODEL_SOURCES[0], "saliency.model": "efficientnet_lite0"}
    changed = any(key in st.query_params or st.session_state.get(key, default) != default
                  for key, default in defaults.items())  # fmt: skip
    with st.expander(_("Classifier: choose a model or upload your own"), expanded=changed):
        source = _bound(st.radio, _("Classifier"), MODEL_SOURCES, "saliency.model_source",
                        format_func=translator(), horizontal=True)  # fmt: skip
        model = _registry_classifier() if source == MODEL_SOURCES[0] else _uploaded_classifier()
        loaded = model.loaded
        weights = _("Weights: {source} · device `{device}`")
        st.caption(weights.format(source=plain(tr(loaded.source)), device=loaded.device))
    preprocessing = plain(tr(loaded.describe_preprocessing()))
    st.markdown(_("**{model}**: {preprocessing}.").format(model=plain(loaded.name),
                                                          preprocessing=preprocessing))  # fmt: skip
    st.caption(_(E.VIEW_NOTE))
    return model


@dataclass(frozen=True)
class _Subject:
    """The image as the model sees it (``x`` (1, 3, S, S), ``view`` (S, S, 3) uint8), the
    model's top-5 and class count, and the keys of its shared results."""

    x: torch.Tensor
    view: np.ndarray
    top5: list[tuple[int, str, float]]
    num_classes: int
    image_digest: str
    model_key: str


def _subject(model: _Classifier) -> _Subject:
    """The image control (stops without an image), and the image through the model."""
    with layout.controls:
        image = image_input("saliency.image")
    if image is None:
        layout.figure.info(_(E.CHOOSE_IMAGE), icon=":material/image:")
        st.stop()
    image, notice = M.ensure_min_side(image)
    if notice:
        layout.controls.warning(tr(notice), icon=":material/zoom_in:")
    loaded, image_digest = model.loaded, digest(image)
    model_key = f"{loaded.source} · {loaded.device}"
    try:
        if model.shared:
            x, view = _shared_model_input(model_key, image_digest, loaded, image)
            top5, num_classes = _shared_classification(model_key, image_digest, loaded, x)
        else:
            x, view = loaded.preprocess(image), loaded.model_view(image)
            top5, num_classes = _classify(loaded, x)
    except (ValueError, RuntimeError) as error:
        _fail(_("The model could not classify this image: {error}").format(error=tr(error)),
              _("try another image or model."))  # fmt: skip
    return _Subject(x, view, top5, num_classes, image_digest, model_key)


# ---------------------------------------------------------------- the controls
def _target_widgets(top1: int, num_classes: int, categories: list[str]) -> int:
    """The "Explain" radio and class box; returns the class to explain.

    Both are bound to the URL (``?saliency.target_class=292: tiger``) and keep their values while
    hidden (the upload step, a page switch) through Streamlit's own persistence, which also tells
    the browser the kept value, so the box always shows the class the map explains. Their
    defaults are fixed (the predicted class): a default that followed the last choice would
    leave that choice out of the link.
    """
    mode = _bound(st.radio, _("Explain"), TARGET_MODES, "saliency.target_mode",
                  format_func=translator(), horizontal=True)  # fmt: skip
    target = top1
    if mode != TARGET_MODES[0]:
        target = _bound(st.selectbox, _("Class (type to search)"), list(range(num_classes)),
                        "saliency.target_class", index=top1,
                        format_func=lambda i: f"{i}: {categories[i]}")  # fmt: skip
    name = categories[target]
    st.caption(_("Explaining class {target}: **{name}**").format(target=target, name=name))
    return int(target)


def _controls(subject: _Subject, categories: list[str]) -> S.MapChoice:
    """Every control of the map: class, recipe, method and its parameters, map options."""
    target = _target_widgets(subject.top5[0][0], subject.num_classes, categories)
    recipe = _bound(st.radio, _("Recipe"), list(RECIPES), "saliency.recipe", E.RECIPE_NAMES,
                    horizontal=True, help=tr(E.recipe_help()))  # fmt: skip
    n, sigma, steps, baseline = 25, 0.15, 32, "black"
    method, objective, reduce = "vanilla", "loss", "sum"  # the notes' recipe fixes these
    if recipe != "notes":
        methods_help = " · ".join(_(text) for text in S.METHODS.values())
        method = _bound(st.selectbox, _("Method"), list(S.METHODS), "saliency.method",
                        METHOD_NAMES, help=methods_help)  # fmt: skip
    if method == "smoothgrad":
        n = st.slider(_("Noisy samples n"), 1, 50, 25, key="saliency.n", **BOUND)
        sigma = st.slider(_("Noise sigma"), 0.0, 0.5, 0.15, 0.01, key="saliency.sigma", **BOUND,
                          help=_(E.SIGMA_HELP))  # fmt: skip
    elif method == "integrated_gradients":
        # At most 64 steps: the completeness gap (the lesson's point about steps) already
        # shrinks visibly from 4 to 64 steps on the bundled classifier, while each step is one
        # more image through the model (128 steps: ~20 s of the shared CPU for one map, and
        # 22 times that for a sanity check of all layers).
        steps = st.slider(_("Steps on the path"), 4, 64, 32, key="saliency.steps", **BOUND)
        baseline = _bound(st.radio, _("Baseline"), list(S.BASELINES), "saliency.baseline",
                          E.BASELINE_NAMES, horizontal=True)  # fmt: skip
    with st.expander(_("Map options")):
        percentile = NOTES_PERCENTILE
        if recipe != "notes":
            objective = _bound(st.radio, _("Objective"), list(S.OBJECTIVES), "saliency.objective",
                               E.OBJECTIVE_NAMES, help=_(E.OBJECTIVE_HELP))  # fmt: skip
            reduce = _bound(st.radio, _("Channel reduction"), list(S.REDUCTIONS),
                            "saliency.reduce", E.REDUCE_NAMES)  # fmt: skip
            percentile = st.slider(_("Saturate at percentile"), 50.0, 100.0, 99.0, 0.5,
                                   key="saliency.percentile", **BOUND)  # fmt: skip
        else:
            st.caption(_(E.NOTES_SCALING).format(percentile=percentile))
        alpha = st.slider(_("Overlay alpha"), 0.0, 1.0, 0.5, 0.05, key="saliency.alpha", **BOUND)
        colormap = st.selectbox(_("Colormap"), list(P.COLORMAPS), key="saliency.colormap", **BOUND)
    return S.MapChoice(target, recipe, method, objective, reduce, int(n), float(sigma),
                       int(steps), baseline, float(percentile), float(alpha), colormap,
                       settings.seed)  # fmt: skip


# ---------------------------------------------------------------- the map
@dataclass(frozen=True)
class _Map:
    """The map on screen: ``method`` is the chosen one's, or "vanilla" while that one waits for
    a click (the controls and the sanity check keep the chosen method and ``choice_key``)."""

    result: S.SaliencyResult
    method: str
    key: tuple
    choice_key: tuple
    per_image_ms: float
    provenance: T


def _made_map(model: _Classifier, subject: _Subject, choice: S.MapChoice) -> _Map:
    """The map from the shared cache, this session's last run, or computed now."""
    runs, params = _shared_runs(), choice.params(model.loaded.black_level())
    choice_key = key = choice.key(subject.model_key, subject.image_digest)
    per_image_ms = runs_of.announced_per_image_ms(runs, subject.model_key, choice.method)
    estimate = S.estimate_run(choice.method, n=choice.n, steps=choice.steps,
                              per_image_ms=per_image_ms)  # fmt: skip
    gate_area, slot = layout.figure.container(), layout.figure.empty()
    kept = st.session_state.get("saliency._result")
    method, map_estimate, in_session = choice.method, estimate, kept is not None and kept[0] == key
    ready = None if in_session else _held_map(model, subject, key, params, slot)
    # A map of several images whose expected time is above the budget waits for a click that
    # states it, whether its settings came from a link or from this session's controls (a link
    # is anyone's input). Until then the page shows the vanilla gradient, one pass, so the whole
    # lesson is there at once. A map the shared cache holds now, or this session's last one,
    # needs no click. One image is the cheapest map there is, so it never waits.
    if estimate.images > 1:
        with gate_area:
            what = _("the {method} map of {images} images")
            what = what.format(method=_(METHOD_NAMES[method]), images=estimate.images)
            if not heavy_gate("saliency.map", estimate.seconds, choice_key, what=what,
                              ready=ready is not None or in_session):  # fmt: skip
                st.caption(_(E.MEANWHILE))
                method, ready = "vanilla", None
                key = choice.key(subject.model_key, subject.image_digest, method)
                vanilla_ms = runs_of.one_pass_ms(runs, subject.model_key, per_image_ms)
                map_estimate = S.estimate_run(method, per_image_ms=vanilla_ms)
                in_session = kept is not None and kept[0] == key
    label = _(E.MAP_LABEL).format(method=_(METHOD_NAMES[method]), images=map_estimate.images,
                                  seconds=map_estimate.seconds)  # fmt: skip
    ran: list = []
    if ready is not None or in_session:
        made = ready if ready is not None else kept[1]
    else:  # heavy work queues for the server's few heavy jobs; the estimate alone decides
        job = heavy_job(label) if map_estimate.seconds > budget_s() else contextlib.nullcontext()
        with slot.container(), job:
            made = _compute_map(model, subject, key, params, label, ran, slot)
    slot.empty()
    st.session_state["saliency._result"] = (key, made)
    result, made_s, made_at = made
    if ran and result.images:
        ms = (result.forward_ms + result.backward_ms) / result.images
        runs_of.record_per_image_ms(runs, subject.model_key, method, ms)
    ago_s = time.time() - made_at
    provenance = E.provenance(bool(ran), in_session, made_s, map_estimate.seconds, ago_s)
    return _Map(result, method, key, choice_key, per_image_ms, provenance)


def _held_map(model: _Classifier, subject: _Subject, key: tuple, params: dict, slot):
    """The map ``key`` from the shared cache when it holds it now (a registry model), else None.
    Asked inside the figure's slot: a cache hit replays the progress bar the computation drew,
    which the slot's next content replaces."""
    if not model.shared:
        return None
    with slot.container():
        return held(_shared_runs(), key, lambda: _shared_saliency(
            *key, "", model.loaded.model, subject.x, params, [], _probe=True))  # fmt: skip


def _compute_map(
    model: _Classifier, subject: _Subject, key: tuple, params: dict, label: str, ran: list, slot
) -> tuple[S.SaliencyResult, float, float]:
    """Compute the map (shared: once for the whole server); an error stops the page with it."""
    st.caption(_(E.MAP_COMPUTING).format(label=label))
    try:
        if model.shared:
            with computing(_shared_runs(), key):
                return _shared_saliency(*key, label, model.loaded.model, subject.x, params, ran)
        ran.append(True)
        return _compute(model.loaded.model, subject.x, key[2], key[3], params, label)
    except (ValueError, RuntimeError) as error:
        slot.empty()
        _fail(tr(error), _(E.MAP_HINT))


# ---------------------------------------------------------------- the figure and the details
def _figure(choice: S.MapChoice, shown: _Map, pictures: P.Pictures, name: str, prob: float) -> None:
    """The map, the overlay and the model's view side by side, and what they explain."""
    method = _(METHOD_NAMES[shown.method])
    ref = cite(NOTES_RECIPE_REF) if pictures.notes_scaled else None
    # The map first (first on a phone too), then the overlay, then the model's view, smaller.
    _images(st.columns([1, 1, 0.75], gap="small"),
            (pictures.heat_png, pictures.overlay_png, pictures.view_png),
            E.figure_captions(method, choice.objective, choice.reduce, choice.target, name,
                              choice.alpha, ref))  # fmt: skip
    if choice.recipe == "notes" and not pictures.notes_scaled:
        reason = tr(pictures.comparison.notes_error)
        st.warning(_("{reason}. The map uses the app's scaling instead.").format(reason=reason),
                   icon=":material/warning:")  # fmt: skip
    st.markdown(_(E.EXPLAINING).format(target=choice.target, name=name, prob=prob, method=method,
                                       provenance=tr(shown.provenance)))  # fmt: skip


def _how_it_was_made(
    model: _Classifier, subject: _Subject, choice: S.MapChoice, shown: _Map,
    pictures: P.Pictures, name: str, prob: float,
) -> None:  # fmt: skip
    """How the map was made, its timings (and a re-timing on request), and its downloads."""
    st.header(_("How this map was made"), anchor=False)
    st.caption(tr(E.recipe_caption(choice.recipe == "notes", cite(NOTES_RECIPE_REF))))
    lines = E.how_it_was_made(shown.result, class_name=name, prob=prob,
                              notes_scaled=pictures.notes_scaled, comparison=pictures.comparison,
                              percentile=choice.percentile, share=pictures.share, n=choice.n,
                              sigma=choice.sigma)  # fmt: skip
    st.markdown("\n\n".join(tr(line) for line in lines))
    result, timing_help = shown.result, tr(E.timing_help(shown.result))
    m1, m2, m3 = st.columns(3)
    m1.metric(_("Forward"), f"{result.forward_ms:.0f} ms", help=timing_help)
    m2.metric(_("Backward (input gradient)"), f"{result.backward_ms:.0f} ms", help=timing_help)
    m3.metric(_("Images through the model"), result.images)
    st.caption(tr(E.timing_note(result, model.loaded.device, model.warm_ms, shown.provenance)))
    d1, d2, d3 = st.columns(3)
    files, download = f"{shown.method}_{choice.target}.png", ":material/download:"
    d1.download_button(_("Map (PNG)"), pictures.map_png, file_name=f"saliency_{files}",
                       mime="image/png", key="saliency.download_map", icon=download)  # fmt: skip
    d2.download_button(_("Overlay (PNG)"), pictures.overlay_png, mime="image/png", icon=download,
                       file_name=f"saliency_overlay_{files}",
                       key="saliency.download_overlay")  # fmt: skip
    if d3.button(_("Time again"), key="saliency.retime", help=_(E.RETIME_HELP)):
        with st.spinner(_("Timing 5 forward + backward passes ...")):
            try:
                timing = S.time_gradient_pass(model.loaded.model, subject.x, choice.target,
                                              objective=choice.objective)  # fmt: skip
                st.session_state["saliency._retime"] = (shown.key, timing)
            except (ValueError, RuntimeError) as error:
                hint = _("try another model or objective.")
                st.error(_(WHAT_TO_CHANGE).format(message=tr(error), hint=hint))
    retimed = st.session_state.get("saliency._retime")
    if retimed is not None and retimed[0] == shown.key:
        timing: S.PassTiming = retimed[1]
        st.caption(_(E.RETIMED).format(repeats=timing.repeats, forward=timing.forward_ms,
                                       backward=timing.backward_ms))  # fmt: skip


def _sanity_check(model: _Classifier, subject: _Subject, choice: S.MapChoice, shown: _Map) -> None:
    """The cascading randomization test of the chosen method, when its toggle is on."""
    st.header(_("Sanity check"), anchor=False)
    st.markdown(_(E.SANITY_INTRO))
    layers = len(R.randomizable_layers(model.loaded.model))
    if not layers:
        st.warning(_(E.NO_LAYERS))
        return
    k = st.slider(_("Layers to randomize (from the top)"), 1, layers, min(layers, 6),
                  key="saliency.sanity_layers", **BOUND)  # fmt: skip
    estimate = S.estimate_sanity(choice.method, int(k), n=choice.n, steps=choice.steps,
                                 per_image_ms=shown.per_image_ms)  # fmt: skip
    st.caption(tr(E.sanity_cost(k, estimate.images, estimate.seconds)))
    # A toggle, not a button, so a lesson link can open the page with the test run
    # (?saliency.sanity=true); while it is on, every rerun shows the test for the current
    # settings, from the shared cache (or this session's, for an uploaded model) when the map,
    # class and layers are unchanged.
    if not st.toggle(_("Run the randomisation test"), value=False, key="saliency.sanity",
                     **BOUND, help=_(E.SANITY_TOGGLE_HELP)):  # fmt: skip
        return
    sanity_key = (shown.choice_key, int(k), choice.percentile)
    stored = st.session_state.get("saliency._sanity")
    if stored is None or stored[0] != sanity_key:
        outcome = _sanity_outcome(model, subject, choice, sanity_key, estimate)
        if outcome is None:
            return  # it waits for its click
        stored = (sanity_key, outcome)
        st.session_state["saliency._sanity"] = stored
    if isinstance(stored[1], str):
        hint = _("try fewer layers or the vanilla method.")
        st.error(_(WHAT_TO_CHANGE).format(message=tr(stored[1]), hint=hint))
    else:
        _show_sanity(stored[1], choice.colormap)


def _sanity_outcome(
    model: _Classifier, subject: _Subject, choice: S.MapChoice, sanity_key: tuple,
    estimate: S.RunEstimate,
) -> R.RandomizationResult | str | None:  # fmt: skip
    """The test's result (or its error's message), from the shared cache, or run now; None while
    it waits for its click."""
    (model_key, image_digest, target, method, params_key), k, percentile = sanity_key
    params = choice.params(model.loaded.black_level())
    args = (model_key, image_digest, target, method, params_key, k, percentile,
            model.loaded.model, subject.x, params)  # fmt: skip
    runs, ready = _shared_runs(), None
    if model.shared:
        probe_slot = st.empty()  # a cache hit replays the test's progress bar: cleared
        with probe_slot.container():
            ready = held(runs, sanity_key, lambda: _shared_sanity(*args, _probe=True))
        probe_slot.empty()
    # Like the map: above the budget the test waits for a click stating its time (a link may
    # ask for it, ?saliency.sanity=true), unless the shared cache holds it.
    what = _("the sanity check: {maps} maps, {images} images")
    what = what.format(maps=k + 1, images=estimate.images)
    if not heavy_gate("saliency.sanity", estimate.seconds, sanity_key, what=what,
                      ready=ready is not None):  # fmt: skip
        return None
    heavy = estimate.seconds > budget_s() and ready is None
    try:
        with heavy_job(_("Sanity check")) if heavy else contextlib.nullcontext():
            if ready is not None:
                return ready
            if model.shared:
                with computing(runs, sanity_key):
                    return _shared_sanity(*args)
            return _randomize(model.loaded.model, subject.x, target, method, k, percentile, params)
    except (ValueError, RuntimeError) as error:
        return error.args[0] if len(error.args) == 1 else str(error)  # T or str


def _show_sanity(sanity: R.RandomizationResult, colormap: str) -> None:
    show_chart(R.correlation_chart(sanity, translate=_), alt=tr(R.correlation_chart_alt(sanity)),
               width="stretch", key="saliency.sanity_chart")  # fmt: skip
    st.markdown(tr(R.read_randomization(sanity)))
    steps = R.thumbnail_steps(sanity)
    cols = st.columns(len(steps) + 1)
    cols[0].image(P.colorize(sanity.original, colormap), caption=_("original"),
                  alt=_("The original saliency map."), width="stretch")  # fmt: skip
    for col, i in zip(cols[1:], steps, strict=True):
        where = dict(k=i + 1, layer=sanity.layers[i])
        alt = _("Saliency map after randomizing {k} layer(s), up to {layer}.").format(**where)
        col.image(P.colorize(sanity.maps[i], colormap), alt=alt, width="stretch",
                  caption=_("{k} layer(s): up to {layer}").format(**where))  # fmt: skip


def _notes_recipe(choice: S.MapChoice, pictures: P.Pictures, prob: float) -> None:
    """The notes' recipe beside the app's: the same map scaled both ways, and why the app's."""
    st.header(_("The notes' recipe"), anchor=False)
    st.markdown(tr(E.notes_recipe_intro(cite(NOTES_RECIPE_REF))))
    st.subheader(_("Same map, two scalings"), anchor=False)
    n1, n2, _n3 = st.columns(3)
    comparison = pictures.comparison
    if comparison.notes is None:
        _images([n1], [pictures.app_png], E.SCALINGS[:1])
        reason = tr(comparison.notes_error)
        n2.warning(_("The notes' scaling: {reason}.").format(reason=reason),
                   icon=":material/warning:")  # fmt: skip
        st.caption(_(E.FLAT_MAP_APP_SCALING))
    else:
        _images([n1, n2], [pictures.app_png, pictures.notes_png], E.SCALINGS)
        st.markdown(tr(E.scalings_differ(comparison, choice.objective)))
    st.subheader(_("Why the app's recipe is the default"), anchor=False)
    st.markdown(tr(E.why_the_app_recipe(prob)))
    st.subheader(_("What the notes say, and what PyTorch does"), anchor=False)
    for callout in callouts_of("lessons.saliency.maps").values():
        notes_callout(callout)


def _code(model: _Classifier, choice: S.MapChoice) -> None:
    loaded, c = model.loaded, choice
    show_code(snippet_for(c.method, model_name=loaded.name, custom_file=model.upload_name,
                          architecture=model.architecture, target=c.target, objective=c.objective,
                          reduce=c.reduce, n=c.n, sigma=c.sigma, steps=c.steps,
                          baseline=c.baseline, percentile=c.percentile, alpha=c.alpha,
                          colormap=c.colormap, device=loaded.device, seed=c.seed,
                          recipe=c.recipe))  # fmt: skip
    if c.recipe == "notes":
        notes_citation(NOTES_RECIPE_REF, verbatim=False)


# ---------------------------------------------------------------- the story
with layout.details:
    how_area, predictions_area, setup_area = st.container(), st.container(), st.container()
    sanity_area, notes_area, code_area = st.container(), st.container(), st.container()
with setup_area:
    model = _classifier()
subject = _subject(model)
with predictions_area:
    st.header(_("Top-5 predictions"), anchor=False)
    classes, names, probabilities = zip(*subject.top5, strict=True)
    rounded = [round(p, 4) for p in probabilities]
    top5 = {_("class"): classes, _("name"): names, _("probability"): rounded}
    st.dataframe(pd.DataFrame(top5), hide_index=True, width="stretch", key="saliency.top5")
with layout.controls:
    choice = _controls(subject, model.loaded.categories)
shown = _made_map(model, subject, choice)
draw = (choice.recipe == "notes", choice.percentile, choice.alpha, choice.colormap)
if model.shared:
    pictures = _shared_pictures(shown.key, *draw, shown.result.saliency, subject.view)
else:
    pictures = P.make_pictures(shown.result.saliency, subject.view, *draw)
prob = float(torch.softmax(shown.result.logits, 0)[choice.target])
class_name = model.loaded.categories[choice.target]
with layout.figure:
    _figure(choice, shown, pictures, class_name, prob)
with how_area:
    _how_it_was_made(model, subject, choice, shown, pictures, class_name, prob)
with sanity_area:
    _sanity_check(model, subject, choice, shown)
with notes_area:
    _notes_recipe(choice, pictures, prob)
with code_area:
    _code(model, choice)
