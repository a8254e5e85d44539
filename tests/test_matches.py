"""Match-level evaluation (issue 12): duplicate matches with rotated seats over the same
deals, split matches counting half, the clustered points-per-hand interval, and the
match-first reports of ``rummy eval`` and training."""
from __future__ import annotations

import argparse
import math

import numpy as np
import pytest

from rummy_env import Rules, engine, state_json
from rummy_env.eval import cli as eval_cli
from rummy_env.eval.tournament import (
    _agent_stats,
    evaluate,
    hand_seed,
    play_game,
    play_games,
    ratio_interval,
    resolve_matches,
)


def _deals_of_match(rules: Rules, seed: int, agents, max_hands: int = 40) -> list[list[list[str]]]:
    """The cards each seat is dealt in every hand of a match played from ``seed`` by
    ``agents`` (hand ``k`` dealt from ``hand_seed(seed, k)``, as ``play_game`` does)."""
    import random

    from rummy_env.observation import Encoder

    enc = Encoder(rules.num_players)
    st = engine.new_game(rules, seed=seed)
    deals = []
    for hand in range(1, max_hands + 1):
        deals.append([sorted(h) for h in state_json.to_json(st)["hands"]])
        while not st.hand_over:
            mask = np.zeros(579, dtype=np.int8)
            mask[engine.legal_actions(st)] = 1
            engine.apply(st, int(agents[st.current].act(enc.encode(st, st.current), mask)))
        if st.match_over:
            break
        st.rng = random.Random(hand_seed(seed, hand + 1))
        engine.next_hand(st)
    return deals


def test_hand_seed_fixes_every_deal_of_a_match_whatever_the_play():
    from rummy_env.agents import make_agent

    rules = Rules.preset("classic")
    a = _deals_of_match(rules, 7, [make_agent("greedy", seed=1), make_agent("random", seed=2)])
    b = _deals_of_match(rules, 7, [make_agent("random", seed=3), make_agent("heuristic", seed=4)])
    k = min(len(a), len(b))
    assert k >= 2
    assert a[:k] == b[:k]  # hand k has the same cards at every seat, however hands 1..k-1 went
    assert hand_seed(7, 1) == 7 and len({hand_seed(7, 2), hand_seed(7, 3), hand_seed(8, 2)}) == 3


def test_duplicate_matches_rotate_the_seats_over_the_same_deals():
    rules = Rules.preset("classic")
    from rummy_env.agents import make_agent

    class Watcher:
        """Greedy play; remembers its observation's own hand at every decision."""

        def __init__(self):
            self.inner = make_agent("greedy")
            self.views = []

        def seed(self, s):
            self.inner.seed(s)
            self.views = []

        def act(self, obs, mask):
            self.views.append(tuple(np.flatnonzero(obs[:52] > 0)))
            return self.inner.act(obs, mask)

    from rummy_env.eval.tournament import deal_seed
    from rummy_env.observation import Encoder

    records = play_games([Watcher(), Watcher()], [(0, 1)], rules, deals=2, seed=3, matches=True)
    assert [(g["deal"], g["rotation"], g["seats"]) for g in records] == [
        (0, 0, [0, 1]), (0, 1, [1, 0]), (1, 0, [0, 1]), (1, 1, [1, 0])]
    # seat 0 moves first in hand 1 (the dealer is the last seat): whichever agent sits
    # there in a rotation sees seat 0's cards of the match seed's first deal
    st = engine.new_game(rules, seed=deal_seed(3, 0))
    seat0 = tuple(np.flatnonzero(Encoder(2).encode(st, 0)[:52] > 0))
    a, b = Watcher(), Watcher()
    play_game(rules, [a, b], deal_seed(3, 0), matches=True)  # rotation 0: a at seat 0
    b2, a2 = Watcher(), Watcher()
    play_game(rules, [b2, a2], deal_seed(3, 0), matches=True)  # rotation 1: b at seat 0
    assert a.views[0] == b2.views[0] == seat0


