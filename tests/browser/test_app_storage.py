"""Same-origin storage for an app that asks for an origin of its own (``_meta.ui.domain``, apps/origin.py):
``localStorage`` and ``sessionStorage`` work in the view and keep what it wrote across a re-render (the
cell re-run: a new frame), a page reload and a kernel restart (the kernel's proxy comes back on the same
port, so the same origin: that part failed before, each kernel took a random port).

The view's origin (``http://localhost:PORT``) is another site than JupyterLab's (``127.0.0.1``), so that it
sees none of JupyterLab's cookies; its storage is therefore *third-party* storage. Chromium partitions
third-party storage by the top-level site (on by default since Chromium 115): the view gets storage of its
own, seen only under this JupyterLab. Measured with Debian's Chromium 156: a fresh profile and an
incognito context both give it. Playwright turns partitioning off (``--disable-features=...
ThirdPartyStoragePartitioning``, microsoft/playwright#32230), and then third-party storage is blocked:
the view gets a ``SecurityError``. So the first test launches Chromium with Playwright's switches except
that one (as Chromium ships), the second with Playwright's own, so that what the docs say is measured.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Locator, Playwright, expect, sync_playwright

from .conftest import (
    CHROMIUM,
    CHROMIUM_ARGS,
    KERNEL_TIMEOUT_MS,
    UI_TIMEOUT_MS,
    Lab,
    Notebook,
    app_frame,
    write_notebook,
)

STORAGE_APP = """<!doctype html><html><body><div id="said">starting</div><script>
const said = document.getElementById('said');
try {
  const local = Number(localStorage.getItem('visits') || 0) + 1;
  localStorage.setItem('visits', String(local));
  const session = Number(sessionStorage.getItem('visits') || 0) + 1;
  sessionStorage.setItem('visits', String(session));
  said.textContent = 'origin ' + window.origin + '; local ' + local + '; session ' + session;
} catch (e) {
  said.textContent = 'origin ' + window.origin + '; refused: ' + e.name;
}
</script></body></html>"""

CELLS = [
    "%load_ext mcp_notebook",
    f"APP = {STORAGE_APP!r}\n"
    "@mcp.tool(app=APP, domain='notes.example', uri='ui://t/notes.html')\n"
    "def notes() -> str:\n    'Notes.'\n    return 'n'",
    "%mcp call notes",
]


PLAYWRIGHT_BUNDLE = "driver/package/lib/coreBundle.js"  # where Playwright lists the features it disables


def _playwright_disabled_features() -> list[str]:
    """The ``--disable-features`` list Playwright adds to Chromium (chromiumSwitches.ts, in its bundle)."""
    import playwright as package

    bundle = Path(package.__file__).parent / PLAYWRIGHT_BUNDLE
    text = bundle.read_text(encoding="utf-8") if bundle.is_file() else ""
    block = re.search(r"disabledFeatures = \[(.*?)\]\.filter\(Boolean\)", text, re.S)
    if block is None or "ThirdPartyStoragePartitioning" not in block.group(1):
        pytest.fail(f"Playwright's disabled Chromium features not found in {bundle}: update this test")
    return re.findall(r'^\s*"([^"]+)"', block.group(1), re.M)


@pytest.fixture
def playwright() -> Iterator[Playwright]:
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"no Chromium at {CHROMIUM}: bash scripts/install-browser.sh", pytrace=False)
    os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
    with sync_playwright() as running:
        expect.set_options(timeout=UI_TIMEOUT_MS)
        yield running


def _open(context: BrowserContext, lab: Lab, name: str) -> Notebook:
    write_notebook(lab.root / name, CELLS)
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    page.goto(lab.page_url(name, name.removesuffix(".ipynb")), timeout=KERNEL_TIMEOUT_MS)
    notebook = Notebook(page, name, lab)
    notebook.panel.wait_for(state="visible", timeout=KERNEL_TIMEOUT_MS)
    notebook.wait_kernel_idle()
    notebook.run_all()
    assert not notebook.errors(), notebook.errors()
    return notebook


def _said(notebook: Notebook) -> Locator:
    """The app's line; its frame is found anew after each re-run or reload (a new output, a new frame)."""
    guard = app_frame(notebook.output(2)).content_frame
    return guard.frame_locator("iframe").frame_locator("iframe").locator("#said")


def test_an_app_with_a_domain_keeps_its_storage(playwright: Playwright, lab: Lab) -> None:
    """Chromium as it ships (third-party storage partitioned): storage works and is kept."""
    disabled = _playwright_disabled_features()
    shipped = [f for f in disabled if f != "ThirdPartyStoragePartitioning"]
    browser = playwright.chromium.launch(
        executable_path=str(CHROMIUM),
        args=[*CHROMIUM_ARGS, "--disable-features=" + ",".join(shipped)],
        ignore_default_args=["--disable-features=" + ",".join(disabled)],
        headless=True,
        timeout=30_000,
    )
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        notebook = _open(context, lab, "storage.ipynb")
        said = _said(notebook)
        expect(said).to_contain_text("origin http://localhost:", timeout=KERNEL_TIMEOUT_MS)
        expect(said).to_contain_text("; local 1; session 1")
        origin = said.inner_text().split(";")[0]

        notebook.run_cell(2)  # a re-render: a new frame on the same origin
        expect(_said(notebook)).to_contain_text("; local 2; session 2", timeout=KERNEL_TIMEOUT_MS)
        notebook.reload()  # the page again (sessionStorage lives as long as the tab)
        notebook.run_cell(2)
        expect(_said(notebook)).to_contain_text("; local 3; session 3", timeout=KERNEL_TIMEOUT_MS)
        notebook.restart_kernel()  # a new kernel: its proxy comes back on the same port, the same origin
        notebook.run_all()
        expect(_said(notebook)).to_have_text(f"{origin}; local 4; session 4", timeout=KERNEL_TIMEOUT_MS)
    finally:
        browser.close()
        lab.shutdown_kernels()


def test_where_third_party_storage_is_blocked_the_app_is_told(playwright: Playwright, lab: Lab) -> None:
    """Playwright's own switches (partitioning off): third-party storage is blocked, the app's storage is
    refused with a SecurityError, which the app can catch; it still runs on its own origin."""
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        notebook = _open(context, lab, "storage-blocked.ipynb")
        said = _said(notebook)
        expect(said).to_contain_text("origin http://localhost:", timeout=KERNEL_TIMEOUT_MS)
        expect(said).to_contain_text("refused: SecurityError")
    finally:
        browser.close()
        lab.shutdown_kernels()
