"""The top-level names of mcp_notebook are pinned here; changing them is a decision, not an accident."""

from __future__ import annotations

import subprocess
import sys

import mcp_notebook


def test_exported_members() -> None:
    assert sorted(mcp_notebook.__all__) == [
        "Audio",
        "Cassette",
        "Client",
        "ConnectionClosedError",
        "Context",
        "EmbeddedResource",
        "Field",
        "Image",
        "JSONRPCError",
        "MCPError",
        "OAuth",
        "Recording",
        "RequestTimeoutError",
        "ResourceLink",
        "Server",
        "SyncClient",
        "ToolError",
        "ToolResult",
        "connect",
        "load_ipython_extension",
        "to_pandas",
        "unload_ipython_extension",
    ]
    for name in mcp_notebook.__all__:
        assert getattr(mcp_notebook, name) is not None
    assert set(mcp_notebook.__all__) <= set(dir(mcp_notebook))


def test_oauth_is_the_auth_package_class() -> None:
    from mcp_notebook.auth import OAuth

    assert mcp_notebook.OAuth is OAuth


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        mcp_notebook.NoSuchName  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchName" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_names_are_lazy() -> None:
    # in a fresh interpreter: importing the package must not import aiohttp (OAuth's HTTP)
    heavy = "('aiohttp', 'mcp_notebook.auth.oauth')"
    code = f"import sys, mcp_notebook; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
