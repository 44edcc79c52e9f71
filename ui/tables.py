"""Static tables the cheap way: ``st.table`` of an Arrow table with the index hidden.

Given a dict or a DataFrame, ``st.table`` converts it to pandas, inspects the index and then
converts it to Arrow, about 1.1 ms a table against 0.2 ms for an Arrow table (measured in this
process with Streamlit 1.67); a BatchNorm view shows four, fifty times over when a class
opens it (``benchmarks/classroom.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
import streamlit as st


def show_table(data: Mapping[str, Sequence[Any]] | pd.DataFrame, *, where: Any = st,
               **kwargs: Any):  # fmt: skip
    """``where.table`` of ``data`` (columns by header, or a DataFrame whose index is not shown),
    with ``hide_index=True`` unless given. A column Arrow cannot type (mixed values) goes the
    slow way, through Streamlit's own conversion, which shows it as text."""
    kwargs.setdefault("hide_index", True)
    try:
        if isinstance(data, pd.DataFrame):
            table = pa.Table.from_pandas(data, preserve_index=False)
        else:
            table = pa.table({str(name): list(column) for name, column in data.items()})
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        table = data
    return where.table(table, **kwargs)
