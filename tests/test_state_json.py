"""API.md's STATE: validation (what is wrong is said) and round trips.

The tests are grouped by layer, not by kind of table (issue 24): after the standard
tables', STATE JSON at the deck-variant tables (RULES.md §10.1-10.3, API.md's STATE): jokers
written ``JK`` and ``JK=<card>``, a card listed twice with two decks, the counts checked,
and exact round trips of positions reached by random legal play.

Expected values are computed by hand: card numbers are ``13 * suit + rank`` (suits C D H
S, ranks A=0 .. K=12), so 5H = 30, 3H = 28, 7H = 32, QS = 50, 3S = 41; a lay-off's id is
``423 + 3 * card + end`` (end 0 set, 1 low, 2 high; API.md's action layout).
"""
from __future__ import annotations

import copy
import json
import random
from collections import Counter

import pytest

from helpers import play, position, rest_of_deck
from rummy_env import Rules, engine, state_json
from rummy_env.actions import MELD_BASE
from rummy_env.cards import CARD_TEXT, JOKER, LAYER, LAYER_MASK, count_of, parse_card
from rummy_env.env import raw_env
from rummy_env.melds import SET

P0 = ["4H", "5H", "JC", "KS", "2C", "7D", "9S", "3D", "8C", "QD"]
P1 = ["KH", "9D", "4C", "AH", "7S", "3S", "TC"]


def good():
    """A legal classic position (seeds/000) as STATE JSON."""
    return {
        "rules": "classic",
        "hands": [list(P0), list(P1)],
        "stock": rest_of_deck(P0, P1, ["TD", "6H"], ["JS", "JD", "JH"]),
        "discard": ["TD", "6H"],
        "melds": [["JS", "JD", "JH"]],
        "current_player": 0,
        "phase": "draw",
        "drawn_from_discard": None,
        "has_melded": [False, True],
        "recycles": 0,
        "turn": 12,
        "scores": [0, 0],
        "dealer": 1,
    }


def rejected(obj, *parts):
    """``state_json.from_json(obj)`` raises a ``ValueError`` whose message names every one
    of ``parts``."""
    with pytest.raises(ValueError) as e:
        state_json.from_json(obj)
    for part in parts:
        assert part in str(e.value), (part, str(e.value))
    return str(e.value)


def bad(msg_parts, **changes):
    """``good()`` with its top-level fields replaced by ``changes`` is rejected, the
    message naming every one of ``msg_parts``."""
    obj = good()
    obj.update(changes)
    rejected(obj, *msg_parts)


def test_good_position_loads():
    s = state_json.from_json(good())
    assert s.current == 0 and s.turn == 12 and s.has_melded == [False, True]


def test_a_card_missing():
    obj = good()
    obj["stock"].remove("2S")
    rejected(obj, "2S", "missing")


def test_a_card_twice():
    obj = good()
    obj["stock"].append("KS")  # also in hands[0]
    rejected(obj, "KS", "twice")


def test_a_card_twice_within_a_hand():
    obj = good()
    obj["stock"].remove("2S")
    obj["hands"][1] = obj["hands"][1][:-1] + ["2S", "2S"]
    rejected(obj, "2S", "twice")


@pytest.mark.parametrize("meld", [["JS", "JD"], ["JS", "JD", "QH"], ["JS", "QS", "AS"], ["KS", "AS", "2S"]])
def test_a_bad_meld(meld):
    obj = good()
    obj["hands"][0] = [c for c in P0 if c not in meld]
    obj["melds"] = [meld]
    obj["stock"] = rest_of_deck(obj["hands"][0], P1, ["TD", "6H"], meld)
    rejected(obj, "melds[0]")


def test_a_bad_meld_is_named_even_when_counts_fit():
    obj = good()
    obj["melds"] = [["JS", "JD", "QH"]]
    obj["stock"] = rest_of_deck(P0, P1, ["TD", "6H"], ["JS", "JD", "QH"])
    rejected(obj, "melds[0]", "not a meld")


def test_impossible_hand_size():
    obj = good()
    obj["hands"][0] = P0 + ["2S"]  # 11 cards before the draw
    obj["stock"].remove("2S")
    rejected(obj, "hands[0]", "11")


