"""RULES.md §10.1-10.3: round-the-corner runs, jokers, two decks (issue 14).

Positions are built directly on the engine (``engine.new_game`` then the hands, the
pile, the table overwritten: ``variant_position``), not through STATE JSON, and action
text is parsed with ``actions.parse_action(text, kind)``. Every expected value is
worked out by hand from RULES.md (§1-§6, §10.1-10.3); the comment of each test says how.
"""
from __future__ import annotations

from collections import Counter

import pytest

from rummy_env import actions, engine, melds
from rummy_env.actions import DRAW_DISCARD, DRAW_STOCK
from rummy_env.cards import (JOKER, count_cards, count_mask_of, count_of, count_size, mask_of, parse_card)
from rummy_env.rules import Rules

AROUND = Rules.preset("turnover", aces="around")
JOKERS = Rules.preset("jokers")
JOKERS3 = Rules.preset("jokers", num_players=3)
TWO = Rules.preset("turnover", decks=2)  # two decks heads-up (RULES.md §10.3 allows 2-7)
AROUND_TWO = Rules.preset("turnover", aces="around", decks=2)
JOKERS_TWO = Rules.preset("turnover", decks=2, jokers=2)


# ---------------------------------------------------------------- helpers

def card(text: str) -> int:
    return parse_card(text, joker=True)


def bits(*texts: str) -> int:
    """52-bit mask of natural cards."""
    return mask_of(parse_card(t) for t in texts)


def table_meld(words, aces: str) -> engine.Meld:
    """An ``engine.Meld`` from texts such as ``["4H", "JK=5H", "6H"]``."""
    mask = jokers = 0
    for w in words:
        if w.upper().startswith("JK="):
            c = parse_card(w[3:])
            jokers |= 1 << c
        else:
            c = parse_card(w)
        mask |= 1 << c
    m = engine._meld_from_id(melds.meld_of_cards(mask, aces))
    m.jokers = jokers
    return m


def variant_position(rules: Rules, hands, table=(), discard=("QC",), current=0, phase="play",
                     has_melded=None, stock_top=()) -> engine.GameState:
    """A position of ``rules``: ``hands`` (card texts per seat, repeats and ``JK`` allowed),
    ``table`` (melds in the order laid down), the discard pile bottom first, the
    stock ``stock_top`` (top first) over every card not placed elsewhere."""
    s = engine.new_game(rules, seed=0)
    n = rules.num_players
    assert len(hands) == n
    aces = rules.aces
    placed = Counter()
    s.melds = [table_meld(m, aces) for m in table]
    for m in table:
        for w in m:
            placed[JOKER if w.upper().startswith("JK=") else parse_card(w)] += 1
    hand_cards = [[card(t) for t in h] for h in hands]
    for h in hand_cards:
        placed.update(h)
    pile = [card(t) for t in discard]
    top = [card(t) for t in stock_top]
    placed.update(pile)
    placed.update(top)
    deck = Counter({c: rules.decks for c in range(52)})
    deck[JOKER] = rules.jokers * rules.decks
    assert not placed - deck, f"more copies than the deck holds: {placed - deck}"
    rest = [c for c in sorted(deck) for _ in range(deck[c] - placed[c])]
    s.stock = rest[::-1] + top[::-1]  # top at the end: stock_top, then the rest from AC up
    s.discard = pile
    if s.variant is not None:
        s.hands = [count_mask_of(h) for h in hand_cards]
        s.layoff_masks, s.joker_masks = engine._variant_layoff_masks(s.melds, aces, rules.jokers > 0)
    else:
        s.hands = [mask_of(h) for h in hand_cards]
        s.layoff_masks = engine._layoff_masks(s.melds, aces)
    s.known = [0] * n
    s.current = current
    s.phase = engine.PLAY if phase == "play" else engine.DRAW
    s.drawn_from_discard = -1
    s.has_melded = list(has_melded) if has_melded is not None else [False] * n
    s.melded_this_turn = False
    s._legal = None
    return s


def kind(s: engine.GameState) -> str:
    return s.variant.kind if s.variant is not None else "standard"


def aid(s: engine.GameState, text: str) -> int:
    return engine.action_id(s, text)


def legal_texts(s: engine.GameState) -> set[str]:
    """The legal moves' texts (a move with jokers is one text: ``engine.legal_moves``)."""
    return {t for t, _ in engine.legal_moves(s)}


def verb(s: engine.GameState, word: str) -> set[str]:
    return {t for t in legal_texts(s) if t.startswith(word + " ")}


def play(s: engine.GameState, *texts: str) -> None:
    for t in texts:
        assert t in legal_texts(s) or not t.startswith(("meld", "layoff", "discard")), \
            f"{t!r} not legal; legal: {sorted(legal_texts(s))}"
        for a in engine.action_ids(s, t):
            assert a in engine.legal_actions(s), f"{t!r} not legal; legal: {sorted(legal_texts(s))}"
            engine.apply(s, a)


def hand(s: engine.GameState, seat: int) -> list[int]:
    return count_cards(s.hands[seat]) if s.variant is not None else sorted(
        c for c in range(52) if s.hands[seat] >> c & 1)


def cards(*texts: str) -> list[int]:
    return sorted(card(t) for t in texts)


# ---------------------------------------------------------------- §10.1 around

def test_around_catalogue_and_layout_size():
    # A run that turns the corner holds K, A and 2 of one suit; of length L (3..12; 13 is
    # the full suit, which has one form already) it is one of the L - 2 windows of the
    # 13-rank circle that cover K-A-2: 1 + 2 + ... + 10 = 55 per suit, 220 in all.
    # The around layout adds exactly those melds: 579 + 220 = 799.
    wraps = range(melds.NUM_MELDS, melds.NUM_MELDS_AROUND)
    assert len(wraps) == 220
    lengths = Counter(melds.MELD_MASK[m].bit_count() for m in wraps)
    assert lengths == {L: 4 * (L - 2) for L in range(3, 13)}
    for m in wraps:
        s = melds.MELD_KEY[m]
        assert melds.MELD_MASK[m] & bits(*(r + "CDHS"[s] for r in "KA2")) == bits(*(r + "CDHS"[s] for r in "KA2"))
        assert not any(melds.meld_allowed(m, a) for a in ("low", "high", "either"))
    assert actions.num_actions("around") == 799
    assert actions.num_actions(AROUND) == 799
    assert actions.num_actions("standard") == 579
    assert actions.num_actions("two_decks") == 579  # a card is named, not its copy
    wrap_range = [r for r in actions.action_ranges("around") if r[0] == "wrap_meld"]
    assert [(r[1], r[2]) for r in wrap_range] == [(579, 220)]


