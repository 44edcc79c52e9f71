"""Home: what each page teaches, live environment facts, reproducibility switches, image input."""

import pandas as pd
import streamlit as st
import torch

from core import environment, seeding
from core.environment import collect_environment
from core.notes import NotesCallout
from core.text import N_
from lessons.home.questions import questions
from lessons.registry import LESSONS, available_lessons, lessons_markdown
from ui.code import localized
from ui.i18n import _, cite, ngettext, tr
from ui.image_input import image_input
from ui.lesson import lazy_expander
from ui.notes_callout import callouts_of, notes_callout, notes_citation
from ui.pictures import show_image
from ui.predict import predict_panel
from ui.settings import Settings, current_settings
from ui.tables import show_table
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
    _(
        "Move a slider, upload an image, and see what the real PyTorch call does, and why. "
        "Every picture is computed by the real torch or OpenCV operation."
    )
)
# Reserved under the header for the questions (ui.predict), which the page fills last.
predict_box = st.container(key="lesson-predict")
take_turn()  # the header is on its way; the rest waits for this script's turn (ui/turns.py)


def _pages() -> None:
    """The lesson pages, two to a row: title as the link, summary under it."""
    st.header(_("Pages"), anchor=False)
    lessons = available_lessons()
    if lessons:
        # The title is the link and the summary wraps under it: a whole sentence as a link label
        # was cut off at the right on a 1280 px projector. Rows of two keep the order on a phone.
        for start in range(0, len(lessons), 2):
            for column, page in zip(st.columns(2), lessons[start : start + 2], strict=False):
                with column.container(border=True, key=f"home-lesson-{page.slug}"):
                    st.page_link(page.relative_script, label=f"**{_(page.title)}**", icon=page.icon)
                    st.markdown(_(page.summary))
    else:
        st.info(_("No lesson pages are installed yet."))
    missing = len(LESSONS) - len(lessons)
    if missing:
        st.caption(
            ngettext(
                "{n} more page is being built and will appear here when ready.",
                "{n} more pages are being built and will appear here when ready.",
                missing,
            ).format(n=missing)
        )


def _lessons() -> None:
    """The ready-made lesson links, one markdown list."""
    st.header(_("Lessons"), anchor=False)
    st.markdown(
        _(
            "Ready-made links, one point from the notes each. A link opens its page set up to make "
            "the point, in a new tab; hand it to a class as it is. Every page's sidebar also has a "
            "**Link to this view** for the view you set up yourself."
        )
    )
    # One markdown list, not a widget per lesson: 17 links cost one element for a class of 50.
    st.markdown(lessons_markdown("", {page.slug: _(page.title) for page in LESSONS}, translate=_))


def _environment(settings: Settings) -> None:
    """The live environment table and the sidebar's device and seed."""
    st.header(_("Your environment"), anchor=False)
    st.markdown(_("Read live from this Python process every time the page runs."))
    facts = collect_environment()
    table = pd.DataFrame(
        {
            _("group"): [tr(fact.group) for fact in facts],
            _("item"): [tr(fact.name) for fact in facts],
            _("value"): [
                _(fact.shown)
                if fact.value is None or fact.value == environment.UNSET
                else fact.shown
                for fact in facts
            ],
            _("why / note"): [tr(fact.note) for fact in facts],
        }
    )
    # A static table, so the notes wrap instead of being cut at the cell's edge (st.dataframe
    # truncates every cell to one line).
    show_table(
        table, hide_index=True, alt=_("This process's versions, devices and settings, with notes.")
    )
    st.caption(
        _("Sidebar choice for this session: device `{device}`, seed `{seed}`.").format(
            device=settings.device, seed=settings.seed
        )
    )

    st.caption(
        _(
            "`torch.cuda.is_available()` asks the CUDA runtime (`cudaGetDeviceCount`) unless "
            "`{var}=1` is set, in which case it asks NVML first: the `{var}` row above says which "
            "check this process makes."
        ).format(var=environment.NVML_CHECK_VAR)
    )


