"""What one seat sees, decoded from its observation vector and action mask.

``PlayerView(observation, action_mask)`` reads only the two arrays the env hands an
agent (API.md "Agents"), through the declared layout
(``rummy_env.observation.offsets``): nothing here touches the engine's state.
Card sets are 52-bit Python ints (bit ``13*suit + rank``), as in
``rummy_env.cards``, so agents can use fast bit arithmetic on them.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from rummy_env.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, LAYOFF_BASE, MELD_BASE, NUM_ACTIONS
from rummy_env.observation import num_card_planes, obs_size, offsets

_ACES = ("low", "high", "either")
_MASK52 = (1 << 52) - 1


@lru_cache(maxsize=None)
def _size_to_players() -> dict[int, int]:
    return {obs_size(n): n for n in range(2, 7)}


@lru_cache(maxsize=None)
def _index(n: int) -> dict[str, int]:
    """Start index of every layout piece for ``n`` players."""
    return {name: sl.start for name, sl in offsets(n).items()}


class PlayerView:
    """A decoded observation of the seat to move (or of any seat).

    Args:
        observation: float32 array of shape ``(obs_size(n),)`` for some ``n`` in 2..6
            (the player count is read from the length).
        action_mask: int8 (or bool) array of shape ``(579,)``, 1 = legal.

    Attributes (cards are ints 0..51; card sets are 52-bit int masks):
        n: number of players. ``opp`` lists below are indexed ``k - 1`` for the
            seat ``k`` places after this one in turn order.
        hand, table, discard_below, acc_set, acc_low, acc_high, acc: masks (``acc``
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
        legal: sorted list of legal action ids. can_draw_stock, can_draw_discard:
        bools. discardable: mask of the cards a discard action may name.
        meld_actions, layoff_actions: lists of legal meld / lay-off action ids.

    Raises:
        ValueError: the observation length is not that of any player count, or the
            mask is not 579 long.
    """

    __slots__ = (
        "n", "hand", "upcard", "discard_below", "drawn", "table", "acc_set", "acc_low", "acc_high", "acc",
        "opp_known", "opp_discards", "opp_hand_size", "opp_has_melded", "opp_score",
        "is_mover", "phase", "stock_size", "recycles", "recycle_left", "turn_frac", "has_melded",
        "score", "target", "aces", "ace_points", "layoffs", "must_discard", "rummy_multiplier",
        "rummy_needs_no_discard", "penalty", "turn_over", "max_recycles", "on_request",
        "lowest_deadwood", "cards_dealt", "legal", "can_draw_stock", "can_draw_discard",
        "discardable", "meld_actions", "layoff_actions",
    )

    def __init__(self, observation: np.ndarray, action_mask: np.ndarray) -> None:
        obs = np.asarray(observation)
        n = _size_to_players().get(obs.shape[0] if obs.ndim == 1 else -1)
        if n is None:
            raise ValueError(
                f"observation has shape {obs.shape}; expected a 1-D vector of length "
                f"{', '.join(str(k) for k in sorted(_size_to_players()))} (2-6 players)"
            )
        mask = np.asarray(action_mask)
        if mask.shape != (NUM_ACTIONS,):
            raise ValueError(f"action_mask has shape {mask.shape}; expected ({NUM_ACTIONS},)")
        self.n = n
        planes = num_card_planes(n)
        bits = np.packbits(obs[: 52 * planes].reshape(planes, 52) > 0.5, axis=1, bitorder="little")
        raw = bits.tobytes()
        m = [int.from_bytes(raw[7 * i: 7 * i + 7], "little") for i in range(planes)]
        self.hand = m[0]
        up = m[1]
        self.upcard = up.bit_length() - 1
        self.discard_below = m[2]
        self.drawn = m[3].bit_length() - 1
        self.table = m[4]
        self.acc_set, self.acc_low, self.acc_high = m[5], m[6], m[7]
        self.acc = m[5] | m[6] | m[7]
        self.opp_known = m[8::2]
        self.opp_discards = m[9::2]
        ix = _index(n)
        s = obs[ix["is_mover"]: ix["rule_aces"]].tolist()
        r = obs[ix["rule_aces"]:].tolist()
        self.is_mover = s[0] > 0.5
        self.phase = 1 if s[2] > 0.5 else 0
        self.stock_size = int(round(s[3] * 52))
        self.recycles = int(round(s[4] * 4))
        self.recycle_left = s[5] > 0.5
        self.turn_frac = s[6]
        self.has_melded = s[7] > 0.5
        self.score = s[8] * 100
        self.target = s[9] * 100
        o = s[10:]
        self.opp_hand_size = [int(round(o[3 * k] * 10)) for k in range(n - 1)]
        self.opp_has_melded = [o[3 * k + 1] > 0.5 for k in range(n - 1)]
        self.opp_score = [o[3 * k + 2] * 100 for k in range(n - 1)]
        self.aces = _ACES[0 if r[0] > 0.5 else 1 if r[1] > 0.5 else 2]
        self.ace_points = 11 if r[3] > 0.5 else 1
        self.layoffs = r[4] > 0.5
        self.must_discard = r[5] > 0.5
        self.rummy_multiplier = int(round(r[6] * 4))
        self.rummy_needs_no_discard = r[7] > 0.5
        self.penalty = r[8] > 0.5
        self.turn_over = r[9] > 0.5
        self.max_recycles = None if r[10] > 0.5 else int(round(r[11] * 4))
        self.on_request = r[12] > 0.5
        self.lowest_deadwood = r[13] > 0.5
        self.cards_dealt = int(round(r[14] * 10))
        legal = np.flatnonzero(mask).tolist()
        self.legal = legal
        self.can_draw_stock = self.can_draw_discard = False
        disc = 0
        melds: list[int] = []
        lays: list[int] = []
        for a in legal:
            if a >= LAYOFF_BASE:
                lays.append(a)
            elif a >= MELD_BASE:
                melds.append(a)
            elif a >= DISCARD_BASE:
                disc |= 1 << (a - DISCARD_BASE)
            elif a == DRAW_STOCK:
                self.can_draw_stock = True
            elif a == DRAW_DISCARD:
                self.can_draw_discard = True
        self.discardable = disc
        self.meld_actions = melds
        self.layoff_actions = lays

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
        up = (1 << self.upcard) if self.upcard >= 0 else 0
        return self.hand | self.table | self.discard_below | up

    def __repr__(self) -> str:
        from rummy_env.cards import CARD_TEXT, cards_of

        def t(mask: int) -> str:
            return " ".join(CARD_TEXT[c] for c in cards_of(mask)) or "-"

        return (f"PlayerView(n={self.n}, phase={'play' if self.phase else 'draw'}, hand=[{t(self.hand)}], "
                f"upcard={CARD_TEXT[self.upcard] if self.upcard >= 0 else '-'}, table=[{t(self.table)}], "
                f"stock={self.stock_size}, legal={len(self.legal)})")


__all__ = ["PlayerView"]
