"""The rules engine: positions, legal actions, applying actions, scoring, matches.

Pure Python on 52-bit masks (``cards.py``) and the meld catalogue (``melds.py``);
nothing here imports gymnasium or pettingzoo. The walk of one decision:
``legal_actions(state)`` lists the ids the mover may take, and ``apply(state, a)``
checks ``a`` against that same list (raising ``IllegalActionError`` and changing
nothing when it is not there) before changing the position in place.

Sections of RULES.md implemented here: §2 deal, §3 turn, §4 aces (through the
catalogue), §5 going out and scoring, §6 an empty stock, §7 match play, §10.4 500 Rum
(meld scoring and digging the discard pile), and §10.1-10.3 (round-the-corner runs,
jokers, two decks: the deck variants, played by ``_legal_variant`` / ``_apply_variant``
on count masks, ``cards.count_add``; ``GameState.variant`` is their action layout and
``None`` at every other table, whose path is unchanged). Writing and
reading positions (API.md's STATE JSON) is ``state_json.py``.
"""
from __future__ import annotations

import functools
import itertools
import random
from typing import Any

from .actions import (
    DIG_BASE,
    DISCARD_BASE,
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYOFF_BASE,
    LAYOFF_ENDS,
    MELD_BASE,
    NUM_ACTIONS,
    action_text,
    checked_action_id,
    layoff_id,
    meld_form_text,
    parse_action,
)
from .actions import ActionLayout
from .cards import (CARD_TEXT, FULL_DECK, JOKER, JOKER_POINTS, LAYER_MASK, NUM_CARDS, TEXT_OF, cards_of, count_add, count_of,
                    count_points, count_remove, count_remove_set, mask_points)
from .meld_analysis import layoff_closure
from .melds import (MELD_HI, MELD_KEY, MELD_KIND, MELD_LO, MELD_MASK, NUM_MELDS_AROUND, NUM_SETS, SET, meld_allowed,
                    meld_layoff_masks, melds_in)
from .rules import Rules
from .table import Table

DRAW, PLAY = 0, 1
PHASES = ("draw", "play")


class IllegalActionError(ValueError):
    """An action that is not legal in the position; the message names it and why."""


class Meld:
    """A meld on the table: a set (``kind == SET``, ``key`` = rank) or a run
    (``kind == RUN``, ``key`` = suit, positions ``lo..hi`` with 13 = ace high).

    ``mask`` is the 52-bit mask of the cards it holds (the card a joker stands for
    counted as that card); ``jokers`` the 52-bit mask of the cards of it that jokers
    stand for (RULES.md §10.2; 0 without jokers). Melds are never split; a lay-off
    grows ``mask`` and, for a run, moves ``lo`` or ``hi`` by one (``aces="around"``:
    any ``lo`` in 0..12, positions ``p`` holding rank ``p % 13``)."""

    __slots__ = ("mask", "kind", "key", "lo", "hi", "jokers")

    def __init__(self, mask: int, kind: int, key: int, lo: int, hi: int, jokers: int = 0) -> None:
        self.mask, self.kind, self.key, self.lo, self.hi, self.jokers = mask, kind, key, lo, hi, jokers

    def copy(self) -> "Meld":
        """An independent copy (lay-offs change a meld in place)."""
        return Meld(self.mask, self.kind, self.key, self.lo, self.hi, self.jokers)

    def has_room_for_joker(self) -> bool:
        """Whether one more joker keeps the meld at most half jokers (RULES.md §10.2)."""
        return 2 * (self.jokers.bit_count() + 1) <= self.mask.bit_count() + 1

    def cards(self) -> list[int]:
        """The meld's cards, a run in rank order (ace high last)."""
        if self.kind == SET:
            return cards_of(self.mask)
        return [self.key * 13 + (p % 13) for p in range(self.lo, self.hi + 1)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Meld) and (self.mask, self.kind, self.lo, self.hi, self.jokers) == (
            other.mask, other.kind, other.lo, other.hi, other.jokers)

    def texts(self) -> list[str]:
        """The meld's cards as text, a joker as ``JK=<card>`` (API.md)."""
        return [("JK=" if self.jokers >> c & 1 else "") + CARD_TEXT[c] for c in self.cards()]

    def __repr__(self) -> str:
        return "Meld(" + " ".join(self.texts()) + ")"


class GameState:
    """A position: everything the engine needs to go on (mutable; ``apply`` changes it).

    Attributes (cards as numbers 0..51, card sets as 52-bit int masks):
        rules: the ``Rules`` in force.
        hands: list of n masks, one per seat.
        stock: card numbers with the *top at the end* (``pop()`` draws).
        discard: the discard pile, bottom first (the last one is the upcard).
        melds: list of ``Meld`` on the table, in the order they were laid down.
        current: the seat to move; phase: ``DRAW`` (0) or ``PLAY`` (1).
        drawn_from_discard: the card taken from the discard pile this turn, or -1.
        has_melded: per seat, melded or laid off in an earlier turn of this hand.
        melded_this_turn: the mover melded or laid off this turn.
        recycles: recycles made this hand; turn: turns completed this hand.
        scores: match totals; dealer: the dealer's seat; hand_number: 0-based.
        known: per seat, cards it took from the discard pile and still holds.
        discards_by: per seat, cards it discarded this hand.
        hand_over / result / match_over / match_winners: the end of a hand / match.
        meld_points: per seat, the points of the cards it melded or laid off this hand
            (RULES.md §10.4; kept at every 500 Rum table, ``table.rum500``: the
            dig tables and the meld-scoring ones, with deck variants or without, on either
            engine path; zeros elsewhere).
        bound: the card a dig of this turn binds (the deepest card taken when more
            than the top card was taken: it must be melded or laid off this turn,
            RULES.md §10.4), or -1.
        table: the ``table.Table`` of ``rules`` (``Table.of(rules)``): the kind of table,
            its features and layouts; what the engine asks instead of testing kinds.
        num_actions: the table's action count (``table.num_actions``, kept in its own slot
            for the hot path).
        variant: the ``actions.ActionLayout`` of a deck-variant table (RULES.md §10.1-10.3:
            ``table.action_layout``), else ``None``. At such a table the hands and ``known`` are count masks
            (``cards.count_add``: a card may be held twice, the joker, card 52, up to 4
            times), ``stock`` and ``discard`` may repeat cards and hold the joker.
        joker_masks: at a jokers table, ``(set, low, high)`` 52-bit masks of the cards
            a joker may be laid off as (a meld with room for one more joker takes it).
        named: at a jokers table in the play phase, the 52-bit mask of the cards the mover
            has named jokers for (``joker as <card>``, ``actions`` module docstring) in the
            meld or lay-off it is building; 0 otherwise.
        layoff_masks: ``(layoff_set, layoff_low, layoff_high)``, 52-bit masks of the
            cards the table takes as a lay-off on a set (its missing 4th card), at the
            low end and at the high end of a run (derived from ``melds``; RULES.md §3-§4).
            The observation planes of the same names hold them.
    """

    __slots__ = (
        "rules", "hands", "stock", "discard", "melds", "current", "phase", "drawn_from_discard",
        "has_melded", "melded_this_turn", "recycles", "turn", "scores", "dealer", "hand_number",
        "known", "discards_by", "hand_over", "result", "match_over", "match_winners",
        "layoff_masks", "payoffs", "rng", "_legal", "meld_points", "bound", "num_actions", "variant",
        "joker_masks", "table", "named", "_moves",
    )

    def __init__(self, rules: Rules, *, table: "Table | None" = None, rng: "random.Random | None" = None,
                 hands: "list[int] | None" = None, stock: "list[int] | None" = None,
                 discard: "list[int] | None" = None, melds: "list[Meld] | None" = None, current: int = 0,
                 phase: int = DRAW, drawn_from_discard: int = -1, has_melded: "list[bool] | None" = None,
                 melded_this_turn: bool = False, recycles: int = 0, turn: int = 0,
                 scores: "list[int] | None" = None, dealer: "int | None" = None, hand_number: int = 0,
                 known: "list[int] | None" = None, discards_by: "list[int] | None" = None,
                 hand_over: bool = False, result: "dict | None" = None, match_over: bool = False,
                 match_winners: "list[int] | None" = None, layoff_masks: tuple = (0, 0, 0),
                 joker_masks: tuple = (0, 0, 0), payoffs: "list | None" = None,
                 meld_points: "list[int] | None" = None, bound: int = -1, legal: "list[int] | None" = None,
                 named: int = 0, _general: bool = False) -> None:
        """The one constructor of a position: every slot set, from keywords (the attributes
        above; per-seat lists default to zeros / False for ``rules.num_players`` seats, the
        dealer to the last seat, the piles to empty lists). It checks nothing: ``new_game``
        deals a hand into it, ``state_json.from_state_json`` checks a STATE before it fills
        one. ``table`` defaults to ``Table.of(rules)`` (pass it when known: a copy);
        ``rng`` to ``random.Random()`` (fresh entropy). ``legal``: the cached legal list, or
        ``None``. ``_general`` (private, tests/test_engine_paths.py only): a table without
        deck variants plays through the count-mask path (``new_game``).

        Raises:
            TypeError: ``rules`` is not a ``Rules`` (``Table.of``).
        """
        t = Table.of(rules) if table is None else table
        n = t.num_players
        self.rules = rules
        self.table = t
        self.num_actions = t.num_actions
        self.variant = _general_layout(t.kind) if _general and t.fixed_layout else t.action_layout
        self.rng = random.Random() if rng is None else rng
        self.hands = [0] * n if hands is None else hands
        self.stock = [] if stock is None else stock
        self.discard = [] if discard is None else discard
        self.melds = [] if melds is None else melds
        self.current, self.phase, self.drawn_from_discard = current, phase, drawn_from_discard
        self.has_melded = [False] * n if has_melded is None else has_melded
        self.melded_this_turn = melded_this_turn
        self.recycles, self.turn = recycles, turn
        self.scores = [0] * n if scores is None else scores
        self.dealer = n - 1 if dealer is None else dealer
        self.hand_number = hand_number
        self.known = [0] * n if known is None else known
        self.discards_by = [0] * n if discards_by is None else discards_by
        self.hand_over, self.result = hand_over, result
        self.match_over, self.match_winners = match_over, match_winners
        self.layoff_masks, self.joker_masks = layoff_masks, joker_masks
        self.payoffs = [0] * n if payoffs is None else payoffs
        self.meld_points = [0] * n if meld_points is None else meld_points
        self.bound = bound
        self.named = named
        self._legal = legal
        self._moves = None  # the full moves of a deck-variant play phase (_variant_moves), cached

    def copy(self) -> "GameState":
        """An independent copy (the RNG is copied too, so both go on identically)."""
        rng = random.Random()
        rng.setstate(self.rng.getstate())
        s = GameState(
            self.rules, table=self.table, rng=rng, hands=list(self.hands), stock=list(self.stock),
            discard=list(self.discard), melds=[m.copy() for m in self.melds], current=self.current,
            phase=self.phase, drawn_from_discard=self.drawn_from_discard, has_melded=list(self.has_melded),
            melded_this_turn=self.melded_this_turn, recycles=self.recycles, turn=self.turn,
            scores=list(self.scores), dealer=self.dealer, hand_number=self.hand_number, known=list(self.known),
            discards_by=list(self.discards_by), hand_over=self.hand_over,
            result=None if self.result is None else dict(self.result), match_over=self.match_over,
            match_winners=None if self.match_winners is None else list(self.match_winners),
            layoff_masks=self.layoff_masks, joker_masks=self.joker_masks, payoffs=list(self.payoffs),
            meld_points=list(self.meld_points), bound=self.bound, legal=self._legal, named=self.named)
        s._moves = self._moves  # a tuple of tuples: shared safely
        s.variant = self.variant  # a copy of a _general position plays the same path
        return s

    @property
    def upcard(self) -> int:
        """The top card of the discard pile, or -1 when it is empty."""
        return self.discard[-1] if self.discard else -1


