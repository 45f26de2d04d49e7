"""Fixtures for the serving tests: the interop peers (Inspector CLI) come from :mod:`tests.interop._peers`."""

from tests.interop._peers import peers

__all__ = ["peers"]
