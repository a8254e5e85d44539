"""Scripted baseline agents: ``GreedyAgent`` and ``HeuristicAgent`` (``RandomAgent`` is
``rummy_env.observation.RandomAgent``, re-exported by ``rummy_env.agents``).

Each reads only its observation and action mask (through ``rummy_env.observation.PlayerView``),
returns one legal action id per call, and is deterministic given ``seed(s)``. They
are written for speed (52-bit int masks, cached meld partitions) because they run
as training opponents millions of times.

The heuristic plays the strategy of the rule texts in ``shared/seeds``: meld early
unless going rummy is one draw away; lay off relentlessly; keep cards with two
possible homes; discard dead ranks before live ones; do not feed an opponent what it
is known to collect or can lay off; take the upcard only when it will be used; late
in a hand keep low cards.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from rummy_env.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, LAYOFF_BASE, MELD_BASE
from rummy_env.cards import RANK_MASKS, SUIT_MASKS, card_points, cards_of, mask_points
from rummy_env.melds import MELD_MASK, accepts_after, melds_in
from rummy_env.observation import PlayerView, SeededAgent

FULL = (1 << 52) - 1
_LOW13 = (1 << 13) - 1


# card arithmetic is the engine's own (rummy_env.cards): one definition of points and bits
_bits = cards_of
_POINTS = {ap: tuple(card_points(c, ap) for c in range(52)) for ap in (1, 11)}


# ----------------------------------------------------------------- run neighbourhoods

def _build_windows() -> dict[str, tuple[tuple[int, ...], ...]]:
    """Per aces option and card: masks of the two *other* cards of each 3-card run
    window that contains the card (runs never wrap; RULES.md §4)."""
    out = {}
    for aces in ("low", "high", "either"):
        per_card = []
        for c in range(52):
            s, r = divmod(c, 13)
            positions = [r] if r else ([0] if aces != "high" else []) + ([13] if aces != "low" else [])
            wins = []
            for p in positions:
                for lo in (p - 2, p - 1, p):
                    hi = lo + 2
                    if lo < 0 or hi > 13:
                        continue
                    if aces == "low" and hi == 13 or aces == "high" and lo == 0:
                        continue
                    m = 0
                    for q in range(lo, hi + 1):
                        if q != p:
                            m |= 1 << (s * 13 + q % 13)
                    wins.append(m)
            per_card.append(tuple(wins))
        out[aces] = tuple(per_card)
    return out


WINDOWS = _build_windows()


def _lower(c: int, aces: str) -> int:
    """Mask of the card a run's low end takes after ``c`` was laid there (0 if none)."""
    r = c % 13
    if r == 0 or (r == 1 and aces == "high"):
        return 0
    return 1 << (c - 1)


def _upper(c: int, aces: str) -> int:
    """Mask of the card a run's high end takes after ``c`` was laid there (0 if none)."""
    r = c % 13
    if r == 0:
        return 0
    if r == 12:
        return 0 if aces == "low" else 1 << (c - 12)
    return 1 << (c + 1)


def partial_mask(cards: int, aces: str) -> int:
    """Cards of ``cards`` in a partial meld: another card of the same rank, or a card of
    the same suit one or two ranks away that some legal run could hold with it."""
    out = 0
    ranks = [(cards >> (13 * s)) & _LOW13 for s in range(4)]
    a, b, c, d = ranks
    pair = (a & (b | c | d)) | (b & (c | d)) | (c & d)
    for s, p in enumerate(ranks):
        q = p if aces != "high" else p & ~1
        if aces != "low":
            q |= (p & 1) << 13
        near = ((q << 1) | (q >> 1) | (q << 2) | (q >> 2)) & q
        near = (near & _LOW13) | ((near >> 13) & 1)
        out |= ((near | (p & pair)) & _LOW13) << (13 * s)
    return out


# ----------------------------------------------------------------- meld partition

_PART_CACHE: dict[tuple[int, str, int], tuple[int, tuple[int, ...]]] = {}
_CACHE_MAX = 200_000


