"""The fixed meld catalogue and meld arithmetic (RULES.md §3 and §4).

Every meld that can ever be laid down has a fixed id, independent of the rules in
force: first the sets (per rank A..K: the four 3-card sets, then the 4-card set),
then the runs (per suit C D H S, per low end, per high end). Runs are described by
*positions* ``0..13`` in their suit, where position ``p`` holds rank ``p`` and
position 13 holds the ace played high; a run is the positions ``lo..hi``. The
full 13-card suit appears once (as ``lo=0, hi=12``).

Which catalogue melds are legal depends only on ``Rules.aces`` (RULES.md §4):
``low`` forbids runs through position 13, ``high`` forbids runs through position 0
(the full suit stays legal as 2..A), ``either`` allows both; those runs never wrap.

``aces="around"`` (RULES.md §10.1) allows every one of them and the runs that turn
the corner K-A-2, catalogue ids ``369..588`` (``NUM_MELDS_AROUND``): per suit, per low
end ``lo`` (12 = K, 11 = Q, ...) and length, positions ``lo..hi`` with ``hi >= 14``
(position ``p`` holds rank ``p % 13``). The ids below 369 keep their meaning.
"""
from __future__ import annotations

from .cards import CARD_TEXT, RANK_MASKS

SET, RUN = 0, 1

# Catalogue columns (index = meld id).
MELD_MASK: list[int] = []
MELD_KIND: list[int] = []
MELD_KEY: list[int] = []  # rank for a set, suit for a run
MELD_LO: list[int] = []  # run positions (sets: -1)
MELD_HI: list[int] = []


def _pos_card(suit: int, pos: int) -> int:
    return suit * 13 + (pos % 13)


for _r in range(13):
    _suit_groups = [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3), (0, 1, 2, 3)]
    for _g in _suit_groups:
        MELD_MASK.append(sum(1 << (s * 13 + _r) for s in _g))
        MELD_KIND.append(SET)
        MELD_KEY.append(_r)
        MELD_LO.append(-1)
        MELD_HI.append(-1)
NUM_SETS = len(MELD_MASK)  # 65

def _append_runs(windows: list[tuple[int, int]]) -> None:
    """Add the runs ``lo..hi`` of ``windows`` to the catalogue, suit by suit."""
    for s in range(4):
        for lo, hi in windows:
            MELD_MASK.append(sum(1 << _pos_card(s, p) for p in range(lo, hi + 1)))
            MELD_KIND.append(RUN)
            MELD_KEY.append(s)
            MELD_LO.append(lo)
            MELD_HI.append(hi)


_RUN_WINDOWS = [(lo, hi) for lo in range(14) for hi in range(lo + 2, 14) if (lo, hi) not in ((0, 13), (1, 13))]
RUNS_PER_SUIT = len(_RUN_WINDOWS)  # 76
_append_runs(_RUN_WINDOWS)
NUM_MELDS = len(MELD_MASK)  # 369: the catalogue of every table whose runs do not turn the corner

# runs that turn the corner K-A-2 (RULES.md §10.1): low end lo, length 3..12, through positions 13 and 14
_WRAP_WINDOWS = [(lo, lo + length - 1) for lo in range(12, 1, -1) for length in range(3, 13) if lo + length - 1 >= 14]
WRAPS_PER_SUIT = len(_WRAP_WINDOWS)  # 55
_append_runs(_WRAP_WINDOWS)
NUM_MELDS_AROUND = len(MELD_MASK)  # 589: with aces="around"

MELD_ID_BY_MASK: dict[int, int] = {m: i for i, m in enumerate(MELD_MASK)}
assert len(MELD_ID_BY_MASK) == NUM_MELDS_AROUND

FULL_SUIT_LEN = 13


def meld_allowed(meld_id: int, aces: str) -> bool:
    """Whether catalogue meld ``meld_id`` is a legal meld under ``aces`` (RULES.md §4, §10.1)."""
    if MELD_KIND[meld_id] == SET or aces == "around":
        return True
    if meld_id >= NUM_MELDS:
        return False
    lo, hi = MELD_LO[meld_id], MELD_HI[meld_id]
    if hi - lo + 1 == FULL_SUIT_LEN:
        return True
    if aces == "low":
        return hi <= 12
    if aces == "high":
        return lo >= 1
    return True


def meld_cards_text(meld_id: int) -> list[str]:
    """Card texts of a catalogue meld, runs in rank order (an ace played high last)."""
    if MELD_KIND[meld_id] == SET:
        r = MELD_KEY[meld_id]
        return [CARD_TEXT[s * 13 + r] for s in range(4) if MELD_MASK[meld_id] >> (s * 13 + r) & 1]
    s = MELD_KEY[meld_id]
    return [CARD_TEXT[_pos_card(s, p)] for p in range(MELD_LO[meld_id], MELD_HI[meld_id] + 1)]


