"""Benchmark 5: the notebook side (issue 4), in real ipykernels started with jupyter_client.

- ``%load_ext mcp_notebook`` in a fresh kernel (target <= 300 ms): execute_request -> execute_reply, minus
  the same for an empty cell in the same kernel; median over fresh kernels. The first ``@mcp.tool`` cell
  is timed too, because the extension defers creating the notebook's server until then.
- Building a :class:`SchemaForm` for a 100-property schema (target <= 100 ms): ``bench_form.schema()``,
  built in the kernel (so every widget opens a real comm), the first build (imports included) and the
  median of warm builds.
- Rendering a 10 MB text result and a 5 MB PNG result: ``result_bundle`` time and bundle size, then the
  same results returned by notebook tools through ``mcp.call`` (a ``CallHandle``): the cell's time and the
  bytes its outputs send to the frontend, which must stay small (truncated) for the page not to freeze,
  with the whole content still reachable from the handle.

No SDK comparison here: the official SDK has no notebook extension. Absolute targets instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
from typing import Any

import bench_form
from _common import Section, Settings, cell, fmt_num, median

LOAD_TARGET_MS = 300.0
FORM_TARGET_MS = 100.0
TEXT_BYTES = 10 * 1024 * 1024
IMAGE_BYTES = 5 * 1024 * 1024
HEADLESS = {"MCP_NOTEBOOK_HEADLESS": "1", "MCP_NOTEBOOK_HEADLESS_POLICY": "allow"}

EMPTY = "pass"
LOAD = "%load_ext mcp_notebook"
FIRST_TOOL = '''
@mcp.tool
def echo(text: str) -> str:
    """Return the text."""
    return text
'''

FORM = """
import json as _json, statistics as _st, time as _time
_t = _time.perf_counter()
from mcp_notebook.notebook.forms.form import SchemaForm
_schema = _json.loads({schema!r})
_form = SchemaForm(_schema)
_first = _time.perf_counter() - _t
_builds = []
for _ in range({runs}):
    _t = _time.perf_counter(); SchemaForm(_schema); _builds.append(_time.perf_counter() - _t)
_reads = []
for _ in range({runs}):
    _t = _time.perf_counter(); _form.value; _reads.append(_time.perf_counter() - _t)
_checks = []
for _ in range({runs}):
    _t = _time.perf_counter(); _form.validate(); _checks.append(_time.perf_counter() - _t)
print(_json.dumps({{"first": _first, "builds": _builds, "reads": _reads, "checks": _checks}}))
"""

# Payloads are made in the kernel: sending 15 MB of code over the shell channel would measure that.
PAYLOADS = f"""
import base64 as _b64, os as _os, struct as _struct, zlib as _zlib
_line = "{{:07d}} the quick brown fox jumps over the lazy dog; lorem ipsum dolor sit amet, consectetur\\n"
_lines = {TEXT_BYTES} // len(_line.format(0)) + 1
BIG_TEXT = "".join(_line.format(i) for i in range(_lines))[:{TEXT_BYTES}]

def _png(width, height):
    raw = b"".join(b"\\x00" + _os.urandom(width * 3) for _ in range(height))  # noise: incompressible
    def chunk(kind, data):
        return _struct.pack(">I", len(data)) + kind + data + _struct.pack(">I", _zlib.crc32(kind + data))
    head = _struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", head) + chunk(b"IDAT", _zlib.compress(raw, 1)) + chunk(b"IEND", b"")
    return b"\\x89PNG\\r\\n\\x1a\\n" + body

_side = int(({IMAGE_BYTES} / 3) ** 0.5) + 1
BIG_PNG = _png(_side, _side)
TEXT_RESULT = {{"content": [{{"type": "text", "text": BIG_TEXT}}], "isError": False}}
_IMAGE = {{"type": "image", "data": _b64.b64encode(BIG_PNG).decode(), "mimeType": "image/png"}}
IMAGE_RESULT = {{"content": [_IMAGE]}}
print(len(BIG_TEXT), len(BIG_PNG), len(IMAGE_RESULT["content"][0]["data"]))
"""

RENDER = """
import json as _json, time as _time
from mcp_notebook.notebook.rendering.results import result_bundle
def _bench(result, runs):
    times, bundle = [], None
    for _ in range(runs):
        _t = _time.perf_counter(); bundle = result_bundle(result); times.append(_time.perf_counter() - _t)
    return {{"times": times, "bytes": sum(len(v.encode()) for v in bundle.values()),
             "html": bundle["text/html"]}}
