"""Figures, images and IPython display objects -> content blocks (and a PIL image as a parameter).

- matplotlib ``Figure`` or ``Axes`` -> a PNG ``image`` block; the figure is closed afterwards, so a tool
  that plots on every call does not pile figures up in pyplot.
- PIL ``Image`` -> a PNG ``image`` block; as a parameter, a base64 string (PNG, JPEG, GIF, WebP...).
- IPython ``Image`` -> ``image`` (or a ``resource_link`` when it only has a URL), ``SVG`` -> an
  ``image/svg+xml`` image, ``Audio`` -> ``audio``, ``HTML`` -> an embedded ``text/html`` resource,
  ``Markdown``/``Latex``/``Math`` -> ``text``.
The libraries come from ``sys.modules``: an object of theirs exists only if the user imported them.
"""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import Sequence
from typing import Any

from ..content import Audio, EmbeddedResource, Image, ResourceLink, text_block
from . import NOT_MINE

Wire = dict[str, Any]
_HTML_URI = "mcp-notebook://display/html"


def _class(module: str, name: str) -> type | None:
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def _is(value: Any, module: str, name: str) -> bool:
    cls = _class(module, name)
    return cls is not None and isinstance(value, cls)


def _subclass(tp: object, module: str, name: str) -> bool:
    cls = _class(module, name)
    return cls is not None and isinstance(tp, type) and issubclass(tp, cls)


def _png(save: Any, **options: Any) -> Wire:
    buffer = io.BytesIO()
    save(buffer, format="png", **options)
    return Image(buffer.getvalue(), mime_type="image/png").to_wire()


def _figure_block(figure: Any) -> Wire:
    try:
        return _png(figure.savefig, bbox_inches="tight")
    finally:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close(figure)


def _ipython_image(value: Any) -> Wire:
    if value.data is None and value.url:
        return ResourceLink(uri=value.url, name=value.url.rsplit("/", 1)[-1] or "image").to_wire()
    mime = getattr(value, "_mimetype", None)
    return Image(bytes(value.data), mime_type=mime if isinstance(mime, str) else None).to_wire()


def _svg(value: Any) -> Wire:
    data = value.data.encode("utf-8") if isinstance(value.data, str) else bytes(value.data)
    return Image(data, mime_type="image/svg+xml").to_wire()


def _html(value: Any) -> Wire:
    return EmbeddedResource(uri=_HTML_URI, text=str(value.data or ""), mime_type="text/html").to_wire()


_DISPLAY = "IPython.core.display"
# (module, class) -> block; checked in order, so the specific classes come before their bases
_BLOCKS: tuple[tuple[str, str, Any], ...] = (
    ("matplotlib.figure", "Figure", _figure_block),
    ("matplotlib.axes", "Axes", lambda ax: _figure_block(ax.get_figure())),
    ("PIL.Image", "Image", lambda image: _png(image.save)),
    (_DISPLAY, "Image", _ipython_image),
    (_DISPLAY, "SVG", _svg),
    ("IPython.lib.display", "Audio", lambda a: Audio(bytes(a.data), mime_type=a.mimetype).to_wire()),
    (_DISPLAY, "HTML", _html),
    (_DISPLAY, "Markdown", lambda v: text_block(str(v.data or ""))),
    (_DISPLAY, "Latex", lambda v: text_block(str(v.data or ""))),
    (_DISPLAY, "Math", lambda v: text_block(str(v.data or ""))),
)


def content_block(value: Any) -> Wire | None:
    for module, name, block in _BLOCKS:
        if _is(value, module, name):
            result: Wire = block(value)
            return result
    return None


def is_content_type(tp: object) -> bool:
    return any(_subclass(tp, module, name) for module, name, _ in _BLOCKS)


# -- a PIL image as a parameter -----------------------------------------------------------------------------
MAX_IMAGE_PIXELS = 16_000_000  # 4,000 x 4,000: 64 MiB as RGBA; an image parameter past it is refused


def schema(builder: Any, tp: object) -> dict[str, Any] | None:
    if _subclass(tp, "PIL.Image", "Image"):
        return {
            "type": "string",
            "contentEncoding": "base64",
            "contentMediaType": "image/*",
            "description": "An image file (PNG, JPEG, GIF, WebP...), base64-encoded.",
        }
    return None


def from_json(tp: object, value: Any, metadata: Sequence[object]) -> Any:
    if not _subclass(tp, "PIL.Image", "Image"):
        return NOT_MINE
    if not isinstance(value, str):
        raise TypeError(f"expected a base64 string, got {type(value).__name__}")
    image = sys.modules["PIL.Image"].open(io.BytesIO(base64.b64decode(value, validate=True)))
    # Decompression bombs: a few hundred KiB of PNG can decode to gigabytes. Opening reads only the header,
    # so the size is checked before a single pixel is decoded (PIL's own guard, MAX_IMAGE_PIXELS, is ~89M
    # pixels and only warns below twice that).
    width, height = image.size
    frames = max(1, int(getattr(image, "n_frames", 1)))
    if width * height * frames > MAX_IMAGE_PIXELS:
        image.close()
        raise ValueError(
            f"the image is {width}x{height} pixels{f' x {frames} frames' if frames > 1 else ''}; at most "
            f"{MAX_IMAGE_PIXELS:,} pixels are decoded (a decompression-bomb guard)"
        )
    image.load()  # read it now: the bytes are in memory, but a lazy image would fail later with no hint
    return image
