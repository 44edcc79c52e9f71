"""Home: what each page teaches, live environment facts, reproducibility switches, image input."""

import pandas as pd
import streamlit as st

from core.environment import collect_environment
from ui.image_input import image_input
from ui.registry import LESSONS, available_lessons
from ui.settings import current_settings

st.title("Torch Playground")
st.caption(
    "Move a slider, upload an image, and see what the real PyTorch call does, and why. "
    "Every picture is computed by the real torch or OpenCV operation."
)

settings = current_settings()

st.header("Pages", anchor=False)
lessons = available_lessons()
if lessons:
    for page in lessons:
        label = f"**{page.title}**: {page.summary}"
        st.page_link(page.relative_script, label=label, icon=page.icon)
else:
    st.info("No lesson pages are installed yet.")
missing = len(LESSONS) - len(lessons)
if missing:
    st.caption(f"{missing} more page(s) are being built and will appear here when ready.")

st.header("Your environment", anchor=False)
st.caption("Read live from this Python process every time the page runs.")
facts = collect_environment()
table = pd.DataFrame(
    {
        "group": [fact.group for fact in facts],
        "item": [fact.name for fact in facts],
        "value": [fact.shown for fact in facts],
        "why / note": [fact.note for fact in facts],
    }
)
# Tall enough to show every row without an inner scrollbar (35 px a row plus the header).
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    height=35 * (len(table) + 1) + 3,
    key="home.environment",
)
st.caption(f"Sidebar choice for this session: device `{settings.device}`, seed `{settings.seed}`.")

with st.expander("Reproducibility switches, and what each one costs", expanded=True):
    st.markdown(
        f"""
- **One global seed** (sidebar, now `{settings.seed}`) is applied at the start of every run to
  Python's `random`, NumPy's global generator and `torch.manual_seed`, which also seeds every
  CUDA device. Cost: none. It makes *random* draws repeatable, not the arithmetic.
- **`torch.backends.cudnn.deterministic = True`** makes cuDNN pick only deterministic
  convolution algorithms, so the same input gives bit-identical output run after run.
  Cost: some layers get slower (the fastest algorithms often use atomics), sometimes much slower.
- **`torch.backends.cudnn.benchmark = True`** times several convolution algorithms the first
  time each input shape appears and keeps the fastest. Cost: a slow first call per shape, and
  results may differ between runs because the winner can change. Leave it `False` when you need
  repeatability or when input shapes keep changing.
- **`torch.use_deterministic_algorithms(True)`** goes further: operations with no deterministic
  implementation (for example some `scatter_add_` and `index_add_` paths on CUDA) raise an error
  instead of silently varying. Cost: errors to work around, and slower kernels.

On the CPU most operations are already deterministic for a fixed thread count; the switches
matter mainly on CUDA.
"""
    )

st.header("Try the shared image input", anchor=False)
st.caption(
    "Every image page uses this same input: a bundled sample (no network needed) or your own "
    "file, decoded in memory to RGB uint8 with EXIF rotation applied."
)
rgb = image_input("home.image")
if rgb is not None:
    st.image(rgb, caption=f"{rgb.shape[1]}x{rgb.shape[0]} RGB, dtype {rgb.dtype}", width=360)