def _build_run_tables() -> dict[str, list[list[tuple[int, ...]]]]:
    """For each aces option and suit: 13-bit suit pattern -> ids of the runs inside it."""
    tables: dict[str, list[list[tuple[int, ...]]]] = {}
    for aces in ("low", "high", "either", "around"):
        per_suit = []
        for s in range(4):
            base = NUM_SETS + s * RUNS_PER_SUIT
            allowed = [
                (base + i, lo, hi)
                for i, (lo, hi) in enumerate(_RUN_WINDOWS)
                if meld_allowed(base + i, aces)
            ]
            if aces == "around":
                wbase = NUM_MELDS + s * WRAPS_PER_SUIT
                allowed += [(wbase + i, lo, hi) for i, (lo, hi) in enumerate(_WRAP_WINDOWS)]
            table: list[tuple[int, ...]] = []
            for pattern in range(1 << 13):
                p14 = pattern | (pattern << 13)  # the suit twice: positions 13.. hold A, 2, ... again
                if not (p14 & (p14 >> 1) & (p14 >> 2)):
                    table.append(())
                    continue
                ids = tuple(
                    mid for mid, lo, hi in allowed if (p14 >> lo) & ((1 << (hi - lo + 1)) - 1) == (1 << (hi - lo + 1)) - 1
                )
                table.append(ids)
            per_suit.append(table)
        tables[aces] = per_suit
    return tables


RUNS_IN_PATTERN = _build_run_tables()

# sets inside a rank's cards: rank-mask subset -> ids of the sets it contains
SETS_IN_RANK: dict[int, tuple[int, ...]] = {}
for _r in range(13):
    for _sub in range(16):
        _m = sum(1 << (s * 13 + _r) for s in range(4) if _sub >> s & 1)
        SETS_IN_RANK[_m] = tuple(
            i for i in range(_r * 5, _r * 5 + 5) if MELD_MASK[i] & _m == MELD_MASK[i]
        )

_LOW13 = (1 << 13) - 1


def melds_in(hand: int, aces: str) -> list[int]:
    """Ids of every catalogue meld contained in ``hand`` (a 52-bit mask) that is legal
    under ``aces``, in increasing id order (RULES.md §3-§4)."""
    out: list[int] = []
    a = hand & _LOW13
    b = (hand >> 13) & _LOW13
    c = (hand >> 26) & _LOW13
    d = (hand >> 39) & _LOW13
    three = (a & b & (c | d)) | (c & d & (a | b))
    while three:
        low = three & -three
        r = low.bit_length() - 1
        out.extend(SETS_IN_RANK[hand & RANK_MASKS[r]])
        three ^= low
    tables = RUNS_IN_PATTERN[aces]
    if aces == "around":
        for s, pat in enumerate((a, b, c, d)):
            p = pat | pat << 13
            if p & (p >> 1) & (p >> 2):
                out.extend(tables[s][pat])
        out.sort()
        return out
    for s, pat in enumerate((a, b, c, d)):
        if pat & (pat >> 1) & (pat >> 2) or (pat & 1 and pat >> 11 == 3):
            out.extend(tables[s][pat])
    return out


def meld_of_cards(mask: int, aces: str) -> int:
    """The catalogue id of the meld made of exactly the cards in ``mask``.

    Raises:
        ValueError: the cards are not a set or run, or the run needs the ace on the
            side that ``aces`` forbids.
    """
    mid = MELD_ID_BY_MASK.get(mask)
    if mid is None:
        raise ValueError(
            f"{' '.join(CARD_TEXT[c] for c in range(52) if mask >> c & 1)} is not a meld: "
            "a set is 3 or 4 cards of one rank, a run 3 or more consecutive cards of one suit"
        )
    if not meld_allowed(mid, aces):
        raise ValueError(
            f"{' '.join(meld_cards_text(mid))} is not a run with aces {aces!r} "
            "(low: A-2-3 only; high: Q-K-A only; either: both; only aces='around' turns the corner K-A-2)"
        )
    return mid


# ---------------------------------------------------------------- lay-offs (RULES.md §3-§4)

def meld_layoff_masks(kind: int, key: int, mask: int, lo: int, hi: int, aces: str) -> tuple[int, int, int]:
    """The lay-off masks of one meld on the table: ``(layoff_set, layoff_low, layoff_high)``,
    the cards it takes as its missing 4th card (a 3-card set), at a run's low end and at
    its high end (runs never wrap; ``aces`` decides whether an ace extends an end).
    ``kind``/``key``/``mask``/``lo``/``hi`` as the catalogue's ``MELD_*`` (positions
    ``0..13``, 13 = ace high; with ``aces="around"`` any ``lo..hi``, position ``p`` holding
    rank ``p % 13``, RULES.md §10.1: both ends turn the corner, a 12-card run takes its
    missing rank at its high end only). The engine (``GameState.layoff_masks``) and the
    heuristic use it."""
    if kind == SET:
        return (RANK_MASKS[key] & ~mask if mask.bit_count() == 3 else 0), 0, 0
    if hi - lo + 1 >= 13:
        return 0, 0, 0
    base = key * 13
    if aces == "around":
        high = 1 << (base + (hi + 1) % 13)
        low = 0 if hi - lo + 1 == 12 else 1 << (base + (lo - 1) % 13)
        return 0, low, high
    low = high = 0
    p = lo - 1
    if p >= 0 and not (p == 0 and aces == "high"):
        low = 1 << (base + p)
    p = hi + 1
    if p <= 13 and not (p == 13 and aces == "low"):
        high = 1 << (base + p % 13)
    return 0, low, high


def layoff_masks_after(meld_ids, layoff_set: int, layoff_low: int, layoff_high: int, aces: str) -> tuple[int, int, int]:
    """The table's lay-off masks once the catalogue melds ``meld_ids`` join it (``meld_layoff_masks``
    of each, added to the given masks)."""
    for m in meld_ids:
        a, b, c = meld_layoff_masks(MELD_KIND[m], MELD_KEY[m], MELD_MASK[m], MELD_LO[m], MELD_HI[m], aces)
        layoff_set |= a
        layoff_low |= b
        layoff_high |= c
    return layoff_set, layoff_low, layoff_high
