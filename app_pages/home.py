"""Home: what each page teaches, live environment facts, reproducibility switches, image input."""

import pandas as pd
import streamlit as st
import torch

from core import environment, seeding
from core.environment import collect_environment
from core.lesson_links import lessons_markdown
from core.notes import cite
from ui.image_input import image_input
from ui.lesson import lazy_expander
from ui.notes_callout import callouts_of, notes_callout, notes_citation
from ui.registry import LESSONS, available_lessons
from ui.settings import current_settings
from ui.turns import take_turn


@st.cache_resource(show_spinner=False)
def _visible_devices() -> environment.VisibleDevicesDemo:
    """Four child processes; the server's environment does not change, so once per process."""
    return environment.visible_devices_demo()


@st.cache_resource(show_spinner=False)
def _collect_env() -> environment.CommandRun:
    return environment.collect_env_report()


st.title("Torch Playground", anchor=False)
st.markdown(
    "Move a slider, upload an image, and see what the real PyTorch call does, and why. "
    "Every picture is computed by the real torch or OpenCV operation."
)
take_turn()  # the header is on its way; the rest waits for this script's turn (ui/turns.py)

settings = current_settings()

st.header("Pages", anchor=False)
lessons = available_lessons()
if lessons:
    # The title is the link and the summary wraps under it: a whole sentence as a link label
    # was cut off at the right on a 1280 px projector. Rows of two keep the order on a phone.
    for start in range(0, len(lessons), 2):
        for column, page in zip(st.columns(2), lessons[start : start + 2], strict=False):
            with column.container(border=True, key=f"home-lesson-{page.slug}"):
                st.page_link(page.relative_script, label=f"**{page.title}**", icon=page.icon)
                st.markdown(page.summary)
else:
    st.info("No lesson pages are installed yet.")
missing = len(LESSONS) - len(lessons)
if missing:
    st.caption(f"{missing} more page(s) are being built and will appear here when ready.")

st.header("Lessons", anchor=False)
st.markdown(
    "Ready-made links, one point from the notes each. A link opens its page set up to make the "
    "point, in a new tab; hand it to a class as it is. Every page's sidebar also has a **Link "
    "to this view** for the view you set up yourself."
)
# One markdown list, not a widget per lesson: 17 links cost one element for a class of 50.
st.markdown(lessons_markdown("", {page.slug: page.title for page in LESSONS}))

st.header("Your environment", anchor=False)
st.markdown("Read live from this Python process every time the page runs.")
facts = collect_environment()
table = pd.DataFrame(
    {
        "group": [fact.group for fact in facts],
        "item": [fact.name for fact in facts],
        "value": [fact.shown for fact in facts],
        "why / note": [fact.note for fact in facts],
    }
)
# A static table, so the notes wrap instead of being cut at the cell's edge (st.dataframe
# truncates every cell to one line).
st.table(table, hide_index=True, alt="This process's versions, devices and settings, with notes.")
st.caption(f"Sidebar choice for this session: device `{settings.device}`, seed `{settings.seed}`.")

st.caption(
    "`torch.cuda.is_available()` asks the CUDA runtime (`cudaGetDeviceCount`) unless "
    f"`{environment.NVML_CHECK_VAR}=1` is set, in which case it asks NVML first: the "
    f"`{environment.NVML_CHECK_VAR}` row above says which check this process makes."
)

callouts = callouts_of("core.environment")
st.header("Reproducibility", anchor=False)
cudnn_used = torch.cuda.is_available() and torch.backends.cudnn.is_available()
with st.expander("Reproducibility switches, and what each one costs", expanded=True):
    st.markdown(
        f"""
- **One global seed** (sidebar, now `{settings.seed}`) is applied at the start of every run to
  Python's `random`, NumPy's global generator and `torch.manual_seed`, which also seeds every
  CUDA device. Cost: none. It makes *random* draws repeatable, not the arithmetic.
- **`torch.backends.cudnn.deterministic = True`** makes cuDNN pick only deterministic
  convolution algorithms, so the same input gives bit-identical convolutions run after run.
  Cost: some layers get slower (the fastest algorithms often use atomics), sometimes much slower.
- **`torch.backends.cudnn.benchmark = True`** times several convolution algorithms the first
  time each input shape appears and keeps the fastest. Cost: a slow first call per shape, and
  results may differ between runs because the winner can change. Leave it `False` when you need
  repeatability or when input shapes keep changing.
"""
    )
    try:
        ops = seeding.deterministic_ops()
    except ValueError as error:
        st.error(
            f"{error}\n\nHint: read `torch.use_deterministic_algorithms.__doc__` directly.",
            icon=":material/error:",
        )
        ops = None
    if ops is not None:
        st.markdown("- " + seeding.deterministic_flag_markdown(ops))
    st.markdown(
        "On the CPU most operations are already deterministic for a fixed thread count; the "
        "switches matter mainly on CUDA."
    )