def test_hand_sizes_that_do_not_match_the_melds():
    obj = good()
    obj["hands"][1] = P1[:-1]  # 6 cards but only 3 melded
    obj["stock"].append(P1[-1])
    rejected(obj, "melds")


def test_an_empty_hand_while_the_hand_is_on():
    obj = good()
    obj["hands"][0] = []
    obj["stock"] += P0
    rejected(obj, "hands[0]")


@pytest.mark.parametrize("phase", ["meld", "Draw", None, 0])
def test_unknown_phase(phase):
    bad(["phase"], phase=phase)


def test_unknown_field():
    bad(["colour"], colour="red")


@pytest.mark.parametrize("field", ["hands", "stock", "discard", "melds", "current_player", "phase"])
def test_missing_required_field(field):
    obj = good()
    del obj[field]
    rejected(obj, field)


@pytest.mark.parametrize("cp", [2, -1, "0", True])
def test_bad_current_player(cp):
    bad(["current_player"], current_player=cp)


def test_bad_card_text():
    obj = good()
    obj["hands"][0] = obj["hands"][0][:-1] + ["ZZ"]
    rejected(obj, "hands[0]", "ZZ")


def test_wrong_number_of_hands():
    obj = good()
    obj["rules"] = {"preset": "turnover", "num_players": 3}
    rejected(obj, "hands", "3")


def test_bad_rules():
    bad(["gin"], rules="gin")
    bad(["jokers"], rules={"preset": "classic", "jokers": 3})
    bad(["decks"], rules={"decks": 3})
    bad(["aces"], rules={"preset": "classic", "aces": "sideways"})


def test_drawn_from_discard_in_the_draw_phase():
    bad(["drawn_from_discard"], drawn_from_discard="4H")


def test_drawn_from_discard_not_in_hand():
    obj = good()
    obj["phase"] = "play"
    obj["hands"][0] = P0 + ["6H"]
    obj["discard"] = ["TD"]
    obj["drawn_from_discard"] = "TD"
    obj["stock"] = rest_of_deck(P0, P1, ["TD", "6H"], ["JS", "JD", "JH"])
    rejected(obj, "drawn_from_discard")
    obj["drawn_from_discard"] = "6H"
    s = state_json.from_json(obj)
    assert s.drawn_from_discard == parse_card("6H")


def test_bad_optional_fields():
    bad(["has_melded"], has_melded=[False])
    bad(["scores"], scores=[0])
    bad(["dealer"], dealer=5)
    bad(["recycles"], recycles=-1)
    bad(["recycles"], recycles=2)  # classic allows one recycle
    bad(["turn"], turn=300)  # classic: the hand would be over after 300 turns


def test_optional_fields_default():
    obj = {k: v for k, v in good().items()
           if k in ("rules", "hands", "stock", "discard", "melds", "current_player", "phase", "has_melded")}
    j = state_json.to_json(state_json.from_json(obj))
    assert j["has_melded"] == [False, True] and j["recycles"] == 0 and j["turn"] == 0
    assert j["scores"] == [0, 0] and j["dealer"] == 1 and j["drawn_from_discard"] is None
    assert j["hand_over"] is False and "result" not in j


def test_has_melded_must_fit_the_hand_sizes():
    # seat 1 holds 7 of its 10 dealt cards: it must have melded (the JS JD JH set)
    obj = good()
    del obj["has_melded"]
    with pytest.raises(ValueError, match="hands\\[1\\] has 7 cards but has_melded\\[1\\] is false"):
        state_json.from_json(obj)
    obj["has_melded"] = [True, True]  # seat 0 still holds all 10: it cannot have melded
    with pytest.raises(ValueError, match="hands\\[0\\] has 10 cards but is marked as having melded"):
        state_json.from_json(obj)


def test_rules_optional_on_input():
    obj = good()
    del obj["rules"]
    s = state_json.from_json(obj, rules=Rules.preset("classic", aces="high"))
    assert s.rules.aces == "high"
    s = state_json.from_json(obj)
    assert s.rules == Rules.preset("classic")


def test_rules_as_an_object():
    obj = good()
    obj["rules"] = {"preset": "classic", "aces": "either"}
    assert state_json.from_json(obj).rules.aces == "either"
    obj["rules"] = Rules(aces="high", target=None).to_json()  # option fields, no preset
    s = state_json.from_json(obj)
    assert s.rules.aces == "high" and s.rules.target is None


