"""The notebook side: ``%load_ext mcp_notebook``, the ``mcp`` object, its magics and what they show.

Families, lowest first (tests/test_layers.py ``NOTEBOOK_RANKS``; a family imports only families below
it): ``forms``, ``rendering``, ``config``, ``kernel_thread``  <  ``calls``  <  ``serving``, ``apps``  <  the
``mcp`` object (``api`` with its mixin ``browse``; ``magics``, ``lint``, ``check``, ``live``,
``authorizing``) and ``notebook_file`` (a notebook file as a server, loading the whole extension).
"""
