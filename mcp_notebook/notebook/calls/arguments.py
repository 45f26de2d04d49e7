"""Arguments checked against a tool's inputSchema before a person is asked to approve the call (issue 11
item 4): the card never shows a call that cannot run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .connections import NotebookError

__all__ = ["InvalidArguments", "check_arguments"]


class InvalidArguments(NotebookError, ValueError):
    """The arguments do not fit the tool's inputSchema; found before anything is asked or sent."""

    def __init__(self, name: str, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "; ".join(self.problems)
        super().__init__(f"{name}: the arguments do not fit the tool's inputSchema: {lines}")


def check_arguments(name: str, tool_def: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Raise :class:`InvalidArguments` when ``arguments`` break the tool's inputSchema.

    A schema that cannot be compiled is left to the server (it will say so in its result)."""
    from ...tools.validation import schema_check

    schema = tool_def.get("inputSchema")
    if not isinstance(schema, Mapping):
        return
    check = schema_check(schema, strict=False)
    if check.validator_class is None:
        return
    problems = check.problems(dict(arguments))
    if problems:
        raise InvalidArguments(name, problems)