def test_output_has_every_field():
    j = state_json.to_json(state_json.from_json(good()))
    for k in ["rules", "hands", "stock", "discard", "melds", "current_player", "phase", "drawn_from_discard",
              "has_melded", "recycles", "turn", "scores", "dealer", "hand_over"]:
        assert k in j
    assert j["rules"] == "classic"
    assert j["stock"][0] == good()["stock"][0]  # top first
    assert j["discard"][-1] == "6H"  # top last


def test_round_trip_of_the_good_position():
    j = state_json.to_json(state_json.from_json(good()))
    assert state_json.to_json(state_json.from_json(copy.deepcopy(j))) == j


@pytest.mark.parametrize("preset,n", [("classic", 2), ("turnover", 3), ("turnover", 5), ("deadwood", 6),
                                      ("stalemate", 4), ("practice", 2)])
def test_round_trip_through_random_play(preset, n):
    rng = random.Random(n)
    s = engine.new_game(Rules.preset(preset, num_players=n, aces="either"), seed=n)
    steps = 0
    while not s.hand_over and steps < 400:
        j = state_json.to_json(s)
        assert state_json.to_json(state_json.from_json(j)) == j
        engine.apply(s, rng.choice(engine.legal_actions(s)))
        steps += 1
    j = state_json.to_json(s)
    assert state_json.to_json(state_json.from_json(j)) == j


def test_round_trip_keeps_playing_identically():
    # the copy from STATE plays on like the original, action by action
    s = engine.new_game(Rules.preset("turnover", num_players=3), seed=5)
    rng = random.Random(1)
    for _ in range(30):
        engine.apply(s, rng.choice(engine.legal_actions(s)))
    t = state_json.from_json(state_json.to_json(s))
    for _ in range(30):
        if s.hand_over:
            break
        assert engine.legal_actions(t) == engine.legal_actions(s)
        a = rng.choice(engine.legal_actions(s))
        if a == 0 and not s.stock:
            break  # a recycle shuffles with each position's own RNG
        engine.apply(s, a)
        engine.apply(t, a)
        assert state_json.to_json(t) == state_json.to_json(s)


def test_round_trip_after_the_hand_is_over():
    hands = [["5C"], ["KS", "9D", "4C", "AH"]]
    melds = [["6C", "7C", "8C"], ["3H", "3D", "3S"], ["TC", "JC", "QC"]]
    s = position({"preset": "classic", "hand_size": 7}, hands, ["9H"], melds, stock_top=["2D"],
                 has_melded=[True, True])
    play(s, "draw stock", "layoff 5C low", "discard 2D")
    j = state_json.to_json(s)
    assert j["hand_over"] is True and j["result"]["outcome"] == "out" and j["result"]["winner"] == 0
    t = state_json.from_json(j)
    assert t.hand_over and engine.legal_actions(t) == []
    assert state_json.to_json(t) == j


def test_scores_must_be_possible():
    with pytest.raises(ValueError, match="negative"):
        state_json.from_json(dict(good(), scores=[-5, 0]))
    with pytest.raises(ValueError, match="reach the target 100"):
        state_json.from_json(dict(good(), scores=[100, 0]))
    assert state_json.from_json(dict(good(), scores=[99, 0])).scores == [99, 0]


# ================================================================ the deck-variant tables

C = parse_card


# ---------------------------------------------------------------- helpers

def deck_texts(rules: Rules) -> list[str]:
    """Every card of the table's deck as text, a copy per occurrence, in deck order
    (AC 2C .. KS per deck, then the jokers): RULES.md §10.2-10.3."""
    return list(CARD_TEXT) * rules.decks + ["JK"] * (rules.jokers * rules.decks)


def placed_texts(texts: list[str]) -> list[str]:
    """What a list of STATE texts places: a melded ``JK=<card>`` places a joker."""
    return ["JK" if t.upper().startswith("JK=") else t for t in texts]


