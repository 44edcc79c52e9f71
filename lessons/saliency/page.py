"""Saliency: which pixels drive a real ImageNet classifier's decision, with a sanity check.

The story is at the end: the classifier, the image and its top-5, the controls, the map, then
the details. Maps and sanity checks are made once for the whole server, a heavy one after a
click that states its time (ui.heavy); numbers, pictures and texts come from the lesson's pure
modules (lessons/saliency/__init__.py lists them).
"""

from __future__ import annotations

import streamlit as st

from core.text import N_
from lessons.saliency import explanations as E
from lessons.saliency import maps as S
from lessons.saliency import models as M
from lessons.saliency import pictures as P
from lessons.saliency import sanity as R
from lessons.saliency import session as Q
from lessons.saliency import shared_runs as runs_of
from lessons.saliency.questions import NOTES_PART, SANITY_PART, questions
from lessons.saliency.scaling import NOTES_PERCENTILE, NOTES_RECIPE_REF
from lessons.saliency.snippet import snippet_of
from ui.caching import MAX_SHARED_MODEL_BYTES, SHARED_TTL_S, bounded_cache
from ui.charts import show_chart
from ui.code import show_code
from ui.heavy import HeavyResult, heavy_result, shared_if
from ui.i18n import _, cite, tr, translator
from ui.image_input import image_input
from ui.lesson import WHAT_TO_CHANGE, clicked_result, lesson_layout, stop_on_error
from ui.links import BOUND, bound_choice, changed_from
from ui.markdown import plain
from ui.notes_callout import callouts_of, notes_callout, notes_citation
from ui.pictures import digest, side_by_side, upload_digest
from ui.predict import predict_panel
from ui.progress import progress_bar
from ui.settings import current_settings

layout = lesson_layout(N_("Saliency: which pixels drive the decision?"), E.LOOK_AT)
settings = current_settings()
# Every value control is bound to the URL (**BOUND, bound_choice); buttons and uploads are not.


# A registry model's results are made once for the whole server (maps and sanity checks by
# ui.heavy.heavy_result). An uploaded model's name is no safe shared key (two students may upload
# different files under one name), so its results are made for its session alone (shared_if).
@st.cache_resource(show_spinner=False)
def _shared_runs() -> runs_of.SharedRuns:
    return runs_of.SharedRuns()


@bounded_cache(max_entries=4, ttl=SHARED_TTL_S, kind="resource", max_bytes=MAX_SHARED_MODEL_BYTES)
def _registry_model(name: str, device: str, allow_download: bool):
    # Shared by all sessions: the model is in eval mode with frozen parameters and every core
    # function works on per-call input tensors (or a deep copy), so nothing here is mutated.
    return Q.warmed_up(M.load_model(name, device, allow_download=allow_download))


@bounded_cache(max_entries=2, ttl=SHARED_TTL_S, kind="resource", max_bytes=MAX_SHARED_MODEL_BYTES)
def _custom_model(digest: str, filename: str, architecture: str, device: str, _data: bytes):
    model = M.load_custom_model(_data, filename=filename, architecture=architecture, device=device)
    return Q.warmed_up(model)


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S, kind="resource")
def _shared_subject(model_key: str, image_digest: str, _loaded: M.LoadedModel, _image):
    # A class opening the page at its defaults runs one forward pass, not fifty. Shared and
    # read-only: the gradient passes clone x before asking for its gradient.
    return Q.through_model(_loaded, _image)


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S, kind="resource")  # ~4 passes: once per map
def _shared_questions(map_key: tuple, seed: int, _loaded, _subject: Q.Subject, _result, _compared):
    return questions(_loaded, _subject.x, _subject.top5, _result, _compared, seed=seed)


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S, kind="resource")
def _shared_pictures(map_key: tuple, draw: tuple, _saliency, _view):
    # Once per map and drawing options: a class on one link colours and encodes it once.
    return P.make_pictures(_saliency, _view, *draw)