@pytest.mark.parametrize("aces,expected", [
    # Q K A 2 3 of hearts: under around every window of 3+ consecutive ranks of the circle
    # is a run: QKA, KA2, A23, QKA2, KA23, QKA23 (§10.1); either: QKA and A23, low: A23,
    # high: QKA (§4: runs never wrap).
    ("around", {"meld QH KH AH", "meld KH AH 2H", "meld AH 2H 3H", "meld QH KH AH 2H", "meld KH AH 2H 3H",
                "meld QH KH AH 2H 3H"}),
    ("either", {"meld QH KH AH", "meld AH 2H 3H"}),
    ("low", {"meld AH 2H 3H"}),
    ("high", {"meld QH KH AH"}),
])
def test_runs_that_turn_the_corner_only_under_around(aces, expected):
    s = variant_position(Rules.preset("turnover", aces=aces), [["QH", "KH", "AH", "2H", "3H", "7S", "9D"], ["5C"]])
    assert verb(s, "meld") == expected
    if aces == "around":
        assert aid(s, "meld 2H KH AH") == s.variant.meld_id[melds.meld_of_cards(bits("KH", "AH", "2H"), "around")]
        play(s, "meld QH KH AH 2H 3H")
        assert s.melds[0].texts() == ["QH", "KH", "AH", "2H", "3H"]
        assert hand(s, 0) == cards("7S", "9D")
    else:
        for text in ("meld KH AH 2H", "meld QH KH AH 2H 3H"):
            with pytest.raises(ValueError, match="corner"):
                actions.parse_action(text, "standard")
            with pytest.raises(ValueError):
                melds.meld_of_cards(bits(*text.split()[1:]), aces)


def test_ka2_lays_off_q_low_and_3_high_then_keeps_growing():
    # K-A-2 on the table (§10.1): its low end is K, so it takes Q; its high end is 2, so
    # it takes 3. J and 4 fit only after Q and 3 are down.
    s = variant_position(AROUND, [["QH", "3H", "JH", "4H", "9C"], ["5C"]], table=[["KH", "AH", "2H"]],
                         has_melded=[True, True])
    assert verb(s, "layoff") == {"layoff QH low", "layoff 3H high"}
    play(s, "layoff QH low")
    assert s.melds[0].texts() == ["QH", "KH", "AH", "2H"]
    assert verb(s, "layoff") == {"layoff JH low", "layoff 3H high"}
    play(s, "layoff 3H high")
    assert s.melds[0].texts() == ["QH", "KH", "AH", "2H", "3H"]
    assert verb(s, "layoff") == {"layoff JH low", "layoff 4H high"}


@pytest.mark.parametrize("aces,expected", [
    # A-2-3: below A comes K only when runs turn the corner (§10.1); otherwise only 4 fits.
    ("around", {"layoff KH low", "layoff 4H high"}),
    ("either", {"layoff 4H high"}),
    ("low", {"layoff 4H high"}),
])
def test_a23_takes_k_at_its_low_end_under_around(aces, expected):
    # QH fits only once KH is down (below K comes Q).
    s = variant_position(Rules.preset("turnover", aces=aces), [["KH", "QH", "4H", "9C"], ["5C"]],
                         table=[["AH", "2H", "3H"]], has_melded=[True, True])
    assert verb(s, "layoff") == expected
    if aces == "around":
        play(s, "layoff KH low")
        m = s.melds[0]
        assert m.texts() == ["KH", "AH", "2H", "3H"]
        assert m.mask == bits("KH", "AH", "2H", "3H")
        assert (m.lo, m.hi) == (12, 15)  # positions: K is 12, the ace after it 13 (melds.py)
        assert verb(s, "layoff") == {"layoff QH low", "layoff 4H high"}


@pytest.mark.parametrize("aces,expected", [
    # Q-K-A: after A comes 2 only under around; J fits below Q under every option that has Q-K-A.
    ("around", {"layoff JH low", "layoff 2H high"}),
    ("either", {"layoff JH low"}),
])
def test_qka_takes_2_at_its_high_end_under_around(aces, expected):
    s = variant_position(Rules.preset("turnover", aces=aces), [["JH", "2H", "9C"], ["5C"]],
                         table=[["QH", "KH", "AH"]], has_melded=[True, True])
    assert verb(s, "layoff") == expected


