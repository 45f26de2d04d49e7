"""Shared pieces of the static renderers: escaping, scoped CSS, JSON views and a generic table.

Everything here is a pure function of plain JSON data to strings. Data that came from a remote peer is
untrusted (DESIGN.md decision 10): every string that reaches HTML goes through :func:`esc`, and nothing is
ever passed through as markup. The CSS is one ``<style>`` block whose selectors all start with the wrapper
class, and it uses JupyterLab's theme variables (``--jp-ui-font-color2``, ``--jp-border-color*``,
``--jp-layout-color*``), falling back to inherited colours elsewhere, so text keeps WCAG AA contrast in
light, dark and high-contrast themes (issue 11; a browser test measures it).
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CSS",
    "Media",
    "b64_size",
    "check_media",
    "code_block",
    "copy_button",
    "cut_text",
    "esc",
    "format_size",
    "json_pre",
    "json_text",
    "json_tree",
    "label_html",
    "media_html",
    "media_text",
    "note_html",
    "one_line",
    "pre_html",
    "safe_link",
    "schema_errors",
    "table_bundle",
    "truncate_note",
    "wrap",
]

WRAPPER_CLASS = "mcpnb"

CSS = """<style>
.mcpnb{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;line-height:1.4;color:inherit;
  max-width:100%;overflow-x:auto}
.mcpnb .mcpnb-title{font-weight:600;margin:2px 0 4px}
.mcpnb .mcpnb-block{border:1px solid var(--jp-border-color1,rgba(127,127,127,.35));border-radius:4px;
  padding:4px 8px;margin:4px 0}
.mcpnb .mcpnb-label{font-size:12px;color:var(--jp-ui-font-color2,inherit);margin-bottom:2px}
.mcpnb .mcpnb-pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;padding:4px;
  font-family:var(--jp-code-font-family,monospace);font-size:12px;
  background:var(--jp-layout-color2,rgba(127,127,127,.08));color:inherit;border-radius:3px}
