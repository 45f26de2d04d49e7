"""Reading rendered HTML as a browser would, for the renderer tests."""

from __future__ import annotations

from html.parser import HTMLParser


class Elements(HTMLParser):
    """Every start tag with its attributes, and all text, as a browser would see them."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.tags if t == tag]

    @property
    def all_text(self) -> str:
        return "".join(self.text)
