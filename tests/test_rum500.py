"""500 Rum (RULES.md §10.4-§10.5): meld scoring, digging the discard pile, the match to 500.

Every expected value below is worked out by hand from the rules: card points are
A=1, 2-10 face value, J Q K 10 (§1); a seat's hand points are what it melded or laid
off this hand minus what it holds (§10.4); the hand reward is a seat's points minus
the mean of the other seats' points.
"""
import numpy as np
import pytest

from extras import needs

from rummy_env import Rules, engine, rummy_v0, state_json
from rummy_env.actions import DIG_BASE, DRAW_DISCARD, NUM_ACTIONS, action_ranges, num_actions, table_kind
from rummy_env.cards import CARD_TEXT, parse_card
from rummy_env.engine import IllegalActionError
from rummy_env.observation import PlayerView, obs_size, offsets

ALL = [CARD_TEXT[c] for c in range(52)]


def position(hands, discard, melds=(), rules="rum500", **fields):
    """A STATE with the given hands, discard pile (bottom first) and melds; every other
    card goes to the stock in card order."""
    used = {c for h in hands for c in h} | set(discard) | {c for m in melds for c in m}
    stock = [c for c in ALL if c not in used]
    d = {"rules": rules, "hands": [list(h) for h in hands], "stock": stock, "discard": list(discard),
         "melds": [list(m) for m in melds], "current_player": 0, "phase": "draw"}
    d.update(fields)
    return d


def texts(env):
    return env.unwrapped.legal_action_texts()


# ---------------------------------------------------------------- rules and presets

def test_rum500_preset_and_its_deal():
    r = Rules.preset("rum500")
    assert (r.scoring, r.draw, r.target, r.max_recycles, r.rummy_multiplier) == ("melds", "dig", 500, 0, 1)
    assert r.cards_dealt == 13
    for n in (3, 4, 5, 6):
        assert Rules.preset("rum500", num_players=n).cards_dealt == 7
    # the deal is an option: the options written out deal the same game
    assert Rules(**Rules.preset("rum500", num_players=3).options()).cards_dealt == 7
    assert Rules(**r.options()).cards_dealt == 13
    assert table_kind(r) == "rum500" and table_kind(Rules.preset("classic")) == "standard"
    assert num_actions(r) == 631 and num_actions("standard") == NUM_ACTIONS == 579


@pytest.mark.parametrize("kw,names", [
    (dict(draw="dig"), ("draw", "max_recycles")),                                   # classic recycles once
    (dict(scoring="melds"), ("scoring", "rummy_multiplier")),                        # classic doubles rummy
    (dict(scoring="melds", rummy_multiplier=1, dry_hand="lowest_deadwood"), ("scoring", "dry_hand")),
])
def test_clashes_name_both_options(kw, names):
    with pytest.raises(ValueError) as e:
        Rules.preset("classic", **kw)
    for name in names:
        assert name in str(e.value)


def test_rum500_with_a_recycle_is_refused():
    with pytest.raises(ValueError, match="max_recycles"):
        Rules.preset("rum500", max_recycles=1)


def test_meld_scoring_with_the_top_draw_is_a_500_rum_table():
    r = Rules.preset("classic", scoring="melds", rummy_multiplier=1)
    env = rummy_v0.env(rules=r)
    env.reset(seed=1)
    assert env.action_space("player_0").n == 631
    assert env.observation_space("player_0")["observation"].shape == (obs_size(2, "rum500"),)
    assert not any(t.startswith("draw discard ") for t in texts(env))  # no digging at a top-draw table


def test_standard_layouts_unchanged():
    assert obs_size(2) == 548 and num_actions("standard") == 579
    assert action_ranges("standard")[-1][:3] == ("layoff", 423, 156)
    assert action_ranges("rum500")[-1][:3] == ("dig", 579, 52)
    base = offsets(2)
    rum = offsets(2, "rum500")
    assert all(rum[k] == v for k, v in base.items())  # the standard pieces keep their places


# ---------------------------------------------------------------- digging

# 5H 6H wait for the 7H; nothing else in the hand melds with 7H, KC or 2D
HAND_DIG = ["5H", "6H", "9C", "JD", "2S", "4C", "8D", "TS", "QH", "3S", "6C", "AD", "9S"]
OTHER = ["KD", "QD", "8S", "4S", "TC", "3H", "AC", "5D", "7D", "JC", "KS", "9H", "2H"]


def dig_env(pile=("8C", "7H", "KC", "2D")):
    env = rummy_v0.env(rules="rum500")
    env.reset(options={"state": position([HAND_DIG, OTHER], list(pile))})
    return env