def _registry_classifier() -> Q.Classifier:
    """The model box; a model whose weights are not here offers a download, or stops."""
    entries = {entry.spec.name: entry for entry in M.list_models()}
    missing = [_(entry.spec.title) for entry in entries.values() if not entry.available]
    # The option text is the link's value, so it names the model only: whether its weights are
    # here differs between machines, and a link must open on every one.
    titles = {name: entry.spec.title for name, entry in entries.items()}
    name = bound_choice(st.selectbox, _("Model"), titles, "saliency.model",
                        help=tr(E.model_help(missing)))  # fmt: skip
    entry, title = entries[name], _(titles[name])
    if entry.available:
        with (layout.figure, st.spinner(_("Loading {title} ...").format(title=title)),
              stop_on_error(layout.figure, _(E.REGISTRY_HINT))):  # fmt: skip
            return Q.Classifier(*_registry_model(name, settings.device, False))
    st.warning(_("{title} is unavailable: {reason}").format(title=title, reason=tr(entry.reason)),
               icon=":material/block:")  # fmt: skip
    if entry.weights_path is not None:
        st.caption(_("Put the weight file exactly here:"))
        st.code(str(entry.weights_path), language=None)
    if st.button(_("Try to download the weights"), key="saliency.download_weights"):
        with st.spinner(_("Downloading {title} ...").format(title=title)):
            try:
                return Q.Classifier(*_registry_model(name, settings.device, True))
            except ValueError as error:
                st.error(tr(error))
    layout.figure.info(_(E.UNAVAILABLE_OFFLINE).format(title=title), icon=":material/block:")
    st.stop()


def _uploaded_classifier() -> Q.Classifier:
    """The architecture box and the weights upload (weights only, never code), or a stop."""
    architecture = bound_choice(st.selectbox, _("Architecture the weights belong to"),
                                M.CUSTOM_ARCHITECTURES, "saliency.architecture",
                                index=list(M.CUSTOM_ARCHITECTURES).index("resnet18"),
                                help=_(E.ARCHITECTURE_HELP))  # fmt: skip
    upload = st.file_uploader(_("Weights file: a state_dict (.pt, .pth) or .safetensors"),
                              type=["pt", "pth", "safetensors"], key="saliency.model_upload",
                              help=tr(E.upload_help()))  # fmt: skip
    if upload is None:
        layout.figure.info(_(E.UPLOAD_FIRST), icon=":material/upload:")
        st.stop()
    with (layout.figure, st.spinner(_("Loading {file} ...").format(file=plain(upload.name))),
          stop_on_error(layout.figure, _(E.UPLOAD_HINT))):  # fmt: skip
        loaded, warm_ms = _custom_model(upload_digest(upload), upload.name, architecture,
                                        settings.device, upload.getvalue())  # fmt: skip
    return Q.Classifier(loaded, warm_ms, False, upload.name, architecture)


def _classifier() -> Q.Classifier:
    """The "Classifier and preprocessing" section: choose or upload a model, see what it sees."""
    st.header(_("Classifier and preprocessing"), anchor=False)
    # Open when the classifier is not the default one (changed here, or by a link).
    changed = changed_from({"saliency.model_source": E.MODEL_SOURCES[0],
                            "saliency.model": "efficientnet_lite0"})  # fmt: skip
    with st.expander(_("Classifier: choose a model or upload your own"), expanded=changed):
        source = bound_choice(st.radio, _("Classifier"), E.MODEL_SOURCES, "saliency.model_source",
                              format_func=translator(), horizontal=True)  # fmt: skip
        model = _registry_classifier() if source == E.MODEL_SOURCES[0] else _uploaded_classifier()
        loaded = model.loaded
        st.caption(_("Weights: {source} · device `{device}`").format(
            source=plain(tr(loaded.source)), device=loaded.device))
    st.markdown(_("**{model}**: {preprocessing}.").format(
        model=plain(loaded.name), preprocessing=plain(tr(loaded.describe_preprocessing()))))
    st.caption(_(E.VIEW_NOTE))
    return model


