"""Fixtures for the interop tests; the helpers behind them live in :mod:`tests.interop._peers`."""

from tests.interop._peers import conformance_server_url, peers

__all__ = ["conformance_server_url", "peers"]