# Collapsed sections are lazy (on_change="rerun"): their content runs and is sent only when a
# student opens one, not for each of a class of 50 opening the page (issue 13).
ops_box = (
    lazy_expander(
        f"Every operation in `torch.use_deterministic_algorithms.__doc__` (torch "
        f"{ops.torch_version})",
        key="home.ops_box",
    )
    if ops is not None
    else None
)
if ops_box is not None:
    with ops_box:
        made_col, raise_col = st.columns(2)
        made_col.markdown("**Switch to a deterministic algorithm**")
        made_col.dataframe(
            pd.DataFrame(
                {
                    "operation": [op.name for op in ops.made_deterministic],
                    "when": [op.condition for op in ops.made_deterministic],
                }
            ),
            hide_index=True,
            key="home.det_made",
        )
        raise_col.markdown("**Raise RuntimeError**")
        raise_col.dataframe(
            pd.DataFrame(
                {
                    "operation": [op.name for op in ops.raise_error],
                    "when": [op.condition for op in ops.raise_error],
                }
            ),
            hide_index=True,
            key="home.det_raise",
        )

st.subheader("The cuDNN option of the sidebar", anchor=False)
st.markdown(
    f"The sidebar's **cuDNN deterministic** toggle (now "
    f"{'on' if settings.cudnn_deterministic else 'off'}) is the notes' recipe: "
    "`seed_everything(seed, cudnn_deterministic=True)` sets "
    "`torch.backends.cudnn.deterministic = True` and `torch.backends.cudnn.benchmark = False` "
    "with the seed at the start of every run; off restores PyTorch's defaults (both `False`). "
    f"Read now: `deterministic = {torch.backends.cudnn.deterministic}`, "
    f"`benchmark = {torch.backends.cudnn.benchmark}`. Like the random generators, these flags "
    "are process-wide: every visitor of this server shares them."
)
if cudnn_used:
    st.caption(
        "cuDNN runs here: with the option on, convolutions on the GPU use deterministic "
        "algorithms and can get slower (the saliency page's backward pass most)."
    )
else:
    st.caption(
        "No GPU here, so cuDNN is not used and the option changes no result and no timing on "
        "this machine; on a GPU it costs convolution speed."
    )

st.subheader("The notes' seeding recipes", anchor=False)
notes_col, app_col = st.columns(2)
with notes_col:
    st.code(seeding.NOTES_SEEDING_CODE, language="python", wrap_lines=True)
    notes_citation(seeding.NOTES_SEEDING_REF)
    st.code(seeding.NOTES_INIT_SEEDS_CODE, language="python", wrap_lines=True)
    st.caption(
        f"From the {cite(seeding.NOTES_INIT_SEEDS_REF)}: the notes' statements, with "
        "`import torch` added and four-space indentation."
    )
with app_col:
    st.code(
        seeding.seeding_snippet(settings.seed, cudnn_deterministic=settings.cudnn_deterministic),
        language="python",
        wrap_lines=True,
    )
    st.caption(
        "What this app does with the sidebar's seed and cuDNN option, in plain Python: all "
        "three generators, cuDNN as a separate choice."
    )
recipes_box = lazy_expander(
    "What the notes' recipes miss: three notes checked against torch today", key="home.recipes_box"
)
if recipes_box is not None:
    with recipes_box:
        for key in (
            "init_seeds_torch_only", "manual_seed_cpu_only", "cudnn_deterministic_not_enough"
        ):  # fmt: skip
            notes_callout(callouts[key])