def _subject(model: Q.Classifier) -> Q.Subject:
    """The image control (stops without an image), and the image through the model."""
    with layout.controls:
        image = image_input("saliency.image")
    if image is None:
        layout.figure.info(_(E.CHOOSE_IMAGE), icon=":material/image:")
        st.stop()
    image, notice = M.ensure_min_side(image)
    if notice:
        layout.controls.warning(tr(notice), icon=":material/zoom_in:")
    loaded, image_digest, model_key = model.loaded, digest(image), model.model_key
    with stop_on_error(layout.figure, _("try another image or model."),
                       message=_("The model could not classify this image: {error}"),
                       errors=(ValueError, RuntimeError)):  # fmt: skip
        seen = shared_if(model.shared, _shared_subject)(model_key, image_digest, loaded, image)
    return Q.Subject(*seen, image_digest, model_key)


def _controls(subject: Q.Subject, categories: list[str]) -> S.MapChoice:
    """Every control of the map: class, recipe, method and its parameters, map options."""
    # The "Explain" radio and the class box keep their values while hidden (the upload step, a
    # page switch) through Streamlit's own persistence, which also tells the browser the kept
    # value, so the box always shows the class the map explains. Their defaults are fixed (the
    # predicted class): a default that followed the last choice would leave it out of the link.
    mode = bound_choice(st.radio, _("Explain"), E.TARGET_MODES, "saliency.target_mode",
                        format_func=translator(), horizontal=True)  # fmt: skip
    target = top1 = subject.top5[0][0]
    if mode != E.TARGET_MODES[0]:
        target = bound_choice(st.selectbox, _("Class (type to search)"),
                              range(subject.num_classes), "saliency.target_class", index=top1,
                              format_func=lambda i: f"{i}: {categories[i]}")  # fmt: skip
    st.caption(_("Explaining class {target}: **{name}**").format(target=target,
                                                                 name=categories[target]))
    recipe = bound_choice(st.radio, _("Recipe"), E.RECIPE_NAMES, "saliency.recipe",
                          horizontal=True, help=tr(E.recipe_help()))  # fmt: skip
    n, sigma, steps, baseline = 25, 0.15, 32, "black"
    method, objective, reduce = "vanilla", "loss", "sum"  # the notes' recipe fixes these
    if recipe != "notes":
        methods_help = " · ".join(_(text) for text in S.METHODS.values())
        method = bound_choice(st.selectbox, _("Method"), E.METHOD_NAMES, "saliency.method",
                              help=methods_help)  # fmt: skip
    if method == "smoothgrad":
        n = st.slider(_("Noisy samples n"), 1, 50, 25, key="saliency.n", **BOUND)
        sigma = st.slider(_("Noise sigma"), 0.0, 0.5, 0.15, 0.01, key="saliency.sigma", **BOUND,
                          help=_(E.SIGMA_HELP))  # fmt: skip
    elif method == "integrated_gradients":
        # At most 64 steps: the completeness gap (the lesson's point about steps) already shrinks
        # visibly from 4 to 64 on the bundled classifier, and each step is one more image through
        # the model (128: ~20 s of the shared CPU a map, 22 times that for all layers' sanity).
        steps = st.slider(_("Steps on the path"), 4, 64, 32, key="saliency.steps", **BOUND)
        baseline = bound_choice(st.radio, _("Baseline"), E.BASELINE_NAMES, "saliency.baseline",
                                horizontal=True)  # fmt: skip
    with st.expander(_("Map options")):
        percentile = NOTES_PERCENTILE
        if recipe != "notes":
            objective = bound_choice(st.radio, _("Objective"), E.OBJECTIVE_NAMES,
                                     "saliency.objective", help=_(E.OBJECTIVE_HELP))  # fmt: skip
            reduce = bound_choice(st.radio, _("Channel reduction"), E.REDUCE_NAMES,
                                  "saliency.reduce")  # fmt: skip
            percentile = st.slider(_("Saturate at percentile"), 50.0, 100.0, 99.0, 0.5,
                                   key="saliency.percentile", **BOUND)  # fmt: skip
        else:
            st.caption(_(E.NOTES_SCALING).format(percentile=percentile))
        alpha = st.slider(_("Overlay alpha"), 0.0, 1.0, 0.5, 0.05, key="saliency.alpha", **BOUND)
        colormap = st.selectbox(_("Colormap"), list(P.COLORMAPS), key="saliency.colormap", **BOUND)
    return S.MapChoice(int(target), recipe, method, objective, reduce, int(n), float(sigma),
                       int(steps), baseline, float(percentile), float(alpha), colormap,
                       settings.seed)  # fmt: skip


