"""API.md's STATE: validation (what is wrong is said) and round trips."""
import copy
import random

import pytest

from helpers import play, position, rest_of_deck
from rummy_env import Rules, engine, state_json
from rummy_env.cards import parse_card

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