@pytest.mark.parametrize("rules,run,missing", [
    # 2..K (12 cards): its missing rank A is next to both ends; §10.1 (decision): high end only.
    (AROUND, ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"], "AH"),
    # 5..K A 2 3 (12 cards around the corner): the missing 4 fits after 3, at the high end only.
    (AROUND_TWO, ["5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH", "2H", "3H"], "4H"),
])
def test_a_12_card_run_takes_its_missing_rank_at_the_high_end_only(rules, run, missing):
    # with two decks the hand holds the missing card twice; once the run has 13 cards it
    # takes nothing, so the second copy has no lay-off (a run never holds a card twice).
    held = [missing, missing, "9C"] if rules.decks == 2 else [missing, "9C"]
    s = variant_position(rules, [held, ["5C"]], table=[run], has_melded=[True, True])
    assert verb(s, "layoff") == {f"layoff {missing} high"}
    play(s, f"layoff {missing} high")
    m = s.melds[0]
    assert m.mask == bits(*(r + "H" for r in "A23456789TJQK"))
    assert m.texts() == [r + "H" for r in "A23456789TJQK"]
    assert s.layoff_masks == (0, 0, 0)
    assert verb(s, "layoff") == set()
    assert verb(s, "discard") == ({f"discard {missing}", "discard 9C"} if rules.decks == 2 else {"discard 9C"})


# ---------------------------------------------------------------- §10.2 jokers

def test_jokers_layout_size():
    # 579 standard ids + 1 `discard JK` + 52 `joker as <card>` (issue 24: a move with
    # jokers is a sequence of decisions; the old layout gave each (meld, jokers) its own
    # id: 9,402 ids)
    assert actions.num_actions("jokers") == 579 + 1 + 52 == 632
    lay = actions.ActionLayout.of("jokers")
    assert lay.joker_discard == 579 and lay.joker_as == 580
    assert [lay.texts[580], lay.texts[580 + 51]] == ["joker as AC", "joker as KS"]
    assert lay.texts[:579] == actions.ACTION_TEXTS[:579]  # the standard ids keep their meaning
    # two decks add no id; 500 Rum keeps its 631 ids, then `draw discard JK` and the joker ids
    assert actions.num_actions("jokers+two_decks") == 632
    assert actions.num_actions("rum500+jokers") == 631 + 1 + 1 + 52 == 685


def test_around_with_jokers_layout_size():
    # around + jokers: the 579, the 220 wrap melds, `discard JK`, the 52 `joker as`
    assert actions.num_actions("around+jokers") == 579 + 220 + 1 + 52 == 852
    # the largest kind: 631 + `draw discard JK` + 220 + `discard JK` + 52, within 2,048
    assert actions.num_actions("rum500+around+jokers+two_decks") == 631 + 1 + 220 + 1 + 52 == 905
    assert max(actions.num_actions(k) for k in actions.TABLE_KINDS) == 905


@pytest.mark.parametrize("kind_name", ["around", "jokers", "two_decks", "around+jokers"])
def test_every_variant_action_text_parses_back_to_its_id(kind_name):
    # one text per id (API.md): the texts are distinct and parse_action inverts action_text
    n = actions.num_actions(kind_name)
    texts = [actions.action_text(a, kind_name) for a in range(n)]
    assert len(set(texts)) == n
    assert all(actions.parse_action(tx, kind_name) == a for a, tx in enumerate(texts))


def test_a_joker_in_a_run_takes_the_rank_at_its_place():
    # 4H 6H JK 9C 9D, one joker: a 3-card meld needs two natural cards, so the joker melds
    # are 4H JK=5H 6H (the gap of the run) and 9C 9D with the joker as 9H or 9S (§10.2);
    # 3H-6H would need two jokers. After `meld 4H JK=5H 6H` the joker is 5H for good.
    s = variant_position(JOKERS, [["4H", "6H", "JK", "9C", "9D"], ["5C"]])
    assert verb(s, "meld") == {"meld 4H JK=5H 6H", "meld 9C 9D JK=9H", "meld 9C 9D JK=9S"}
    play(s, "meld 4H JK=5H 6H")
    m = s.melds[0]
    assert m.jokers == bits("5H")
    assert m.mask == bits("4H", "5H", "6H")
    assert m.texts() == ["4H", "JK=5H", "6H"]
    assert repr(m) == "Meld(4H JK=5H 6H)"
    assert hand(s, 0) == cards("9C", "9D")
    # the run takes 3H below and 7H above, for a natural card and for a joker
    assert s.layoff_masks == (0, bits("3H"), bits("7H"))
    assert s.joker_masks == (0, bits("3H"), bits("7H"))


def test_a_joker_may_stand_for_a_card_that_is_held():
    # 4H 5H 6H JK 9C (§10.2: a joker may stand for any card, even one in the hand):
    # 3-card runs with at most one card missing: 3-4-5 (JK=3H), 4-5-6 (natural, or the
    # joker as any one of its cards), 5-6-7 (JK=7H); 4-card: 3-6 (JK=3H), 4-7 (JK=7H).
    s = variant_position(JOKERS, [["4H", "5H", "6H", "JK", "9C"], ["5C"]])
    assert verb(s, "meld") == {
        "meld JK=3H 4H 5H", "meld 4H 5H 6H", "meld JK=4H 5H 6H", "meld 4H JK=5H 6H", "meld 4H 5H JK=6H",
        "meld 5H 6H JK=7H", "meld JK=3H 4H 5H 6H", "meld 4H 5H 6H JK=7H"}


@pytest.mark.parametrize("aces,expected", [
    # KH 2H JK 9C, one joker: a 3-card window with two of K, 2 is K-A-2 only (JK=AH); the
    # 4-card windows Q-K-A-2 and K-A-2-3 miss two cards. K-A-2 is a run under around only.
    ("around", {"meld KH JK=AH 2H"}),
    ("low", set()),
])
def test_a_joker_in_a_run_that_turns_the_corner(aces, expected):
    s = variant_position(Rules.preset("jokers", aces=aces), [["KH", "2H", "JK", "9C"], ["5C"]])
    assert verb(s, "meld") == expected
    if expected:
        play(s, "meld KH JK=AH 2H")
        assert s.melds[0].texts() == ["KH", "JK=AH", "2H"]
        assert s.layoff_masks == (0, bits("QH"), bits("3H"))


def test_a_joker_in_a_set_takes_a_missing_suit():
    # 7C 7D JK: the joker is 7H or 7S (a missing suit of the set's rank). Melded as 7S,
    # the set's missing 4th card is 7H: the other player's natural 7S does not fit.
    s = variant_position(JOKERS, [["7C", "7D", "JK", "2S", "KD"], ["7S", "7H", "3C"]], stock_top=["8D"])
    assert verb(s, "meld") == {"meld 7C 7D JK=7H", "meld 7C 7D JK=7S"}
    play(s, "meld 7C 7D JK=7S")
    assert s.melds[0].jokers == bits("7S")
    assert s.melds[0].texts() == ["7C", "7D", "JK=7S"]
    assert s.layoff_masks[0] == bits("7H")
    play(s, "discard KD", "draw stock")
    assert verb(s, "layoff") == {"layoff 7H set"}
    play(s, "layoff 7H set")
    assert s.melds[0].mask == bits("7C", "7D", "7H", "7S")
    assert s.layoff_masks == (0, 0, 0)  # a 4-card set is full


def test_laying_off_a_joker_onto_a_run():
    # 4H 5H 6H takes a joker as 3H (low) or 7H (high); laid off as 7H it is 7H for good.
    s = variant_position(JOKERS, [["JK", "9C", "2D"], ["5C"]], table=[["4H", "5H", "6H"]], has_melded=[True, True])
    assert verb(s, "layoff") == {"layoff JK=3H low", "layoff JK=7H high"}
    assert legal_texts(s) == {"layoff JK=3H low", "layoff JK=7H high", "discard JK", "discard 9C", "discard 2D"}
    play(s, "layoff JK=7H high")
    m = s.melds[0]
    assert m.texts() == ["4H", "5H", "6H", "JK=7H"]
    assert m.jokers == bits("7H") and m.mask == bits("4H", "5H", "6H", "7H")
    assert s.layoff_masks == (0, bits("3H"), bits("8H"))
    assert hand(s, 0) == cards("9C", "2D")


def test_layoffs_around_a_melded_joker():
    # 4H JK=5H 6H: the joker is 5H, so the natural 5H fits nowhere; 3H and 7H fit the ends.
    s = variant_position(JOKERS, [["5H", "3H", "7H", "9C"], ["5C"]], table=[["4H", "JK=5H", "6H"]],
                         has_melded=[True, True])
    assert verb(s, "layoff") == {"layoff 3H low", "layoff 7H high"}
    for text in ("layoff 5H low", "layoff 5H high", "layoff 5H set"):
        with pytest.raises(engine.IllegalActionError):
            engine.apply(s, aid(s, text))
    play(s, "layoff 7H high", "layoff 3H low")
    assert s.melds[0].texts() == ["3H", "4H", "JK=5H", "6H", "7H"]
    assert verb(s, "layoff") == set()  # 2H and 8H are not held; 5H still fits nowhere


def test_a_3_card_meld_with_two_jokers_is_refused():
    # 4H JK JK 9C 9D: a meld never holds more jokers than natural cards (§10.2), so 4H with
    # both jokers is no meld; the 9s make 9C 9D JK=9H, 9C 9D JK=9S (3 cards, 1 joker) and
    # 9C 9D JK=9H JK=9S (4 cards, 2 jokers).
    s = variant_position(JOKERS, [["4H", "JK", "JK", "9C", "9D"], ["5C"]])
    assert verb(s, "meld") == {"meld 9C 9D JK=9H", "meld 9C 9D JK=9S", "meld 9C 9D JK=9H JK=9S"}
    with pytest.raises(ValueError, match="jokers"):
        actions.parse_action("meld 4H JK=5H JK=6H", "jokers")
    with pytest.raises(ValueError):
        actions.parse_action("meld JK=4C JK=4D 4H", "jokers")
    before = list(s.hands)
    for text in ("meld 4H JK=5H 6H", "meld 3H 4H JK=5H JK=6H", "meld JK=3H 4H 5H"):
        with pytest.raises(engine.IllegalActionError):
            engine.apply(s, aid(s, text))
    assert s.hands == before and s.melds == []


@pytest.mark.parametrize("has_melded,expected", [
    # seat 1: JK + KS + 3D = 15 + 10 + 3 = 28; seat 2: JK + AC = 15 + 1 = 16; 44 in all.
    # Seat 0 melds 4H 5H 6H and discards 8C: out in one turn with nothing melded before
    # is going rummy, x2 = 88 (§5); with an earlier meld, 44.
    (False, 88),
    (True, 44),
])
def test_a_joker_left_in_hand_counts_15(has_melded, expected):
    s = variant_position(JOKERS3, [["4H", "5H", "6H", "8C"], ["JK", "KS", "3D"], ["JK", "AC"]],
                         has_melded=[has_melded, False, False])
    assert engine.deadwood(s, 1) == 28 and engine.deadwood(s, 2) == 16
    play(s, "meld 4H 5H 6H", "discard 8C")
    assert s.hand_over
    assert s.result == {"outcome": "out", "winner": 0, "rummy": not has_melded, "points": [expected, 0, 0]}
    assert s.scores == [expected, 0, 0]
    mult = expected // 44
    assert s.payoffs == [expected, -28 * mult, -16 * mult]


def test_a_joker_discarded_and_taken():
    # `discard JK` puts card 52 on the pile; the next player may take it, may not discard
    # it that turn (§10.2: the jokers are one card for every rule), and may on the next.
    s = variant_position(JOKERS, [["JK", "9C", "5D"], ["2C", "7D", "KS"]])
    play(s, "discard JK")
    assert s.discard[-1] == JOKER
    assert hand(s, 0) == cards("9C", "5D")
    assert (s.current, s.phase) == (1, engine.DRAW)
    assert engine.legal_actions(s) == [DRAW_STOCK, DRAW_DISCARD]
    play(s, "draw discard")
    assert s.drawn_from_discard == JOKER and count_of(s.hands[1], JOKER) == 1
    # 2C 7D KS JK: no two natural cards make a meld with the joker; the joker stays
    assert legal_texts(s) == {"discard 2C", "discard 7D", "discard KS"}
    with pytest.raises(engine.IllegalActionError, match="discard pile"):
        engine.apply(s, s.variant.joker_discard)
    play(s, "discard 2C", "draw stock", "discard 9C", "draw stock")
    assert "discard JK" in legal_texts(s)
    play(s, "discard JK")
    assert s.discard[-1] == JOKER


def test_a_joker_refused_by_a_meld_that_is_half_jokers():
    # (two decks: four jokers.) 4H JK=5H 6H JK=7H holds 2 jokers and 2 naturals: one more
    # joker would make more jokers than naturals (§10.2), so a joker fits only the clubs
    # run (7C low, JC high). A natural 8H fits the hearts; then 3 naturals and 2 jokers:
    # a third joker makes 3 and 3, allowed, so JK=3H and JK=9H fit again.
    s = variant_position(JOKERS_TWO, [["JK", "8H", "2D"], ["5C"]],
                         table=[["4H", "JK=5H", "6H", "JK=7H"], ["8C", "9C", "TC"]], has_melded=[True, True])
    assert verb(s, "layoff") == {"layoff JK=7C low", "layoff JK=JC high", "layoff 8H high"}
    with pytest.raises(engine.IllegalActionError, match="as many jokers as natural cards"):
        engine.apply(s, aid(s, "layoff JK=8H high"))
    play(s, "layoff 8H high")
    assert s.melds[0].texts() == ["4H", "JK=5H", "6H", "JK=7H", "8H"]
    assert verb(s, "layoff") == {"layoff JK=7C low", "layoff JK=JC high", "layoff JK=3H low", "layoff JK=9H high"}
    play(s, "layoff JK=9H high")
    assert s.melds[0].jokers == bits("5H", "7H", "9H")
    assert s.melds[1].jokers == 0


# ---------------------------------------------------------------- §10.3 two decks

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_7_player_two_deck_deal(seed):
    # two_decks at 7 players: 10 cards each (§10.3), 70 dealt, 1 upcard, 104 - 71 = 33 in
    # the stock; every card exactly twice; seat 0 (left of the dealer, seat 6) moves first.
    r = Rules.preset("two_decks", num_players=7)
    assert r.cards_dealt == 10 and r.target == 200
    s = engine.new_game(r, seed)
    assert [count_size(h) for h in s.hands] == [10] * 7
    assert len(s.discard) == 1 and len(s.stock) == 33
    every = Counter(c for h in s.hands for c in count_cards(h)) + Counter(s.stock) + Counter(s.discard)
    assert every == Counter({c: 2 for c in range(52)})
    assert (s.current, s.phase, s.dealer) == (0, engine.DRAW, 6)


def test_a_two_deck_deal_with_jokers():
    # two decks with jokers=2: 2 * (52 + 2) = 108 cards, four jokers; 5 players x 10 = 50
    # dealt, 1 upcard, 57 in the stock.
    s = engine.new_game(Rules.preset("two_decks", jokers=2), 7)
    assert [count_size(h) for h in s.hands] == [10] * 5
    assert len(s.stock) == 57
    every = Counter(c for h in s.hands for c in count_cards(h)) + Counter(s.stock) + Counter(s.discard)
    assert every == Counter({**{c: 2 for c in range(52)}, JOKER: 4})


def test_a_card_held_twice_is_one_discard_action_for_either_copy():
    # 5H 5H 9C KD: a card is named, not its copy: three discards; `discard 5H` removes one
    # copy, and the other can be discarded on a later turn.
    s = variant_position(TWO, [["5H", "5H", "9C", "KD"], ["2C", "3D"]])
    assert legal_texts(s) == {"discard 5H", "discard 9C", "discard KD"}
    assert len(engine.legal_actions(s)) == 3
    play(s, "discard 5H")
    assert count_of(s.hands[0], parse_card("5H")) == 1
    assert hand(s, 0) == cards("5H", "9C", "KD")
    assert s.discard[-1] == parse_card("5H")
    play(s, "draw stock", "discard 2C", "draw stock")
    assert "discard 5H" in legal_texts(s)
    play(s, "discard 5H")
    assert count_of(s.hands[0], parse_card("5H")) == 0


def test_the_card_taken_from_the_pile_may_not_be_discarded_in_either_copy():
    # 5H 9C KD takes the upcard 5H: now 5H twice; neither copy may be discarded (§10.3).
    s = variant_position(TWO, [["5H", "9C", "KD"], ["2C", "3D"]], discard=["QC", "5H"], phase="draw")
    play(s, "draw discard")
    assert count_of(s.hands[0], parse_card("5H")) == 2
    assert legal_texts(s) == {"discard 9C", "discard KD"}
    with pytest.raises(engine.IllegalActionError, match="either copy"):
        engine.apply(s, aid(s, "discard 5H"))


def test_two_sets_of_one_rank_on_the_table():
    # 7C 7C 7D 7D 7H 7S: sets are of distinct suits (§10.3), so the sets of 7s are the five
    # of one deck; melding 7C 7D 7H leaves 7C 7D 7S, a second set, and 7S also fits the
    # first set as its 4th card. The two sets then miss 7S and 7H.
    s = variant_position(TWO, [["7C", "7C", "7D", "7D", "7H", "7S", "2S"], ["5C"]])
    assert verb(s, "meld") == {"meld 7C 7D 7H", "meld 7C 7D 7S", "meld 7C 7H 7S", "meld 7D 7H 7S",
                               "meld 7C 7D 7H 7S"}
    play(s, "meld 7C 7D 7H")
    assert verb(s, "meld") == {"meld 7C 7D 7S"}
    assert verb(s, "layoff") == {"layoff 7S set"}
    play(s, "meld 7C 7D 7S")
    assert [m.texts() for m in s.melds] == [["7C", "7D", "7H"], ["7C", "7D", "7S"]]
    assert s.layoff_masks[0] == bits("7S", "7H")
    assert hand(s, 0) == cards("2S")


def test_a_set_with_a_repeated_suit_is_refused():
    # 7S 7S 7H holds two suits only: no set (§10.3); the text names a card twice.
    with pytest.raises(ValueError, match="twice"):
        actions.parse_action("meld 7S 7S 7H", "two_decks")
    s = variant_position(TWO, [["7S", "7S", "7H", "2C"], ["5C"]])
    assert legal_texts(s) == {"discard 7S", "discard 7H", "discard 2C"}


def test_a_layoff_that_fits_two_melds_goes_on_the_first():
    # 4H..7H twice: two equal runs may lie on the table (§10.3); a 7H then fits the high
    # end of both, goes on melds[0] (laid down first), and the second 7H on melds[1].
    s = variant_position(TWO, [["4H", "4H", "5H", "5H", "6H", "6H", "7H", "7H", "9C"], ["5C"]])
    assert verb(s, "meld") == {"meld 4H 5H 6H", "meld 5H 6H 7H", "meld 4H 5H 6H 7H"}
    play(s, "meld 4H 5H 6H", "meld 4H 5H 6H")
    assert legal_texts(s) == {"discard 7H", "discard 9C", "layoff 7H high"}
    play(s, "layoff 7H high")
    assert [m.texts() for m in s.melds] == [["4H", "5H", "6H", "7H"], ["4H", "5H", "6H"]]
    play(s, "layoff 7H high")
    assert [m.texts() for m in s.melds] == [["4H", "5H", "6H", "7H"], ["4H", "5H", "6H", "7H"]]
    assert s.layoff_masks == (0, bits("3H"), bits("8H"))
    assert hand(s, 0) == cards("9C")


# ---------------------------------------------------------------- rules validation (§8, §10.3, §10.5)

def test_seven_players_need_two_decks():
    with pytest.raises(ValueError, match="decks"):
        Rules(num_players=7)
    r = Rules(num_players=7, decks=2)
    assert r.cards_dealt == 10 and r.deck_size == 104
    with pytest.raises(ValueError):
        Rules(num_players=8, decks=2)


@pytest.mark.parametrize("opts,word", [
    (dict(jokers=1), "jokers"), (dict(jokers=4), "jokers"), (dict(decks=3), "decks"), (dict(decks=0), "decks"),
    (dict(aces="wrap"), "aces"),
])
def test_bad_deck_options_raise(opts, word):
    with pytest.raises(ValueError, match=word):
        Rules(**opts)


def test_the_variant_presets():
    # §10.5: jokers = turnover + 2 jokers, 2-6 players; two_decks = turnover + 2 decks,
    # 5-7 players (5 by default), 10 cards each whatever the count.
    j = Rules.preset("jokers")
    assert (j.num_players, j.jokers, j.decks, j.recycle, j.max_recycles, j.target) == (2, 2, 1, "turn_over", None, 100)
    assert j.deck_size == 54 and j.cards_dealt == 10
    assert Rules.preset("jokers", num_players=6).cards_dealt == 6
    t = Rules.preset("two_decks")
    assert (t.num_players, t.decks, t.jokers, t.recycle, t.max_recycles, t.target) == (5, 2, 0, "turn_over", None, 200)
    for n in (5, 6, 7):
        assert Rules.preset("two_decks", num_players=n).cards_dealt == 10
    assert actions.table_kind(j) == "jokers" and actions.table_kind(t) == "two_decks"


def test_two_decks_at_4_players_names_the_presets_that_allow_4():
    # presets for 4 players (§9, §10.5): turnover, deadwood, stalemate, rum500, jokers
    with pytest.raises(ValueError) as e:
        Rules.preset("two_decks", num_players=4)
    msg = str(e.value)
    assert "5-7" in msg
    listed = msg.split("presets that allow 4 players:")[1]
    assert {w.strip(" ,") for w in listed.split()} == {"turnover", "deadwood", "stalemate", "rum500", "jokers"}
    # 7 players: the two_decks preset, and the presets for up to 6 with decks=2 (§10.3:
    # two decks for five to seven players)
    with pytest.raises(ValueError, match=r"allow 7 players: two_decks \(turnover, deadwood, rum500, jokers with decks=2\)$"):
        Rules.preset("jokers", num_players=7)
    r = Rules.preset("turnover", decks=2, num_players=7)
    assert r.cards_dealt == 10 and r.target == 200
    assert r.to_json() == {"preset": "turnover", "num_players": 7, "decks": 2}
    assert Rules.from_json(r.to_json()) == r


@pytest.mark.parametrize("opts,kind", [
    (dict(preset="rum500", jokers=2), "rum500+jokers"),
    (dict(preset="rum500", aces="around"), "rum500+around"),
    (dict(preset="rum500", decks=2, num_players=7), "rum500+two_decks"),
    (dict(scoring="melds", rummy_multiplier=1, decks=2), "rum500+two_decks"),
    (dict(draw="dig", max_recycles=0, jokers=2), "rum500+jokers"),
])
def test_500_rum_takes_the_deck_variants(opts, kind):
    # RULES.md §10: every combination that makes sense; 500 Rum with two decks digs the
    # topmost copy (§10.3); the kind names both (actions.table_kind)
    opts = dict(opts)
    p = opts.pop("preset", None)
    r = Rules.preset(p, **opts) if p else Rules(**opts)
    assert actions.table_kind(r) == kind
    if p == "rum500" and r.num_players == 7:
        assert r.cards_dealt == 7  # the preset's own deal (§10.3: "unless a preset fixes its own deal")


# ---------------------------------------------------------------- §3 legality with copies

def test_melding_so_only_copies_of_the_taken_card_remain_is_illegal():
    # 4C 5C 6C 5H takes the upcard 5H (two decks): melding the clubs would leave 5H 5H,
    # which may not be discarded and fit no meld: illegal (§3 decision, §10.3). No 5H
    # may be discarded either, so the clubs are the only plays.
    s = variant_position(TWO, [["4C", "5C", "6C", "5H"], ["2D"]], discard=["QC", "5H"], phase="draw")
    play(s, "draw discard")
    assert legal_texts(s) == {"discard 4C", "discard 5C", "discard 6C"}
    with pytest.raises(engine.IllegalActionError, match="finish the turn"):
        engine.apply(s, aid(s, "meld 4C 5C 6C"))


def test_only_copies_of_the_taken_card_left_is_legal_when_all_can_be_laid_off():
    # with 2H 3H 4H alone on the table one 5H fits (high) and then the run 2H-5H takes AH
    # or 6H, not the second 5H: the meld stays illegal. With 6H 7H 8H too, the second 5H
    # fits its low end: the meld is legal, and the two lay-offs take the player out.
    one = variant_position(TWO, [["4C", "5C", "6C", "5H"], ["2D"]], table=[["2H", "3H", "4H"]],
                           discard=["QC", "5H"], phase="draw", has_melded=[True, True])
    play(one, "draw discard")
    assert legal_texts(one) == {"discard 4C", "discard 5C", "discard 6C", "layoff 5H high"}
    s = variant_position(TWO, [["4C", "5C", "6C", "5H"], ["2D"]], table=[["2H", "3H", "4H"], ["6H", "7H", "8H"]],
                         discard=["QC", "5H"], phase="draw", has_melded=[True, True])
    play(s, "draw discard")
    assert legal_texts(s) == {"discard 4C", "discard 5C", "discard 6C", "layoff 5H high", "layoff 5H low",
                              "meld 4C 5C 6C"}
    play(s, "meld 4C 5C 6C", "layoff 5H high")
    assert legal_texts(s) == {"layoff 5H low"}
    play(s, "layoff 5H low")
    assert [m.texts() for m in s.melds[:2]] == [["2H", "3H", "4H", "5H"], ["5H", "6H", "7H", "8H"]]
    assert s.hand_over and s.result["outcome"] == "out" and s.result["winner"] == 0


@pytest.mark.parametrize("rules,table,can_take", [
    # a hand of one 5H and the upcard 5H: taking it leaves 5H 5H, neither discardable, so
    # both must be laid off: one run 2H-4H takes only one; with 6H-8H too, both fit.
    (TWO, [["2H", "3H", "4H"]], False),
    (TWO, [["2H", "3H", "4H"], ["6H", "7H", "8H"]], True),
])
def test_taking_the_upcard_needs_a_way_to_finish(rules, table, can_take):
    s = variant_position(rules, [["5H"], ["2D"]], table=table, discard=["QC", "5H"], phase="draw",
                         has_melded=[True, True])
    assert engine.legal_actions(s) == ([DRAW_STOCK, DRAW_DISCARD] if can_take else [DRAW_STOCK])


@pytest.mark.parametrize("table,can_take", [
    # a lone JK taking the upcard JK holds two jokers, neither discardable (§10.2): 4H 5H 6H
    # takes one as 7H, then 4H-7H (1 joker of 4) a second as 8H: legal. 4H JK=5H 6H takes
    # one (2 of 4), then a third joker would outnumber the naturals: illegal.
    ([["4H", "5H", "6H"]], True),
    ([["4H", "JK=5H", "6H"]], False),
])
def test_taking_an_upcard_joker_needs_room_for_both_jokers(table, can_take):
    s = variant_position(JOKERS_TWO, [["JK"], ["2D"]], table=table, discard=["QC", "JK"], phase="draw",
                         has_melded=[True, True])
    assert engine.legal_actions(s) == ([DRAW_STOCK, DRAW_DISCARD] if can_take else [DRAW_STOCK])
    if can_take:
        play(s, "draw discard")
        assert verb(s, "discard") == set()
        play(s, "layoff JK=7H high", "layoff JK=8H high")
        assert s.melds[0].texts() == ["4H", "5H", "6H", "JK=7H", "JK=8H"]
        assert s.hand_over and s.result["winner"] == 0


# ---------------------------------------------------------------- action text with a position

@pytest.mark.parametrize("rules,hand_cards,text", [
    (JOKERS, ["JK", "9C"], "discard JK"),
    (JOKERS, ["4H", "6H", "JK"], "meld 4H JK=5H 6H"),
    (AROUND, ["KH", "AH", "2H", "9C"], "meld KH AH 2H"),
])
def test_engine_action_id_reads_variant_text(rules, hand_cards, text):
    s = variant_position(rules, [hand_cards, ["5C"]])
    p = actions.parse_action(text, actions.table_kind(rules))
    assert engine.action_ids(s, text) == (p if isinstance(p, list) else [p])
    assert engine.action_id(s, text) == engine.action_ids(s, text)[0]


def test_a_meld_with_a_joker_is_two_decisions():
    # 'meld 4H JK=5H 6H': first 'joker as 5H' (id 580 + 30: 5H = 13 * 2 + 4), then the meld
    # id of 4H 5H 6H, which with the joker named plays 5H by it; the move's text names it
    s = variant_position(JOKERS, [["4H", "6H", "JK", "9C"], ["5C"]])
    meld = actions.MELD_BASE + melds.MELD_ID_BY_MASK[mask_of(cards("4H", "5H", "6H"))]
    assert engine.action_ids(s, "meld 4H JK=5H 6H") == [580 + 30, meld]
    assert ("meld 4H JK=5H 6H", 610) in engine.legal_moves(s)
    engine.apply(s, 610)
    assert s.named == 1 << 30 and s.phase == engine.PLAY and s.current == 0
    # named: only the moves that play a joker as 5H go on; the text's steps left are one
    assert engine.legal_actions(s) == [meld]
    assert engine.action_ids(s, "meld 4H JK=5H 6H") == [meld]
    assert engine.move_text(s, meld) == "meld 4H JK=5H 6H"
    engine.apply(s, meld)
    assert s.named == 0 and s.melds[0].texts() == ["4H", "JK=5H", "6H"] and hand(s, 0) == cards("9C")


def test_bare_joker_layoff_text_resolves_to_the_one_end():
    # 4H 5H 6H on the table: a joker may stand for 3H (low end) or 7H (high end), each at
    # one end only, so 'layoff JK=7H' alone names 'layoff JK=7H high': id = joker_layoff +
    # 3 * 32 + 2 (7H = 13 * 2 + 6 = 32). 'layoff JK=9H' fits nowhere and says so.
    s = variant_position(JOKERS, [["JK", "9C"], ["5C"]], table=[["4H", "5H", "6H"]])
    lay = s.variant
    assert engine.action_ids(s, "layoff JK=7H") == [lay.joker_as + 32, actions.LAYOFF_BASE + 3 * 32 + 2]
    assert ("layoff JK=7H high", lay.joker_as + 32) in engine.legal_moves(s)
    with pytest.raises(ValueError, match="no meld on the table can take JK=9H"):
        engine.action_id(s, "layoff JK=9H")


def test_a_meld_short_of_jokers_names_what_is_missing():
    # 'meld 4H JK=5H 6H' with 6H and no joker in hand: its first decision, 'joker as 5H',
    # is refused for the joker; with a joker but no 4H, for the meld no hand card completes
    s = variant_position(JOKERS, [["6H", "9C", "KD"], ["5C"]])
    a = actions.parse_action("meld 4H JK=5H 6H", "jokers")
    with pytest.raises(engine.IllegalActionError, match=r"'joker as 5H' is illegal: player 0 holds 0 joker\(s\)"):
        engine.apply(s, a[0])
    s = variant_position(JOKERS, [["6H", "9C", "JK"], ["5C"]])
    with pytest.raises(engine.IllegalActionError, match="no meld or lay-off of player 0's can use a joker as 5H"):
        engine.apply(s, a[0])
    assert s.named == 0


# ---------------------------------------------------------------- the baselines use their jokers

def _act(agent, s):
    from rummy_env.observation import Encoder, action_mask

    obs = Encoder.for_rules(s.rules).encode(s, s.current)
    return agent.act(obs, action_mask(engine.legal_actions(s), size=s.num_actions))


@pytest.mark.parametrize("name", ["greedy", "heuristic"])
def test_baselines_never_discard_a_joker_they_can_use(name):
    from rummy_env.agents import make_agent

    agent = make_agent(name, seed=0)
    # 4H 5H 6H on the table, JK 9C KD in hand: the joker is kept or laid off, never discarded
    s = variant_position(JOKERS, [["JK", "9C", "KD"], ["5C"]], table=[["4H", "5H", "6H"]])
    assert actions.action_text(_act(agent, s), "jokers") != "discard JK"
    # the 7H was just taken from the pile (it may not be discarded): JK 7H in hand, so the
    # only discard is the joker; but 7H goes on the high end and the joker (as 3H) on the
    # low end, which empties the hand: it goes out without discarding the joker
    s = variant_position(JOKERS, [["JK", "7H"], ["9D"]], table=[["4H", "5H", "6H"]])
    s.drawn_from_discard = card("7H")
    s._legal = None
    assert actions.action_text(actions.parse_action("discard JK", "jokers"), "jokers") in \
        [actions.action_text(a, "jokers") for a in engine.legal_actions(s)]
    played = []
    while not s.hand_over and s.current == 0:
        a = _act(agent, s)
        played.append(actions.action_text(a, "jokers"))
        engine.apply(s, a)
    assert "discard JK" not in played and s.result["winner"] == 0, played
    # with the 5C taken instead, laying the joker off would strand the 5C (it cannot be
    # discarded, and no meld takes it): the joker discard is the one legal move
    s = variant_position(JOKERS, [["JK", "5C"], ["9D"]], table=[["4H", "5H", "6H"]])
    s.drawn_from_discard = card("5C")
    s._legal = None
    assert [actions.action_text(a, "jokers") for a in engine.legal_actions(s)] == ["discard JK"]
    # a joker upcard is always taken
    s = variant_position(JOKERS, [["2C", "9S", "KD"], ["5C"]], discard=["QC", "JK"], phase="draw")
    assert _act(agent, s) == actions.DRAW_DISCARD


# ---------------------------------------------------------------- 500 Rum with the deck variants (§10.3-10.4)

RUM_TWO = Rules.preset("rum500", decks=2, hand_size=5)
RUM_JK = Rules.preset("rum500", jokers=2, hand_size=5)


def test_a_dig_at_two_decks_takes_the_topmost_copy():
    # pile bottom first: 5H 9C 5H KD QS. 'draw discard 5H' names the card: its topmost copy
    # (the third card) and every card above it, 3 cards: 5H KD QS; the deeper 5H and the
    # 9C stay. The 5H is bound; 6H 7H in hand meld it (5H 6H 7H).
    s = variant_position(RUM_TWO, [["6H", "7H", "2C", "3S", "9D"], ["TC", "JD", "4S", "8S", "KC"]],
                         discard=["5H", "9C", "5H", "KD", "QS"], phase="draw")
    a = aid(s, "draw discard 5H")
    assert a == 579 + card("5H") and a in engine.legal_actions(s)
    engine.apply(s, a)
    assert s.discard == [card("5H"), card("9C")] and s.bound == card("5H")
    assert count_of(s.hands[0], card("5H")) == 1 and count_of(s.hands[0], card("KD")) == 1
    legal = [actions.action_text(x, s.table.kind) for x in engine.legal_actions(s)]
    assert not any(t.startswith("discard") for t in legal)  # no discard while the 5H is in hand
    assert "meld 5H 6H 7H" in legal
    engine.apply(s, aid(s, "meld 5H 6H 7H"))
    assert s.bound == -1 and s.meld_points[0] == 5 + 6 + 7


def test_a_dug_joker_must_be_played_and_scores_15():
    # pile bottom first: 2C JK 8C 2D. 'draw discard JK' takes JK 8C 2D; the joker is bound;
    # 4H 5H in hand meld it as 4H 5H JK=6H (at most half jokers: 1 of 3), worth 4 + 5 + 15.
    s = variant_position(RUM_JK, [["4H", "5H", "9S", "KD", "3C"], ["TC", "JD", "4S", "8S", "KC"]],
                         discard=["2C", "JK", "8C", "2D"], phase="draw")
    engine.apply(s, aid(s, "draw discard JK"))
    assert s.bound == JOKER and s.discard == [card("2C")]
    legal = [actions.action_text(x, s.table.kind) for x in engine.legal_actions(s)]
    assert "discard JK" not in legal and not any(t.startswith("discard") for t in legal)
    play(s, "meld 4H 5H JK=6H")
    assert s.bound == -1 and s.meld_points[0] == 24


def test_a_dig_is_refused_when_the_deepest_card_cannot_be_played():
    # the 9C under the upcard: no 9 pair, no 7C-8C / 8C-TC / TC-JC in hand, no joker, no
    # club run on the table: not legal; the upcard alone is
    s = variant_position(RUM_TWO, [["6H", "7H", "2C", "3S", "9D"], ["TC", "JD", "4S", "8S", "KC"]],
                         discard=["9C", "QS"], phase="draw")
    legal = engine.legal_actions(s)
    assert 579 + card("9C") not in legal and actions.DRAW_DISCARD in legal
    with pytest.raises(engine.IllegalActionError, match="could not be melded or laid off"):
        engine.apply(s, 579 + card("9C"))


def test_state_round_trip_mid_dig_at_two_decks():
    from rummy_env import state_json

    s = variant_position(RUM_TWO, [["6H", "7H", "2C", "3S", "9D"], ["TC", "JD", "4S", "8S", "KC"]],
                         discard=["5H", "9C", "5H", "KD", "QS"], phase="draw")
    engine.apply(s, aid(s, "draw discard 5H"))
    d = state_json.to_json(s)
    assert d["bound"] == "5H" and d["meld_points"] == [0, 0]
    back = state_json.from_json(d)
    assert state_json.to_json(back) == d and engine.legal_actions(back) == engine.legal_actions(s)


# ---------------------------------------------------------------- the holding heuristic at the deck-variant tables

def _view(s):
    from rummy_env.observation import Encoder, PlayerView, action_mask

    obs = Encoder.for_rules(s.rules).encode(s, s.current)
    return PlayerView(obs, action_mask(engine.legal_actions(s), size=s.num_actions))


@pytest.mark.parametrize("hand0, table, drawn, expected", [
    # 4H-5H-6H melds, 9C and KD are loose: two cards left and one discard
    (["4H", "5H", "6H", "9C", "KD"], [], None, False),
    # the joker makes 9C 9D a set: run, set, discard KD
    (["4H", "5H", "6H", "JK", "9C", "9D", "KD"], [], None, True),
    # the 9C goes on the table's nines, the KD is the discard
    (["4H", "5H", "6H", "9C", "KD"], [["9H", "9S", "9D"]], None, True),
    # the same hand without the nines on the table, but the KD was just taken: only 9C may go
    (["4H", "5H", "6H", "9C", "KD"], [], "KD", False),
    # a joker left over is laid off on the run the hand melds this turn; 9C is the discard
    (["4H", "5H", "6H", "JK", "9C"], [], None, True),
    # two jokers and a 9C: a meld of three holds at most one joker, nothing is on the table
    (["JK", "JK", "9C"], [], None, False),
    # ... but with a meld on the table both jokers are laid off and 9C is the discard
    (["JK", "JK", "9C"], [["4H", "5H", "6H"]], None, True),
])
def test_can_go_out_at_a_jokers_table(hand0, table, drawn, expected):
    from rummy_env.agents.scripted import can_go_out

    s = variant_position(JOKERS, [hand0, ["2S"]], table=table)
    if drawn:
        s.drawn_from_discard = card(drawn)
        s._legal = None
    assert can_go_out(_view(s)) is expected


def test_can_go_out_counts_a_second_copy_at_two_decks():
    from rummy_env.agents.scripted import can_go_out

    # 4H 5H 6H 4H KD: the second 4H fits no meld of the hand and the table takes none: two
    # cards (4H, KD) for one discard
    s = variant_position(TWO, [["4H", "5H", "6H", "4H", "KD"], ["2S"]])
    assert can_go_out(_view(s)) is False
    s = variant_position(TWO, [["4H", "5H", "6H", "4H"], ["2S"]])
    assert can_go_out(_view(s)) is True


def test_the_holding_heuristic_keeps_its_melds_at_a_jokers_table_until_it_can_go_out():
    from rummy_env.agents import make_agent

    hold, base = make_agent("heuristic:holding", seed=0), make_agent("heuristic", seed=0)
    # 4H 5H 6H 9C KD: the baseline melds the run at once; the holder cannot go out this
    # turn (9C and KD for one discard), so it keeps the run and discards the KD (10 points,
    # the highest loose card)
    s = variant_position(JOKERS, [["4H", "5H", "6H", "9C", "KD"], ["2S"]])
    assert actions.action_text(_act(base, s), "jokers") == "meld 4H 5H 6H"
    assert actions.action_text(_act(hold, s), "jokers") == "discard KD"
    # with the table's nines to take the 9C it can go out: it melds first, as the baseline
    s = variant_position(JOKERS, [["4H", "5H", "6H", "9C", "KD"], ["2S"]], table=[["9H", "9S", "9D"]])
    assert actions.action_text(_act(hold, s), "jokers") == "meld 4H 5H 6H"
