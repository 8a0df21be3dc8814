"""Browser tests of the web console: real Chromium (Debian's package) driven by Playwright, headless, against a
real `memstrata serve` subprocess on a free loopback port with seeded data.

Every test here is marked ``browser``. A plain `make test` skips them (saying so) and stays light; `make
test-browser` (which CI runs after `make test`) selects them, and skips them with the reason when Playwright or
Chromium is missing. Screenshots of each page are saved under the
folder MEMSTRATA_CONSOLE_SCREENSHOTS names (`make test-browser`: build/console-screens), else under pytest's
temporary directory (``console-screens*``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_browser import CHROMIUM, CHROMIUM_ARGS, REQUIRED, SCREENSHOTS, Recorder
from console_seed import ScriptedBrain, Seeded, seed, seed_keyless
from console_server import serving

from support.scripted_llm import Reply, ScriptedServer


def _skip_reason(config: pytest.Config) -> str | None:
    """Why the browser tests do not run now, or None. They run when asked for (``-m browser``, as
    `make test-browser` does, or this folder named on the command line) and Chromium and Playwright are here."""
    here = Path(__file__).parent
    named = any(
        here == path or here in path.parents for path in (Path(arg.split("::")[0]).resolve() for arg in config.args)
    )
    if "browser" not in (config.option.markexpr or "") and not named:
        return "browser tests run with `make test-browser` (pytest -m browser)"
    missing = None
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing = "the browser tests need Playwright: pip install -e '.[browser]'"
    if missing is None and CHROMIUM is None:
        missing = "the browser tests need Chromium: apt-get install -y chromium (or set MEMSTRATA_CHROMIUM)"
    if missing and REQUIRED:
        raise pytest.UsageError(f"MEMSTRATA_REQUIRE_BROWSER=1 but {missing}")
    return missing


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    reason = _skip_reason(config)
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def brain() -> ScriptedBrain:
    return ScriptedBrain()


@pytest.fixture(scope="session")
def llm(brain: ScriptedBrain) -> Iterator[ScriptedServer]:
    """The scripted model behind extraction (a stand-in at the HTTP boundary; see tests/support)."""
    server = ScriptedServer()
    server.enqueue(*[Reply(respond=brain) for _ in range(1000)])
    with server.running() as running:
        yield running


@pytest.fixture(scope="session")
def seeded(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedServer) -> Seeded:
    return seed(tmp_path_factory.mktemp("console-data"), llm.base_url)


@pytest.fixture(scope="session")
def console_url(seeded: Seeded) -> Iterator[str]:
    with serving(seeded.config, log=seeded.config.parent / "serve.log") as url:
        yield url


@pytest.fixture(scope="session")
def keyless_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second service in keyless loopback mode (`serve --allow-anonymous-loopback`) on its own store."""
    config = seed_keyless(tmp_path_factory.mktemp("console-keyless"))
    with serving(config, "--allow-anonymous-loopback", log=config.parent / "serve.log") as url:
        yield url


@pytest.fixture(scope="session")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if SCREENSHOTS:
        folder = Path(SCREENSHOTS)
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("console-screens")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def page(browser: Any, recorder: Recorder) -> Iterator[Any]:
    """A fresh browser context (no storage shared between tests) at laptop size, English, recording requests."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, locale="en-US")
    context.on("request", lambda request: recorder.urls.append(request.url))
    one = context.new_page()
    one.on("pageerror", lambda error: recorder.errors.append(str(error)))
    one.set_default_timeout(20_000)
    yield one
    context.close()
