"""STATE JSON: a position as a JSON-able dict and back (API.md's STATE form).

Like python-chess's FEN beside its board: ``to_json(state)`` writes a position of
``engine.GameState`` and ``from_json(obj)`` builds one, checking that it is a legal
one (RULES.md §2 deal sizes, §3 turn phases, §4 melds, §6 recycles, §7 match scores,
§10.4 meld points and a dig in progress) and raising ``PositionError`` when it is not.

Fields beyond API.md's example: ``melded_this_turn``, ``hand_number``, ``known_cards``,
``discards_by`` (what a round trip needs); at a 500 Rum table (``Table.rum500``)
``meld_points`` (per seat, the points melded and laid off this hand; default 0 on input,
else they must add up to the table's points); on a dig
table ``bound`` (the card dug from the discard pile this turn that must still be
melded or laid off, or null; RULES.md §10.4); at a jokers table ``jokers_named`` (the
cards the mover has named jokers for in the meld or lay-off it is building, ``joker as
<card>`` decisions, lowest first; ``[]`` when none; optional on input). The rules themselves live in
``engine.py``; this module only reads and writes positions.

At a deck-variant table (RULES.md §10.1-10.3: ``aces="around"``, ``jokers=2``,
``decks=2``; ``GameState.variant`` set) a card may be listed twice (two decks), a joker
is ``JK`` in hands, the stock, the discard pile, ``known_cards``, ``discards_by`` and
``drawn_from_discard``, and ``JK=<card>`` in a meld (the card it stands for). Reading
checks every natural card is placed exactly ``decks`` times and the joker ``jokers *
decks`` times (a melded joker counts as a joker, not as its card); every meld's cards,
jokers counted as what they stand for, form a catalogue meld legal under the table's
``aces`` with no card twice and at most as many jokers as natural cards (§10.2).
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any

from .brief import brief
from .cards import (CARD_TEXT, count_points, JOKER, JOKER_POINTS, NUM_CARDS, TEXT_OF, CardError, cards_of, count_cards,
                    count_mask_of, count_of, mask_of, mask_points, parse_card)
from .engine import (DRAW, PHASES, PLAY, GameState, Meld, _finishable, _layoff_masks, _meld_from_id, _start_turn,
                     _variant_bound_playable, _variant_finishable, _variant_layoff_masks, bound_playable,
                     legal_actions, melds_payoffs)
from .melds import meld_of_cards
from .rules import Rules
from .table import Table

__all__ = ["PositionError", "to_json", "from_json"]


class PositionError(ValueError):
    """A position (STATE JSON) that is not a legal one; the message says what is wrong."""


_STATE_KEYS = (
    "rules", "hands", "stock", "discard", "melds", "current_player", "phase", "drawn_from_discard",
    "has_melded", "melded_this_turn", "recycles", "turn", "scores", "dealer", "hand_number",
    "known_cards", "discards_by", "hand_over", "result", "match_winners", "meld_points", "bound", "jokers_named",
)
_REQUIRED = ("hands", "stock", "discard", "melds", "current_player", "phase")


def _texts(mask_or_list: Any) -> list[str]:
    """Card texts of a set mask (bit 52: the joker, ``JK``) or of a list of card numbers."""
    return [TEXT_OF[c] for c in (cards_of(mask_or_list) if isinstance(mask_or_list, int) else mask_or_list)]


def _count_texts(hand: int) -> list[str]:
    """A count mask's cards as text, a copy per occurrence, the jokers (``JK``) last."""
    return [TEXT_OF[c] for c in count_cards(hand)]


def to_json(state: GameState) -> dict[str, Any]:
    """The position in API.md's STATE form (a JSON-able dict), plus the extensions
    ``melded_this_turn``, ``hand_number``, ``known_cards`` and ``discards_by`` that a
    round trip needs. ``result`` (once the hand is over) also carries ``payoffs``.

    At a deck-variant table (``state.variant`` set, RULES.md §10.1-10.3) hands, the
    stock, the discard pile and ``known_cards`` list a card once per copy (two decks)
    and a joker as ``JK``; a meld writes a joker as ``JK=<card>``, the card it stands
    for (``engine.Meld.texts``); ``drawn_from_discard`` and ``discards_by`` may be ``JK``."""
    if state.variant is None:
        hands = [_texts(h) for h in state.hands]
        melds = [_texts(m.cards()) for m in state.melds]
        known = [_texts(k) for k in state.known]
    else:
        hands = [_count_texts(h) for h in state.hands]
        melds = [m.texts() for m in state.melds]
        known = [_count_texts(k) for k in state.known]
    d: dict[str, Any] = {
        "rules": state.rules.to_json(),
        "hands": hands,
        "stock": _texts(state.stock[::-1]),
        "discard": _texts(state.discard),
        "melds": melds,
        "current_player": state.current,
        "phase": PHASES[state.phase],
        "drawn_from_discard": None if state.drawn_from_discard < 0 else TEXT_OF[state.drawn_from_discard],
        "has_melded": list(state.has_melded),
        "melded_this_turn": state.melded_this_turn,
        "recycles": state.recycles,
        "turn": state.turn,
        "scores": list(state.scores),
        "dealer": state.dealer,
        "hand_number": state.hand_number,
        "known_cards": known,
        "discards_by": [_texts(k) for k in state.discards_by],
        "hand_over": state.hand_over,
    }
    if state.table.rum500:
        d["meld_points"] = list(state.meld_points)
    if state.table.digs:
        d["bound"] = None if state.bound < 0 else TEXT_OF[state.bound]
    if state.table.jokers:
        d["jokers_named"] = _texts(state.named)
    if state.hand_over:
        d["result"] = dict(state.result, payoffs=list(state.payoffs))
    if state.match_over:
        d["match_winners"] = list(state.match_winners)
    return d


