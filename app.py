"""Torch Playground entry point: page config, the page registry and the shared sidebar.

Run with ``streamlit run app.py``. Nothing else lives here.
"""

import streamlit as st

from ui.registry import available_pages
from ui.settings import render_sidebar

st.set_page_config(page_title="Torch Playground", page_icon=":material/science:", layout="wide")

navigation = st.navigation(
    [
        st.Page(
            page.relative_script,
            title=page.title,
            icon=page.icon,
            url_path=page.slug,
            default=page.slug == "home",
        )
        for page in available_pages()
    ]
)
render_sidebar()
navigation.run()
