"""The sans-IO protocol core: JSON-RPC framing, MCP types, versions and the session state machine."""