def test_a_dig_takes_three_cards_and_the_deepest_must_be_melded():
    env = dig_env()
    legal = texts(env)
    # the 7H can be dug (5H 6H 7H); the 8C cannot (no club run, no eight set): not offered
    assert "draw discard 7H" in legal and "draw discard 8C" not in legal
    assert "draw discard KC" not in legal  # the KC cannot be melded with this hand
    env.step(env.unwrapped.action_id("draw discard 7H"))
    st = env.unwrapped.state
    assert [CARD_TEXT[c] for c in st.discard] == ["8C"]
    assert st.bound == parse_card("7H")
    assert st.hands[0].bit_count() == 16  # 13 + 7H KC 2D
    # while the 7H is in hand: no discard; the one meld that plays it
    assert texts(env) == ["meld 5H 6H 7H"]
    env.step(env.unwrapped.action_id("meld 5H 6H 7H"))
    assert st.meld_points == [18, 0]  # 5 + 6 + 7
    assert st.bound == -1
    after = texts(env)
    assert "discard KC" in after and "discard 2D" in after  # the cards above it are free


def test_a_dig_whose_deepest_card_cannot_be_used_is_refused():
    env = dig_env()
    before = env.unwrapped.state_dict()
    with pytest.raises(IllegalActionError, match="could not be melded or laid off"):
        env.unwrapped.step(DIG_BASE + parse_card("8C"))
    assert env.unwrapped.state_dict() == before


def test_the_upcard_alone_is_the_plain_draw():
    env = dig_env()
    assert env.unwrapped.action_id("draw discard 2D") == DRAW_DISCARD
    with pytest.raises(IllegalActionError, match="the upcard"):
        env.unwrapped.step(DIG_BASE + parse_card("2D"))
    env.step(DRAW_DISCARD)
    st = env.unwrapped.state
    assert st.bound == -1 and st.drawn_from_discard == parse_card("2D")
    assert "discard 2D" not in texts(env)  # §3: the card taken alone may not be discarded this turn


def test_digging_at_a_top_draw_table_is_refused():
    env = rummy_v0.env(rules="classic")
    env.reset(seed=3)
    with pytest.raises(ValueError, match="draw='dig'"):
        env.unwrapped.action_id("draw discard 7H")
    with pytest.raises(ValueError, match="0..578"):
        env.unwrapped.step(DIG_BASE + 3)


def test_a_move_that_would_strand_the_dug_card_is_refused():
    # 7H can only go into 6H 7H 8H; melding the sixes would take the 6H it needs
    hand = ["6H", "8H", "6C", "6D", "JS", "2C", "4D", "TS", "QC", "KD", "AS", "9D", "3C"]
    other = ["KC", "QD", "8S", "4S", "TC", "3H", "AC", "5D", "7D", "JC", "KS", "9H", "2H"]
    env = rummy_v0.env(rules="rum500")
    env.reset(options={"state": position([hand, other], ["8C", "7H", "QS"])})
    env.step(env.unwrapped.action_id("draw discard 7H"))
    legal = texts(env)
    assert "meld 6H 7H 8H" in legal
    assert "meld 6C 6D 6H" not in legal
    assert not any(t.startswith("discard") for t in legal)
    before = env.unwrapped.state_dict()
    with pytest.raises(IllegalActionError, match="7H"):
        env.unwrapped.step(env.unwrapped.action_id("meld 6C 6D 6H"))
    assert env.unwrapped.state_dict() == before
    # once the 7H is played, the sixes may not be melded any more (the 6H is on the table), the QS is free
    env.step(env.unwrapped.action_id("meld 6H 7H 8H"))
    assert "discard QS" in texts(env)


def test_a_dug_card_laid_off_on_the_table_fulfils_the_dig():
    # the table's run 5S 6S 7S takes the 8S; dig it from under the 2D
    hand = ["6H", "9C", "JD", "2S", "4C", "8D", "TD", "QH", "3S", "6C", "AD", "5H", "KD"]
    other = ["QD", "4S", "TC", "3H", "AC", "5D", "7D", "JC", "KS", "9H", "2H", "QC", "JH"]
    env = rummy_v0.env(rules="rum500")
    env.reset(options={"state": position([hand, other], ["8S", "2D"], melds=[["5S", "6S", "7S"]],
                                         meld_points=[0, 18], has_melded=[False, True])})
    # seat 1 melded 5S 6S 7S (18 points) earlier: hand sizes follow digs, so 13 is allowed
    env.step(env.unwrapped.action_id("draw discard 8S"))
    assert texts(env) == ["layoff 8S high"]
    env.step(env.unwrapped.action_id("layoff 8S high"))
    assert env.unwrapped.state.meld_points == [8, 18]


# ---------------------------------------------------------------- observation of a dig table

