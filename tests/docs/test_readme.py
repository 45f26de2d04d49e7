"""The README's examples run as written (a README that lies is a bug)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


async def test_thirty_second_example_runs_and_prints_what_it_claims(capsys: object) -> None:
    block = python_blocks()[0]
    # The example uses top-level await, as a notebook cell does: run it as the body of a coroutine.
    source = "async def __example():\n" + textwrap.indent(block, "    ")
    namespace: dict[str, object] = {}
    exec(compile(source, str(README), "exec", dont_inherit=True), namespace)
    await namespace["__example"]()  # type: ignore[operator]
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "{'day 1': 12.0, 'day 2': 13.0}" in out
    assert "True" in out and "greater than the maximum of 14" in out