def _made_map(model: Q.Classifier, subject: Q.Subject, choice: S.MapChoice) -> Q.ShownMap:
    """The map from this session's last run, the shared cache, or computed now."""
    runs, params = _shared_runs(), choice.params(model.loaded.black_level())
    gate_area, slot = layout.figure.container(), layout.figure.empty()

    def made(method: str, estimate: S.RunEstimate, may_wait: bool) -> HeavyResult | None:
        label, note, what = map(tr, E.map_texts(method, estimate.images, estimate.seconds))

        def compute() -> S.SaliencyResult:
            with progress_bar(label) as progress:
                return S.compute_saliency(model.loaded.model, subject.x, choice.target, method,
                                          progress=progress, **params)  # fmt: skip

        with stop_on_error(layout.figure, _(E.MAP_HINT), errors=(ValueError, RuntimeError)):
            return heavy_result("saliency.map", subject.map_key(choice, method), estimate.seconds,
                                compute, what=what if may_wait else None, label=label, note=note,
                                shared=model.shared, slot=slot)  # fmt: skip

    per_image_ms, estimate, vanilla = runs_of.estimates(runs, subject.model_key, choice)
    # A map of several images whose expected time is above the budget waits for a click that
    # states it, whether its settings came from a link or this session's controls (a link is
    # anyone's input); meanwhile the vanilla gradient (one pass) keeps the whole lesson on screen.
    # A map the shared cache holds, or this session's last one, needs no click; nor does one image.
    with gate_area:
        shown = made(choice.method, estimate, may_wait=estimate.images > 1)
    if shown is None:
        gate_area.caption(_(E.MEANWHILE))
        shown, estimate = made("vanilla", vanilla, may_wait=False), vanilla
    result = shown.value
    if shown.ran:
        runs_of.record_run(runs, subject.model_key, result)
    provenance = E.provenance(shown.ran, shown.kept, shown.seconds, estimate.seconds, shown.age_s)
    return Q.ShownMap(result, subject.map_key(choice, result.method), subject.map_key(choice),
                      per_image_ms, provenance, model.loaded.categories[choice.target])


def _figure(choice: S.MapChoice, shown: Q.ShownMap, pictures: P.Pictures) -> None:
    """The map, the overlay and the model's view side by side, and what they explain."""
    method = _(E.METHOD_NAMES[shown.method])
    ref = cite(NOTES_RECIPE_REF) if pictures.notes_scaled else None
    # The map first (first on a phone too), then the overlay, then the model's view, smaller.
    side_by_side(st.columns([1, 1, 0.75], gap="small"),
                 (pictures.heat_png, pictures.overlay_png, pictures.view_png),
                 E.figure_captions(method, choice.objective, choice.reduce, choice.target,
                                   shown.class_name, choice.alpha, ref),
                 output_format="PNG")  # fmt: skip
    if choice.recipe == "notes" and not pictures.notes_scaled:
        st.warning(_("{reason}. The map uses the app's scaling instead.").format(
            reason=tr(pictures.comparison.notes_error)), icon=":material/warning:")
    st.markdown(_(E.EXPLAINING).format(target=choice.target, name=shown.class_name, prob=shown.prob,
                                       method=method, provenance=tr(shown.provenance)))  # fmt: skip