def test_observation_shows_the_pile_in_order_the_bound_card_and_meld_points():
    env = dig_env()
    obs = env.observe("player_0")
    o = obs["observation"]
    off = offsets(2, "rum500")
    depth = o[off["discard_depth"]]
    # pile bottom first 8C 7H KC 2D: the upcard 2D is 1 deep, the 8C 4 deep (/52)
    for card, d in (("2D", 1), ("KC", 2), ("7H", 3), ("8C", 4)):
        assert depth[parse_card(card)] == pytest.approx(d / 52)
    assert np.count_nonzero(depth) == 4
    v = PlayerView(o, obs["action_mask"])
    assert [CARD_TEXT[c] for c in v.pile] == ["8C", "7H", "KC", "2D"]
    assert v.melds_scoring and v.dig and v.bound == -1
    assert [CARD_TEXT[a - DIG_BASE] for a in v.dig_actions] == ["7H"]
    env.step(env.unwrapped.action_id("draw discard 7H"))
    o = env.observe("player_0")["observation"]
    assert o[off["bound"]][parse_card("7H")] == 1.0 and o[off["bound"]].sum() == 1.0
    env.step(env.unwrapped.action_id("meld 5H 6H 7H"))
    o0, o1 = env.observe("player_0")["observation"], env.observe("player_1")["observation"]
    assert o0[off["meld_points"]][0] == pytest.approx(0.18)
    assert o1[off["opp1_meld_points"]][0] == pytest.approx(0.18)  # seen from the other seat
    assert o0[off["rule_melds"]][0] == 1.0 and o0[off["rule_dig"]][0] == 1.0


# ---------------------------------------------------------------- scoring a hand

# three seats that all melded: seat 0 holds only KS and goes out by discarding it
THREE = dict(
    hands=[["KS"], ["9D", "KD"], ["AC", "8H"]],
    melds=[["TH", "JH", "QH"], ["4D", "4H", "4S"], ["2C", "3C", "4C", "5C", "6C"]],
    meld_points=[30, 12, 20],  # 30 = T J Q, 12 = three fours, 20 = 2+3+4+5+6
    has_melded=[True, True, True],
)


def three_seat_env(scores, episode="hand"):
    env = rummy_v0.env(rules="rum500", num_players=3, episode=episode)
    st = position(THREE["hands"], ["7S", "JS"], THREE["melds"], phase="play", meld_points=THREE["meld_points"],
                  has_melded=THREE["has_melded"], scores=scores)
    st["rules"] = {"preset": "rum500", "num_players": 3}
    env.reset(options={"state": st})
    return env


def test_every_seat_scores_its_melds_minus_its_hand_when_one_goes_out():
    env = three_seat_env([100, 50, 0])
    env.step(env.unwrapped.action_id("discard KS"))
    st = env.unwrapped.state
    # seat 0: 30 - 0; seat 1: 12 - (9 + 10) = -7; seat 2: 20 - (1 + 8) = 11
    assert st.result == {"outcome": "out", "winner": 0, "rummy": False, "points": [30, -7, 11]}
    assert st.scores == [130, 43, 11]
    # rewards: own points minus the mean of the others' (34 in all): 30 - 2, -7 - 20.5, 11 - 11.5
    rewards = [env.rewards[a] for a in env.possible_agents]
    assert rewards == pytest.approx([28.0, -27.5, -0.5])
    assert sum(rewards) == pytest.approx(0.0)
    info = env.infos["player_1"]["hand_result"]
    assert info["payoffs"] == pytest.approx([28.0, -27.5, -0.5]) and info["points"] == [30, -7, 11]


# seat 0 melded T J Q of hearts and holds KS 2D; seat 1 never melded; the stock is empty
DRY_P1 = ["AC", "AD", "AH", "AS", "2C", "2H", "2S", "3C", "3D", "3H", "3S", "4C", "4D"]  # 30 points


def dry_env(scores, episode="hand"):
    used = set(DRY_P1) | {"TH", "JH", "QH", "KS", "2D"}
    pile = [c for c in ALL if c not in used]  # every other card in the discard pile, the stock empty
    st = {"rules": "rum500", "hands": [["KS", "2D"], DRY_P1], "stock": [], "discard": pile,
          "melds": [["TH", "JH", "QH"]], "current_player": 0, "phase": "play", "meld_points": [30, 0],
          "has_melded": [True, False], "scores": scores}
    env = rummy_v0.env(rules="rum500", episode=episode)
    env.reset(options={"state": st})
    return env


