"""RULES.md §3: the turn (draw, meld and lay off, discard), the seeds/000 worked
example, the taken-discard rule, full sets, run ends, the "no legal way to finish"
decision, and illegal actions."""
import pytest

from helpers import assert_illegal, hand_text, legal_texts, play, position, table
from rummy_env import Rules, engine, state_json
from rummy_env.cards import parse_card

# seeds/000: "the discard pile shows the 6♥ and you hold 4♥-5♥ plus the J♣, while your
# opponent has a set of three jacks melded on the table. You take the 6♥, meld
# 4♥-5♥-6♥, lay the J♣ off onto their jack set, and discard a lone king."
P0_HAND = ["4H", "5H", "JC", "KS", "2C", "7D", "9S", "3D", "8C", "QD"]  # 10 cards, no meld among the rest
P1_HAND = ["KH", "9D", "4C", "AH", "7S", "3S", "TC"]  # 7 = 10 dealt - 3 melded


def seed000_position():
    return position(
        "classic",
        hands=[P0_HAND, P1_HAND],
        discard=["TD", "6H"],
        melds=[["JS", "JD", "JH"]],
        has_melded=[False, True],
        turn=7,
        dealer=0,  # player 0 moves at turn 7: play starts left of the dealer (seat 1) and alternates
    )


def test_seed000_worked_example():
    s = seed000_position()
    assert engine.legal_actions(s) == [engine.action_id(s, "draw stock"), engine.action_id(s, "draw discard")]
    play(s, "draw discard")
    assert "6H" in hand_text(s, 0) and len(hand_text(s, 0)) == 11
    # throwing the 6H straight back is the forbidden move
    assert "discard 6H" not in legal_texts(s)
    assert "meld 4H 5H 6H" in legal_texts(s)
    play(s, "meld 4H 5H 6H")
    # lay-offs ignore ownership: JC goes on the opponent's set of jacks
    assert engine.action_id(s, "layoff JC") == engine.action_id(s, "layoff JC set")
    play(s, "layoff JC")
    play(s, "discard KS")
    j = state_json.to_json(s)
    # the hand shrank by four in one turn: 10 + 1 drawn - 3 melded - 1 laid off - 1 discarded
    assert sorted(j["hands"][0]) == sorted(["2C", "7D", "9S", "3D", "8C", "QD"])
    assert sorted(j["hands"][1]) == sorted(P1_HAND)
    assert sorted(map(sorted, j["melds"])) == sorted([sorted(["JS", "JD", "JH", "JC"]), ["4H", "5H", "6H"]])
    assert j["discard"] == ["TD", "KS"]
    assert j["current_player"] == 1 and j["phase"] == "draw"
    assert j["has_melded"] == [True, True]
    assert j["turn"] == 8
    assert j["drawn_from_discard"] is None
    assert not j["hand_over"]


def test_seed000_meld_in_any_card_order_is_the_same_action():
    s = seed000_position()
    assert engine.action_id(s, "meld 6H 4H 5H") == engine.action_id(s, "meld 4h 5♥ 6H")


def test_draw_stock_takes_the_top_of_the_stock():
    s = position("classic", hands=[P0_HAND, P1_HAND], discard=["TD", "6H"], melds=[["JS", "JD", "JH"]],
                 stock=None, has_melded=[False, True])
    top = state_json.to_json(s)["stock"][0]
    play(s, "draw stock")
    assert top in hand_text(s, 0)
    assert state_json.to_json(s)["discard"] == ["TD", "6H"]
    assert state_json.to_json(s)["drawn_from_discard"] is None


def test_only_the_top_discard_can_be_taken():
    s = seed000_position()
    play(s, "draw discard")
    assert "TD" not in hand_text(s, 0)
    assert state_json.to_json(s)["discard"] == ["TD"]
    assert state_json.to_json(s)["drawn_from_discard"] == "6H"


def test_must_draw_before_anything_else():
    s = seed000_position()
    for text in ["discard KS", "meld 4H 5H 6H", "layoff JC set"]:
        assert_illegal(s, text, "draw")


def test_only_one_draw_per_turn():
    s = seed000_position()
    play(s, "draw stock")
    for text in ["draw stock", "draw discard"]:
        assert text not in legal_texts(s)
        assert_illegal(s, text)


# ---------------------------------------------------------------- the taken discard

def small(**over):
    """Classic rules with 3-card hands, so positions are short to write."""
    return Rules.preset("classic", hand_size=3, **over).to_json()