MAX_HAND_NUMBER = 10**6
"""The largest ``hand_number`` a STATE may hold."""


def max_hand_points(rules: Rules) -> int:
    """An upper bound of the points one hand can score (RULES.md §5): every card of the
    deck at its highest deadwood value (ace_points or 10; a joker 15, §10.2; every card
    once per deck, §10.3), times the rummy multiplier. A STATE's scores are bounded by it
    (plus the target); under ``scoring="melds"`` (§10.4) a hand's points lie within a
    deck's points either way (``_deck_points``)."""
    return rules.rummy_multiplier * (rules.decks * (NUM_CARDS * max(10, rules.ace_points)
                                                    + rules.jokers * JOKER_POINTS))


def _deck_points(rules: Rules) -> int:
    """The points of every card of the deck: each deck's 52 cards and its jokers at 15."""
    return rules.decks * (mask_points((1 << NUM_CARDS) - 1, rules.ace_points) + rules.jokers * JOKER_POINTS)


def _err(msg: str) -> PositionError:
    return PositionError(f"invalid position: {msg}")


def _card_list(v: Any, what: str, joker: bool = False) -> list[int]:
    """Card numbers of a list of card texts; ``joker``: ``JK`` (52) accepted (RULES.md §10.2)."""
    if not isinstance(v, (list, tuple)):
        raise _err(f"{what} must be a list of card texts, got {type(v).__name__}")
    if not joker:
        for t in v:
            if isinstance(t, str) and t.strip().upper() == "JK":
                raise _err(f"{what}: JK (a joker) is not a card at this table: it has no jokers (jokers=0, so JK may "
                           "appear 0 times; RULES.md §10.2)")
    try:
        return [parse_card(t, joker=joker) for t in v]
    except ValueError as e:
        raise _err(f"{what}: {e}") from None


def _variant_meld(v: Any, i: int, rules: Rules) -> Meld:
    """One meld of a deck-variant table (RULES.md §4, §10.1-10.3) from its texts: natural
    cards, and jokers written ``JK=<card>`` (the card each stands for).

    Raises:
        PositionError: not a list of card texts; a bare ``JK`` (a melded joker names its
            card); ``JK=`` at a table without jokers; a card twice in the meld; cards that
            are no set or run under the table's ``aces`` (their identities counted:
            a joker as the card it stands for); more jokers than natural cards.
    """
    what = f"melds[{i}]"
    if not isinstance(v, (list, tuple)):
        raise _err(f"{what} must be a list of card texts, got {type(v).__name__}")
    mask = jokers = 0
    for t in v:
        if not isinstance(t, str):
            raise _err(f"{what}: a card must be text such as 'TH' or 'JK=5H', got {brief(t)}")
        body = t.strip()
        is_joker = body.upper().startswith("JK=")
        if is_joker:
            if not Table.of(rules).jokers:
                raise _err(f"{what}: {brief(t)} is a joker, but this table has no jokers (jokers=0, RULES.md §10.2)")
            body = body[3:]
            if body.upper() == "JK":
                raise _err(f"{what}: {brief(t)}: a joker stands for a card (a rank and a suit, e.g. 'JK=5H'), "
                           "not for a joker (RULES.md §10.2)")
        elif body.upper() == "JK":
            raise _err(f"{what}: a joker in a meld is written JK=<card>, the card it stands for (e.g. 'JK=5H'); "
                       "got a bare 'JK' (RULES.md §10.2)")
        try:
            c = parse_card(body)
        except CardError as e:
            raise _err(f"{what}: {brief(t)}: {e}") from None
        if mask >> c & 1:
            raise _err(f"{what}: {CARD_TEXT[c]} appears twice in one meld (a set holds one card of each suit, "
                       "a run each rank once, even with two decks; RULES.md §10.3)")
        mask |= 1 << c
        if is_joker:
            jokers |= 1 << c
    if len(v) < 3:
        raise _err(f"{what}: {' '.join(map(str, v)) or 'no cards'} is not a meld: a set is 3 or 4 cards of one rank, "
                   "a run 3 or more consecutive cards of one suit (jokers written JK=<card> count as that card)")
    try:
        mid = meld_of_cards(mask, rules.aces)
    except ValueError as e:
        raise _err(f"{what}: {e}") from None
    nj = jokers.bit_count()
    if 2 * nj > mask.bit_count():
        raise _err(f"{what} holds {nj} jokers among {mask.bit_count()} cards: a meld holds at most as many jokers "
                   f"as natural cards (RULES.md §10.2)")
    m = _meld_from_id(mid)
    m.jokers = jokers
    return m


