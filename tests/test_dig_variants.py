"""500 Rum kinds with deck variants (``"rum500+<variants>"``, RULES.md §10.3-10.4): what a
500 Rum table does must hold at every such kind, not only at the kind named ``"rum500"``
(issue 24, one table mechanism).

- the infos' payoffs are floats (``INFO_KEYS``) at every 500 Rum kind: under
  ``scoring="melds"`` a hand's payoffs are each seat's points minus the mean of the
  others', so halves occur and an int would cut them;
- at a dig table (``draw="dig"``) that does not score melds but plays a deck variant,
  the meld points are kept as at the dig table without variants (``meld_points`` is
  written in STATE and checked on reading it back), so every position round-trips.

Expected values are computed by hand: a card's points are its face value (A 1, J Q K
10), a joker's 15 (RULES.md §1, §10.2).
"""
from __future__ import annotations

import json
import random

import pytest

from rummy_env import Rules, engine, rummy_v0, state_json
from rummy_env.observation import offsets

from test_state_json import state_obj


# ---------------------------------------------------------------- payoffs in the infos

@pytest.mark.parametrize("over,n", [
    (dict(decks=2), 3), (dict(jokers=2), 3), (dict(aces="around"), 4), (dict(decks=2, jokers=2), 3),
])
def test_infos_payoffs_are_the_engines_floats_at_500_rum_with_deck_variants(over, n):
    rules = Rules.preset("rum500", num_players=n, **over)
    env = rummy_v0.raw_env(rules=rules)
    halves = 0
    for seed in range(6):
        env.reset(seed=seed)
        assert env.kind.startswith("rum500+")
        info = env.infos["player_0"]["hand_result"]
        assert info["payoffs"] == [0.0] * n and all(type(x) is float for x in info["payoffs"])
        rng = random.Random(seed)
        while not env.state.hand_over:
            env.step(rng.choice(engine.legal_actions(env.state)))
        info = env.infos["player_0"]["hand_result"]
        pts = info["points"]
        # RULES.md §10.4 / API.md: own points minus the mean of the other seats' points
        expect = [p - (sum(pts) - p) / (n - 1) for p in pts]
        assert all(type(x) is float for x in info["payoffs"]), info
        assert info["payoffs"] == pytest.approx(expect, abs=1e-9), info
        assert [env.rewards[a] for a in env.agents] == pytest.approx(expect, abs=1e-9)
        halves += any(x != int(x) for x in info["payoffs"])
    if n == 3:
        assert halves, "no hand of these seeds had a fractional payoff; the test would not see a cut"


def test_the_known_three_seat_two_decks_hand_keeps_its_halves():
    # the hand of the defect report: at rum500 with decks=2, 3 seats, seed 0, random play
    env = rummy_v0.raw_env(rules=Rules.preset("rum500", decks=2, num_players=3))
    env.reset(seed=0)
    rng = random.Random(0)
    while not env.state.hand_over:
        env.step(rng.choice(engine.legal_actions(env.state)))
    pts = env.infos["player_0"]["hand_result"]["points"]
    pay = env.infos["player_0"]["hand_result"]["payoffs"]
    assert pay == [pts[0] - (pts[1] + pts[2]) / 2, pts[1] - (pts[0] + pts[2]) / 2, pts[2] - (pts[0] + pts[1]) / 2]
    assert any(x != int(x) for x in pay), pay


# ---------------------------------------------------------------- meld points at dig tables with deck variants

DIG_VARIANTS = [dict(aces="around"), dict(jokers=2), dict(decks=2), dict(aces="around", jokers=2, decks=2)]


def dig_rules(**over) -> Rules:
    """A dig table that scores the winner's take (not melds), with deck variants."""
    return Rules.preset("turnover", draw="dig", max_recycles=0, **over)


@pytest.mark.parametrize("over", DIG_VARIANTS, ids=lambda o: "+".join(f"{k}={v}" for k, v in o.items()))
def test_random_play_round_trips_state_at_every_step_of_a_dig_variant_table(over):
    rules = dig_rules(**over)
    assert rules.scoring != "melds"
    positions = melded = 0
    for seed in range(3):
        s = engine.new_game(rules, seed=seed)
        assert s.variant is not None
        rng = random.Random(seed)
        while True:
            d = state_json.to_json(s)
            assert "meld_points" in d
            t = state_json.from_json(json.loads(json.dumps(d)), seed=seed)
            assert state_json.to_json(t) == d
            assert engine.legal_actions(t) == engine.legal_actions(s)
            assert t.meld_points == s.meld_points
            positions += 1
            melded += bool(s.melds)
            if s.hand_over:
                break
            legal = engine.legal_actions(s)
            plays = [a for a in legal if a >= 54 and a not in (s.variant.joker_discard,)]
            engine.apply(s, rng.choice(plays) if plays and rng.random() < 0.6 else rng.choice(legal))
    assert positions > 100 and melded > 20, (positions, melded)


@pytest.mark.parametrize("over,hand,meld,points", [
    # a run that turns the corner: K 10, A 1, 2 2
    (dict(aces="around"), ["KH", "AH", "2H", "5C", "7D", "9S", "JC", "3D", "QS", "8C", "6S"], "meld KH AH 2H", 13),
    # a joker standing for the 5H scores 15, not 5: 4 + 15 + 6
    (dict(jokers=2), ["4H", "6H", "JK", "5C", "7D", "9S", "JC", "3D", "QS", "8C", "6S"], "meld 4H JK=5H 6H", 25),
    # two decks: a set of sevens, 7 + 7 + 7
    (dict(decks=2), ["7S", "7H", "7D", "7S", "7D", "9S", "JC", "3D", "QS", "8C", "6S"], "meld 7S 7H 7D", 21),
])
def test_meld_points_after_a_known_meld_at_a_dig_variant_table(over, hand, meld, points):
    rules = dig_rules(**over)
    obj = state_obj(rules.to_json(), [hand, None], ["2C", "TC"], phase="play", current=0)
    env = rummy_v0.raw_env(rules=rules)
    env.reset(options={"state": obj})
    for a in env.action_ids(meld):  # a meld with a joker: joker as <card>, then the meld
        env.step(a)
    d = env.state_dict()
    assert d["meld_points"] == [points, 0]
    obs = env.observe("player_0")["observation"]
    assert obs[offsets(2, env.kind)["meld_points"]] == pytest.approx(points / 100)
    obs1 = env.observe("player_1")["observation"]
    assert obs1[offsets(2, env.kind)["opp1_meld_points"]] == pytest.approx(points / 100)
    again = rummy_v0.raw_env(rules=rules)
    again.reset(options={"state": d})
    assert again.state_dict() == d
    assert again.observe("player_0")["observation"].tobytes() == obs.tobytes()
