"""parse_docstring: Google, NumPy and reST parameter sections."""

from __future__ import annotations

from mcp_notebook.tools import parse_docstring


def test_empty_docstring() -> None:
    assert parse_docstring(None) == ("", {})
    assert parse_docstring("") == ("", {})


def test_plain_docstring_is_all_description() -> None:
    assert parse_docstring("Add two numbers.\n\n    More detail here.") == (
        "Add two numbers.\n\nMore detail here.",
        {},
    )


def test_google_style() -> None:
    doc = """Forecast the weather.

    Uses the public API.

    Args:
        city: City name.
        days (int): How many days
            ahead, at most 14.
        *extra: Ignored.

    Returns:
        The forecast.
    """
    description, params = parse_docstring(doc)
    assert description == "Forecast the weather.\n\nUses the public API.\n\nReturns:\n    The forecast."
    assert params == {"city": "City name.", "days": "How many days ahead, at most 14.", "extra": "Ignored."}


def test_numpy_style() -> None:
    doc = """Forecast the weather.

    Parameters
    ----------
    city : str
        City name.
    days : int, optional
        How many days
        ahead.

    Returns
    -------
    Forecast
        The forecast.
    """
    description, params = parse_docstring(doc)
    assert description == "Forecast the weather.\n\nReturns\n-------\nForecast\n    The forecast."
    assert params == {"city": "City name.", "days": "How many days ahead."}


def test_rest_style() -> None:
    doc = """Forecast the weather.

    :param city: City name.
    :param int days: How many days
        ahead.
    :type days: int
    :returns: The forecast.
    """
    description, params = parse_docstring(doc)
    assert description == "Forecast the weather.\n\n:returns: The forecast."
    assert params == {"city": "City name.", "days": "How many days ahead."}
