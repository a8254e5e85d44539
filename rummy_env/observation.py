"""What one seat sees: the observation layout, its encoder, the action mask and
the decoding of both into named pieces.

The observation layout is declared once as named pieces (``layout(n, kind)``, in
``table.py`` beside the ``Table`` that names it: ``Table.obs_layout``; re-exported here
with its scales); ``Encoder.encode(state, seat)`` writes it,
``PlayerView(observation, action_mask)`` reads it back (for scripted agents, which
get only the arrays: their lengths tell the table, ``table_for``), and
``action_mask(legal)`` turns the engine's legal list into the int8 mask every caller
hands an agent; ``RandomAgent`` plays a uniformly random action of that mask.

An observation is a float32 vector seen from one seat; the other seats follow in
turn order after it (``opp1`` is the next seat to play). All 52-card planes come
first (card number ``13*suit + rank``, suits C D H S, ranks A..K), then scalars.
Only what the seat may see is encoded: its own hand, the public table, the public
discard history, and what each other seat is known to hold (cards it took from the
discard pile and still holds). The stock order and the other hands never enter.

Each kind of table (``Table.kind``) has its layout: a 500 Rum table
(``"rum500"``, RULES.md §10.4) sees the standard layout followed by the whole discard
pile in order (``discard_depth``), the card a dig binds, the points each seat melded
this hand and two rule flags, so a standard-table policy's inputs keep their places.

A deck-variant table (RULES.md §10.1-10.3: kinds ``"around"``, ``"jokers"``,
``"two_decks"`` and their combinations) sees the standard layout, whose card planes
then say "at least one copy" and hold natural cards only (a melded joker's card is in
``table_jokers``, not in ``table``), followed by the pieces of each of its variants in
the order around, jokers, two decks (``table._VARIANT_PIECES``): the aces flag, the jokers
(in hand, the upcard, the pile, on the table with the cards they stand for, what a
joker may be laid off as, what each seat is known to hold), and the second copies
(``hand_twice``, ...).

The observation tables of docs/env.md are generated from ``layout(n, kind)`` (``python -m rummy_env.docs``).
"""
from __future__ import annotations

import copy
import random
from bisect import bisect_left
from functools import lru_cache

import numpy as np

from .actions import (DIG_BASE, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, LAYOFF_BASE, MELD_BASE, NUM_ACTIONS,
                      ActionLayout, num_actions)
from .cards import CARD_TEXT, FULL_DECK, JOKER, LAYER, TEXT_OF, cards_of, count_of
from .engine import PLAY, GameState
from .rules import Rules
from .table import (ACES_ORDER, HAND_SCALE, JOKER_SCALE, MAX_PLAYERS, MIN_PLAYERS, MULTIPLIER_SCALE,  # noqa: F401
                    RECYCLE_SCALE, SCORE_SCALE, STOCK_SCALE, Table, _table_by_shape, describe_table, kind_layout,
                    kind_players, layout, num_card_planes, obs_low, obs_size, offsets, players_for, table_for)

@lru_cache(maxsize=64)
def rule_features(rules: Rules) -> np.ndarray:
    """The ``rule_*`` scalars of the observation for ``rules`` (float32, length 15)."""
    mr = rules.max_recycles
    v = [
        *(rules.aces == a for a in ACES_ORDER),
        rules.ace_points == 11, rules.layoffs, rules.must_discard_to_go_out,
        rules.rummy_multiplier / MULTIPLIER_SCALE, rules.rummy_needs_no_discard, rules.scoring == "penalty",
        rules.recycle == "turn_over", mr is None, 0.0 if mr is None else mr / RECYCLE_SCALE,
        rules.dry_trigger == "on_request", rules.dry_hand == "lowest_deadwood", rules.cards_dealt / HAND_SCALE,
    ]
    a = np.array(v, dtype=np.float32)
    a.flags.writeable = False
    return a


_BIT: tuple[int, ...] = tuple(1 << c for c in range(52))


