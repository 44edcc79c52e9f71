"""The saliency page's words: what its choices are called, control help, and the explanations
tied to the live numbers.

Pure module (no Streamlit). Each function returns marked English (:func:`core.text.N_` for a
fixed text, :class:`core.text.T` for a sentence with values); the page shows it through
``ui.i18n.tr``, which translates the template and then fills in the values (values that are
``T`` themselves, such as a method's name, are translated too). Numbers come in as they are
measured: a :class:`~lessons.saliency.maps.SaliencyResult`, a
:class:`~lessons.saliency.scaling.ScalingComparison`, a probability.

>>> provenance(ran=True, in_session=False, made_s=0.4, announced_s=0.2, ago_s=0.0)
'Computed just now in 0.4 s (announced: about 0.2 s).'
"""

from __future__ import annotations

from collections.abc import Sequence

from core.text import N_, T
from lessons.saliency.maps import PassTiming, SaliencyResult
from lessons.saliency.models import MAX_UPLOAD_MB, SAVE_SAFETENSORS, SAVE_STATE_DICT
from lessons.saliency.scaling import RECIPES, ScalingComparison

#: Under the title: what to look at in the figure.
LOOK_AT = N_(
    "the bright pixels of the map and the overlay: the gradient of the explained class's score "
    "with respect to each input pixel, on the picture the model actually sees."
)

# ------------------------------------------------------------------------- names of the choices
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

# ------------------------------------------------------------------------- the classifier

ARCHITECTURE_HELP = N_(
    "The uploaded state_dict is loaded into this architecture with strict key and shape checks "
    "(a 1000-class ImageNet head), and images are preprocessed the way it expects."
)
#: What to change when an uploaded weights file cannot be loaded.
UPLOAD_HINT = N_(
    "upload weights only (a state_dict saved with torch.save, or a .safetensors file) for the "
    "architecture chosen under Classifier, with a 1000-class head."
)

#: What to change when a registry model cannot be loaded.
REGISTRY_HINT = N_("choose EfficientNet-Lite0, which works offline.")
VIEW_NOTE = N_("All maps live on this resized and cropped view; the overlay is drawn on it.")
CHOOSE_IMAGE = N_("Choose a sample or upload an image to see its saliency map.")
UNAVAILABLE_OFFLINE = N_(
    "{title} is unavailable offline (see **Classifier** below). Choose EfficientNet-Lite0 to "
    "continue offline."
)
UPLOAD_FIRST = N_(
    "Upload a weights file (.pt, .pth or .safetensors) under **Classifier** below to continue, "
    "or use the registry."
)

def model_help(missing: Sequence[str]) -> T:
    """Help of the model box: where the weights come from, and the registry models whose
    weights are not here (``missing``: their titles, in the page's language)."""
    if missing:
        return T(
            "EfficientNet-Lite0 ships with a pip package and always works offline. torchvision "
            "models need their weight file in the local torch hub cache. Unavailable offline "
            "here: {models}.",
            models=", ".join(missing),
        )
    return T(
        "EfficientNet-Lite0 ships with a pip package and always works offline. torchvision "
        "models need their weight file in the local torch hub cache."
    )


def upload_help() -> T:
    """Help of the weights upload: what is accepted, what is refused and why, how to export."""
    return T(
        "Weights only, at most {limit} MB: nothing in the file is ever run. TorchScript and "
        "whole pickled models are refused, because loading them would run their code on this "
        "server. A .pt/.pth must be a torch.save archive; its records are checked "
        "(uncompressed, sizes within the file) before torch.load(weights_only=True) reads it. "
        "Export the weights with `{torch_save}` or `{safetensors_save}`.",
        limit=MAX_UPLOAD_MB,
        torch_save=SAVE_STATE_DICT,
        safetensors_save=SAVE_SAFETENSORS,
    )


# ------------------------------------------------------------------------- the controls


SIGMA_HELP = N_("Standard deviation of the noise, as a fraction of the input range.")
NOTES_SCALING = N_("Scaling: P1..P{percentile:g} to 0..255 (fixed by the notes' recipe)")
OBJECTIVE_HELP = N_(
    "Backpropagate the class score (logit), or the cross-entropy loss for the explained class "
    "as the notes do."
)


def recipe_help() -> T:
    """Help of the Recipe radio: the two recipes, the notes' spelled out."""
    return T(
        "The app's: {app}. The notes': {notes}, the code in the notes (000:2) reproduced "
        "exactly: vanilla gradient of the loss, sum of |grad| over R, G, B, then "
        "cvglue.scale_min_max(s, 0, 255, percentile=99) and np.uint8.",
        app=T(RECIPES["app"]),
        notes=T(RECIPES["notes"]),
    )


