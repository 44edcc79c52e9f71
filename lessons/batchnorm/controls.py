"""The BatchNorm page's controls as data: each number box's key (its URL parameter), label,
range, default and help, and the choices of the other controls.

Labels and help are catalog messages (:func:`core.text.N_`), translated where the page shows
them; keys follow ``batchnorm.<control>`` and never change, since links carry them. Pure: no
Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.text import N_
from lessons.batchnorm.layer import MAX_STEPS
from lessons.batchnorm.notes_demos import MAX_LOADER_BATCH, MAX_LOADER_DATASET

#: The gate of a long replay (ui.heavy): its button's key is ``batchnorm.long_run.run``.
LONG_RUN_GATE = "batchnorm.long_run"
#: A replay estimated above ui.heavy's budget (2 s) waits for a click; above PROGRESS_SECONDS
#: it shows a progress bar.
PROGRESS_SECONDS = 1.0
#: Training steps already taken when the page opens, so the chart shows a trained layer.
DEFAULT_STEPS = 60
#: Longest text a per-channel mean/std box (and a link's value for it) may hold.
MAX_CHANNEL_TEXT = 200
EPS_OPTIONS = (1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)
MOMENTUM_MODES = (N_("float (exponential average)"), N_("None (cumulative average)"))
KERAS_DIRECTIONS = ("PyTorch → Keras", "Keras → PyTorch")
ONE_LAYOUTS = {"(1, C)": 0, "(1, C, 1, 1)": 2}  # the batch-of-one demo's input: spatial dims


@dataclass(frozen=True)
class NumberBox:
    """A number input: ``low``, ``high``, ``value`` and ``step`` are ints for a whole-number
    box, floats otherwise (as ``st.number_input`` takes them)."""

    key: str
    label: str
    low: float
    high: float
    value: float
    step: float | None = None
    format: str | None = None
    help: str | None = None


# ---- beside the chart
STEPS = NumberBox(
    "batchnorm.steps", N_("Steps trained"), 0, MAX_STEPS, DEFAULT_STEPS,
    help=N_("The chart replays this many training steps on the stream from a fresh layer. Type "
            "a number to jump there, or use Train, Step and Reset."),
)
STEPS_PER_TRAIN = NumberBox("batchnorm.n_steps", N_("Steps per Train"), 1, 500, 20)
BATCH_SIZE = NumberBox(
    "batchnorm.batch_size", N_("Batch size N"), 1, 256, 16,
    help=N_("Try 1: BatchNorm needs more than one value per channel to compute a variance."),
)
MOMENTUM = NumberBox(
    "batchnorm.momentum", N_("momentum m"), 0.0, 1.0, 0.1, 0.01, "%.3f",
    help=N_("PyTorch convention: the weight of the new batch in the running average."),
)
SHIFT_HELP = N_("From step K on, the stream's mean and std change (set K and the change under "
                "More settings).")

# ---- More settings: input, stream, module
CHANNELS = NumberBox("batchnorm.channels", N_("Channels C"), 1, 8, 3)
SPATIAL = NumberBox("batchnorm.spatial", N_("Spatial size (L, or H = W)"), 1, 100_000, 4,
                    help=N_("Ignored for (N, C) input."))
SHIFT = (
    NumberBox("batchnorm.shift_step", N_("Shift after step K"), 0, MAX_STEPS, 30),
    NumberBox("batchnorm.shift_mean", N_("Shift: mean += "), -100.0, 100.0, 3.0, 0.5),
    NumberBox("batchnorm.shift_std", N_("Shift: std ×"), 0.0, 100.0, 2.0, 0.25),
)
NAN_STEP = NumberBox("batchnorm.nan_step", N_("NaN in batch number"), 0, MAX_STEPS, 5)

# ---- the explanations and demos under the chart
GROUPS_HELP = N_("G must divide C. G = 1 is LayerNorm over (C, H, W); G = C is InstanceNorm.")
KERAS_VALUE = NumberBox("batchnorm.keras_value", N_("momentum"), 0.0, 1.0, 0.1, 0.01, "%.4f")
FORMULA = (
    NumberBox("batchnorm.formula_sample", N_("sample n"), 0, 255, 0),
    NumberBox("batchnorm.formula_position", N_("spatial position (flat)"), 0, 99_999, 0,
              help=N_("Index into the L or H×W positions, row by row.")),
    NumberBox("batchnorm.formula_gamma", N_("γ (weight, every channel)"), -10.0, 10.0, 1.5, 0.25),
    NumberBox("batchnorm.formula_beta", N_("β (bias, every channel)"), -10.0, 10.0, 0.25, 0.25),
)
LOADER = (
    NumberBox("batchnorm.loader_size", N_("dataset size"), 1, MAX_LOADER_DATASET, 9),
    NumberBox("batchnorm.loader_batch", N_("DataLoader batch_size"), 1, MAX_LOADER_BATCH, 4),
)
REPEATED_EVAL = (
    NumberBox("batchnorm.eval_batch", N_("evaluation batch size"), 1, 12, 4),
    NumberBox("batchnorm.eval_sample", N_("follow test sample"), 0, 11, 0),
)