class Encoder:
    """Encodes positions for one player count and kind of table (``"standard"``,
    ``"rum500"`` or a deck-variant kind such as ``"jokers"``: ``Table.kind``;
    ``Encoder.of(table)`` takes both from a ``Table``, ``Encoder.for_rules(rules)`` from a
    ``Rules``) into float32 vectors.

    ``encode(state, seat)`` returns a fresh ``(obs_size(n, kind),)`` float32 array (the
    caller may keep and change it). The card planes are built as one Python int,
    plane ``i`` at bits ``52*i .. 52*i+51`` (so they lie exactly as in the vector),
    and turned into floats by a single ``np.unpackbits``; the rule scalars come
    from a per-rules template that every observation starts as a copy of. ``encode``
    raises ``ValueError`` for a position whose rules are another kind of table.
    """

    def __init__(self, num_players: int, kind: str = "standard") -> None:
        self.n = num_players
        self.kind = kind
        self.size = obs_size(num_players, kind)
        self.planes = num_card_planes(num_players)
        self.card_len = 52 * self.planes
        self.card_bytes = (self.card_len + 7) // 8
        self.rule_off = offsets(num_players)["rule_aces"].start
        self.rum_off = obs_size(num_players)  # the 500 Rum pieces start after the standard layout
        off = {name: sl.start for name, sl in offsets(num_players, kind).items()}
        self.variant = kind_layout(kind) is not None  # count masks and the deck-variant pieces
        self._off = off
        self.rum500 = "discard_depth" in off  # the layout has the 500 Rum pieces
        if self.rum500:  # where each 500 Rum piece starts, from the layout
            self._depth, self._bound, self._meld_points = off["discard_depth"], off["bound"], off["meld_points"]
            self._opp_meld_points = [off[f"opp{k}_meld_points"] for k in range(1, num_players)]
            self._rule_melds, self._rule_dig = off["rule_melds"], off["rule_dig"]
        # the other seats in turn order after each seat (opp1 first)
        self.order: tuple[tuple[int, ...], ...] = tuple(
            tuple((seat + k) % num_players for k in range(1, num_players)) for seat in range(num_players)
        )
        self._rules: Rules | None = None
        self._template = np.zeros(self.size, dtype=np.float32)

    @classmethod
    def for_rules(cls, rules: Rules) -> "Encoder":
        """The encoder of ``rules``' table (``Table.of(rules)``: its player count and kind)."""
        return cls.of(Table.of(rules))

    @classmethod
    def of(cls, table: Table) -> "Encoder":
        """The encoder of a ``table.Table`` (its player count and kind)."""
        return cls(table.num_players, table.kind)

    def _set_rules(self, rules: Rules) -> None:
        table = Table.of(rules)
        if table.kind != self.kind:
            raise ValueError(f"this encoder is for {self.kind} tables; rules {rules.to_json()!r} are a "
                             f"{table.kind} table")
        t = np.zeros(self.size, dtype=np.float32)
        t[self.rule_off:self.rum_off] = rule_features(rules)
        if self.rum500:
            t[self._rule_melds] = table.melds_scoring
            t[self._rule_dig] = table.digs
        for flag in ("rule_around", "rule_two_decks"):
            if flag in self._off:
                t[self._off[flag]] = 1.0
        self._template = t
        self._rules = rules
        self._target = (rules.target or 0) / SCORE_SCALE
        self._max_turns = rules.max_turns
        self._max_recycles = rules.max_recycles

    def _position(self, state: GameState, seat: int) -> tuple[int, list[float]]:
        """The parts of ``seat``'s observation that change with the position: the card
        planes as one int (plane ``i`` at bits ``52*i ..``) and the scalars from
        ``is_mover`` to the last ``oppK_score`` (the current rules must be set)."""
        bit = _BIT
        disc = state.discard
        order = self.order[seat]
        if self.variant:  # natural cards, at least one copy (the variant pieces say the rest)
            up = below = 0
            if disc:
                up = 0 if disc[-1] == JOKER else bit[disc[-1]]
                for c in disc[:-1]:
                    if c != JOKER:
                        below |= bit[c]
            table = 0
            for m in state.melds:
                table |= m.mask & ~m.jokers
            f = state.drawn_from_discard
            if f == JOKER:
                f = -1
            full = FULL_DECK
            hand = state.hands[seat] & full
            known = [k & full for k in state.known]
            dby = [d & full for d in state.discards_by]
        else:
            if disc:
                up = bit[disc[-1]]
                below = sum(map(bit.__getitem__, disc)) ^ up  # distinct cards: the sum is the union
            else:
                up = below = 0
            table = 0
            for m in state.melds:
                table |= m.mask
            f = state.drawn_from_discard
            hand = state.hands[seat]
            known, dby = state.known, state.discards_by
        layoff_set, layoff_low, layoff_high = state.layoff_masks
        planes = (hand | up << 52 | below << 104 | (bit[f] << 156 if f >= 0 else 0)
                  | table << 208 | layoff_set << 260 | layoff_low << 312 | layoff_high << 364)
        sh = 416
        for q in order:
            planes |= known[q] << sh | dby[q] << (sh + 52)
            sh += 104
        mr = self._max_recycles
        play = state.phase == PLAY
        hands, has_melded, scores = state.hands, state.has_melded, state.scores
        sc = [
            1.0 if (state.current == seat and not state.hand_over) else 0.0,
            0.0 if play else 1.0, 1.0 if play else 0.0,
            len(state.stock) / STOCK_SCALE, state.recycles / RECYCLE_SCALE,
            1.0 if (mr is None or state.recycles < mr) else 0.0,
            state.turn / self._max_turns,
            1.0 if has_melded[seat] else 0.0,
            scores[seat] / SCORE_SCALE,
            self._target,
        ]
        for q in order:
            sc += (hands[q].bit_count() / HAND_SCALE, 1.0 if has_melded[q] else 0.0, scores[q] / SCORE_SCALE)
        return planes, sc

    def _rum500_into(self, row: np.ndarray, state: GameState, seat: int) -> None:
        """The 500 Rum pieces (``_RUM500_PIECES``) of ``seat``'s observation written into
        ``row``, whose 500 Rum entries hold zeros and the rule flags (RULES.md §10.4)."""
        d = self._depth
        if self.variant:  # copies and jokers (RULES.md §10.3): the topmost copy, then the second, jokers apart
            off = self._off
            seen: set[int] = set()
            jd = off.get("joker_depths", -1)
            js = 0
            second = off.get("discard_depth_second", -1)
            for depth, c in enumerate(reversed(state.discard), start=1):
                if c == JOKER:
                    if jd >= 0 and js < 4:
                        row[jd + js] = depth / STOCK_SCALE
                        js += 1
                elif c in seen:
                    if second >= 0:
                        row[second + c] = depth / STOCK_SCALE
                else:
                    seen.add(c)
                    row[d + c] = depth / STOCK_SCALE
            if state.bound == JOKER:
                row[off["bound_joker"]] = 1.0
            elif state.bound >= 0:
                row[self._bound + state.bound] = 1.0
        else:
            for depth, c in enumerate(reversed(state.discard), start=1):
                row[d + c] = depth / STOCK_SCALE
            if state.bound >= 0:
                row[self._bound + state.bound] = 1.0
        mp = state.meld_points
        row[self._meld_points] = mp[seat] / SCORE_SCALE
        for i, q in zip(self._opp_meld_points, self.order[seat]):
            row[i] = mp[q] / SCORE_SCALE

    def _variant_into(self, row: np.ndarray, state: GameState, seat: int) -> None:
        """The deck-variant pieces (``_VARIANT_PIECES``) of ``seat``'s observation written
        into ``row``, whose variant entries hold zeros and the rule flags (RULES.md
        §10.2-10.3). Only what the seat may see: its own hand, the pile, the table, the
        cards each seat took from the pile."""
        off = self._off
        order = self.order[seat]

        def plane(start: int, mask: int) -> None:
            for c in cards_of(mask & FULL_DECK):
                row[start + c] = 1.0

        if "hand_jokers" in off:
            row[off["hand_jokers"]] = count_of(state.hands[seat], JOKER) / JOKER_SCALE
            disc = state.discard
            row[off["upcard_joker"]] = 1.0 if disc and disc[-1] == JOKER else 0.0
            row[off["drawn_joker"]] = 1.0 if state.drawn_from_discard == JOKER else 0.0
            row[off["discard_jokers"]] = disc[:-1].count(JOKER) / JOKER_SCALE
            tj = off["table_jokers"]
            for m in state.melds:
                for c in cards_of(m.jokers):
                    row[tj + c] += 1.0
            for name, mask in zip(("joker_layoff_set", "joker_layoff_low", "joker_layoff_high"), state.joker_masks):
                plane(off[name], mask)
            if seat == state.current:
                plane(off["jokers_named"], state.named)
            for k, q in enumerate(order, start=1):
                row[off[f"opp{k}_known_jokers"]] = count_of(state.known[q], JOKER) / JOKER_SCALE
                row[off[f"opp{k}_discarded_joker"]] = 1.0 if state.discards_by[q] >> JOKER & 1 else 0.0
        if "hand_twice" in off:
            plane(off["hand_twice"], state.hands[seat] >> LAYER)
            below = state.discard[:-1]
            seen: set[int] = set()
            for c in below:
                if c in seen and c != JOKER:
                    row[off["discard_below_twice"] + c] = 1.0
                seen.add(c)
            once = twice = 0
            for m in state.melds:
                nat = m.mask & ~m.jokers
                twice |= once & nat
                once |= nat
            plane(off["table_twice"], twice)
            for k, q in enumerate(order, start=1):
                plane(off[f"opp{k}_known_twice"], state.known[q] >> LAYER)

    def _rules_tail(self, rules: Rules) -> np.ndarray:
        """Everything after the position's scalars for ``rules``: the rule scalars (and at a
        500 Rum table zeros for its position pieces, then its rule flags)."""
        if rules is not self._rules:
            self._set_rules(rules)
        return self._template[self.rule_off:]

    def encode(self, state: GameState, seat: int) -> np.ndarray:
        """The observation of ``seat`` in ``state`` (never reads hidden cards or the stock order)."""
        rules = state.rules
        if rules is not self._rules:
            self._set_rules(rules)
        planes, sc = self._position(state, seat)
        out = self._template.copy()
        out[: self.card_len] = np.unpackbits(
            np.frombuffer(planes.to_bytes(self.card_bytes, "little"), dtype=np.uint8),
            count=self.card_len, bitorder="little",
        )
        out[self.card_len: self.rule_off] = sc
        if self.rum500:
            self._rum500_into(out, state, seat)
        if self.variant:
            self._variant_into(out, state, seat)
        return out

    def encode_into(self, state: GameState, seat: int, out: np.ndarray) -> np.ndarray:
        """``encode(state, seat)`` written into ``out`` (float32 ``(obs_size(n, kind),)``, e.g.
        one row of a preallocated batch) instead of a fresh array; every entry is
        overwritten, byte for byte what ``encode`` returns. Returns ``out``."""
        self.encode_many([state], [seat], out[None])
        return out

    def encode_many(self, states, seats, out: np.ndarray) -> np.ndarray:
        """The observations of ``seats[i]`` in ``states[i]`` written into the rows of ``out``
        (float32 C-contiguous ``[>= len(states), obs_size(n, kind)]``; row ``i`` becomes
        byte for byte ``encode(states[i], seats[i])``, rows past ``len(states)`` are left
        as they are). One ``np.unpackbits`` and one scalar assignment for the whole batch,
        so a batch of games costs a few numpy calls instead of a few per game: what the
        batched training env (``rummy_env.train.vec_env``) uses. Returns ``out``.

        Raises:
            ValueError: ``out`` has the wrong dtype, width or too few rows, or a
                position's rules are another kind of table.
        """
        k = len(states)
        if out.dtype != np.float32 or out.ndim != 2 or out.shape[1] != self.size or out.shape[0] < k:
            raise ValueError(f"out must be float32 [>= {k}, {self.size}], got {out.dtype} {out.shape}")
        if k == 0:
            return out
        cb = self.card_bytes
        raw = bytearray()
        scal = []
        rule_rows = None  # (row, rules) when the states do not all share one Rules
        first = states[0].rules
        for i, (state, seat) in enumerate(zip(states, seats)):
            rules = state.rules
            if rules is not self._rules:
                self._set_rules(rules)
            if rules is not first:
                rule_rows = rule_rows or []
                rule_rows.append((i, rules))
            planes, sc = self._position(state, seat)
            raw += planes.to_bytes(cb, "little")
            scal.append(sc)
        out[:k, : self.card_len] = np.unpackbits(
            np.frombuffer(bytes(raw), dtype=np.uint8).reshape(k, cb), axis=1, count=self.card_len, bitorder="little")
        out[:k, self.card_len: self.rule_off] = scal
        out[:k, self.rule_off:] = self._rules_tail(first)
        for i, rules in rule_rows or ():
            out[i, self.rule_off:] = self._rules_tail(rules)
        if self.rum500:
            for i in range(k):
                self._rum500_into(out[i], states[i], seats[i])
        if self.variant:
            for i in range(k):
                self._variant_into(out[i], states[i], seats[i])
        return out