# ---------------------------------------------------------------- dealing (§2, §7)

def new_game(rules: Rules, seed: int | None = None, *, _general: bool = False) -> GameState:
    """Start a match: hand 1 dealt from ``seed`` (the dealer is the last seat, so seat 0
    moves first; RULES.md §2). ``seed=None`` draws fresh entropy.

    ``_general`` (private, for tests/test_engine_paths.py only): play a table without deck
    variants (kind ``"standard"`` or ``"rum500"``) through the deck-variant count-mask path
    (``_legal_variant`` / ``_apply_variant``) instead of its fast path, with the same ids
    and the same deal, so a test can check that the two paths agree move for move."""
    s = GameState(rules, rng=random.Random(seed), _general=_general)
    _deal(s)
    return s


@functools.lru_cache(maxsize=None)
def _general_layout(kind: str) -> ActionLayout:
    """The ``ActionLayout`` of a kind without deck variants (its 579 or 631 ids), which
    routes it through the deck-variant path (``new_game(..., _general=True)``)."""
    return ActionLayout(kind, _general=True)


def next_hand(state: GameState, seed: int | None = None) -> None:
    """Deal the next hand of the match: the deal passes one seat left, totals stay (§2, §7).
    With ``seed`` the hand is dealt from ``random.Random(seed)`` (and the hand's later
    shuffles go on from it: duplicate matches deal each hand from its own seed); without,
    from the match's own stream.

    Raises:
        ValueError: the current hand is not over, or the match is over (nothing changes).
    """
    if not state.hand_over:
        raise ValueError("the current hand is not over yet")
    if state.match_over:
        raise ValueError("the match is over; start a new game")
    if seed is not None:
        state.rng = random.Random(seed)
    state.dealer = (state.dealer + 1) % state.rules.num_players
    state.hand_number += 1
    _deal(state)


def _deal(s: GameState) -> None:
    rules = s.rules
    n = rules.num_players
    k = rules.cards_dealt
    hands = [0] * n
    deck = s.table.deck()  # §1; §10.2-10.3: every card once per deck, the jokers
    s.rng.shuffle(deck)
    if s.variant is None:  # plain 52-bit masks
        for i in range(k * n):
            hands[(s.dealer + 1 + i) % n] |= 1 << deck[i]
    else:  # count masks
        for i in range(k * n):
            q = (s.dealer + 1 + i) % n
            hands[q] = count_add(hands[q], deck[i])
    s.joker_masks = (0, 0, 0)
    s.hands = hands
    s.discard = [deck[k * n]]
    s.stock = deck[k * n + 1:][::-1]  # top at the end
    s.melds = []
    s.layoff_masks = (0, 0, 0)
    s.current = (s.dealer + 1) % n
    s.phase = DRAW
    s.drawn_from_discard = -1
    s.has_melded = [False] * n
    s.melded_this_turn = False
    s.recycles = 0
    s.turn = 0
    s.known = [0] * n
    s.discards_by = [0] * n
    s.hand_over = False
    s.result = None
    s.payoffs = [0] * n
    s.meld_points = [0] * n
    s.bound = -1
    s.named = 0
    s._legal = None
    _start_turn(s)


# ---------------------------------------------------------------- table arithmetic

def _layoff_masks(melds: list[Meld], aces: str) -> tuple[int, int, int]:
    """Masks of the cards the table takes (``GameState.layoff_masks``): on a set, at a run's low
    end, at its high end; ``melds.meld_layoff_masks`` of each meld."""
    layoff_set = layoff_low = layoff_high = 0
    for m in melds:
        a, b, c = meld_layoff_masks(m.kind, m.key, m.mask, m.lo, m.hi, aces)
        layoff_set |= a
        layoff_low |= b
        layoff_high |= c
    return layoff_set, layoff_low, layoff_high


def _can_recycle(s: GameState) -> bool:
    mr = s.rules.max_recycles
    return (mr is None or s.recycles < mr) and len(s.discard) > 1


def _recycle(s: GameState) -> None:
    """All discards but the top become the stock (RULES.md §6)."""
    top = s.discard[-1]
    rest = s.discard[:-1]
    if s.rules.recycle == "shuffle":
        s.rng.shuffle(rest)
        s.stock = rest
    else:  # turn_over: the oldest discard ends on top (top = end of our list)
        s.stock = rest[::-1]
    s.discard = [top]
    s.recycles += 1


def _start_turn(s: GameState) -> None:
    """At the start of a turn under ``on_empty``: recycle or end the hand dry (§6)."""
    if not s.stock and s.rules.dry_trigger == "on_empty":
        if _can_recycle(s):
            _recycle(s)
        else:
            _end_hand(s, "dry", None)


# ---------------------------------------------------------------- legal actions (§3)

def _finishable(hand: int, forbidden_bit: int, layoff_ok: bool, must_discard: bool) -> bool:
    """Can a play phase with this hand still end legally (RULES.md §3, decision)?"""
    if hand == 0:
        return not must_discard
    if hand & ~forbidden_bit:
        return True
    # the hand is exactly the card taken from the discard pile: only a lay-off of it
    return layoff_ok and not must_discard


