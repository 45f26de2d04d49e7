"""``--auth ...`` options of ``mcp-notebook serve --http`` (and ``%mcp serve``): building a
:class:`~mcp_notebook.auth.resource.ProtectedResource` from command-line arguments."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .resource import ProtectedResource

__all__ = ["CLIENT_SECRET_ENV", "add_auth_arguments", "protected_resource"]

CLIENT_SECRET_ENV = "MCP_NOTEBOOK_AUTH_CLIENT_SECRET"  # never on the command line, where `ps` shows it


def _tool_scope(text: str) -> tuple[str, str]:
    tool, sep, scope = text.partition("=")
    if not sep or not tool or not scope:
        raise argparse.ArgumentTypeError(f"expected TOOL=SCOPE, got {text!r}")
    return tool, scope


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "authorization (with --http)", "serve as an OAuth protected resource (MCP authorization)"
    )
    group.add_argument(
        "--auth",
        metavar="ISSUER",
        help="require access tokens issued by this authorization server (its URL); JWTs are checked against "
        "its JWKS, with audience = this server's URL",
    )
    group.add_argument(
        "--auth-resource", metavar="URL", help="this server's public URL (default: the served URL)"
    )
    group.add_argument(
        "--auth-jwks", metavar="URL", help="the JWKS (default: jwks_uri of the issuer's metadata)"
    )
    group.add_argument(
        "--auth-introspection",
        metavar="URL",
        help=f"validate tokens by RFC 7662 introspection instead (client secret: ${CLIENT_SECRET_ENV})",
    )
    group.add_argument(
        "--auth-client-id", metavar="ID", help="this server's client id at the introspection endpoint"
    )
    group.add_argument(
        "--auth-scope",
        metavar="SCOPE",
        action="append",
        default=[],
        help="a scope every request needs (repeatable)",
    )
    group.add_argument(
        "--tool-scope",
        metavar="TOOL=SCOPE",
        type=_tool_scope,
        action="append",
        default=[],
        help="a scope calls of TOOL need (repeatable)",
    )


def protected_resource(args: argparse.Namespace) -> ProtectedResource | None:
    """The protected resource the arguments describe, or None without ``--auth``. Bind it to the served
    URL (``bind``) unless ``--auth-resource`` named one."""
    if not getattr(args, "auth", None):
        return None
    from .resource import ProtectedResource

    tool_scopes: dict[str, list[str]] = {}
    for tool, scope in args.tool_scope:
        tool_scopes.setdefault(tool, []).append(scope)
    return ProtectedResource(
        args.auth_resource,
        args.auth,
        jwks_uri=args.auth_jwks,
        introspection_endpoint=args.auth_introspection,
        client_id=args.auth_client_id,
        client_secret=os.environ.get(CLIENT_SECRET_ENV),
        required_scopes=args.auth_scope,
        tool_scopes=tool_scopes,
    )
