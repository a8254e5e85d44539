"""Meld analysis of a hand: the arithmetic the scripted agents and the search share.

Pure functions of 52-bit card masks (card ``c`` = bit ``c``, suits C D H S of 13
cards each, rank ``A..K`` = ``c % 13``) and the ``aces`` option (``"low"``,
``"high"``, ``"either"``, RULES.md §4, or ``"around"``, §10.1: runs turn the corner);
no strategy. They build on the catalogue
and the lay-off masks of ``rummy_env.melds`` (the engine's own definitions of a meld
and of what a meld on the table takes, RULES.md §3):

- ``best_partition``: the disjoint melds of a hand that leave the least deadwood;
- ``layoff_closure``: the cards that can be laid off one after another on a table;
- ``meld_plan``: both together, for a hand and a table;
- ``partial_mask``: the cards in a partial meld (a pair, or two near cards of a suit);
- ``WINDOWS``, ``next_low``, ``next_high``: the run neighbourhood of a card.
"""
from __future__ import annotations

from .cards import cards_of, mask_points
from .melds import MELD_MASK, layoff_masks_after, melds_in

_LOW13 = (1 << 13) - 1


# ----------------------------------------------------------------- run neighbourhoods

def _build_windows() -> dict[str, tuple[tuple[int, ...], ...]]:
    out = {}
    # around (§10.1): every card has the three windows of the cyclic suit
    out["around"] = tuple(
        tuple(sum(1 << ((c // 13) * 13 + (r + k) % 13) for k in range(lo, lo + 3) if k != 0)
              for lo in (-2, -1, 0))
        for c in range(52) for r in (c % 13,))
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


WINDOWS: dict[str, tuple[tuple[int, ...], ...]] = _build_windows()
"""``WINDOWS[aces][c]``: for card ``c`` (0..51), one 52-bit mask per 3-card run
window that contains ``c`` and is legal under ``aces``: the two *other* cards of the
window (runs never wrap; an ace sits at position 0, or 13 when played high; RULES.md
§3-§4; under ``"around"`` windows turn the corner, §10.1, and every card has 3). A card
has 1 to 3 windows; an ace has one per end it may play at."""


def next_low(card: int, aces: str) -> int:
    """Mask of the card a run's low end takes once ``card`` (0..51) was laid off there:
    the card one rank below in its suit; 0 when there is none (below an ace, or below
    a 2 when ``aces == "high"`` forbids the ace low; RULES.md §3-§4). Under ``"around"``
    the king lies below the ace (§10.1; a 12-card run's low end, which takes nothing,
    is not told apart here)."""
    r = card % 13
    if aces == "around":
        return 1 << (card - 1 if r else card + 12)
    if r == 0 or (r == 1 and aces == "high"):
        return 0
    return 1 << (card - 1)


def next_high(card: int, aces: str) -> int:
    """Mask of the card a run's high end takes once ``card`` (0..51) was laid off there:
    the card one rank above in its suit (the ace above a king unless ``aces == "low"``);
    0 when there is none (above an ace played high; runs never wrap, RULES.md §4; under
    ``"around"`` the ace lies above the king and the 2 above the ace, §10.1)."""
    r = card % 13
    if aces == "around":
        return 1 << (card + 1 if r < 12 else card - 12)
    if r == 0:
        return 0
    if r == 12:
        return 0 if aces == "low" else 1 << (card - 12)
    return 1 << (card + 1)


# ----------------------------------------------------------------- partial melds

def partial_mask(cards: int, aces: str) -> int:
    """The cards of ``cards`` (52-bit mask) that are in a partial meld: another card of
    the same rank is in ``cards`` (half a set), or a card of the same suit one or two
    ranks away that some run legal under ``aces`` could hold with it (half a run;
    RULES.md §3-§4). Returns a 52-bit mask, a subset of ``cards``."""
    out = 0
    ranks = [(cards >> (13 * s)) & _LOW13 for s in range(4)]
    a, b, c, d = ranks
    pair = (a & (b | c | d)) | (b & (c | d)) | (c & d)
    for s, p in enumerate(ranks):
        if aces == "around":  # the suit is a circle (§10.1)
            q = p | p << 13 | p << 26
            near = ((q << 1) | (q >> 1) | (q << 2) | (q >> 2)) & q
            near = (near >> 13) & _LOW13
            out |= ((near | (p & pair)) & _LOW13) << (13 * s)
            continue
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
    """The disjoint melds of ``hand`` (52-bit mask) that leave the least deadwood
    (RULES.md §3: a card belongs to one meld only; §5: deadwood points with an ace
    worth ``ace_points``, 1 or 11).

    Returns ``(melded_points, meld_ids)``: the points the melds take out of the hand
    (int) and their catalogue ids (``rummy_env.melds``, a tuple of ints), legal under
    ``aces``. Ties go to the partition found first (deterministic). Results are
    cached (at most 200,000 entries; the cache is emptied when full).
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


# ----------------------------------------------------------------- lay-offs

def layoff_closure(cards: int, layoff_set: int, layoff_low: int, layoff_high: int, aces: str) -> int:
    """The cards of ``cards`` that can be laid off one after another on a table that
    takes ``layoff_set`` / ``layoff_low`` / ``layoff_high`` (52-bit masks, as
    ``GameState.layoff_masks``): a card laid on a run's end opens the next card of that
    end (``next_low`` / ``next_high``), a card laid on a set fills it (RULES.md §3-§4).
    Returns a 52-bit mask, a subset of ``cards``."""
    placed = 0
    while True:
        x = cards & (layoff_set | layoff_low | layoff_high)
        if not x:
            return placed
        for c in cards_of(x):
            b = 1 << c
            cards &= ~b
            placed |= b
            if layoff_low & b:
                layoff_low = (layoff_low & ~b) | next_low(c, aces)
            elif layoff_high & b:
                layoff_high = (layoff_high & ~b) | next_high(c, aces)
            else:
                layoff_set &= ~b


def meld_plan(hand: int, aces: str, ace_points: int,
              layoff_masks: tuple[int, int, int] | None) -> tuple[tuple[int, ...], int, int]:
    """What ``hand`` (52-bit mask) can put on the table: the melds of its
    ``best_partition`` and, when ``layoff_masks`` (the table's ``(layoff_set,
    layoff_low, layoff_high)``; ``None`` when lay-offs are switched off) is given, the
    rest of the hand that ``layoff_closure`` lays off on the table with those melds
    added (``melds.layoff_masks_after``; RULES.md §3).

    Returns ``(meld_ids, melded, placed)``: catalogue ids (tuple of ints), the mask of
    the melded cards and the mask of the cards laid off (0 without ``layoff_masks``);
    ``hand & ~(melded | placed)`` is what stays in the hand.
    """
    _, ids = best_partition(hand, aces, ace_points)
    melded = 0
    for m in ids:
        melded |= MELD_MASK[m]
    if layoff_masks is None:
        return ids, melded, 0
    s, lo, hi = layoff_masks_after(ids, *layoff_masks, aces)
    return ids, melded, layoff_closure(hand & ~melded, s, lo, hi, aces)


def goes_out(rest: int, drawn: int, must_discard: bool) -> bool:
    """Whether a hand goes out this turn once every card but ``rest`` (52-bit mask) is
    melded or laid off (RULES.md §5): nothing is left and the rules do not require a final
    discard (``must_discard_to_go_out``), or one card is left to discard and it is not
    ``drawn``, the card taken from the discard pile this turn (-1: none), which may not be
    discarded in the same turn (§3)."""
    n = rest.bit_count()
    return (n == 0 and not must_discard) or (n == 1 and (drawn < 0 or rest != 1 << drawn))


__all__ = ["WINDOWS", "best_partition", "goes_out", "layoff_closure", "meld_plan", "next_high", "next_low",
           "partial_mask"]
