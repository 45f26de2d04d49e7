"""Browser tests: a real Jupyter server on 127.0.0.1 driven by Debian's Chromium through Python Playwright,
in both front ends it serves: JupyterLab 4 (``/lab/tree/...``) and Notebook 7 (``/notebooks/...``).

* ``lab`` (session): the Jupyter server (JupyterLab and Notebook 7 on one server) in a subprocess on a free
  port with a random token, rooted in a temporary directory, with its own settings and workspaces (no news,
  no update checks, every cell in the DOM). Start is bounded (``/api/status`` polled); teardown shuts its
  kernels down and ends it by PID.
* ``fresh_lab`` (function): ``fresh_lab()`` starts another server on the same root with a home of its own
  (no kernels, no settings the first one wrote): "reopen the saved notebook in a fresh server".
* ``frontend`` (function): ``"lab"`` unless a test is parametrized with :data:`both_frontends`
  (``@both_frontends`` runs it once in JupyterLab and once in Notebook 7).
* ``browser`` (function): ``/usr/bin/chromium`` launched by Playwright. Playwright's own browser download
  cannot work here, so a missing Chromium FAILS with the command that installs it; it never skips.
* ``open_notebook`` (function): copies a notebook (a path, or a list of cell sources) into the lab root,
  opens it in the test's front end and returns a :class:`Notebook` helper (run cells, read outputs, save,
  reload the page, restart the kernel, reopen elsewhere). On failure, a screenshot goes to a temporary
  directory and its path is printed.

Every wait is bounded by a Playwright timeout; nothing sleeps to "let things settle".
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .notebook_page import (  # re-exported: the tests import them from here
    KERNEL_TIMEOUT_MS,
    UI_TIMEOUT_MS,
    WIDGET_ERROR,
    Frontend,
    Notebook,
    app_frame,
    app_frames,
    app_view,
    slug,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

__all__ = [  # what the tests import from here (the notebook page object lives in notebook_page.py)
    "KERNEL_TIMEOUT_MS",
    "UI_TIMEOUT_MS",
    "WIDGET_ERROR",
    "Frontend",
    "Lab",
    "Notebook",
    "app_frame",
    "app_frames",
    "app_view",
    "both_frontends",
    "write_notebook",
]

FRONTENDS: tuple[Frontend, ...] = ("lab", "notebook")
#: ``@both_frontends`` on a test taking ``frontend`` (or ``open_notebook``): run it in JupyterLab 4 and in
#: Notebook 7.
both_frontends = pytest.mark.parametrize("frontend", FRONTENDS)
CHROMIUM = Path(os.environ.get("MCP_NOTEBOOK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests run as root in a container
    "--disable-gpu",
    # this machine's network is closed: without these Chromium keeps trying to reach Google's hosts
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INSTALL_HINT = "install it with: bash scripts/install-browser.sh  (Debian's chromium package)"
LAB_START_TIMEOUT = 60.0  # seconds; a cold JupyterLab start takes ~5 s here
LAB_SETTINGS = {
    # no toast asking about news, no request to the internet for updates
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # every cell attached to the DOM, so locators find cells scrolled out of view; start the notebook's
    # kernel without a "Select Kernel" dialog
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
        "autoStartDefaultKernel": True,
        "scrollPastEnd": False,
    },
}
#: the package's Jupyter server extension (mcp_notebook/jupyter_hooks.py) is enabled by this config
#: directory, as scripts/lab does (a wheel installs the same file; an editable install does not)
JUPYTER_CONFIG = Path(__file__).resolve().parents[2] / "jupyter-config"


# -- JupyterLab ---------------------------------------------------------------------------------------------
@dataclass
class Lab:
    """A running JupyterLab server."""

    url: str
    token: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes]
    data: Path  # JUPYTER_DATA_DIR

    def api(self, method: str, path: str, timeout: float = 10.0) -> Any:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def page_url(self, notebook: str, workspace: str, frontend: Frontend = "lab") -> str:
        if frontend == "notebook":  # Notebook 7: one notebook per page, no workspaces
            return f"{self.url}/notebooks/{notebook}?token={self.token}"
        # a workspace of its own per test, reset, so no tab from an earlier test is restored
        return f"{self.url}/lab/workspaces/{workspace}/tree/{notebook}?reset&token={self.token}"

    def shutdown_kernels(self) -> None:
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")
        for kernel in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write_settings(settings_dir: Path) -> None:
    for relative, values in LAB_SETTINGS.items():
        path = settings_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _wait_until_up(lab: Lab, deadline: float) -> None:
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {lab.process.returncode}:\n{lab.log_tail()}")
        try:
            lab.api("GET", "/api/status", timeout=2.0)
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)  # polling a server that is still starting; bounded by the deadline
    raise RuntimeError(
        f"JupyterLab did not answer /api/status in {LAB_START_TIMEOUT:.0f} s:\n{lab.log_tail()}"
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the server by its PID: SIGTERM (it stops its kernels), then SIGKILL to its process group."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own group: started with start_new_session
            process.wait(timeout=5)


def start_server(base: Path, root: Path, data: Path) -> Lab:
    """A Jupyter server (JupyterLab and Notebook 7) rooted in ``root``, its home under ``base``; stop it
    with :func:`stop_server`. ``data`` is the user's data directory (the notebook trust database): a
    fresh server of the same person shares it, so a notebook it saved is trusted when reopened."""
    home = base / "home"
    _write_settings(home / "settings")
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_CONFIG_PATH": str(JUPYTER_CONFIG),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(data),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
        "PYTHONUNBUFFERED": "1",
        # as an activated venv: `python` in a notebook (`%mcp connect x -- python ...`) is this Python
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)]),
    }
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",  # fail rather than silently move to another port
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: run commands as the menus do
        "--JupyterNotebookApp.expose_app_in_browser=True",  # the same in Notebook 7's pages
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",  # no PyPI queries from the extension manager
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        *(["--allow-root"] if os.geteuid() == 0 else []),  # CI containers run as root
    ]
    log = base / "jupyterlab.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, for the SIGKILL fallback in _stop
        )
    server = Lab(f"http://127.0.0.1:{port}", token, root, log, process, data)
    try:
        _wait_until_up(server, time.monotonic() + LAB_START_TIMEOUT)
    except BaseException:
        _stop(process)
        raise
    return server


def stop_server(server: Lab) -> None:
    """Shut its kernels down, then end it by PID."""
    try:
        if server.process.poll() is None:
            server.shutdown_kernels()
    finally:
        _stop(server.process)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("lab")
    root = base / "root"
    root.mkdir()
    server = start_server(base, root, base / "data")
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def fresh_lab(lab: Lab, tmp_path: Path) -> Iterator[Callable[[], Lab]]:
    """``fresh_lab()``: another server on ``lab``'s root, with a home of its own (stopped after the test)."""
    started: list[Lab] = []

    def start() -> Lab:
        base = tmp_path / f"fresh-{len(started)}"
        base.mkdir()
        started.append(start_server(base, lab.root, lab.data))
        return started[-1]

    yield start
    for server in started:
        stop_server(server)


