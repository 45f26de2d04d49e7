"""Calls: a notebook's outgoing tool call, from a name to a handle (DESIGN decisions 4, 10 and 11).

Owns the named connections (``connections``), who decides whether a call runs and the audit log
(``policy``, shown by ``history``), arguments typed in a magic line and checked against a schema
(``callargs``, ``arguments``), the call handle and its static and live faces (``handle``, ``handle_view``,
``widgets``; ``tool_list``: the tools table whose rows open a tool's form), what a server asks mid-call
(``asking``), batches (``batch``) and tasks (``tasks``). May import ``notebook.forms``,
``notebook.rendering``, ``notebook.config``, ``notebook.kernel_thread`` and the layers below
``notebook``; never ``serving``, ``apps`` or the ``mcp`` object (``api``, ``magics``) that sit above it.
"""
