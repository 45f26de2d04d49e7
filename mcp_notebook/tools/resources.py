"""Resources and resource templates from Python values and functions.

A static resource is a URI with fixed text/bytes or a zero-argument function; a template is an RFC 6570
URI template whose ``{variables}`` become the function's keyword arguments.
https://modelcontextprotocol.io/specification/2025-11-25/server/resources
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .content import EmbeddedResource, to_jsonable

__all__ = ["ResourceDef", "TemplateDef", "contents_from"]

RunSync = Callable[[Callable[[], Any]], Awaitable[Any]]


def _wire_fields(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def contents_from(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """A reader's return value -> ``resources/read`` contents.

    str -> text, bytes -> blob, anything JSON-able -> JSON text.
    """
    if isinstance(value, list) and value and all(isinstance(v, (dict, EmbeddedResource)) for v in value):
        return [item for v in value for item in contents_from(v, uri, mime_type)]
    if isinstance(value, EmbeddedResource):
        return [value.to_wire()["resource"]]
    if isinstance(value, dict) and "uri" in value and ("text" in value or "blob" in value):
        return [value]  # already wire-shaped contents
    if isinstance(value, (bytes, bytearray, memoryview)):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [_wire_fields(uri=uri, mimeType=mime_type or "application/octet-stream", blob=blob)]
    if isinstance(value, str):
        return [_wire_fields(uri=uri, mimeType=mime_type or "text/plain", text=value)]
    text = json.dumps(to_jsonable(value), ensure_ascii=False)
    return [_wire_fields(uri=uri, mimeType=mime_type or "application/json", text=text)]


async def _call(fn: Callable[..., Any], kwargs: dict[str, Any], run_sync: RunSync | None) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(**kwargs)
    runner = run_sync or asyncio.to_thread
    return await runner(lambda: fn(**kwargs))


@dataclass
class ResourceDef:
    uri: str
    name: str
    value: Any = None  # fixed text/bytes, or a zero-argument function (sync or async) returning them
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None

    @property
    def definition(self) -> dict[str, Any]:
        size = self.size
        if size is None and isinstance(self.value, (str, bytes)):
            size = len(self.value.encode() if isinstance(self.value, str) else self.value)
        return _wire_fields(
            uri=self.uri, name=self.name, title=self.title, description=self.description,
            mimeType=self.mime_type, size=size, annotations=self.annotations, icons=self.icons,
            _meta=self.meta,
        )  # fmt: skip

    async def read(self, run_sync: RunSync | None = None) -> list[dict[str, Any]]:
        value = await _call(self.value, {}, run_sync) if callable(self.value) else self.value
        return contents_from(value, self.uri, self.mime_type)


_VARIABLE = re.compile(r"\{([+#]?)([A-Za-z0-9_]+)\}")


def _template_regex(template: str) -> re.Pattern[str]:
    """RFC 6570 level 1-2 matching: ``{x}`` matches one path segment, ``{+x}`` / ``{#x}`` anything."""
    pattern, last = "", 0
    for match in _VARIABLE.finditer(template):
        pattern += re.escape(template[last : match.start()])
        operator, name = match.groups()
        pattern += f"(?P<{name}>.+)" if operator else f"(?P<{name}>[^/?#]+)"
        last = match.end()
    return re.compile(pattern + re.escape(template[last:]) + r"\Z")


@dataclass
class TemplateDef:
    uri_template: str
    name: str
    fn: Callable[..., Any]
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    regex: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        self.regex = _template_regex(self.uri_template)
        variables = set(self.regex.groupindex)
        params = set(inspect.signature(self.fn).parameters)
        if not variables <= params:
            missing = ", ".join(sorted(variables - params))
            raise TypeError(
                f"resource template {self.uri_template!r}: {self.fn.__name__}() lacks parameters {missing}"
            )

    @property
    def definition(self) -> dict[str, Any]:
        return _wire_fields(
            uriTemplate=self.uri_template, name=self.name, title=self.title, description=self.description,
            mimeType=self.mime_type, annotations=self.annotations, icons=self.icons, _meta=self.meta,
        )  # fmt: skip

    def match(self, uri: str) -> dict[str, str] | None:
        found = self.regex.match(uri)
        return found.groupdict() if found else None

    async def read(
        self, uri: str, variables: dict[str, str], run_sync: RunSync | None = None
    ) -> list[dict[str, Any]]:
        return contents_from(await _call(self.fn, variables, run_sync), uri, self.mime_type)
