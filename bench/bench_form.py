"""How long building a SchemaForm takes for a 100-property schema (target: well under 100 ms).

Run: ``.venv/bin/python bench/bench_form.py``. Prints the median and the best of several builds, plus
the cost of ``.value`` and ``validate()``. Timings are printed, never asserted (DESIGN: measured).
"""

from __future__ import annotations

import statistics
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


def main() -> None:
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