# _DISCARDS_IN_BYTE[k][b]: the discard ids of the cards 8k..8k+7 whose bits are set in byte b
_DISCARDS_IN_BYTE: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(DISCARD_BASE + 8 * k + i for i in range(8) if b >> i & 1) for b in range(256)) for k in range(7)
)


def legal_actions(state: GameState) -> list[int]:
    """The ids of every legal action of the player to move, in increasing order.

    Empty once the hand is over. This is the one source of legality: the env's
    action mask is built from it and ``apply`` checks against it.
    """
    if state._legal is not None:
        return state._legal
    if state.hand_over:
        state._legal = []
        return state._legal
    if state.variant is not None:
        state._legal = out = _legal_variant(state) if state.phase == PLAY else _legal_variant_draws(state)
        return out
    if state.phase == DRAW:
        out = []
        if state.stock or state.rules.dry_trigger == "on_request":
            out.append(DRAW_STOCK)
        if state.discard:
            out.append(DRAW_DISCARD)
            if state.table.digs:
                out += _legal_digs(state)
        state._legal = out
        return out
    rules = state.rules
    hand = state.hands[state.current]
    f = state.drawn_from_discard
    fbit = 0 if f < 0 else 1 << f
    must = rules.must_discard_to_go_out
    if state.bound >= 0:
        out = _legal_bound_plays(state)
        state._legal = out
        return out
    layoff_set, layoff_low, layoff_high = state.layoff_masks
    layoff_any = layoff_set | layoff_low | layoff_high
    out = []
    for k, b in enumerate((hand & ~fbit).to_bytes(7, "little")):  # discards, a byte of cards at a time
        if b:
            out += _DISCARDS_IN_BYTE[k][b]
    for mid in melds_in(hand, rules.aces):
        rest = hand & ~MELD_MASK[mid]
        if rest & ~fbit or _finishable(rest, fbit, _takes_after_meld(state, mid, f), must):
            out.append(MELD_BASE + mid)
    if rules.layoffs:
        h = hand & layoff_any
        while h:
            low = h & -h
            c = low.bit_length() - 1
            h ^= low
            rest = hand & ~low
            b = LAYOFF_BASE + 3 * c
            for end, takes in enumerate((layoff_set, layoff_low, layoff_high)):
                # each end separately: which end the card goes to decides what the
                # table takes next (e.g. the taken discard may fit only after it)
                if takes & low and (rest & ~fbit or _finishable(
                        rest, fbit, bool(fbit & _takes_after_layoff(state, c, end)), must)):
                    out.append(b + end)
    out.sort()
    state._legal = out
    return out


# ---------------------------------------------------------------- digging (§10.4)

def bound_playable(hand: int, layoff_masks: tuple[int, int, int], bound: int, rules: Rules) -> bool:
    """Can ``bound`` (a card of ``hand``, a 52-bit mask) still be melded or laid off this
    turn, on a table that takes ``layoff_masks``, with the turn then finishing legally
    (RULES.md §10.4, §3)?

    ``bound`` must be a card of ``hand``. It can exactly when a meld of the hand holds
    it, or when lay-offs are allowed and
    it can be laid off after other cards of the hand were laid off one after another
    (``meld_analysis.layoff_closure``): melding more cards first never opens a place
    for it that a larger meld of the hand would not already give. With
    ``must_discard_to_go_out`` one card must be left over to discard.
    """
    bit = 1 << bound
    must = rules.must_discard_to_go_out
    for mid in melds_in(hand, rules.aces):
        mm = MELD_MASK[mid]
        if mm & bit and (not must or hand & ~mm):
            return True
    if not rules.layoffs or not (layoff_masks[0] | layoff_masks[1] | layoff_masks[2]):
        return False
    closure = layoff_closure(hand, *layoff_masks, rules.aces)
    if not closure & bit:
        return False  # fewer cards never lay off more
    if not must or hand & ~closure:
        return True  # a card the chain does not need is left for the discard
    rest = hand & ~bit
    while rest:  # every card lies on the chain: keep card x back for the discard
        x = rest & -rest
        rest ^= x
        if layoff_closure(hand & ~x, *layoff_masks, rules.aces) & bit:
            return True
    return False


def _legal_digs(state: GameState) -> list[int]:
    """The dig ids of the draw phase: each card under the upcard whose taking (it and
    every card above it) leaves it playable this turn (``bound_playable``)."""
    hand = state.hands[state.current]
    disc = state.discard
    out = []
    above = 1 << disc[-1]
    for i in range(len(disc) - 2, -1, -1):
        c = disc[i]
        if bound_playable(hand | above | 1 << c, state.layoff_masks, c, state.rules):
            out.append(DIG_BASE + c)
        above |= 1 << c
    out.sort()
    return out


def _legal_bound_plays(state: GameState) -> list[int]:
    """The play phase while a dug card is still in hand: no discard; a meld or lay-off
    that plays the bound card, or any other after which it stays playable (§10.4).
    A dig takes two cards or more and leaves no card barred from the discard, so every
    such play can be followed by a legal end of the turn."""
    rules = state.rules
    hand = state.hands[state.current]
    bound = state.bound
    bbit = 1 << bound
    masks = state.layoff_masks
    must = rules.must_discard_to_go_out
    out = []
    for mid in melds_in(hand, rules.aces):
        mm = MELD_MASK[mid]
        rest = hand & ~mm
        if mm & bbit:
            ok = bool(rest) or not must
        else:
            m = _meld_from_id(mid)
            a, b, c = meld_layoff_masks(m.kind, m.key, m.mask, m.lo, m.hi, rules.aces)
            ok = bound_playable(rest, (masks[0] | a, masks[1] | b, masks[2] | c), bound, rules)
        if ok:
            out.append(MELD_BASE + mid)
    if rules.layoffs:
        h = hand & (masks[0] | masks[1] | masks[2])
        while h:
            low = h & -h
            c = low.bit_length() - 1
            h ^= low
            rest = hand & ~low
            for end in range(3):
                if not masks[end] & low:
                    continue
                if c == bound:
                    ok = bool(rest) or not must
                else:
                    trial = [m.copy() for m in state.melds]
                    _do_layoff(trial, c, end)
                    ok = bound_playable(rest, _layoff_masks(trial, rules.aces), bound, rules)
                if ok:
                    out.append(LAYOFF_BASE + 3 * c + end)
    out.sort()
    return out


# ---------------------------------------------------------------- deck variants (§10.1-10.3)

def _catalogue_runs(aces: str) -> tuple[tuple[int, int, int, int], ...]:
    """``(meld id, suit, 13-bit suit pattern, length)`` of every catalogue run legal under ``aces``."""
    out = []
    for mid in range(NUM_SETS, NUM_MELDS_AROUND):
        if meld_allowed(mid, aces):
            s = MELD_KEY[mid]
            out.append((mid, s, (MELD_MASK[mid] >> (13 * s)) & 0x1FFF, MELD_MASK[mid].bit_count()))
    return tuple(out)


_RUNS_BY_ACES = {aces: _catalogue_runs(aces) for aces in ("low", "high", "either", "around")}


def _subsets(mask: int, k: int) -> list[int]:
    """Every submask of ``mask`` with exactly ``k`` bits."""
    bits = [1 << c for c in cards_of(mask)]
    out = []
    for combo in itertools.combinations(bits, k):
        m = 0
        for b in combo:
            m |= b
        out.append(m)
    return out