def test_split_matches_count_half_and_hands_are_counted_by_hand():
    # agent 0 in 4 matches: won one (seat 0), split one, lost two; hands and points by hand
    records = [
        {"seats": [0, 1], "match_winners": [0], "winner": 0, "hand_wins": [3, 1], "hand_voids": 0,
         "hand_points": [60.0, -60.0], "hands": 4},
        {"seats": [1, 0], "match_winners": [0, 1], "winner": None, "hand_wins": [2, 2], "hand_voids": 1,
         "hand_points": [0.0, 0.0], "hands": 5},
        {"seats": [0, 1], "match_winners": [1], "winner": 1, "hand_wins": [1, 2], "hand_voids": 0,
         "hand_points": [-30.0, 30.0], "hands": 3},
        {"seats": [1, 0], "match_winners": [0], "winner": 0, "hand_wins": [2, 0], "hand_voids": 0,
         "hand_points": [40.0, -40.0], "hands": 2},
    ]
    s = _agent_stats(records, 0, matches=True)
    assert s["matches"] == 4 and s["wins"] == 1.5 and s["match_win_rate"] == 0.375
    assert s["hands"] == 14 and s["hand_wins"] == 3 + 2 + 1 + 0 and s["voids"] == 1
    assert s["hand_win_rate"] == pytest.approx(6 / 14)
    # points per hand: (60 + 0 - 30 - 40) / 14 = -10 / 14
    assert s["points_per_hand"] == pytest.approx(-10 / 14)
    assert s["win_rate"] == s["match_win_rate"]
    o = _agent_stats(records, 1, matches=True)
    assert o["wins"] == 2.5 and o["points_per_hand"] == pytest.approx(10 / 14)


def test_ratio_interval_by_hand():
    # clusters (points, hands): (6, 2), (0, 1), (-3, 1): ratio 3/4 = 0.75
    # residuals 6 - 1.5 = 4.5, 0 - 0.75 = -0.75, -3 - 0.75 = -3.75; squares 20.25 + 0.5625 + 14.0625 = 34.875
    # half-width 1.96 * sqrt(3/2 * 34.875) / 4 = 1.96 * 7.232738 / 4 = 3.544042
    r, lo, hi = ratio_interval([6, 0, -3], [2, 1, 1], z=1.96)
    assert r == 0.75
    assert lo == pytest.approx(0.75 - 3.544042, abs=1e-5) and hi == pytest.approx(0.75 + 3.544042, abs=1e-5)
    assert ratio_interval([5], [2]) == (2.5, 2.5, 2.5)
    assert all(math.isnan(x) for x in ratio_interval([], []))


def test_matches_are_the_default_where_the_rules_have_a_target():
    assert resolve_matches(Rules.preset("classic"), None) is True
    assert resolve_matches(Rules.preset("practice"), None) is False
    assert resolve_matches(Rules.preset("classic"), False) is False
    with pytest.raises(ValueError, match="target"):
        resolve_matches(Rules.preset("practice"), True)
    r = evaluate("greedy", "random", rules="classic", deals=3, seed=1)
    assert r["mode"] == "matches" and r["matches"] == 6 and r["hands"] >= 6
    # 3 seeds x 2 rotations = 6 matches, each of at least one hand
    assert r["match_win_rate"] == 1.0 and r["points_per_hand"] > 0
    h = evaluate("greedy", "random", rules="classic", deals=3, seed=1, matches=False)
    assert h["mode"] == "hands" and h["games"] == 6 == h["hands"] and "match_win_rate" not in h


def test_play_game_match_records_are_zero_sum_and_count_every_hand():
    rules = Rules.preset("classic")
    from rummy_env.agents import make_agent

    g = play_game(rules, [make_agent("greedy", seed=1), make_agent("random", seed=2)], seed=5, matches=True)
    assert sum(g["hand_points"]) == 0  # zero-sum hands
    assert sum(g["hand_wins"]) + g["hand_voids"] == g["hands"]  # each hand won by one seat, or void (§6)
    # heads-up, +1 / -1 for a sole winner, 0 each for a split (engine.match_payoffs)
    assert g["payoffs"] == ([1.0, -1.0] if g["match_winners"] == [0] else
                            [-1.0, 1.0] if g["match_winners"] == [1] else [0.0, 0.0])


def _args(**kw):
    base = dict(agents=["greedy", "random"], rules="classic", deals=2, seed=0, out=None, players=None,
                matches=None, workers=1, quiet=True)
    base.update(kw)
    return argparse.Namespace(**base)


def test_cli_leads_with_match_win_rate(capsys):
    assert eval_cli.main(_args()) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "agent" in line and "table" in line)
    assert header.index("match win rate") < header.index("points/hand") < header.index("hand win rate")
    assert "duplicate matches to the target" in out
    assert eval_cli.main(_args(matches=False)) == 0
    out = capsys.readouterr().out
    assert "match win rate" not in out and "single hands" in out


def test_cli_parses_hands_and_matches_flags():
    p = argparse.ArgumentParser()
    eval_cli.add_arguments(p)
    assert p.parse_args(["--agents", "a", "b"]).matches is None
    assert p.parse_args(["--agents", "a", "b", "--hands"]).matches is False
    assert p.parse_args(["--agents", "a", "b", "--matches"]).matches is True
    with pytest.raises(SystemExit):
        p.parse_args(["--agents", "a", "b", "--hands", "--matches"])
