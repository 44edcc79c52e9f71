"""ui.tables.show_table: an Arrow table with the index hidden, and the slow way when needed."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from ui.tables import show_table


class _Where:
    def __init__(self) -> None:
        self.calls: list[tuple[object, dict]] = []

    def table(self, data, **kwargs):
        self.calls.append((data, kwargs))


def test_columns_become_an_arrow_table_without_index():
    where = _Where()
    show_table({"name": ["weight", "bias"], "n": [4, 4]}, where=where, border="horizontal")
    data, kwargs = where.calls[0]
    assert isinstance(data, pa.Table)
    assert data.column_names == ["name", "n"] and data.to_pydict()["n"] == [4, 4]
    assert kwargs == {"hide_index": True, "border": "horizontal"}


def test_a_dataframe_loses_only_its_index():
    where = _Where()
    frame = pd.DataFrame({"a": [1.5, 2.5]}, index=[7, 9])
    show_table(frame, where=where, hide_index=False)
    data, kwargs = where.calls[0]
    assert isinstance(data, pa.Table) and data.column_names == ["a"]
    assert kwargs == {"hide_index": False}


def test_mixed_columns_go_to_streamlit_as_they_are():
    where = _Where()
    mixed = {"value": [1, "one"]}
    show_table(mixed, where=where)
    assert where.calls[0][0] is mixed
