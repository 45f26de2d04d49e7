"""The requirements manifest (tests/spec/requirements.py) checked both ways: every requirement has a test
that exists or a written reason, and every test marked ``@pytest.mark.requirement("ID")`` names a real
requirement. Read statically (ast), so it costs nothing to run and catches a renamed test."""

from __future__ import annotations

import ast
from collections import Counter
from functools import cache
from pathlib import Path

from tests.spec.requirements import REQUIREMENTS

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
LEVELS = {"MUST", "SHOULD"}
ERAS = {"2025-11-25", "2026-07-28", "both"}


@cache
def defined_tests(path: Path) -> frozenset[str]:
    """``function`` and ``Class::function`` names of the tests defined in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test")
            }
    return frozenset(names)


def _requirement_ids(node: ast.AST) -> list[str]:
    """The ids of every ``pytest.mark.requirement("ID", ...)`` call under ``node``."""
    found = []
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "requirement"
        ):
            found += [
                arg.value for arg in call.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            ]
    return found


@cache
def marked_tests() -> dict[str, list[str]]:
    """Test id -> requirement ids, for every test (or module, through ``pytestmark``) carrying the marker."""
    marked: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT).as_posix()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                getattr(t, "id", "") == "pytestmark" for t in node.targets
            ):
                ids = _requirement_ids(node.value)
                if ids:
                    marked[where] = ids
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ids = [i for decorator in node.decorator_list for i in _requirement_ids(decorator)]
                if ids:
                    marked[f"{where}::{node.name}"] = ids
    return marked


def test_every_requirement_is_well_formed_and_unique() -> None:
    counts = Counter(r.id for r in REQUIREMENTS)
    assert [i for i, n in counts.items() if n > 1] == []
    bad = [
        r.id for r in REQUIREMENTS if r.level not in LEVELS or r.era not in ERAS or not r.says or not r.page
    ]
    assert bad == []


def test_every_requirement_has_an_existing_test_or_a_reason() -> None:
    claimed = {i for ids in marked_tests().values() for i in ids}
    problems = []
    for requirement in REQUIREMENTS:
        if not requirement.tests and not requirement.reason.strip() and requirement.id not in claimed:
            problems.append(f"{requirement.id}: no test and no reason")
        for test in requirement.tests:
            path, _, name = test.partition("::")
            file = ROOT / path
            if not file.is_file() or name not in defined_tests(file):
                problems.append(f"{requirement.id}: {test} does not exist")
    assert "\n".join(problems) == ""


def test_every_marked_test_names_a_real_requirement() -> None:
    known = {r.id for r in REQUIREMENTS}
    unknown = [f"{test}: {i}" for test, ids in marked_tests().items() for i in ids if i not in known]
    assert unknown == []


def test_the_manifest_covers_every_page_of_the_issue_in_both_eras() -> None:
    for page in (
        "server/tools",
        "patterns/mrtr",
        "utilities/tasks",
        "transports/stdio",
        "streamable-http",
        "authorization",
    ):
        eras = {r.era for r in REQUIREMENTS if page in r.page}
        assert eras, page
    assert {r.era for r in REQUIREMENTS} == ERAS
    covered = sum(1 for r in REQUIREMENTS if r.tests)
    assert covered >= 0.9 * len(REQUIREMENTS)  # reasons are the exception, not the rule


def test_the_checker_sees_markers_and_missing_tests() -> None:
    """The two directions can fail: a marked test is found, and a test that is not there is not."""
    marked = marked_tests()
    assert "http-2026-reissue" in marked["tests/spec/test_contracts_stream_reissue.py"]
    here = defined_tests(Path(__file__))
    assert "test_the_checker_sees_markers_and_missing_tests" in here and "test_not_there" not in here