def test_taken_discard_cannot_be_discarded_but_a_stock_card_can():
    hands = [["2C", "7D", "KS"], ["3S", "8H", "QD"]]
    s = position(small(), hands=hands, discard=["9C"], stock_top=["5H"])
    play(s, "draw stock")
    assert "discard 5H" in legal_texts(s)  # a card drawn from the stock may go straight back
    play(s, "discard 5H")
    assert state_json.to_json(s)["discard"] == ["9C", "5H"]

    s = position(small(), hands=hands, discard=["9C"], stock_top=["5H", "6C"])
    play(s, "draw discard")
    assert set(legal_texts(s)) == {"discard 2C", "discard 7D", "discard KS"}
    assert_illegal(s, "discard 9C", "taken from the discard pile")
    # on a later turn the restriction is gone
    play(s, "discard KS", "draw stock", "discard 5H", "draw stock")
    assert hand_text(s, 0) == {"2C", "7D", "9C", "6C"}
    assert "discard 9C" in legal_texts(s)


# ---------------------------------------------------------------- melds and lay-offs

def test_sets_of_three_and_four_and_runs_are_melds():
    hands = [["7C", "7D", "7H", "7S", "4D", "5D", "6D", "8D", "9S", "KC"],
             ["2H", "3H", "4H", "5H", "6H", "8H", "9H", "TH", "JH", "QH"]]
    s = position("classic", hands=hands, discard=["AS"], stock_top=["3C"])
    play(s, "draw stock")
    texts = legal_texts(s)
    expected = ["meld 7C 7D 7H", "meld 7C 7D 7S", "meld 7C 7H 7S", "meld 7D 7H 7S", "meld 7C 7D 7H 7S",
                "meld 4D 5D 6D", "meld 5D 6D 7D", "meld 6D 7D 8D", "meld 4D 5D 6D 7D", "meld 5D 6D 7D 8D",
                "meld 4D 5D 6D 7D 8D"]
    # by hand: the 5 sets inside four sevens, the 6 runs inside 4D-8D; nothing else
    assert sorted(t for t in texts if t.startswith("meld")) == sorted(expected)
    for bad in ["meld 7C 7D", "meld 4D 5D 8D", "meld 4D 5D 6C", "meld 9S KC 3C"]:
        with pytest.raises(ValueError):
            engine.apply(s, engine.action_id(s, bad))


def test_a_card_belongs_to_one_meld_only():
    hands = [["7C", "7D", "7H", "5H", "6H", "9S", "KC", "2S", "3C", "QD"],
             ["2H", "3H", "4H", "4C", "6C", "8H", "9H", "TH", "JH", "QH"]]
    s = position("classic", hands=hands, discard=["AS"], stock_top=["AD"])
    play(s, "draw stock")
    assert "meld 5H 6H 7H" in legal_texts(s)
    play(s, "meld 7C 7D 7H")
    assert "meld 5H 6H 7H" not in legal_texts(s)


def test_layoff_on_own_and_opponent_melds_set_takes_its_fourth_card():
    # player 0 made the sevens, player 1 the hearts run: both take lay-offs from player 0
    hands = [["7S", "3H", "8H", "2C"], ["KD", "9C", "5S", "TC"]]
    s = table("classic", hands, discard=["QC"], melds=[["7C", "7D", "7H"], ["4H", "5H", "6H"]],
              stock_top=["AC"], has_melded=[True, True])
    play(s, "draw stock")
    texts = legal_texts(s)
    assert {"layoff 7S set", "layoff 3H low"} <= set(texts)
    assert "layoff 7S low" not in texts and "layoff 7S high" not in texts
    assert "layoff 8H high" not in texts  # 4H-5H-6H ends at 6: 7H is on the sevens
    play(s, "layoff 7S")
    assert sorted(state_json.to_json(s)["melds"][0]) == sorted(["7C", "7D", "7H", "7S"])
    assert not any(t.endswith(" set") for t in legal_texts(s))


def test_a_full_set_takes_no_layoff():
    hands = [["JC", "QH", "2C"], ["KD", "9C", "5S", "4C"]]
    s = table("classic", hands, discard=["QC"], melds=[["7C", "7D", "7H", "7S"], ["JS", "JD", "JH"]],
              stock_top=["AC"], has_melded=[True, True])
    play(s, "draw stock")
    # only the set of jacks can take a card; the four sevens are full
    assert [t for t in legal_texts(s) if t.startswith("layoff")] == ["layoff JC set"]
    play(s, "layoff JC set")
    assert [t for t in legal_texts(s) if t.startswith("layoff")] == []
    assert s.layoff_masks[0] == 0  # no set on the table takes any card now


