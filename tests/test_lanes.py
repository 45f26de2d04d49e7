"""Every test folder is in a lane on purpose (tests/conftest.py), so ``scripts/test --fast`` stays fast."""

from __future__ import annotations

from tests.conftest import BY_FOLDER, SLOW, TESTS, UNIT_FOLDERS, lane


def test_every_test_folder_has_a_lane() -> None:
    folders = {p.parent.relative_to(TESTS).parts[0] for p in TESTS.rglob("test_*.py") if p.parent != TESTS}
    assert sorted(folders - set(BY_FOLDER) - UNIT_FOLDERS) == []


def test_the_lanes_by_place() -> None:
    assert lane(TESTS / "protocol" / "test_x.py") == "unit"
    assert lane(TESTS / "test_layers.py") == "unit"
    assert lane(TESTS / "serving" / "test_x.py") == "kernel"
    assert lane(TESTS / "interaction" / "test_x.py") == "interaction"
    assert all(lane(TESTS / name) == marker for name, marker in SLOW.items())
