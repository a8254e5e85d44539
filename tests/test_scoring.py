"""RULES.md §5: going out, winner_takes and penalty scoring, going rummy, and the
seeds' worked examples (seeds/000: 24 and 48; seeds/001: 17; seeds/004: 22)."""

from helpers import play, table
from rummy_env import engine, state_json

# seeds/000: the opponent holds K♠ 9♦ 4♣ A♥ = 10 + 9 + 4 + 1 = 24
OPP = ["KS", "9D", "4C", "AH"]
OPP_MELDS = [["5S", "6S", "7S"], ["TH", "TD", "TS"]]


def out_by_discard(preset="classic", has_melded0=True, **over):
    """Player 0 (melded before) lays off 5C and discards 2D: out, not rummy."""
    hands = [["5C"], OPP]
    melds = [["6C", "7C", "8C"], ["3H", "3D", "3S"], ["TC", "JC", "QC"]]
    s = table(preset, hands, discard=["9H"], melds=melds, stock_top=["2D"], has_melded=[has_melded0, True],
              over=over)
    play(s, "draw stock", "layoff 5C low", "discard 2D")
    return s


def rummy_position(preset="classic", final_discard=False, **over):
    """Player 0 holds 10 cards, never melded: three melds (and maybe a discard) empty it."""
    p0 = ["AC", "2C", "3C", "4D", "5D", "6D", "7D", "8S", "8H", "8C"]
    s = table(preset, [p0, OPP], discard=["9H"], melds=OPP_MELDS, stock_top=["KC" if final_discard else "8D"],
              has_melded=[False, True], over=over)
    play(s, "draw stock", "meld AC 2C 3C", "meld 4D 5D 6D 7D")
    if final_discard:
        play(s, "meld 8S 8H 8C", "discard KC")
    else:
        play(s, "meld 8S 8H 8C 8D")
    return s


def test_seed000_going_out_scores_24():
    s = out_by_discard()
    assert s.hand_over
    r = s.result
    assert (r["outcome"], r["winner"], r["rummy"], r["points"]) == ("out", 0, False, [24, 0])
    assert s.scores == [24, 0]
    assert s.payoffs == [24, -24]
    j = state_json.to_json(s)
    assert j["hand_over"] is True and j["result"]["points"] == [24, 0] and j["scores"] == [24, 0]


def test_seed000_going_rummy_doubles_to_48():
    s = rummy_position()
    r = s.result
    assert (r["outcome"], r["winner"], r["rummy"], r["points"]) == ("out", 0, True, [48, 0])
    assert s.scores == [48, 0]
    assert s.payoffs == [48, -48]


def test_rummy_with_a_final_discard_counts_by_default():
    s = rummy_position(final_discard=True)
    assert s.result["rummy"] is True and s.result["points"] == [48, 0]


def test_rummy_needs_no_discard():
    s = rummy_position(final_discard=True, rummy_needs_no_discard=True)
    assert s.result["rummy"] is False and s.result["points"] == [24, 0]
    s = rummy_position(final_discard=False, rummy_needs_no_discard=True)
    assert s.result["rummy"] is True and s.result["points"] == [48, 0]


def test_rummy_multiplier_three_and_one():
    assert rummy_position(rummy_multiplier=3).result["points"] == [72, 0]
    s = rummy_position(rummy_multiplier=1)
    assert s.result["points"] == [24, 0]


def test_melding_in_an_earlier_turn_spoils_rummy():
    # turn 1: meld 4H-5H-6H, discard 9C; turn 2: lay off 7H, discard 2C -> out, not rummy
    p0 = ["4H", "5H", "6H", "9C"]
    p1 = ["KS", "9D", "4C", "AH"]
    s = table("classic", [p0, p1], discard=["QD"], stock_top=["2C", "JD", "7H"])
    assert s.has_melded == [False, False]
    play(s, "draw stock", "meld 4H 5H 6H", "discard 9C")
    assert s.has_melded == [True, False]
    play(s, "draw stock", "discard JD")  # player 1
    play(s, "draw stock", "layoff 7H high", "discard 2C")
    r = s.result
    assert (r["winner"], r["rummy"], r["points"]) == (0, False, [24, 0])


def test_laying_off_only_in_an_earlier_turn_also_spoils_rummy():
    # 5 dealt each: seat 0 never melded (5 cards), seat 1 melded 4H 5H 6H (2 left)
    p0 = ["3H", "7H", "AC", "2C", "9C"]
    p1 = ["KS", "9D"]  # 10 + 9 = 19
    s = table("classic", [p0, p1], discard=["QD"], melds=[["4H", "5H", "6H"]], stock_top=["KH", "JD", "3C"],
              has_melded=[False, True])
    play(s, "draw stock", "layoff 3H low", "layoff 7H high", "discard KH")
    assert s.has_melded == [True, True]
    play(s, "draw stock", "discard JD")
    play(s, "draw stock", "meld AC 2C 3C", "discard 9C")
    assert s.result["rummy"] is False and s.result["points"] == [19, 0]


