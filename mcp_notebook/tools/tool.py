"""A Python function made into an MCP tool: its wire definition, and one ``call`` that runs it safely.

``Tool.call`` never raises for anything the tool or its caller got wrong; those become ``isError`` results
(spec notes §5.4: input validation errors are tool execution errors since 2025-11-25). It raises only for
server bugs (a tool that needs a Context called without one) and lets ``asyncio.CancelledError`` through.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import re
import traceback
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from ..protocol.era import invalid_param_headers
from ..protocol.modern import RequestEscalation
from .annotations import check_icons, check_tool_annotations
from .content import ToolError, text_block, to_call_result
from .context import Context
from .convert import from_json
from .docstrings import parse_docstring
from .schema import input_schema_for, output_schema_for, resolve_hints
from .validation import schema_check

__all__ = ["RunSync", "Tool", "ToolOutcome", "make_tool", "masked_error", "shown_result"]

RunSync = Callable[[Callable[[], Any]], Awaitable[Any]]
RunAsync = Callable[[Coroutine[Any, Any, Any]], Awaitable[Any]]
_NAME_RULE = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_PLAIN = frozenset({str, int, float, bool, dict, list, tuple, bytes, type(None)})


@dataclasses.dataclass
class ToolOutcome:
    """What a call produced: the wire ``CallToolResult`` and, for failures, the exception and its traceback
    (kept for the server console and logs; never sent to the client)."""

    result: dict[str, Any]
    exception: BaseException | None = None
    traceback: str | None = None


def _error(text: str) -> dict[str, Any]:
    return {"content": [text_block(text)], "isError": True}


def masked_error(name: str) -> dict[str, Any]:
    """What a caller sees of an exception a tool raised when the server masks errors (``mask_errors``)."""
    return _error(f"Error executing tool {name}: an internal error occurred")


def shown_result(outcome: ToolOutcome, name: str, mask: bool) -> dict[str, Any]:
    """``outcome.result``, or with ``mask`` the masked error when the tool raised (not a ToolError)."""
    return masked_error(name) if mask and outcome.traceback is not None else outcome.result


class Tool:
    """A built tool. Create with :func:`make_tool`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        definition: dict[str, Any],
        *,
        context_param: str | None,
        wrapped: bool,
    ) -> None:
        self.fn = fn
        self.definition = definition
        self.context_param = context_param
        self.wrapped = wrapped
        # As a task: "call" starts it before the tool runs, "explicit" at ctx.start_task() (2026: MRTR first)
        self.task_start = "call"
        self.is_async = inspect.iscoroutinefunction(fn)
        self._hints = resolve_hints(fn)
        # Parameters whose JSON value is already the Python value: no conversion per call.
        self._as_is = {name for name, hint in self._hints.items() if hint in (str, bool, Any, object)}
        # compiled once here, not per call: schema checking and compilation are the slow part of validation
        self._input = schema_check(definition["inputSchema"])
        output_schema = definition.get("outputSchema")
        self._output = schema_check(output_schema) if output_schema is not None else None

    @property
    def name(self) -> str:
        return str(self.definition["name"])

    @property
    def input_schema(self) -> dict[str, Any]:
        return dict(self.definition["inputSchema"])

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._output.schema if self._output is not None else None

    def __repr__(self) -> str:
        return f"<Tool {self.name!r} ({getattr(self.fn, '__qualname__', self.fn)!s})>"

    async def call(
        self,
        arguments: dict[str, Any] | None,
        context: Context | None = None,
        *,
        run_sync: RunSync | None = None,
        run_async: RunAsync | None = None,
    ) -> ToolOutcome:
        """Validate, convert, run, convert the result, check it against the outputSchema."""
        if self.context_param is not None and context is None:
            raise ValueError(f"Tool {self.name!r} takes a Context ({self.context_param!r}); pass context=")
        kwargs_or_error = self._arguments({} if arguments is None else arguments)
        if isinstance(kwargs_or_error, ToolOutcome):
            return kwargs_or_error
        if self.context_param is not None:
            kwargs_or_error[self.context_param] = context
        try:
            value = await self._run(kwargs_or_error, run_sync or asyncio.to_thread, run_async)
            result = to_call_result(value, output_schema=self.output_schema, wrapped=self.wrapped)
        except ToolError as exc:
            return ToolOutcome(_error(str(exc)), exc, None)
        except RequestEscalation:
            raise  # MRTR input_required or a missing client capability: the request's answer, not the tool's
        except Exception as exc:
            message = f"Error executing tool {self.name}: {type(exc).__name__}: {exc}"
            return ToolOutcome(_error(message), exc, traceback.format_exc())
        return self._checked_output(result)

    def _arguments(self, arguments: Any) -> dict[str, Any] | ToolOutcome:
        prefix = f"Invalid arguments for tool {self.name!r}: "
        if not isinstance(arguments, dict):
            return ToolOutcome(_error(f"{prefix}arguments must be an object, got {type(arguments).__name__}"))
        problems = self._input.problems(arguments)
        if problems:
            return ToolOutcome(_error(prefix + "; ".join(problems)))
        try:
            as_is, hints = self._as_is, self._hints
            return {
                key: value if key in as_is else from_json(hints.get(key, Any), value)
                for key, value in arguments.items()
            }
        except (TypeError, ValueError) as exc:
            return ToolOutcome(_error(f"{prefix}{exc}"), exc, None)

    async def _run(self, kwargs: dict[str, Any], run_sync: RunSync, run_async: RunAsync | None) -> Any:
        if self.is_async:
            coro = self.fn(**kwargs)
            # run_async lets the host run the coroutine elsewhere (the notebook: on the kernel's own loop)
            return await (run_async(coro) if run_async is not None else coro)
        value = await run_sync(functools.partial(self.fn, **kwargs))
        if type(value) in _PLAIN:  # most results: nothing to await (isawaitable asks an ABC)
            return value
        # a plain callable may still hand back an awaitable (a partial of an async function, say)
        return await value if inspect.isawaitable(value) else value

    def _checked_output(self, result: dict[str, Any]) -> ToolOutcome:
        """Spec notes §5.4: with an outputSchema, servers MUST return conforming structuredContent."""
        if self._output is None or result.get("isError"):
            return ToolOutcome(result)
        if "structuredContent" not in result:
            problems = ["the tool returned no structured content"]
        else:
            problems = self._output.problems(result["structuredContent"])
        if not problems:
            return ToolOutcome(result)
        message = f"Output of tool {self.name!r} does not match its outputSchema: " + "; ".join(problems)
        return ToolOutcome(_error(message), ValueError(message), None)


