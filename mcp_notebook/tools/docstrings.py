"""Split a docstring into the tool description and per-parameter descriptions.

Three common styles are understood (Google ``Args:``, NumPy ``Parameters`` + dashes, reST ``:param x:``); the
parameter section is removed from the description because the same text already lands in the inputSchema,
and repeating it would only spend the model's context.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable

__all__ = ["parse_docstring"]

_GOOGLE_HEADER = re.compile(
    r"^(\s*)(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters):\s*$"
)
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_HEADERS = {"parameters", "other parameters", "keyword arguments"}
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?::.*)?$")
_REST_FIELD = re.compile(r"^\s*:(param|parameter|arg|argument|key|keyword|type)\b([^:]*):\s*(.*)$")
_DASHES = re.compile(r"^\s*-{3,}\s*$")

Lines = list[str]
Params = dict[str, str]


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Return ``(description without the parameter section, {param name: description})``."""
    if not doc:
        return "", {}
    summary, params = _parse(doc)
    return summary, dict(params)


@functools.lru_cache(maxsize=512)  # a tool's docstring is read for its description and for its parameters
def _parse(doc: str) -> tuple[str, Params]:
    lines = inspect.cleandoc(doc).splitlines()
    params: Params = {}
    for parser in _PARSERS:
        lines = parser(lines, params)
    return _tidy(lines), params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(parts: Lines) -> str:
    return " ".join(p.strip() for p in parts if p.strip())


def _tidy(lines: Lines) -> str:
    """Strip trailing spaces and collapse the blank runs left behind by a removed section."""
    text = "\n".join(line.rstrip() for line in lines).strip()
    return re.sub(r"\n{3,}", "\n\n", text)


# -- Google ------------------------------------------------------------------------------------------------
def _google(lines: Lines, params: Params) -> Lines:
    out: Lines = []
    i = 0
    while i < len(lines):
        match = _GOOGLE_HEADER.match(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        i = _google_section(lines, i + 1, len(match.group(1)), params)
    return out


def _google_section(lines: Lines, i: int, header_indent: int, params: Params) -> int:
    """Read entries until a line dedents to the header's level; return the index after the section."""
    entry_indent: int | None = None
    name: str | None = None
    parts: Lines = []
    while i < len(lines):
        line = lines[i]
        if line.strip() and _indent(line) <= header_indent:
            break
        if line.strip():
            entry_indent = _indent(line) if entry_indent is None else entry_indent
            match = _GOOGLE_ENTRY.match(line.strip())
            if _indent(line) == entry_indent and match:
                _store(params, name, parts)
                name, parts = match.group(1), [match.group(2)]
            else:
                parts.append(line)
        i += 1
    _store(params, name, parts)
    return i


def _store(params: Params, name: str | None, parts: Lines) -> None:
    if name is not None:
        params[name] = _join(parts)


# -- NumPy -------------------------------------------------------------------------------------------------
def _is_numpy_header(lines: Lines, i: int) -> bool:
    return i + 1 < len(lines) and bool(lines[i].strip()) and bool(_DASHES.match(lines[i + 1]))


def _numpy(lines: Lines, params: Params) -> Lines:
    out: Lines = []
    i = 0
    while i < len(lines):
        if _is_numpy_header(lines, i) and lines[i].strip().lower() in _NUMPY_HEADERS:
            i = _numpy_section(lines, i + 2, _indent(lines[i]), params)
            continue
        out.append(lines[i])
        i += 1
    return out


def _numpy_section(lines: Lines, i: int, base: int, params: Params) -> int:
    name: str | None = None
    parts: Lines = []
    while i < len(lines) and not _is_numpy_header(lines, i):
        line = lines[i]
        match = _NUMPY_ENTRY.match(line.strip())
        if line.strip() and _indent(line) <= base and match:
            _store(params, name, parts)
            name, parts = match.group(1), []
        elif line.strip() and _indent(line) <= base:
            break  # plain text at section level: the section is over
        else:
            parts.append(line)
        i += 1
    _store(params, name, parts)
    return i


# -- reST --------------------------------------------------------------------------------------------------
def _rest(lines: Lines, params: Params) -> Lines:
    out: Lines = []
    i = 0
    while i < len(lines):
        match = _REST_FIELD.match(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        field_indent = _indent(lines[i])
        parts = [match.group(3)]
        i += 1
        while i < len(lines) and lines[i].strip() and _indent(lines[i]) > field_indent:
            parts.append(lines[i])
            i += 1
        if match.group(1) != "type":
            # ':param int x:' carries the type before the name; the name is always the last word
            words = match.group(2).split()
            if words:
                params[words[-1].lstrip("*")] = _join(parts)
    return out


_PARSERS: tuple[Callable[[Lines, Params], Lines], ...] = (_google, _numpy, _rest)
