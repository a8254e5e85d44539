"""``brief(value)``: a bounded repr for error messages.

An error message names the bad value, but never the whole of it: a 10,000-character
card text or a 100,000-deep nested list (which ``repr`` cannot even print: it raises
``RecursionError``) is shown in at most about ``MAX_CHARS`` characters. Used by the
checks of card texts (``cards``), rules (``rules``), action texts (``actions``) and
positions (``state_json``).
"""
from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["brief", "MAX_CHARS"]

MAX_CHARS = 80
"""The longest text ``brief`` returns, about (a cut string adds its length)."""

_REPR = reprlib.Repr()
_REPR.maxlevel = 3      # nested lists and dicts: three levels, then [...]
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxstring = 40
_REPR.maxlong = 40
_REPR.maxother = 40


def brief(value: Any) -> str:
    """A short, always-computable repr of ``value`` for an error message.

    A string longer than 40 characters shows its first 30 and its length
    (``'AAAA...' (10000 characters)``); containers show at most 6 items and 3 levels
    of nesting (``[[[[...]]]]``); the result is cut to ``MAX_CHARS``. Never raises
    (not even ``RecursionError``), whatever the value.
    """
    try:
        if isinstance(value, str) and len(value) > 40:
            return f"{value[:30]!r}... ({len(value)} characters)"
        text = _REPR.repr(value)
    except Exception:  # a broken __repr__ of a caller's object
        text = f"<{type(value).__name__}>"
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 3] + "..."
