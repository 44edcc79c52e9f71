"""Helpers that tests and benchmarks share: starting the app, driving it, stopping it.

Nothing here is imported by the app itself (the Docker image leaves this folder out).
"""