st.header("Choosing GPUs: CUDA_VISIBLE_DEVICES", anchor=False)
st.markdown(
    "`CUDA_VISIBLE_DEVICES` lists the GPUs a process may see (`0,1`, or `-1` / empty for "
    "none). CUDA renumbers the listed GPUs from 0, so with `CUDA_VISIBLE_DEVICES=1` the second "
    "card is `cuda:0`. It is read **once, when CUDA initialises**: set it on the command line "
    "or in `os.environ` before the first CUDA call, never after."
)
c1, c2 = st.columns(2)
with c1:
    st.code(environment.NOTES_VISIBLE_DEVICES_CODE, language="python", wrap_lines=True)
    notes_citation(environment.NOTES_VISIBLE_DEVICES_REF)
with c2:
    st.code(environment.NOTES_VISIBLE_DEVICES_SHELL, language="bash", wrap_lines=True)
    notes_citation(environment.NOTES_VISIBLE_DEVICES_SHELL_REF)
if st.button(
    "Run device_count() in fresh processes", key="home.visible_devices", icon=":material/memory:"
):
    st.session_state["home.visible_devices_shown"] = True
if st.session_state.get("home.visible_devices_shown"):
    with st.spinner("Starting four Python processes (one torch import each)..."):
        demo = _visible_devices()
    st.dataframe(
        pd.DataFrame(
            {
                "case": [case.label for case in demo.cases],
                "command": [case.run.command for case in demo.cases],
                "device_count()": [
                    "no output" if case.count is None else str(case.count) for case in demo.cases
                ],
            }
        ),
        hide_index=True,
        width="stretch",
        key="home.visible_devices_table",
    )
    st.markdown(demo.explanation)
    for case in demo.cases:
        if case.run.error or case.run.returncode:
            st.code(case.run.error or case.run.stderr[-2000:], language="text", wrap_lines=True)
else:
    st.caption("Starts four Python processes: a few seconds.")
gpus_box = lazy_expander(
    "The notes on choosing GPUs, checked against torch today", key="home.gpus_box"
)
if gpus_box is not None:
    with gpus_box:
        notes_callout(callouts["cuda_visible_devices_order"])

st.header("The full report: python -m torch.utils.collect_env", anchor=False)
st.markdown(
    "What a bug report to PyTorch asks for: versions, CUDA and cuDNN, GPU models, driver, CPU "
    f"and the relevant pip packages. The {cite('002:1289-1330')} show a torch 1.4 report and "
    "run the file from inside site-packages."
)
st.code("python -m torch.utils.collect_env", language="bash", wrap_lines=True)
if st.button("Run it now", key="home.collect_env", icon=":material/terminal:"):
    st.session_state["home.collect_env_shown"] = True
if st.session_state.get("home.collect_env_shown"):
    with st.spinner("Running python -m torch.utils.collect_env (a few seconds)..."):
        report = _collect_env()
    if report.ok:
        st.caption(f"Ran in {report.seconds:.1f} s on this server (cached for this process).")
        st.code(report.stdout, language="text", wrap_lines=True)
    else:
        st.error(
            f"collect_env did not finish: {report.error or f'exit status {report.returncode}'}"
            "\n\nHint: run the command above in a terminal on the server.",
            icon=":material/error:",
        )
        if report.stderr:
            st.code(report.stderr[-4000:], language="text", wrap_lines=True)
collect_env_box = lazy_expander(
    "The notes on running collect_env, checked against torch today", key="home.collect_env_box"
)
if collect_env_box is not None:
    with collect_env_box:
        notes_callout(callouts["collect_env_path"])

st.header("Try the shared image input", anchor=False)
st.caption(
    "Every image page uses this same input: a bundled sample (no network needed) or your own "
    "file, decoded in memory to RGB uint8 with EXIF rotation applied."
)
rgb = image_input("home.image")
if rgb is not None:
    st.image(
        rgb,
        caption=f"{rgb.shape[1]}x{rgb.shape[0]} RGB, dtype {rgb.dtype}",
        alt=f"The chosen image as the pages receive it: {rgb.shape[1]}x{rgb.shape[0]} RGB.",
        width=360,
    )
