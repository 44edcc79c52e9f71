"""Text shown through Streamlit's markdown-rendering elements, kept as written."""

from __future__ import annotations

import re

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_$~])")


def plain(text: str) -> str:
    """Escape the markdown (bold, code, LaTeX, links) that st.markdown/st.error would apply, so
    ``**x**`` or ``2**k + 1`` is shown as typed."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", text).replace("](", "]\\(")
