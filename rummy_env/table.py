"""One description of a kind of table (issue 24): the ``Table``, and the observation layout.

A ``Table`` is a frozen description of the table some ``Rules`` make: its kind (the
name exported specs, STATE JSON and shipped policies carry: ``actions.table_kind``),
its features (the aces, the jokers, the decks, the dig, meld scoring, lay-offs:
RULES.md §4, §10.1-10.4), its number of players, its action layout (the count, the
ranges, the ``actions.ActionLayout`` of a deck-variant kind) and its observation
layout (the pieces, their offsets, the size, the Box's low bound). The standard
table is one kind among the others; code that needs to know what a table does asks
its ``Table`` (``Table.of(rules)``, ``GameState.table``) rather than testing kind
names or the length of an array.

The names of the kinds and their action-id layouts are declared in ``actions.py``
(``VARIANT_FEATURES``, ``TABLE_KINDS``, ``ActionLayout``): the ids must not change, as
exported policies name them. The observation layout of every kind is declared here
(``layout(n, kind)``; ``observation.py`` re-exports these names and writes the
layout). Only a file that gives nothing else (an old exported policy, an observation
handed to an agent) is read back to a table by its shapes, through ``table_for``; a
policy file carries its table, except those of release 0.1 (``legacy_table``).

Adding a kind of table: its feature to ``actions.VARIANT_FEATURES`` (the kind name),
its ids to ``actions.ActionLayout``, its observation pieces to ``_VARIANT_PIECES``
below, and its question to ``Table``.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from .actions import (DIG_BASE, TABLE_KINDS, VARIANT_FEATURES, ActionLayout, action_ranges, is_rum500, kind_features, kind_name,
                      num_actions)
from .brief import brief
from .cards import JOKER, NUM_CARDS
from .rules import Rules

# the scales the observation's scalars are divided by (the encoder and PlayerView share them)
STOCK_SCALE = 52          # stock_size: cards in the stock / 52
RECYCLE_SCALE = 4         # recycles, rule_max_recycles: / 4
SCORE_SCALE = 100         # score, target, oppK_score: points / 100
HAND_SCALE = 10           # oppK_hand_size, rule_cards_dealt: cards / 10
MULTIPLIER_SCALE = 4      # rule_rummy_multiplier: / 4
ACES_ORDER = ("low", "high", "either")  # the rule_aces one-hot order
JOKER_SCALE = 2           # joker counts: / 2 (2 jokers per deck)
MIN_PLAYERS, MAX_PLAYERS = 2, 7  # player counts an observation can be for (Rules.num_players; 7 with two decks)


def kind_players(kind: str) -> range:
    """The player counts a kind of table allows: 2-7 with two decks (RULES.md §10.3), else 2-6."""
    return range(MIN_PLAYERS, (7 if "two_decks" in kind_features(kind) else 6) + 1)

# (name, size, meaning) for the seat's own and the public card planes
_CARD_PLANES = (
    ("hand", "own hand"),
    ("upcard", "the top card of the discard pile (zeros when the pile is empty)"),
    ("discard_below", "the cards under the upcard in the discard pile"),
    ("drawn_from_discard", "the card the mover took from the discard pile this turn (it may not be discarded)"),
    ("table", "every card in a meld on the table"),
    ("layoff_set", "cards a set on the table would take (its missing 4th card)"),
    ("layoff_low", "cards the low end of a run on the table would take"),
    ("layoff_high", "cards the high end of a run on the table would take"),
)
_OPP_PLANES = (
    ("known", "cards this seat took from the discard pile and still holds"),
    ("discards", "cards this seat discarded this hand"),
)
_SCALARS = (
    ("is_mover", 1, "1 when this seat is to move"),
    ("phase", 2, "one-hot: draw, play"),
    ("stock_size", 1, f"cards in the stock / {STOCK_SCALE}"),
    ("recycles", 1, f"recycles made this hand / {RECYCLE_SCALE}"),
    ("recycle_left", 1, "1 when another recycle is allowed (max_recycles)"),
    ("turn", 1, "turns completed this hand / max_turns"),
    ("has_melded", 1, "1 when this seat melded or laid off in an earlier turn (no going rummy)"),
    ("score", 1, f"own match total / {SCORE_SCALE}"),
    ("target", 1, f"match target / {SCORE_SCALE} (0 for a single hand)"),
)
_OPP_SCALARS = (
    ("hand_size", 1, f"cards in this seat's hand / {HAND_SCALE}"),
    ("has_melded", 1, "1 when this seat melded or laid off in an earlier turn"),
    ("score", 1, f"this seat's match total / {SCORE_SCALE}"),
)
_RULE_SCALARS = (
    ("rule_aces", 3, "one-hot aces option: low, high, either"),
    ("rule_ace_points_11", 1, "1 when an ace left in hand counts 11"),
    ("rule_layoffs", 1, "1 when lay-offs are allowed"),
    ("rule_must_discard", 1, "1 when the last card must be a discard"),
    ("rule_rummy_multiplier", 1, f"rummy_multiplier / {MULTIPLIER_SCALE}"),
    ("rule_rummy_needs_no_discard", 1, "1 when going rummy needs no final discard"),
    ("rule_penalty", 1, "1 under penalty scoring"),
    ("rule_turn_over", 1, "1 when the recycle turns the pile over unshuffled"),
    ("rule_max_recycles", 2, f"1 when recycles are unlimited; max_recycles / {RECYCLE_SCALE} otherwise"),
    ("rule_on_request", 1, "1 when an empty stock is recycled or ends the hand only on request"),
    ("rule_lowest_deadwood", 1, "1 when a dry or stalled hand pays the lowest deadwood"),
    ("rule_cards_dealt", 1, f"cards dealt / {HAND_SCALE}"),
)
# appended after the standard layout at a 500 Rum table (RULES.md §10.4)
_RUM500_PIECES = (
    ("discard_depth", 52, f"for each card in the discard pile, (cards above it + 1) / {STOCK_SCALE}: the upcard "
                          f"1/{STOCK_SCALE}, the bottom card len(pile)/{STOCK_SCALE}; 0 for cards not in the pile"),
    ("bound", 52, "the card the mover dug from the discard pile this turn and must still meld or lay off"),
    ("meld_points", 1, f"points the observer melded and laid off this hand / {SCORE_SCALE}"),
)
_RUM500_OPP = (("meld_points", 1, f"points this seat (K places after the observer) melded and laid off this hand "
                                  f"/ {SCORE_SCALE}"),)
_RUM500_RULES = (
    ("rule_melds", 1, "1 under scoring='melds' (every seat scores its melds minus its hand)"),
    ("rule_dig", 1, "1 when the draw may dig the discard pile (draw='dig')"),
)
# at a 500 Rum table with deck variants (RULES.md §10.3-10.4): where the copies and the jokers
# lie in the pile and a dug joker (``discard_depth`` and ``bound`` hold the natural cards,
# ``discard_depth`` the topmost copy)
_RUM500_VARIANT_PIECES = {
    "jokers": (
        ("joker_depths", 4, f"for each joker in the discard pile, topmost first, (cards above it + 1) / {STOCK_SCALE}; "
                            "0 for fewer jokers"),
        ("bound_joker", 1, "1 when the card the mover dug this turn and must still meld or lay off is a joker"),
    ),
    "two_decks": (
        ("discard_depth_second", 52, f"for each card twice in the discard pile, (cards above its deeper copy + 1) / "
                                     f"{STOCK_SCALE}"),
    ),
}
# appended after the standard layout at a deck-variant table, per variant (RULES.md §10.1-10.3):
# (own pieces, per-opponent pieces)
_VARIANT_PIECES = {
    "around": ((("rule_around", 1, "1: runs turn the corner K-A-2 (aces='around'; rule_aces is then all 0)"),), ()),
    "jokers": ((
        ("hand_jokers", 1, f"jokers in own hand / {JOKER_SCALE}"),
        ("upcard_joker", 1, "1 when the upcard is a joker (the upcard plane is then empty)"),
        ("drawn_joker", 1, "1 when the card taken from the discard pile this turn is a joker"),
        ("discard_jokers", 1, f"jokers under the upcard in the discard pile / {JOKER_SCALE}"),
        ("table_jokers", 52, "the cards jokers on the table stand for (copies: 1 or 2)"),
        ("joker_layoff_set", 52, "cards a joker may be laid off as on a set (a meld with room for a joker)"),
        ("joker_layoff_low", 52, "cards a joker may be laid off as at the low end of a run"),
        ("joker_layoff_high", 52, "cards a joker may be laid off as at the high end of a run"),
        ("jokers_named", 52, "the cards the mover has named jokers for (`joker as <card>`) in the meld or lay-off "
                             "it is building"),
    ), (
        ("known_jokers", 1, f"jokers this seat took from the discard pile and still holds / {JOKER_SCALE}"),
        ("discarded_joker", 1, "1 when this seat discarded a joker this hand"),
    )),
    "two_decks": ((
        ("rule_two_decks", 1, "1: two decks, every card twice (the card planes say 'at least one copy')"),
        ("hand_twice", 52, "cards held twice"),
        ("discard_below_twice", 52, "cards under the upcard twice"),
        ("table_twice", 52, "cards twice on the table (natural cards)"),
    ), (
        ("known_twice", 52, "cards this seat took from the discard pile twice and still holds twice"),
    )),
}


@lru_cache(maxsize=None)
def layout(num_players: int, kind: str = "standard") -> tuple[tuple[str, int, int, str], ...]:
    """The observation layout for ``num_players`` at a table of ``kind`` (``"standard"``
    or ``"rum500"``, ``actions.table_kind``): ``(name, offset, size, meaning)`` per piece.

    Card planes are 52 wide, indexed by card number. ``oppK_*`` describe the seat
    ``K`` places after the observer in turn order. The ``"rum500"`` layout is the
    standard one followed by its own pieces.

    Raises:
        ValueError: an unknown kind.
    """
    pieces: list[tuple[str, int, str]] = [(n, 52, m) for n, m in _CARD_PLANES]
    for k in range(1, num_players):
        pieces += [(f"opp{k}_{n}", 52, m) for n, m in _OPP_PLANES]
    pieces += list(_SCALARS)
    for k in range(1, num_players):
        pieces += [(f"opp{k}_{n}", s, m) for n, s, m in _OPP_SCALARS]
    pieces += list(_RULE_SCALARS)
    if kind not in TABLE_KINDS:
        raise ValueError(f"unknown table kind {kind!r}; kinds: {', '.join(TABLE_KINDS)}")
    feats = kind_features(kind)
    if is_rum500(kind):
        pieces += list(_RUM500_PIECES)
        for k in range(1, num_players):
            pieces += [(f"opp{k}_{n}", s, m) for n, s, m in _RUM500_OPP]
        pieces += list(_RUM500_RULES)
    for f in ("around", "jokers", "two_decks"):
        if f in feats:
            own, opp = _VARIANT_PIECES[f]
            pieces += list(own)
            for k in range(1, num_players):
                pieces += [(f"opp{k}_{n}", s, m) for n, s, m in opp]
            if is_rum500(kind):
                pieces += list(_RUM500_VARIANT_PIECES.get(f, ()))
    out, off = [], 0
    for name, size, meaning in pieces:
        out.append((name, off, size, meaning))
        off += size
    return tuple(out)


def obs_low(kind: str = "standard") -> float:
    """The low bound of the observation ``Box`` of a table kind: 0 at a standard table,
    ``-inf`` at a 500 Rum table, whose match totals may be negative (RULES.md §10.4).
    The env and the training envs declare the same Box."""
    return -float("inf") if is_rum500(kind) else 0.0


def obs_size(num_players: int, kind: str = "standard") -> int:
    """Length of the observation vector for ``num_players`` at a table of ``kind``
    (548 for 2 players at a standard table, 656 at a 500 Rum table)."""
    name, off, size, _ = layout(num_players, kind)[-1]
    return off + size


def offsets(num_players: int, kind: str = "standard") -> dict[str, slice]:
    """Piece name -> slice of the observation vector of ``num_players`` at a table of
    ``kind`` (``layout``).

    Raises:
        ValueError: an unknown kind.
    """
    return {name: slice(off, off + size) for name, off, size, _ in layout(num_players, kind)}


@lru_cache(maxsize=None)
def _table_by_size() -> dict[int, tuple[int, str]]:
    """Observation size -> table, for the standard and 500 Rum tables (each size tells its table)."""
    out = {obs_size(n, k): (n, k) for k in ("standard", "rum500") for n in kind_players(k)}
    assert len(out) == 10
    return out


@lru_cache(maxsize=None)
def _table_by_shape() -> dict[tuple[int, int], tuple[int, str]]:
    """(observation size, action count) -> table, for every kind (each pair tells its table)."""
    out = {(obs_size(n, k), num_actions(k)): (n, k) for k in TABLE_KINDS for n in kind_players(k)}
    assert len(out) == sum(len(kind_players(k)) for k in TABLE_KINDS)
    return out


def legacy_table(obs_dim: int) -> tuple[int, str]:
    """``(num_players, kind)`` of the release-0.1 table whose observation has ``obs_dim``
    entries: that release had only the standard and 500 Rum tables, whose sizes differ for
    every player count 2..6 and kind, and its policy files did not save their table. The
    reading of such a file (``CardFeatures`` / ``ActorNet`` without a table); everything
    trained since saves ``num_players`` and ``kind``.

    Raises:
        ValueError: no standard or 500 Rum table has that size (the message lists them).
    """
    t = _table_by_size().get(obs_dim)
    if t is None:
        raise ValueError(f"observation size {obs_dim} is not that of a standard or 500 Rum table "
                         f"({', '.join(f'{size} for {n} players at a {k} table' for size, (n, k) in _table_by_size().items())}); "
                         "a deck-variant table is told by its size and its action count")
    return t


def table_for(obs_dim: int, num_actions: int | None = None) -> tuple[int, str]:
    """``(num_players, kind)`` of the table whose observation has ``obs_dim`` entries and
    whose action space has ``num_actions`` actions, for an agent, which is handed nothing
    but an observation and a mask (``PlayerView``, ``describe_table`` in its errors): the
    two lengths are its table's spaces, and each pair belongs to one table (asserted when
    the lookup is built). Code that has the rules asks ``Table.of(rules)``; policy
    files carry their table (``CardFeatures``' ``num_players`` / ``kind``).

    Without ``num_actions``: ``legacy_table`` (release 0.1's tables).

    Raises:
        ValueError: no table has that size (and action count); the message lists them.
    """
    if num_actions is None:
        return legacy_table(obs_dim)
    t = _table_by_shape().get((obs_dim, num_actions))
    if t is None:
        raise ValueError(f"no table has observations of {obs_dim} entries and {num_actions} actions ("
                         + ", ".join(f"{sz}/{na} for {n} players at a {k} table"
                                     for (sz, na), (n, k) in _table_by_shape().items()) + ")")
    return t


def describe_table(obs_dim: int, num_actions: int | None = None) -> str:
    """Words for the table an observation length (and action count) belongs to: ``"a
    2-player jokers table"``, or ``"observations of D entries"`` when no table has them
    (``table_for``). The one wording the policy loaders' error messages use."""
    try:
        n, kind = table_for(obs_dim, num_actions)
    except ValueError:
        if num_actions is not None:
            return describe_table(obs_dim)
        return f"observations of {obs_dim} entries"
    return f"a {n}-player {kind} table"


def players_for(obs_dim: int) -> int:
    """The player count whose observation has ``obs_dim`` entries (``table_for``).

    Raises:
        ValueError: no table has that size (the message lists the sizes).
    """
    return table_for(obs_dim)[0]


def num_card_planes(num_players: int) -> int:
    """Number of 52-wide card planes at the start of the observation: 8 + 2 per other seat."""
    return len(_CARD_PLANES) + len(_OPP_PLANES) * (num_players - 1)



@lru_cache(maxsize=None)
def kind_layout(kind: str) -> "ActionLayout | None":
    """The ``actions.ActionLayout`` of a kind with deck variants (RULES.md §10.1-10.3), or
    ``None`` for a kind with the fixed layout (``"standard"``, ``"rum500"``: the ranges of
    ``actions.action_ranges``). The one place that tells the two apart
    (``Table.action_layout``, the decoder of observations).

    Raises:
        ValueError: an unknown kind (the message lists the kinds).
    """
    return ActionLayout.of(kind) if kind_features(kind) else None


# ---------------------------------------------------------------- the Table

_ACES = ("low", "high", "either", "around")


@dataclass(frozen=True)
class Table:
    """A kind of table with its player count: everything the engine, the encoder, STATE
    JSON, the agents and the frontends ask about a table (module docstring). Frozen and
    hashable; ``Table.of(rules)`` gives one object per distinct table.

    Fields (what the rules say; ``Table.of`` reads them from a ``Rules``):
        num_players: 2-6, or 2-7 with two decks (RULES.md §8, §10.3).
        aces: ``"low"``, ``"high"``, ``"either"`` (RULES.md §4) or ``"around"`` (§10.1).
        jokers: jokers per deck, 0 or 2 (§10.2). decks: 1 or 2 (§10.3).
        digs: the draw may dig the discard pile (``draw="dig"``, §10.4).
        melds_scoring: every seat scores its melds minus its hand (``scoring="melds"``, §10.4).
        layoffs: lay-offs are allowed (§3).

    Derived attributes (set once, when the table is made):
        kind: the kind's name, ``actions.table_kind`` (``"standard"``, ``"rum500"``,
            ``"jokers"``, ``"rum500+around+two_decks"``, ...); it names the layouts.
        features: the deck variants of the kind (a frozenset of ``"around"``,
            ``"jokers"``, ``"two_decks"``; empty at the standard and 500 Rum tables).
        around, two_decks: bools of those features.
        rum500: a 500 Rum table (it digs or scores melds, §10.4): it keeps each seat's
            meld points, has the STATE fields ``meld_points`` (and ``bound`` where it
            digs), the observation's 500 Rum pieces and the dig ids.
        fixed_layout: the kind has no deck variant, so its ids are the fixed 579 (631 at
            a 500 Rum table) of ``actions.ACTION_RANGES`` and its hands plain 52-bit
            masks; a deck-variant table has an ``ActionLayout`` and count masks.
        max_jokers: most jokers one meld may hold (2 per deck; 0 without jokers, §10.2).
        copies: copies of each natural card in the deck (= ``decks``).
        num_cards: cards in the deck, jokers included (52, 54, 104 or 108).
        num_actions: ``N`` of the table's ``Discrete(N)`` (``actions.num_actions``).
        obs_size: length of the observation vector (``layout``); obs_low: the
            observation Box's low bound (``-inf`` at a 500 Rum table, else 0).

    Raises (on construction):
        ValueError: a field outside the values above (the message names it).
    """

    num_players: int
    aces: str = "low"
    jokers: int = 0
    decks: int = 1
    digs: bool = False
    melds_scoring: bool = False
    layoffs: bool = True

    def __post_init__(self) -> None:
        if self.aces not in _ACES:
            raise ValueError(f"aces must be one of {', '.join(_ACES)}, got {brief(self.aces)} (RULES.md §4, §10.1)")
        if self.jokers not in (0, 2):
            raise ValueError(f"jokers must be 0 or 2, got {brief(self.jokers)} (RULES.md §10.2)")
        if self.decks not in (1, 2):
            raise ValueError(f"decks must be 1 or 2, got {brief(self.decks)} (RULES.md §10.3)")
        feats = frozenset(f for f, on in zip(VARIANT_FEATURES, (self.aces == "around", self.jokers > 0,
                                                                 self.decks == 2)) if on)
        rum = bool(self.digs or self.melds_scoring)
        kind = kind_name(rum, feats)
        if type(self.num_players) is not int or self.num_players not in kind_players(kind):
            r = kind_players(kind)
            raise ValueError(f"num_players must be an int in {r.start}..{r.stop - 1} at a {kind} table, got "
                             f"{brief(self.num_players)} (RULES.md §8, §10.3)")
        put = object.__setattr__  # a frozen dataclass: the derived attributes are set once, here
        put(self, "kind", kind)
        put(self, "features", feats)
        put(self, "around", "around" in feats)
        put(self, "two_decks", "two_decks" in feats)
        put(self, "rum500", rum)
        put(self, "fixed_layout", not feats)
        put(self, "max_jokers", self.jokers * self.decks if self.jokers else 0)
        put(self, "copies", self.decks)
        put(self, "num_cards", (NUM_CARDS + self.jokers) * self.decks)
        put(self, "num_actions", num_actions(kind))
        put(self, "obs_size", obs_size(self.num_players, kind))
        put(self, "obs_low", obs_low(kind))

    @staticmethod
    @lru_cache(maxsize=256)
    def of(rules: Any) -> "Table":
        """The table ``rules`` (a ``rules.Rules``) make; one object per distinct table.

        Raises:
            TypeError: ``rules`` is not a ``Rules``.
        """
        if not isinstance(rules, Rules):
            raise TypeError(f"Table.of takes a Rules, got {type(rules).__name__}")
        return _interned(rules.num_players, rules.aces, rules.jokers, rules.decks, rules.draw == "dig",
                         rules.scoring == "melds", rules.layoffs)

    @cached_property
    def action_layout(self) -> "ActionLayout | None":
        """The ``actions.ActionLayout`` of a deck-variant table (its ids, texts, the joker
        forms), built on first use; ``None`` at a table with the fixed layout
        (``fixed_layout``: the ranges of ``actions.ACTION_RANGES``, and the digs at a 500
        Rum table)."""
        return kind_layout(self.kind)

    @cached_property
    def action_ranges(self) -> tuple[tuple[str, int, int, str], ...]:
        """``(name, first id, count, meaning)`` per range of the action ids (``actions.action_ranges``)."""
        return action_ranges(self.kind)

    @cached_property
    def obs_layout(self) -> tuple[tuple[str, int, int, str], ...]:
        """``(name, offset, size, meaning)`` per piece of the observation (``layout``)."""
        return layout(self.num_players, self.kind)

    @cached_property
    def obs_offsets(self) -> dict[str, slice]:
        """Piece name -> slice of the observation vector (``offsets``)."""
        return offsets(self.num_players, self.kind)

    def deck(self) -> list[int]:
        """A fresh unshuffled deck of this table: card numbers 0..51, ``copies`` times each,
        then the jokers (``cards.JOKER``, 52), ``jokers * decks`` of them (RULES.md §1,
        §10.2-10.3). A list of ``num_cards`` ints."""
        return list(range(NUM_CARDS)) * self.decks + [JOKER] * (self.jokers * self.decks)

    def dig_card(self, action: int) -> "int | None":
        """The card a dig id takes from the discard pile (with every card above it, RULES.md
        §10.4): a card number 0..51, ``cards.JOKER`` (52) for ``draw discard JK``, or
        ``None`` when ``action`` is not a dig of this table (every id at a table that
        does not dig; ``draw discard``, id 1, takes the top card and is not a dig)."""
        if not self.digs:
            return None
        lay = self.action_layout
        base = DIG_BASE if lay is None else lay.dig_base
        if base <= action < base + NUM_CARDS:
            return action - base
        if lay is not None and action == lay.joker_dig >= 0:
            return JOKER
        return None

    def describe(self) -> str:
        """Words for this table: ``"a 2-player standard table"``, ``"a 5-player two_decks table"``."""
        return f"a {self.num_players}-player {self.kind} table"

    def misfit(self, obs_dim: Any = None, num_actions: Any = None, subject: str = "it") -> "str | None":
        """Why a policy with observations of ``obs_dim`` entries and ``num_actions`` action
        ids cannot play this table, or ``None`` when it can (or when neither is an int:
        a policy that does not say, e.g. a scripted agent; numpy integers count as ints). The one answer to "does this
        agent fit this table" (``rummy_env.agents.table_misfit``, export, checkpoints,
        the web table, the benchmark); the words name both tables (``describe_table``) and
        start with ``subject``, who was trained (``"it"``; a guided search: ``"its guide 'NAME'"``).
        """
        dim, acts = _size(obs_dim), _size(num_actions)
        here = self.describe()
        if dim is not None and dim != self.obs_size:
            return (f"{subject} was trained for {describe_table(dim, acts)}, this is {here} "
                    f"(observations of {self.obs_size} entries)")
        if acts is not None and acts != self.num_actions:
            theirs = describe_table(dim, acts) if dim is not None else "another table"
            return f"{subject} chooses among {acts} actions ({theirs}), {here} has {self.num_actions}"
        return None


def _size(v: Any) -> "int | None":
    """``v`` as a plain int when it is an integer (an ``int`` or a numpy integer, not a bool), else ``None``."""
    return int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else None


@lru_cache(maxsize=None)
def _interned(num_players: int, aces: str, jokers: int, decks: int, digs: bool, melds_scoring: bool,
              layoffs: bool) -> Table:
    """The one ``Table`` of these fields (``Table.of``)."""
    return Table(num_players, aces, jokers, decks, digs, melds_scoring, layoffs)


__all__ = ["Table", "kind_layout", "layout", "obs_low", "obs_size", "offsets", "table_for", "legacy_table", "describe_table", "players_for",
           "kind_players", "num_card_planes", "STOCK_SCALE", "RECYCLE_SCALE", "SCORE_SCALE", "HAND_SCALE",
           "MULTIPLIER_SCALE", "ACES_ORDER", "JOKER_SCALE", "MIN_PLAYERS", "MAX_PLAYERS"]
