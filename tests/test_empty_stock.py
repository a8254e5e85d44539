"""RULES.md §6: an empty stock (recycle by shuffle or turn-over, max_recycles, the dry
end, dry_trigger on_empty / on_request) and dry or stalled hands (void or lowest
deadwood, ties, both scorings)."""
import pytest

from helpers import legal_texts, play, position, rest_of_deck, table
from rummy_env import Rules, engine, state_json

# A 4-player table (hand_size 12) with an empty stock: spades and clubs are melded,
# the red cards are in hands and on the discard pile.
MELDS = [[r + "S" for r in "A23456789TJQK"], [r + "C" for r in "A23456789TJQK"]]
HANDS = [
    ["AD", "2D", "AH", "2H", "3D"],        # 1+2+1+2+3 = 9
    ["KD", "QD", "KH", "QH", "JD"],        # 50
    ["9D", "9H", "8D", "8H", "7D", "7H"],  # 48
    ["4D", "4H", "5D", "5H", "6D", "6H"],  # 30
]
DEADWOOD = [9, 50, 48, 30]


def at_draw(preset="turnover", **over):
    """Player 0 to draw from an empty stock; the pile is TD 3H JH TH (TH on top).
    Only legal under dry_trigger on_request."""
    return table(preset, HANDS, discard=["TD", "3H", "JH", "TH"], melds=MELDS, stock=[],
                 over={"dry_trigger": "on_request", **over}, has_melded=[True] * 4)


def before_turn(preset="turnover", recycles=0, **over):
    """Player 3 (holding TD too) is in the play phase with an empty stock and the pile
    3H JH TH; its discard ends the turn and player 0 must draw from an empty stock."""
    hands = [list(h) for h in HANDS]
    hands[3] = hands[3] + ["TD"]
    return table(preset, hands, discard=["3H", "JH", "TH"], melds=MELDS, stock=[], phase="play", current=3,
                 over=over, has_melded=[True] * 4, recycles=recycles)


# ---------------------------------------------------------------- on_empty

def test_turn_over_recycle_at_the_start_of_the_turn():
    s = before_turn(recycle="turn_over", max_recycles=1)
    play(s, "discard TD")
    j = state_json.to_json(s)
    # the pile 3H JH TH TD turned over: the oldest discard (3H) on top, TD kept face up
    assert j["stock"] == ["3H", "JH", "TH"]
    assert j["discard"] == ["TD"]
    assert j["recycles"] == 1 and j["current_player"] == 0 and j["phase"] == "draw"
    assert not s.hand_over
    play(s, "draw stock")
    assert "3H" in state_json.to_json(s)["hands"][0]
    assert state_json.to_json(s)["stock"] == ["JH", "TH"]


def test_shuffle_recycle_keeps_the_top_discard_and_shuffles_the_rest():
    orders = set()
    for seed in range(8):
        # from_json's seed seeds the shuffle
        s = state_json.from_json(state_json.to_json(before_turn(recycle="shuffle")), seed=seed)
        play(s, "discard TD")
        j = state_json.to_json(s)
        assert sorted(j["stock"]) == sorted(["3H", "JH", "TH"])
        assert j["discard"] == ["TD"] and j["recycles"] == 1
        orders.add(tuple(j["stock"]))
    assert len(orders) > 1  # 8 seeds never all give one order of 3 cards unless nothing is shuffled


def test_shuffle_recycle_of_a_long_pile():
    # 2 players, hands of 10, the other 32 cards on the pile: the new stock is the 31
    # older discards in some order, the top discard stays
    p0 = ["AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD"]
    p1 = ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH"]
    pile = rest_of_deck(p0, p1)
    s = position("classic", [p0, p1], discard=pile, stock=[], phase="play")
    play(s, "discard JD")
    j = state_json.to_json(s)
    assert j["discard"] == ["JD"] and j["recycles"] == 1
    assert sorted(j["stock"]) == sorted(pile)
    assert j["stock"] != pile and j["stock"] != pile[::-1]  # shuffled, not turned over


