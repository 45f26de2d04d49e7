"""The two kinds of cell the notebook generator knows, shared by ``_build.py`` and the workshop modules."""

from __future__ import annotations

Cell = tuple[str, str]  # ("md" | "code", source)


def md(text: str) -> Cell:
    return ("md", text.strip("\n"))


def code(text: str) -> Cell:
    return ("code", text.strip("\n"))
