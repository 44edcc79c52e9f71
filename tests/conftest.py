"""Suite-wide test settings."""

import os

from hypothesis import settings

# CI must not fail on an example no developer has seen: there, hypothesis draws the same
# examples on every run. Locally each run explores new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
