"""The one pytest mark for tests that read the notes themselves (``../shared/seeds``).

The app never needs the notes at run time; tests that check a quote or a transcription against
them skip, with the reason, on a clone that does not have them beside it (CI does).
"""

from __future__ import annotations

import pytest

from core.notes import SEEDS_DIR

#: A folder without the notes' files (missing, or empty) is a clone without the notes.
needs_notes = pytest.mark.skipif(
    not any(SEEDS_DIR.glob("*.txt")), reason=f"the notes are not beside the repo ({SEEDS_DIR})"
)
