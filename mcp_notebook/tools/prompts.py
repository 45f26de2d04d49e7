"""Prompts from Python functions: parameters become prompt arguments, the return value becomes messages.

https://modelcontextprotocol.io/specification/2025-11-25/server/prompts
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .content import _block as content_block
from .context import Context
from .docstrings import parse_docstring
from .schema import _is_context, resolve_hints

__all__ = ["PromptArgumentError", "PromptDef", "make_prompt", "messages_from"]

RunSync = Callable[[Callable[[], Any]], Awaitable[Any]]


class PromptArgumentError(ValueError):
    """Missing or unknown prompt arguments (the server answers -32602)."""


def messages_from(value: Any) -> dict[str, Any]:
    """A prompt function's return value -> GetPromptResult.

    str -> one user text message; a dict with ``messages`` -> as given; a dict with ``role`` -> one message;
    a list -> one message per item (str and content objects become user messages).
    """
    if isinstance(value, dict) and "messages" in value:
        return value
    items = value if isinstance(value, list) else [value]
    return {"messages": [_message(item) for item in items]}


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, dict) and "role" in item:
        content = item.get("content")
        return {**item, "content": content if isinstance(content, dict) else content_block(content)}
    return {"role": "user", "content": content_block(item)}


@dataclass
class PromptDef:
    name: str
    fn: Callable[..., Any]
    arguments: list[dict[str, Any]]
    title: str | None = None
    description: str | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    context_param: str | None = None  # a parameter annotated Context gets the call's context, like tools

    @property
    def definition(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"name": self.name, "title": self.title, "description": self.description}
        fields |= {"arguments": self.arguments or None, "icons": self.icons, "_meta": self.meta}
        return {key: value for key, value in fields.items() if value is not None}

    def check(self, arguments: dict[str, Any]) -> dict[str, str]:
        known = {arg["name"]: arg for arg in self.arguments}
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            raise PromptArgumentError(f"Unknown arguments for prompt {self.name!r}: {', '.join(unknown)}")
        missing = [n for n, arg in known.items() if arg.get("required") and n not in arguments]
        if missing:
            raise PromptArgumentError(
                f"Missing required arguments for prompt {self.name!r}: {', '.join(missing)}"
            )
        bad = [n for n, v in arguments.items() if not isinstance(v, str)]
        if bad:
            raise PromptArgumentError(f"Prompt arguments must be strings: {', '.join(bad)}")
        return dict(arguments)

    async def render(
        self, arguments: dict[str, Any], run_sync: RunSync | None = None, context: Context | None = None
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = self.check(arguments)
        if self.context_param is not None:
            kwargs[self.context_param] = context
        if inspect.iscoroutinefunction(self.fn):
            value = await self.fn(**kwargs)
        else:
            value = await (run_sync or asyncio.to_thread)(lambda: self.fn(**kwargs))
        result = messages_from(value)
        if self.description and "description" not in result:
            result = {"description": self.description, **result}
        return result


def make_prompt(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    icons: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
) -> PromptDef:
    summary, params = parse_docstring(fn.__doc__)
    try:
        hints = resolve_hints(fn)
    except TypeError:
        hints = {}  # prompt arguments are strings whatever the annotations say
    arguments = []
    context_param = None
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"prompt {fn.__name__}: *args/**kwargs cannot be prompt arguments")
        if _is_context(hints.get(pname)):
            context_param = pname
            continue
        arg: dict[str, Any] = {"name": pname}
        if pname in params:
            arg["description"] = params[pname]
        if param.default is inspect.Parameter.empty:
            arg["required"] = True
        arguments.append(arg)
    description = description or summary or None
    return PromptDef(name or fn.__name__, fn, arguments, title, description, icons, meta, context_param)
