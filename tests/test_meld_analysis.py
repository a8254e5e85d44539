"""rummy_env.meld_analysis: the meld arithmetic the scripted agents and the search share
(RULES.md §3-§4), each value worked out by hand from the rules."""
from __future__ import annotations

import pytest

from rummy_env.cards import mask_of, parse_card, parse_cards
from rummy_env.meld_analysis import (WINDOWS, best_partition, goes_out, layoff_closure, meld_plan, next_high, next_low,
                                     partial_mask)
from rummy_env.melds import MELD_ID_BY_MASK


def _m(*texts: str) -> int:
    return mask_of(parse_cards(list(texts)))


def test_best_partition_prefers_least_deadwood():
    # 7H 8H 9H + 7C 7D: the run (24 points) or the set 7C 7D 7H (21): the run wins
    hand = mask_of(parse_cards(["7H", "8H", "9H", "7C", "7D"]))
    pts, ids = best_partition(hand, "low")
    assert pts == 24 and len(ids) == 1
    # add 7S: now set 7C 7D 7S (21) and run 7H 8H 9H (24) both fit: 45
    pts, ids = best_partition(hand | mask_of([parse_card("7S")]), "low")
    assert pts == 45 and len(ids) == 2


def test_partial_mask_and_layoff_closure():
    hand = mask_of(parse_cards(["5D", "5H", "2C", "4C", "KS", "AS", "9H"]))
    # pairs: 5D 5H; same suit within two: 2C 4C; KS-AS only when aces play high
    assert partial_mask(hand, "low") == mask_of(parse_cards(["5D", "5H", "2C", "4C"]))
    assert partial_mask(hand, "either") == mask_of(parse_cards(["5D", "5H", "2C", "4C", "KS", "AS"]))
    # a run 4H 5H 6H takes 3H (low) and 7H (high); after 7H, 8H too
    cards = mask_of(parse_cards(["7H", "8H", "TH"]))
    placed = layoff_closure(cards, 0, mask_of([parse_card("3H")]), mask_of([parse_card("7H")]), "low")
    assert placed == mask_of(parse_cards(["7H", "8H"]))


@pytest.mark.parametrize("card,aces,low,high", [
    ("5H", "low", "4H", "6H"),
    ("2S", "low", "AS", "3S"),
    ("2S", "high", None, "3S"),    # no ace below a 2 when aces play high
    ("KS", "low", "QS", None),     # Q-K-A is not a run with aces low
    ("KS", "either", "QS", "AS"),
    ("AS", "either", None, None),  # an ace on a run's end closes it (runs never wrap)
])
def test_next_card_at_a_run_end(card, aces, low, high):
    c = parse_card(card)
    assert next_low(c, aces) == (_m(low) if low else 0)
    assert next_high(c, aces) == (_m(high) if high else 0)


@pytest.mark.parametrize("card,aces,windows", [
    ("5H", "low", [("3H", "4H"), ("4H", "6H"), ("6H", "7H")]),
    ("KC", "low", [("JC", "QC")]),
    ("KC", "either", [("JC", "QC"), ("QC", "AC")]),
    ("AS", "low", [("2S", "3S")]),
    ("AS", "high", [("QS", "KS")]),
    ("AS", "either", [("2S", "3S"), ("QS", "KS")]),
    ("2D", "high", [("3D", "4D")]),
])
def test_run_windows_of_a_card(card, aces, windows):
    assert sorted(WINDOWS[aces][parse_card(card)]) == sorted(_m(*w) for w in windows)


def test_meld_plan_melds_then_lays_off_in_a_chain():
    # table: the run 3S 4S 5S (takes 2S low, 6S high) and the set QC QD QH (takes QS)
    table = (_m("QS"), _m("2S"), _m("6S"))
    hand = _m("7H", "8H", "9H", "KC", "2S", "AS")
    run = MELD_ID_BY_MASK[_m("7H", "8H", "9H")]
    # aces low: 2S goes on the run's low end, which then takes AS; KC stays
    assert meld_plan(hand, "low", 1, table) == ((run,), _m("7H", "8H", "9H"), _m("2S", "AS"))
    # aces high: nothing below a 2, so AS stays
    assert meld_plan(hand, "high", 1, table) == ((run,), _m("7H", "8H", "9H"), _m("2S"))
    # lay-offs switched off: melds only
    assert meld_plan(hand, "low", 1, None) == ((run,), _m("7H", "8H", "9H"), 0)


def test_goes_out_by_the_going_out_rules():
    # RULES.md §5: out with nothing left unless a final discard is required, or with one
    # card left to discard that is not the one just taken from the discard pile (§3)
    kh, qs = parse_card("KH"), parse_card("QS")
    assert goes_out(0, -1, must_discard=False)
    assert not goes_out(0, -1, must_discard=True)
    assert goes_out(1 << kh, -1, must_discard=True)
    assert goes_out(1 << kh, qs, must_discard=False)
    assert not goes_out(1 << kh, kh, must_discard=False)  # KH was just taken from the pile
    assert not goes_out(1 << kh | 1 << qs, -1, must_discard=False)