def state_obj(rules_json, hands, discard, melds=(), current=0, phase="draw", **extra) -> dict:
    """A STATE whose stock is every card of the deck not placed elsewhere, in deck order.
    A hand given as ``None`` gets the table's deal (``cards_dealt``) of the first unplaced
    cards in deck order (before the stock takes the rest)."""
    rules = Rules.make(rules_json)
    rest = Counter(deck_texts(rules))
    used = Counter(placed_texts([t for h in hands if h is not None for t in h] + list(discard)
                                + [t for m in melds for t in m]))
    assert not used - rest, f"the helper was given more copies than the deck has: {used - rest}"
    rest -= used
    order = list(dict.fromkeys(deck_texts(rules)))

    def take(k: int) -> list[str]:
        out = []
        for t in order:
            while rest[t] and len(out) < k:
                out.append(t)
                rest[t] -= 1
        assert len(out) == k
        return out

    hands = [take(rules.cards_dealt) if h is None else list(h) for h in hands]
    stock = [t for t in order for _ in range(rest[t])]
    obj = {"rules": rules_json, "hands": hands, "stock": stock, "discard": list(discard),
           "melds": [list(m) for m in melds], "current_player": current, "phase": phase}
    obj.update(extra)
    return obj




# ---------------------------------------------------------------- random play round trips

CONFIGS = [
    ("jokers", dict(num_players=2)),
    ("jokers", dict(num_players=4)),
    ("two_decks", dict(num_players=5)),
    ("two_decks", dict(num_players=7)),
    ("classic", dict(aces="around")),
    ("jokers", dict(decks=2)),
]


def _choose(state: engine.GameState, rng: random.Random) -> int:
    """A random legal action, a meld or lay-off (when there is one) more often than not, so
    that the positions hold melds, jokers on the table and finished hands."""
    legal = engine.legal_actions(state)
    lay = state.variant
    plays = [a for a in legal if a >= MELD_BASE and a != lay.joker_discard
             and not (lay.joker_as >= 0 and lay.joker_as <= a < lay.joker_as + 52)]
    if plays and rng.random() < 0.7:
        return rng.choice(plays)
    return rng.choice(legal)


@pytest.mark.parametrize("preset,over", CONFIGS, ids=[f"{p}-{o}" for p, o in CONFIGS])
def test_random_positions_round_trip_exactly(preset, over):
    rules = Rules.preset(preset, **over)
    seen = Counter()
    for seed in range(7):  # seeds 0-3 meld eagerly; seeds 4-6 play uniformly (discarding jokers, say)
        s = engine.new_game(rules, seed=seed)
        assert s.variant is not None
        rng = random.Random(seed)
        while True:
            d = state_json.to_json(s)
            t = state_json.from_json(json.loads(json.dumps(d)), seed=seed)
            assert state_json.to_json(t) == d
            assert engine.legal_actions(t) == engine.legal_actions(s)
            # the engine's own fields, not only what the JSON shows
            assert t.variant is s.variant and t.hands == s.hands and t.known == s.known
            assert t.discards_by == s.discards_by and t.melds == s.melds and t.stock == s.stock
            assert t.layoff_masks == s.layoff_masks and t.joker_masks == s.joker_masks
            seen["positions"] += 1
            seen["joker melded"] += any(m.jokers for m in s.melds)
            seen["run turning the corner"] += any(m.kind != SET and m.hi >= 14 for m in s.melds)
            seen["a card held twice"] += any(h >> LAYER & LAYER_MASK for h in s.hands)
            seen["joker discarded"] += any(x >> JOKER & 1 for x in s.discards_by)
            if s.hand_over:
                seen["hand over"] += 1
                break
            engine.apply(s, _choose(s, rng) if seed < 4 else rng.choice(engine.legal_actions(s)))
    assert seen["positions"] >= 300 and seen["hand over"] == 7, seen
    # the positions exercise the variant's own forms
    if rules.jokers:
        assert seen["joker melded"] and seen["joker discarded"], seen
    if rules.decks == 2:
        assert seen["a card held twice"], seen
    if rules.aces == "around":
        assert seen["run turning the corner"], seen


def test_a_loaded_position_plays_on_like_the_original():
    """From a mid-hand position with jokers on the table and two decks, the loaded copy
    (its RNG state copied) plays the same random actions to the same positions."""
    rules = Rules.preset("jokers", decks=2, num_players=3)
    s = engine.new_game(rules, seed=11)
    rng = random.Random(11)
    for _ in range(30):
        engine.apply(s, _choose(s, rng))
    assert any(m.jokers for m in s.melds) and not s.hand_over
    t = state_json.from_json(state_json.to_json(s))
    t.rng.setstate(s.rng.getstate())
    for _ in range(400):
        if s.hand_over:
            break
        a = _choose(s, rng)
        engine.apply(s, a)
        engine.apply(t, a)
        assert state_json.to_json(t) == state_json.to_json(s)
    assert s.hand_over