def test_run_ends_low_high_and_bare_layoff():
    hands = [["3H", "8H", "JC", "2C"], ["KD", "9C", "5S"]]
    melds = [["4H", "5H", "6H", "7H"], ["JS", "JD", "JH"]]
    s = table("classic", hands, discard=["QC"], melds=melds, stock_top=["AC"], has_melded=[True, True])
    play(s, "draw stock")
    texts = legal_texts(s)
    assert {"layoff 3H low", "layoff 8H high", "layoff JC set"} <= set(texts)
    for t in ["layoff 3H high", "layoff 8H low", "layoff 3H set", "layoff 2C low"]:
        assert t not in texts
    assert engine.action_id(s, "layoff 3H") == engine.action_id(s, "layoff 3H low")
    assert engine.action_id(s, "layoff 8H") == engine.action_id(s, "layoff 8H high")
    assert engine.action_id(s, "layoff JC") == engine.action_id(s, "layoff JC set")
    assert_illegal(s, "layoff 3H high", "high end")
    with pytest.raises(ValueError) as e:
        engine.action_id(s, "layoff 2C")
    assert "2C" in str(e.value)
    play(s, "layoff 3H low", "layoff 8H high")
    assert state_json.to_json(s)["melds"][0] == ["3H", "4H", "5H", "6H", "7H", "8H"]
    # the ends moved: the run now takes 2H low and 9H high
    assert s.layoff_masks[1] == 1 << parse_card("2H")
    assert s.layoff_masks[2] == 1 << parse_card("9H")


def test_bare_layoff_fitting_two_melds_is_ambiguous():
    # 5H fits the high end of 2H-3H-4H and the low end of 6H-7H-8H
    hands = [["5H", "JC", "2C"], ["KD", "9C", "5S"]]
    melds = [["2H", "3H", "4H"], ["6H", "7H", "8H"]]
    s = table("classic", hands, discard=["QC"], melds=melds, stock_top=["AC"], has_melded=[True, True])
    play(s, "draw stock")
    with pytest.raises(ValueError) as e:
        engine.action_id(s, "layoff 5H")
    assert "more than one" in str(e.value)
    assert {"layoff 5H low", "layoff 5H high"} <= set(legal_texts(s))
    play(s, "layoff 5H low")
    assert state_json.to_json(s)["melds"] == [["2H", "3H", "4H"], ["5H", "6H", "7H", "8H"]]


def test_layoffs_switched_off():
    hands = [["3H", "8H", "JC", "2C"], ["KD", "9C", "5S"]]
    melds = [["4H", "5H", "6H", "7H"], ["JS", "JD", "JH"]]
    s = table("classic", hands, discard=["QC"], melds=melds, over={"layoffs": False}, has_melded=[True, True])
    play(s, "draw stock")
    assert not any(t.startswith("layoff") for t in legal_texts(s))
    assert_illegal(s, "layoff 3H low", "switched off")


def test_melds_are_never_rearranged():
    # 7H sits in the run 5H-6H-7H; it cannot be taken back into a set of sevens
    hands = [["7C", "7D", "2C", "4C"], ["KD", "9C", "5S"]]
    s = table("classic", hands, discard=["QC"], melds=[["5H", "6H", "7H"]], stock_top=["AC"],
              has_melded=[True, True])
    play(s, "draw stock")
    assert not any(t.startswith("meld") for t in legal_texts(s))
    with pytest.raises(engine.IllegalActionError) as e:
        engine.apply(s, engine.action_id(s, "meld 7C 7D 7H"))
    assert "7H" in str(e.value)


# ---------------------------------------------------------------- no legal way to finish (§3 decision)

def test_meld_leaving_only_the_taken_discard_is_illegal():
    # RULES.md §3's example: melding so that the only card left is the discard just
    # taken, when it cannot be laid off.
    hands = [["7C", "7D", "7S"], ["KD", "9C", "5S"]]
    s = position(small(), hands=hands, discard=["QC", "9H"])
    play(s, "draw discard")
    assert set(legal_texts(s)) == {"discard 7C", "discard 7D", "discard 7S"}
    assert_illegal(s, "meld 7C 7D 7S", "no legal way to finish")


