"""The one pytest mark for tests that read the notes themselves (``../shared/seeds``).

The app never needs the notes at run time; tests that check a quote or a transcription against
them skip, with the reason, on a clone that does not have them beside it (CI does).
"""

from __future__ import annotations

import pytest

from core.notes import SEEDS_DIR

needs_notes = pytest.mark.skipif(
    not SEEDS_DIR.is_dir(), reason=f"the notes are not beside the repo ({SEEDS_DIR})"
)