def provenance(ran: bool, in_session: bool, made_s: float, announced_s: float, ago_s: float) -> T:
    """Where the map on screen comes from: computed for this run (``ran``, in ``made_s`` against
    the ``announced_s`` said before), this session's last run, or the shared cache (made
    ``ago_s`` seconds ago)."""
    if ran:
        return T(
            "Computed just now in {made:.1f} s (announced: about {seconds:.1f} s).",
            made=made_s,
            seconds=announced_s,
        )
    if in_session:
        return T("Kept from this session's last run (made in {made:.1f} s).", made=made_s)
    return T(
        "From the shared cache: made {ago:.0f} s ago in {made:.1f} s (by this or another "
        "session), so nothing was recomputed.",
        ago=ago_s,
        made=made_s,
    )

#: Shown while a heavy map waits for its click.
MEANWHILE = N_("Meanwhile: the vanilla gradient (one pass through the model).")
#: What to change when a map cannot be computed.
MAP_HINT = N_("change the target class, the method or the objective.")


def map_texts(method: str, images: int, seconds: float) -> tuple[T, T, T]:
    """The texts of a ``method`` map of ``images`` images expected to take ``seconds``: its
    progress label, the caption while it is computed, and the work its click names."""
    name = T(METHOD_NAMES[method])
    label = T("{method}: {images} image(s) through the model, about {seconds:.1f} s",
              method=name, images=images, seconds=seconds)  # fmt: skip
    computing = T("{label} ... (if another session is making the same map, you get theirs)",
                  label=label)  # fmt: skip
    return label, computing, T("the {method} map of {images} images", method=name, images=images)


def sanity_work(layers: int, images: int) -> T:
    """The sanity check of ``layers`` layers, as its click names it."""
    return T("the sanity check: {maps} maps, {images} images", maps=layers + 1, images=images)

# ------------------------------------------------------------------------- the figure


def figure_captions(
    method: str, objective: str, reduce: str, target: int, name: str, alpha: float,
    notes_ref: str | None,
) -> tuple[tuple[str, T], tuple[T, T], tuple[str, str]]:  # fmt: skip
    """(caption, alt) of the map, the overlay and the model's view, in that order. ``method``:
    the method's name as shown; ``notes_ref``: the notes' place when the map is scaled their
    way (the caption says so), else None."""
    caption = f"{method}, {objective}, {reduce}"
    if notes_ref is not None:
        caption = T("The notes' recipe ({ref}): loss, sum, P1..P99, uint8", ref=notes_ref)
    alt = T(
        "Saliency map ({method}) for class {target}, {name}: bright where the class score is "
        "most sensitive to the pixel.",
        method=method,
        target=target,
        name=name,
    )
    return (
        (caption, alt),
        (
            T("Overlay (alpha {alpha:.2f})", alpha=alpha),
            T("The saliency map for {name} drawn over the image.", name=name),
        ),
        (
            N_("What the model sees"),
            N_("The input image resized and cropped to what the classifier sees."),
        ),
    )

#: Under the figure: the class, its probability, the method and where the map comes from.
EXPLAINING = N_("Explaining **{target}: {name}** (p = {prob:.3f}) with {method}. {provenance}")

# ------------------------------------------------------------------------- how the map was made


def recipe_caption(notes_recipe: bool, ref: str) -> T:
    """Which recipe made the map, and why the app's is the default (``ref``: the notes' place,
    as the page cites it)."""
    if notes_recipe:
        return T(
            "The notes' recipe ({ref}): loss.backward() on the cross-entropy for the explained "
            "class (the notes leave target_loss open), sum of |x.grad| over channels, P1..P99 "
            "stretched to 0..255 and clipped, np.uint8 truncation. Method, objective and "
            "scaling are fixed to theirs.",
            ref=ref,
        )
    return T(
        "The default. It explains the class score itself and never divides by zero; the "
        "section 'The notes' recipe' measures how far the notes' recipe is from it."
    )


