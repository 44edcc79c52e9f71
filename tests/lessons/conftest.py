"""The AppTest fixtures for the lessons' page tests (defined once, in tests/app/conftest.py)."""

from tests.app.conftest import _clear_streamlit_caches, open_page  # noqa: F401