# ---------------------------------------------------------------- two decks: repeated cards

TD5 = {"preset": "two_decks", "num_players": 5, "hand_size": 3}


def two_decks_obj():
    return state_obj(TD5, [["5H", "9C", "5H"], ["2S", "3S", "4S"], ["6S", "7S", "8S"], ["9S", "TS", "JS"],
                           ["QS", "KS", "AS"]], ["TH"])


def test_a_hand_listing_a_card_twice_at_two_decks():
    s = state_json.from_json(two_decks_obj())
    assert count_of(s.hands[0], C("5H")) == 2 and count_of(s.hands[0], C("9C")) == 1
    d = state_json.to_json(s)
    assert d["hands"][0] == ["9C", "5H", "5H"]  # by card number: 9C = 8, 5H = 30
    assert "5H" not in d["stock"] and d["stock"].count("TH") == 1 and d["stock"].count("AC") == 2
    assert len(d["stock"]) == 104 - 15 - 1


def test_a_third_copy_is_refused():
    obj = two_decks_obj()
    obj["stock"][0] = "5H"  # a third 5H (and one AC fewer)
    rejected(obj, "5H", "3 times", "2 time(s)", "hands[0] x2, stock")


def test_a_missing_copy_is_named_with_its_count():
    obj = two_decks_obj()
    obj["stock"].remove("TH")
    rejected(obj, "missing", "TH (1 of 2)")


def test_a_set_with_a_repeated_suit_is_refused_at_two_decks():
    obj = state_obj({"preset": "two_decks", "num_players": 5, "hand_size": 4},
                    [["2C"], None, None, None, None], ["TH"], melds=[["7H", "7D", "7C"]], current=1,
                    has_melded=[True, False, False, False, False])
    state_json.from_json(obj)  # the legal form: three suits
    obj["melds"] = [["7S", "7S", "7H"]]
    rejected(obj, "melds[0]", "7S appears twice in one meld")


def test_two_equal_runs_and_two_sets_of_one_rank_at_two_decks():
    obj = state_obj({"preset": "two_decks", "num_players": 5, "hand_size": 7},
                    [["2C", "3C", "4C", "5C", "6C", "7C", "8C"], None, None, ["KC"], ["KD"]], ["TH"],
                    melds=[["4H", "5H", "6H"], ["6H", "4H", "5H"], ["7S", "7H", "7D"], ["7S", "7H", "7C"]],
                    has_melded=[False, False, False, True, True])
    s = state_json.from_json(obj)
    assert [m.texts() for m in s.melds] == [["4H", "5H", "6H"], ["4H", "5H", "6H"], ["7D", "7H", "7S"],
                                            ["7C", "7H", "7S"]]
    # either run takes 3H low and 7H high; the 7-sets take 7C and 7D (RULES.md §10.3)
    assert s.layoff_masks == (1 << C("7C") | 1 << C("7D"), 1 << C("3H"), 1 << C("7H"))


def test_the_mover_holding_two_copies_of_the_card_taken():
    """Two decks: the mover took 5H from the discard pile and holds both 5Hs (neither may
    be discarded, RULES.md §10.3): legal only when both can be laid off."""
    def obj(melds):  # 9 cards melded: 5 x 10 dealt - 42 held + 1 drawn; the others hold AC .. 7D
        return state_obj({"preset": "two_decks", "num_players": 5}, [["5H", "5H"], None, None, None, None],
                         ["KS"], melds=melds, phase="play", drawn_from_discard="5H",
                         has_melded=[True, False, False, False, False])

    s = state_json.from_json(obj([["2H", "3H", "4H"], ["6H", "7H", "8H"], ["9S", "9H", "9D"]]))
    # 5H high on 2-3-4H (423 + 90 + 2) or low on 6-7-8H (423 + 90 + 1); no discard, no meld
    assert engine.legal_actions(s) == [514, 515]
    # one 5H goes high on 2-3-4H, the second then has nowhere to go
    rejected(obj([["2H", "3H", "4H"], ["TS", "TH", "TD"], ["9S", "9H", "9D"]]), "can no longer finish", "5H")