def _how_it_was_made(model: Q.Classifier, subject: Q.Subject, choice: S.MapChoice,
                     shown: Q.ShownMap, pictures: P.Pictures) -> None:  # fmt: skip
    """How the map was made, its timings (and a re-timing on request), and its downloads."""
    st.header(_("How this map was made"), anchor=False)
    st.caption(tr(E.recipe_caption(choice.recipe == "notes", cite(NOTES_RECIPE_REF))))
    lines = E.how_it_was_made(shown.result, class_name=shown.class_name, prob=shown.prob,
                              notes_scaled=pictures.notes_scaled, comparison=pictures.comparison,
                              percentile=choice.percentile, share=pictures.share, n=choice.n,
                              sigma=choice.sigma)  # fmt: skip
    st.markdown("\n\n".join(tr(line) for line in lines))
    result = shown.result
    for column, (label, value, help) in zip(st.columns(3), E.timing_metrics(result), strict=True):
        column.metric(_(label), value, help=tr(help) if help is not None else None)
    st.caption(tr(E.timing_note(result, model.loaded.device, model.warm_ms, shown.provenance)))
    *columns, d3 = st.columns(3)
    for column, (label, png, name, key) in zip(columns, P.downloads(pictures, shown.method,
                                                                    choice.target), strict=True):
        column.download_button(_(label), png, file_name=name, mime="image/png", key=key,
                               icon=":material/download:")  # fmt: skip
    timing = clicked_result(d3, _("Time again"), "saliency.retime", shown.key,
                            lambda: S.time_gradient_pass(model.loaded.model, subject.x,
                                                         choice.target, objective=choice.objective),
                            spinner=_("Timing 5 forward + backward passes ..."),
                            hint=_("try another model or objective."), help=_(E.RETIME_HELP))
    if timing is not None:
        st.caption(tr(E.retimed(timing)))


def _sanity_check(model: Q.Classifier, subject: Q.Subject, choice: S.MapChoice, shown: Q.ShownMap):
    """The cascading randomization test of the chosen method, when its toggle is on."""
    st.header(_("Sanity check"), anchor=False)
    st.markdown(_(E.SANITY_INTRO))
    layers = len(R.randomizable_layers(model.loaded.model))
    if not layers:
        st.warning(_(E.NO_LAYERS))
        return
    k = int(st.slider(_("Layers to randomize (from the top)"), 1, layers, min(layers, 6),
                      key="saliency.sanity_layers", **BOUND))  # fmt: skip
    estimate = S.estimate_sanity(choice.method, k, n=choice.n, steps=choice.steps,
                                 per_image_ms=shown.per_image_ms)  # fmt: skip
    st.caption(tr(E.sanity_cost(k, estimate.images, estimate.seconds)))
    # A toggle, not a button, so a lesson link can open the page with the test run
    # (?saliency.sanity=true); while it is on, every rerun shows the test for the current
    # settings (from the shared cache, or this session's for an uploaded model). Like the map,
    # above the budget it waits for a click stating its time unless the shared cache holds it;
    # a failure is kept like a result, so a rerun does not run a failing test again.
    if not st.toggle(_("Run the randomisation test"), value=False, key="saliency.sanity",
                     **BOUND, help=_(E.SANITY_TOGGLE_HELP)):  # fmt: skip
        return
    params = choice.params(model.loaded.black_level())

    def compute() -> R.RandomizationResult:  # its random weights come from the map key's seed
        with progress_bar(_("Randomizing ..."), prefix=False) as progress:
            return S.randomization_test(model.loaded.model, subject.x, choice.target,
                                        choice.method, k, progress=progress,
                                        percentile=choice.percentile, **params)  # fmt: skip

    outcome = heavy_result("saliency.sanity", (shown.choice_key, k, choice.percentile),
                           estimate.seconds, compute, what=tr(E.sanity_work(k, estimate.images)),
                           label=_("Sanity check"), shared=model.shared,
                           errors=(ValueError, RuntimeError))  # fmt: skip
    if outcome is None:
        return  # it waits for its click
    if outcome.error is not None:
        hint = _("try fewer layers or the vanilla method.")
        st.error(_(WHAT_TO_CHANGE).format(message=tr(outcome.error), hint=hint))
        return
    sanity = outcome.value
    show_chart(R.correlation_chart(sanity, translate=_), alt=tr(R.correlation_chart_alt(sanity)),
               width="stretch", key="saliency.sanity_chart")  # fmt: skip
    st.markdown(tr(R.read_randomization(sanity)))
    thumbnails, captions = P.sanity_thumbnails(sanity, choice.colormap)
    side_by_side(st.columns(len(thumbnails)), thumbnails, captions)


