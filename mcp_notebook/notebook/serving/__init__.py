"""Serving: the notebook as a server (DESIGN decisions 6, 11, 12 and 14).

Owns the in-kernel Streamable HTTP server with its approval gate and banner (``server``) and the live console
of incoming requests (``console``). Tools run on the kernel's main thread through ``notebook.kernel_thread``,
which sits below ``calls`` because a waiting call handle parks that thread; a notebook *file* served from
the command line (``notebook.notebook_file``) sits at the top of ``notebook``: it loads the whole extension.
May import ``calls`` (the incoming policy, the cards), ``rendering``, ``config``, ``kernel_thread`` and the
layers below ``notebook``; never ``apps`` or the ``mcp`` object above it (tests/test_layers.py).
"""