.mcpnb .mcpnb-note{font-size:12px;font-style:italic;color:var(--jp-ui-font-color2,inherit)}
.mcpnb .mcpnb-bad{color:var(--jp-error-color1,#c62828)}
.mcpnb .mcpnb-good{color:var(--jp-success-color0,#1b5e20)}
.mcpnb .mcpnb-ann{font-size:12px;color:var(--jp-ui-font-color2,inherit);float:right;margin-left:8px}
.mcpnb.mcpnb-error{border:2px solid var(--jp-error-color1,#c62828);border-radius:4px;padding:4px 8px}
.mcpnb .mcpnb-error-header{color:var(--jp-error-color1,#c62828);font-weight:700}
.mcpnb details>summary{cursor:pointer}
.mcpnb .mcpnb-tree{margin:0 0 0 1.2em;padding:0;list-style:none;font-size:12px;
  font-family:var(--jp-code-font-family,monospace)}
.mcpnb .mcpnb-key{color:var(--jp-ui-font-color2,inherit)}
.mcpnb table.mcpnb-table{border-collapse:collapse;font-size:12px;max-width:100%}
.mcpnb .mcpnb-table th,.mcpnb .mcpnb-table td{border:1px solid var(--jp-border-color2,rgba(127,127,127,.3));
  padding:2px 6px;text-align:left;vertical-align:top;max-width:32em;overflow-wrap:anywhere}
.mcpnb .mcpnb-table th{background:var(--jp-layout-color2,rgba(127,127,127,.12))}
.mcpnb .mcpnb-table td .mcpnb-pre{max-height:12em;overflow:auto}
.mcpnb img.mcpnb-img{max-width:100%}
.mcpnb .mcpnb-copy{font-size:11px;padding:0 6px;margin-left:6px;cursor:pointer;color:inherit;
  background:var(--jp-layout-color1,transparent);border-radius:3px;
  border:1px solid var(--jp-border-color1,rgba(127,127,127,.5))}
</style>"""

# Browsers drop tabs and newlines inside a URL ("java\tscript:"), so any whitespace or control character
# disqualifies a link outright rather than being "cleaned".
# A bare type/subtype: no parameters, nothing that could break out of a data: URI or an attribute.
_MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")
_WEB_URL = re.compile(r"https?://[^\s\x00-\x1f\x7f]+", re.IGNORECASE)


def esc(value: object) -> str:
    """HTML-escape any value (quotes too, so the result is safe inside an attribute)."""
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


def wrap(body: str, *, error: bool = False) -> str:
    """Put rendered HTML in the scoped wrapper, with the style block in front."""
    classes = f"{WRAPPER_CLASS} {WRAPPER_CLASS}-error" if error else WRAPPER_CLASS
    return f'{CSS}<div class="{classes}">{body}</div>'


def format_size(n: int) -> str:
    """Human-readable byte count: ``512 B``, ``1.2 KB``, ``3.4 MB``."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def json_text(value: object, *, indent: int | None = 2) -> str:
    """JSON text for any value; values that are not JSON (from a careless caller) fall back to ``str``."""
    separators = None if indent is not None else (",", ":")
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, default=str, separators=separators)
    except RecursionError:  # nested deeper than indenting (Python frames) allows: the compact C encoder
        try:
            return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
        except (ValueError, TypeError, RecursionError):
            return "(nested too deeply to show)"  # repr would recurse as deep
    except (ValueError, TypeError):
        return repr(value)


# Where the rest is: what the page shows is bounded, what the result holds is not (issue: long content is
# truncated "with a way to see all of it").
SEE_ALL = "all of it: .text on the call handle, or .save(path) to write it to a file"


def truncate_note(shown: int, total: int) -> str:
    """The note under a truncated text, in HTML."""
    return (
        f'<div class="mcpnb-note">showing {shown:,} of {total:,} characters '
        f"({total - shown:,} left out; {esc(SEE_ALL)})</div>"
    )


def pre_html(text: str, max_text: int) -> str:
    """Text in an escaped ``<pre>``; past ``max_text`` characters the rest is left out, with a note."""
    if len(text) <= max_text:
        return f'<pre class="mcpnb-pre">{esc(text)}</pre>'
    return f'<pre class="mcpnb-pre">{esc(text[:max_text])}</pre>{truncate_note(max_text, len(text))}'


def cut_text(text: str, max_text: int) -> str:
    """Plain-text counterpart of :func:`pre_html`."""
    if len(text) <= max_text:
        return text
    left_out = len(text) - max_text
    return f"{text[:max_text]}\n… showing {max_text:,} of {len(text):,} characters ({left_out:,} left out)"


def label_html(text: str) -> str:
    """A small caption line; ``text`` must already be escaped HTML."""
    return f'<div class="mcpnb-label">{text}</div>'


def note_html(text: str, *, bad: bool = False) -> str:
    """A small italic note; ``text`` must already be escaped HTML."""
    cls = "mcpnb-note mcpnb-bad" if bad else "mcpnb-note"
    return f'<div class="{cls}">{text}</div>'


def b64_size(data: str) -> int:
    """The decoded size of base64 text, without decoding it (exact when the text is valid)."""
    clean = "".join(data.split())
    return max(0, len(clean) * 3 // 4 - clean[-2:].count("="))


@dataclass(frozen=True)
class Media:
    mime: str
    size: int
    data: str | None  # validated base64, None when it must not be embedded
    problem: str | None  # why it is not embedded (plain text, escaped by the caller)
    too_large: bool = False


def _too_large(max_bytes: int) -> str:
    return f"not embedded: larger than the {format_size(max_bytes)} limit; .save(path) on the call handle"


def check_media(mime: object, data: object, kind: str, max_bytes: int) -> Media:
    """Check mime type, size and base64 of image/audio data before anything is embedded.

    Only a bare ``kind/subtype`` mime type is accepted and the base64 must decode with ``validate=True``;
    data over ``max_bytes`` is not even decoded.
    """
    mime_text = mime if isinstance(mime, str) else "(no mimeType)"
    if not isinstance(data, str) or not data.strip():
        return Media(mime_text, 0, None, "not shown: no base64 data")
    if len(data) * 3 // 4 > 2 * max_bytes:  # far too large whatever whitespace it holds: skip cleaning it
        problem = (
            f"not embedded: larger than the {format_size(max_bytes)} limit; .save(path) on the call handle"
        )
        return Media(mime_text, len(data) * 3 // 4, None, problem, True)
    clean = "".join(data.split())
    size = b64_size(clean)
    if not isinstance(mime, str) or not _MIME.fullmatch(mime) or not mime.lower().startswith(kind + "/"):
        return Media(
            mime_text, size, None, f"not shown: mimeType {one_line(mime_text, 80)!r} is not {kind}/*"
        )
    if size > max_bytes:
        problem = (
            f"not embedded: larger than the {format_size(max_bytes)} limit; .save(path) on the call handle"
        )
        return Media(mime, size, None, problem, True)
    try:
        base64.b64decode(clean, validate=True)
    except (binascii.Error, ValueError):
        return Media(mime, size, None, "not shown: the data is not valid base64")
    return Media(mime, size, clean, None)


def media_html(mime: object, data: object, kind: str, max_bytes: int) -> str:
    """``<img>`` or ``<audio>`` with a data: URI, or a note saying why it is not embedded."""
    media = check_media(mime, data, kind, max_bytes)
    head = label_html(f"{esc(kind)} {esc(media.mime)}, {esc(format_size(media.size))}")
    if media.data is None:
        return head + note_html(esc(f"{kind} {media.problem}"), bad=media.problem is not None)
    src = esc(f"data:{media.mime};base64,{media.data}")
    if kind == "image":
        return f'{head}<img class="mcpnb-img" alt="{esc(media.mime)}" src="{src}">'
    return f'{head}<audio controls src="{src}"></audio>'


def media_text(mime: object, data: object, kind: str, max_bytes: int) -> str:
    """Text fallback for media, e.g. ``[image image/png, 1.2 KB]``."""
    media = check_media(mime, data, kind, max_bytes)
    suffix = f": {media.problem}" if media.problem and not media.too_large else ""
    return f"[{kind} {media.mime}, {format_size(media.size)}{suffix}]"


_COPY = (
    "navigator.clipboard.writeText(this.closest('.mcpnb-copyable').querySelector('pre').innerText);"
    "this.textContent='Copied';"
)


def copy_button() -> str:
    """A Copy button for the ``<pre>`` of its enclosing ``.mcpnb-copyable`` (works where the page runs
    the output's script attributes: a trusted notebook, an exported HTML page; inert elsewhere)."""
    attributes = f'class="mcpnb-copy" type="button" title="copy to the clipboard" onclick="{_COPY}"'
    return f"<button {attributes}>Copy</button>"


def code_block(title: str, text: str, *, max_chars: int = 20_000) -> str:
    """A titled block of code or JSON with a Copy button."""
    return (
        f'<div class="mcpnb-copyable"><div class="mcpnb-label">{esc(title)} {copy_button()}</div>'
        f"{pre_html(text, max_chars)}</div>"
    )


def json_pre(value: object, *, max_chars: int = 20_000) -> str:
    """Pretty JSON in an escaped ``<pre>``, truncated with a note when it is longer than ``max_chars``."""
    text = json_text(value)
    note = ""
    if len(text) > max_chars:
        note = truncate_note(max_chars, len(text))
        text = text[:max_chars]
    return f'<pre class="mcpnb-pre">{esc(text)}</pre>{note}'


def one_line(value: object, limit: int = 100) -> str:
    """A compact single-line rendering of a value, cut at ``limit`` characters with an ellipsis."""
    text = value if isinstance(value, str) else json_text(value, indent=None)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def safe_link(uri: object, label: object | None = None) -> str:
    """An ``<a>`` for http(s) URIs only; other schemes (javascript:, data:, file:) stay escaped text."""
    text = esc(uri if label is None else label)
    if isinstance(uri, str) and _WEB_URL.fullmatch(uri):
        return f'<a href="{esc(uri)}" target="_blank" rel="noopener noreferrer nofollow">{text}</a>'
    return f"<code>{text}</code>"


def _columns_of(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(str(key), None)
    return list(seen)


def _cell_text(value: object, limit: int = 2_000) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json_text(value, indent=None)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text_table(header: list[str], body: Iterable[list[str]], width: int = 40) -> str:
    def cut(s: str) -> str:
        s = " ".join(s.split())
        return s if len(s) <= width else s[: width - 1] + "…"

    lines = [[cut(c) for c in header], *([cut(c) for c in row] for row in body)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def table_bundle(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, *, title: str | None = None
) -> dict[str, str]:
    """A generic table (tools lists, history, audit log) as ``text/html`` and ``text/plain``.

    ``columns`` defaults to every key, in order of first appearance. Non-string cells are shown as compact
    JSON; missing cells are empty.
    """
    cols = list(columns) if columns is not None else _columns_of(rows)
    cells = [[_cell_text(row.get(c)) for c in cols] for row in rows]
    title_html = f'<div class="mcpnb-title">{esc(title)}</div>' if title else ""
    if not rows:
        plain = f"{title}\n(no rows)" if title else "(no rows)"
        return {
            "text/html": wrap(f'{title_html}<div class="mcpnb-note">(no rows)</div>'),
            "text/plain": plain,
        }
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in cells)
    table = f'<table class="mcpnb-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    plain = _text_table(cols, cells)
    return {"text/html": wrap(title_html + table), "text/plain": f"{title}\n{plain}" if title else plain}


def json_tree(value: object, *, max_nodes: int = 2_000, max_leaf: int = 1_000) -> str:
    """A collapsible tree: nested ``<details>`` for objects and arrays, escaped JSON scalars as leaves.

    Untrusted values may be huge or deep, so the tree stops after ``max_nodes`` nodes (saying how many
    items it left out) and shows anything deeper than ``_MAX_DEPTH`` as a one-line JSON leaf.
    """
    budget = [max_nodes]
    return f'<ul class="mcpnb-tree" style="margin-left:0">{_tree_item(None, value, 0, budget, max_leaf)}</ul>'


_MAX_DEPTH = 40


def _tree_item(key: object, value: object, depth: int, budget: list[int], max_leaf: int) -> str:
    budget[0] -= 1
    label = f'<span class="mcpnb-key">{esc(key)}</span>: ' if key is not None else ""
    if isinstance(value, (Mapping, list)) and depth < _MAX_DEPTH:
        items: list[tuple[object, object]] = (
            list(value.items()) if isinstance(value, Mapping) else list(enumerate(value))
        )
        noun = "key" if isinstance(value, Mapping) else "item"
        brackets = "{}" if isinstance(value, Mapping) else "[]"
        kind = f"{brackets} {len(items)} {noun}{'' if len(items) == 1 else 's'}"
        children: list[str] = []
        for index, (k, v) in enumerate(items):
            if budget[0] <= 0:
                children.append(f'<li class="mcpnb-note">… {len(items) - index:,} more left out</li>')
                break
            children.append(_tree_item(k, v, depth + 1, budget, max_leaf))
        open_attr = " open" if depth < 2 else ""
        return (
            f'<li><details{open_attr}><summary>{label}<span class="mcpnb-note">{kind}</span></summary>'
            f'<ul class="mcpnb-tree">{"".join(children)}</ul></details></li>'
        )
    leaf = json_text(value, indent=None)
    leaf = leaf if len(leaf) <= max_leaf else leaf[: max_leaf - 1] + "…"
    return f"<li>{label}<code>{esc(leaf)}</code></li>"


def schema_errors(instance: Any, schema: Mapping[str, Any], *, limit: int = 20) -> list[str]:
    """Validate ``instance`` against a JSON Schema; return readable error lines (empty means valid).

    Through the package's one validation service (``tools/validation.py``: 2020-12 unless ``$schema``
    names another dialect, an unsupported dialect reported rather than validated as another, formats
    checked, ``$ref`` resolved only inside the schema — MCP-NOTES §3.9, DESIGN.md decision 8). Compiled
    checks are shared, so re-rendering a result does not compile its schema again.
    """
    from ...tools.validation import SchemaProblem, schema_check

    check = schema_check(schema, strict=False)
    lines = []
    if check.problem and check.validator_class is not None:  # meta-schema violation: said, still applied
        lines.append(f"outputSchema is not a valid schema: {one_line(check.problem, 300)}")
    try:
        errors = check.errors(instance)
    except SchemaProblem as exc:
        return [*lines, f"outputSchema could not be applied: {one_line(str(exc), 300)}"]
    lines += [f"{e.json_path}: {one_line(e.message, 300)}" for e in sorted(errors[:limit], key=_error_key)]
    if len(errors) > limit:
        lines.append(f"… and more (first {limit} shown)")
    return lines


def _error_key(error: Any) -> str:
    return str(error.json_path)
