"""Cards as integers, hands as 52-bit masks (RULES.md §1).

A card is an ``int`` in ``0..51``: ``card = suit * 13 + rank`` with ranks
``A 2 3 4 5 6 7 8 9 T J Q K`` as ``0..12`` and suits ``C D H S`` as ``0..3``.
A set of cards (a hand, the table's melds) is a Python ``int`` used as a 52-bit
mask: bit ``card`` is set when the card is present. Bit arithmetic on these ints
is the engine's whole representation of card sets.

Tables with jokers or two decks (RULES.md §10.2-10.3) add the joker, card ``52``
(``JOKER``, text ``JK``), and hold a card up to twice (a joker up to four times). Their
hands are *count masks*: layer ``k`` (bits ``53k .. 53k+52``) holds the cards of which
the hand has more than ``k`` copies, so layer 0 is the set of distinct cards and a
one-deck joker-free hand is exactly its 52-bit mask (``count_add`` / ``count_remove``
keep the layers nested; ``count_of`` reads one card's count).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from .brief import brief

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
NUM_CARDS = 52
FULL_DECK = (1 << NUM_CARDS) - 1

CARD_TEXT: tuple[str, ...] = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(NUM_CARDS))
"""Printed form of cards 0..51."""
TEXT_OF: tuple[str, ...] = CARD_TEXT + ("JK",)
"""Printed form of cards 0..51 and of the joker (52, ``JK``)."""

JOKER = 52
"""The joker's card number (RULES.md §10.2); ``JK`` in text."""
JOKER_POINTS = 15
"""A joker left in a hand counts 15 (RULES.md §10.2)."""
LAYER = 53
"""Width of one layer of a count mask (52 cards and the joker)."""
LAYER_MASK = (1 << LAYER) - 1
MAX_COPIES = 4
"""Layers of a count mask: a card occurs at most twice, the joker at most 4 times."""
_SPREAD = sum(1 << (LAYER * k) for k in range(MAX_COPIES))
ALL_LAYERS = LAYER_MASK * _SPREAD

# Bit masks of every card of one rank / one suit.
RANK_MASKS: tuple[int, ...] = tuple(sum(1 << (s * 13 + r) for s in range(4)) for r in range(13))
SUIT_MASKS: tuple[int, ...] = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))


class CardError(ValueError):
    """A card text or card number that names no card."""


def card_points(card: int, ace_points: int = 1) -> int:
    """Deadwood value of one card (RULES.md §1): A = ``ace_points``, 2-10 face value, J Q K = 10."""
    r = card % 13
    if r == 0:
        return ace_points
    return min(r + 1, 10)


def parse_card(text: str, joker: bool = False) -> int:
    """Parse one card's text into its number (RULES.md §1).

    Accepts rank then suit, case-insensitive, ``T`` or ``10`` for ten, and the suit
    symbols ``♣ ♦ ♥ ♠``: ``"TH"``, ``"10h"``, ``"T♥"`` all give the ten of hearts.
    With ``joker=True``, ``"JK"`` gives the joker (``JOKER``, RULES.md §10.2).

    Raises:
        CardError (a ``ValueError``): the text names no card (or the joker when
            ``joker`` is false).
    """
    if not isinstance(text, str):
        raise CardError(f"a card must be text such as 'TH', got {brief(text)}")
    t = text.strip()
    if not t:
        raise CardError("empty card text; a card is a rank (A 2-9 T/10 J Q K) then a suit (C D H S)")
    if t.upper() == "JK":
        if joker:
            return JOKER
        raise CardError("'JK' (a joker) is not a card at this table: it has no jokers (RULES.md §10.2)")
    suit_ch = SUIT_SYMBOLS.get(t[-1], t[-1].upper())
    rank_txt = t[:-1].upper()
    if rank_txt == "10":
        rank_txt = "T"
    if len(rank_txt) != 1 or rank_txt not in RANKS or suit_ch not in SUITS:
        raise CardError(
            f"{brief(text)} is not a card; a card is a rank (A 2-9 T/10 J Q K) then a suit (C D H S or ♣♦♥♠), e.g. 'TH'"
        )
    return SUITS.index(suit_ch) * 13 + RANKS.index(rank_txt)


