"""The notebook page as the browser tests drive it: :class:`Notebook` (one notebook open in JupyterLab or
Notebook 7, and the moves a person makes on it), the app frames in an output, writing a notebook file, and
the bounds every wait uses. The fixtures that start the server and the browser and open a notebook are in
conftest.py (which re-exports these names for the tests).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import nbformat

if TYPE_CHECKING:
    from playwright.sync_api import FrameLocator, Locator, Page

    from .conftest import Lab

Frontend = Literal["lab", "notebook"]
KERNEL_TIMEOUT_MS = 60_000  # starting a kernel and running a cell that loads the extension
UI_TIMEOUT_MS = 20_000  # a DOM change after a click


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:80] or "test"


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells (a cell starting with ``# md`` becomes markdown), outputs empty."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for source in cells:
        if source.startswith("# md\n"):
            notebook.cells.append(nbformat.v4.new_markdown_cell(source.removeprefix("# md\n")))
        else:
            notebook.cells.append(nbformat.v4.new_code_cell(source))
    nbformat.write(notebook, path)
    return path


WIDGET_ERROR = (
    "Error displaying widget"  # ipywidgets' line for a view whose model is gone ("model not found")
)


def app_frame(where: Locator) -> Locator:
    """The host's frame of the app shown in ``where`` (an output). It is not inside the output: it lives in
    the host's layer under the page's body, laid over a slot in the output (apps/layer.js); the slot and
    its frame carry one ``data-mcpnb-slot``. Read when called: after a re-run, call it again. The output is
    scrolled into view: a frame is hidden while its slot is out of the notebook's view, and scrolling the
    frame itself (fixed) into view, as Playwright does, cannot show it."""
    slot = where.locator(".mcpnb-app-slot").last
    slot_id = slot.get_attribute("data-mcpnb-slot", timeout=KERNEL_TIMEOUT_MS)
    slot.scroll_into_view_if_needed()
    return where.page.locator(f'iframe.mcpnb-app-frame[data-mcpnb-slot="{slot_id}"]')


def app_view(where: Locator) -> FrameLocator:
    """The app's own document shown in an output: the host's proxy frame, then the view it holds."""
    return app_frame(where).content_frame.frame_locator("iframe")


def app_frames(where: Locator) -> str:
    """For a failure message: how many app frames the page holds (the host's layer), each one's placement,
    and what every app document on the page shows in its ``#status`` (Playwright's own frames: the views
    are sandboxed, the page cannot read them)."""
    styles = where.page.locator("iframe.mcpnb-app-frame").evaluate_all(
        "fs => fs.map(f => f.style.visibility === 'hidden' ? 'hidden' : f.style.position || 'unplaced')"
    )
    statuses = []
    for frame in where.page.frames[1:]:
        try:
            status = frame.evaluate("() => document.getElementById('status')?.textContent ?? null")
        except Exception as exc:  # a frame going away meanwhile
            status = f"({type(exc).__name__})"
        if status is not None:
            statuses.append(status)
    return f"{len(styles)} app frame(s) in the page {styles}; views' #status: {statuses}"


@dataclass
class Notebook:
    """One notebook open in JupyterLab or Notebook 7, and the moves a person makes on it.

    Finding: ``panel``, ``cell(i)``, ``output(i)``, ``output_text(i)``, ``cell_index(source)``,
    ``errors()`` (tracebacks and stderr), ``widget_errors()`` ("Error displaying widget..." lines),
    ``form_input(where, label)``. Doing: ``run_all()``, ``run_cell(i)``, ``command(id)``, ``save()`` (the
    file as saved), ``reload()`` (the browser's reload), ``restart_kernel()`` (Kernel > Restart, no
    dialog), ``screenshot(path)``. Index ``i`` counts every cell from 0, markdown ones too.
    """

    page: Page
    name: str
    lab: Lab
    frontend: Frontend = "lab"
    console: list[str] = field(default_factory=list)

    # -- finding things ----------------------------------------------------------------------------------
    @property
    def panel(self) -> Locator:
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").first

    def cell(self, index: int) -> Locator:
        return self.panel.locator(".jp-Notebook .jp-Cell").nth(index)

    def cell_count(self) -> int:
        return self.panel.locator(".jp-Notebook .jp-Cell").count()

    def output(self, index: int) -> Locator:
        """The output area of cell ``index`` (0-based, markdown cells counted)."""
        return self.cell(index).locator(".jp-Cell-outputArea")

    def output_text(self, index: int) -> str:
        return self.output(index).inner_text()

    def widget_errors(self) -> list[str]:
        """Every "Error displaying widget..." line the page shows (a view whose model is gone)."""
        return [t for t in self.panel.locator(".jp-OutputArea-output").all_inner_texts() if WIDGET_ERROR in t]

    @property
    def path(self) -> Path:
        """The notebook's file in the server's root."""
        return self.lab.root / self.name

    # -- doing things ------------------------------------------------------------------------------------
    def command(self, command: str, args: dict[str, Any] | None = None) -> None:
        """Run a JupyterLab command, as its menu item would (the app is exposed for the tests)."""
        self.page.evaluate(
            "([command, args]) => { window.jupyterapp.commands.execute(command, args); }",
            [command, args or {}],
        )

    def wait_kernel_idle(self, timeout_ms: float = KERNEL_TIMEOUT_MS) -> None:
        """Kernel started, connected and idle, and no cell still queued or running (no ``[*]`` prompt).

        Read from the notebook's session context: the toolbar's indicator says "idle" before a kernel
        exists, so it cannot tell a started kernel from none.
        """
        self.page.wait_for_function(
            """() => {
                const panel = window.jupyterapp?.shell.currentWidget;
                const context = panel?.sessionContext;
                const kernel = context?.session?.kernel;
                if (!context?.isReady || !kernel) return false;
                if (kernel.status !== 'idle' || kernel.connectionStatus !== 'connected') return false;
                const prompts = panel.node.querySelectorAll('.jp-CodeCell .jp-InputPrompt');
                return [...prompts].every(p => !p.textContent.includes('*'));
            }""",
            timeout=timeout_ms,
        )

    def run_all(self, timeout_ms: float = KERNEL_TIMEOUT_MS) -> None:
        """Run every cell (Run > Run All Cells) and wait until the kernel is idle again."""
        self.wait_kernel_idle(timeout_ms)
        self.command("notebook:run-all-cells")
        self._wait_all_ran(timeout_ms)
        self.wait_kernel_idle(timeout_ms)

    def run_cell(self, index: int, timeout_ms: float = KERNEL_TIMEOUT_MS) -> None:
        """Select cell ``index`` and run it (Run > Run Selected Cell), then wait until it has run."""
        self.wait_kernel_idle(timeout_ms)
        before = self.cell(index).locator(".jp-InputPrompt").inner_text()
        self.page.evaluate(
            "index => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = index; }", index
        )
        self.command("notebook:run-cell")
        self.page.wait_for_function(
            """([index, before]) => {
                const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
                const cell = panel.querySelectorAll('.jp-Notebook .jp-Cell')[index];
                const prompt = cell.querySelector('.jp-InputPrompt').textContent;
                return /\\[\\d+\\]/.test(prompt) && prompt !== before;
            }""",
            arg=[index, before],
            timeout=timeout_ms,
        )
        self.wait_kernel_idle(timeout_ms)

    def _wait_all_ran(self, timeout_ms: float) -> None:
        self.page.wait_for_function(
            """() => {
                const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
                const prompts = panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt');
                return [...prompts].every(p => /\\[\\d+\\]/.test(p.textContent));
            }""",
            timeout=timeout_ms,
        )

    def save(self) -> dict[str, Any]:
        """File > Save; the notebook as the disk then has it (JSON, nbformat 4)."""
        before = self.path.stat().st_mtime_ns if self.path.exists() else -1
        self.page.evaluate("() => window.jupyterapp.shell.currentWidget.context.save()")
        self.page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=KERNEL_TIMEOUT_MS
        )
        assert self.path.stat().st_mtime_ns >= before
        saved: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        return saved

    def reload(self) -> None:
        """The browser's Reload: the page reads the notebook from disk again and rejoins its kernel."""
        self.page.reload(timeout=KERNEL_TIMEOUT_MS)
        self.panel.wait_for(state="visible", timeout=KERNEL_TIMEOUT_MS)
        self.wait_kernel_idle()
        self.wait_widgets_restored()

    def restart_kernel(self) -> None:
        """Kernel > Restart Kernel (without its confirmation dialog); waits for the new kernel."""
        self.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()"
        )
        self.wait_kernel_idle()

    def wait_widgets_restored(self, timeout_ms: float = KERNEL_TIMEOUT_MS) -> None:
        """No output still saying "Loading widget..." (ipywidgets fetching the kernel's models)."""
        self.page.wait_for_function(
            """() => ![...document.querySelectorAll('.jp-OutputArea-output')].some(
                node => node.textContent.trim() === 'Loading widget...')""",
            timeout=timeout_ms,
        )

    def errors(self) -> list[str]:
        """Tracebacks and stderr shown in any output, for a clear assertion message."""
        stderr = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
        return self.panel.locator(stderr).all_inner_texts()

    def form_input(self, where: Locator, label: str) -> Locator:
        """The input of the form field labelled ``label``: a field is its head (label, help, errors) and,
        right after it, its control."""
        head = where.locator(".widget-html").filter(has=self.page.locator(f'b:text-is("{label}")')).last
        return head.locator("xpath=following-sibling::*[1]").locator("input, textarea").first

    def cell_index(self, source: str) -> int:
        """The index of the first code cell whose source contains ``source``."""
        index = self.panel.evaluate(
            """(panel, source) => [...panel.querySelectorAll('.jp-Notebook .jp-Cell')].findIndex(
                cell => cell.classList.contains('jp-CodeCell')
                    && cell.querySelector('.jp-InputArea-editor').textContent.includes(source))""",
            source,
        )
        if index < 0:
            raise AssertionError(f"no code cell contains {source!r}")
        return int(index)

    def screenshot(self, path: Path, *, whole: bool = False) -> Path:
        """A screenshot; ``whole``: the whole notebook, by growing the window to its height first
        (JupyterLab scrolls inside its panel, so a full-page screenshot alone shows one screenful)."""
        if whole and self.frontend == "lab":
            self.command("application:toggle-left-area")  # the file browser: not part of the notebook
            height = self.panel.locator(".jp-WindowedPanel-outer").evaluate("node => node.scrollHeight")
            size = self.page.viewport_size or {"width": 1280, "height": 900}
            self.page.set_viewport_size({"width": size["width"], "height": int(height) + 200})
            self.panel.locator(".jp-WindowedPanel-outer").evaluate("node => node.scrollTo(0, 0)")
        self.page.screenshot(path=str(path), full_page=True)
        return path
