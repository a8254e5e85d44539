"""The action-id layouts: one ``Discrete(N)`` per kind of table (API.md).

Every table of release 0.1 (one deck, no jokers, the top-card draw: ``table_kind(rules)
== "standard"``) has ``Discrete(579)``:

| range | ids | meaning |
| --- | --- | --- |
| draw | 0-1 | ``draw stock``, ``draw discard`` |
| discard | 2-53 | ``discard <card>``, card number ``id - 2`` |
| meld | 54-422 | ``meld <cards>``, catalogue meld ``id - 54`` (see ``melds.py``) |
| layoff | 423-578 | ``layoff <card> set|low|high``: ``423 + 3 * card + end`` (end 0 set, 1 low, 2 high) |

A 500 Rum table (``draw="dig"`` or ``scoring="melds"``, RULES.md §10.4: kind
``"rum500"``) has ``Discrete(631)``: the same 579 ids, then

| dig | 579-630 | ``draw discard <card>``: take ``card`` (``id - 579``) and every card above it |

so a standard-table policy's ids mean the same at a 500 Rum table.
The actions tables of docs/env.md are generated from ``action_ranges(kind)`` (``python -m rummy_env.docs``).
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
NUM_ACTIONS = LAYOFF_BASE + 3 * NUM_CARDS  # 579: the standard table's layout
DIG_BASE = NUM_ACTIONS  # 579: ``draw discard <card>`` on a dig table
NUM_ACTIONS_RUM500 = DIG_BASE + NUM_CARDS  # 631

TABLE_KINDS = ("standard", "rum500")
"""The kinds of table, each with its own action layout and observation layout (API.md)."""
_KIND_ACTIONS = {"standard": NUM_ACTIONS, "rum500": NUM_ACTIONS_RUM500}


def table_kind(rules) -> str:
    """The kind of table ``rules`` (a ``Rules``) is: ``"rum500"`` when it digs the discard
    pile or scores melds (RULES.md §10.4), else ``"standard"`` (every table of release 0.1)."""
    return "rum500" if rules.draw == "dig" or rules.scoring == "melds" else "standard"


def num_actions(kind_or_rules="standard") -> int:
    """``N`` of the ``Discrete(N)`` action space of a table kind (``"standard"``: 579,
    ``"rum500"``: 631) or of a ``Rules``.

    Raises:
        ValueError: an unknown kind (the message lists the kinds).
    """
    kind = kind_or_rules if isinstance(kind_or_rules, str) else table_kind(kind_or_rules)
    n = _KIND_ACTIONS.get(kind)
    if n is None:
        raise ValueError(f"unknown table kind {kind!r}; kinds: {', '.join(TABLE_KINDS)}")
    return n


# (name, first id, count, meaning): the declared layout.
ACTION_RANGES: tuple[tuple[str, int, int, str], ...] = (
    ("draw", DRAW_STOCK, 2, "`draw stock` (0), `draw discard` (1): take the top of the stock or the upcard"),
    ("discard", DISCARD_BASE, NUM_CARDS, "`discard <card>`: id = 2 + card (card = 13*suit + rank, suits C D H S, ranks A..K)"),
    ("meld", MELD_BASE, NUM_MELDS, "`meld <cards>`: id = 54 + catalogue meld id (65 sets by rank, then 76 runs per suit)"),
    ("layoff", LAYOFF_BASE, 3 * NUM_CARDS, "`layoff <card> set|low|high`: id = 423 + 3*card + end (0 set, 1 low end of a run, 2 high end)"),
)
_DIG_RANGE = ("dig", DIG_BASE, NUM_CARDS,
              "`draw discard <card>`: id = 579 + card; take that card of the discard pile and every card above it "
              "(the deepest must be melded or laid off this turn; the top card alone is `draw discard`, id 1)")


def action_ranges(kind: str = "standard") -> tuple[tuple[str, int, int, str], ...]:
    """The declared layout of a table kind: ``(name, first id, count, meaning)`` per range.

    Raises:
        ValueError: an unknown kind.
    """
    num_actions(kind)
    return ACTION_RANGES + ((_DIG_RANGE,) if kind == "rum500" else ())


def _build_texts() -> tuple[str, ...]:
    t = ["draw stock", "draw discard"]
    t += [f"discard {CARD_TEXT[c]}" for c in range(NUM_CARDS)]
    t += ["meld " + " ".join(meld_cards_text(m)) for m in range(NUM_MELDS)]
    t += [f"layoff {CARD_TEXT[c]} {end}" for c in range(NUM_CARDS) for end in LAYOFF_ENDS]
    t += [f"draw discard {CARD_TEXT[c]}" for c in range(NUM_CARDS)]
    return tuple(t)


ACTION_TEXTS: tuple[str, ...] = _build_texts()
"""The text of every action id of every kind (the standard ids first, then the dig ids)."""
assert len(ACTION_TEXTS) == NUM_ACTIONS_RUM500


def action_text(action: int, n: int = NUM_ACTIONS) -> str:
    """The text of an action id (API.md's action text); ``n`` is the table's action
    count (``num_actions``; default 579, a standard table; 631 reads the digs too).

    Raises:
        ValueError: ``action`` is not an int in ``0..n-1``.
    """
    if type(action) is int and 0 <= action < n:
        return ACTION_TEXTS[action]
    return ACTION_TEXTS[checked_action_id(action, n=n)]


def checked_action_id(action: Any, error: type[ValueError] = ValueError, n: int = NUM_ACTIONS) -> int:
    """``action`` as a plain int in ``0..n-1`` if it is an integer: an ``int``, a
    numpy integer or a 0-d integer array; never a bool or a float (``action_text`` and
    ``engine.as_action_id`` take action ids this way). ``n`` is the table's action count
    (``num_actions``; 579 for a standard table).

    Raises:
        error (``ValueError`` or a subclass of it): any other type, or a value outside
            ``0..n-1``; the message says what was given and what is allowed.
    """
    try:
        if isinstance(action, bool):
            raise TypeError
        a = operator.index(action)
    except TypeError:
        raise error(f"action must be an int in 0..{n - 1}, got {str(action)[:50]!r} "
                    f"({type(action).__name__})") from None
    if not 0 <= a < n:
        raise error(f"action must be an int in 0..{n - 1}, got {str(a)[:50]}")
    return a


def layoff_id(card: int, end: int) -> int:
    """Id of laying ``card`` off at ``end`` (0 set, 1 low, 2 high)."""
    return LAYOFF_BASE + 3 * card + end


def parse_action(text: str) -> int | tuple[str, int]:
    """Parse action text into an id (API.md's forms, cards in any order, case-insensitive).

    Returns the action id, or ``("layoff", card)`` for ``layoff <card>`` without an
    end, which only a position can resolve (see ``engine.action_id``).
    ``draw discard <card>`` gives the dig id ``579 + card`` (RULES.md §10.4), which
    only a dig table has; ``engine.action_id`` turns the top card's into ``draw discard``.

    Raises:
        ValueError: the text names no action; the message lists the forms.
    """
    forms = ("forms: 'draw stock', 'draw discard', 'draw discard 7H' (dig tables), 'meld 4H 5H 6H', "
             "'layoff JC set|low|high', 'layoff JC', 'discard KS'")
    if not isinstance(text, str):
        raise ValueError(f"action text must be a string, got {type(text).__name__}; {forms}")
    words = text.strip().split()
    if not words:
        raise ValueError(f"empty action text; {forms}")
    verb = words[0].lower()
    try:
        if verb == "draw" and len(words) == 2 and words[1].lower() in ("stock", "discard"):
            return DRAW_STOCK if words[1].lower() == "stock" else DRAW_DISCARD
        if verb == "draw" and len(words) == 3 and words[1].lower() == "discard":
            return DIG_BASE + parse_card(words[2])
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