@pytest.mark.parametrize("recycle", ["shuffle", "turn_over"])
def test_max_recycles_zero_dries_at_once(recycle):
    s = before_turn(recycle=recycle, max_recycles=0)
    play(s, "discard TD")
    assert s.hand_over
    r = s.result
    assert (r["outcome"], r["winner"], r["rummy"], r["points"]) == ("dry", None, False, [0, 0, 0, 0])
    assert s.payoffs == [0, 0, 0, 0]
    assert engine.legal_actions(s) == []


def test_max_recycles_one_already_used_dries():
    s = before_turn(recycles=1, recycle="shuffle", max_recycles=1)
    play(s, "discard TD")
    assert s.hand_over and s.result["outcome"] == "dry"


def test_unlimited_recycles():
    s = before_turn(recycles=7, recycle="turn_over", max_recycles=None)
    play(s, "discard TD")
    assert not s.hand_over and s.recycles == 8
    assert state_json.to_json(s)["stock"] == ["3H", "JH", "TH"]


# ---------------------------------------------------------------- on_request

def test_on_request_may_take_the_upcard_from_an_empty_stock():
    s = at_draw(recycle="turn_over", max_recycles=1)
    assert legal_texts(s) == ["draw stock", "draw discard"]
    play(s, "draw discard")
    j = state_json.to_json(s)
    assert j["stock"] == [] and j["recycles"] == 0 and j["discard"] == ["TD", "3H", "JH"]
    play(s, "discard 3D")
    # no automatic recycle at the next turn either
    j = state_json.to_json(s)
    assert j["stock"] == [] and j["recycles"] == 0 and j["current_player"] == 1 and not s.hand_over
    assert legal_texts(s) == ["draw stock", "draw discard"]


def test_on_request_draw_stock_recycles_then_draws():
    s = at_draw(recycle="turn_over", max_recycles=1)
    play(s, "draw stock")
    j = state_json.to_json(s)
    # TD 3H JH turned over (TD, the oldest, on top) and TD drawn; TH stays as the pile
    assert "TD" in j["hands"][0]
    assert j["stock"] == ["3H", "JH"] and j["discard"] == ["TH"] and j["recycles"] == 1
    assert j["phase"] == "play" and j["drawn_from_discard"] is None
    assert "discard TD" in legal_texts(s)  # a card from the stock may be discarded


@pytest.mark.parametrize("recycles,max_recycles", [(0, 0), (1, 1), (2, 2)])
def test_on_request_draw_stock_with_no_recycle_left_ends_dry(recycles, max_recycles):
    s = table("turnover", HANDS, discard=["TD", "3H", "JH", "TH"], melds=MELDS, stock=[],
              over={"dry_trigger": "on_request", "max_recycles": max_recycles}, has_melded=[True] * 4,
              recycles=recycles)
    play(s, "draw stock")
    assert s.hand_over and s.result["outcome"] == "dry" and s.result["points"] == [0, 0, 0, 0]
    assert sorted(state_json.to_json(s)["hands"][0]) == sorted(HANDS[0])  # nothing was drawn


def test_practice_refill_once_then_the_next_request_ends_the_hand_without_points():
    # practice: 2 players, 10 cards each, the other 32 cards on the pile, stock empty
    p0 = ["AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD"]
    p1 = ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH"]
    pile = rest_of_deck(p0, p1)
    s = position("practice", [p0, p1], discard=pile, stock=[])
    assert legal_texts(s) == ["draw stock", "draw discard"]
    play(s, "draw stock")
    j = state_json.to_json(s)
    assert j["recycles"] == 1 and j["discard"] == [pile[-1]] and len(j["stock"]) == 30
    assert sorted(j["stock"] + [c for c in j["hands"][0] if c not in p0]) == sorted(pile[:-1])
    # the second time the stock is empty: a request ends the hand, no points
    s = position("practice", [p0, p1], discard=pile, stock=[], recycles=1)
    play(s, "draw stock")
    r = s.result
    assert s.hand_over and (r["outcome"], r["winner"], r["points"]) == ("dry", None, [0, 0])
    assert s.scores == [0, 0]
    # the upcard could have been taken instead
    s = position("practice", [p0, p1], discard=pile, stock=[], recycles=1)
    play(s, "draw discard")
    assert not s.hand_over


