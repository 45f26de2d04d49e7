"""The README's tasks example runs as written and prints what it claims."""

from __future__ import annotations

import textwrap

from tests.docs.test_readme import README, python_blocks


async def test_readme_tasks_example(capsys: object) -> None:
    (block,) = [b for b in python_blocks() if "def crunch" in b]
    source = "async def __example():\n" + textwrap.indent(block, "    ")
    namespace: dict[str, object] = {}
    exec(compile(source, str(README), "exec", dont_inherit=True), namespace)
    await namespace["__example"]()  # type: ignore[operator]
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "{'result': 499500} ['working', 'completed']" in out
    assert "\ncompleted\n" in out
