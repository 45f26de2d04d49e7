"""The package's version: the one place it is written (``pyproject.toml`` reads it, so do the client's
``clientInfo``, a Server's default ``serverInfo.version`` and the Apps host's ``hostInfo``)."""

__version__ = "0.1.0"