@pytest.fixture
def frontend() -> Frontend:
    """The front end a test drives: JupyterLab, unless parametrized with :data:`both_frontends`."""
    return "lab"


# -- the browser --------------------------------------------------------------------------------------------
@pytest.fixture
def browser() -> Iterator[Browser]:
    """Chromium under Playwright, per test (about a second). Not per session: while the sync API is
    open it marks an asyncio loop as running in the main thread, which would break every async test
    that pytest runs after the first browser test."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"no Chromium at {CHROMIUM}: the browser tests need it; {INSTALL_HINT}", pytrace=False)
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError as exc:
        pytest.fail(
            f"the browser tests need Python Playwright ({exc}); pip install playwright", pytrace=False
        )
    expect.set_options(timeout=UI_TIMEOUT_MS)
    os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
    with sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=30_000
            )
        except Exception as exc:
            pytest.fail(f"Chromium at {CHROMIUM} did not start: {exc}\n{INSTALL_HINT}", pytrace=False)
        try:
            yield chromium
        finally:
            chromium.close()


_FAILED = pytest.StashKey[bool]()  # set on a test item whose setup or call failed: screenshot it


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """Outside pytest's basetemp, which other pytest runs on the machine rotate away (keeps the last 3)."""
    wanted = os.environ.get("MCP_NOTEBOOK_SCREENSHOTS")
    if wanted:
        Path(wanted).mkdir(parents=True, exist_ok=True)
        return Path(wanted)
    return Path(tempfile.mkdtemp(prefix="mcp-notebook-screenshots-"))


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest, screenshot_dir: Path) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(UI_TIMEOUT_MS)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield tab
    finally:
        if request.node.stash.get(_FAILED, False):
            path = screenshot_dir / f"{slug(request.node.name)}.png"
            try:
                tab.screenshot(path=str(path), full_page=True)
                print(f"\nscreenshot of the failed test: {path}", file=sys.stderr)
            except Exception as exc:  # the page may be gone; the original failure matters more
                print(f"\nno screenshot ({exc})", file=sys.stderr)
            if errors:
                print("page errors:\n  " + "\n  ".join(errors), file=sys.stderr)
        context.close()


@pytest.fixture
def open_notebook(
    lab: Lab, page: Page, frontend: Frontend, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Notebook]]:
    """``open_notebook(path_or_cells, name=None, *, server=lab)``: copy or write it into the server's
    root (``None``: open the file already there under ``name``), open it in the test's front end, wait
    for its kernel. ``server`` is another server (``fresh_lab()``) sharing the root, to reopen a file."""
    opened: list[str] = []
    servers: list[Lab] = [lab]

    def open_(
        source: Path | list[str] | None, name: str | None = None, *, server: Lab | None = None
    ) -> Notebook:
        where = server or lab
        if where not in servers:
            servers.append(where)
        name = name or f"{slug(request.node.name)}-{len(opened)}.ipynb"
        target = where.root / name
        if isinstance(source, Path):
            shutil.copyfile(source, target)
        elif source is not None:
            write_notebook(target, source)
        opened.append(name)
        url = where.page_url(name, slug(name.removesuffix(".ipynb")), frontend)
        page.goto(url, timeout=KERNEL_TIMEOUT_MS)
        notebook = Notebook(page, name, where, frontend)
        page.on("console", lambda message: notebook.console.append(f"{message.type}: {message.text}"))
        notebook.panel.wait_for(state="visible", timeout=KERNEL_TIMEOUT_MS)
        notebook.wait_kernel_idle()
        return notebook

    yield open_
    for server in servers:  # each test starts from fresh kernels; a stuck one does not outlive its test
        if server.process.poll() is None:
            server.shutdown_kernels()
