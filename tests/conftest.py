"""Shared fixtures: a cache folder of the session's own, and a real headless browser (Debian's
``chromium``, driven by Playwright).

Browser tests fail, never skip, when chromium is missing: ``scripts/setup.sh`` installs it.
Screenshots go to ``out/test-artifacts/`` (or ``$REASONER_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: Flags for a headless chromium that contacts nothing but the pages it is sent to.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session", autouse=True)
def own_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Parsed rules and grammars are cached under the session's own ``$XDG_CACHE_HOME`` (also
    for the commands tests start), never in the user's."""
    before = os.environ.get("XDG_CACHE_HOME")
    folder = tmp_path_factory.mktemp("cache")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    if before is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture(scope="session", autouse=True)
def local_spark() -> Iterator[None]:
    """Spark runs on ``local[2]`` in this process and in the commands tests start, whichever
    test starts the process's one session (an in-process command without ``--master`` too)."""
    before = os.environ.get("REASONER_SPARK_MASTER")
    os.environ["REASONER_SPARK_MASTER"] = "local[2]"
    yield
    if before is None:
        del os.environ["REASONER_SPARK_MASTER"]
    else:
        os.environ["REASONER_SPARK_MASTER"] = before


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless chromium per test module.

    Playwright's sync API keeps an asyncio loop running while it is open; scoped to the module,
    it is closed before other tests (and doctests) call ``asyncio.run``.
    """
    path = os.environ.get("REASONER_CHROMIUM") or shutil.which("chromium")
    if path is None:
        pytest.fail(
            "the browser tests need Debian's chromium: run scripts/setup.sh (as root it installs "
            "it) or `apt-get install -y chromium`, or set REASONER_CHROMIUM"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh page (1300 x 900); console errors and page errors fail the test at its end."""
    context = chromium.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.problems = problems
    yield page
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where browser tests save their screenshots."""
    root = Path(__file__).resolve().parents[1]
    folder = Path(os.environ.get("REASONER_TEST_ARTIFACTS") or root / "out" / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
