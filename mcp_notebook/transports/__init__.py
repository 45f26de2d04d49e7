"""Transports move serialized JSON-RPC messages; nothing else. See :mod:`.base` for the interface."""

from .base import Transport, TransportClosed
from .memory import memory_pair

__all__ = ["Transport", "TransportClosed", "memory_pair"]