def test_a_dry_stock_ends_the_hand_without_a_recycle_scored_by_melds():
    env = dry_env([0, 0])
    env.step(env.unwrapped.action_id("discard KS"))
    st = env.unwrapped.state
    # seat 0: 30 - 2 = 28; seat 1 melded nothing: -30 (its sets in hand count against it)
    assert st.result == {"outcome": "dry", "winner": None, "rummy": False, "points": [28, -30]}
    assert st.recycles == 0 and st.stock == []
    assert [env.rewards[a] for a in env.possible_agents] == pytest.approx([58.0, -58.0])
    assert st.scores == [28, -30]  # a negative total


def test_a_match_reaches_500():
    env = dry_env([480, 10], episode="match")
    env.step(env.unwrapped.action_id("discard KS"))
    st = env.unwrapped.state
    assert st.scores == [508, -20] and st.match_over and st.match_winners == [0]
    assert [env.rewards[a] for a in env.possible_agents] == [1.0, -1.0]


def test_a_match_split_at_500():
    # seat 0: 470 + 30 = 500, seat 2: 489 + 11 = 500, seat 1: 100 - 7 = 93
    env = three_seat_env([470, 100, 489], episode="match")
    env.step(env.unwrapped.action_id("discard KS"))
    st = env.unwrapped.state
    assert st.scores == [500, 93, 500] and st.match_winners == [0, 2]
    # a split among k = 2 of n = 3 winners: (n - k) / k = 0.5 each, the loser -1
    assert [env.rewards[a] for a in env.possible_agents] == [0.5, -1.0, 0.5]


def test_negative_totals_are_accepted_in_a_state():
    env = dry_env([-50, 20])
    assert env.unwrapped.state.scores == [-50, 20]


# ---------------------------------------------------------------- STATE

def test_state_round_trip_in_the_middle_of_a_dig():
    env = dig_env()
    env.step(env.unwrapped.action_id("draw discard 7H"))
    d = env.unwrapped.state_dict()
    assert d["bound"] == "7H" and d["meld_points"] == [0, 0]
    again = rummy_v0.env(rules="rum500")
    again.reset(options={"state": d})
    assert again.unwrapped.state_dict() == d
    assert texts(again) == ["meld 5H 6H 7H"]


@pytest.mark.parametrize("change,msg", [
    (dict(bound="7H"), "draw phase"),                               # no dig in progress before the draw
    (dict(phase="play", bound="QS"), "not in the mover's hand"),   # QS lies in seat 1's hand
    (dict(meld_points=[5, 0]), "are worth 0"),                     # nothing is on the table
    (dict(meld_points=[-1, 0]), "ints >= 0"),
])
def test_bad_500_rum_fields_are_refused(change, msg):
    d = position([HAND_DIG, [c if c != "KS" else "QS" for c in OTHER]], ["8C", "7H", "KC", "2D"], **change)
    env = rummy_v0.env(rules="rum500")
    with pytest.raises(ValueError, match=msg):
        env.reset(options={"state": d})


def test_500_rum_fields_are_refused_at_a_standard_table():
    d = position([HAND_DIG[:10], OTHER[:10]], ["8C"], rules="classic", meld_points=[0, 0])
    with pytest.raises(ValueError, match="meld_points is only for"):
        state_json.from_json(d)


def test_a_state_of_another_kind_of_table_is_refused_by_the_env():
    env = rummy_v0.env(rules="classic")
    with pytest.raises(ValueError, match="rum500 table"):
        env.reset(options={"state": position([HAND_DIG, OTHER], ["8C", "7H"])})


# ---------------------------------------------------------------- the baselines dig

def test_scripted_agents_dig_when_the_deepest_card_melds_and_it_pays():
    from rummy_env.agents import make_agent

    env = dig_env()
    obs = env.observe("player_0")
    # digging the 7H melds 5H 6H 7H (+18) and leaves KC 2D (12) in hand: worth 18 - 12 = 6 > 0
    for name in ("greedy", "heuristic"):
        a = make_agent(name, seed=0).act(obs["observation"], obs["action_mask"])
        assert env.unwrapped.action_text(a) == "draw discard 7H", name


def test_scripted_agents_do_not_dig_when_the_cards_above_cost_more():
    from rummy_env.agents import make_agent

    # the 7H lies under KC QS JD 2D (10 + 10 + 10 + 2 = 32 points left in hand) for a meld of 18
    env = rummy_v0.env(rules="rum500")
    hand = ["5H", "6H", "9C", "3D", "2S", "4C", "8D", "TS", "QH", "3S", "6C", "AD", "9S"]
    other = ["KD", "QD", "8S", "4S", "TC", "3H", "AC", "5D", "7D", "JC", "KS", "9H", "2H"]
    env.reset(options={"state": position([hand, other], ["7H", "KC", "QS", "JD", "2D"])})
    obs = env.observe("player_0")
    assert "draw discard 7H" in texts(env)
    a = make_agent("greedy", seed=0).act(obs["observation"], obs["action_mask"])
    assert env.unwrapped.action_text(a) in ("draw stock", "draw discard")


