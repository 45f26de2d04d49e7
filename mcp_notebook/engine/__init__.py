"""The client/server layer: the one protocol engine (``Connection``), ``Client``, ``Server``, the sync
bridge and the background event-loop thread (``runtime``) that owns every connection.

Imports flow one way: ``protocol`` <- ``tools``, ``transports`` <- ``engine`` <- ``notebook``, ``cli``.
No widgets and no IPython here.
"""