def decode_cards(vec: np.ndarray) -> list[int]:
    """The card numbers set in a 52-wide plane."""
    return [int(c) for c in np.flatnonzero(vec > 0.5)]


# ---------------------------------------------------------------- the action mask

def action_mask(legal, dtype=np.int8, out: np.ndarray | None = None, size: int = NUM_ACTIONS) -> np.ndarray:
    """The action mask of a legal list: ``(size,)`` array, 1 at every id of ``legal``.

    Args:
        legal: the legal action ids (``engine.legal_actions(state)``), ints below ``size``.
        dtype: the mask's dtype when a new one is made (int8 as the env hands agents;
            bool for sb3-contrib's ``action_masks()``).
        out: a zeroed ``(size,)`` row to fill in place instead (e.g. one row of a
            batch); it is returned.
        size: the table's action count (``actions.num_actions(kind)``) when a new mask
            is made.
    """
    mask = np.zeros(size, dtype=dtype) if out is None else out
    if len(legal) < 24:  # item assignment beats fancy indexing for short lists
        for a in legal:
            mask[a] = 1
    else:
        mask[legal] = 1
    return mask


def action_mask_into(legal, out: np.ndarray) -> np.ndarray:
    """``action_mask(legal)`` written into ``out`` (a ``(num_actions,)`` row of any
    dtype, e.g. one row of a preallocated int8 batch): zeroed, then 1 at every id of
    ``legal``. Returns ``out``."""
    out[:] = 0
    return action_mask(legal, out=out)


