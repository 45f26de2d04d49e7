"""The interop peers (server-everything) for the cassette tests."""

from tests.interop._peers import peers

__all__ = ["peers"]
