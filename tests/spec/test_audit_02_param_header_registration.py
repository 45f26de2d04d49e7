"""Audit item 2: ``x-mcp-header`` was not checked at registration. ``Field(header=...)`` on an optional or a
float parameter, or with a name that is not an HTTP token, was accepted, and spec-following HTTP clients
(ours included) then dropped the tool (SEP-2243). Now registration refuses it, naming the parameter."""

from __future__ import annotations

from typing import Annotated

import pytest

from mcp_notebook import Field, Server


def test_audit_02_an_optional_header_parameter_is_refused() -> None:
    server = Server("audit-2")
    with pytest.raises(ValueError, match=r"'region'.*string, integer or boolean"):

        @server.tool
        def f(region: Annotated[str | None, Field(header="Region")] = None) -> str:
            return "x"


def test_audit_02_a_float_header_parameter_is_refused() -> None:
    server = Server("audit-2")
    with pytest.raises(ValueError, match="'ratio'"):

        @server.tool
        def f(ratio: Annotated[float, Field(header="Ratio")]) -> str:
            return "x"


def test_audit_02_a_header_name_that_is_not_a_token_is_refused() -> None:
    server = Server("audit-2")
    with pytest.raises(ValueError, match="not a header token"):

        @server.tool
        def f(region: Annotated[str, Field(header="My Region")]) -> str:
            return "x"

    assert server.tools.get("f") is None


def test_audit_02_valid_header_parameters_still_register() -> None:
    server = Server("audit-2")

    @server.tool
    def f(
        region: Annotated[str, Field(header="Region")],
        count: Annotated[int, Field(header="Count")],
        dry: Annotated[bool, Field(header="Dry-Run")],
    ) -> str:
        return "x"

    schema = server.tools.get("f").definition["inputSchema"]  # type: ignore[union-attr]
    assert schema["properties"]["region"]["x-mcp-header"] == "Region"