def _variant_known(v: Any, what: str, seat: int, hand: int, joker: bool, known: bool) -> int:
    """``known_cards[seat]`` (a count mask, within ``hand`` as a multiset) or
    ``discards_by[seat]`` (a set mask: each card at most once, bit 52 the joker) at a
    deck-variant table.

    Raises:
        PositionError: a bad card text; a known card held fewer times than listed; a card
            listed twice in ``discards_by``.
    """
    if known and isinstance(v, (list, tuple)) and len(v) > hand.bit_count():
        # checked before a card is read: the check below is linear, but a count mask of
        # thousands of copies is not (issue 27: 3,000 copies of AS took 5 s)
        raise _err(f"{what} lists {len(v)} cards, but hands[{seat}] holds {hand.bit_count()}: the known cards "
                   "are cards of the hand, so there are at most as many")
    cards = _card_list(v, what, joker)
    if known:
        listed = Counter(cards)
        over = [c for c in sorted(listed) if listed[c] > count_of(hand, c)]
        if over:
            raise _err(f"{what} lists " + ", ".join(f"{TEXT_OF[c]} {listed[c]} time(s)" for c in over)
                       + f", but hands[{seat}] holds " + ", ".join(f"{TEXT_OF[c]} {count_of(hand, c)} time(s)"
                                                                    for c in over)
                       + " (the known cards are cards of the hand)")
        return count_mask_of(cards)
    twice = sorted({c for c in cards if cards.count(c) > 1})
    if twice:
        raise _err(f"{what} lists {' '.join(TEXT_OF[c] for c in twice)} more than once: it is the set of cards the "
                   "seat has discarded this hand, each listed once")
    return mask_of(cards)


def _check_variant_counts(hands: list[list[int]], stock: list[int], discard: list[int], melds: list[Meld],
                          rules: Rules) -> None:
    """Every natural card exactly ``decks`` times and the joker ``jokers * decks`` times
    across the hands, the stock, the discard pile and the melds, a melded joker counted
    as a joker (RULES.md §10.2-10.3).

    Raises:
        PositionError: the first card present too often (with where it lies), else every
            card missing, naming each and the count allowed.
    """
    count = [0] * (JOKER + 1)
    seen: list[list[str]] = [[] for _ in range(JOKER + 1)]
    places = [(f"hands[{i}]", h) for i, h in enumerate(hands)] + [("stock", stock), ("discard", discard)]
    for i, m in enumerate(melds):
        nat = m.mask & ~m.jokers
        places.append((f"melds[{i}]", cards_of(nat) + [JOKER] * m.jokers.bit_count()))
    for name, cards in places:
        for c in cards:
            count[c] += 1
            seen[c].append(name)
    decks, jokers = rules.decks, rules.jokers * rules.decks
    deck = f"every card {decks} time(s) ({'two decks' if decks == 2 else 'one deck'})"
    def places_of(c: int) -> str:
        """Each place once, in the order met, with its copies when more than one: 'hands[0] x2, stock'."""
        names = sorted(set(seen[c]), key=seen[c].index)
        k = Counter(seen[c])
        words = [name + (f" x{k[name]}" if k[name] > 1 else "") for name in names[:8]]
        return ", ".join(words) + (f" and {len(names) - 8} more places" if len(names) > 8 else "")

    for c in range(NUM_CARDS):
        if count[c] > decks:
            raise _err(f"card {CARD_TEXT[c]} appears {count[c]} times (in {places_of(c)}); this table holds "
                       f"it {decks} time(s): {deck}, RULES.md §10.3")
    if count[JOKER] > jokers:
        raise _err(f"JK appears {count[JOKER]} times (in {places_of(JOKER)}); this table has {jokers} "
                   f"joker(s) (jokers={rules.jokers} per deck, decks={decks}; a melded JK=<card> counts as a joker, "
                   "RULES.md §10.2)")
    lost = [CARD_TEXT[c] + (f" ({count[c]} of {decks})" if decks > 1 else "")
            for c in range(NUM_CARDS) if count[c] < decks]
    if count[JOKER] < jokers:
        lost.append(f"JK ({count[JOKER]} of {jokers})")
    if lost:
        raise _err(f"card(s) missing: {' '.join(lost)} (this table places {deck}"
                   + (f" and {jokers} jokers" if jokers else "") + ")")


def _check_lengths(obj: dict, rules: Rules) -> None:
    """Every card list of a position at most as long as the deck (``Rules.deck_size``:
    52 cards per deck plus the jokers, RULES.md §1, §10.2-10.3) and at most
    ``deck_size // 3`` melds (a meld holds 3 cards or more), checked before a card is
    read, so that no check later costs more than a deck's worth of work.

    Raises:
        PositionError: the first list that is too long, with its length and the limit.
    """
    deck = rules.deck_size
    lists = [(f"hands[{i}]", h) for i, h in enumerate(obj["hands"])]
    lists += [("stock", obj["stock"]), ("discard", obj["discard"])]
    for key in ("known_cards", "discards_by"):
        v = obj.get(key)
        if isinstance(v, list):
            lists += [(f"{key}[{i}]", x) for i, x in enumerate(v[:rules.num_players])]
    melds = obj["melds"]
    if isinstance(melds, list):
        if len(melds) > deck // 3:
            raise _err(f"melds lists {len(melds)} melds; a {deck}-card deck makes at most {deck // 3} "
                       "(a meld holds 3 cards or more)")
        lists += [(f"melds[{i}]", m) for i, m in enumerate(melds)]
    for what, v in lists:
        if isinstance(v, (list, tuple)) and len(v) > deck:
            raise _err(f"{what} lists {len(v)} cards; this table's deck has {deck} "
                       f"(decks={rules.decks}, jokers={rules.jokers}), so no place holds more")


def _dealt_stock(rules: Rules) -> int:
    """Cards in the stock right after the deal: the deck less the hands and the upcard (RULES.md §2)."""
    return rules.deck_size - rules.num_players * rules.cards_dealt - 1


