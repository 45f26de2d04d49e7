"""``python -m mcp_notebook ...``: the same command line as ``mcp-notebook`` (see :mod:`mcp_notebook.cli`)."""

from .cli import main

raise SystemExit(main())
