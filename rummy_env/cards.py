"""Cards as integers, hands as 52-bit masks (RULES.md §1).

A card is an ``int`` in ``0..51``: ``card = suit * 13 + rank`` with ranks
``A 2 3 4 5 6 7 8 9 T J Q K`` as ``0..12`` and suits ``C D H S`` as ``0..3``.
A set of cards (a hand, the table's melds) is a Python ``int`` used as a 52-bit
mask: bit ``card`` is set when the card is present. Bit arithmetic on these ints
is the engine's whole representation of card sets.
"""
from __future__ import annotations

from typing import Iterable

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
NUM_CARDS = 52
FULL_DECK = (1 << NUM_CARDS) - 1

CARD_TEXT: tuple[str, ...] = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(NUM_CARDS))

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


def parse_card(text: str) -> int:
    """Parse one card's text into its number (RULES.md §1).

    Accepts rank then suit, case-insensitive, ``T`` or ``10`` for ten, and the suit
    symbols ``♣ ♦ ♥ ♠``: ``"TH"``, ``"10h"``, ``"T♥"`` all give the ten of hearts.

    Raises:
        CardError (a ``ValueError``): the text names no card.
    """
    if not isinstance(text, str):
        raise CardError(f"a card must be text such as 'TH', got {text!r}")
    t = text.strip()
    if not t:
        raise CardError("empty card text; a card is a rank (A 2-9 T/10 J Q K) then a suit (C D H S)")
    suit_ch = SUIT_SYMBOLS.get(t[-1], t[-1].upper())
    rank_txt = t[:-1].upper()
    if rank_txt == "10":
        rank_txt = "T"
    if len(rank_txt) != 1 or rank_txt not in RANKS or suit_ch not in SUITS:
        raise CardError(
            f"{text!r} is not a card; a card is a rank (A 2-9 T/10 J Q K) then a suit (C D H S or ♣♦♥♠), e.g. 'TH'"
        )
    return SUITS.index(suit_ch) * 13 + RANKS.index(rank_txt)


def card_text(card: int) -> str:
    """The printed form of a card number, e.g. ``34 -> '9H'``."""
    if not isinstance(card, int) or not 0 <= card < NUM_CARDS:
        raise CardError(f"card number must be an int in 0..51, got {card!r}")
    return CARD_TEXT[card]


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


def parse_cards(texts: Iterable[str]) -> list[int]:
    """Parse a sequence of card texts; raises ``CardError`` on the first bad one."""
    return [parse_card(t) for t in texts]


def sort_key(card: int) -> tuple[int, int]:
    """Sort cards by suit, then rank (how a hand is shown)."""
    return (card // 13, card % 13)