# ---------------------------------------------------------------- properties over random play

import random  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as hst  # noqa: E402

from rummy_env.cards import FULL_DECK, mask_points  # noqa: E402
from rummy_env.observation import action_mask  # noqa: E402
from tests.test_properties import layoff_fits, melds_in_hand  # noqa: E402


def usable_by_brute_force(hand, table, card, aces, layoffs, must_discard=False):
    """RULES.md §10.4 read directly: can ``card`` (in ``hand``, a set of cards) be melded
    or laid off this turn? Either a meld of the hand holds it, or after laying off other
    hand cards one by one (any order, any end) it fits a meld on the table; with
    ``must_discard`` (§5) a card must be left over for the final discard."""
    if any(card in m and (not must_discard or set(hand) - set(m)) for m in melds_in_hand(sorted(hand), aces)):
        return True
    if not layoffs:
        return False

    def rec(hand, table, depth):
        for c in hand:
            for i, m in enumerate(table):
                for end in ("set", "low", "high"):
                    if layoff_fits(c, m, end, aces):
                        if c == card and (not must_discard or len(hand) > 1):
                            return True
                        grown = [c] + m if end == "low" else m + [c]  # STATE order: rank order
                        if depth and rec(hand - {c}, table[:i] + [grown] + table[i + 1:], depth - 1):
                            return True
        return False

    return rec(frozenset(hand), [list(m) for m in table], 4)


def check_digs(s, legal):
    """Every dig id is legal exactly when the deepest card taken can be played (brute force)."""
    hand = {c for c in range(52) if s.hands[s.current] >> c & 1}
    table = [[parse_card(c) for c in m] for m in state_json.to_json(s)["melds"]]
    for i, c in enumerate(s.discard[:-1]):
        taken = set(s.discard[i:])
        ok = usable_by_brute_force(hand | taken, table, c, s.rules.aces, s.rules.layoffs,
                                   s.rules.must_discard_to_go_out)
        assert ok == (DIG_BASE + c in legal), (CARD_TEXT[c], ok)


RUM500_HANDS = given(n=hst.sampled_from([2, 3, 4]), seed=hst.integers(0, 2**32 - 1),
                     over=hst.fixed_dictionaries({}, optional={"aces": hst.sampled_from(["low", "high", "either"]),
                                                               "layoffs": hst.booleans(),
                                                               "must_discard_to_go_out": hst.booleans(),
                                                               "ace_points": hst.sampled_from([1, 11])}))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@RUM500_HANDS
def test_random_rum500_hands_keep_every_invariant(n, seed, over):
    """15 random hands in the suite; the ``slow`` twin below plays 60."""
    check_rum500_hand(n, seed, over)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@RUM500_HANDS
def test_random_rum500_hands_keep_every_invariant_60_hands(n, seed, over):
    check_rum500_hand(n, seed, over)


def check_rum500_hand(n, seed, over):
    """One random 500 Rum hand, every invariant checked at every step."""
    rules = Rules.preset("rum500", num_players=n, max_turns=60, **over)
    s = engine.new_game(rules, seed=seed)
    rng = random.Random(seed)
    while not s.hand_over:
        legal = engine.legal_actions(s)
        assert legal
        j = state_json.to_json(s)
        # every card exactly once
        cards = [c for h in j["hands"] for c in h] + j["stock"] + j["discard"] + [c for m in j["melds"] for c in m]
        assert len(cards) == 52 and len(set(cards)) == 52
        total = 0
        for m in list(s.hands) + [m.mask for m in s.melds]:
            assert total & m == 0
            total |= m
        assert total | sum(1 << c for c in s.stock + s.discard) == FULL_DECK
        # the mask is exactly the legal list; the STATE round-trips
        mask = action_mask(legal, size=num_actions(rules))
        assert np.flatnonzero(mask).tolist() == legal
        t = state_json.from_json(j)
        assert state_json.to_json(t) == j and engine.legal_actions(t) == legal
        if s.phase == engine.DRAW:
            check_digs(s, legal)
        elif s.bound >= 0:
            assert not any(2 <= a < 54 for a in legal)  # no discard while the dug card is in hand
        a = rng.choice(legal)
        bound_before, p = s.bound, s.current
        engine.apply(s, a)
        if not s.hand_over and s.current != p:  # the turn ended: a dug card was played
            assert bound_before == -1
    assert s.turn <= rules.max_turns
    r = s.result
    dw = [mask_points(h, rules.ace_points) for h in s.hands]
    assert r["points"] == [s.meld_points[q] - dw[q] for q in range(n)]
    assert sum(s.payoffs) == pytest.approx(0.0)
    assert sum(s.meld_points) == sum(mask_points(m.mask, rules.ace_points) for m in s.melds)
    if r["outcome"] == "dry":
        assert s.stock == [] and s.recycles == 0


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_api_and_seed_tests_on_rum500(n):
    from pettingzoo.test import api_test, seed_test

    api_test(rummy_v0.env(rules="rum500", num_players=n), num_cycles=300)
    seed_test(lambda: rummy_v0.env(rules="rum500", num_players=n), num_cycles=100)


