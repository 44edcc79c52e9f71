"""Headless Chromium from the system (Debian's ``chromium``), driven by Playwright.

Nothing here downloads a browser: Chromium is found with ``shutil.which`` or the ``TP_CHROMIUM``
environment variable, and Playwright only drives it (never run ``playwright install``).
"""

from __future__ import annotations

import os
import shutil

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium_path() -> str:
    """The Chromium binary: ``TP_CHROMIUM``, else ``chromium`` on the PATH.

    Raises FileNotFoundError, saying how to install it, when there is neither.
    """
    path = os.environ.get("TP_CHROMIUM") or shutil.which("chromium")
    if not path:
        raise FileNotFoundError(
            "Chromium not found: install Debian's `chromium` (apt-get install chromium) or set "
            "TP_CHROMIUM to a Chromium binary. Never run `playwright install`."
        )
    return path


def launch_options() -> dict:
    """Keyword arguments for Playwright's ``chromium.launch`` (the sync and the async API)."""
    return {"executable_path": chromium_path(), "headless": True, "args": CHROMIUM_FLAGS}
