"""jsonschema, imported without its 2-second tax.

jsonschema's format module imports ``rfc3987_syntax`` when it is installed (Jupyter installs it, through
jupyter-events), and that package compiles a Lark grammar at import time: measured 1.4-2.9 s on the project
machine (``python -X importtime -c "import jsonschema"``), paid by every server start and ``%load_ext``.
Only the ``iri``/``iri-reference`` format checks use it. So while jsonschema is first imported we hand it a
stand-in whose ``is_valid_syntax`` imports the real module on first use: the checks behave exactly the same,
and nobody pays for the grammar until an IRI is actually checked. The stand-in is removed from
``sys.modules`` right after, so any other importer gets the real package.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any


def _lazy_rfc3987_syntax() -> None:
    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        return
    try:
        found = importlib.util.find_spec("rfc3987_syntax") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return

    def is_valid_syntax(rule: str, value: str) -> Any:
        real = sys.modules.get("rfc3987_syntax")
        if real is None or real is stand_in:
            sys.modules.pop("rfc3987_syntax", None)
            real = importlib.import_module("rfc3987_syntax")
        return real.is_valid_syntax(rule, value)

    stand_in = types.ModuleType("rfc3987_syntax")
    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    sys.modules["rfc3987_syntax"] = stand_in
    try:
        importlib.import_module("jsonschema")
    finally:
        if sys.modules.get("rfc3987_syntax") is stand_in:
            del sys.modules["rfc3987_syntax"]


_lazy_rfc3987_syntax()

from jsonschema import Draft202012Validator, FormatChecker, ValidationError  # noqa: E402
from jsonschema.exceptions import SchemaError, UnknownType, best_match, relevance  # noqa: E402
from jsonschema.protocols import Validator  # noqa: E402
from jsonschema.validators import validator_for  # noqa: E402

__all__ = [
    "Draft202012Validator",
    "FormatChecker",
    "SchemaError",
    "UnknownType",
    "ValidationError",
    "Validator",
    "best_match",
    "relevance",
    "validator_for",
]
