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

The deck variants (RULES.md §10.1-10.3) are kinds named by their features joined with
``+`` (``"around"``, ``"jokers"``, ``"two_decks"``, ``"around+jokers"``, ...,
``table_kind``). Each keeps the 579 standard ids and appends, in this order:

| range | present when | meaning |
| --- | --- | --- |
| wrap_meld | ``around`` | ``meld <cards>`` of the 220 runs that turn the corner (catalogue ids 369-588) |
| joker_discard | ``jokers`` | ``discard JK`` |
| joker_as | ``jokers`` | ``joker as <card>``: the next joker of the meld or lay-off being built stands for ``card`` (``first + card``) |

A move with jokers is a short sequence of decisions of the same play phase (issue 24:
every table at most 2,048 ids): one ``joker as <card>`` per joker, in ascending card
order, then the meld or lay-off id whose cards include those cards, which the named
jokers then play (``meld 4H JK=5H 6H`` is ``joker as 5H``, then ``meld 4H 5H 6H``;
``layoff JK=7H high`` is ``joker as 7H``, then ``layoff 7H high``). While jokers are
named (``GameState.named``) only the ids that finish or extend such a move are legal,
and every named prefix has a legal finish: the legal moves are exactly the game's.

Two decks alone add no action (a card is named, not its copy), so ``"two_decks"`` has
``Discrete(579)`` and the standard ids; its observation shows counts. A 500 Rum table with
deck variants (``"rum500+jokers"``, ...) has the 500 Rum layout (the 579 ids, the 52
digs), then ``draw discard JK`` with jokers, then the ranges above. The layout of a
kind is ``ActionLayout.of(kind)`` (built on first use, then cached).
The actions tables of docs/env.md are generated from ``action_ranges(kind)`` (``python -m rummy_env.docs``).
"""
from __future__ import annotations

import itertools
import numbers
import operator
from functools import lru_cache
from typing import Any

from .brief import brief
from .cards import CARD_TEXT, JOKER, NUM_CARDS, CardError, mask_of, parse_card
from .melds import MELD_ID_BY_MASK, NUM_MELDS, NUM_MELDS_AROUND, meld_cards_text

DRAW_STOCK = 0
DRAW_DISCARD = 1
DISCARD_BASE = 2
MELD_BASE = DISCARD_BASE + NUM_CARDS  # 54
LAYOFF_BASE = MELD_BASE + NUM_MELDS  # 423
LAYOFF_ENDS = ("set", "low", "high")
NUM_ACTIONS = LAYOFF_BASE + 3 * NUM_CARDS  # 579: the standard table's layout
DIG_BASE = NUM_ACTIONS  # 579: ``draw discard <card>`` on a dig table
NUM_ACTIONS_RUM500 = DIG_BASE + NUM_CARDS  # 631

VARIANT_FEATURES = ("around", "jokers", "two_decks")
"""The deck variants a kind of table is named by (RULES.md §10.1-10.3), in name order."""
_VARIANT_COMBOS = tuple("+".join(c) for r in (1, 2, 3) for c in itertools.combinations(VARIANT_FEATURES, r))
TABLE_KINDS = ("standard", "rum500") + _VARIANT_COMBOS + tuple("rum500+" + k for k in _VARIANT_COMBOS)
"""The kinds of table, each with its own action layout and observation layout (API.md)."""


def table_kind(rules) -> str:
    """The kind of table ``rules`` (a ``Rules``) is: ``"rum500"`` when it digs the discard
    pile or scores melds (RULES.md §10.4); else the deck variants it plays joined by ``+``
    (``"around"`` for ``aces="around"``, ``"jokers"`` for ``jokers=2``, ``"two_decks"`` for
    ``decks=2``: RULES.md §10.1-10.3), or ``"standard"`` (every table of release 0.1)."""
    on = (rules.aces == "around", rules.jokers > 0, rules.decks == 2)
    return kind_name(is_rum500_table(rules), [f for f, o in zip(VARIANT_FEATURES, on) if o])


def kind_name(rum500: bool, features) -> str:
    """The name of the kind of table with these features (the one place kinds are named;
    ``table_kind``, ``table.Table``): ``"rum500"`` first for a 500 Rum table, then the
    deck variants of ``features`` (an iterable of ``VARIANT_FEATURES`` names) in
    ``VARIANT_FEATURES`` order, joined by ``+``; ``"standard"`` for none of them.

    Raises:
        ValueError: a feature that is not one of ``VARIANT_FEATURES``.
    """
    feats = set(features)
    if not feats <= set(VARIANT_FEATURES):
        raise ValueError(f"unknown table features {sorted(feats - set(VARIANT_FEATURES))}; "
                         f"features: {', '.join(VARIANT_FEATURES)}")
    parts = (["rum500"] if rum500 else []) + [f for f in VARIANT_FEATURES if f in feats]
    return "+".join(parts) if parts else "standard"


def is_rum500_table(rules) -> bool:
    """Whether ``rules`` (a ``Rules``) make a 500 Rum table (RULES.md §10.4): it digs the
    discard pile or scores melds. Such a table, with deck variants or without
    (``is_rum500(table_kind(rules))``), keeps each seat's meld points and has the 500 Rum
    STATE fields and observation pieces."""
    return rules.draw == "dig" or rules.scoring == "melds"


def kind_features(kind: str) -> frozenset:
    """The deck variants of a kind (``"around+jokers"`` -> ``{"around", "jokers"}``).

    Raises:
        ValueError: an unknown kind (the message lists the kinds).
    """
    if kind not in TABLE_KINDS:
        raise ValueError(f"unknown table kind {brief(kind)}; kinds: {', '.join(TABLE_KINDS)}")
    return frozenset() if kind in ("standard", "rum500") else frozenset(kind.split("+")) - {"rum500"}


def is_rum500(kind: str) -> bool:
    """Whether a kind of table is a 500 Rum one (``"rum500"`` or ``"rum500+<variants>"``, RULES.md §10.4)."""
    return kind == "rum500" or kind.startswith("rum500+")


def num_actions(kind_or_rules="standard") -> int:
    """``N`` of the ``Discrete(N)`` action space of a table kind (``"standard"``: 579,
    ``"rum500"``: 631, the deck variants' ``ActionLayout.of(kind).n``) or of a ``Rules``.

    Raises:
        ValueError: an unknown kind (the message lists the kinds).
    """
    kind = kind_or_rules if isinstance(kind_or_rules, str) else table_kind(kind_or_rules)
    if kind == "standard":
        return NUM_ACTIONS
    if kind == "rum500":
        return NUM_ACTIONS_RUM500
    return _variant_count(kind)


@lru_cache(maxsize=None)
def _variant_count(kind: str) -> int:
    """``ActionLayout.of(kind).n`` counted without building the layout (the largest has
    over 100,000 ids)."""
    feats = kind_features(kind)
    n = NUM_ACTIONS + (NUM_MELDS_AROUND - NUM_MELDS if "around" in feats else 0)
    if is_rum500(kind):
        n += NUM_CARDS + (1 if "jokers" in feats else 0)
    if "jokers" in feats:
        n += 1 + NUM_CARDS  # discard JK, joker as <card>
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
    if kind in ("standard", "rum500"):
        return ACTION_RANGES + ((_DIG_RANGE,) if kind == "rum500" else ())
    return ActionLayout.of(kind).ranges


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


def action_text(action: int, n: "int | str" = NUM_ACTIONS) -> str:
    """The text of an action id (API.md's action text) at a table of kind ``n``
    (``table_kind``, ``Table.kind``), or, for the two fixed layouts of release 0.1, its
    action count: 579 (a standard table, the default) or 631 (500 Rum, with the digs).
    A deck-variant table's ids are read by its kind: an action count does not name a
    table.

    Raises:
        ValueError: ``action`` is not an int in ``0..N-1`` (the table's action count), or
            ``n`` is an unknown kind or an int other than 579 and 631.
    """
    if isinstance(n, str):
        if n not in ("standard", "rum500"):
            lay = ActionLayout.of(n)
            return lay.texts[checked_action_id(action, n=lay.n)]
        n = num_actions(n)
    elif isinstance(n, bool) or not isinstance(n, numbers.Integral) or n not in (NUM_ACTIONS, NUM_ACTIONS_RUM500):
        raise ValueError(f"action_text reads a table's ids by its kind (one of {', '.join(TABLE_KINDS)}) or by the "
                         f"action count of a fixed layout ({NUM_ACTIONS}: standard, {NUM_ACTIONS_RUM500}: rum500); "
                         f"got {brief(n)}")
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


def meld_form_text(mid: int, jokers: int) -> str:
    """``meld`` text of catalogue meld ``mid`` with the cards of the 52-bit mask ``jokers``
    played by jokers (``JK=5H``, API.md)."""
    words = []
    for t in meld_cards_text(mid):
        c = parse_card(t)
        words.append(f"JK={t}" if jokers >> c & 1 else t)
    return "meld " + " ".join(words)


class ActionLayout:
    """The action layout of a deck-variant kind (RULES.md §10.1-10.3; module docstring).

    Attributes:
        kind: the kind; n: the ``Discrete(n)`` size; ranges: ``(name, first, count,
            meaning)`` per range; texts: the text of every id (a tuple of ``n`` str).
        meld_id: catalogue meld id -> the id of melding it (-1 when the kind has no such
            meld: a run that turns the corner without ``around``); with jokers named
            (``GameState.named``) the same id melds it with those cards played by jokers.
        meld_of: action id -> catalogue meld id, for every meld id.
        joker_discard: id of ``discard JK`` (-1 without jokers); joker_as: first id of
            ``joker as <card>`` (``+ card``), -1 without jokers.
        max_jokers: most jokers one meld may hold (2 per deck, RULES.md §10.2), 0 without.
        dig_base: at a 500 Rum kind (``"rum500+<variants>"``, RULES.md §10.4) the id of
            ``draw discard AC`` (579; ``+ card`` for the others), else -1; joker_dig: the id
            of ``draw discard JK`` (a 500 Rum kind with jokers), else -1.
    """

    def __init__(self, kind: str, _general: bool = False) -> None:
        feats = kind_features(kind)
        if not feats and not _general:  # _general: the test of the engine's two paths (engine.new_game)
            raise ValueError(f"{brief(kind)} has the fixed layout of actions.ACTION_RANGES (no deck variant)")
        self.kind = kind
        around, jokers = "around" in feats, "jokers" in feats
        self.max_jokers = (4 if "two_decks" in feats else 2) if jokers else 0
        texts = list(ACTION_TEXTS[:NUM_ACTIONS])
        ranges = list(ACTION_RANGES)
        self.dig_base = self.joker_dig = -1
        if is_rum500(kind):  # the 500 Rum digs keep their ids (579 + card), then the joker's
            self.dig_base = len(texts)
            texts += list(ACTION_TEXTS[NUM_ACTIONS:NUM_ACTIONS_RUM500])
            ranges.append(_DIG_RANGE)
            if jokers:
                self.joker_dig = len(texts)
                texts.append("draw discard JK")
                ranges.append(("joker_dig", self.joker_dig, 1, "`draw discard JK`: take the topmost joker of the "
                               "discard pile and every card above it (it must be melded or laid off this turn)"))
        self.meld_id = [MELD_BASE + m if m < NUM_MELDS else -1 for m in range(NUM_MELDS_AROUND)]
        self.meld_of: dict[int, int] = {MELD_BASE + m: m for m in range(NUM_MELDS)}
        if around:
            first = len(texts)
            for m in range(NUM_MELDS, NUM_MELDS_AROUND):
                self.meld_id[m] = len(texts)
                self.meld_of[len(texts)] = m
                texts.append("meld " + " ".join(meld_cards_text(m)))
            ranges.append(("wrap_meld", first, len(texts) - first,
                           f"`meld <cards>` of a run that turns the corner K-A-2 (RULES.md §10.1): id = {first} + "
                           f"catalogue meld id - {NUM_MELDS} (55 per suit)"))
        self.joker_discard = self.joker_as = -1
        if jokers:
            self.joker_discard = len(texts)
            texts.append("discard JK")
            ranges.append(("joker_discard", self.joker_discard, 1, "`discard JK`: discard a joker"))
            self.joker_as = len(texts)
            texts += [f"joker as {CARD_TEXT[c]}" for c in range(NUM_CARDS)]
            ranges.append(("joker_as", self.joker_as, NUM_CARDS,
                           f"`joker as <card>`: id = {self.joker_as} + card; the next joker of the meld or lay-off "
                           "being built stands for <card> (jokers named in ascending card order, then the meld or "
                           "lay-off id that holds those cards: `meld 4H JK=5H 6H` is `joker as 5H`, `meld 4H 5H 6H`; "
                           "RULES.md §10.2)"))
        self.texts: tuple[str, ...] = tuple(texts)
        self.ranges: tuple[tuple[str, int, int, str], ...] = tuple(ranges)
        self.n = len(texts)
        assert self.n == _variant_count(kind) or _general

    def joker_card(self, action: int) -> int:
        """The card of a ``joker as <card>`` id (0..51), or -1 for any other id."""
        c = action - self.joker_as
        return c if self.joker_as >= 0 and 0 <= c < NUM_CARDS else -1

    def joker_step(self, jokers: int, named: int, final: int) -> int:
        """The next decision of a move whose jokers stand for the cards of the 52-bit mask
        ``jokers`` and whose last decision is the id ``final`` (a meld, lay-off or discard
        id), when the jokers of the mask ``named`` are named already (module docstring:
        jokers named lowest card first): ``joker as <next card>``, ``final`` once every
        joker is named, or -1 when ``named`` does not start this move (a named card it has
        no joker for, a lower card of it left unnamed, or a natural move while jokers are
        named)."""
        if jokers & named != named or (jokers & ~named) & ((1 << named.bit_length()) - 1):
            return -1
        rest = jokers & ~named
        if rest:
            return self.joker_as + (rest & -rest).bit_length() - 1
        return -1 if named and not jokers else final

    @staticmethod
    @lru_cache(maxsize=None)
    def of(kind: str) -> "ActionLayout":
        """The (cached) layout of a deck-variant kind.

        Raises:
            ValueError: an unknown kind, or a kind without deck variants.
        """
        return ActionLayout(kind)


def action_forms(kind: str = "standard") -> str:
    """The action texts a ``kind`` of table takes, as the help of a refused text lists
    them (API.md's action text): ``'draw discard 7H'`` only where the pile is dug
    (``is_rum500``, RULES.md §10.4), the ``JK`` forms only with jokers (§10.2).

    Raises:
        ValueError: an unknown kind.
    """
    dig, jokers = is_rum500(kind), "jokers" in kind_features(kind)
    forms = ["'draw stock'", "'draw discard'"] + (["'draw discard 7H' (the 7H and every card above it)"] if dig
                                                  else [])
    forms += ["'meld 4H 5H 6H'"] + (["'meld 4H JK=5H 6H'"] if jokers else [])
    forms += ["'layoff JC set|low|high'", "'layoff JC'"] + (["'layoff JK=7H high'"] if jokers else [])
    forms += ["'discard KS'"] + (["'discard JK'", "'joker as 5H'"] if jokers else [])
    return "forms: " + ", ".join(forms)


def parse_action(text: str, kind: str = "standard"):
    """Parse action text into an id of a ``kind`` of table (API.md's forms, cards in any
    order, case-insensitive; jokers as ``JK`` and ``JK=5H`` at a jokers table).

    Returns the action id; or a list of ids for a move with jokers, which is played as a
    sequence of decisions (``joker as <card>`` per joker in ascending card order, then
    the meld or lay-off id: module docstring); or ``("layoff", card)`` for ``layoff
    <card>`` without an end (``("layoff", card, True)`` for ``layoff JK=<card>``), which
    only a position can resolve (see ``engine.action_ids``).
    ``draw discard <card>`` gives the dig id ``579 + card`` (RULES.md §10.4), which
    only a dig table has; ``engine.action_id`` turns the top card's into ``draw discard``.

    Raises:
        ValueError: the text names no action of this kind; the message lists the forms.
    """
    forms = action_forms(kind) if kind in TABLE_KINDS else action_forms("standard")
    lay = None if kind in ("standard", "rum500") else ActionLayout.of(kind)
    jokers = lay is not None and lay.max_jokers > 0
    if not isinstance(text, str):
        raise ValueError(f"action text must be a string, got {type(text).__name__}; {forms}")
    words = text.strip().split()
    if not words:
        raise ValueError(f"empty action text; {forms}")
    verb = words[0].lower()

    def joker_of(w: str) -> int:
        """The card a ``JK=<card>`` word stands for, or -1 for a plain card word."""
        if w[:3].upper() != "JK=":
            return -1
        if not jokers:
            raise ValueError(f"{brief(text)}: this table has no jokers (RULES.md §10.2)")
        if w[3:].upper() == "JK":
            raise ValueError(f"{brief(text)}: a joker stands for a card (a rank and a suit, e.g. 'JK=5H'), not for a joker "
                             "(RULES.md §10.2)")
        return parse_card(w[3:])

    try:
        if verb == "draw" and len(words) == 2 and words[1].lower() in ("stock", "discard"):
            return DRAW_STOCK if words[1].lower() == "stock" else DRAW_DISCARD
        if verb == "draw" and len(words) == 3 and words[1].lower() == "discard":
            if lay is not None and lay.dig_base >= 0:
                c = parse_card(words[2], joker=jokers)
                return lay.joker_dig if c == JOKER else lay.dig_base + c
            if lay is not None:
                parse_card(words[2], joker=jokers)  # a card that names nothing says so first
                raise ValueError(f"{brief(text)}: this table draws only the top discard ('draw discard'); digging the "
                                 "pile needs draw='dig' (RULES.md §10.4), which this release plays without the "
                                 "deck variants")
            return DIG_BASE + parse_card(words[2])
        if verb == "joker" and len(words) == 3 and words[1].lower() == "as":
            if not jokers:
                raise ValueError(f"{brief(text)}: this table has no jokers (RULES.md §10.2)")
            if words[2].upper() == "JK":
                raise ValueError(f"{brief(text)}: a joker stands for a card (a rank and a suit, e.g. 'joker as 5H'), "
                                 "not for a joker (RULES.md §10.2)")
            c = parse_card(words[2])
            return lay.joker_as + c
        if verb == "discard" and len(words) == 2:
            c = parse_card(words[1], joker=jokers)
            return lay.joker_discard if c == JOKER else DISCARD_BASE + c
        if verb == "meld" and len(words) >= 2:
            cards, jm = [], 0
            for w in words[1:]:
                j = joker_of(w)
                if j >= 0:
                    jm |= 1 << j
                    cards.append(j)
                else:
                    cards.append(parse_card(w, joker=jokers))
                    if cards[-1] == JOKER:
                        raise ValueError(f"{brief(text)}: a joker in a meld says which card it stands for, e.g. 'JK=5H'")
            mask = mask_of(cards)
            if len(set(cards)) != len(cards):
                raise ValueError(f"{brief(text)} names a card twice (a meld never holds a card twice, RULES.md §10.3)")
            mid = MELD_ID_BY_MASK.get(mask)
            if mid is None:
                raise ValueError(
                    f"{brief(text)}: {' '.join(words[1:])} is not a set (3-4 cards of one rank) "
                    "or a run (3+ consecutive cards of one suit)"
                )
            if mid >= NUM_MELDS and (lay is None or lay.meld_id[mid] < 0):
                raise ValueError(f"{brief(text)}: the run turns the corner K-A-2, which only aces='around' allows "
                                 "(RULES.md §10.1)")
            if not jm:
                return MELD_BASE + mid if lay is None else lay.meld_id[mid]
            if jm.bit_count() > min(lay.max_jokers, len(cards) // 2):
                raise ValueError(f"{brief(text)}: a meld holds at most as many jokers as natural cards, and at most "
                                 f"{lay.max_jokers} (RULES.md §10.2)")
            return [lay.joker_as + c for c in sorted(j for j in cards if jm >> j & 1)] + [lay.meld_id[mid]]
        if verb == "layoff" and len(words) in (2, 3):
            j = joker_of(words[1])
            card = j if j >= 0 else parse_card(words[1], joker=jokers)
            if card == JOKER:
                raise ValueError(f"{brief(text)}: a joker laid off says which card it stands for, e.g. 'layoff JK=7H high'")
            if len(words) == 2:
                return ("layoff", card, True) if j >= 0 else ("layoff", card)
            end = words[2].lower()
            if end not in LAYOFF_ENDS:
                raise ValueError(f"{brief(text)}: the end of a lay-off is one of set, low, high")
            if j >= 0:
                return [lay.joker_as + card, layoff_id(card, LAYOFF_ENDS.index(end))]
            return layoff_id(card, LAYOFF_ENDS.index(end))
    except CardError as e:
        raise ValueError(f"{brief(text)}: {e}") from None
    raise ValueError(f"{brief(text)} names no action; {forms}")
