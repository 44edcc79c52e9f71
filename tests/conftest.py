"""Suite-wide test settings."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI must not fail on an example no developer has seen: there, hypothesis draws the same
# examples on every run. Locally each run explores new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


# Markers from where a test lives, so one lesson or one layer can be run alone
# (docs/testing.md): tests/lessons/<slug>/ gets the marker <slug>; a test that runs the app
# through AppTest gets "apptest"; tests/e2e/ gets "e2e"; tests/shared/ gets "shared".
TESTS = Path(__file__).resolve().parent


def _apptest(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    return "open_page" in getattr(item, "fixturenames", ()) or (
        module is not None and getattr(module, "AppTest", None) is not None
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.resolve().relative_to(TESTS).parts
        if parts[0] == "lessons" and len(parts) > 2:
            item.add_marker(parts[1])
        elif parts[0] in ("shared", "e2e"):
            item.add_marker(parts[0])
        if parts[0] == "app" or (parts[0] != "e2e" and _apptest(item)):
            item.add_marker("apptest")