def test_on_empty_snapshot_with_empty_stock_at_a_draw_recycles_before_the_draw():
    # issue 18: a frontend's snapshot right after the last stock card was drawn is a
    # position real play passes through; under on_empty the recycle happens at once
    # (turn_over: the pile but its top, oldest card on top: TD, then 3H, then JH)
    s = table("turnover", HANDS, discard=["TD", "3H", "JH", "TH"], melds=MELDS, stock=[], has_melded=[True] * 4)
    j = state_json.to_json(s)
    assert (j["stock"], j["discard"], j["recycles"]) == (["TD", "3H", "JH"], ["TH"], 1)
    assert not s.hand_over and s.current == 0 and j["phase"] == "draw"
    play(s, "draw stock")
    assert "TD" in state_json.to_json(s)["hands"][0]


# ---------------------------------------------------------------- dry hands: void / lowest deadwood

def stock_runs_dry(trigger, **over):
    """The "deadwood" preset's position with an empty stock, played to the moment the
    stock runs dry: with ``on_empty`` player 3 discards TD (player 0 would draw next),
    with ``on_request`` player 0 asks to draw from the empty stock."""
    if trigger == "on_empty":
        s = before_turn("deadwood", **over)
        play(s, "discard TD")
    else:
        s = at_draw("deadwood", **over)
        play(s, "draw stock")
    return s


@pytest.mark.parametrize("trigger", ["on_empty", "on_request"])
@pytest.mark.parametrize("scoring", ["winner_takes", "penalty"])
def test_dry_hand_lowest_deadwood(trigger, scoring):
    over = dict(dry_hand="lowest_deadwood", max_recycles=0, scoring=scoring)
    s = stock_runs_dry(trigger, **over)
    assert s.hand_over
    r = s.result
    # player 0 has the lowest deadwood (9) and collects 41 + 39 + 21 = 101
    assert (r["outcome"], r["winner"], r["rummy"]) == ("dry", 0, False)
    assert s.payoffs == [101, -41, -39, -21]
    if scoring == "winner_takes":
        assert r["points"] == [101, 0, 0, 0] and s.scores == [101, 0, 0, 0]
    else:
        assert r["points"] == [0, 41, 39, 21] and s.scores == [0, 41, 39, 21]


@pytest.mark.parametrize("trigger", ["on_empty", "on_request"])
def test_dry_hand_void(trigger):
    over = dict(dry_hand="void", max_recycles=0, dry_trigger=trigger)
    s = stock_runs_dry(trigger, **over)
    r = s.result
    assert (r["outcome"], r["winner"], r["points"]) == ("dry", None, [0, 0, 0, 0])
    assert s.scores == [0, 0, 0, 0] and s.payoffs == [0, 0, 0, 0]


# ---------------------------------------------------------------- stalled hands (max_turns)

def stalled(p2, turn=4, **over):
    """3 players, hand_size 2; player 0 (play phase, KS drawn) discards KS on the
    table's last turn (max_turns 5). Deadwood after it: p0 2C 3H = 5, p1 9D 4C = 13."""
    hands = [["2C", "KS", "3H"], ["9D", "4C"], p2]
    # the dealer that has player 0 move at this turn (play starts left of the dealer, RULES.md §2-§3)
    return table("deadwood", hands, discard=["QC"], phase="play", turn=turn, dealer=(-1 - turn) % 3,
                 over={"max_turns": 5, **over})


def test_not_stalled_before_max_turns():
    s = stalled(["AH", "3S"], turn=3)
    play(s, "discard KS")
    assert not s.hand_over and s.turn == 4 and s.current == 1


@pytest.mark.parametrize("scoring", ["winner_takes", "penalty"])
def test_stalled_lowest_deadwood(scoring):
    s = stalled(["AH", "3S"], scoring=scoring)  # player 2: 4, the lowest
    play(s, "discard KS")
    r = s.result
    assert s.turn == 5 and (r["outcome"], r["winner"]) == ("stalled", 2)
    assert s.payoffs == [-1, -9, 10]
    assert r["points"] == ([0, 0, 10] if scoring == "winner_takes" else [1, 9, 0])