def test_meld_leaving_the_taken_discard_is_legal_when_it_can_be_laid_off():
    # 9H goes on the table's TH-JH-QH: meld the sevens, lay off 9H, out
    hands = [["7C", "7D", "7S"], ["KD", "9C", "5S", "4C"]]
    s = table("classic", hands, discard=["QC", "9H"], melds=[["TH", "JH", "QH"]], has_melded=[True, True])
    play(s, "draw discard")
    assert "meld 7C 7D 7S" in legal_texts(s)
    play(s, "meld 7C 7D 7S", "layoff 9H low")
    assert s.hand_over and s.result["winner"] == 0 and s.result["outcome"] == "out"


def test_meld_that_itself_takes_the_taken_discard_is_legal():
    # 4H-5H-6H, once melded, takes the 7H just taken from the pile
    hands = [["4H", "5H", "6H"], ["KD", "9C", "5S"]]
    s = position(small(), hands=hands, discard=["QC", "7H"])
    play(s, "draw discard")
    texts = legal_texts(s)
    assert "meld 4H 5H 6H" in texts and "meld 4H 5H 6H 7H" in texts
    play(s, "meld 4H 5H 6H", "layoff 7H high")
    assert s.hand_over and s.result["winner"] == 0


def test_layoff_leaving_a_discardable_card_is_legal():
    hands = [["2C", "KH"], ["KD", "9C", "5S"]]
    s = table("classic", hands, discard=["QC", "9S"], melds=[["2D", "2H", "2S"]], has_melded=[True, True])
    play(s, "draw discard")
    assert "layoff 2C set" in legal_texts(s)  # KH is left to discard
    play(s, "layoff 2C set", "discard KH")
    assert hand_text(s, 0) == {"9S"}


def test_layoff_leaving_only_the_taken_discard_is_illegal():
    hands = [["2C"], ["KD", "9C", "5S"]]
    s = table("classic", hands, discard=["QC", "9S"], melds=[["2D", "2H", "2S"], ["5D", "6D", "7D"]],
              has_melded=[True, True])
    play(s, "draw discard")
    assert legal_texts(s) == ["discard 2C"]
    assert_illegal(s, "layoff 2C set", "no legal way to finish")


def test_layoff_end_that_opens_a_home_for_the_taken_discard_is_legal():
    # 9H fits the set of nines and the high end of 6H-7H-8H. Only on the run does it
    # open a home for TH (just taken from the pile): layoff 9H high, layoff TH high, out.
    # On the set it would strand TH.
    hands = [["9H"], ["KD", "4C", "5S"]]
    s = table("classic", hands, discard=["QC", "TH"], melds=[["9D", "9S", "9C"], ["6H", "7H", "8H"]],
              has_melded=[True, True])
    play(s, "draw discard")
    texts = legal_texts(s)
    assert "layoff 9H high" in texts
    assert "layoff 9H set" not in texts
    play(s, "layoff 9H high", "layoff TH high")
    assert s.hand_over and s.result["winner"] == 0


def test_layoff_end_that_strands_the_taken_discard_is_illegal():
    # mirror image: 9H on the set leaves TH with no home; 9H on the run's high end
    # is the only lay-off of it, and both legal texts must really finish
    hands = [["9H"], ["KD", "4C", "5S"]]
    s = table("classic", hands, discard=["QC", "TH"], melds=[["9D", "9S", "9C"], ["6H", "7H", "8H"]],
              has_melded=[True, True])
    play(s, "draw discard")
    for text in legal_texts(s):
        trial = state_json.from_json(state_json.to_json(s))
        engine.apply(trial, engine.action_id(trial, text))
        assert trial.hand_over or engine.legal_actions(trial), text


# ---------------------------------------------------------------- must_discard_to_go_out

def test_must_discard_forbids_emptying_the_hand_by_melds():
    hands = [["4H", "5H"], ["KD", "9C", "5S"]]
    melds = [["JS", "JD", "JH"]]
    s = table("classic", hands, discard=["QC"], melds=melds, stock_top=["6H"], has_melded=[True, True])
    play(s, "draw stock")
    assert "meld 4H 5H 6H" in legal_texts(s)  # without the option: meld and out

    s = table("classic", hands, discard=["QC"], melds=melds, stock_top=["6H"], has_melded=[True, True],
              over={"must_discard_to_go_out": True})
    play(s, "draw stock")
    assert set(legal_texts(s)) == {"discard 4H", "discard 5H", "discard 6H"}
    assert_illegal(s, "meld 4H 5H 6H", "discard")


