"""Rendering: MCP data as static mimebundles (DESIGN decision 10), the form a saved notebook keeps.

Owns the shared pieces (``base``: escaping, scoped CSS, JSON and table views), results (``results``), tables
(``table``), the JSON-RPC trace and its diagram (``trace``, ``diagram``), the small displayable values the API
returns (``views``), resource links opened inline (``links``) and the static snapshots that replace live
widgets at kernel shutdown (``snapshots``). Pure functions of plain data plus a few value classes: may import
``tools``, ``engine`` and lower layers, nothing else in ``notebook/`` (tests/test_layers.py).
"""
