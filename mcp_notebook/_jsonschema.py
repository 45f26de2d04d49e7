"""jsonschema, imported without the tax of its optional format packages.

jsonschema's format module imports, when they are installed (Jupyter installs them), packages that only a
few format checks use, and two of them are expensive at import time:

- ``rfc3987_syntax`` compiles a Lark grammar: measured 1.4-2.9 s on the project machine
  (``python -X importtime -c "import jsonschema"``); only ``iri``/``iri-reference`` use it;
- ``isoduration`` imports ``arrow`` and its parsers: about a fifth of the package's whole API import; only
  ``duration`` uses it;
- ``rfc3986_validator``, ``rfc3339_validator``, ``uri_template`` and ``webcolors`` compile regular
  expressions and tables for one or two formats each (``uri``, ``date-time``, ``uri-template``, ``color``).

So while jsonschema is first imported we hand it stand-ins whose functions import the real module on first
use (and translate its exception into the stand-in's, which is the class jsonschema registered): the checks
behave exactly the same, and nobody pays for a package until its format is actually checked. The stand-ins
are removed from ``sys.modules`` right after, so any other importer gets the real packages.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from typing import Any


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _real(name: str, stand_in: types.ModuleType) -> Any:
    real = sys.modules.get(name)
    if real is None or real is stand_in:
        sys.modules.pop(name, None)
        real = importlib.import_module(name)
    return real


def _rfc3987_syntax() -> types.ModuleType:
    stand_in = types.ModuleType("rfc3987_syntax")

    def is_valid_syntax(rule: str, value: str) -> Any:
        return _real("rfc3987_syntax", stand_in).is_valid_syntax(rule, value)

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    return stand_in


def _isoduration() -> types.ModuleType:
    stand_in = types.ModuleType("isoduration")

    class DurationParsingException(ValueError):
        """Raised for an invalid duration (the real package's exception is chained as the cause)."""

    def parse_duration(text: str) -> Any:
        real = _real("isoduration", stand_in)
        try:
            return real.parse_duration(text)
        except real.DurationParsingException as exc:
            raise DurationParsingException(str(exc)) from exc

    stand_in.DurationParsingException = DurationParsingException  # type: ignore[attr-defined]
    stand_in.parse_duration = parse_duration  # type: ignore[attr-defined]
    return stand_in


def _functions(name: str, *functions: str) -> Callable[[], types.ModuleType]:
    """A stand-in for a module of which jsonschema only calls plain functions."""

    def make() -> types.ModuleType:
        stand_in = types.ModuleType(name)
        for function in functions:

            def proxy(*args: Any, __function: str = function, **kwargs: Any) -> Any:
                return getattr(_real(name, stand_in), __function)(*args, **kwargs)

            setattr(stand_in, function, proxy)
        return stand_in

    return make


_STAND_INS: dict[str, Callable[[], types.ModuleType]] = {
    "rfc3987_syntax": _rfc3987_syntax,
    "isoduration": _isoduration,
    "rfc3986_validator": _functions("rfc3986_validator", "validate_rfc3986"),
    "rfc3339_validator": _functions("rfc3339_validator", "validate_rfc3339"),
    "uri_template": _functions("uri_template", "validate"),
    "webcolors": _functions("webcolors", "name_to_hex", "normalize_hex"),
}


def _import_jsonschema_lazily() -> None:
    if "jsonschema" in sys.modules:
        return
    placed = {}
    for name, make in _STAND_INS.items():
        if name not in sys.modules and _installed(name):
            placed[name] = sys.modules[name] = make()
    try:
        importlib.import_module("jsonschema")
    finally:
        for name, stand_in in placed.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


_import_jsonschema_lazily()

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