def _notes_recipe(choice: S.MapChoice, pictures: P.Pictures, prob: float) -> None:
    """The notes' recipe beside the app's: the same map scaled both ways, and why the app's."""
    st.header(_("The notes' recipe"), anchor=False)
    st.markdown(tr(E.notes_recipe_intro(cite(NOTES_RECIPE_REF))))
    st.subheader(_("Same map, two scalings"), anchor=False)
    n1, n2, _n3 = st.columns(3)
    comparison = pictures.comparison
    if comparison.notes is None:
        side_by_side([n1], [pictures.app_png], E.SCALINGS[:1], output_format="PNG")
        n2.warning(_("The notes' scaling: {reason}.").format(reason=tr(comparison.notes_error)),
                   icon=":material/warning:")  # fmt: skip
        st.caption(_(E.FLAT_MAP_APP_SCALING))
    else:
        side_by_side([n1, n2], [pictures.app_png, pictures.notes_png], E.SCALINGS,
                     output_format="PNG")  # fmt: skip
        st.markdown(tr(E.scalings_differ(comparison, choice.objective)))
    st.subheader(_("Why the app's recipe is the default"), anchor=False)
    st.markdown(tr(E.why_the_app_recipe(prob)))
    st.subheader(_("What the notes say, and what PyTorch does"), anchor=False)
    for callout in callouts_of("lessons.saliency.maps").values():
        notes_callout(callout)


# ---------------------------------------------------------------- the story
with layout.details:
    how_area, predictions_area, setup_area = st.container(), st.container(), st.container()
    sanity_area, notes_area = st.container(key=SANITY_PART), st.container(key=NOTES_PART)
with setup_area:
    model = _classifier()
subject = _subject(model)
with predictions_area:
    st.header(_("Top-5 predictions"), anchor=False)
    top5 = {_(header): column for header, column in Q.top5_columns(subject.top5).items()}
    st.dataframe(top5, hide_index=True, width="stretch", key="saliency.top5")
with layout.controls:
    choice = _controls(subject, model.loaded.categories)
shown = _made_map(model, subject, choice)
pictures = shared_if(model.shared, _shared_pictures)(shown.key, choice.drawing(),
                                                     shown.result.saliency, subject.view)
with layout.figure:
    _figure(choice, shown, pictures)
with how_area:
    _how_it_was_made(model, subject, choice, shown, pictures)
with sanity_area:
    _sanity_check(model, subject, choice, shown)
with notes_area:
    _notes_recipe(choice, pictures, shown.prob)
with layout.details:  # last, under the notes' recipe
    show_code(snippet_of(choice, model))
    if choice.recipe == "notes":
        notes_citation(NOTES_RECIPE_REF, verbatim=False)
predict_panel(layout.predict, "saliency", lambda: shared_if(model.shared, _shared_questions)(
    shown.key, choice.seed, model.loaded, subject, shown.result, pictures.comparison))