def test_known_cards_are_a_multiset_within_the_hand():
    obj = two_decks_obj()
    obj["known_cards"] = [["5H", "5H"], [], [], [], []]
    s = state_json.from_json(obj)
    assert count_of(s.known[0], C("5H")) == 2
    assert state_json.to_json(s)["known_cards"][0] == ["5H", "5H"]
    obj["known_cards"] = [[], ["2S", "2S"], [], [], []]
    rejected(obj, "known_cards[1]", "2S 2 time(s)", "hands[1] holds 2S 1 time(s)")


# ---------------------------------------------------------------- jokers

JK2 = {"preset": "jokers", "hand_size": 4}


def joker_obj(meld):
    """Seat 0 melded ``meld`` (3 cards) and holds one card; seat 1 is to draw."""
    return state_obj(JK2, [["KD"], ["2C", "9D", "QS", "TS"]], ["8C"], melds=[meld], current=1,
                     has_melded=[True, False])


def test_a_meld_with_a_joker_keeps_its_identity():
    s = state_json.from_json(joker_obj(["6H", "JK=5H", "4H"]))
    m = s.melds[0]
    assert m.jokers == 1 << 30 and m.mask == 1 << 29 | 1 << 30 | 1 << 31 and (m.lo, m.hi) == (3, 5)
    d = state_json.to_json(s)
    assert d["melds"] == [["4H", "JK=5H", "6H"]]
    # a melded joker counts as a joker: the natural 5H and the second joker lie in the stock
    assert d["stock"].count("5H") == 1 and d["stock"].count("JK") == 1
    assert d["hands"][1] == ["2C", "9D", "TS", "QS"]
    # the run takes 3H low and 7H high, a joker too (1 joker in 3 cards leaves room for one)
    assert s.layoff_masks == (0, 1 << 28, 1 << 32) and s.joker_masks == (0, 1 << 28, 1 << 32)


def test_a_full_meld_takes_no_joker():
    # 2 jokers in a 4-card run: a fifth card may be natural only (at most half jokers, §10.2)
    obj = state_obj({"preset": "jokers", "hand_size": 5}, [["KD"], ["2C", "9D", "QS", "TS", "JS"]], ["8C"],
                    melds=[["4H", "JK=5H", "JK=6H", "7H"]], current=1, has_melded=[True, False])
    s = state_json.from_json(obj)
    assert s.melds[0].jokers == 1 << 30 | 1 << 31
    assert s.layoff_masks == (0, 1 << 28, 1 << 33) and s.joker_masks == (0, 0, 0)


def test_a_joker_in_a_set():
    s = state_json.from_json(joker_obj(["7S", "JK=7H", "7D"]))
    assert s.melds[0].jokers == 1 << C("7H") and state_json.to_json(s)["melds"] == [["7D", "JK=7H", "7S"]]
    assert s.layoff_masks == (1 << C("7C"), 0, 0) == s.joker_masks
    rejected(joker_obj(["7S", "JK=7S", "7D"]), "melds[0]", "7S appears twice in one meld")


def test_two_jokers_in_a_three_card_meld_are_refused():
    rejected(joker_obj(["4H", "JK=5H", "JK=6H"]), "melds[0]", "2 jokers among 3 cards",
             "at most as many jokers as natural cards")


def test_a_bare_joker_in_a_meld_is_refused():
    rejected(joker_obj(["4H", "JK", "6H"]), "melds[0]", "JK=<card>")


def test_a_joker_identity_must_make_a_meld():
    rejected(joker_obj(["4H", "JK=8H", "6H"]), "melds[0]")
    rejected(joker_obj(["4H", "JK=XX", "6H"]), "melds[0]", "JK=XX")


def test_the_joker_count_is_checked():
    obj = joker_obj(["4H", "JK=5H", "6H"])
    obj["stock"][0] = "JK"  # a third joker (and one AC fewer)
    rejected(obj, "JK appears 3 times", "2 joker(s)")
    obj = joker_obj(["4H", "JK=5H", "6H"])
    obj["stock"].remove("JK")
    rejected(obj, "missing", "JK (1 of 2)")
    obj = joker_obj(["4H", "JK=5H", "6H"])
    obj["stock"].remove("5H")  # the joker is not the 5H
    rejected(obj, "missing", "5H")