# ---------------------------------------------------------------- export, ONNX agent and serve at a 500 Rum table

@pytest.fixture(scope="module")
def rum500_export(tmp_path_factory):
    for module in ("torch", "sb3_contrib", "onnx", "onnxscript", "onnxruntime"):
        needs(module)
    import torch
    from sb3_contrib import MaskablePPO

    from rummy_env import SingleAgentEnv
    from rummy_env.cli import main as rummy

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("rum500_policy")
    model = MaskablePPO("MlpPolicy", SingleAgentEnv(rules="rum500", seed=0), n_steps=64, batch_size=64, seed=0,
                        device="cpu")
    model.learn(64)
    model.save(str(root / "policy.zip"))
    assert rummy(["export", str(root / "policy.zip"), "--out", str(root / "export"), "--rules", "rum500"]) == 0
    return root / "export"


def test_export_of_a_rum500_policy_declares_its_layouts(rum500_export):
    import json

    import onnxruntime as ort

    spec = json.loads((rum500_export / "spec.json").read_text())
    assert spec["actions"]["kind"] == "rum500" and spec["actions"]["num_actions"] == 631
    assert len(spec["actions"]["table"]) == 631 and spec["actions"]["table"][579]["text"] == "draw discard AC"
    assert spec["observation"]["size"] == 656
    assert [p["name"] for p in spec["observation"]["pieces"]][-2:] == ["rule_melds", "rule_dig"]
    sess = ort.InferenceSession(str(rum500_export / "policy.onnx"), providers=["CPUExecutionProvider"])
    shapes = {i.name: i.shape for i in sess.get_inputs()}
    assert shapes == {"observation": ["batch", 656], "action_mask": ["batch", 631]}


def test_onnx_agent_plays_legal_rum500_hands(rum500_export):
    from rummy_env.agents import make_agent
    from rummy_env.eval.tournament import play_game

    agent = make_agent(f"onnx:{rum500_export}")
    r = play_game(Rules.preset("rum500"), [agent, make_agent("random", seed=1)], seed=4)
    assert r["outcome"] in ("out", "dry", "stalled")


def test_serve_answers_a_rum500_position_and_refuses_a_standard_one(rum500_export):
    needs("fastapi")
    httpx = needs("httpx")

    from rummy_env.frontends.serve import make_server
    from server_helpers import running_server

    env = dig_env()
    env.step(env.unwrapped.action_id("draw discard 7H"))
    with running_server(make_server(rum500_export, port=0, log_level="warning")) as addrs:
        assert all(a[0] == "127.0.0.1" for a in addrs)
        with httpx.Client(base_url=f"http://127.0.0.1:{addrs[0][1]}", timeout=10) as c:
            body = c.post("/act", json=env.unwrapped.state_dict()).json()
            assert body["action"] == "meld 5H 6H 7H"  # the one legal move while the 7H is bound
            classic = rummy_v0.raw_env()
            classic.reset(seed=2)
            r = c.post("/act", json=classic.state_dict())
            assert r.status_code == 422 and "standard table" in r.text


@pytest.mark.parametrize("n", [2, 3])
def test_search_and_baselines_play_legal_rum500_matches(n):
    from rummy_env.agents import make_agent
    from rummy_env.eval.tournament import play_game

    rules = Rules.preset("rum500", num_players=n, target=150)
    agents = [make_agent("search:4", seed=1)] + [make_agent(a, seed=q) for q, a in enumerate(["greedy", "heuristic"][: n - 1], 1)]
    r = play_game(rules, agents, seed=11, matches=True)  # raises on an illegal action
    assert r["match_winners"] and max(r["hand_points"]) != 0


def test_single_agent_env_passes_gymnasiums_checker_at_rum500():
    from gymnasium.utils.env_checker import check_env

    from rummy_env import SingleAgentEnv

    env = SingleAgentEnv(rules="rum500", seed=3)
    check_env(env, skip_render_check=True)
    assert env.action_space.n == 631 and env.action_masks().shape == (631,)