def test_going_out_by_a_final_layoff():
    hands = [["5C"], OPP]
    melds = [["6C", "7C", "8C"], ["3H", "3D", "3S"], ["TC", "JC", "QC"]]
    s = table("classic", hands, discard=["9H"], melds=melds, stock_top=["9C"], has_melded=[True, True])
    play(s, "draw stock", "layoff 5C low", "layoff 9C high")
    assert s.result["outcome"] == "out" and s.result["winner"] == 0 and s.result["points"] == [24, 0]
    assert state_json.to_json(s)["discard"] == ["9H"]


def test_melds_on_the_table_never_count():
    # player 1 has 6 cards on the table; only its 4 in hand count
    s = out_by_discard()
    assert s.result["points"][0] == 24


def test_penalty_scoring():
    s = out_by_discard(scoring="penalty")
    r = s.result
    assert (r["winner"], r["rummy"], r["points"]) == (0, False, [0, 24])
    assert s.scores == [0, 24]
    assert s.payoffs == [24, -24]
    s = rummy_position(scoring="penalty")
    assert s.result["points"] == [0, 48] and s.scores == [0, 48]


def test_ace_points_eleven():
    s = out_by_discard(ace_points=11)
    assert s.result["points"] == [34, 0]


def test_seed001_king_six_ace_is_17():
    hands = [["5C"], ["KD", "6C", "AS"]]
    melds = [["2C", "3C", "4C"], ["3H", "3D", "3S"], ["TC", "JC", "QC"], ["4S", "4H", "4D"]]
    s = table("turnover", hands, discard=["9H"], melds=melds, stock_top=["KH"], has_melded=[True, True])
    play(s, "draw stock", "layoff 5C high", "discard KH")
    assert s.result["points"] == [17, 0]


def test_three_players_winner_takes_everyone_elses_deadwood():
    # player 1: K 6 A = 17, player 2: 2 3 4 = 9 -> 26 for player 0
    hands = [["5C"], ["KD", "6S", "AS"], ["2C", "3D", "4H"]]
    melds = [["6C", "7C", "8C", "9C"], ["TS", "JS", "QS", "KS"]]
    s = table("turnover", hands, discard=["9H"], melds=melds, stock_top=["KH"], has_melded=[True, True, True])
    play(s, "draw stock", "layoff 5C low", "discard KH")
    r = s.result
    assert r["points"] == [26, 0, 0] and s.scores == [26, 0, 0] and s.payoffs == [26, -17, -9]
    assert r["winner"] == 0 and r["rummy"] is False


def test_three_players_penalty():
    hands = [["5C"], ["KD", "6S", "AS"], ["2C", "3D", "4H"]]
    melds = [["6C", "7C", "8C", "9C"], ["TS", "JS", "QS", "KS"]]
    s = table("turnover", hands, discard=["9H"], melds=melds, stock_top=["KH"], has_melded=[True, True, True],
              over={"scoring": "penalty"})
    play(s, "draw stock", "layoff 5C low", "discard KH")
    assert s.result["points"] == [0, 17, 9] and s.scores == [0, 17, 9]


def test_seed004_practice_king_queen_two_is_22_and_no_rummy_bonus():
    # seeds/004: K♣ Q♥ 2♦ = 22; the practice table has no doubling, even for rummy
    p0 = ["AC", "2C", "3C", "4D", "5D", "6D", "7D", "8S", "8H", "8C"]
    p1 = ["KC", "QH", "2D"]
    s = table("practice", [p0, p1], discard=["9H"], melds=[["5S", "6S", "7S"], ["TH", "TD", "TS", "TC"]],
              stock_top=["8D"], has_melded=[False, True])
    play(s, "draw stock", "meld AC 2C 3C", "meld 4D 5D 6D 7D", "meld 8S 8H 8C 8D")
    assert s.result["points"] == [22, 0] and s.scores == [22, 0]
    assert s.result["rummy"] is False
    assert s.match_over and s.match_winners == [0]  # a single hand


def test_scores_add_to_earlier_totals():
    hands = [["5C"], OPP]
    melds = [["6C", "7C", "8C"], ["3H", "3D", "3S"], ["TC", "JC", "QC"]]
    s = table("classic", hands, discard=["9H"], melds=melds, stock_top=["2D"], has_melded=[True, True],
              scores=[40, 70])
    play(s, "draw stock", "layoff 5C low", "discard 2D")
    assert s.result["points"] == [24, 0] and s.scores == [64, 70]