@pytest.mark.parametrize("scoring", ["winner_takes", "penalty"])
def test_stalled_lowest_deadwood_tie_scores_nothing(scoring):
    s = stalled(["AH", "4S"], scoring=scoring)  # player 2: 5, tied with player 0
    play(s, "discard KS")
    r = s.result
    assert (r["outcome"], r["winner"], r["points"]) == ("stalled", None, [0, 0, 0])
    assert s.payoffs == [0, 0, 0] and s.scores == [0, 0, 0]


def test_stalled_void():
    s = stalled(["AH", "3S"], dry_hand="void")
    play(s, "discard KS")
    r = s.result
    assert (r["outcome"], r["winner"], r["points"]) == ("stalled", None, [0, 0, 0])


def test_max_turns_one_ends_after_the_first_turn():
    s = engine.new_game(Rules.preset("classic", max_turns=1), seed=3)
    play(s, "draw stock")
    card = [t for t in legal_texts(s) if t.startswith("discard")][0]
    play(s, card)
    assert s.hand_over and s.result["outcome"] == "stalled" and s.turn == 1


def test_classic_second_dry_stock_voids_the_hand_and_the_match_goes_on():
    p0 = ["AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD"]
    p1 = ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH"]
    pile = rest_of_deck(p0, p1)
    s = position("classic", [p0, p1], discard=pile, stock=[], phase="play", recycles=1, scores=[30, 60])
    play(s, "discard JD")
    r = s.result
    assert (r["outcome"], r["winner"], r["points"]) == ("dry", None, [0, 0])
    assert s.scores == [30, 60] and not s.match_over
    engine.next_hand(s)
    assert s.scores == [30, 60] and not s.hand_over and s.recycles == 0 and s.hand_number == 1


@pytest.mark.parametrize("recycle", ["shuffle", "turn_over"])
@pytest.mark.parametrize("max_recycles,recycles", [(None, 5), (1, 0), (2, 1)])
def test_on_request_recycle_options(recycle, max_recycles, recycles):
    s = table("turnover", HANDS, discard=["TD", "3H", "JH", "TH"], melds=MELDS, stock=[],
              over={"dry_trigger": "on_request", "recycle": recycle, "max_recycles": max_recycles},
              has_melded=[True] * 4, recycles=recycles)
    play(s, "draw stock")
    j = state_json.to_json(s)
    drawn = sorted(set(j["hands"][0]) - set(HANDS[0]))
    assert len(drawn) == 1 and drawn[0] in ("TD", "3H", "JH")
    assert sorted(j["stock"] + drawn) == sorted(["TD", "3H", "JH"])
    assert j["discard"] == ["TH"] and j["recycles"] == recycles + 1
    if recycle == "turn_over":
        assert drawn == ["TD"] and j["stock"] == ["3H", "JH"]


def test_dry_hand_lowest_deadwood_tie_scores_nothing():
    hands = [["TD", "JH", "2H", "3D", "AD"],          # 10 + 10 + 2 + 3 + 1 = 26
             ["KD", "QD", "KH", "QH", "JD"],          # 50
             ["9D", "9H", "8D", "8H", "7D", "7H"],    # 48
             ["4D", "4H", "5D", "5H", "6D", "2D"]]    # 4 + 4 + 5 + 5 + 6 + 2 = 26, tied lowest
    pile = rest_of_deck(*hands, *MELDS)
    assert sorted(pile) == sorted(["AH", "3H", "6H", "TH"])
    over = dict(dry_hand="lowest_deadwood", max_recycles=0, dry_trigger="on_request")
    s = table("deadwood", hands, discard=pile, melds=MELDS, stock=[], over=over, has_melded=[True] * 4)
    play(s, "draw stock")
    r = s.result
    assert (r["outcome"], r["winner"], r["points"]) == ("dry", None, [0, 0, 0, 0])
    assert s.payoffs == [0, 0, 0, 0]