def action_masks_into(legals, out: np.ndarray) -> np.ndarray:
    """The masks of many legal lists written into the rows of ``out`` (``[>= len(legals),
    num_actions]``, any dtype; row ``i`` becomes ``action_mask(legals[i])``, rows past
    ``len(legals)`` are left as they are) with one zeroing and one scatter for the
    batch. Returns ``out``."""
    k = len(legals)
    out[:k] = 0
    lens = [len(x) for x in legals]
    if sum(lens):
        rows = np.repeat(np.arange(k), lens)
        cols = np.fromiter((a for x in legals for a in x), dtype=np.intp, count=sum(lens))
        out[rows, cols] = 1
    return out


# ---------------------------------------------------------------- decoding (what agents read)


class _Index:
    """Where ``PlayerView`` reads each scalar for one player count and table kind:
    positions relative to the first scalar (``is_mover``), from the layout."""

    def __init__(self, n: int, kind: str) -> None:
        start = {name: sl.start for name, sl in offsets(n, kind).items()}
        self.planes = num_card_planes(n)
        self.plane = {name: i // 52 for name, i in start.items() if i < 52 * self.planes}
        self.first = b = start["is_mover"]
        self.opp_known = [start[f"opp{k}_known"] // 52 for k in range(1, n)]
        self.opp_discards = [start[f"opp{k}_discards"] // 52 for k in range(1, n)]
        self.rel = {name: i - b for name, i in start.items() if i >= b}
        self.opp_hand_size = [self.rel[f"opp{k}_hand_size"] for k in range(1, n)]
        self.opp_has_melded = [self.rel[f"opp{k}_has_melded"] for k in range(1, n)]
        self.opp_score = [self.rel[f"opp{k}_score"] for k in range(1, n)]
        self.kind = kind
        self.n = n
        self.num_actions = num_actions(kind)
        self.rum500 = "discard_depth" in start  # the layout has the 500 Rum pieces
        if self.rum500:
            self.depth = start["discard_depth"]
            self.bound = start["bound"]
            self.opp_meld_points = [self.rel[f"opp{k}_meld_points"] for k in range(1, n)]
        self.variant = kind_layout(kind)
        self.start = start
        # every scalar PlayerView reads from the first one on, by position (no dict lookups per view)
        self.scalars = tuple(self.rel[name] for name in (
            "is_mover", "phase", "stock_size", "recycles", "recycle_left", "turn", "has_melded", "score", "target"))
        self.rules_lo, self.rules_hi = start["rule_aces"], start["rule_cards_dealt"] + 1
        self.rules: dict[tuple, tuple] = {}  # the rule block's values -> its decoded rule attributes
        # whether the layout has any deck-variant piece (else PlayerView sets their defaults at once)
        self.has_variant = self.variant is not None or any(name in start for name in _VARIANT_PIECES)


_VARIANT_PIECES = ("rule_around", "rule_two_decks", "hand_jokers", "upcard_joker", "drawn_joker", "discard_jokers",
                   "table_jokers", "joker_layoff_set", "jokers_named", "hand_twice", "discard_below_twice",
                   "table_twice", "opp1_known_jokers", "opp1_discarded_joker", "opp1_known_twice")
"""Layout names of the deck-variant pieces ``PlayerView._decode_variant`` reads (any one present: a variant layout)."""

_BIT_VALUES = np.left_shift(np.int64(1), np.arange(52, dtype=np.int64))
"""``2**c`` for cards ``c`` 0..51: a card plane (booleans) times this is its 52-bit mask."""

_RULES_CACHE_MAX = 4096
"""Distinct rule blocks one ``_Index`` keeps decoded (a table has one; the cache is cleared past this)."""


@lru_cache(maxsize=None)
def _index(n: int, kind: str) -> _Index:
    return _Index(n, kind)


_VIEW_INDEX: dict[tuple[int, int], _Index] = {}
"""``(observation length, mask length) -> _Index`` of the tables views were built for."""


def _view_table(dim: int, mask_len: int, obs_shape: tuple, mask_shape: tuple) -> tuple[int, str]:
    """``(num_players, kind)`` of an observation and a mask an agent was handed (the arrays
    are all it gets, so their lengths tell the table: ``table_for``).

    Raises:
        ValueError: no table has those lengths; the message lists them, or says what
            mask length the observation's table wants.
    """
    try:
        return table_for(dim, mask_len)
    except ValueError:
        pass
    try:
        n, kind = table_for(dim)
    except ValueError:
        raise ValueError(
            f"observation has shape {obs_shape} and action_mask {mask_shape}; no table has them (observation "
            "and mask lengths: " + ", ".join(f"{sz}/{na}" for sz, na in _table_by_shape()) + ")"
        ) from None
    raise ValueError(f"action_mask has shape {mask_shape}; expected ({num_actions(kind)},) for a {kind} table "
                     f"with an observation of length {obs_shape[0]}")


def _decode_rules(s: list[float], r: dict[str, int]) -> tuple:
    """The rule attributes of ``PlayerView`` (``aces`` .. ``cards_dealt``, in its ``__init__``'s
    order) from the observation's scalars ``s`` (from ``is_mover`` on) and their positions ``r``."""
    ra = r["rule_aces"]
    rm = r["rule_max_recycles"]  # [unlimited, max_recycles / scale]
    return (ACES_ORDER[0 if s[ra] > 0.5 else 1 if s[ra + 1] > 0.5 else 2],
            11 if s[r["rule_ace_points_11"]] > 0.5 else 1,
            s[r["rule_layoffs"]] > 0.5,
            s[r["rule_must_discard"]] > 0.5,
            int(round(s[r["rule_rummy_multiplier"]] * MULTIPLIER_SCALE)),
            s[r["rule_rummy_needs_no_discard"]] > 0.5,
            s[r["rule_penalty"]] > 0.5,
            s[r["rule_turn_over"]] > 0.5,
            None if s[rm] > 0.5 else int(round(s[rm + 1] * RECYCLE_SCALE)),
            s[r["rule_on_request"]] > 0.5,
            s[r["rule_lowest_deadwood"]] > 0.5,
            int(round(s[r["rule_cards_dealt"]] * HAND_SCALE)))


class PlayerView:
    """A decoded observation of the seat to move (or of any seat).

    Args:
        observation: float32 array of shape ``(obs_size(n),)`` for some ``n`` in 2..6
            (the player count is read from the length).
        action_mask: int8 (or bool) array of shape ``(N,)`` (N: ``Table.num_actions``, 579 at a standard table), 1 = legal.

    Attributes (cards are ints 0..51; card sets are 52-bit int masks):
        n: number of players. ``opp`` lists below are indexed ``k - 1`` for the
            seat ``k`` places after this one in turn order.
        hand, table, discard_below, layoff_set, layoff_low, layoff_high, layoff_any:
            masks (the ``layoff_*`` planes, as ``GameState.layoff_masks``; ``layoff_any``
            is every card the table takes as a lay-off).
        upcard, drawn: the top discard / the card taken from the discard pile this
            turn, or -1.
        opp_known, opp_discards: per opponent, masks of the cards it took from the
            discard pile and still holds / discarded this hand.
        opp_hand_size: per opponent, cards in hand (int). opp_has_melded: bools.
        is_mover, phase (0 draw, 1 play), stock_size (int), recycles (int),
        recycle_left (bool), turn_frac (turns / max_turns), has_melded (bool),
        score, target, opp_score (points, floats).
        aces ("low" / "high" / "either"), ace_points (1 or 11), layoffs,
        must_discard, rummy_multiplier (int), rummy_needs_no_discard, penalty,
        turn_over, max_recycles (int or None), on_request, lowest_deadwood,
        cards_dealt (int): the rules as the observation states them.
        kind: the table kind (``"standard"`` or ``"rum500"``); melds_scoring, dig:
        the 500 Rum rule flags (RULES.md §10.4; False at a standard table).
        pile: at a 500 Rum table the discard pile, bottom first (the last is the
        upcard); ``None`` at a standard table (whose observation gives no order).
        bound: the card the mover dug this turn and must still meld or lay off, or -1.
        meld_points, opp_meld_points: points melded this hand (floats; 0 at a
        standard table).
        legal: sorted list of legal action ids. can_draw_stock, can_draw_discard:
        bools. discardable: mask of the cards a discard action may name.
        meld_actions, layoff_actions, dig_actions: lists of legal meld / lay-off /
        dig (``draw discard <card>``) action ids. joker_as_actions: the cards of the legal
        ``joker as <card>`` ids (a jokers table; the first steps of the moves with jokers),
        jokers_named: the mask of the cards jokers are named for in the move being built
        (while it is not 0 the meld and lay-off ids finish that move, ``actions``).
        Deck variants (RULES.md §10.1-10.3; at other tables 0, False or empty):
        around (runs turn the corner); two_decks; max_jokers (per meld: 2, or 4 with two
        decks; 0 without jokers); hand_jokers (jokers held, int); upcard / drawn are 52
        (``cards.JOKER``) for a joker; discard_jokers (jokers under the upcard);
        table_jokers (mask of the cards melded jokers stand for);
        joker_layoff_set / _low / _high (masks: what a joker may be laid off as);
        hand_twice, discard_below_twice, table_twice (masks of cards there twice);
        opp_known_jokers, opp_discarded_joker, opp_known_twice (per opponent);
        variant (the kind's ``actions.ActionLayout`` or None). ``discardable`` has bit
        52 when ``discard JK`` is legal.

    Raises:
        ValueError: the observation length is not that of any table, or the
            mask is not as long as that table's action count (``actions.num_actions(kind)``).
    """

    __slots__ = (
        "n", "hand", "upcard", "discard_below", "drawn", "table", "layoff_set", "layoff_low", "layoff_high", "layoff_any",
        "opp_known", "opp_discards", "opp_hand_size", "opp_has_melded", "opp_score",
        "is_mover", "phase", "stock_size", "recycles", "recycle_left", "turn_frac", "has_melded",
        "score", "target", "aces", "ace_points", "layoffs", "must_discard", "rummy_multiplier",
        "rummy_needs_no_discard", "penalty", "turn_over", "max_recycles", "on_request",
        "lowest_deadwood", "cards_dealt", "legal", "can_draw_stock", "can_draw_discard",
        "discardable", "meld_actions", "layoff_actions", "kind", "melds_scoring", "dig", "pile", "bound",
        "meld_points", "opp_meld_points", "dig_actions",
        "around", "two_decks", "max_jokers", "hand_jokers", "discard_jokers", "table_jokers", "joker_layoff_set",
        "joker_layoff_low", "joker_layoff_high", "hand_twice", "discard_below_twice", "table_twice",
        "opp_known_jokers", "opp_discarded_joker", "opp_known_twice", "variant", "jokers_named", "joker_as_actions",
    )

    @property
    def layoff_masks(self) -> tuple[int, int, int]:
        """``(layoff_set, layoff_low, layoff_high)``, as ``GameState.layoff_masks``."""
        return self.layoff_set, self.layoff_low, self.layoff_high

    def __init__(self, observation: np.ndarray, action_mask: np.ndarray) -> None:
        obs = np.asarray(observation)
        mask = np.asarray(action_mask)
        ix = _VIEW_INDEX.get((obs.shape[0] if obs.ndim == 1 else -1, mask.shape[0] if mask.ndim == 1 else -1))
        if ix is None:
            dim = obs.shape[0] if obs.ndim == 1 else -1
            ix = _index(*_view_table(dim, mask.shape[0] if mask.ndim == 1 else -1, obs.shape, mask.shape))
            _VIEW_INDEX[(dim, mask.shape[0])] = ix
        n = self.n = ix.n
        self.kind = ix.kind
        planes = ix.planes
        m = ((obs[: 52 * planes].reshape(planes, 52) > 0.5) @ _BIT_VALUES).tolist()  # each plane's 52-bit mask
        p = ix.plane
        self.hand = m[p["hand"]]
        self.upcard = m[p["upcard"]].bit_length() - 1
        self.discard_below = m[p["discard_below"]]
        self.drawn = m[p["drawn_from_discard"]].bit_length() - 1
        self.table = m[p["table"]]
        self.layoff_set, self.layoff_low, self.layoff_high = m[p["layoff_set"]], m[p["layoff_low"]], m[p["layoff_high"]]
        self.layoff_any = self.layoff_set | self.layoff_low | self.layoff_high
        self.opp_known = [m[i] for i in ix.opp_known]
        self.opp_discards = [m[i] for i in ix.opp_discards]
        s = obs[ix.first:].tolist()  # every scalar, indexed by ix.rel (name -> position)
        r = ix.rel
        i_mover, i_phase, i_stock, i_recycles, i_left, i_turn, i_melded, i_score, i_target = ix.scalars
        self.is_mover = s[i_mover] > 0.5
        self.phase = 1 if s[i_phase + 1] > 0.5 else 0  # one-hot draw, play
        self.stock_size = int(round(s[i_stock] * STOCK_SCALE))
        self.recycles = int(round(s[i_recycles] * RECYCLE_SCALE))
        self.recycle_left = s[i_left] > 0.5
        self.turn_frac = s[i_turn]
        self.has_melded = s[i_melded] > 0.5
        self.score = s[i_score] * SCORE_SCALE
        self.target = s[i_target] * SCORE_SCALE
        self.opp_hand_size = [int(round(s[i] * HAND_SCALE)) for i in ix.opp_hand_size]
        self.opp_has_melded = [s[i] > 0.5 for i in ix.opp_has_melded]
        self.opp_score = [s[i] * SCORE_SCALE for i in ix.opp_score]
        key = tuple(s[ix.rules_lo - ix.first:ix.rules_hi - ix.first])  # the values (not bytes: any dtype)
        rules = ix.rules.get(key)
        if rules is None:
            rules = _decode_rules(s, r)
            if len(ix.rules) >= _RULES_CACHE_MAX:
                ix.rules.clear()
            ix.rules[key] = rules
        (self.aces, self.ace_points, self.layoffs, self.must_discard, self.rummy_multiplier,
         self.rummy_needs_no_discard, self.penalty, self.turn_over, self.max_recycles, self.on_request,
         self.lowest_deadwood, self.cards_dealt) = rules
        if ix.rum500:
            self.melds_scoring = s[r["rule_melds"]] > 0.5
            self.dig = s[r["rule_dig"]] > 0.5
            depth = obs[ix.depth:ix.depth + 52]
            cards = np.flatnonzero(depth > 0)
            at = [(float(depth[c]), int(c)) for c in cards]  # (depth, card): the pile read back, top first
            st = ix.start
            if "discard_depth_second" in st:
                d2 = obs[st["discard_depth_second"]:st["discard_depth_second"] + 52]
                at += [(float(d2[c]), int(c)) for c in np.flatnonzero(d2 > 0)]
            if "joker_depths" in st:
                at += [(float(x), JOKER) for x in obs[st["joker_depths"]:st["joker_depths"] + 4] if x > 0]
            self.pile = [c for _, c in sorted(at, key=lambda t: -t[0])]  # bottom first
            b = np.flatnonzero(obs[ix.bound:ix.bound + 52] > 0.5)
            self.bound = int(b[0]) if b.size else -1
            if "bound_joker" in st and obs[st["bound_joker"]] > 0.5:
                self.bound = JOKER
            self.meld_points = s[r["meld_points"]] * SCORE_SCALE
            self.opp_meld_points = [s[i] * SCORE_SCALE for i in ix.opp_meld_points]
        else:
            self.melds_scoring = self.dig = False
            self.pile = None
            self.bound = -1
            self.meld_points = 0.0
            self.opp_meld_points = [0.0] * (n - 1)
        if ix.has_variant:
            self._decode_variant(obs, ix)
        else:  # a standard or plain 500 Rum table: every deck-variant piece is 0, False or empty
            self.variant = None
            self.around = self.two_decks = False
            self.max_jokers = self.hand_jokers = self.discard_jokers = 0
            self.table_jokers = self.joker_layoff_set = self.joker_layoff_low = self.joker_layoff_high = 0
            self.jokers_named = self.hand_twice = self.discard_below_twice = self.table_twice = 0
            self.opp_known_jokers = [0] * (n - 1)
            self.opp_discarded_joker = [False] * (n - 1)
            self.opp_known_twice = [0] * (n - 1)
        legal = mask.nonzero()[0].tolist()
        self.legal = legal
        if ix.variant is not None:
            self._classify_variant(legal, ix.variant)
            return
        # the ids are sorted and each kind is one range of them: draws, discards, melds, lay-offs, digs
        i1 = bisect_left(legal, DISCARD_BASE)
        i2 = bisect_left(legal, MELD_BASE, i1)
        i3 = bisect_left(legal, LAYOFF_BASE, i2)
        i4 = bisect_left(legal, DIG_BASE, i3)
        self.can_draw_stock = i1 > 0 and legal[0] == DRAW_STOCK
        self.can_draw_discard = i1 > 0 and legal[i1 - 1] == DRAW_DISCARD
        disc = 0
        for a in legal[i1:i2]:
            disc |= 1 << (a - DISCARD_BASE)
        self.discardable = disc
        self.meld_actions = legal[i2:i3]
        self.layoff_actions = legal[i3:i4]
        self.dig_actions = legal[i4:]
        self.joker_as_actions = []

    def _decode_variant(self, obs: np.ndarray, ix: "_Index") -> None:
        """The deck-variant pieces (RULES.md §10.1-10.3; zeros and False elsewhere)."""
        st = ix.start
        n = self.n

        def plane(name: str) -> int:
            if name not in st:
                return 0
            bits = np.packbits(obs[st[name]:st[name] + 52] > 0.5, bitorder="little").tobytes()
            return int.from_bytes(bits, "little")

        def scalar(name: str, scale: float = 1.0) -> float:
            return float(obs[st[name]]) * scale if name in st else 0.0

        lay = ix.variant
        self.variant = lay
        self.around = "rule_around" in st
        self.two_decks = "rule_two_decks" in st
        self.max_jokers = lay.max_jokers if lay is not None else 0
        self.hand_jokers = int(round(scalar("hand_jokers", JOKER_SCALE)))
        if scalar("upcard_joker") > 0.5:
            self.upcard = JOKER
        if scalar("drawn_joker") > 0.5:
            self.drawn = JOKER
        if self.around:
            self.aces = "around"
        self.discard_jokers = int(round(scalar("discard_jokers", JOKER_SCALE)))
        self.table_jokers = plane("table_jokers")
        self.joker_layoff_set = plane("joker_layoff_set")
        self.joker_layoff_low = plane("joker_layoff_low")
        self.joker_layoff_high = plane("joker_layoff_high")
        self.jokers_named = plane("jokers_named")
        self.hand_twice = plane("hand_twice")
        self.discard_below_twice = plane("discard_below_twice")
        self.table_twice = plane("table_twice")
        self.opp_known_jokers = [int(round(scalar(f"opp{k}_known_jokers", JOKER_SCALE))) for k in range(1, n)]
        self.opp_discarded_joker = [scalar(f"opp{k}_discarded_joker") > 0.5 for k in range(1, n)]
        self.opp_known_twice = [plane(f"opp{k}_known_twice") for k in range(1, n)]

    def _classify_variant(self, legal: list[int], lay: ActionLayout) -> None:
        """Sort the legal ids of a deck-variant table into the view's action lists."""
        self.can_draw_stock = DRAW_STOCK in legal
        self.can_draw_discard = DRAW_DISCARD in legal
        disc = 0
        melds: list[int] = []
        lays: list[int] = []
        digs: list[int] = []
        ja = lay.joker_as
        db = lay.dig_base
        named: list[int] = []
        for a in legal:
            if db >= 0 and (db <= a < db + 52 or a == lay.joker_dig):
                digs.append(a)
            elif ja >= 0 and ja <= a < ja + 52:
                named.append(a - ja)
            elif DISCARD_BASE <= a < MELD_BASE:
                disc |= 1 << (a - DISCARD_BASE)
            elif a == lay.joker_discard:
                disc |= 1 << JOKER
            elif LAYOFF_BASE <= a < NUM_ACTIONS:
                lays.append(a)
            elif a >= MELD_BASE:
                melds.append(a)
        self.discardable = disc
        self.meld_actions = melds
        self.layoff_actions = lays
        self.dig_actions = digs
        self.joker_as_actions = named

    @property
    def opp_known_all(self) -> int:
        """Mask of every card some opponent is known to hold (took it from the discard pile)."""
        k = 0
        for x in self.opp_known:
            k |= x
        return k

    @property
    def visible(self) -> int:
        """Cards this seat knows cannot reach an opponent's hand from the stock:
        its own hand, the table, and the whole discard pile."""
        up = (1 << self.upcard) if 0 <= self.upcard < JOKER else 0
        return self.hand | self.table | self.discard_below | up

    def __repr__(self) -> str:
        def t(mask: int) -> str:
            return " ".join(CARD_TEXT[c] for c in cards_of(mask)) or "-"

        return (f"PlayerView(n={self.n}, phase={'play' if self.phase else 'draw'}, hand=[{t(self.hand)}], "
                f"upcard={TEXT_OF[self.upcard] if self.upcard >= 0 else '-'}, table=[{t(self.table)}], "
                f"stock={self.stock_size}, legal={len(self.legal)})")


# ---------------------------------------------------------------- the simplest agent

class SeededAgent:
    """The seeding plumbing agents share: a ``random.Random`` stream, ``seed(s)`` resets it."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def seed(self, seed: int | None = None) -> None:
        """Reseed the agent's random generator (``None``: fresh entropy)."""
        self._rng = random.Random(seed)

    def reseeded(self, seed: int | None = None) -> "SeededAgent":
        """A copy of this agent playing from a new generator seeded ``seed`` (as ``seed``
        does): a shallow copy when the generator is the agent's only state (what ``seed``
        replaces, so its state need not be copied), else a deep copy (state of its own
        stays its own; an agent with ``__slots__`` is copied deeply). The batched training env
        gives every game such a copy."""
        state = getattr(self, "__dict__", None)
        only_rng = (type(self).seed is SeededAgent.seed and state is not None and state.keys() <= {"_rng"}
                    and all(not getattr(c, "__slots__", ()) for c in type(self).__mro__))
        twin = copy.copy(self) if only_rng else copy.deepcopy(self)
        twin.seed(seed)
        return twin


class RandomAgent(SeededAgent):
    """Plays a uniformly random legal action: the one random agent of the project
    (``make_agent("random")``, ``SingleAgentEnv``'s default opponents).

    ``act(observation, action_mask) -> int``; reads the mask only; deterministic
    given ``seed(s)`` (a ``random.Random`` stream).
    """

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A uniformly random action among those whose mask entry is 1.

        Args:
            observation: the seat's observation vector (unused).
            action_mask: int8 ``(N,)`` (N: ``Table.num_actions``, 579 at a standard table), 1 = legal.

        Raises:
            ValueError: no action is legal (the seat is not to move).
        """
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask: this seat is not to move")
        return int(legal[self._rng.randrange(legal.size)])


__all__ = [
    "layout", "obs_low", "obs_size", "offsets", "players_for", "table_for", "describe_table", "kind_players", "num_card_planes", "Encoder", "rule_features",
    "decode_cards", "action_mask", "action_mask_into", "action_masks_into", "PlayerView", "SeededAgent", "RandomAgent",
    "cards_of", "STOCK_SCALE", "RECYCLE_SCALE",
    "SCORE_SCALE", "HAND_SCALE", "MULTIPLIER_SCALE", "ACES_ORDER", "MIN_PLAYERS", "MAX_PLAYERS",
]