def best_partition(hand: int, aces: str, ace_points: int = 1) -> tuple[int, tuple[int, ...]]:
    """The disjoint melds of ``hand`` (52-bit mask) that leave the least deadwood.

    Returns ``(melded_points, meld_ids)``: the points the melds take out of the hand
    and their catalogue ids (``rummy_env.melds``), legal under ``aces``. Ties go to
    the partition found first (deterministic). Results are cached.
    """
    key = (hand, aces, ace_points)
    hit = _PART_CACHE.get(key)
    if hit is not None:
        return hit
    ms = melds_in(hand, aces)
    if not ms:
        res: tuple[int, tuple[int, ...]] = (0, ())
    else:
        cover = 0
        for m in ms:
            cover |= MELD_MASK[m]
        low = cover & -cover
        # either the lowest coverable card is left out, or one meld holding it is used
        res = best_partition(hand & ~low, aces, ace_points)
        for m in ms:
            mm = MELD_MASK[m]
            if mm & low:
                sub_pts, sub_ids = best_partition(hand & ~mm, aces, ace_points)
                total = sub_pts + mask_points(mm, ace_points)
                if total > res[0]:
                    res = (total, (m,) + sub_ids)
    if len(_PART_CACHE) >= _CACHE_MAX:
        _PART_CACHE.clear()
    _PART_CACHE[key] = res
    return res


def layoff_closure(cards: int, acc_set: int, acc_low: int, acc_high: int, aces: str) -> int:
    """The cards of ``cards`` that can be laid off one after another on a table whose
    accept masks are given (a card laid on a run's end opens the next one)."""
    placed = 0
    while True:
        x = cards & (acc_set | acc_low | acc_high)
        if not x:
            return placed
        for c in _bits(x):
            b = 1 << c
            cards &= ~b
            placed |= b
            if acc_low & b:
                acc_low = (acc_low & ~b) | _lower(c, aces)
            elif acc_high & b:
                acc_high = (acc_high & ~b) | _upper(c, aces)
            else:
                acc_set &= ~b


# ----------------------------------------------------------------- agents