def _check_name(name: str) -> str:
    if not _NAME_RULE.fullmatch(name):
        raise ValueError(
            f"Invalid tool name {name!r}: a tool name must be 1-128 characters of A-Z, a-z, 0-9, "
            "'_', '-' and '.' (no spaces or other characters)"
        )
    return name


def _output_schema(fn: Callable[..., Any], requested: dict[str, Any] | bool | None) -> tuple[Any, bool]:
    if requested is True:
        return output_schema_for(fn)
    if requested is None or requested is False:
        return None, False
    if requested.get("type") != "object":
        # up to 2025-11-25 an outputSchema's root MUST be an object (server/tools#output-schema): any other
        # schema describes the value under "result", as for a function returning a list or a number
        return {"type": "object", "properties": {"result": requested}, "required": ["result"]}, True
    # an explicit object schema describes structuredContent itself: the value is never wrapped, even when
    # the schema looks like our {"result": ...} wrapper (wrapping then nested it twice and failed every call)
    return requested, False


_TASK_SUPPORT = ("forbidden", "optional", "required")


def _check_execution_and_meta(execution: Any, meta: Any) -> None:
    """What a client checks of every listed tool (protocol/shapes), refused at registration instead: a
    malformed definition would be left out of every spec-following client's list."""
    if execution is not None:
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        if not isinstance(execution, dict) or ("taskSupport" in execution and support not in _TASK_SUPPORT):
            raise ValueError(
                f"execution must be an object with taskSupport one of {_TASK_SUPPORT}: {execution!r}"
            )
    if meta is not None and not isinstance(meta, dict):
        raise ValueError(f"a tool's _meta must be an object, not {type(meta).__name__}")


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: dict[str, Any] | None = None,
    icons: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | bool | None = True,
    execution: dict[str, Any] | None = None,
) -> Tool:
    """Build a :class:`Tool` from ``fn``: schemas from its type hints, description from its docstring."""
    tool_name = _check_name(name if name is not None else fn.__name__)
    input_schema, context_param = input_schema_for(fn)
    check_tool_annotations(annotations)
    check_icons(icons)
    _check_execution_and_meta(execution, meta)
    bad_header = invalid_param_headers(input_schema)
    if bad_header is not None:  # spec-following HTTP clients would leave the tool out (SEP-2243)
        raise ValueError(f"Tool {tool_name!r}: {bad_header}")
    out_schema, wrapped = _output_schema(fn, output_schema)
    if description is None:
        description = parse_docstring(inspect.getdoc(fn))[0] or None
    fields = {
        "name": tool_name,
        "title": title,
        "description": description,
        "inputSchema": input_schema,
        "outputSchema": out_schema,
        "annotations": annotations,
        "icons": icons,
        "execution": execution,
        "_meta": meta,
    }
    definition = {key: value for key, value in fields.items() if value is not None}
    return Tool(fn, definition, context_param=context_param, wrapped=wrapped)
