"""The observation layout, declared once as named pieces, and ``encode(state, seat)``.

An observation is a float32 vector seen from one seat; the other seats follow in
turn order after it (``opp1`` is the next seat to play). All 52-card planes come
first (card number ``13*suit + rank``, suits C D H S, ranks A..K), then scalars.
Only what the seat may see is encoded: its own hand, the public table, the public
discard history, and what each other seat is known to hold (cards it took from the
discard pile and still holds). The stock order and the other hands never enter.

The README's observation table is generated from ``layout(n)``.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .cards import cards_of
from .engine import PLAY, GameState
from .rules import Rules

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
    ("stock_size", 1, "cards in the stock / 52"),
    ("recycles", 1, "recycles made this hand / 4"),
    ("recycle_left", 1, "1 when another recycle is allowed (max_recycles)"),
    ("turn", 1, "turns completed this hand / max_turns"),
    ("has_melded", 1, "1 when this seat melded or laid off in an earlier turn (no going rummy)"),
    ("score", 1, "own match total / 100"),
    ("target", 1, "match target / 100 (0 for a single hand)"),
)
_OPP_SCALARS = (
    ("hand_size", 1, "cards in this seat's hand / 10"),
    ("has_melded", 1, "1 when this seat melded or laid off in an earlier turn"),
    ("score", 1, "this seat's match total / 100"),
)
_RULE_SCALARS = (
    ("rule_aces", 3, "one-hot aces option: low, high, either"),
    ("rule_ace_points_11", 1, "1 when an ace left in hand counts 11"),
    ("rule_layoffs", 1, "1 when lay-offs are allowed"),
    ("rule_must_discard", 1, "1 when the last card must be a discard"),
    ("rule_rummy_multiplier", 1, "rummy_multiplier / 4"),
    ("rule_rummy_needs_no_discard", 1, "1 when going rummy needs no final discard"),
    ("rule_penalty", 1, "1 under penalty scoring"),
    ("rule_turn_over", 1, "1 when the recycle turns the pile over unshuffled"),
    ("rule_max_recycles", 2, "1 when recycles are unlimited; max_recycles / 4 otherwise"),
    ("rule_on_request", 1, "1 when an empty stock is recycled or ends the hand only on request"),
    ("rule_lowest_deadwood", 1, "1 when a dry or stalled hand pays the lowest deadwood"),
    ("rule_cards_dealt", 1, "cards dealt / 10"),
)


@lru_cache(maxsize=None)
def layout(num_players: int) -> tuple[tuple[str, int, int, str], ...]:
    """The observation layout for ``num_players``: ``(name, offset, size, meaning)`` per piece.

    Card planes are 52 wide, indexed by card number. ``oppK_*`` describe the seat
    ``K`` places after the observer in turn order.
    """
    pieces: list[tuple[str, int, str]] = [(n, 52, m) for n, m in _CARD_PLANES]
    for k in range(1, num_players):
        pieces += [(f"opp{k}_{n}", 52, m) for n, m in _OPP_PLANES]
    pieces += list(_SCALARS)
    for k in range(1, num_players):
        pieces += [(f"opp{k}_{n}", s, m) for n, s, m in _OPP_SCALARS]
    pieces += list(_RULE_SCALARS)
    out, off = [], 0
    for name, size, meaning in pieces:
        out.append((name, off, size, meaning))
        off += size
    return tuple(out)


def obs_size(num_players: int) -> int:
    """Length of the observation vector for ``num_players`` (548 for 2 players)."""
    name, off, size, _ = layout(num_players)[-1]
    return off + size


def offsets(num_players: int) -> dict[str, slice]:
    """Piece name -> slice of the observation vector."""
    return {name: slice(off, off + size) for name, off, size, _ in layout(num_players)}


def num_card_planes(num_players: int) -> int:
    """Number of 52-wide card planes at the start of the observation: 8 + 2 per other seat."""
    return len(_CARD_PLANES) + len(_OPP_PLANES) * (num_players - 1)


@lru_cache(maxsize=64)
def rule_features(rules: Rules) -> np.ndarray:
    """The ``rule_*`` scalars of the observation for ``rules`` (float32, length 15)."""
    mr = rules.max_recycles
    v = [
        rules.aces == "low", rules.aces == "high", rules.aces == "either",
        rules.ace_points == 11, rules.layoffs, rules.must_discard_to_go_out,
        rules.rummy_multiplier / 4, rules.rummy_needs_no_discard, rules.scoring == "penalty",
        rules.recycle == "turn_over", mr is None, 0.0 if mr is None else mr / 4,
        rules.dry_trigger == "on_request", rules.dry_hand == "lowest_deadwood", rules.cards_dealt / 10,
    ]
    a = np.array(v, dtype=np.float32)
    a.flags.writeable = False
    return a


_BIT: tuple[int, ...] = tuple(1 << c for c in range(52))


class Encoder:
    """Encodes positions for one player count into float32 vectors.

    ``encode(state, seat)`` returns a fresh ``(obs_size(n),)`` float32 array (the
    caller may keep and change it). The card planes are built as one Python int,
    plane ``i`` at bits ``52*i .. 52*i+51`` (so they lie exactly as in the vector),
    and turned into floats by a single ``np.unpackbits``; the rule scalars come
    from a per-rules template that every observation starts as a copy of.
    """

    def __init__(self, num_players: int) -> None:
        self.n = num_players
        self.size = obs_size(num_players)
        self.planes = num_card_planes(num_players)
        self.card_len = 52 * self.planes
        self.card_bytes = (self.card_len + 7) // 8
        self.rule_off = offsets(num_players)["rule_aces"].start
        # the other seats in turn order after each seat (opp1 first)
        self.order: tuple[tuple[int, ...], ...] = tuple(
            tuple((seat + k) % num_players for k in range(1, num_players)) for seat in range(num_players)
        )
        self._rules: Rules | None = None
        self._template = np.zeros(self.size, dtype=np.float32)

    def _set_rules(self, rules: Rules) -> None:
        t = np.zeros(self.size, dtype=np.float32)
        t[self.rule_off:] = rule_features(rules)
        self._template = t
        self._rules = rules
        self._target = (rules.target or 0) / 100
        self._max_turns = rules.max_turns
        self._max_recycles = rules.max_recycles

    def encode(self, state: GameState, seat: int) -> np.ndarray:
        """The observation of ``seat`` in ``state`` (never reads hidden cards or the stock order)."""
        rules = state.rules
        if rules is not self._rules:
            self._set_rules(rules)
        bit = _BIT
        disc = state.discard
        if disc:
            up = bit[disc[-1]]
            below = sum(map(bit.__getitem__, disc)) ^ up  # distinct cards: the sum is the union
        else:
            up = below = 0
        table = 0
        for m in state.melds:
            table |= m.mask
        acc = state.accept
        f = state.drawn_from_discard
        order = self.order[seat]
        planes = (state.hands[seat] | up << 52 | below << 104 | (bit[f] << 156 if f >= 0 else 0)
                  | table << 208 | acc[0] << 260 | acc[1] << 312 | acc[2] << 364)
        known, dby = state.known, state.discards_by
        sh = 416
        for q in order:
            planes |= known[q] << sh | dby[q] << (sh + 52)
            sh += 104
        out = self._template.copy()
        out[: self.card_len] = np.unpackbits(
            np.frombuffer(planes.to_bytes(self.card_bytes, "little"), dtype=np.uint8),
            count=self.card_len, bitorder="little",
        )
        mr = self._max_recycles
        play = state.phase == PLAY
        hands, has_melded, scores = state.hands, state.has_melded, state.scores
        sc = [
            1.0 if (state.current == seat and not state.hand_over) else 0.0,
            0.0 if play else 1.0, 1.0 if play else 0.0,
            len(state.stock) / 52, state.recycles / 4,
            1.0 if (mr is None or state.recycles < mr) else 0.0,
            state.turn / self._max_turns,
            1.0 if has_melded[seat] else 0.0,
            scores[seat] / 100,
            self._target,
        ]
        for q in order:
            sc += (hands[q].bit_count() / 10, 1.0 if has_melded[q] else 0.0, scores[q] / 100)
        out[self.card_len: self.rule_off] = sc
        return out


def decode_cards(vec: np.ndarray) -> list[int]:
    """The card numbers set in a 52-wide plane."""
    return [int(c) for c in np.flatnonzero(vec > 0.5)]


__all__ = ["layout", "obs_size", "offsets", "Encoder", "rule_features", "decode_cards", "cards_of"]
