"""RULES.md §4: aces low, high or either way; runs never wrap; the 13-card suit."""
import pytest

from helpers import assert_illegal, legal_texts, play, table
from rummy_env import engine, state_json



def hand_with(cards, aces, **kw):
    """Player 0 holds ``cards`` (+ 2C drawn from the stock), in the play phase."""
    hands = [list(cards), ["KD", "9C", "5S", "4D", "8S", "JD"][: max(1, len(cards))]]
    s = table("classic", hands, discard=["QC"], over={"aces": aces}, stock_top=["2C"], **kw)
    play(s, "draw stock")
    return s


@pytest.mark.parametrize("aces,a23,qka", [("low", True, False), ("high", False, True), ("either", True, True)])
def test_which_ace_runs_are_melds(aces, a23, qka):
    s = hand_with(["AH", "2H", "3H", "QH", "KH", "7S"], aces)
    texts = legal_texts(s)
    assert ("meld AH 2H 3H" in texts) == a23
    assert ("meld QH KH AH" in texts) == qka
    # K-A-2 is never a run, whatever the aces: it is not even an action
    with pytest.raises(ValueError):
        engine.action_id(s, "meld KH AH 2H")
    with pytest.raises(ValueError):
        engine.action_id(s, "meld QH KH AH 2H")


@pytest.mark.parametrize("aces", ["low", "high"])
def test_the_forbidden_ace_run_is_illegal_with_a_reason(aces):
    s = hand_with(["AH", "2H", "3H", "QH", "KH", "7S"], aces)
    bad = "meld QH KH AH" if aces == "low" else "meld AH 2H 3H"
    assert_illegal(s, bad, aces)


@pytest.mark.parametrize("aces", ["low", "high", "either"])
def test_qka_and_a23_as_melds_in_a_position(aces):
    # a STATE listing a meld the aces forbid is not a legal position
    hands = [["7S", "8D"], ["KD", "9C"]]
    for meld, ok in ((["AH", "2H", "3H"], aces != "high"), (["QH", "KH", "AH"], aces != "low")):
        if ok:
            table("classic", hands, discard=["QC"], melds=[meld, ["5C", "6C", "7C"]], over={"aces": aces},
                      has_melded=[True, True])
        else:
            with pytest.raises(ValueError) as e:
                table("classic", hands, discard=["QC"], melds=[meld, ["5C", "6C", "7C"]], over={"aces": aces},
                      has_melded=[True, True])
            assert "melds[0]" in str(e.value)
    with pytest.raises(ValueError):
        table("classic", hands, discard=["QC"], melds=[["KH", "AH", "2H"], ["5C", "6C", "7C"]], over={"aces": aces},
              has_melded=[True, True])


def after_drawing_2c(hands, melds, aces):
    """A classic 2-player position with ``melds`` on the table (both seats have melded):
    seat 0 draws 2C from the stock. Returns the position and the legal action texts."""
    s = table("classic", hands, discard=["QC"], melds=melds, over={"aces": aces}, stock_top=["2C"],
              has_melded=[True, True])
    play(s, "draw stock")
    return s, legal_texts(s)


@pytest.mark.parametrize(
    "aces,low_end_ace,high_end_ace",
    [("low", True, False), ("high", False, True), ("either", True, True)],
)
def test_ace_layoffs_at_each_end(aces, low_end_ace, high_end_ace):
    # 2H-3H-4H could take AH below; JS-QS-KS could take AS above
    hands = [["AH", "AS", "7D"], ["KD", "9C", "5S"]]
    s, texts = after_drawing_2c(hands, [["2H", "3H", "4H"], ["JS", "QS", "KS"]], aces)
    assert ("layoff AH low" in texts) == low_end_ace
    assert ("layoff AS high" in texts) == high_end_ace
    assert "layoff AH high" not in texts and "layoff AS low" not in texts


@pytest.mark.parametrize("aces", ["low", "either"])
def test_a23_takes_four_but_nothing_below_the_ace(aces):
    hands = [["4H", "KH", "7D"], ["KD", "9C", "5S"]]
    s, texts = after_drawing_2c(hands, [["AH", "2H", "3H"], ["JS", "QS", "KS"]], aces)
    assert "layoff 4H high" in texts
    assert "layoff KH low" not in texts  # no wrap: K-A-2-3 is not a run