def _first_turn(cur: int, dealer: int, recycles: int, rules: Rules) -> int:
    """``turn``'s default on input: the first turn at which seat ``cur`` moves (play starts
    left of the dealer, RULES.md §2-§3) that is late enough for ``recycles`` (§6,
    ``_check_turn_order``): 0 for the seat left of the dealer and no recycles."""
    n = rules.num_players
    t = (cur - dealer - 1) % n
    need = _dealt_stock(rules) + recycles - 1 if recycles else 0
    if t < need:
        t += -(-(need - t) // n) * n
    return t


def _check_turn_order(cur: int, turn: int, dealer: int, recycles: int, stock: int, rules: Rules) -> None:
    """The mover and the recycles that ``turn`` allows.

    Play starts left of the dealer and passes one seat a turn (RULES.md §2-§3), so at
    ``turn`` t the mover is seat ``(dealer + 1 + t) % n``. A recycle (§6) needs an
    empty stock: the stock dealt (``deck_size - n * cards_dealt - 1`` cards, S) is
    emptied at turn S at the earliest, one card drawn a turn, and a recycled stock holds
    a card at least, so after r recycles ``turn >= S + r - 1``: at most ``turn - S + 1``
    recycles (none before turn S), which also bounds them when ``max_recycles`` is
    unlimited.

    Raises:
        PositionError: another seat to move than the turn says, or more recycles than
            the turns allow (each with the numbers that show it).
    """
    n = rules.num_players
    first = (dealer + 1) % n
    if cur != (first + turn) % n:
        raise _err(f"current_player {cur} cannot be to move at turn {turn} with dealer {dealer}: play starts "
                   f"with seat {first}, left of the dealer, and passes one seat a turn, so at turn {turn} seat "
                   f"{(first + turn) % n} moves (RULES.md §2-§3)")
    dealt_stock = _dealt_stock(rules)
    most = max(0, turn - dealt_stock + 1)
    if recycles > most:
        raise _err(f"recycles {recycles} at turn {turn} cannot occur: the stock dealt holds {dealt_stock} cards, "
                   f"drawn one a turn, so the first recycle comes at turn {dealt_stock} at the earliest and each "
                   f"later one a turn after the last; at turn {turn} at most {most} (RULES.md §6)"
                   + (f"; the stock holds {stock} cards" if recycles and stock == dealt_stock else ""))


def _int(v: Any, what: str, lo: int, hi: int | None) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise _err(f"{what} must be an int in {rng}, got {brief(v)}")
    return v


def _bool_list(v: Any, what: str, n: int) -> list[bool]:
    if not isinstance(v, list) or len(v) != n or not all(isinstance(x, bool) for x in v):
        raise _err(f"{what} must be a list of {n} booleans, got {brief(v)}")
    return list(v)


def from_json(obj: Any, rules: Rules | None = None, seed: int | None = None) -> GameState:
    """Build a position from API.md's STATE form, checking that it is a legal one.

    ``rules`` applies when ``obj`` has no ``"rules"``; ``seed`` seeds the RNG used for
    later shuffles (recycles, next deals).

    At a deck-variant table (RULES.md §10.1-10.3) the hands and ``known_cards`` become
    count masks (``cards.count_mask_of``), the melds carry their jokers
    (``engine.Meld.jokers``), and ``variant`` / ``joker_masks`` are set as
    ``engine.new_game`` sets them; the forms are the module docstring's.

    Raises:
        PositionError (a ``ValueError``): what is wrong: a card missing or twice
            (with two decks: missing or more than twice, naming the card and the count
            allowed; the jokers: other than ``jokers * decks``; ``JK`` at a table
            without jokers), a bad meld (a bare ``JK`` in it, a card twice, more jokers
            than natural cards, not a set or run under the table's ``aces``), a hand
            size that cannot occur, an unknown key or phase, a list longer than the
            deck (``_check_lengths``), another seat to move than ``turn`` and
            ``dealer`` give or more recycles than ``turn`` allows
            (``_check_turn_order``; without ``turn``, the first turn that fits is
            taken), ``drawn_from_discard`` in a meld while ``melded_this_turn`` is
            false, at a 500 Rum table a seat that melded with ``meld_points`` 0, ...
    """
    if not isinstance(obj, dict):
        raise _err(f"a position is a JSON object, got {type(obj).__name__}")
    unknown = [k for k in obj if k not in _STATE_KEYS]
    if unknown:
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise _err(f"unknown field(s) {', '.join(map(brief, unknown[:5]))}{more}; fields: {', '.join(_STATE_KEYS)}")
    missing = [k for k in _REQUIRED if k not in obj]
    if missing:
        raise _err(f"missing field(s) {', '.join(missing)}")
    if "rules" in obj and obj["rules"] is not None:
        try:
            rules = Rules.from_json(obj["rules"])
        except (ValueError, TypeError) as e:
            raise _err(f"rules: {e}") from None
    if rules is None:
        rules = Rules.preset("classic")
    n = rules.num_players
    table = Table.of(rules)
    dig, melds_scoring, rum = table.digs, table.melds_scoring, table.rum500
    if obj.get("jokers_named") not in (None, []) and not table.jokers:
        raise _err("jokers_named is only for tables with jokers (RULES.md §10.2)")
    for key, ok in (("meld_points", rum), ("bound", dig)):
        if obj.get(key) is not None and not ok:
            raise _err(f"{key} is only for " + ("500 Rum tables (scoring='melds' or draw='dig')" if key == "meld_points"
                                                else "draw='dig' tables") + " (RULES.md §10.4)")
    s = GameState(rules, table=table, rng=random.Random(seed))  # every slot set; the checks below fill them
    variant = s.variant

    hands_v = obj["hands"]
    if not isinstance(hands_v, list) or len(hands_v) != n:
        raise _err(f"hands must be a list of {n} hands (one per seat for {n} players)")
    _check_lengths(obj, rules)
    jok = table.jokers > 0
    hands = [_card_list(h, f"hands[{i}]", jok) for i, h in enumerate(hands_v)]
    stock = _card_list(obj["stock"], "stock", jok)
    discard = _card_list(obj["discard"], "discard", jok)
    if not isinstance(obj["melds"], list):
        raise _err("melds must be a list of melds (each a list of card texts)")

    where: dict[int, str] = {}
    if variant is None:
        melds_c = [_card_list(m, f"melds[{i}]") for i, m in enumerate(obj["melds"])]
        places = [(f"hands[{i}]", h) for i, h in enumerate(hands)] + [("stock", stock), ("discard", discard)]
        places += [(f"melds[{i}]", m) for i, m in enumerate(melds_c)]
        for name, cards in places:
            for c in cards:
                if c in where:
                    raise _err(f"card {CARD_TEXT[c]} appears twice (in {where[c]} and {name})")
                where[c] = name
        if len(where) != NUM_CARDS:
            lost = [CARD_TEXT[c] for c in range(NUM_CARDS) if c not in where]
            raise _err(f"card(s) missing: {' '.join(lost)} (every one of the 52 cards must be placed once)")

        melds = []
        for i, cards in enumerate(melds_c):
            try:
                mid = meld_of_cards(mask_of(cards), rules.aces)
            except ValueError as e:
                raise _err(f"melds[{i}]: {e}") from None
            melds.append(_meld_from_id(mid))
    else:
        melds = [_variant_meld(m, i, rules) for i, m in enumerate(obj["melds"])]
        _check_variant_counts(hands, stock, discard, melds, rules)

    cur = _int(obj["current_player"], "current_player", 0, n - 1)
    if obj["phase"] not in PHASES:
        raise _err(f"phase must be 'draw' or 'play', got {brief(obj['phase'])}")
    phase = PHASES.index(obj["phase"])
    hand_over = obj.get("hand_over", False)
    if not isinstance(hand_over, bool):
        raise _err(f"hand_over must be true or false, got {brief(hand_over)}")

    dfd = obj.get("drawn_from_discard")
    f = -1
    f_melded = False  # the card taken from the discard pile lies in a meld
    if dfd is not None:
        try:
            f = parse_card(dfd, joker=jok)
        except ValueError as e:
            raise _err(f"drawn_from_discard: {e}") from None
        if phase == DRAW:
            raise _err("drawn_from_discard must be null in the draw phase")
        if variant is None:
            if where[f] != f"hands[{cur}]" and not where[f].startswith("melds"):
                raise _err(f"drawn_from_discard {CARD_TEXT[f]} is in {where[f]}, not in the mover's hand or a meld")
            f_melded = where[f] != f"hands[{cur}]"
        elif f not in hands[cur] and not any(m.jokers if f == JOKER else (m.mask & ~m.jokers) >> f & 1
                                             for m in melds):
            raise _err(f"drawn_from_discard {TEXT_OF[f]} is neither in the mover's hand (hands[{cur}]) nor "
                       + ("melded as a joker" if f == JOKER else "a natural card of a meld"))
        else:
            f_melded = f not in hands[cur]

    bound = -1
    if obj.get("bound") is not None:
        try:
            bound = parse_card(obj["bound"], joker=jok)
        except ValueError as e:
            raise _err(f"bound: {e}") from None
        if phase == DRAW or hand_over:
            raise _err("bound must be null in the draw phase and once the hand is over")
        held = bound in hands[cur] if variant is not None else where[bound] == f"hands[{cur}]"
        if not held:
            raise _err(f"bound {TEXT_OF[bound]} is in {where.get(bound, 'another place')}, not in the mover's hand "
                       "(a bound card stays in hand until it is melded or laid off)")
        if f >= 0:
            raise _err("bound and drawn_from_discard cannot both be set: a dig takes more than the top card, "
                       "taking the top card alone binds nothing")

    if obj.get("jokers_named") not in (None, []) and (phase == DRAW or hand_over):
        raise _err("jokers_named must be empty in the draw phase and once the hand is over (jokers are named in "
                   "the play phase, for the move being built)")
    k = rules.cards_dealt
    melded = sum(m.mask.bit_count() for m in melds)
    has_melded = _bool_list(obj.get("has_melded", [False] * n), "has_melded", n)
    mtt = obj.get("melded_this_turn", False)
    if not isinstance(mtt, bool) or (mtt and phase == DRAW):
        raise _err(f"melded_this_turn must be a boolean, and false in the draw phase; got {brief(mtt)}")
    if f >= 0 and f_melded and not mtt:
        # the card came into the mover's hand this turn: only the mover, this turn, can have melded it
        raise _err(f"drawn_from_discard {TEXT_OF[f]} lies in a meld, but melded_this_turn is false: the card was "
                   "taken this turn, so only the mover can have melded or laid it off, this turn (RULES.md §3)")
    if any(has_melded) and not melds:
        raise _err(f"has_melded {has_melded} says a seat melded or laid off, but the table holds no meld "
                   "(melds stay on the table until the hand ends)")
    # a hand can outgrow the deal only by digging, and a seat that dug has melded or laid off
    # (the dug card), or is the mover with the dug card still to play (RULES.md §10.4)
    dug = [dig and (has_melded[i] or (i == cur and (mtt or bound >= 0))) for i in range(n)]
    for i, h in enumerate(hands):
        cap = k + (1 if i == cur and phase == PLAY else 0)
        if dug[i]:
            cap = NUM_CARDS
        if len(h) > cap:
            raise _err(f"hands[{i}] has {len(h)} cards; at most {cap} can occur ({k} dealt"
                       + (", +1 drawn this turn)" if cap > k else ")"))
        if not h and not hand_over:
            raise _err(f"hands[{i}] is empty but the hand is not over")
    expect = n * k - sum(len(h) for h in hands) + (1 if phase == PLAY else 0)
    if not any(dug) and melded != expect and not (hand_over and phase == PLAY and melded == expect - 1):
        raise _err(f"{melded} cards are in melds, but hand sizes say {expect} were melded or laid off "
                   f"({n} x {k} dealt, {sum(len(h) for h in hands)} in hands"
                   + (", +1 drawn this turn)" if phase == PLAY else ")"))

    s.hands = [mask_of(h) for h in hands] if variant is None else [count_mask_of(h) for h in hands]
    s.stock = stock[::-1]
    s.discard = discard
    s.melds = melds
    if variant is None:
        s.layoff_masks = _layoff_masks(melds, rules.aces)
    else:
        s.layoff_masks, s.joker_masks = _variant_layoff_masks(melds, rules.aces, variant.max_jokers > 0)
    s.current, s.phase, s.drawn_from_discard = cur, phase, f
    s.has_melded = has_melded
    s.melded_this_turn = mtt
    if not hand_over:
        # a seat that has melded or laid off nothing holds exactly what it was dealt (+1
        # for the mover after its draw); one that has, holds fewer
        for i, h in enumerate(hands):
            extra = 1 if (i == cur and phase == PLAY) else 0
            melded_now = i == cur and mtt
            digging = i == cur and bound >= 0  # took two or more cards this turn (§10.4)
            if digging and not s.has_melded[i] and not melded_now and len(h) < k + 2:
                raise _err(f"hands[{i}] has {len(h)} cards with the dug card {CARD_TEXT[bound]} still to play and "
                           f"nothing melded before: a dig takes two cards or more, so it holds at least {k + 2}")
            if not s.has_melded[i] and not melded_now and not digging and len(h) != k + extra:
                raise _err(f"hands[{i}] has {len(h)} cards but has_melded[{i}] is false"
                           + (" and melded_this_turn is false" if i == cur and phase == PLAY else "")
                           + f": a seat that never melded or laid off holds exactly {k + extra}")
            if (s.has_melded[i] or melded_now) and len(h) >= k + extra and not dig:
                raise _err(f"hands[{i}] has {len(h)} cards but is marked as having melded or laid off: "
                           f"it would hold fewer than {k + extra}")
    s.recycles = _int(obj.get("recycles", 0), "recycles", 0, rules.max_recycles)
    s.dealer = _int(obj.get("dealer", n - 1), "dealer", 0, n - 1)
    last_turn = rules.max_turns if hand_over else rules.max_turns - 1
    turn = obj.get("turn")
    if turn is None:  # the first turn at which the mover can move with these recycles
        turn = _first_turn(cur, s.dealer, s.recycles, rules)
        if turn > last_turn:
            raise _err(f"no turn below max_turns={rules.max_turns} has current_player {cur} to move with dealer "
                       f"{s.dealer} and recycles {s.recycles} (the first is turn {turn}; RULES.md §2-§3, §6)")
    s.turn = _int(turn, "turn", 0, last_turn)
    _check_turn_order(cur, s.turn, s.dealer, s.recycles, len(stock), rules)
    sc = obj.get("scores", [0] * n)
    if not isinstance(sc, list) or len(sc) != n or not all(isinstance(x, int) and not isinstance(x, bool) for x in sc):
        raise _err(f"scores must be a list of {n} ints, got {brief(sc)}")
    hand_number = _int(obj.get("hand_number", 0), "hand_number", 0, MAX_HAND_NUMBER)
    if melds_scoring:  # totals may go negative (§10.4), by at most a deck's points a hand
        floor = -(hand_number + 1) * _deck_points(rules)
        if min(sc) < floor:
            raise _err(f"scores cannot be below {floor} after {hand_number + 1} hand(s) (each hand costs at most "
                       f"{_deck_points(rules)} points), got {brief(sc)}")
    elif any(x < 0 for x in sc):
        raise _err(f"scores cannot be negative (match totals only grow), got {brief(sc)}")
    # a match total is below the target before the last hand, which adds at most
    # max_hand_points; without a target (one hand) the hand's points alone
    limit = (rules.target or 1) - 1 + max_hand_points(rules)
    if max(sc) > limit:
        raise _err(f"scores must be ints in 0..{limit} for these rules (below the target before the last hand, "
                   f"plus at most {max_hand_points(rules)} points from one hand), got {brief(sc)}")
    if not hand_over and rules.target is not None and max(sc) >= rules.target:
        raise _err(f"scores {brief(sc)} reach the target {rules.target}: the match would already be over")
    s.scores = list(sc)
    s.hand_number = hand_number
    given_mp = obj.get("meld_points")
    mp = [0] * n if given_mp is None else given_mp
    table_points = sum(mask_points(m.mask & ~m.jokers, rules.ace_points) + JOKER_POINTS * m.jokers.bit_count()
                       for m in melds)  # a melded joker scores 15 (§10.4)
    if (not isinstance(mp, list) or len(mp) != n
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in mp)):
        raise _err(f"meld_points must be a list of {n} ints >= 0, got {brief(mp)}")
    if given_mp is not None:
        # every card on the table was melded or laid off this hand by some seat (§10.4)
        if sum(mp) != table_points:
            raise _err(f"meld_points {mp} add up to {sum(mp)}, but the cards on the table are worth "
                       f"{table_points}: every card on the table scored for the seat that melded or laid it off")
        for i in range(n):
            melded_i = has_melded[i] or (i == cur and mtt)
            if mp[i] and not melded_i:
                raise _err(f"meld_points[{i}] is {mp[i]} but seat {i} has not melded or laid off this hand "
                           "(has_melded false)")
            if melded_i and not mp[i]:
                # every card scores at least 1 (an ace ace_points >= 1, a joker 15), so a seat that
                # melded or laid off has points (§10.4)
                raise _err(f"meld_points[{i}] is 0 but seat {i} has melded or laid off this hand ("
                           + ("has_melded true" if has_melded[i] else "melded_this_turn true")
                           + "): each card melded or laid off scores for it, at least 1 point (RULES.md §10.4)")
    s.meld_points = list(mp)
    s.bound = bound
    s.known = [0] * n
    s.discards_by = [0] * n
    for key, attr in (("known_cards", "known"), ("discards_by", "discards_by")):
        v = obj.get(key)
        if v is None:
            continue
        if not isinstance(v, list) or len(v) != n:
            raise _err(f"{key} must be a list of {n} card lists")
        if variant is None:
            masks = [mask_of(_card_list(x, f"{key}[{i}]")) for i, x in enumerate(v)]
            if key == "known_cards":
                for i, m in enumerate(masks):
                    if m & ~s.hands[i]:
                        raise _err(f"known_cards[{i}] lists cards that are not in hands[{i}]")
        else:
            masks = [_variant_known(x, f"{key}[{i}]", i, s.hands[i], jok, key == "known_cards")
                     for i, x in enumerate(v)]
        setattr(s, attr, masks)
    s._legal = None
    s.payoffs = [0] * n
    s.hand_over = hand_over
    s.result = None
    s.match_over = False
    s.match_winners = None
    if hand_over:
        res = obj.get("result")
        if not isinstance(res, dict) or res.get("outcome") not in ("out", "dry", "stalled"):
            raise _err("a position whose hand is over needs its 'result' with outcome out, dry or stalled")
        s.result, s.payoffs = _check_result(res, n, sc, rules)
        w = s.result["winner"]
        if s.result["outcome"] == "out" and s.hands[w]:
            raise _err(f"result says seat {w} went out, but hands[{w}] still holds {len(hands[w])} card(s)")
        if melds_scoring:
            held = [count_points(h, rules.ace_points) if variant is not None else mask_points(h, rules.ace_points)
                    for h in s.hands]
            if given_mp is None:  # the hand's points are what it melded minus what it holds (§10.4)
                s.meld_points = [p + v for p, v in zip(s.result["points"], held)]
            elif s.result["points"] != [m - v for m, v in zip(mp, held)]:
                raise _err(f"result.points {s.result['points']} are not meld_points {mp} minus the points held "
                           f"{held} (RULES.md §10.4)")
        s._legal = []
        mw = obj.get("match_winners")
        if mw is not None:
            if not isinstance(mw, list) or not all(isinstance(x, int) and 0 <= x < n for x in mw) or not mw:
                raise _err(f"match_winners must be a non-empty list of seats, got {brief(mw)}")
            s.match_over, s.match_winners = True, list(mw)
    else:
        if "result" in obj or "match_winners" in obj:
            raise _err("result and match_winners are only for a position whose hand is over")
        if phase == DRAW:
            if not discard:
                raise _err("the discard pile is empty at a draw; that cannot occur (a discard ends every turn)")
        elif variant is not None:
            named = _named(obj.get("jokers_named"), s, jok)
            if named:
                s.named = named
                if not legal_actions(s):
                    raise _err(f"jokers_named {_texts(named)}: no legal meld or lay-off of the mover's plays jokers "
                               "as those cards (RULES.md §10.2: a meld holds at most as many jokers as natural "
                               "cards, and the turn must still end legally)")
                s._legal = None
            if bound >= 0 and not _variant_bound_playable(s.hands[cur], melds, bound, rules, variant):
                raise _err(f"bound {TEXT_OF[bound]} can no longer be melded or laid off this turn (RULES.md §10.4)")
            if bound < 0 and not _variant_finishable(s.hands[cur], melds, f, rules, variant.max_jokers > 0):
                raise _err(f"the mover can no longer finish the turn: hands[{cur}] holds only copies of "
                           + (f"the card taken from the discard pile ({TEXT_OF[f]}), which may not be discarded "
                              "this turn, and they cannot all be laid off (RULES.md §3, §10.3)" if f >= 0 else
                              "nothing it may discard")
                           + (" (the last card must be a discard)" if rules.must_discard_to_go_out else ""))
        else:
            hand = s.hands[cur]
            fbit = 0 if f < 0 else 1 << f
            layoff_ok = rules.layoffs and bool(fbit & (s.layoff_masks[0] | s.layoff_masks[1] | s.layoff_masks[2]))
            if not _finishable(hand, fbit, layoff_ok, rules.must_discard_to_go_out):
                raise _err("the mover holds only the card taken from the discard pile and cannot finish the turn")
            if bound >= 0 and not bound_playable(hand, s.layoff_masks, bound, rules):
                raise _err(f"bound {CARD_TEXT[bound]} can no longer be melded or laid off this turn (RULES.md §10.4)")
    if not hand_over and phase == DRAW and not stock and rules.dry_trigger == "on_empty":
        # a frontend's snapshot taken right after the last stock card was drawn: the
        # recycle (shuffled by ``seed``) or the dry end happens now, before the draw (§6)
        _start_turn(s)
    return s