def how_it_was_made(
    result: SaliencyResult, *, class_name: str, prob: float, notes_scaled: bool,
    comparison: ScalingComparison, percentile: float, share: float, n: int, sigma: float,
) -> list[T]:  # fmt: skip
    """The paragraphs under "How this map was made": the gradient and its reduction, the
    scaling with the share of saliency it saturates (``share``), and for Integrated Gradients
    its completeness, for SmoothGrad its samples (``n``, ``sigma``)."""
    values = dict(name=class_name, prob=prob, reduce=result.reduce)
    lines = [
        T(
            "The model gives **{name}** a probability of {prob:.3f}. Each pixel's brightness is "
            "|d score / d pixel| reduced by **{reduce}** over R, G, B.",
            **values,
        )
        if result.objective == "logit"
        else T(
            "The model gives **{name}** a probability of {prob:.3f}. Each pixel's brightness is "
            "|d loss / d pixel| reduced by **{reduce}** over R, G, B.",
            **values,
        ),
        T(
            "Pixels at or below the 1st percentile ({low:.3g}) are black and pixels at or above "
            "the 99th ({high:.3g}) full colour; they hold {share:.1%} of the total saliency. In "
            "between, 255 (s - P1) / (P99 - P1) is truncated to an integer by np.uint8, as "
            "cvglue.scale_min_max and the notes do.",
            low=comparison.p_low,
            high=comparison.p_high,
            share=share,
        )
        if notes_scaled
        else T(
            "Pixels at or above the {percentile:g}th percentile are drawn at full colour; they "
            "hold {share:.1%} of the total saliency. Values are divided by that percentile plus "
            "1e-12 and rounded, so a flat map stays black instead of dividing by zero.",
            percentile=percentile,
            share=share,
        ),
    ]
    if result.completeness is not None:
        total, delta = result.completeness
        lines.append(
            T(
                "Integrated Gradients completeness: attributions sum to {total:.3f}, while "
                "f(image) - f(baseline) = {delta:.3f}. More steps bring the two closer.",
                total=total,
                delta=delta,
            )
        )
    if result.method == "smoothgrad":
        lines.append(
            T(
                "SmoothGrad averaged {n} noisy copies (sigma {sigma:.2f}) in batches; noise "
                "averages away the speckle of a single gradient.",
                n=n,
                sigma=sigma,
            )
        )
    return lines


def timing_help(result: SaliencyResult) -> T:
    """Help of the Forward and Backward metrics: what their wall-clock times include."""
    return T(
        "Wall-clock time measured when this map was computed, summed over {batches} pass(es). "
        "Excluded: model loading, preprocessing, scaling, drawing, and the one-time warm-up pass "
        "after loading. On a busy CPU it includes time spent waiting for other work (other "
        "sessions, the browser).",
        batches=result.batches,
    )


def timing_metrics(result: SaliencyResult) -> list[tuple[str, str | int, T | None]]:
    """The metrics under the map, each (label, value, help): the forward and the backward time
    and the images through the model."""
    times = timing_help(result)
    return [(N_("Forward"), f"{result.forward_ms:.0f} ms", times),
            (N_("Backward (input gradient)"), f"{result.backward_ms:.0f} ms", times),
            (N_("Images through the model"), result.images, None)]  # fmt: skip


def timing_note(result: SaliencyResult, device: str, warm_ms: float | None, provenance: T) -> T:
    """The caption under the timings: what was timed, on which ``device``, what is left out
    (the warm-up of ``warm_ms``, None: none ran), and where the map came from."""
    per_image = (
        T(
            " ({forward:.0f} + {backward:.0f} ms per image)",
            forward=result.forward_ms / result.images,
            backward=result.backward_ms / result.images,
        )
        if result.images > 1
        else ""
    )
    warm = (
        T(
            "a one-time warm-up pass after loading ({ms:.0f} ms) is not included",
            ms=warm_ms,
        )
        if warm_ms is not None
        else T("no warm-up pass ran, so one-time initialisation may be included")
    )
    return T(
        "Timed once, when this map was computed: {images} image(s) in {batches} forward + "
        "backward pass(es) on `{device}`{per_image}, wall clock. Model loading is not included; "
        "{warm}. Other work on the CPU (other sessions or programs, the browser drawing this "
        "page) slows a single run; `python -m benchmarks.saliency` prints steady-state "
        "medians. Maps made for the bundled classifiers are shared by all sessions (same "
        "image, class, method and settings): {provenance}",
        images=result.images,
        batches=result.batches,
        device=device,
        per_image=per_image,
        warm=warm,
        provenance=provenance,
    )

RETIME_HELP = N_("Median of 5 back-to-back forward + backward passes on one image.")
RETIMED = N_(
    "Median of {repeats} back-to-back passes on one image, measured on request: forward "
    "{forward:.0f} ms, backward {backward:.0f} ms."
)


def retimed(timing: PassTiming) -> T:
    """The caption under "Time again": :data:`RETIMED` with ``timing``'s medians (ms)."""
    return T(RETIMED, repeats=timing.repeats, forward=timing.forward_ms,
             backward=timing.backward_ms)  # fmt: skip