def test_a_joker_at_a_table_without_jokers_is_refused():
    obj = state_obj("classic", [["AC"] + [CARD_TEXT[c] for c in range(1, 10)], [CARD_TEXT[c] for c in range(13, 23)]],
                    ["KS"])
    state_json.from_json(obj)
    obj["hands"][0][0] = "JK"
    rejected(obj, "hands[0]", "JK", "no jokers", "0 times")
    obj = two_decks_obj()
    obj["melds"] = [["4H", "JK=5H", "6H"]]
    rejected(obj, "melds[0]", "JK=5H", "no jokers")


def test_a_joker_taken_from_the_discard_pile_and_a_discarded_joker():
    # seat 0 took the upcard JK (it may not discard it this turn) and holds 3 more cards
    obj = state_obj(JK2, [["2C", "9D", "QS", "JK", "KH"], ["AC", "AD", "AH", "JK"]], ["8C"], phase="play",
                    drawn_from_discard="JK", discards_by=[["8C"], []], known_cards=[["JK"], []])
    s = state_json.from_json(obj)
    assert s.drawn_from_discard == JOKER and s.discards_by[0] == 1 << C("8C") and s.known[0] == 1 << JOKER
    legal = engine.legal_actions(s)
    assert s.variant.joker_discard not in legal and 2 + C("KH") in legal
    d = state_json.to_json(s)
    assert d["drawn_from_discard"] == "JK" and d["hands"][0] == ["2C", "9D", "KH", "QS", "JK"]
    # a joker that seat 1 discarded earlier
    obj["discards_by"] = [[], ["JK"]]
    assert state_json.to_json(state_json.from_json(obj))["discards_by"] == [[], ["JK"]]
    obj["discards_by"] = [[], ["JK", "JK"]]
    rejected(obj, "discards_by[1]", "more than once")
    # drawn_from_discard JK while the mover holds none and none is melded
    obj = state_obj(JK2, [["2C", "9D", "QS", "TH", "KH"], ["AC", "AD", "AH", "JK"]], ["8C"], phase="play",
                    drawn_from_discard="JK")
    rejected(obj, "drawn_from_discard JK", "hands[0]")


# ---------------------------------------------------------------- runs that turn the corner

def test_a_run_that_turns_the_corner():
    around = {"preset": "classic", "aces": "around", "hand_size": 4}
    obj = state_obj(around, [["KD"], ["2C", "9D", "QD", "TD"]], ["8C"],
                    melds=[["2S", "KS", "AS"]], current=1, has_melded=[True, False])
    s = state_json.from_json(obj)
    m = s.melds[0]
    assert (m.lo, m.hi) == (12, 14) and m.jokers == 0
    assert state_json.to_json(s)["melds"] == [["KS", "AS", "2S"]]
    assert s.layoff_masks == (0, 1 << 50, 1 << 41)  # QS low, 3S high
    obj["rules"] = {"preset": "classic", "hand_size": 4}  # aces low: K-A-2 is no run
    rejected(obj, "melds[0]", "around")


# ---------------------------------------------------------------- the env

def test_env_reset_accepts_a_variant_position():
    rules = Rules.preset("jokers", decks=2, num_players=3)
    s = engine.new_game(rules, seed=5)
    rng = random.Random(5)
    for _ in range(25):
        engine.apply(s, _choose(s, rng))
    d = state_json.to_json(s)
    env = raw_env(rules)
    env.reset(seed=1, options={"state": d})
    assert state_json.to_json(env.state) == d
    assert engine.legal_actions(env.state) == engine.legal_actions(s)
    with pytest.raises(ValueError, match="jokers"):
        raw_env("jokers", num_players=3).reset(seed=1, options={"state": d})


def test_render_shows_a_loaded_variant_position():
    env = raw_env(Rules.make(JK2), render_mode="ansi")
    env.reset(seed=1, options={"state": joker_obj(["4H", "JK=5H", "6H"])})
    text = env.render()
    assert "melds: 4H JK=5H 6H" in text and "upcard: 8C" in text
    assert "your hand (player_1): 2C 9D TS QS" in text and "player_0 (1 cards)" in text
    env = raw_env(Rules.make(TD5), render_mode="ansi")
    env.reset(seed=1, options={"state": two_decks_obj()})
    assert "your hand (player_0): 9C 5H 5H" in env.render()
