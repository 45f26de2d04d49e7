"""How long building a SchemaForm takes for a 100-property schema (target: well under 100 ms).

Run: ``.venv/bin/python bench/bench_form.py``. Prints the median and the best of several builds, plus
the cost of ``.value`` and ``validate()``. Timings are printed, never asserted (DESIGN: measured).

``--kernel [N]``: the same form in a live kernel, as a person gets it (issue 19: "155-240 ms in a live
kernel"). A real ipykernel is started with jupyter_client, ``%load_ext mcp_notebook`` runs, the schema is
defined, then N cells each build and show the form (``SchemaForm(schema)`` as the cell's last line: every
widget opens its comm, the display goes out on iopub). Each cell is timed from execute_request sent to
execute_reply received; the median of N and the median empty cell are printed, with the load average.
``--properties P`` (with ``--kernel``): a schema of P properties instead of 100.

``--sizes``: build time at 30, 300 and 3,000 properties (median wall and CPU time, per field), and the first
``.value`` read (a large form's closed pages answer it without widgets: issue 21 round 5).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from mcp_notebook.notebook.forms.form import SchemaForm

_KINDS: list[dict[str, Any]] = [
    {"type": "string", "description": "A plain string"},
    {"type": "integer", "minimum": 0, "maximum": 100, "default": 5},
    {"type": "number"},
    {"type": "boolean", "default": True},
    {"type": "string", "enum": ["a", "b", "c"]},
    {"type": "string", "format": "date"},
    {"type": "string", "format": "email", "examples": ["x@example.org"]},
    {"type": ["string", "null"]},
    {"type": "array", "items": {"type": "string"}, "default": ["x", "y"]},
    {"$ref": "#/$defs/point"},
]


def schema(properties: int = 100) -> dict[str, Any]:
    return {
        "type": "object",
        "$defs": {
            "point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}
        },
        "properties": {f"field_{i}": dict(_KINDS[i % len(_KINDS)]) for i in range(properties)},
        "required": [f"field_{i}" for i in range(0, properties, 3)],
    }


def timed(action: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        out.append((time.perf_counter() - start) * 1000)
    return out


KERNEL_SETUP = """
import json as _json
from mcp_notebook.notebook.forms.form import SchemaForm
_schema = _json.loads({schema!r})
SchemaForm(_schema)  # warm-up: imports, the meta-schema, widget classes
"""
KERNEL_BUILD = "SchemaForm(_schema)"  # the last line: built and shown, as a cell shows it


def round_trips(k: Any, runs: int, properties: int = 100) -> dict[str, Any]:
    """In kernel ``k`` (``_kernel.Kernel``, extension loaded): execute round trips (ms) of ``runs`` cells
    that build and show the form, and of ``runs`` empty cells."""
    import json

    k.run(KERNEL_SETUP.format(schema=json.dumps(schema(properties))))
    empty = [k.run("pass").seconds * 1000 for _ in range(runs)]
    builds, shown = [], 0
    for _ in range(runs):
        cell = k.run(KERNEL_BUILD)
        builds.append(cell.seconds * 1000)
        shown = sum(1 for m in cell.outputs if m["msg_type"] in ("execute_result", "display_data"))
    return {"builds": builds, "empty": empty, "shown": shown}


def in_kernel(runs: int, properties: int = 100) -> dict[str, Any]:
    """:func:`round_trips` in a fresh live kernel started with jupyter_client."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _kernel import kernel

    headless = {"MCP_NOTEBOOK_HEADLESS": "1", "MCP_NOTEBOOK_HEADLESS_POLICY": "allow"}
    with kernel(headless) as k:
        k.run("pass")
        k.run("%load_ext mcp_notebook")
        return round_trips(k, runs, properties)


def main_kernel(runs: int, properties: int) -> None:
    load_before = os.getloadavg()
    found = in_kernel(runs, properties)
    load_after = os.getloadavg()
    builds, empty = found["builds"], found["empty"]
    print(
        f"live kernel, build + show {properties:,}-property form (execute round trip): median "
        f"{statistics.median(builds):.1f} ms, best {min(builds):.1f} ms, worst {max(builds):.1f} ms "
        f"(n={len(builds)}; the form shown: {bool(found['shown'])})"
    )
    print(f"live kernel, empty cell (execute round trip): median {statistics.median(empty):.1f} ms")
    print(
        "load average (1, 5, 15 min): before "
        + ", ".join(f"{x:.2f}" for x in load_before)
        + "; after "
        + ", ".join(f"{x:.2f}" for x in load_after)
        + f"; {os.cpu_count()} CPUs"
    )


def main_sizes() -> None:
    SchemaForm(schema())  # warm-up
    for properties, runs in ((30, 15), (300, 7), (3000, 5)):
        big = schema(properties)
        walls, cpus = [], []
        for _ in range(runs):
            wall, cpu = time.perf_counter(), time.process_time()
            form = SchemaForm(big)
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
        start = time.perf_counter()
        form.value  # noqa: B018 (the first read: closed pages answer from their schemas)
        read = (time.perf_counter() - start) * 1000
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        print(
            f"build {properties:>5,}-property form: median {wall:7.1f} ms wall, {cpu:7.1f} ms CPU "
            f"({cpu * 1000 / properties:5.0f} us CPU per field); first .value {read:.1f} ms (n={runs})"
        )


def main() -> None:
    if "--sizes" in sys.argv:
        main_sizes()
        return
    if "--kernel" in sys.argv:
        at = sys.argv.index("--kernel")
        runs = int(sys.argv[at + 1]) if len(sys.argv) > at + 1 and sys.argv[at + 1].isdigit() else 15
        size = int(sys.argv[sys.argv.index("--properties") + 1]) if "--properties" in sys.argv else 100
        main_kernel(runs, size)
        return
    big = schema()
    SchemaForm(big)  # warm-up: imports, jsonschema meta-schema, widget classes
    builds = timed(lambda: SchemaForm(big), runs=15)
    form = SchemaForm(big)
    reads = timed(lambda: form.value, runs=15)
    checks = timed(form.validate, runs=15)
    print(f"build 100-property form: median {statistics.median(builds):.1f} ms, best {min(builds):.1f} ms")
    print(f"read .value:             median {statistics.median(reads):.2f} ms")
    print(f"validate():              median {statistics.median(checks):.1f} ms")


if __name__ == "__main__":
    main()