def _named(v: Any, s: GameState, jok: bool) -> int:
    """The ``jokers_named`` of a play-phase STATE as a 52-bit mask (``GameState.named``),
    checked: distinct natural cards, no more than the jokers the mover holds.

    Raises:
        PositionError: any other value (the message says what is allowed).
    """
    if v is None or v == []:
        return 0
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _err(f"jokers_named must be a list of card texts, got {brief(v)}")
    if any(x.strip().upper() == "JK" for x in v):
        raise _err(f"jokers_named {brief(v)}: a joker is named for a card (a rank and a suit, e.g. '5H'), not for "
                   "a joker (RULES.md §10.2)")
    try:
        cards = [parse_card(x) for x in v]
    except ValueError as e:
        raise _err(f"jokers_named: {e}") from None
    mask = mask_of(cards)
    if mask.bit_count() != len(cards):
        raise _err(f"jokers_named {v} names a card twice (a meld never holds a card twice, RULES.md §10.3)")
    held = count_of(s.hands[s.current], JOKER)
    if len(cards) > held:
        raise _err(f"jokers_named {v} names {len(cards)} joker(s), but the mover holds {held}")
    return mask


_RESULT_KEYS = ("outcome", "winner", "rummy", "points", "payoffs")


def _check_result(res: Any, n: int, scores: list[int], rules: Rules) -> tuple[dict[str, Any], list[int]]:
    """The ``result`` of a finished hand, checked (RULES.md §5-§7): ``(result, payoffs)``.

    Raises:
        PositionError: not an object, an unknown key, an outcome other than out, dry
            or stalled, a winner that is not a seat (or missing when someone went
            out), a non-boolean rummy, points or payoffs that are not ``n`` ints
            (points in 0..max_hand_points, payoffs summing to 0), points above the
            scores, or scores that had already reached the target before this hand.
    """
    if not isinstance(res, dict) or res.get("outcome") not in ("out", "dry", "stalled"):
        raise _err("a position whose hand is over needs its 'result' with outcome out, dry or stalled")
    bad = [k for k in res if k not in _RESULT_KEYS]
    if bad:
        raise _err(f"result: unknown key(s) {', '.join(map(brief, bad))}; keys: {', '.join(_RESULT_KEYS)}")
    w = res.get("winner")
    if w is not None and (not isinstance(w, int) or isinstance(w, bool) or not 0 <= w < n):
        raise _err(f"result.winner must be null or a seat 0..{n - 1}, got {brief(w)}")
    if res["outcome"] == "out" and w is None:
        raise _err("result.winner must be the seat that went out when the outcome is 'out'")
    rummy = res.get("rummy", False)
    if not isinstance(rummy, bool) or (rummy and res["outcome"] != "out"):
        raise _err(f"result.rummy must be true or false (true only when someone went out), got {brief(rummy)}")
    melds_scoring = Table.of(rules).melds_scoring
    if rummy and melds_scoring:
        raise _err("result.rummy cannot be true under scoring='melds' (RULES.md §10.4)")
    cap = _deck_points(rules) if melds_scoring else max_hand_points(rules)
    lo = -cap if melds_scoring else 0
    pts = res.get("points")
    if (not isinstance(pts, list) or len(pts) != n
            or not all(isinstance(x, int) and not isinstance(x, bool) and lo <= x <= cap for x in pts)):
        raise _err(f"result.points must be a list of {n} ints in {lo}..{cap}, got {brief(pts)}")
    if melds_scoring:
        # the hand's payoffs follow from its points: own minus the mean of the others' (§10.4)
        pay = melds_payoffs(pts)
        given = res.get("payoffs", pay)
        if (not isinstance(given, list) or len(given) != n
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and abs(x - y) < 1e-6
                           for x, y in zip(given, pay))):
            raise _err(f"result.payoffs must be each seat's points minus the mean of the others' under "
                       f"scoring='melds' ({pay}), got {brief(given)}")
        if rules.target is not None and max(a - b for a, b in zip(scores, pts)) >= rules.target:
            raise _err(f"scores {scores} minus this hand's points {pts} already reach the target {rules.target}: "
                       "the match was over before this hand")
        return {"outcome": res["outcome"], "winner": w, "rummy": False, "points": list(pts)}, pay
    pay = res.get("payoffs", [0] * n)
    if (not isinstance(pay, list) or len(pay) != n
            or not all(isinstance(x, int) and not isinstance(x, bool) and abs(x) <= cap * n for x in pay)
            or sum(pay) != 0):
        raise _err(f"result.payoffs must be a list of {n} ints summing to 0 (zero-sum), got {brief(pay)}")
    before = [a - b for a, b in zip(scores, pts)]
    if min(before) < 0:
        raise _err(f"result.points {pts} exceed the scores {scores} (the scores include this hand's points)")
    if rules.target is not None and max(before) >= rules.target:
        raise _err(f"scores {scores} minus this hand's points {pts} already reach the target {rules.target}: "
                   "the match was over before this hand")
    return {"outcome": res["outcome"], "winner": w, "rummy": rummy, "points": list(pts)}, list(pay)