def test_single_agent_env_takes_a_dig_as_a_legal_action():
    from rummy_env import SingleAgentEnv

    env = SingleAgentEnv(rules="rum500", learner_seat=0, seed=0)
    env.reset(options={"state": position([HAND_DIG, OTHER], ["8C", "7H", "KC", "2D"])})
    dig = DIG_BASE + parse_card("7H")
    assert env.action_masks()[dig]
    obs, reward, terminated, truncated, info = env.step(dig)  # id 586: above 578, legal here
    assert not info["illegal_action"] and not terminated and reward == 0.0
    assert env.env.state.bound == parse_card("7H")
    assert np.flatnonzero(env.action_masks()).tolist() == [env.env.action_id("meld 5H 6H 7H")]


def test_round_trip_at_a_dig_table_that_does_not_score_melds():
    # a 500 Rum table by its draw alone: meld points are tracked, shown and written
    rules = Rules.preset("classic", draw="dig", max_recycles=0)
    hand, other = HAND_DIG[:10], OTHER[:10]
    env = rummy_v0.raw_env(rules=rules)
    env.reset(options={"state": position([hand, other], ["8C", "7H", "KC", "2D"], rules=rules.to_json())})
    env.step(env.action_id("draw discard 7H"))
    env.step(env.action_id("meld 5H 6H 7H"))
    d = env.state_dict()
    assert d["meld_points"] == [18, 0]
    again = rummy_v0.raw_env(rules=rules)
    again.reset(options={"state": d})
    assert again.state_dict() == d
    assert again.observe("player_0")["observation"].tobytes() == env.observe("player_0")["observation"].tobytes()


ALL_HAND = ["6C", "7C", "7D", "7H", "KD", "2H", "4S", "9S", "JH", "3D", "QS", "TD", "AS"]
ALL_OTHER = ["AC", "AD", "AH", "5C", "2C", "TH", "JD", "QD", "4H", "9H", "KH", "8D", "3C"]


@pytest.mark.parametrize("hands,melds,change,msg", [
    # a dig takes two cards or more: a never-melded mover with a dug card holds 13 + 2 at least
    ([["KS", "QS", "JS"], ALL_OTHER], [], dict(phase="play", bound="KS"), "at least 15"),
    ([ALL_HAND + ["8C"], ALL_OTHER], [], dict(phase="play", bound="8C"), "at least 15"),
    # nothing on the table: nobody melded, so nobody dug and every hand is the deal's size
    ([ALL_HAND, ALL_OTHER[:4]], [], dict(has_melded=[False, True]), "table holds no meld"),
    ([ALL_HAND, ALL_OTHER + ["5D", "6D", "8H"]], [], {}, "at most 13"),
    # every card on the table scored for whoever melded it this hand
    ([ALL_HAND, ALL_OTHER[3:]], [["AC", "AD", "AH"]], dict(has_melded=[False, True], meld_points=[0, 0]),
     "worth 3"),
    ([ALL_HAND, ALL_OTHER[3:]], [["AC", "AD", "AH"]], dict(has_melded=[False, True], meld_points=[3, 0]),
     "seat 0 has not melded"),
])
def test_impossible_500_rum_positions_are_refused(hands, melds, change, msg):
    with pytest.raises(ValueError, match=msg):
        state_json.from_json(position(hands, ["5S"], melds=melds, **change))


def test_a_null_meld_points_or_bound_is_the_default():
    d = position([ALL_HAND, ALL_OTHER], ["5S"], meld_points=None, bound=None)
    assert state_json.from_json(d).meld_points == [0, 0]


def test_a_finished_hand_must_agree_with_its_meld_points_and_its_winner():
    # seat 0 went out (empty hand) after melding T J Q of hearts (30); seat 1 holds DRY_P1 (30 points)
    used = set(DRY_P1) | {"TH", "JH", "QH"}
    base = {"rules": "rum500", "hands": [[], DRY_P1], "stock": [c for c in ALL if c not in used][:10],
            "discard": [c for c in ALL if c not in used][10:], "melds": [["TH", "JH", "QH"]],
            "current_player": 0, "phase": "play", "has_melded": [True, False], "meld_points": [30, 0],
            "scores": [30, -30], "hand_over": True,
            "result": {"outcome": "out", "winner": 0, "rummy": False, "points": [30, -30]}}
    assert state_json.from_json(base).result["points"] == [30, -30]
    with pytest.raises(ValueError, match="are not meld_points"):
        state_json.from_json(dict(base, scores=[34, -30], result=dict(base["result"], points=[34, -30])))
    holding = dict(base, hands=[["KS"], DRY_P1], stock=[c for c in base["stock"] if c != "KS"],
                   discard=[c for c in base["discard"] if c != "KS"])
    with pytest.raises(ValueError, match="went out, but hands"):
        state_json.from_json(holding)


