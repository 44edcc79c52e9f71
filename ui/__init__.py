"""Streamlit-side building blocks shared by every page (sidebar, image input, snippets)."""
