"""Every assertion in the tests can fail (issue 17): no ``... or True``, no assert on a constant or a tuple.

An ``or True`` anywhere in a test file is refused, in code or in code kept in a string for a kernel to run
(``nb.value("[x or True]")`` hid one). An ``assert`` whose test is a truthy constant, a non-empty tuple
(``assert (x, "message")``: always true) or an ``or`` with a truthy constant operand cannot fail either.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
OR_TRUE = re.compile(r"\bor\s+(True|1)\b")


def cannot_fail(test: ast.expr) -> bool:
    """An assert test that is true whatever the code under test does."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
        return bool(getattr(test, "elts", None) or getattr(test, "keys", None))
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(cannot_fail(value) for value in test.values)
    return False


def problems(source: str, name: str) -> list[str]:
    lines = enumerate(source.splitlines(), 1)
    found = [f"{name}:{n}: 'or True'" for n, line in lines if OR_TRUE.search(line)]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assert) and cannot_fail(node.test):
            found.append(f"{name}:{node.lineno}: assert that cannot fail: {ast.unparse(node.test)}")
    return found


def test_no_test_holds_an_assertion_that_cannot_fail() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path != Path(__file__).resolve():
            found += problems(path.read_text(encoding="utf-8"), str(path.relative_to(TESTS)))
    assert found == []


def test_the_check_catches_each_form() -> None:
    bad = [
        "assert x == 1 " + "or True",
        "assert (x == 1, 'x is one')",
        "assert True",
        "assert 'always'",
        "assert x or 1",
        "nb.value('[h.url != url " + "or True]')",
    ]
    for line in bad:
        assert problems(line, "t.py"), line
    good = ["assert x", "assert x or y", "assert (x, y) == (1, 2)", "assert [x] != []", "assert x or None"]
    assert [line for line in good if problems(line, "t.py")] == []