_text, _image = _bench(TEXT_RESULT, {runs}), _bench(IMAGE_RESULT, {runs})
_text["note"] = _text.pop("html")[-300:]
_image["note"] = _image.pop("html")[-300:]
print(_json.dumps({{"text": _text, "image": _image}}))
"""

TOOLS = '''
from mcp_notebook import Image

@mcp.tool
def big_text() -> str:
    """10 MB of text."""
    return BIG_TEXT

@mcp.tool
def big_image() -> Image:
    """A 5 MB PNG."""
    return Image(BIG_PNG)
'''

HANDLE = """
import json as _json, time as _time
_t = _time.perf_counter(); _b = H._repr_mimebundle_(); _r = _time.perf_counter() - _t
_full = H.text if {is_text} else H.content[0]["data"]
_want = BIG_TEXT if {is_text} else IMAGE_RESULT["content"][0]["data"]
print(_json.dumps({{"state": H.state, "repr": _r, "bytes": sum(len(str(v).encode()) for v in _b.values()),
                   "full": _full == _want}}))
"""


def available() -> str | None:
    for module in ("jupyter_client", "ipykernel", "ipywidgets"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    return None


def _ms(values: list[float]) -> list[float]:
    return [v * 1000 for v in values]


def _mb(n: float) -> str:
    return f"{n / 1_000_000:.2f} MB" if n >= 100_000 else f"{n / 1000:.1f} KB"


FORM_OUTSIDE = """
import json, sys
sys.path.insert(0, "bench")
import bench_form
from mcp_notebook.notebook.forms.form import SchemaForm
big = bench_form.schema()
SchemaForm(big)
print(json.dumps(bench_form.timed(lambda: SchemaForm(big), runs={runs})))
"""


def form_outside_kernel(settings: Settings) -> list[float]:
    """Warm SchemaForm builds in a plain interpreter (no kernel: widgets open no comm), ms."""
    import subprocess

    from _common import PYTHON, ROOT

    code = FORM_OUTSIDE.format(runs=5 if settings.quick else 15)
    done = subprocess.run([PYTHON, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"SchemaForm outside a kernel failed:\n{done.stderr[-3000:]}")
    builds: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return builds


def fresh_kernel_times(settings: Settings) -> dict[str, list[float]]:
    """Per fresh kernel: load_ext and the first tool cell, each minus the median empty cell (ms)."""
    from _kernel import kernel

    out: dict[str, list[float]] = {"baseline": [], "load": [], "tool": []}
    for _ in range(max(3, settings.cold_runs)):
        with kernel(HEADLESS) as k:
            k.run(EMPTY)  # the kernel's first execution pays one-off costs of its own
            base = median([k.run(EMPTY).seconds for _ in range(3)])
            load = k.run(LOAD).seconds
            tool = k.run(FIRST_TOOL).seconds
        out["baseline"].append(base * 1000)
        out["load"].append((load - base) * 1000)
        out["tool"].append((tool - base) * 1000)
    return out


def in_kernel(settings: Settings) -> dict[str, Any]:
    """One kernel for everything measured from inside: modules loaded, form, rendering, handles."""
    from _kernel import kernel

    runs = 5 if settings.quick else 15
    found: dict[str, Any] = {}
    with kernel(HEADLESS) as k:
        before = "import sys as _sys, json as _json; _before = set(_sys.modules)"
        k.run(before)
        k.run(LOAD)
        new = k.run("print(_json.dumps(sorted(set(_sys.modules) - _before)))").json()
        found["modules"] = new
        found["form"] = k.run(FORM.format(schema=json.dumps(bench_form.schema()), runs=runs)).json()
        found["load_before"] = os.getloadavg()
        found["form_cells"] = bench_form.round_trips(k, runs)  # as a person gets it: a cell, shown
        found["load_after"] = os.getloadavg()
        found["sizes"] = [int(n) for n in k.run(PAYLOADS).stdout.split()]
        found["render"] = k.run(RENDER.format(runs=3 if settings.quick else 5)).json()
        k.run(TOOLS)
        for name, is_text in (("big_text", True), ("big_image", False)):
            done = k.run(f'H = mcp.call("{name}")\nH')  # as a user would: call, and show it
            facts = k.run(HANDLE.format(is_text=is_text)).json()
            facts.update(cell_seconds=done.seconds, output_bytes=done.output_bytes)
            found[name] = facts
    return found


def run(settings: Settings) -> Section:
    section = Section("notebook", "5. Notebook: %load_ext, forms, rendering large results (lower is better)")
    missing = available()
    if missing is not None:
        section.unavailable = missing
        return section
    fresh = fresh_kernel_times(settings)
    inside = in_kernel(settings)
    outside = form_outside_kernel(settings)
    form, render = inside["form"], inside["render"]
    section.headers = ["measurement", "result", "target", "verdict"]

    def verdict(value: float, target: float) -> str:
        return "meets target" if value <= target else "ABOVE target"

    load_ms = median(fresh["load"])
    form_ms = median(_ms(form["builds"]))
    section.rows = [
        [
            "`%load_ext mcp_notebook`, fresh kernel (ms above an empty cell)",
            cell(fresh["load"]),
            f"<= {LOAD_TARGET_MS:g} ms",
            verdict(load_ms, LOAD_TARGET_MS),
        ],
        [
            "first `@mcp.tool` cell after it (creates the notebook server; ms above an empty cell)",
            cell(fresh["tool"]),
            "",
            "",
        ],
        ["empty cell, execute_request -> reply (ms; subtracted above)", cell(fresh["baseline"]), "", ""],
        [
            "SchemaForm, 100 properties, warm build (ms)",
            cell(_ms(form["builds"])),
            f"<= {FORM_TARGET_MS:g} ms",
            verdict(form_ms, FORM_TARGET_MS),
        ],
        [
            "SchemaForm, same schema, a cell that builds and shows it: execute_request -> reply (ms)",
            cell(inside["form_cells"]["builds"]),
            f"<= {FORM_TARGET_MS:g} ms",
            verdict(median(inside["form_cells"]["builds"]), FORM_TARGET_MS),
        ],
        [
            "SchemaForm, same schema, warm build outside a kernel (no comms; ms)",
            cell(outside),
            "",
            "",
        ],
        [
            "SchemaForm, first build in the kernel, imports included (ms)",
            fmt_num(form["first"] * 1000),
            "",
            "",
        ],
        [
            "SchemaForm `.value` / `validate()` (ms)",
            f"{fmt_num(median(_ms(form['reads'])))} / {fmt_num(median(_ms(form['checks'])))}",
            "",
            "",
        ],
    ]
    text_chars, _png_bytes, image_b64 = inside["sizes"]
    for label, key, handle, size in (
        ("10 MB text result", "text", "big_text", text_chars),
        ("5 MB PNG image result", "image", "big_image", image_b64),
    ):
        facts, via = render[key], inside[handle]
        where = "`H.text`" if key == "text" else "`H.content[0]['data']`"
        section.rows += [
            [
                f"`result_bundle`, {label}: time (ms) / bundle size",
                f"{cell(_ms(facts['times']))} / {_mb(facts['bytes'])}",
                "small (truncated)",
                _small(facts["bytes"], size),
            ],
            [
                f"`H = mcp.call(...)` of a tool returning the {label}, shown: cell time (ms) / bytes to the "
                "frontend",
                f"{fmt_num(via['cell_seconds'] * 1000)} / {_mb(via['output_bytes'])}",
                "small; all of it reachable",
                _small(via["output_bytes"], size)
                + (f"; all in {where}" if via["full"] and via["state"] == "done" else "; NOT reachable"),
            ],
        ]
    top = sorted({m.split(".")[0] for m in inside["modules"]})
    section.notes = [
        f"Fresh kernels: {len(fresh['load'])}, each started with jupyter_client; a cell's time is from "
        "sending execute_request to receiving execute_reply, minus the median of 3 empty cells in the same "
        "kernel (after one warm-up cell). Median of the kernels; the range in brackets.",
        f"`%load_ext mcp_notebook` imported {len(inside['modules'])} modules ({', '.join(top)}).",
        f"SchemaForm: `bench/bench_form.py`'s 100-property schema (10 field kinds, `$ref`, required), built "
        f"in a kernel so widgets open real comms; median of {len(form['builds'])} builds after the first. "
        "The cell row is the whole round trip a person waits for (`bench/bench_form.py --kernel`): "
        f"{len(inside['form_cells']['builds'])} cells `SchemaForm(schema)` (built and shown), empty cell "
        f"{fmt_num(median(inside['form_cells']['empty']))} ms; load average (1/5/15 min) "
        + " / ".join(f"{x:.2f}" for x in inside["load_before"])
        + " before and "
        + " / ".join(f"{x:.2f}" for x in inside["load_after"])
        + f" after, {os.cpu_count()} CPUs.",
        "Rendering: the results are made in the kernel; `result_bundle` is timed there. The `mcp.call` rows "
        "go through the notebook's in-memory client, the tool, the handle and its display: the bytes are the "
        "JSON of the cell's output messages, i.e. what the browser has to render.",
        f"Payloads: {text_chars:,} characters of text; a {_png_bytes:,}-byte PNG of noise ({image_b64:,} "
        "base64 characters). 'Small' means under 5% of the payload reaches the frontend.",
        "Truncation note at the end of the text bundle: `"
        + _note(render["text"]["note"])
        + "`; for the image: `"
        + _note(render["image"]["note"])
        + "`.",
    ]
    return section


def _small(shown: int, payload: int) -> str:
    return "meets target" if shown * 20 < payload else "TOO LARGE"


def _note(html: str) -> str:
    import re

    text = re.sub(r"^.*</style>|<style.*?</style>", " ", html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[-160:].replace("`", "'")