def meld_forms(naturals: int, jokers: int, aces: str, max_jokers: int) -> list[tuple[int, int]]:
    """Every meld a hand can lay down at a deck-variant table (RULES.md §3, §10.1-10.3):
    ``(catalogue meld id, joker mask)`` pairs, the joker mask the 52-bit mask of the meld's
    cards that jokers stand for (at most ``min(jokers, max_jokers)`` of them and at most
    half the meld, §10.2), every other card of the meld in ``naturals`` (the 52-bit mask of
    the distinct natural cards held). A joker may stand for a card that is held.
    Returns the pairs sorted by meld id, then joker mask."""
    if not jokers or not max_jokers:
        return [(mid, 0) for mid in melds_in(naturals, aces)]
    jk = min(jokers, max_jokers)
    out: list[tuple[int, int]] = []

    def add(mid: int, mm: int, size: int) -> None:
        missing = mm & ~naturals
        nm = missing.bit_count()
        top = min(jk, size // 2)
        if nm > top:
            return
        held = mm & naturals
        for extra in range(0, top - nm + 1):
            for e in ([0] if extra == 0 else _subsets(held, extra)):
                out.append((mid, missing | e))

    for r in range(13):
        have = (naturals >> r) & 1 | ((naturals >> (13 + r)) & 1) << 1 | ((naturals >> (26 + r)) & 1) << 2 \
            | ((naturals >> (39 + r)) & 1) << 3
        if not have:
            continue  # a set needs one natural card at least (at most half jokers)
        for mid in range(5 * r, 5 * r + 5):
            add(mid, MELD_MASK[mid], 3 if mid % 5 < 4 else 4)
    pats = [(naturals >> (13 * s)) & 0x1FFF for s in range(4)]
    for mid, s, pat, size in _RUNS_BY_ACES[aces]:
        p = pats[s]
        if p and ((pat & ~p).bit_count() <= min(jk, size // 2)):
            add(mid, MELD_MASK[mid], size)
    out.sort()
    return out


def _variant_layoff_masks(melds: list[Meld], aces: str, jokers: bool) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The table's lay-off masks at a deck-variant table: for a natural card, and for a
    joker (only melds with room for one more joker, RULES.md §10.2)."""
    nat = [0, 0, 0]
    jok = [0, 0, 0]
    for m in melds:
        t = meld_layoff_masks(m.kind, m.key, m.mask, m.lo, m.hi, aces)
        nat[0] |= t[0]
        nat[1] |= t[1]
        nat[2] |= t[2]
        if jokers and m.has_room_for_joker():
            jok[0] |= t[0]
            jok[1] |= t[1]
            jok[2] |= t[2]
    return (nat[0], nat[1], nat[2]), (jok[0], jok[1], jok[2])


def _take(hand: int, naturals: int, jokers: int) -> int:
    """The count mask ``hand`` without one copy of each card of the 52-bit mask
    ``naturals`` and without ``jokers`` jokers (all held)."""
    hand = count_remove_set(hand, naturals)
    for _ in range(jokers):
        hand = count_remove(hand, JOKER)
    return hand


# A full move of a deck-variant play phase, before it is split into decisions (the
# ``actions`` module docstring): (MV_DISCARD, card) with card 52 for a joker;
# (MV_MELD, catalogue meld id, joker mask); (MV_LAYOFF, card, end, joker: 0 or 1).
MV_DISCARD, MV_MELD, MV_LAYOFF = 0, 1, 2


def _variant_move(state: GameState, move: tuple) -> tuple[int, list[Meld] | None, int, int, int]:
    """What a full play-phase move does at a deck-variant table, without doing it:
    ``(hand after it, table after it or None when unchanged, card discarded or -1,
    52-bit mask of the natural cards that leave the hand, jokers that leave it)``."""
    hand = state.hands[state.current]
    aces = state.rules.aces
    k = move[0]
    if k == MV_DISCARD:
        c = move[1]
        return count_remove(hand, c), None, c, (0 if c == JOKER else 1 << c), (1 if c == JOKER else 0)
    if k == MV_LAYOFF:
        _, c, end, joker = move
        trial = [m.copy() for m in state.melds]
        _do_layoff(trial, c, end, aces, joker=bool(joker))
        if joker:
            return count_remove(hand, JOKER), trial, -1, 0, 1
        return count_remove(hand, c), trial, -1, 1 << c, 0
    _, mid, jm = move
    nat, nj = MELD_MASK[mid] & ~jm, jm.bit_count()
    meld = Meld(MELD_MASK[mid], MELD_KIND[mid], MELD_KEY[mid], MELD_LO[mid], MELD_HI[mid], jm)
    return _take(hand, nat, nj), state.melds + [meld], -1, nat, nj


def _variant_finishable(rest: int, melds: list[Meld], f: int, rules: Rules, jokers: bool) -> bool:
    """Can a play phase with count mask ``rest`` left, on table ``melds``, still end
    legally (RULES.md §3, decision)? ``f`` is the card taken from the discard pile this
    turn (-1: none), which may not be discarded in either copy (§10.3)."""
    must = rules.must_discard_to_go_out
    if rest == 0:
        return not must
    fbit = 0 if f < 0 else 1 << f
    if rest & LAYER_MASK & ~fbit:
        return True
    if must or not rules.layoffs:
        return False
    # every card left is a copy of f: each must be laid off (rare; a small search)
    for end in range(3):
        i = layoff_target(melds, f, end, rules.aces) if f != JOKER else -1
        if i >= 0:
            trial = [m.copy() for m in melds]
            _do_layoff(trial, f, end, rules.aces)
            if _variant_finishable(count_remove(rest, f), trial, f, rules, jokers):
                return True
    if f == JOKER:
        for c in range(NUM_CARDS):
            for end in range(3):
                if layoff_target(melds, c, end, rules.aces, joker=True) >= 0:
                    trial = [m.copy() for m in melds]
                    _do_layoff(trial, c, end, rules.aces, joker=True)
                    if _variant_finishable(count_remove(rest, JOKER), trial, f, rules, jokers):
                        return True
    return False


def _legal_variant_draws(state: GameState) -> list[int]:
    """The draw phase at a deck-variant table (RULES.md §3, §6): as at any table, except
    that taking the upcard is illegal when the hand then holds only copies of it (two
    decks, or jokers: none may be discarded this turn, §10.3) that cannot all be laid off."""
    out = []
    if state.stock or state.rules.dry_trigger == "on_request":
        out.append(DRAW_STOCK)
    if state.discard:
        up = state.discard[-1]
        hand = state.hands[state.current]
        if hand & LAYER_MASK & ~(1 << up) or _variant_finishable(
                count_add(hand, up), state.melds, up, state.rules, state.variant.max_jokers > 0):
            out.append(DRAW_DISCARD)
        if state.table.digs:
            out += _legal_variant_digs(state)
            out.sort()
    return out


def _legal_variant_digs(state: GameState) -> list[int]:
    """The digs of a 500 Rum deck-variant table (RULES.md §10.3-10.4): a dig names a card
    and takes its topmost copy with every card above it; it is legal when that card can
    then be melded or laid off this turn (``_variant_bound_playable``). The upcard's own
    card is the plain ``draw discard``."""
    lay = state.variant
    disc = state.discard
    hand = state.hands[state.current]
    seen = {disc[-1]}
    out = []
    h = count_add(hand, disc[-1])  # the hand with every card taken so far, deeper each step
    for i in range(len(disc) - 2, -1, -1):
        c = disc[i]
        h = count_add(h, c)
        if c in seen:
            continue  # a deeper copy: naming the card takes the topmost one
        seen.add(c)
        if _variant_bound_playable(h, state.melds, c, state.rules, lay):
            out.append(lay.joker_dig if c == JOKER else lay.dig_base + c)
    return out


def _chain_reaches(meld: Meld, card: int, hand: int, rules: Rules) -> int:
    """The fewest cards of ``hand`` (a count mask holding ``card``) that lay ``card`` off
    on ``meld``, the cards between laid off one after another at one end (natural cards
    first, else a joker standing for the card that end takes, while the meld has room),
    or 0 when none do (RULES.md §3, §10.2)."""
    aces = rules.aces
    for end in ((0,) if meld.kind == SET else (1, 2)):
        cur = meld.copy()
        avail = count_remove(hand, card)
        used = 1
        for _ in range(13):
            takes = meld_layoff_masks(cur.kind, cur.key, cur.mask, cur.lo, cur.hi, aces)[end]
            if not takes:
                break
            x = takes.bit_length() - 1
            if x == card:
                return used
            if end == 0:
                break
            if count_of(avail, x):
                avail = count_remove(avail, x)
                _do_layoff([cur], x, end, aces)
            elif avail >> JOKER & 1 and cur.has_room_for_joker():
                avail = count_remove(avail, JOKER)
                _do_layoff([cur], x, end, aces, joker=True)
            else:
                break
            used += 1
    return 0


def _variant_bound_playable(hand: int, melds: list[Meld], bound: int, rules: Rules, lay: ActionLayout) -> bool:
    """Can ``bound`` (a card of the count mask ``hand``; the joker, 52, too) still be melded
    or laid off this turn, on table ``melds``, the turn then ending legally (RULES.md
    §10.3-10.4; a 500 Rum deck-variant table)?

    As ``bound_playable``: a meld of the hand holds it (a natural card as itself, the
    joker as any card it may stand for), or lay-offs reach it on one meld of the table,
    natural cards or jokers filling the places before it (melding other cards first
    never opens a place that a larger meld with it would not give; a lay-off on one meld
    never opens a place on another). With ``must_discard_to_go_out`` a card is left over."""
    must = rules.must_discard_to_go_out
    size = hand.bit_count()
    nj = count_of(hand, JOKER)
    naturals = hand & FULL_DECK
    for mid, jm in meld_forms(naturals, nj, rules.aces, lay.max_jokers):
        holds = bool(jm) if bound == JOKER else bool((MELD_MASK[mid] & ~jm) >> bound & 1)
        if holds and (not must or size > MELD_MASK[mid].bit_count()):
            return True
    if not rules.layoffs:
        return False
    if bound == JOKER:
        return any(m.has_room_for_joker() and any(meld_layoff_masks(m.kind, m.key, m.mask, m.lo, m.hi, rules.aces))
                   for m in melds) and (not must or size > 1)
    for m in melds:
        used = _chain_reaches(m, bound, hand, rules)
        if used and (not must or size > used):
            return True
    return False


def _variant_moves(state: GameState) -> tuple:
    """The play phase's legal full moves at a deck-variant table (RULES.md §3,
    §10.1-10.3; ``MV_*`` tuples): discards (no copy of the card taken from the discard
    pile), melds with or without jokers, natural and joker lay-offs, each kept only when
    the turn can still end. While jokers are named the list computed before the first
    ``joker as`` is reused (``state._moves``: the position has not changed since)."""
    if state.named and state._moves is not None:
        return state._moves
    lay = state.variant
    rules = state.rules
    hand = state.hands[state.current]
    distinct = hand & LAYER_MASK
    naturals = distinct & FULL_DECK
    nj = count_of(hand, JOKER)
    f = state.drawn_from_discard
    fbit = 0 if f < 0 else 1 << f
    out: list[tuple] = []
    bound = state.bound
    if bound < 0:
        for c in cards_of(distinct & ~fbit):
            out.append((MV_DISCARD, c))
    jokers_on = lay.max_jokers > 0
    must = rules.must_discard_to_go_out

    def ok(rest: int, move: tuple) -> bool:
        if bound >= 0:  # a dug card still to play (§10.4): this move plays it, or it stays playable
            _, trial, _, nat, played_jokers = _variant_move(state, move)
            if (played_jokers if bound == JOKER else nat >> bound & 1):
                return bool(rest) or not must
            return _variant_bound_playable(rest, state.melds if trial is None else trial, bound, rules, lay)
        if rest & LAYER_MASK & ~fbit:
            return True  # a card left that may be discarded
        trial = _variant_move(state, move)[1]
        return _variant_finishable(rest, state.melds if trial is None else trial, f, rules, jokers_on)

    for mid, jm in meld_forms(naturals, nj, rules.aces, lay.max_jokers):
        if lay.meld_id[mid] < 0:
            continue
        rest = _take(hand, MELD_MASK[mid] & ~jm, jm.bit_count())
        mv = (MV_MELD, mid, jm)
        if ok(rest, mv):
            out.append(mv)
    if rules.layoffs:
        masks = state.layoff_masks
        h = naturals & (masks[0] | masks[1] | masks[2])
        for c in cards_of(h):
            rest = count_remove(hand, c)
            for end in range(3):
                if masks[end] >> c & 1:
                    mv = (MV_LAYOFF, c, end, 0)
                    if ok(rest, mv):
                        out.append(mv)
        if nj:
            jmasks = state.joker_masks
            rest = count_remove(hand, JOKER)
            for end in range(3):
                for c in cards_of(jmasks[end]):
                    mv = (MV_LAYOFF, c, end, 1)
                    if ok(rest, mv):
                        out.append(mv)
    state._moves = moves = tuple(out)
    return moves


def _move_jokers(move: tuple) -> int:
    """The 52-bit mask of the cards a full move's jokers stand for (0 for a natural move)."""
    if move[0] == MV_MELD:
        return move[2]
    if move[0] == MV_LAYOFF and move[3]:
        return 1 << move[1]
    return 0


def _final_id(lay: ActionLayout, move: tuple) -> int:
    """The id of a full move's last decision: its discard, meld or lay-off id."""
    k = move[0]
    if k == MV_DISCARD:
        return DISCARD_BASE + move[1] if move[1] != JOKER else lay.joker_discard
    if k == MV_MELD:
        return lay.meld_id[move[1]]
    return LAYOFF_BASE + 3 * move[1] + move[2]


def _next_step(lay: ActionLayout, move: tuple, named: int) -> int:
    """The id of the next decision that plays the full ``move`` when the jokers of
    ``named`` are named, or -1 when ``named`` does not start that move
    (``ActionLayout.joker_step``)."""
    return lay.joker_step(_move_jokers(move), named, _final_id(lay, move))


def _legal_variant(state: GameState) -> list[int]:
    """The play phase's legal ids at a deck-variant table: the next decision of every
    legal full move (``_variant_moves``) that the jokers named so far start."""
    lay = state.variant
    named = state.named
    out = set()
    for mv in _variant_moves(state):
        a = _next_step(lay, mv, named)
        if a >= 0:
            out.add(a)
    return sorted(out)


def _move_of(state: GameState, action: int) -> tuple:
    """The full move a legal meld, lay-off or discard id completes, with the jokers named
    so far (``state.named``) playing its named cards."""
    lay = state.variant
    named = state.named
    if DISCARD_BASE <= action < MELD_BASE:
        return (MV_DISCARD, action - DISCARD_BASE)
    if action == lay.joker_discard:
        return (MV_DISCARD, JOKER)
    if LAYOFF_BASE <= action < NUM_ACTIONS:
        c, end = divmod(action - LAYOFF_BASE, 3)
        return (MV_LAYOFF, c, end, 1 if named else 0)
    return (MV_MELD, lay.meld_of[action], named)


def _full_move_text(mv: tuple) -> str:
    """API.md's text of a full ``MV_*`` move (``meld 4H JK=5H 6H``, ``layoff JK=7H high``)."""
    if mv[0] == MV_DISCARD:
        return f"discard {TEXT_OF[mv[1]]}"
    if mv[0] == MV_MELD:
        return meld_form_text(mv[1], mv[2])
    return f"layoff {'JK=' if mv[3] else ''}{CARD_TEXT[mv[1]]} {LAYOFF_ENDS[mv[2]]}"


def legal_moves(state: GameState) -> list[tuple[str, int]]:
    """Every legal move of the player to move as ``(text, next id)``: at a jokers table in
    the play phase the whole moves (``meld 4H JK=5H 6H``, ``layoff JK=7H high``) that the
    jokers named so far start, each with the id of its next decision (``joker as 5H``:
    the ``actions`` module docstring; RULES.md §10.2), sorted by that id, then text;
    elsewhere one entry per legal id with its ``action_text``. What a person picks from
    (the terminal and the web table); ``action_ids(state, text)`` gives a move's
    decisions. Empty once the hand is over; never raises.
    """
    lay = state.variant
    if lay is None or lay.joker_as < 0 or state.phase != PLAY or state.hand_over:
        return [(action_text(a, state.table.kind), a) for a in legal_actions(state)]
    out = []
    for mv in _variant_moves(state):
        a = _next_step(lay, mv, state.named)
        if a >= 0:
            out.append((a, _full_move_text(mv)))
    return [(t, a) for a, t in sorted(out)]


def is_joker_step(state: GameState, action: int) -> bool:
    """Whether ``action`` is a ``joker as <card>`` decision at this position's table (a
    step of a move with jokers, the ``actions`` module docstring; RULES.md §10.2)."""
    lay = state.variant
    return lay is not None and lay.joker_card(action) >= 0


def move_text(state: GameState, action: int) -> str:
    """The text of the whole move a legal play-phase ``action`` finishes at this position
    (API.md's action text): at a jokers table with jokers named, ``meld 4H 5H 6H`` after
    ``joker as 5H`` is ``meld 4H JK=5H 6H``; otherwise ``action_text`` of the id (a
    ``joker as <card>`` step included).

    Raises:
        IllegalActionError (a ``ValueError``): jokers are named and ``action`` finishes no
            move here (no whole move to name); the message is ``apply``'s reason.
    """
    if not state.named or state.phase != PLAY or is_joker_step(state, action):
        return action_text(action, state.table.kind)
    if action not in legal_actions(state):
        raise IllegalActionError(_illegal_reason(state, action))
    return _full_move_text(_move_of(state, action))


def _apply_variant(state: GameState, action: int) -> None:
    """Apply a legal draw-from-discard or play-phase action at a deck-variant table (the
    stock draw is ``apply``'s): RULES.md §3, §5, §10.1-10.3."""
    p = state.current
    lay = state.variant
    if action == DRAW_DISCARD:
        card = state.discard.pop()
        state.hands[p] = count_add(state.hands[p], card)
        state.known[p] = count_add(state.known[p], card)
        state.drawn_from_discard = card
        state.phase = PLAY
        return
    if lay.dig_base >= 0 and (lay.dig_base <= action < lay.dig_base + NUM_CARDS or action == lay.joker_dig):
        card = JOKER if action == lay.joker_dig else action - lay.dig_base
        disc = state.discard
        i = len(disc) - 1 - disc[::-1].index(card)  # its topmost copy (§10.3)
        for c in disc[i:]:
            state.hands[p] = count_add(state.hands[p], c)
            state.known[p] = count_add(state.known[p], c)
        del disc[i:]
        state.bound = card
        state.phase = PLAY
        return
    c = lay.joker_card(action)
    if c >= 0:
        state.named |= 1 << c  # a step of a move with jokers: the moves stay
        return
    move = _move_of(state, action)
    state.named = 0
    state._moves = None
    rest, trial, discarded, nat, nj = _variant_move(state, move)
    state.hands[p] = rest
    # what the others know the seat holds: a copy played or discarded is a known one
    # while any is known (the copies are the same card: which one left is not seen)
    known = state.known[p]
    state.known[p] = _take(known, nat & known, min(nj, count_of(known, JOKER)))
    if discarded >= 0:
        state.discards_by[p] |= 1 << discarded
        state.discard.append(discarded)
        if not rest:
            _end_hand(state, "out", p, by_discard=True)
            return
        _end_turn(state)
        return
    state.melds = trial
    state.melded_this_turn = True
    if state.table.rum500:  # §10.4: the melder scores the cards, a joker 15 (as on the standard path)
        state.meld_points[p] += mask_points(nat, state.rules.ace_points) + JOKER_POINTS * nj
    if state.bound >= 0 and (nj if state.bound == JOKER else nat >> state.bound & 1):
        state.bound = -1
    state.layoff_masks, state.joker_masks = _variant_layoff_masks(trial, state.rules.aces, state.variant.max_jokers > 0)
    if not rest:
        _end_hand(state, "out", p, by_discard=False)


def _takes_after_meld(state: GameState, mid: int, card: int) -> bool:
    """Would the table take ``card`` as a lay-off once meld ``mid`` is down?"""
    if card < 0 or not state.rules.layoffs:
        return False
    # a meld's lay-off masks depend on that meld alone: the table's after the meld are
    # today's OR the new meld's
    m = _meld_from_id(mid)
    a, b, c = meld_layoff_masks(m.kind, m.key, m.mask, m.lo, m.hi, state.rules.aces)
    return bool((a | b | c | state.layoff_masks[0] | state.layoff_masks[1] | state.layoff_masks[2]) >> card & 1)


def _takes_after_layoff(state: GameState, card: int, end: int) -> int:
    """Union of the table's lay-off masks after laying ``card`` off at ``end``."""
    trial = [m.copy() for m in state.melds]
    _do_layoff(trial, card, end)
    a, b, c = _layoff_masks(trial, state.rules.aces)
    return a | b | c


def _meld_from_id(mid: int) -> Meld:
    return Meld(MELD_MASK[mid], MELD_KIND[mid], MELD_KEY[mid], MELD_LO[mid], MELD_HI[mid])


def layoff_target(melds: list[Meld], card: int, end: int, aces: str | None = None, joker: bool = False) -> int:
    """The index in ``melds`` (the table, in the order laid down) of the meld that laying
    ``card`` (0..51) off at ``end`` (0 set, 1 low end of a run, 2 high end) extends: the
    first meld laid down that takes it (RULES.md §3-§4: a 3-card set of its rank without
    its suit, or a run of its suit whose end is next to it; §10.3: a lay-off that fits two
    melds goes on the first), or -1 when none does. ``aces`` (the table's option) is
    needed for runs that turn the corner (``"around"``, §10.1); without it the table's
    lay-off masks must already say the card fits (the standard path); ``joker``: the card
    is a joker standing for ``card``, which only a meld with room for one more joker
    takes (§10.2)."""
    bit = 1 << card
    rank, suit = card % 13, card // 13
    for i, m in enumerate(melds):
        if joker and not m.has_room_for_joker():
            continue
        if end == 0:
            if m.kind == SET and m.key == rank and m.mask.bit_count() == 3 and not m.mask & bit:
                return i
        elif m.kind != SET and m.key == suit:
            if aces is not None:  # exact under every aces option (the deck variants' paths pass it)
                if meld_layoff_masks(m.kind, m.key, m.mask, m.lo, m.hi, aces)[end] & bit:
                    return i
            elif end == 1 and m.lo - 1 == rank:
                return i
            elif end == 2 and (m.hi + 1) % 13 == rank and m.hi + 1 <= 13 and not m.mask & bit:
                return i
    return -1


def _do_layoff(melds: list[Meld], card: int, end: int, aces: str | None = None, joker: bool = False) -> None:
    i = layoff_target(melds, card, end, aces, joker)
    if i < 0:
        raise AssertionError("no meld takes the card")  # guarded by legality
    m = melds[i]
    m.mask |= 1 << card
    if joker:
        m.jokers |= 1 << card
    if end == 1:
        m.lo -= 1
        if m.lo < 0 and aces == "around":  # turned the corner at the low end: K is position 12
            m.lo += 13
            m.hi += 13
    elif end == 2:
        m.hi += 1
    if m.kind != SET and m.hi - m.lo == 12:  # the full suit has one form, A..K (as in the catalogue)
        m.lo, m.hi = 0, 12


# ---------------------------------------------------------------- applying actions

def as_action_id(action: Any, n: int = NUM_ACTIONS) -> int:
    """``action`` as a plain int, if it is an integer (``int``, numpy integer or a 0-d
    integer array; not a bool or a float) below ``n``, the table's action count
    (``GameState.num_actions``, ``Table.num_actions``).

    Raises:
        IllegalActionError (a ``ValueError``): any other type or value outside ``0..n-1``.
    """
    if type(action) is int and 0 <= action < n:
        return action
    return checked_action_id(action, IllegalActionError, n)


def apply(state: GameState, action: int) -> None:
    """Apply one action of the player to move, in place (RULES.md §3, §5, §6).

    Raises:
        IllegalActionError (a ``ValueError``): the hand is over, ``action`` is not an
            action id, or it is not legal here; the message names the action and the
            reason, and the position is left unchanged.
    """
    if type(action) is not int or not 0 <= action < state.num_actions:  # the common case needs no call
        action = as_action_id(action, state.num_actions)
    if state.hand_over:
        raise IllegalActionError(f"the hand is over; no action is legal (got {_safe_text(action, state.table.kind)})")
    legal = legal_actions(state)
    if action not in legal:
        raise IllegalActionError(_illegal_reason(state, action))
    p = state.current
    state._legal = None
    if action == DRAW_STOCK:
        if not state.stock:  # only under dry_trigger on_request (§6)
            if _can_recycle(state):
                _recycle(state)
            else:
                _end_hand(state, "dry", None)
                return
        if state.variant is not None:
            state.hands[p] = count_add(state.hands[p], state.stock.pop())
        else:
            state.hands[p] |= 1 << state.stock.pop()
        state.phase = PLAY
        return
    if state.variant is not None:
        _apply_variant(state, action)
        return
    if action == DRAW_DISCARD:
        card = state.discard.pop()
        state.hands[p] |= 1 << card
        state.known[p] |= 1 << card
        state.drawn_from_discard = card
        state.phase = PLAY
        return
    if action >= DIG_BASE:  # dig (§10.4): the card and every card above it; the card is bound
        card = action - DIG_BASE
        cards = dig_taken(state.discard, card)
        taken = 0
        for c in cards:
            taken |= 1 << c
        del state.discard[len(state.discard) - len(cards):]
        state.hands[p] |= taken
        state.known[p] |= taken
        state.bound = card
        state.phase = PLAY
        return
    if action < MELD_BASE:  # discard
        card = action - DISCARD_BASE
        bit = 1 << card
        state.hands[p] &= ~bit
        state.known[p] &= ~bit
        state.discards_by[p] |= bit
        state.discard.append(card)
        if not state.hands[p]:
            _end_hand(state, "out", p, by_discard=True)
            return
        _end_turn(state)
        return
    if action < LAYOFF_BASE:
        mid = action - MELD_BASE
        mask = MELD_MASK[mid]
        state.melds.append(_meld_from_id(mid))
    else:
        card, end = divmod(action - LAYOFF_BASE, 3)
        mask = 1 << card
        _do_layoff(state.melds, card, end)
    state.hands[p] &= ~mask
    state.known[p] &= ~mask
    if state.table.rum500:  # a 500 Rum table (§10.4): the melder scores, a dug card is played
        state.meld_points[p] += mask_points(mask, state.rules.ace_points)
        if state.bound >= 0 and mask >> state.bound & 1:
            state.bound = -1
    state.melded_this_turn = True
    state.layoff_masks = _layoff_masks(state.melds, state.rules.aces)
    if not state.hands[p]:
        _end_hand(state, "out", p, by_discard=False)


def _end_turn(s: GameState) -> None:
    p = s.current
    if s.melded_this_turn:
        s.has_melded[p] = True
    s.melded_this_turn = False
    s.drawn_from_discard = -1
    s.bound = -1
    s.turn += 1
    s.current = (p + 1) % s.rules.num_players
    s.phase = DRAW
    if s.turn >= s.rules.max_turns:
        _end_hand(s, "stalled", None)
        return
    _start_turn(s)


def _safe_text(action: Any, kind: str) -> str:
    try:
        return repr(action_text(action, kind))
    except ValueError:
        return repr(action)


def _illegal_reason(state: GameState, action: Any) -> str:
    """Why ``action`` is not legal here (for the error message)."""
    try:
        a = int(action)
        if a != action or isinstance(action, bool):
            raise ValueError
    except (TypeError, ValueError):
        return f"action must be an int in 0..{state.num_actions - 1}, got {action!r}"
    if not 0 <= a < state.num_actions:
        return f"action must be an int in 0..{state.num_actions - 1}, got {a}"
    if state.variant is not None:
        return _illegal_variant(state, a)
    text = action_text(a, state.table.kind)
    who = f"player {state.current}"
    is_draw = a <= DRAW_DISCARD or a >= DIG_BASE
    if state.phase == DRAW and not is_draw:
        return f"{text!r} is illegal: {who} must draw first ('draw stock' or 'draw discard')"
    if state.phase == PLAY and is_draw:
        return f"{text!r} is illegal: {who} has drawn this turn; meld, lay off or discard"
    hand = state.hands[state.current]
    if a == DRAW_STOCK:
        return f"{text!r} is illegal: the stock is empty"
    if a == DRAW_DISCARD:
        return f"{text!r} is illegal: the discard pile is empty"
    if a >= DIG_BASE:
        return _illegal_dig(state, text, a - DIG_BASE)
    bound_note = ""
    if state.bound >= 0:
        bound_note = (f"{CARD_TEXT[state.bound]}, the deepest card dug from the discard pile this turn, must be "
                      "melded or laid off before the turn ends (RULES.md §10.4)")
    if a < MELD_BASE:
        c = a - DISCARD_BASE
        if not hand >> c & 1:
            return f"{text!r} is illegal: {CARD_TEXT[c]} is not in {who}'s hand"
        if bound_note:
            return f"{text!r} is illegal: {bound_note}"
        return f"{text!r} is illegal: {CARD_TEXT[c]} was taken from the discard pile this turn"
    if a < LAYOFF_BASE:
        mid = a - MELD_BASE
        missing = MELD_MASK[mid] & ~hand
        if missing:
            return f"{text!r} is illegal: {who} does not hold {' '.join(CARD_TEXT[c] for c in cards_of(missing))}"
        if not any(m == mid for m in melds_in(hand, state.rules.aces)):
            return f"{text!r} is illegal: not a run with aces {state.rules.aces!r}"
        if bound_note:
            return f"{text!r} is illegal: afterwards it could not be; {bound_note}"
        return (f"{text!r} is illegal: it would leave {who} no legal way to finish the turn"
                + (" (the last card must be a discard)" if state.rules.must_discard_to_go_out else ""))
    c, end = divmod(a - LAYOFF_BASE, 3)
    if not state.rules.layoffs:
        return f"{text!r} is illegal: lay-offs are switched off at this table"
    if not hand >> c & 1:
        return f"{text!r} is illegal: {CARD_TEXT[c]} is not in {who}'s hand"
    if not state.layoff_masks[end] >> c & 1:
        where = ("no set on the table takes it" if end == 0 else
                 f"no run on the table has its {LAYOFF_ENDS[end]} end next to it")
        return f"{text!r} is illegal: {where}"
    if bound_note:
        return f"{text!r} is illegal: afterwards it could not be; {bound_note}"
    return (f"{text!r} is illegal: it would leave {who} no legal way to finish the turn"
            + (" (the last card must be a discard)" if state.rules.must_discard_to_go_out else ""))


def _illegal_dig(state: GameState, text: str, c: int) -> str:
    """Why the dig ``text`` of card ``c`` (0..52) is not legal (RULES.md §10.4)."""
    if not state.table.digs:
        return f"{text!r} is illegal: this table draws only the top discard (draw='top')"
    if c not in state.discard:
        return f"{text!r} is illegal: {TEXT_OF[c]} is not in the discard pile"
    if c == state.discard[-1]:
        return f"{text!r} is illegal: {TEXT_OF[c]} is the upcard; take it alone with 'draw discard'"
    return (f"{text!r} is illegal: {TEXT_OF[c]}, the deepest card taken, could not be melded or laid off "
            "this turn (RULES.md §10.4)")


def _illegal_variant(state: GameState, a: int) -> str:
    """Why play-phase or draw action ``a`` is not legal at a deck-variant table (§10.1-10.3)."""
    lay = state.variant
    text = lay.texts[a]
    who = f"player {state.current}"
    hand = state.hands[state.current]
    is_dig = lay.dig_base >= 0 and (lay.dig_base <= a < lay.dig_base + NUM_CARDS or a == lay.joker_dig)
    is_draw = a <= DRAW_DISCARD or is_dig
    if state.phase == DRAW and not is_draw:
        return f"{text!r} is illegal: {who} must draw first ('draw stock' or 'draw discard')"
    if state.phase == PLAY and is_draw:
        return f"{text!r} is illegal: {who} has drawn this turn; meld, lay off or discard"
    if a == DRAW_STOCK:
        return f"{text!r} is illegal: the stock is empty"
    if a == DRAW_DISCARD:
        return f"{text!r} is illegal: the discard pile is empty"
    if is_dig:
        return _illegal_dig(state, text, JOKER if a == lay.joker_dig else a - lay.dig_base)
    named = state.named
    nj = count_of(hand, JOKER)
    have = " ".join(TEXT_OF[x] for x in cards_of(named))
    c = lay.joker_card(a)
    if c >= 0:
        if named.bit_count() >= nj:
            return f"{text!r} is illegal: {who} holds {nj} joker(s)" + (f", each already named ({have})" if named else "")
        if named >> c & 1:
            return f"{text!r} is illegal: a joker is already named for {TEXT_OF[c]} (a meld never holds a card twice)"
        if named and c < named.bit_length() - 1:
            return (f"{text!r} is illegal: jokers are named in ascending card order (after "
                    f"{TEXT_OF[named.bit_length() - 1]}); name {TEXT_OF[c]} first in a new move")
        return (f"{text!r} is illegal: no meld or lay-off of {who}'s can use a joker as {TEXT_OF[c]} here"
                + (f" with the jokers named for {have}" if named else "")
                + " (RULES.md §10.2: a meld holds at most as many jokers as natural cards, and the turn must "
                  "still end legally)")
    mid = lay.meld_of.get(a, -1)
    if named and not (mid >= 0 and MELD_MASK[mid] & named == named):  # only a meld holding the named cards goes on
        return (f"{text!r} is illegal: {who} has named jokers for {have}; finish that move first: the meld or "
                "lay-off that holds those cards (or name the next joker)")
    if state.bound >= 0 and (DISCARD_BASE <= a < MELD_BASE or a == lay.joker_discard):
        return (f"{text!r} is illegal: {TEXT_OF[state.bound]}, dug from the discard pile this turn, must be "
                "melded or laid off before the turn ends (RULES.md §10.4)")
    finish = (f"{text!r} is illegal: it would leave {who} no legal way to finish the turn"
              + (" (the last card must be a discard)" if state.rules.must_discard_to_go_out else ""))
    if DISCARD_BASE <= a < MELD_BASE or a == lay.joker_discard:
        c = JOKER if a == lay.joker_discard else a - DISCARD_BASE
        if not count_of(hand, c):
            return f"{text!r} is illegal: {TEXT_OF[c]} is not in {who}'s hand"
        either = " (in either copy, RULES.md §10.3)" if state.table.two_decks else ""
        return f"{text!r} is illegal: {TEXT_OF[c]} was taken from the discard pile this turn{either}"
    if LAYOFF_BASE <= a < NUM_ACTIONS:
        c, end = divmod(a - LAYOFF_BASE, 3)
        if not state.rules.layoffs:
            return f"{text!r} is illegal: lay-offs are switched off at this table"
        if not count_of(hand, c):
            return f"{text!r} is illegal: {TEXT_OF[c]} is not in {who}'s hand"
        if not state.layoff_masks[end] >> c & 1:
            where = ("no set on the table takes it" if end == 0 else
                     f"no run on the table has its {LAYOFF_ENDS[end]} end next to it")
            return f"{text!r} is illegal: {where}"
        return finish
    missing = MELD_MASK[mid] & ~named & ~hand  # the named cards are the jokers'
    if missing:
        return f"{text!r} is illegal: {who} does not hold {' '.join(TEXT_OF[c] for c in cards_of(missing))}" + (
            f" (the jokers named play {have})" if named else
            " (to play a card of a meld with a joker, name it first: 'joker as <card>')" if nj else "")
    if not meld_allowed(mid, state.rules.aces):
        return f"{text!r} is illegal: not a run with aces {state.rules.aces!r}"
    if named:
        return (f"{text!r} is illegal: with jokers as {have} it would hold more jokers than natural cards, or "
                f"leave {who} no legal way to finish the turn (RULES.md §10.2)")
    return finish


# ---------------------------------------------------------------- scoring (§5, §6, §7)

def deadwood(state: GameState, seat: int) -> int:
    """Deadwood points of a seat's hand (RULES.md §1; a joker counts 15, §10.2)."""
    if state.variant is not None:
        return count_points(state.hands[seat], state.rules.ace_points)
    return mask_points(state.hands[seat], state.rules.ace_points)


def _end_hand(s: GameState, outcome: str, winner: int | None, by_discard: bool = False) -> None:
    """Score the hand (RULES.md §5-§6, §10.4) and, in a match, check the target (§7).

    ``payoffs`` (what the env's hand rewards are made of) are zero-sum: the points won
    and paid; under ``scoring="melds"`` each seat's hand points minus the mean of the
    other seats' (floats)."""
    rules = s.rules
    n = rules.num_players
    dw = ([mask_points(h, rules.ace_points) for h in s.hands] if s.variant is None
          else [count_points(h, rules.ace_points) for h in s.hands])
    points = [0] * n
    payoffs = [0] * n
    rummy = False
    penalty = rules.scoring == "penalty"
    if s.table.melds_scoring:  # every seat: melded minus held, whatever the outcome (§10.4)
        points = [s.meld_points[q] - dw[q] for q in range(n)]
        payoffs = melds_payoffs(points)
    elif outcome == "out":
        rummy = (not s.has_melded[winner] and rules.rummy_multiplier > 1
                 and not (rules.rummy_needs_no_discard and by_discard))
        mult = rules.rummy_multiplier if rummy else 1
        for q in range(n):
            if q != winner:
                payoffs[q] = -mult * dw[q]
                payoffs[winner] += mult * dw[q]
                if penalty:
                    points[q] = mult * dw[q]
        if not penalty:
            points[winner] = payoffs[winner]
    elif rules.dry_hand == "lowest_deadwood":
        low = min(dw)
        if dw.count(low) == 1:
            winner = dw.index(low)
            for q in range(n):
                if q != winner:
                    payoffs[q] = -(dw[q] - low)
                    payoffs[winner] += dw[q] - low
                    if penalty:
                        points[q] = dw[q] - low
            if not penalty:
                points[winner] = payoffs[winner]
    for q in range(n):
        s.scores[q] += points[q]
    s.hand_over = True
    s.payoffs = payoffs
    s.result = {"outcome": outcome, "winner": winner, "rummy": rummy, "points": points}
    s._legal = []
    t = rules.target
    if t is None or max(s.scores) >= t:
        s.match_over = True
        best = min(s.scores) if penalty else max(s.scores)
        s.match_winners = [q for q in range(n) if s.scores[q] == best]


def melds_payoffs(points: list[int]) -> list[float]:
    """The zero-sum payoffs of a hand scored by melds (RULES.md §10.4): each seat's hand
    points minus the mean of the other seats' (floats; ``points`` has one entry a seat)."""
    n, total = len(points), sum(points)
    return [p - (total - p) / (n - 1) for p in points]


def dig_taken(discard: list, card: Any) -> list:
    """The cards a dig of ``card`` takes from ``discard`` (bottom first): ``card`` and
    every card above it, bottom first (RULES.md §10.4). Raises ``ValueError`` when
    ``card`` is not in the pile."""
    return discard[discard.index(card):]


def match_payoffs(state: GameState) -> list[float]:
    """Zero-sum match result once the match is over: +1 for a sole winner, -1 for each
    loser; ``k`` winners of a split match share, each getting ``(n - k) / k``."""
    if not state.match_over:
        raise ValueError("the match is not over")
    n = state.rules.num_players
    w = state.match_winners
    k = len(w)
    return [((n - k) / k) if q in w else -1.0 for q in range(n)]


# ---------------------------------------------------------------- action text with a position

def action_ids(state: GameState, text: str) -> list[int]:
    """The decisions that play the move ``text`` (API.md's action text) from this
    position, in order: one id, except for a move with jokers at a jokers table
    (``meld 4H JK=5H 6H`` -> ``joker as 5H``, ``meld 4H 5H 6H``: the ``actions`` module
    docstring), of which the steps already taken (``state.named``) are left out.
    ``layoff JC`` alone resolves to the one meld on the table that can take the card
    (``layoff JK=7H`` alone, to the one end a joker may take 7H at); ``draw discard <the
    upcard>`` at a dig table is the plain ``draw discard``. While jokers are named a text
    must continue that move (name its jokers, or be a ``joker as <card>``): a text that
    plays no joker is refused, never read as the joker move. The ids are not checked for
    legality (``apply`` does, and says why).

    Raises:
        ValueError: the text names no action of this table, a bare lay-off fits no
            meld or more than one, or the text does not continue the jokers named so far.
    """
    a = parse_action(text, state.table.kind)
    lay = state.variant
    if isinstance(a, int) and a >= DIG_BASE and lay is None and not state.table.digs:
        raise ValueError(f"{text!r}: this table draws only the top discard ('draw discard'); "
                         "digging the pile needs draw='dig' (RULES.md §10.4)")
    dug = state.table.dig_card(a) if isinstance(a, int) else None
    if dug is not None and state.discard and state.discard[-1] == dug:
        return [DRAW_DISCARD]  # the top card alone is the plain draw (one action for one move)
    if isinstance(a, tuple):
        card = a[1]
        joker = len(a) > 2
        masks = state.joker_masks if joker else state.layoff_masks
        ends = [e for e in range(3) if masks[e] >> card & 1]
        shown = ("JK=" if joker else "") + CARD_TEXT[card]
        if len(ends) != 1:
            where = ("no meld on the table can take " if not ends else "more than one meld can take ")
            raise ValueError(f"{text!r}: {where}{shown}; say 'layoff {shown} set|low|high'")
        a = layoff_id(card, ends[0])
        if joker:
            a = [state.variant.joker_as + card, a]
    named = state.named
    if isinstance(a, int):
        if named and not is_joker_step(state, a):
            have = " ".join(TEXT_OF[c] for c in cards_of(named))
            raise ValueError(f"{text!r}: jokers are named for {have} in the move being built, and this text plays "
                             f"no joker; write the whole move with them (a card a joker plays is JK=<card>, e.g. "
                             f"JK={TEXT_OF[(named & -named).bit_length() - 1]}) or name the next joker ('joker as <card>')")
        return [a]
    if named:  # some of the move's jokers are named already: the steps left
        steps = [x - lay.joker_as for x in a[:-1]]
        k = named.bit_count()
        if sorted(cards_of(named)) != steps[:k]:
            have = " ".join(TEXT_OF[c] for c in cards_of(named))
            raise ValueError(f"{text!r}: jokers are named for {have} in the move being built; finish that move "
                             "(a meld or lay-off whose jokers stand for those cards, the lowest first)")
        return a[k:]
    return a


def legal_action_ids(state: GameState, text: str) -> list[int]:
    """``action_ids(state, text)``, each decision checked legal in turn on a copy of the
    position, so a frontend can step them all or none (a move with jokers whose later
    decision is illegal is refused whole; API.md: bad input changes nothing).

    Raises:
        ValueError: as ``action_ids``; ``IllegalActionError`` (a ``ValueError``) naming the
            first decision that is illegal and why (``apply``'s reason).
    """
    ids = action_ids(state, text)
    trial = state.copy()
    for a in ids:
        apply(trial, a)
    return ids


def action_id(state: GameState, text: str) -> int:
    """The id of the next decision of the move ``text`` from this position
    (``action_ids(state, text)[0]``; API.md): for a move without jokers its one id.

    Raises:
        ValueError: as ``action_ids``.
    """
    return action_ids(state, text)[0]
