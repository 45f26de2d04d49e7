"""The README's "Data frames, arrays and figures" example runs as written and prints what it claims."""

from __future__ import annotations

import textwrap

from tests.docs.test_readme import README, python_blocks


async def test_dataframe_example_runs_and_prints_what_it_claims(capsys: object) -> None:
    (block,) = [b for b in python_blocks() if "def by_city" in b]
    source = "async def __example():\n" + textwrap.indent(block, "    ")
    namespace: dict[str, object] = {}
    exec(compile(source, str(README), "exec", dont_inherit=True), namespace)
    await namespace["__example"]()  # type: ignore[operator]
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "{'result': [{'city': 'Oslo', 'mean': 2.0}, {'city': 'Rome', 'mean': None}]}" in out
    assert "NaN" in out and "[2 rows x 2 columns]" in out
