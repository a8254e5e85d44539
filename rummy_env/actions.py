"""The action-id layout: one ``Discrete(NUM_ACTIONS)`` for every rule set and player count.

| range | ids | meaning |
| --- | --- | --- |
| draw | 0-1 | ``draw stock``, ``draw discard`` |
| discard | 2-53 | ``discard <card>``, card number ``id - 2`` |
| meld | 54-422 | ``meld <cards>``, catalogue meld ``id - 54`` (see ``melds.py``) |
| layoff | 423-578 | ``layoff <card> set|low|high``: ``423 + 3 * card + end`` (end 0 set, 1 low, 2 high) |

The actions table of docs/env.md is generated from ``ACTION_RANGES`` (``python -m rummy_env.docs``).
"""
from __future__ import annotations

import operator
from typing import Any

from .cards import CARD_TEXT, NUM_CARDS, CardError, mask_of, parse_card
from .melds import MELD_ID_BY_MASK, NUM_MELDS, meld_cards_text

DRAW_STOCK = 0
DRAW_DISCARD = 1
DISCARD_BASE = 2
MELD_BASE = DISCARD_BASE + NUM_CARDS  # 54
LAYOFF_BASE = MELD_BASE + NUM_MELDS  # 423
LAYOFF_ENDS = ("set", "low", "high")
NUM_ACTIONS = LAYOFF_BASE + 3 * NUM_CARDS  # 579

# (name, first id, count, meaning): the declared layout.
ACTION_RANGES: tuple[tuple[str, int, int, str], ...] = (
    ("draw", DRAW_STOCK, 2, "`draw stock` (0), `draw discard` (1): take the top of the stock or the upcard"),
    ("discard", DISCARD_BASE, NUM_CARDS, "`discard <card>`: id = 2 + card (card = 13*suit + rank, suits C D H S, ranks A..K)"),
    ("meld", MELD_BASE, NUM_MELDS, "`meld <cards>`: id = 54 + catalogue meld id (65 sets by rank, then 76 runs per suit)"),
    ("layoff", LAYOFF_BASE, 3 * NUM_CARDS, "`layoff <card> set|low|high`: id = 423 + 3*card + end (0 set, 1 low end of a run, 2 high end)"),
)


def _build_texts() -> tuple[str, ...]:
    t = ["draw stock", "draw discard"]
    t += [f"discard {CARD_TEXT[c]}" for c in range(NUM_CARDS)]
    t += ["meld " + " ".join(meld_cards_text(m)) for m in range(NUM_MELDS)]
    t += [f"layoff {CARD_TEXT[c]} {end}" for c in range(NUM_CARDS) for end in LAYOFF_ENDS]
    return tuple(t)


ACTION_TEXTS: tuple[str, ...] = _build_texts()
assert len(ACTION_TEXTS) == NUM_ACTIONS


def action_text(action: int) -> str:
    """The text of an action id (API.md's action text).

    Raises:
        ValueError: ``action`` is not an int in ``0..NUM_ACTIONS-1``.
    """
    if type(action) is int and 0 <= action < NUM_ACTIONS:
        return ACTION_TEXTS[action]
    return ACTION_TEXTS[checked_action_id(action)]


def checked_action_id(action: Any, error: type[ValueError] = ValueError) -> int:
    """``action`` as a plain int in ``0..NUM_ACTIONS-1`` if it is an integer: an ``int``, a
    numpy integer or a 0-d integer array; never a bool or a float (``action_text`` and
    ``engine.as_action_id`` take action ids this way).

    Raises:
        error (``ValueError`` or a subclass of it): any other type, or a value outside
            ``0..NUM_ACTIONS-1``; the message says what was given and what is allowed.
    """
    try:
        if isinstance(action, bool):
            raise TypeError
        a = operator.index(action)
    except TypeError:
        raise error(f"action must be an int in 0..{NUM_ACTIONS - 1}, got {str(action)[:50]!r} "
                    f"({type(action).__name__})") from None
    if not 0 <= a < NUM_ACTIONS:
        raise error(f"action must be an int in 0..{NUM_ACTIONS - 1}, got {str(a)[:50]}")
    return a


def layoff_id(card: int, end: int) -> int:
    """Id of laying ``card`` off at ``end`` (0 set, 1 low, 2 high)."""
    return LAYOFF_BASE + 3 * card + end


def parse_action(text: str) -> int | tuple[str, int]:
    """Parse action text into an id (API.md's forms, cards in any order, case-insensitive).

    Returns the action id, or ``("layoff", card)`` for ``layoff <card>`` without an
    end, which only a position can resolve (see ``engine.action_id``).

    Raises:
        ValueError: the text names no action; the message lists the forms.
    """
    forms = "forms: 'draw stock', 'draw discard', 'meld 4H 5H 6H', 'layoff JC set|low|high', 'layoff JC', 'discard KS'"
    if not isinstance(text, str):
        raise ValueError(f"action text must be a string, got {type(text).__name__}; {forms}")
    words = text.strip().split()
    if not words:
        raise ValueError(f"empty action text; {forms}")
    verb = words[0].lower()
    try:
        if verb == "draw" and len(words) == 2 and words[1].lower() in ("stock", "discard"):
            return DRAW_STOCK if words[1].lower() == "stock" else DRAW_DISCARD
        if verb == "discard" and len(words) == 2:
            return DISCARD_BASE + parse_card(words[1])
        if verb == "meld" and len(words) >= 2:
            cards = [parse_card(w) for w in words[1:]]
            mask = mask_of(cards)
            if len(set(cards)) != len(cards):
                raise ValueError(f"{text!r} names a card twice")
            mid = MELD_ID_BY_MASK.get(mask)
            if mid is None:
                raise ValueError(
                    f"{text!r}: {' '.join(words[1:])} is not a set (3-4 cards of one rank) "
                    "or a run (3+ consecutive cards of one suit)"
                )
            return MELD_BASE + mid
        if verb == "layoff" and len(words) in (2, 3):
            card = parse_card(words[1])
            if len(words) == 2:
                return ("layoff", card)
            end = words[2].lower()
            if end not in LAYOFF_ENDS:
                raise ValueError(f"{text!r}: the end of a lay-off is one of set, low, high")
            return layoff_id(card, LAYOFF_ENDS.index(end))
    except CardError as e:
        raise ValueError(f"{text!r}: {e}") from None
    raise ValueError(f"{text!r} names no action; {forms}")