def test_must_discard_allows_meld_that_leaves_a_card_to_discard():
    hands = [["4H", "5H", "6H"], ["KD", "9C", "5S"]]
    s = position(small(must_discard_to_go_out=True), hands=hands, discard=["QC"], stock_top=["AC"])
    play(s, "draw stock")
    assert "meld 4H 5H 6H" in legal_texts(s)
    play(s, "meld 4H 5H 6H")
    assert legal_texts(s) == ["discard AC"]
    play(s, "discard AC")
    assert s.hand_over and s.result["winner"] == 0
    # out in one turn with nothing melded before: rummy, 2 x (10 + 9 + 5)
    assert s.result["rummy"] is True
    assert s.result["points"] == [48, 0]


def test_must_discard_with_taken_discard_as_last_card():
    # holding 4H 5H 6H and taking 7H: 4H-7H empties the hand, 4H-6H leaves only
    # 7H (which may not be discarded); 5H-6H-7H leaves 4H to discard
    hands = [["4H", "5H", "6H"], ["KD", "9C", "5S"]]
    s = position(small(must_discard_to_go_out=True), hands=hands, discard=["QC", "7H"])
    play(s, "draw discard")
    assert set(legal_texts(s)) == {"discard 4H", "discard 5H", "discard 6H", "meld 5H 6H 7H"}
    play(s, "meld 5H 6H 7H", "discard 4H")
    assert s.hand_over and s.result["winner"] == 0


def test_must_discard_forbids_last_card_layoff():
    hands = [["3H"], ["KD", "9C", "5S", "4C"]]
    melds = [["4H", "5H", "6H"]]
    # without the option: 3H low, 7H high, out
    s = table("classic", hands, discard=["QC"], melds=melds, stock_top=["7H"], has_melded=[True, False])
    play(s, "draw stock", "layoff 3H low", "layoff 7H high")
    assert s.hand_over and s.result["winner"] == 0
    # with it: the second lay-off would empty the hand, so 7H must be discarded
    s = table("classic", hands, discard=["QC"], melds=melds, stock_top=["7H"], has_melded=[True, False],
              over={"must_discard_to_go_out": True})
    play(s, "draw stock", "layoff 3H low")
    assert legal_texts(s) == ["discard 7H"]
    play(s, "discard 7H")
    assert s.hand_over and s.result["winner"] == 0


# ---------------------------------------------------------------- illegal actions

def test_illegal_actions_name_text_and_reason_and_change_nothing():
    s = seed000_position()
    play(s, "draw discard")
    cases = {
        "discard 6H": "taken from the discard pile",
        "discard AS": "not in",
        "meld 7S 8S 9S": "does not hold",
        "layoff 2C set": "no set",
        "draw stock": "has drawn",
    }
    for text, reason in cases.items():
        assert_illegal(s, text, reason)
    # the position still plays normally afterwards
    play(s, "meld 4H 5H 6H", "layoff JC set", "discard KS")


@pytest.mark.parametrize("bad", [-1, 579, 10**6, 2.5, "discard KS", None])
def test_non_action_ids_raise(bad):
    s = seed000_position()
    before = state_json.to_json(s)
    with pytest.raises(engine.IllegalActionError):
        engine.apply(s, bad)
    assert state_json.to_json(s) == before


def test_no_action_after_the_hand_is_over():
    hands = [["4H", "5H", "6H"], ["KD", "9C", "5S"]]
    s = position(small(), hands=hands, discard=["QC", "7H"])
    play(s, "draw discard", "meld 4H 5H 6H 7H")
    assert s.hand_over
    assert engine.legal_actions(s) == []
    before = state_json.to_json(s)
    with pytest.raises(engine.IllegalActionError) as e:
        engine.apply(s, engine.action_id(s, "draw stock"))
    assert "over" in str(e.value)
    assert state_json.to_json(s) == before


@pytest.mark.parametrize("text", ["", "draw", "draw pile", "discard", "discard XX", "meld 4H 5H", "meld 4H 4H 5H",
                                  "layoff", "layoff JC middle", "pass", "meld KH AH 2H"])
def test_action_text_that_names_no_action(text):
    s = seed000_position()
    with pytest.raises(ValueError):
        engine.action_id(s, text)