def card_text(card: int) -> str:
    """The printed form of a card number, e.g. ``34 -> '9H'``, ``52 -> 'JK'``."""
    if not isinstance(card, int) or not 0 <= card <= JOKER:
        raise CardError(f"card number must be an int in 0..52 (52 the joker), got {brief(card)}")
    return TEXT_OF[card]


def mask_of(cards: Iterable[int]) -> int:
    """The 52-bit mask of an iterable of card numbers."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """The card numbers in a mask, in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_points(mask: int, ace_points: int = 1) -> int:
    """Total deadwood value of the cards in a mask (RULES.md §1)."""
    total = 0
    for r in range(13):
        n = (mask & RANK_MASKS[r]).bit_count()
        if n:
            total += n * (ace_points if r == 0 else min(r + 1, 10))
    return total


def count_add(hand: int, card: int) -> int:
    """The count mask ``hand`` with one more copy of ``card`` (0..52). Unchecked (the
    engine's hot path): the caller keeps a card within 2 copies and the joker within
    ``MAX_COPIES``, as a deal of ``Rules.deck_size`` cards does."""
    bit = 1 << card
    while hand & bit:
        bit <<= LAYER
    return hand | bit


def count_add_set(hand: int, cards: int) -> int:
    """The count mask ``hand`` with one more copy of each card of the 53-bit set ``cards``."""
    spread = cards * _SPREAD
    return (hand | ((hand << LAYER) & spread) | cards) & ALL_LAYERS


def count_remove(hand: int, card: int) -> int:
    """The count mask ``hand`` with one copy of ``card`` fewer. Unchecked: the card must
    be held (a card not held leaves ``hand`` as it is)."""
    bit = 1 << card
    while hand & (bit << LAYER):
        bit <<= LAYER
    return hand & ~bit


def count_remove_set(hand: int, cards: int) -> int:
    """The count mask ``hand`` with one copy fewer of each card of the 53-bit set
    ``cards``. Unchecked: each must be held (a card not held is left out)."""
    spread = cards * _SPREAD
    return (hand & ~spread) | ((hand >> LAYER) & spread)


def count_of(hand: int, card: int) -> int:
    """Copies of ``card`` in the count mask ``hand``."""
    n = 0
    while hand >> (card + LAYER * n) & 1:
        n += 1
    return n


def count_cards(hand: int) -> list[int]:
    """Every card of a count mask, a copy per occurrence, in increasing order."""
    out: list[int] = []
    k = 0
    while hand:
        out += cards_of(hand & LAYER_MASK)
        hand >>= LAYER
        k += 1
    out.sort()
    return out


def count_mask_of(cards: Iterable[int]) -> int:
    """The count mask of card numbers (0..52, repeats allowed), in time linear in
    their number.

    Raises:
        CardError: a card number outside 0..52, or a card more than ``MAX_COPIES`` (4)
            times: a count mask has no layer for it (RULES.md §10.2-10.3 hold a card at
            most twice, the joker at most 4 times).
    """
    h = 0
    for c, k in Counter(cards).items():
        if not isinstance(c, int) or not 0 <= c <= JOKER:
            raise CardError(f"card number must be an int in 0..52 (52 the joker), got {brief(c)}")
        if k > MAX_COPIES:
            raise CardError(f"{TEXT_OF[c]} is listed {k} times; a count mask holds a card at most {MAX_COPIES} "
                            "times (two decks hold a card twice and up to 4 jokers, RULES.md §10.2-10.3)")
        for layer in range(k):
            h |= 1 << (c + LAYER * layer)
    return h


def count_size(hand: int) -> int:
    """Cards in a count mask, copies counted."""
    return hand.bit_count()


def count_points(hand: int, ace_points: int = 1) -> int:
    """Deadwood value of a count mask (RULES.md §1, §10.2: a joker counts 15)."""
    total = 0
    while hand:
        layer = hand & LAYER_MASK
        total += mask_points(layer & FULL_DECK, ace_points) + (JOKER_POINTS if layer >> JOKER & 1 else 0)
        hand >>= LAYER
    return total


def parse_cards(texts: Iterable[str]) -> list[int]:
    """Parse a sequence of card texts; raises ``CardError`` on the first bad one."""
    return [parse_card(t) for t in texts]


def sort_key(card: int) -> tuple[int, int]:
    """Sort cards by suit, then rank (how a hand is shown)."""
    return (card // 13, card % 13)
