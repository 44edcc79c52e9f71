"""The two lists of ``torch.use_deterministic_algorithms.__doc__``, cut independently of
core.seeding, for the tests that check the app's wording against them."""

from __future__ import annotations

import re

import torch


def docstring_sections() -> tuple[str, str]:
    """(made deterministic, raise RuntimeError), with markup and line breaks removed."""
    doc = torch.use_deterministic_algorithms.__doc__
    made, rest = re.split(r"will throw a\s+:class:`RuntimeError`\s+when ``mode=True``", doc)
    made = made.split("will act", 1)[1]
    raising = rest.split("In addition", 1)[0]

    def flat(text: str) -> str:
        text = re.sub(r":\w+:`([^`]+)`", r"\1", text).replace("``", "").replace("`", "")
        return re.sub(r"\s+", " ", text)

    return flat(made), flat(raising)