def _reproducibility(settings: Settings) -> None:
    """The reproducibility switches, their costs, and torch's list of deterministic operations."""
    st.header(_("Reproducibility"), anchor=False)
    with st.expander(_("Reproducibility switches, and what each one costs"), expanded=True):
        st.markdown(_(seeding.SWITCHES_EXPLAINED).format(seed=settings.seed))
        try:
            ops = seeding.deterministic_ops()
        except ValueError as error:
            st.error(
                _(
                    "{error}\n\nHint: read `torch.use_deterministic_algorithms.__doc__` directly."
                ).format(error=tr(error)),
                icon=":material/error:",
            )
            ops = None
        if ops is not None:
            st.markdown("- " + seeding.deterministic_flag_markdown(ops, translate=_))
        st.markdown(
            _(
                "On the CPU most operations are already deterministic for a fixed thread count; "
                "the switches matter mainly on CUDA."
            )
        )

    # Collapsed sections are lazy (on_change="rerun"): their content runs and is sent only when a
    # student opens one, not for each of a class of 50 opening the page.
    ops_box = (
        lazy_expander(
            _(
                "Every operation in `torch.use_deterministic_algorithms.__doc__` (torch {version})"
            ).format(version=ops.torch_version),
            key="home.ops_box",
        )
        if ops is not None
        else None
    )
    if ops_box is not None:
        with ops_box:
            made_col, raise_col = st.columns(2)
            made_col.markdown(_("**Switch to a deterministic algorithm**"))
            made_col.dataframe(
                pd.DataFrame(
                    {
                        _("operation"): [op.name for op in ops.made_deterministic],
                        _("when"): [tr(op.condition) for op in ops.made_deterministic],
                    }
                ),
                hide_index=True,
                key="home.det_made",
            )
            raise_col.markdown(_("**Raise RuntimeError**"))
            raise_col.dataframe(
                pd.DataFrame(
                    {
                        _("operation"): [op.name for op in ops.raise_error],
                        _("when"): [tr(op.condition) for op in ops.raise_error],
                    }
                ),
                hide_index=True,
                key="home.det_raise",
            )


def _cudnn_option(settings: Settings) -> None:
    """What the sidebar's cuDNN option sets, and what it costs on this machine."""
    cudnn_used = torch.cuda.is_available() and torch.backends.cudnn.is_available()
    st.subheader(_("The cuDNN option of the sidebar"), anchor=False)
    st.markdown(
        _(seeding.CUDNN_OPTION_EXPLAINED).format(
            state=_("on") if settings.cudnn_deterministic else _("off"),
            deterministic=torch.backends.cudnn.deterministic,
            benchmark=torch.backends.cudnn.benchmark,
        )
    )
    if cudnn_used:
        st.caption(
            _(
                "cuDNN runs here: with the option on, convolutions on the GPU use deterministic "
                "algorithms and can get slower (the saliency page's backward pass most)."
            )
        )
    else:
        st.caption(
            _(
                "No GPU here, so cuDNN is not used and the option changes no result and no timing "
                "on this machine; on a GPU it costs convolution speed."
            )
        )


def _seeding_recipes(settings: Settings, callouts: dict[str, NotesCallout]) -> None:
    """The notes' seeding recipes beside the app's, and what the notes miss."""
    st.subheader(_("The notes' seeding recipes"), anchor=False)
    notes_col, app_col = st.columns(2)
    with notes_col:
        st.code(seeding.NOTES_SEEDING_CODE, language="python", wrap_lines=True)
        notes_citation(seeding.NOTES_SEEDING_REF)
        st.code(seeding.NOTES_INIT_SEEDS_CODE, language="python", wrap_lines=True)
        st.caption(
            _(
                "From the {ref}: the notes' statements, with `import torch` added and four-space "
                "indentation."
            ).format(ref=cite(seeding.NOTES_INIT_SEEDS_REF))
        )
    with app_col:
        st.code(
            localized(
                seeding.seeding_snippet(
                    settings.seed, cudnn_deterministic=settings.cudnn_deterministic
                )
            ),
            language="python",
            wrap_lines=True,
        )
        st.caption(
            _(
                "The sidebar's seed and cuDNN option in a script of your own, where the three "
                "process-wide generators are yours alone (the app draws from private ones instead)."
            )
        )
    recipes_box = lazy_expander(
        N_("What the notes' recipes miss: three notes checked against torch today"),
        key="home.recipes_box",
    )
    if recipes_box is not None:
        with recipes_box:
            for key in (
                "init_seeds_torch_only", "manual_seed_cpu_only", "cudnn_deterministic_not_enough"
            ):  # fmt: skip
                notes_callout(callouts[key])


