"""Which Chromium the console tests drive, with which flags, and what they record of the page."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

# Read at import: the hermetic fixture of tests/conftest.py clears MEMSTRATA_* variables for each test.
CHROMIUM = next(
    (path for path in (os.environ.get("MEMSTRATA_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium",
                       shutil.which("chromium-browser")) if path and Path(path).is_file()),
    None,
)  # fmt: skip
# The flags of the earlier probe: no network chatter of the browser's own (updates, sync, QUIC probes).
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-domain-reliability", "--metrics-recording-only",
]  # fmt: skip
# Where the page screenshots go: this folder when set (make test-browser: build/console-screens), else pytest's tmp.
SCREENSHOTS = os.environ.get("MEMSTRATA_CONSOLE_SCREENSHOTS")
# CI sets this: a missing browser is then an error, not a skip, so the console is never silently untested.
REQUIRED = os.environ.get("MEMSTRATA_REQUIRE_BROWSER") == "1"
LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}


class Recorder:
    """Every request the page makes, and every script error it raises."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.errors: list[str] = []

    def outside_loopback(self) -> list[str]:
        return [
            url for url in self.urls
            if not url.startswith(("data:", "blob:")) and urlsplit(url).hostname not in LOOPBACK
        ]  # fmt: skip