class _Scripted(SeededAgent):
    """Shared plumbing of the scripted agents: seeding (the agents are deterministic;
    the seed only breaks exact ties), the decoded view, fallbacks."""

    name = "scripted"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The agent's legal action id for this observation.

        Args:
            observation: float32 ``(obs_size(n),)`` as the env returns it.
            action_mask: int8 ``(579,)``, 1 = legal.

        Raises:
            ValueError: bad shapes, or no action is legal (the seat is not to move).
        """
        v = PlayerView(observation, action_mask)
        if not v.legal:
            raise ValueError("no legal action in the mask: this seat is not to move")
        if v.can_draw_stock or v.can_draw_discard:
            if not v.can_draw_discard:
                return DRAW_STOCK
            if not v.can_draw_stock:
                return DRAW_DISCARD
            return DRAW_DISCARD if self._take_upcard(v) else DRAW_STOCK
        a = self._play(v)
        return a

    def _take_upcard(self, v: PlayerView) -> bool:
        raise NotImplementedError

    def _play(self, v: PlayerView) -> int:
        raise NotImplementedError


def _upcard_joins_meld(v: PlayerView) -> bool:
    u = v.upcard
    if u < 0:
        return False
    ub = 1 << u
    for m in melds_in(v.hand | ub, v.aces):
        if MELD_MASK[m] & ub:
            return True
    return False


class GreedyAgent(_Scripted):
    """Greedy baseline.

    Draw: takes the upcard only when it completes or extends a meld with cards in
    hand, or can be laid off on the table; otherwise draws from the stock.
    Play: melds (the largest legal meld first) and lays off everything it can, then
    discards its highest-value card that is not part of a partial meld (a pair, or a
    same-suit card one or two ranks away); when every card is in a partial meld, the
    highest-value card. Ties go to the higher rank, then the higher suit.
    """

    name = "greedy"

    def _take_upcard(self, v: PlayerView) -> bool:
        if v.upcard < 0:
            return False
        if v.layoffs and v.acc >> v.upcard & 1:
            return True
        return _upcard_joins_meld(v)

    def _play(self, v: PlayerView) -> int:
        if v.meld_actions:
            ap = v.ace_points
            best = max(v.meld_actions, key=lambda a: (MELD_MASK[a - MELD_BASE].bit_count(),
                                                      mask_points(MELD_MASK[a - MELD_BASE], ap), a))
            return best
        if v.layoff_actions:
            return v.layoff_actions[0]
        disc = v.discardable
        if not disc:  # only a lay-off or meld could be legal; covered above
            return v.legal[0]
        cand = disc & ~partial_mask(v.hand, v.aces) or disc
        pts = _POINTS[v.ace_points]
        c = max(_bits(cand), key=lambda c: (pts[c], c % 13, c))
        return DISCARD_BASE + c


class HeuristicAgent(_Scripted):
    """The rule texts' strategy (``shared/seeds``), on the observation only.

    - Takes the upcard only when it will be used this turn: it joins a meld of the
      best partition of the hand, or it can be laid off (RULES texts: never on vague
      hope).
    - Melds the best partition (least deadwood) early and lays off every other card
      the table takes, unless going rummy is one draw away (nothing melded yet, at
      most one unplaced card left after this discard, opponents not about to go out):
      then it holds everything back and only discards.
    - Discards the card with the fewest ways of becoming useful: scores each
      candidate by its live "outs" (cards still unseen that would complete a meld
      with it; a card with two homes has more), minus its points (weighted double
      late in the hand, when the stock is small or an opponent is close to going
      out), plus a danger term for cards an opponent is known to collect (same rank
      or a near card of the same suit as a card it took from the discard pile) or can
      lay off on the table; dead cards (no meld can still form through them) go first.
    """

    name = "heuristic"

    # weights of the discard score (points are the unit)
    W_OUT = 8.0
    W_WEAK = 2.0
    W_ACC = 12.0
    W_KNOWN_RANK = 10.0
    W_KNOWN_NEAR = 8.0
    W_OPP_LIVE = 1.0
    W_DEAD = 2.0
    W_NEAR_TABLE = 1.5
    LATE_STOCK = 10
    LATE_WEIGHT = 2.0
    HOLD_FOR_RUMMY = True
    HOLD_MELDS = 0
    EXCLUDE_KNOWN = True
    TUNABLE = ("W_OUT", "W_WEAK", "W_ACC", "W_KNOWN_RANK", "W_KNOWN_NEAR", "W_OPP_LIVE", "W_DEAD",
               "W_NEAR_TABLE", "LATE_STOCK", "LATE_WEIGHT", "HOLD_MELDS")

    def __init__(self, seed: int | None = None, **weights: float) -> None:
        """``weights`` override the class's discard weights for this agent (names in
        ``TUNABLE``, e.g. ``W_OUT=24``); the baseline ``heuristic`` uses none.
        ``HOLD_MELDS=1`` switches the meld timing: the agent keeps its melds and
        lay-offs in hand until it can go out in one turn (melding early lets opponents
        lay off on the melds, which speeds their going out; RULES.md §3). This
        variant wins far more hands than the baseline (it is the training teacher).

        Raises:
            ValueError: an unknown weight name, a value that is not a finite number >= 0, a
                fraction for ``LATE_STOCK`` (a card count), or ``HOLD_MELDS`` other
                than 0 or 1.
        """
        super().__init__(seed)
        for k, v in weights.items():
            if k not in self.TUNABLE:
                raise ValueError(f"unknown heuristic weight {k!r}; weights: {', '.join(self.TUNABLE)}")
            if k == "HOLD_MELDS":
                if isinstance(v, bool) or not isinstance(v, numbers.Real) or v not in (0, 1):
                    raise ValueError(f"heuristic option HOLD_MELDS is 0 (meld early) or 1 (hold melds "
                                     f"until going out), got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0:
                raise ValueError(f"heuristic weight {k} must be a finite number >= 0, got {v!r}")
            kind = type(getattr(type(self), k))
            if kind is int and v != int(v):
                raise ValueError(f"heuristic weight {k} counts cards: a whole number, got {v!r}")
            setattr(self, k, kind(v))

    def _take_upcard(self, v: PlayerView) -> bool:
        u = v.upcard
        if u < 0:
            return False
        ub = 1 << u
        h2 = v.hand | ub
        _, ids = best_partition(h2, v.aces, v.ace_points)
        pm = 0
        for m in ids:
            pm |= MELD_MASK[m]
        if pm & ub:
            return True
        if not v.layoffs:
            return False
        s, lo, hi = accepts_after(ids, v.acc_set, v.acc_low, v.acc_high, v.aces)
        return bool(layoff_closure(h2 & ~pm, s, lo, hi, v.aces) & ub)

    def _play(self, v: PlayerView) -> int:
        hand = v.hand
        aces = v.aces
        _, ids = best_partition(hand, aces, v.ace_points)
        pm = 0
        for m in ids:
            pm |= MELD_MASK[m]
        dead_wood = hand & ~pm
        if v.layoffs:
            s, lo, hi = accepts_after(ids, v.acc_set, v.acc_low, v.acc_high, aces)
            placed = layoff_closure(dead_wood, s, lo, hi, aces)
        else:
            placed = 0
        unplaced = dead_wood & ~placed
        fbit = (1 << v.drawn) if v.drawn >= 0 else 0
        nu = unplaced.bit_count()

        hold = False
        if pm or placed:
            go_now = (nu == 0 and not v.must_discard) or (nu == 1 and not unplaced & fbit)
            if go_now:
                pass
            elif self.HOLD_MELDS:
                hold = True
            elif self.HOLD_FOR_RUMMY and not v.has_melded and v.rummy_multiplier > 1:
                need = 0 if v.rummy_needs_no_discard else 1
                if nu - 1 <= need and min(v.opp_hand_size) >= 3 and v.stock_size >= 4:
                    hold = True
        if not hold:
            for m in ids:
                a = MELD_BASE + m
                if a in v.meld_actions:
                    return a
            if v.layoff_actions:
                pts = _POINTS[v.ace_points]
                best = None
                for a in v.layoff_actions:
                    c = (a - LAYOFF_BASE) // 3
                    if dead_wood >> c & 1:
                        key = (pts[c], -a)
                        if best is None or key > best[0]:
                            best = (key, a)
                if best is not None:
                    return best[1]
        disc = v.discardable
        if not disc:
            return (v.meld_actions or v.layoff_actions or v.legal)[0]
        cand = disc & unplaced or disc & dead_wood or disc
        return DISCARD_BASE + self._choose_discard(v, cand, unplaced)

    def _choose_discard(self, v: PlayerView, cand: int, free: int) -> int:
        aces = v.aces
        pts = _POINTS[v.ace_points]
        up = (1 << v.upcard) if v.upcard >= 0 else 0
        avail = FULL & ~(v.hand | v.table | v.discard_below | up)
        known = v.opp_known_all
        mine = avail & ~known if self.EXCLUDE_KNOWN else avail  # cards we could still draw
        acc = v.acc if v.layoffs else 0
        late = v.stock_size <= self.LATE_STOCK or min(v.opp_hand_size) <= 2
        wp = self.LATE_WEIGHT if late else 1.0
        windows = WINDOWS[aces]
        near_acc = 0
        if acc:
            for c in _bits(acc):
                near_acc |= _lower(c, aces) | _upper(c, aces)
            near_acc &= ~acc
        best = None
        for c in _bits(cand):
            b = 1 << c
            r = c % 13
            rank = RANK_MASKS[r] & ~b
            outs = 0
            weak = 0.0
            live_rank = rank & mine
            if rank & free:
                outs |= live_rank
            elif live_rank.bit_count() >= 2:
                weak += 1
            opp_live = (rank & avail).bit_count() >= 2
            for w in windows[c]:
                infree = w & free
                missing = w & ~free
                if infree:
                    if missing & mine == missing:
                        outs |= missing
                elif w & mine == w:
                    weak += 1
                if w & avail == w:
                    opp_live = True
            score = self.W_OUT * outs.bit_count() + self.W_WEAK * weak - wp * pts[c]
            danger = 0.0
            if acc & b:
                danger += self.W_ACC
            if known:
                if known & rank:
                    danger += self.W_KNOWN_RANK
                s = c // 13
                kn = known & SUIT_MASKS[s]
                if kn:
                    for w in windows[c]:
                        if w & kn:
                            danger += self.W_KNOWN_NEAR
                            break
            if near_acc & b:
                danger += self.W_NEAR_TABLE
            if opp_live:
                danger += self.W_OPP_LIVE
            elif not outs and not acc & b:
                danger -= self.W_DEAD
            score += danger
            key = (score, -pts[c], -r, -c)
            if best is None or key < best[0]:
                best = (key, c)
        return best[1]


__all__ = [
    "RandomAgent", "GreedyAgent", "HeuristicAgent",
    "best_partition", "layoff_closure", "partial_mask", "mask_points",
]