def test_a_policy_for_another_kind_of_table_is_refused_up_front(rum500_export):
    from rummy_env.agents import make_agent, table_misfit
    from rummy_env.cli import main as rummy

    agent = make_agent(f"onnx:{rum500_export}")
    assert table_misfit(agent, Rules.preset("rum500")) is None
    why = table_misfit(agent, Rules.preset("classic"))
    assert why == ("it was trained for a 2-player rum500 table, this is a 2-player standard table "
                   "(observations of 548 entries)")
    assert table_misfit(make_agent("heuristic"), Rules.preset("classic")) is None  # scripted: any table
    from rummy_env.eval.tournament import run_tournament

    with pytest.raises(ValueError, match="cannot play"):
        run_tournament([f"onnx:{rum500_export}", "random"], rules="classic", deals=1)
    import io

    from rich.console import Console

    from rummy_env.frontends.play import Game

    with pytest.raises(ValueError, match="--opponent .* cannot play this table: it was trained for a 2-player rum500"):
        Game("classic", f"onnx:{rum500_export}", 0, 1, "hand", io.StringIO("q\n"), Console(file=io.StringIO()))
    # the default opponent at a 500 Rum table is the policy shipped for it (issue 25)
    out = io.StringIO()
    g = Game("rum500", "pretrained", 0, 1, "hand", io.StringIO("q\n"), Console(file=out))
    assert g.opponent_name == "pretrained:rum500" and "heuristic" not in out.getvalue()
    assert rummy(["eval", "--agents", f"onnx:{rum500_export}", "random", "--rules", "classic", "--deals", "1",
                  "--quiet"]) != 0


def test_training_envs_declare_the_envs_observation_box_at_rum500():
    needs("torch")
    needs("sb3_contrib")
    from rummy_env import SingleAgentEnv
    from rummy_env.train.subproc import make_pool
    from rummy_env.train.vec_env import SelfPlayVecEnv

    rules = Rules.preset("rum500")
    venv = SelfPlayVecEnv(rules, make_pool({"random": 1.0}, 2, 0.5, seed=0), 2, seed=0)
    single = SingleAgentEnv(rules="rum500")
    assert venv.observation_space == single.observation_space  # SB3 compares them when a model is loaded
    assert float(venv.observation_space.low[0]) == -np.inf and venv.action_space.n == 631


RUM500_TABLES = {  # one table of every 500 Rum kind (actions.table_kind), the dig-only classic table among them
    "classic-dig": Rules.preset("classic", draw="dig", max_recycles=0),  # winner_takes scoring, digging
    "rum500": Rules.preset("rum500"),
    "rum500+around": Rules.preset("rum500", aces="around"),
    "rum500+jokers": Rules.preset("rum500", jokers=2),
    "rum500+two_decks": Rules.preset("rum500", decks=2, num_players=5),
}


def test_the_500_rum_tables_cover_every_kind_of_500_rum_variant():
    from rummy_env.actions import TABLE_KINDS, is_rum500, kind_features, table_kind

    kinds = {table_kind(r) for r in RUM500_TABLES.values()}
    assert all(is_rum500(k) for k in kinds)
    # each deck variant of RULES.md §10.1-10.3 at 500 Rum, alone
    assert {f for k in kinds for f in kind_features(k)} == {"around", "jokers", "two_decks"}
    assert kinds <= set(TABLE_KINDS) and len(kinds) == 4  # classic-dig is a plain rum500 kind


@pytest.mark.parametrize("name", list(RUM500_TABLES))
def test_infos_payoffs_are_floats_at_every_500_rum_table_and_dig_texts_round_trip(name):
    import random

    rules = RUM500_TABLES[name]
    env = rummy_v0.raw_env(rules=rules)
    env.reset(seed=1)
    assert all(type(x) is float for x in env.infos["player_0"]["hand_result"]["payoffs"])
    rng = random.Random(1)
    digs = 0
    while not any(env.terminations.values()):
        legal = env.legal_actions()
        for a in legal:  # every legal action's text names that action at this table
            t = env.action_text(a)
            if t.startswith("draw discard "):
                digs += 1
                assert env.action_id(t) == a
        env.step(rng.choice(legal))
    for agent in env.possible_agents:
        pay = env.infos[agent]["hand_result"]["payoffs"]
        assert all(type(x) is float for x in pay) and abs(sum(pay)) < 1e-6  # zero-sum (API.md)
    assert digs > 0  # the pile was dug somewhere in the hand


def test_dig_texts_need_the_count():
    from rummy_env.actions import action_text

    env = rummy_v0.raw_env(rules=RUM500_TABLES["classic-dig"])
    env.reset(seed=1)
    with pytest.raises(ValueError, match="0..578"):
        action_text(600)  # a standard table's ids by default
    assert action_text(600, 631) == "draw discard 9D" and env.action_text(600) == "draw discard 9D"