def _choosing_gpus(callouts: dict[str, NotesCallout]) -> None:
    """CUDA_VISIBLE_DEVICES, shown live in fresh processes."""
    st.header(_("Choosing GPUs: CUDA_VISIBLE_DEVICES"), anchor=False)
    st.markdown(
        _(
            "`CUDA_VISIBLE_DEVICES` lists the GPUs a process may see (`0,1`, or `-1` / empty for "
            "none). CUDA renumbers the listed GPUs from 0, so with `CUDA_VISIBLE_DEVICES=1` the "
            "second card is `cuda:0`. It is read **once, when CUDA initialises**: set it on the "
            "command line or in `os.environ` before the first CUDA call, never after."
        )
    )
    c1, c2 = st.columns(2)
    with c1:
        st.code(environment.NOTES_VISIBLE_DEVICES_CODE, language="python", wrap_lines=True)
        notes_citation(environment.NOTES_VISIBLE_DEVICES_REF)
    with c2:
        st.code(environment.NOTES_VISIBLE_DEVICES_SHELL, language="bash", wrap_lines=True)
        notes_citation(environment.NOTES_VISIBLE_DEVICES_SHELL_REF)
    if st.button(
        _("Run device_count() in fresh processes"),
        key="home.visible_devices",
        icon=":material/memory:",
    ):
        st.session_state["home.visible_devices_shown"] = True
    if st.session_state.get("home.visible_devices_shown"):
        with st.spinner(_("Starting four Python processes (one torch import each)...")):
            demo = _visible_devices()
        st.dataframe(
            pd.DataFrame(
                {
                    _("case"): [tr(case.label) for case in demo.cases],
                    _("command"): [case.run.command for case in demo.cases],
                    "device_count()": [
                        _("no output") if case.count is None else str(case.count)
                        for case in demo.cases
                    ],
                }
            ),
            hide_index=True,
            width="stretch",
            key="home.visible_devices_table",
        )
        st.markdown(tr(demo.explanation))
        for case in demo.cases:
            if case.run.error or case.run.returncode:
                st.code(case.run.error or case.run.stderr[-2000:], language="text", wrap_lines=True)
    else:
        st.caption(_("Starts four Python processes: a few seconds."))
    with st.container(key="home-gpus-notes"):  # a question hides it: it says which GPU
        gpus_box = lazy_expander(
            N_("The notes on choosing GPUs, checked against torch today"), key="home.gpus_box"
        )
    if gpus_box is not None:
        with gpus_box:
            notes_callout(callouts["cuda_visible_devices_order"])


def _collect_env_section(callouts: dict[str, NotesCallout]) -> None:
    """python -m torch.utils.collect_env, run on request."""
    st.header(_("The full report: python -m torch.utils.collect_env"), anchor=False)
    st.markdown(
        _(
            "What a bug report to PyTorch asks for: versions, CUDA and cuDNN, GPU models, driver, "
            "CPU and the relevant pip packages. The {ref} show a torch 1.4 report and run the file "
            "from inside site-packages."
        ).format(ref=cite("002:1289-1330"))
    )
    st.code("python -m torch.utils.collect_env", language="bash", wrap_lines=True)
    if st.button(_("Run it now"), key="home.collect_env", icon=":material/terminal:"):
        st.session_state["home.collect_env_shown"] = True
    if st.session_state.get("home.collect_env_shown"):
        with st.spinner(_("Running python -m torch.utils.collect_env (a few seconds)...")):
            report = _collect_env()
        if report.ok:
            st.caption(
                _("Ran in {seconds:.1f} s on this server (cached for this process).").format(
                    seconds=report.seconds
                )
            )
            st.code(report.stdout, language="text", wrap_lines=True)
        else:
            reason = (
                tr(report.error)
                if report.error
                else _("exit status {code}").format(code=report.returncode)
            )
            st.error(
                _(
                    "collect_env did not finish: {reason}\n\nHint: run the command above in a "
                    "terminal on the server."
                ).format(reason=reason),
                icon=":material/error:",
            )
            if report.stderr:
                st.code(report.stderr[-4000:], language="text", wrap_lines=True)
    collect_env_box = lazy_expander(
        N_("The notes on running collect_env, checked against torch today"),
        key="home.collect_env_box",
    )
    if collect_env_box is not None:
        with collect_env_box:
            notes_callout(callouts["collect_env_path"])


def _image_input() -> None:
    """The shared image input every image page uses."""
    st.header(_("Try the shared image input"), anchor=False)
    st.caption(
        _(
            "Every image page uses this same input: a bundled sample (no network needed) or your "
            "own file, decoded in memory to RGB uint8 with EXIF rotation applied."
        )
    )
    rgb = image_input("home.image")
    if rgb is not None:
        show_image(
            rgb,
            caption=_("{width}x{height} RGB, dtype {dtype}").format(
                width=rgb.shape[1], height=rgb.shape[0], dtype=rgb.dtype
            ),
            alt=_("The chosen image as the pages receive it: {width}x{height} RGB.").format(
                width=rgb.shape[1], height=rgb.shape[0]
            ),
            width=360,
        )


# The story: each section is a function above, in the order a visitor reads them.
settings = current_settings()
_pages()
_lessons()
_environment(settings)
callouts = callouts_of("core.environment")
with st.container(key="home-reproducibility"):  # the keyed parts: what the questions hide
    _reproducibility(settings)
_cudnn_option(settings)
with st.container(key="home-recipes"):
    _seeding_recipes(settings, callouts)
_choosing_gpus(callouts)
_collect_env_section(callouts)
_image_input()
predict_panel(predict_box, "home", lambda: questions(settings.seed))
