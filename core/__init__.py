"""Pure computational core of Torch Playground. Nothing in here imports streamlit."""