@pytest.mark.parametrize("aces", ["high", "either"])
def test_qka_takes_jack_but_nothing_above_the_ace(aces):
    hands = [["JH", "2H", "7D"], ["KD", "9C", "8S"]]
    s, texts = after_drawing_2c(hands, [["QH", "KH", "AH"], ["3S", "4S", "5S"]], aces)
    assert "layoff JH low" in texts
    assert "layoff 2H high" not in texts  # no wrap: Q-K-A-2 is not a run
    play(s, "layoff JH low")
    assert state_json.to_json(s)["melds"][0] == ["JH", "QH", "KH", "AH"]


def test_aces_either_ace_fits_both_ends_of_two_to_king():
    # 2H..KH (12 cards) takes AH below (A..K) or above (2..A) when aces go either way
    run = ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"]
    hands = [["AH", "7D", "8D"], ["KD", "9C", "5S", "4S", "6S", "8S", "TS", "JS", "3C"]]
    s, texts = after_drawing_2c(hands, [run], "either")
    assert "layoff AH low" in texts and "layoff AH high" in texts
    with pytest.raises(ValueError) as e:
        engine.action_id(s, "layoff AH")
    assert "more than one" in str(e.value)


@pytest.mark.parametrize("aces,end", [("low", "low"), ("high", "high"), ("either", "low"), ("either", "high")])
def test_thirteen_card_suit_by_layoff_takes_nothing_and_round_trips(aces, end):
    run = ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH"]
    if aces == "high" or end == "high":
        run = run[1:] + ["KH"]  # 3H..KH, needs 2H low then AH high
        first = "layoff 2H low"
        hold = ["2H", "AH", "7D"]
        other = ["KD", "9C", "5S", "4S", "6S", "8S", "TS", "JS", "3C", "4D"]
    else:
        run = run + ["KH"]  # 2H..KH, AH low completes it
        first = None
        hold = ["AH", "7D", "8D"]
        other = ["KD", "9C", "5S", "4S", "6S", "8S", "TS", "JS", "3C"]
    hands = [hold, other]
    s = table("classic", hands, discard=["QC"], melds=[run], over={"aces": aces}, stock_top=["2C"],
              has_melded=[True, True])
    play(s, "draw stock")
    if first:
        play(s, first)
    play(s, f"layoff AH {end}")
    meld = state_json.to_json(s)["melds"][0]
    assert sorted(meld) == sorted(c + "H" for c in "A23456789TJQK")
    assert s.layoff_masks == (0, 0, 0)  # a full suit takes no lay-off at either end
    j = state_json.to_json(s)
    assert state_json.to_json(state_json.from_json(j)) == j


@pytest.mark.parametrize("aces", ["low", "high", "either"])
def test_thirteen_card_suit_is_one_meld_under_every_option(aces):
    suit = [r + "H" for r in "A23456789TJQK"]
    # 13 cards in hand in the play phase: 12 dealt + 1 drawn
    hands = [suit[:-1], ["KD", "9C", "5S", "4S", "6S", "8S", "TS", "JS", "3C", "4D", "5D", "6D"]]
    s = table("classic", hands, discard=["QC"], over={"aces": aces}, stock_top=["KH"])
    play(s, "draw stock")
    texts = legal_texts(s)
    assert "meld " + " ".join(suit) in texts
    # going out in one turn with nothing melded before: rummy, all of player 1's cards doubled
    play(s, "meld " + " ".join(reversed(suit)))
    assert s.hand_over and s.result["winner"] == 0 and s.result["rummy"] is True
    assert s.result["points"] == [2 * (10 + 9 + 5 + 4 + 6 + 8 + 10 + 10 + 3 + 4 + 5 + 6), 0]


def test_thirteen_card_suit_completed_at_the_low_end_with_aces_high():
    # aces high: 3H..KH AH (12 cards) takes 2H below, making the suit 2..A
    run = ["3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH"]
    hands = [["2H", "7D", "8D"], ["KD", "9C", "5S", "4S", "6S", "8S", "TS", "JS", "3C"]]
    s, texts = after_drawing_2c(hands, [run], "high")
    assert "layoff 2H low" in texts and "layoff 2H high" not in texts
    play(s, "layoff 2H low")
    assert sorted(state_json.to_json(s)["melds"][0]) == sorted(c + "H" for c in "A23456789TJQK")
    assert s.layoff_masks == (0, 0, 0)
    j = state_json.to_json(s)
    assert state_json.to_json(state_json.from_json(j)) == j