# ------------------------------------------------------------------------- the sanity check

SANITY_INTRO = N_(
    "**Cascading randomization** (Adebayo et al. 2018): a copy of the model gets its layers "
    "re-drawn at random from the top down, and the map is recomputed after each layer. If the "
    "map does not change, it was explaining the image, not the model."
)
NO_LAYERS = N_("This model exposes no parameterized layers to randomize.")
SANITY_TOGGLE_HELP = N_(
    "Recomputed whenever the map, the class or the number of layers changes while this is on."
)


def sanity_cost(layers: int, images: int, seconds: float) -> T:
    """What a sanity check of ``layers`` layers costs: its maps, images and seconds."""
    return T(
        "{maps} saliency maps = {images} images through the model with the current method, "
        "about {seconds:.0f} s.",
        maps=layers + 1,
        images=images,
        seconds=seconds,
    )


# ------------------------------------------------------------------------- the notes' recipe


def notes_recipe_intro(ref: str) -> T:
    """What the notes' recipe does (``ref``: the notes' place, as the page cites it)."""
    return T(
        "**The notes' recipe** ({ref}) backpropagates a *loss*, sums |x.grad| over R, G, B, and "
        "scales with `cvglue.scale_min_max(s, 0, 255, percentile=99)`: P1 and P99 (NumPy's "
        "default linear percentiles) are stretched to 0 and 255, values outside are clipped, "
        "and `np.uint8` truncates. Choose *The notes'* under **Recipe** to see their map, "
        "reproduced exactly.",
        ref=ref,
    )


def scalings_differ(comparison: ScalingComparison, objective: str) -> T:
    """How far the app's and the notes' scalings of the current map are apart, in grey levels
    (``comparison`` with both sides defined)."""
    if comparison.notes is None:
        raise ValueError("the notes' scaling is undefined for this map; nothing to compare")
    values = dict(
        low=comparison.p_low,
        high=comparison.p_high,
        max_diff=comparison.max_diff,
        mean_diff=comparison.mean_diff,
        share=comparison.share_differing,
        ratio=comparison.p_low / comparison.p_high,
    )
    if objective == "logit":
        return T(
            "On this map (the current logit gradient) P1 = {low:.4g} and P99 = {high:.4g}. The "
            "two scalings differ by up to **{max_diff} grey levels** (mean {mean_diff:.2f}; "
            "{share:.1%} of the pixels differ): the notes subtract P1 ({ratio:.1%} of P99) and "
            "truncate, the app does not subtract and rounds.",
            **values,
        )
    return T(
        "On this map (the current loss gradient) P1 = {low:.4g} and P99 = {high:.4g}. The two "
        "scalings differ by up to **{max_diff} grey levels** (mean {mean_diff:.2f}; {share:.1%} "
        "of the pixels differ): the notes subtract P1 ({ratio:.1%} of P99) and truncate, the "
        "app does not subtract and rounds.",
        **values,
    )

FLAT_MAP_APP_SCALING = N_(
    "The app divides by P99 + 1e-12 instead, so a flat map never divides by zero."
)
#: (caption, alt) of the current map scaled the app's way and the notes' way.
SCALINGS = (
    (N_("The app's: s / (P99 + 1e-12), rounded"), N_("The current map with the app's scaling.")),
    (
        N_("The notes': (s - P1) / (P99 - P1), clipped, truncated"),
        N_("The current map with the notes' scaling."),
    ),
)

def why_the_app_recipe(prob: float) -> T:
    """Why the app's recipe is the default, with the explained class's probability ``prob``."""
    return T(
        "- **Objective.** The class score's gradient explains the class itself (Simonyan et "
        "al.). The cross-entropy loss's gradient is -(1 - p) times that gradient plus the other "
        "classes' score gradients weighted by their probabilities: here p = {prob:.3f}, so the "
        "explained class contributes with weight {weight:.3f} and the rest comes from the "
        "competitors; the more confident the model, the more the loss map is about the other "
        "classes.\n"
        "- **Scaling.** Dividing by P99 + 1e-12 keeps zero gradient black and is defined for "
        "every map; `cvglue.scale_min_max` divides by P99 - P1, which is zero when the middle "
        "{middle} of the map has one value (a flat map gives 0 / 0 = NaN), and truncation sits "
        "half a grey level below rounding on average.\n"
        "- The notes' recipe stays one click away under **Recipe**, reproduced bit for bit.",
        prob=prob,
        weight=1 - prob,
        middle="98%",  # a value: "% o" in a msgid reads as %-format
    )
