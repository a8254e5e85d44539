"""The recorded experiments of experiments/ (issue 25, sessions 23-26) still run: the guided
search with guide rollouts plays legal moves and plays hands out; the value targets are
the softmax the docs give; the expert-iteration and match-reward configs are valid configs;
the race counts add up; the match table is its recursion; the match-valued and the part
searches play legal moves."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from extras import needs

from rummy_env import engine
from rummy_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1] / "experiments"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_guide_rollouts_play_every_hand_out_and_the_agent_plays_legal_moves():
    needs("sb3_contrib")
    from rummy_env import rummy_v0
    from rummy_env.agents.shipped import load_policy

    mod = _module("issue25_guide_rollouts")
    rules = Rules.preset("classic")
    states = [engine.new_game(rules, seed=s) for s in range(3)]
    pays = mod.guide_rollouts(states, load_policy("pretrained"))
    assert all(s.hand_over for s in states)
    assert pays == [float(s.payoffs[0]) for s in states]
    assert all(s.payoffs[0] == -s.payoffs[1] for s in states)  # a 2-player hand is zero-sum (RULES.md §5)
    agent = mod.GuideRolloutSearch(0, samples=2, guide="pretrained")
    env = rummy_v0.env()
    env.reset(seed=1)
    for _ in range(12):
        o, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        a = agent.act(o["observation"], o["action_mask"])
        assert o["action_mask"][a] == 1
        env.step(a)


def test_value_targets_are_the_softmax_of_the_values_over_the_temperature():
    mod = _module("issue25_value_targets")
    res = [(2, {2: 0.0, 3: 5.0}), (4, {4: 1.0}), (5, {})]
    tgt, has = mod.targets(res, 3, 10, temperature=5.0)
    e = math.e
    assert tgt[0, 2] == pytest.approx(1 / (1 + e)) and tgt[0, 3] == pytest.approx(e / (1 + e))
    assert tgt[0].sum() == pytest.approx(1.0) and not tgt[1:].any()
    assert has.tolist() == [True, False, False]


def test_the_expert_iteration_config_is_a_valid_config():
    from rummy_env.train.config import TrainConfig

    cfg = TrainConfig.from_toml(ROOT / "issue25_ei_guided.toml")
    assert cfg.warmstart_teacher == "search:guide=pretrained" and cfg.init_policy == "pretrained"
    assert (cfg.warmstart_dagger_rounds, cfg.warmstart_dagger_decisions, cfg.warmstart_dagger_epochs) == (1, 60000, 3)


@pytest.mark.slow
def test_the_value_target_script_writes_a_policy(tmp_path):
    needs("sb3_contrib")
    mod = _module("issue25_value_targets")
    out = tmp_path / "p.zip"
    mod.main(["--positions", "300", "--workers", "1", "--out", str(out),
              "--policy", str(ROOT.parent / "agents" / "pretrained" / "policy.zip")])
    assert out.is_file()


def test_races_count_every_hand_and_the_holder_wins_only_by_going_rummy():
    """Two deals from both seats: four hands, each won by one agent or void. The holding
    heuristic keeps its melds and lay-offs in hand until it can go out in one turn, so
    every hand it wins is won by going rummy (RULES.md §5), at double the points."""
    mod = _module("issue25_races")
    res = mod.races("greedy", "heuristic:holding", deals=2, seed=5000)
    assert res["hands"] == 4
    assert res["A"]["wins"] + res["B"]["wins"] + res["void"] == 4
    assert res["B"]["rummy"] == res["B"]["wins"] >= 1
    assert res["A"]["rummy"] <= res["A"]["wins"]


def test_the_match_reward_config_is_a_valid_config():
    from rummy_env.train.config import TrainConfig, tomllib  # tomllib: tomli before Python 3.11

    # the first stage starts from the policy shipped at 5066d80, a file its header says how
    # to write (git show); checked with that key replaced, as the later stages are
    first_keys = tomllib.loads((ROOT / "issue25_match_reward.toml").read_text())
    assert first_keys["init_policy"] == "runs/classic_5066d80.zip"
    assert "git show 5066d80:agents/pretrained/policy.zip > runs/classic_5066d80.zip" in (
        ROOT / "issue25_match_reward.toml").read_text()
    cfg = TrainConfig.from_dict({**first_keys, "init_policy": "pretrained"})
    assert cfg.reward == "match"
    assert cfg.fixed_opponent == "heuristic:holding" and cfg.opponent_weights["fixed"] == 0.2
    # the second stage starts from the first's final model, which a fresh clone does not have
    # yet: its keys are checked with that one key replaced
    keys = tomllib.loads((ROOT / "issue25_points_match.toml").read_text())
    assert keys["init_policy"] == f"{cfg.out}/final_model.zip"
    second = TrainConfig.from_dict({**keys, "init_policy": "pretrained"})
    assert second.reward == "points+match" and second.opponent_weights == cfg.opponent_weights
    # the third stage starts from the second's final model, with the holder at 0.45
    third_keys = tomllib.loads((ROOT / "issue25_holder_weight.toml").read_text())
    assert third_keys["init_policy"] == f"{keys['out']}/final_model.zip"
    third = TrainConfig.from_dict({**third_keys, "init_policy": "pretrained"})
    assert third.reward == "points+match" and third.fixed_opponent == "heuristic:holding"
    assert third.opponent_weights == {"snapshot": 0.25, "random": 0.05, "greedy": 0.05,
                                      "heuristic": 0.2, "fixed": 0.45}
    assert third.out != second.out != cfg.out


def test_pool_eval_pools_matches_as_rummy_eval_counts_them(tmp_path):
    """Two runs of one match each for agent X: a win over 2 hands (+60 points, 1 hand won)
    from seat 0 and a loss in 1 hand (-100) from seat 1: 1 of 2 matches, (60 - 100) / 3
    hands = -13.33 points per hand, 1 of 3 hands won."""
    mod = _module("pool_eval")
    head = ("deal,table,rotation,seat0,seat1,winner_seat,outcome,rummy,turns,hands,payoff0,payoff1,"
            "hand_points0,hand_points1,hand_wins0,hand_wins1\n")
    rows = {"a": "0,0,0,X,Y,0,match,0,20,2,1.0,-1.0,60.0,-60.0,1,1\n",
            "b": "0,0,1,Y,X,0,match,0,9,1,1.0,-1.0,100.0,-100.0,1,0\n"}
    for d, row in rows.items():
        (tmp_path / d).mkdir()
        (tmp_path / d / "games.csv").write_text(head + row)
    r = mod.pool("X", [tmp_path / "a", tmp_path / "b"])
    assert r["matches"] == 2 and r["match_win_rate"] == 0.5
    assert r["points_per_hand"] == pytest.approx(-40 / 3) and r["hands"] == 3
    assert r["hand_win_rate"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="plays no match"):
        mod.pool("Z", [tmp_path / "a"])
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "games.csv").write_text(head + rows["a"].replace(",match,", ",out,"))
    with pytest.raises(ValueError, match="not a match run"):
        mod.pool("X", [tmp_path / "c"])
    # the same two matches with X named W in the second run: pooled by --alias
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "games.csv").write_text(head + rows["b"].replace("Y,X", "Y,W"))
    assert mod.pool("X", [tmp_path / "a", tmp_path / "d"], aliases=["W"]) == r
    assert mod.pool("X", [tmp_path / "a", tmp_path / "d"])["matches"] == 1
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "games.csv").write_text(head + rows["a"].replace("X,Y", "X,W"))
    with pytest.raises(ValueError, match="both names of the agent"):
        mod.pool("X", [tmp_path / "e"], aliases=["W"])


def test_pool_eval_pairs_two_agents_on_the_same_matches_by_deal(tmp_path):
    """X and W each played the same two deals (two seat rotations each) against Y. X: won,
    won; lost, won. W: won, lost; lost, won. Per deal X minus W: (1 - 1) + (1 - 0) = 1 and 0;
    mean 0.5 a deal of 2 matches = +0.25 of match win rate; the deals' standard deviation
    sqrt(2 * 0.5**2 / 1) = 0.7071, half-width 1.96 * 0.7071 / sqrt(2) = 0.98 a deal, so
    [(0.5 - 0.98) / 2, (0.5 + 0.98) / 2] = [-0.24, +0.74]; one deal alike."""
    mod = _module("pool_eval")
    head = ("deal,table,rotation,seat0,seat1,winner_seat,outcome,rummy,turns,hands,payoff0,payoff1,"
            "hand_points0,hand_points1,hand_wins0,hand_wins1\n")

    def run(name, agent, wins):
        rows = []
        for (deal, rot), won in zip([(0, 0), (0, 1), (1, 0), (1, 1)], wins):
            seat = rot  # the agent sits in seat 0, then 1
            pay = [1.0, -1.0] if (seat == 0) == won else [-1.0, 1.0]
            names = (agent, "Y") if seat == 0 else ("Y", agent)
            rows.append(f"{deal},0,{rot},{names[0]},{names[1]},0,match,0,9,1,{pay[0]},{pay[1]},0,0,0,0\n")
        (tmp_path / name).mkdir()
        (tmp_path / name / "games.csv").write_text(head + "".join(rows))
        return tmp_path / name

    x, w = run("x", "X", [True, True, False, True]), run("w", "W", [True, False, False, True])
    q = mod.paired("X", [x], "W", [w])
    assert (q["deals"], q["matches"], q["same"]) == (2, 4, 1)
    assert q["difference"] == pytest.approx(0.25)
    assert q["ci"] == pytest.approx([(0.5 - 1.96 * 0.5 ** 0.5 / 2 ** 0.5) / 2, (0.5 + 1.96 * 0.5 ** 0.5 / 2 ** 0.5) / 2])
    assert q["ci"] == pytest.approx([-0.24, 0.74], abs=0.005)
    with pytest.raises(ValueError, match="pair them one to one"):
        mod.paired("X", [x], "W", [w, w])
    with pytest.raises(ValueError, match="is not exactly one seat"):
        mod.paired("X", [w], "W", [w])


def _points_match_stage() -> dict:
    """The classic config shipped from session 25 until the plan clone (session 30): the run's
    own config of experiments/issue25_points_match.toml, which adds two keys at their defaults
    (git show 3b7b036:agents/pretrained/config.toml)."""
    from rummy_env.train.config import tomllib

    return {**tomllib.loads((ROOT / "issue25_points_match.toml").read_text()), "precision": "auto",
            "snapshot_rotation": 0}


def test_the_shipped_classic_config_is_the_plan_clone_run():
    """agents/pretrained/config.toml is the run's own config of
    experiments/issue25_card_plan_big_clone.toml (which leaves four keys at their defaults), and
    it loads as a config that names the shipped network (features and discard head)."""
    from rummy_env.train.config import TrainConfig, tomllib

    shipped = tomllib.loads((ROOT.parent / "agents" / "pretrained" / "config.toml").read_text())
    run = tomllib.loads((ROOT / "issue25_card_plan_big_clone.toml").read_text())
    assert shipped == {**run, "precision": "auto", "snapshot_rotation": 0, "warmstart_meld_weight": 1.0,
                       "warmstart_teacher_weights": {}}
    cfg = TrainConfig.from_dict(shipped)
    d = TrainConfig()
    assert (cfg.precision, cfg.snapshot_rotation, cfg.warmstart_meld_weight) == (
        d.precision, d.snapshot_rotation, d.warmstart_meld_weight)
    assert (cfg.features, cfg.discard_head, cfg.warmstart_teacher) == ("cards+plan", "cards+stock", "heuristic:cutting")


def test_the_wide_network_config_distils_the_shipped_policy():
    from rummy_env.train.config import TrainConfig

    cfg = TrainConfig.from_toml(ROOT / "issue25_wide.toml")  # validated: the teacher loads
    assert (cfg.warmstart_teacher, cfg.init_policy, cfg.trunk, cfg.net_arch) == ("pretrained", "", 512, [256, 256])
    assert cfg.reward == "points+match" and cfg.opponent_weights["fixed"] == 0.2


def test_the_match_table_is_the_recursion_computed_by_hand(monkeypatch):
    """Hands that one seat or the other wins for 10 points (0.4 each) or nobody wins (0.2),
    to a target of 20: V(10, 10) = 0.4 * 1 + 0.4 * 0 over 0.8 = 1/2; V(10, 20) = (0.4 * 1 +
    0.4 * V(10, 10)) / 0.8 = 3/4; V(20, 10) = (0.4 * V(10, 10) + 0.4 * 0) / 0.8 = 1/4;
    V(20, 20) = (0.4 * 3/4 + 0.4 * 1/4) / 0.8 = 1/2. A hand worth more than needed ends the
    match as one worth exactly that."""
    mod = _module("issue25_match_value")
    monkeypatch.setattr(mod, "hand_points", lambda: ({10: 0.4}, 0.2))
    V = mod.match_table(20)
    assert (V[10, 10], V[10, 20], V[20, 10], V[20, 20]) == pytest.approx((0.5, 0.75, 0.25, 0.5))
    assert V[5, 20] == pytest.approx(V[10, 20]) and V[15, 15] == pytest.approx(0.5)
    assert V[0, 7] == 1.0 and V[7, 0] == 0.0


def test_the_match_value_of_a_hand_that_ends_the_match_is_its_result(monkeypatch):
    mod = _module("issue25_match_value")
    monkeypatch.setattr(mod, "hand_points", lambda: ({10: 0.4}, 0.2))
    s = engine.new_game(Rules(num_players=2, target=20), seed=0)
    s.match_over, s.match_winners = True, [0]
    assert mod.match_value(s, 0) == 1.0 and mod.match_value(s, 1) == 0.0
    s.match_over, s.scores = False, [10, 0]  # seat 0 needs 10, seat 1 needs 20
    assert mod.match_value(s, 0) == pytest.approx(0.75) and mod.match_value(s, 1) == pytest.approx(0.25)


def test_the_match_valued_and_the_part_searches_play_legal_moves(monkeypatch):
    """The match-valued search plays legal moves in a match; the part searches leave the
    decision they do not search to the guide (its most probable legal action) and search
    the other."""
    needs("sb3_contrib")
    import numpy as np
    from rummy_env import rummy_v0
    from rummy_env.agents.shipped import load_policy
    from rummy_env.engine import DRAW
    from rummy_env.observation import PlayerView

    mv = _module("issue25_match_value")
    monkeypatch.setattr(mv, "hand_points", lambda: ({30: 0.5}, 0.0))
    parts = _module("issue25_search_parts")
    agents = {"match": mv.MatchValueSearch(0, samples=4), "draw": parts.PartSearch(0, "draw", samples=4),
              "discard": parts.PartSearch(0, "discard", samples=4)}
    guide = load_policy("pretrained")
    env = rummy_v0.env()
    env.reset(seed=3)
    searched = {"draw": set(), "discard": set()}
    for _ in range(30):
        o, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        obs, mask = o["observation"], o["action_mask"]
        v = PlayerView(obs, mask)
        lg = np.asarray(guide.logits(obs), dtype=np.float64)
        top = max(v.legal, key=lambda a: (lg[a], -a))
        phase = "draw" if v.phase == DRAW else "discard"
        for name, agent in agents.items():
            a = agent.act(obs, mask)
            assert mask[a] == 1
            if name != "match" and len(v.legal) > 1 and name != phase:
                assert a == top and agent.last_values == {}
            if name == phase and agent.last_values:
                searched[phase].add(name)
            if name == "match" and agent.last_values:  # chances to win the match, not points
                searched.setdefault("match", set()).add(phase)
                assert all(0.0 <= x <= 1.0 for x in agent.last_values.values()), agent.last_values
        env.step(agents["match"].act(obs, mask))
    assert searched == {"draw": {"draw"}, "discard": {"discard"}, "match": {"draw", "discard"}}


def test_the_cutting_clone_config_clones_the_cutting_heuristic():
    from rummy_env.train.config import TrainConfig

    cfg = TrainConfig.from_toml(ROOT / "issue25_cutting_clone.toml")
    assert (cfg.warmstart_teacher, cfg.init_policy, cfg.fixed_opponent) == ("heuristic:cutting", "", "heuristic:cutting")
    assert (cfg.trunk, cfg.net_arch, cfg.reward) == (256, [128], "points+match")


def test_the_ten_minute_cutting_config_is_the_default_with_the_cutting_teacher_and_the_stock_head():
    from rummy_env.train.config import TrainConfig

    cfg = TrainConfig.from_toml(ROOT / "issue25_main_cutting.toml")
    cfg.validate()
    default = TrainConfig()
    changed = {k for k in vars(default) if getattr(cfg, k) != getattr(default, k)}
    assert changed == {"out", "timesteps", "discard_head", "warmstart_teacher", "warmstart_decisions",
                       "warmstart_dagger_rounds", "warmstart_dagger_decisions"}
    assert (cfg.discard_head, cfg.warmstart_teacher, cfg.timesteps) == ("cards+stock", "heuristic:cutting", 250_000)
    assert (cfg.warmstart_decisions, cfg.warmstart_dagger_rounds, cfg.warmstart_dagger_decisions) == (250_000, 1,
                                                                                                       100_000)


def test_the_cutting_pool_config_is_the_shipped_config_with_the_cutter_in_the_pool():
    from rummy_env.train.config import TrainConfig, tomllib

    shipped = _points_match_stage()  # the classic config shipped when this experiment ran
    stage = tomllib.loads((ROOT / "issue25_cutting_pool.toml").read_text())
    changed = {k for k in shipped if shipped[k] != stage.get(k)}
    assert changed == {"timesteps", "seed", "out", "init_policy", "fixed_opponent", "eval_every", "opponent_weights"}
    cfg = TrainConfig.from_dict(stage)
    assert (cfg.init_policy, cfg.fixed_opponent, cfg.opponent_weights["fixed"]) == ("pretrained", "heuristic:cutting", 0.3)


def test_the_wide_cutting_clone_config_clones_the_cutting_heuristic_bigger():
    from rummy_env.train.config import TrainConfig

    cfg = TrainConfig.from_toml(ROOT / "issue25_cutting_clone_wide.toml")
    assert (cfg.warmstart_teacher, cfg.init_policy) == ("heuristic:cutting", "")
    assert (cfg.trunk, cfg.net_arch) == (512, [256, 256])
    assert (cfg.warmstart_decisions, cfg.warmstart_dagger_rounds, cfg.warmstart_epochs) == (1_400_000, 3, 8)


def test_card_discard_scorers_fit_and_their_agents_play_legal_moves(tmp_path):
    """A tiny run writes both scorers and its results; the agents built on them play legal
    moves, and their draws, melds and lay-offs are the cutting heuristic's."""
    import json

    needs("sb3_contrib")

    import torch

    from rummy_env import rummy_v0
    from rummy_env.actions import DISCARD_BASE, MELD_BASE
    from rummy_env.agents import make_agent

    cd = _module("issue25_card_discards")
    res = cd.main(["--decisions", "3000", "--epochs", "1", "--seed", "3", "--out", str(tmp_path)])
    torch.set_num_threads(1)
    assert res["positions"] > 0 and res["held_out"] == res["positions"] - int(res["positions"] * 0.8)
    assert json.loads((tmp_path / "results.json").read_text())["percard"][0]["epoch"] == 1
    x = torch.zeros(3, cd.EXTRA_ALL)
    assert cd.PerCard()(x).shape == cd.Flat()(x).shape == (3, 52)
    for name in ("percard", "flat"):
        agent = cd.ScorerDiscards(name, seed=0, folder=str(tmp_path))
        cut = make_agent("heuristic:cutting", seed=0)
        env = rummy_v0.env(rules="classic")
        env.reset(seed=4)
        discards = 0
        for seat in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            a = agent.act(obs["observation"], obs["action_mask"])
            assert obs["action_mask"][a] == 1
            c = cut.act(obs["observation"], obs["action_mask"])
            if DISCARD_BASE <= c < MELD_BASE:
                assert DISCARD_BASE <= a < MELD_BASE
                discards += 1
            else:
                assert a == c
            env.step(a)
        assert discards > 0


def test_the_discard_head_configs_clone_the_cutting_heuristic_with_the_head():
    from rummy_env.train.config import TrainConfig

    first = TrainConfig.from_toml(ROOT / "issue25_card_head_clone.toml")
    assert (first.warmstart_teacher, first.init_policy, first.discard_head) == ("heuristic:cutting", "", "cards")
    assert (first.trunk, first.net_arch, first.warmstart_decisions, first.warmstart_dagger_rounds) == (256, [128], 600_000, 3)
    from rummy_env.train.config import tomllib

    stage = tomllib.loads((ROOT / "issue25_card_head_dagger.toml").read_text())
    assert stage["init_policy"] == f"{first.out}/final_model.zip"  # the first run's output: not in a fresh clone
    more = TrainConfig.from_dict({**stage, "init_policy": "pretrained"})
    assert more.discard_head == "cards"
    assert (more.warmstart_dagger_rounds, more.warmstart_dagger_decisions, more.warmstart_dagger_epochs) == (4, 250_000, 3)


def test_the_disagreement_count_kinds_and_a_student_that_is_its_teacher():
    dis = _module("issue25_disagreement")
    assert [dis.kind(a) for a in (0, 1, 2, 53, 54, 422, 423, 578, 579)] == [
        "draw", "draw", "discard", "discard", "meld", "meld", "layoff", "layoff", "other"]
    same = dis.disagreement("heuristic:cutting", "heuristic:cutting", "greedy", hands=2, seed=1)
    assert same["agree"] == 1.0 and all(ok for _, _, ok, _ in same["rows"])
    assert sum(c for *_, c in same["rows"]) == same["decisions"] > 20
    other = dis.disagreement("greedy", "heuristic:cutting", "greedy", hands=2, seed=1)
    assert 0 < other["agree"] < 1 and sum(c for *_, c in other["rows"]) == other["decisions"]



def test_the_discard_head_ppo_config_is_the_shipped_stage_from_the_headed_clone():
    from rummy_env.train.config import TrainConfig, tomllib

    shipped = _points_match_stage()  # the classic config shipped when this experiment ran
    stage = tomllib.loads((ROOT / "issue25_card_head_ppo.toml").read_text())
    changed = {k for k in set(shipped) | set(stage) if shipped.get(k) != stage.get(k)}
    assert changed == {"timesteps", "seed", "out", "init_policy", "discard_head", "fixed_opponent", "eval_every"}
    assert stage["init_policy"] == "runs/cardhead2/run/final_model.zip"  # issue25_card_head_dagger.toml's output
    assert (stage["timesteps"], stage["eval_every"]) == (3_000_000, 0)
    cfg = TrainConfig.from_dict({**stage, "init_policy": "pretrained"})
    assert (cfg.discard_head, cfg.fixed_opponent, cfg.warmstart_teacher) == ("cards", "heuristic:cutting", "none")


def test_hybrid_classes_and_the_agents_that_are_their_teacher_or_their_student():
    hy = _module("issue25_hybrid")
    # draw 0-1, discard 2-53, meld 54-422, layoff 423-578 (rummy_env.actions)
    assert hy.decision_class(0, 1) == hy.decision_class(1, 1) == "draw"
    assert hy.decision_class(2, 60) == hy.decision_class(60, 2) == hy.decision_class(2, 500) == "hold"
    assert hy.decision_class(2, 3) == "discard"
    assert hy.decision_class(60, 61) == hy.decision_class(60, 500) == hy.decision_class(500, 500) == "meld"
    with pytest.raises(ValueError, match=r"unknown decision classes \['holds'\]; the classes are draw, hold"):
        hy.Hybrid(["holds"], student="greedy")
    from rummy_env import rummy_v0
    from rummy_env.agents import make_agent

    agents = {c: hy.Hybrid(c, student="greedy") for c in ((), hy.CLASSES, ("discard",))}
    cut, greedy = make_agent("heuristic:cutting"), make_agent("greedy")
    seen = set()
    for seed in range(3, 9):
        env = rummy_v0.env(rules="classic")
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            o, m = obs["observation"], obs["action_mask"]
            t, s = cut.act(o, m), greedy.act(o, m)
            seen.add(hy.decision_class(t, s))
            assert agents[()].act(o, m) == t and agents[hy.CLASSES].act(o, m) == s
            assert agents[("discard",)].act(o, m) == (s if hy.decision_class(t, s) == "discard" else t)
            env.step(s if seed % 2 else t)
    assert seen == set(hy.CLASSES)


def test_the_stock_head_and_meld_weight_configs_are_the_headed_clone_with_one_change_each():
    from rummy_env.train.config import TrainConfig, tomllib

    base = tomllib.loads((ROOT / "issue25_card_head_clone.toml").read_text())
    stock = tomllib.loads((ROOT / "issue25_card_stock_clone.toml").read_text())
    weighted = tomllib.loads((ROOT / "issue25_card_meld_weight.toml").read_text())
    diff = lambda a, b: {k for k in set(a) | set(b) if a.get(k) != b.get(k)}  # noqa: E731
    assert diff(base, stock) == {"discard_head", "seed", "out"}
    assert diff(stock, weighted) == {"warmstart_meld_weight", "seed", "out"}
    cfg = TrainConfig.from_dict(weighted)
    assert (cfg.discard_head, cfg.warmstart_meld_weight, cfg.warmstart_teacher) == ("cards+stock", 4.0, "heuristic:cutting")
    assert TrainConfig.from_dict(stock).warmstart_meld_weight == 1.0


def test_hold_by_stock_counts_only_hold_disagreements():
    hb = _module("issue25_hold_by_stock")
    same, total = hb.hold_by_stock("heuristic:cutting", hands=2)
    assert not same and sum(total.values()) > 10
    differ, total2 = hb.hold_by_stock("greedy", hands=3)
    assert differ and all(stock in total2 and (t == "discard") != (s == "discard") for stock, t, s in differ)


def test_the_big_clone_config_is_the_stock_clone_on_more_positions():
    from rummy_env.train.config import TrainConfig, tomllib

    stock = tomllib.loads((ROOT / "issue25_card_stock_clone.toml").read_text())
    big = tomllib.loads((ROOT / "issue25_card_big_clone.toml").read_text())
    diff = {k for k in set(stock) | set(big) if stock.get(k) != big.get(k)}
    assert diff == {"warmstart_decisions", "warmstart_epochs", "warmstart_dagger_rounds",
                    "warmstart_dagger_decisions", "warmstart_dagger_epochs", "out"}
    cfg = TrainConfig.from_dict(big)
    assert (cfg.warmstart_decisions, cfg.warmstart_dagger_rounds, cfg.discard_head) == (1_200_000, 4, "cards+stock")


def test_meld_bias_lowers_melds_and_layoffs_only_where_a_discard_is_legal(monkeypatch):
    mb = _module("issue25_meld_bias")

    class Fixed:  # a student whose logits are given: meld 60 at 1.0, layoff 500 at 0.8, discard 5 at 0.5
        def logits(self, observation):
            z = np.zeros(579, dtype=np.float32)
            z[60], z[500], z[5] = 1.0, 0.8, 0.5
            return z

    def agent(bias):
        a = mb.MeldBias(student="greedy", bias=bias)
        a.student = Fixed()
        return a

    obs = np.zeros(548, dtype=np.float32)
    play = np.zeros(579, dtype=np.int8)
    play[[5, 7, 60, 500]] = 1
    assert agent(0).act(obs, play) == 60
    assert agent(0.3).act(obs, play) == 60          # 0.7 against 0.5 and 0.5
    assert agent(0.55).act(obs, play) == 5          # 0.45 and 0.25 against 0.5
    melds_only = np.zeros(579, dtype=np.int8)
    melds_only[[60, 500]] = 1                       # no discard legal: nothing is shifted
    assert agent(5).act(obs, melds_only) == 60
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="meld bias must be a finite number >= 0"):
            mb.MeldBias(student="greedy", bias=bad)
    monkeypatch.setenv("RUMMY_MELD_BIAS", "x")
    with pytest.raises(ValueError, match="RUMMY_MELD_BIAS must be a number >= 0, got 'x'"):
        mb.MeldBias(student="greedy")
    monkeypatch.delenv("RUMMY_STUDENT", raising=False)
    with pytest.raises(ValueError, match="set RUMMY_STUDENT"):
        mb.agent()


def test_loose_and_plan_counts_the_overlap_the_loose_count_misses():
    needs("torch")
    lp = _module("issue25_loose_plan")
    from rummy_env.cards import parse_card
    from rummy_env.observation import offsets

    off = offsets(2)
    obs = np.zeros(548, dtype=np.float32)
    for t in ("5S", "6S", "7S", "7H", "7D", "KC"):  # run 5S-7S and set of 7s share the 7S (RULES.md §3)
        obs[parse_card(t)] = 1.0
    obs[off["rule_aces"].start] = 1.0  # aces low
    mask = np.zeros(579, dtype=np.int8)
    mask[2] = 1
    assert lp.loose_count(obs) == 1    # only the KC is in no set and no run window
    assert lp.plan_count(obs, mask) == 3  # the set goes down: 5S 6S KC stay
    same = lp.loose_and_plan("heuristic:cutting", hands=2)
    assert sum(same.values()) > 0 and not any(cls == "hold" for cls, _ in same)
    other = lp.loose_and_plan("greedy", hands=3)
    assert {side for _, side in other} <= {"agree", "differ"} and other


def test_the_plan_clone_config_is_the_stock_clone_with_the_plan_features():
    from rummy_env.train.config import TrainConfig, tomllib

    stock = tomllib.loads((ROOT / "issue25_card_stock_clone.toml").read_text())
    plan = tomllib.loads((ROOT / "issue25_card_plan_clone.toml").read_text())
    assert {k for k in set(stock) | set(plan) if stock.get(k) != plan.get(k)} == {"features", "seed", "out"}
    cfg = TrainConfig.from_dict(plan)
    assert (cfg.features, cfg.discard_head, cfg.warmstart_teacher) == ("cards+plan", "cards+stock", "heuristic:cutting")


def test_the_plan_big_clone_config_is_the_big_clone_with_the_plan_features():
    from rummy_env.train.config import TrainConfig, tomllib

    big = tomllib.loads((ROOT / "issue25_card_big_clone.toml").read_text())
    both = tomllib.loads((ROOT / "issue25_card_plan_big_clone.toml").read_text())
    assert {k for k in set(big) | set(both) if big.get(k) != both.get(k)} == {"features", "seed", "out"}
    assert TrainConfig.from_dict(both).features == "cards+plan"


def test_meld_bias_disagreements_never_put_cards_down_early_at_a_huge_bias(tmp_path):
    needs("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from rummy_env.single_agent import SingleAgentEnv

    zip_path = tmp_path / "student.zip"
    MaskablePPO("MlpPolicy", SingleAgentEnv(seed=0), seed=0, policy_kwargs=dict(net_arch=[8])).save(zip_path)
    mb = _module("issue25_meld_bias")
    huge = mb.disagreements(str(zip_path), bias=1e6, hands=2)
    assert huge["decisions"] > 10 and huge["puts down"] == 0  # where it may discard it never melds first
    assert set(huge) <= {"decisions", "puts down", "holds", "draw", "discard", "meld"}
    import os

    assert "RUMMY_MELD_BIAS" not in os.environ  # the agent's settings do not outlive the count


def test_guide_confidence_bands_count_each_decision_once_and_the_recorder_plays_legal_moves():
    needs("sb3_contrib")
    mod = _module("issue25_guide_confidence")
    recs = [(0.2, True), (0.5, False), (0.95, True), (0.95, False), (0.999, False), (1.0, True)]
    assert mod.bands(recs) == [("[0.0, 0.5)", 1, 1.0), ("[0.5, 0.9)", 1, 0.0), ("[0.9, 0.99)", 2, 0.5),
                               ("[0.99, 1.0)", 1, 0.0), ("1.0", 1, 1.0)]
    from rummy_env.eval.tournament import play_game

    agent = mod.Recorded(0, samples=2)
    play_game(Rules.preset("classic"), [agent, agent], seed=1)  # legal moves, or play_game raises
    assert agent.records and all(0 < p <= 1 for p, _ in agent.records)


def test_plan_rollouts_play_the_guides_own_logits_and_the_agent_plays_legal_moves(monkeypatch):
    """The plan clone as the rollout policy (session 32): the rollouts' forward pass (the
    guide's actor copied into an ``ActorNet``) gives the guide's own logits (``PPOAgent.logits``,
    what the guided search ranks its moves by, normalized as its ``Categorical`` normalizes
    them) on real observations; the agent plays legal moves, the very moves (and values) of the
    package's ``search:guide=pretrained,policy=guide,sure=0.99``."""
    needs("sb3_contrib")
    import torch

    from rummy_env import rummy_v0

    monkeypatch.syspath_prepend(str(ROOT))
    mod = _module("issue25_plan_rollouts")
    agent = mod.PlanRolloutSearch(0, samples=2, guide="pretrained", sure=0.99)
    env = rummy_v0.env()
    env.reset(seed=3)
    obs = []
    for _ in range(8):
        o, _, term, trunc, _ = env.last()
        obs.append(o["observation"])
        env.step(int(np.flatnonzero(o["action_mask"])[0]))
    batch = np.stack(obs).astype(np.float32)
    raw = torch.as_tensor(agent._rollout_guide.logits_batch(batch))
    got = torch.log_softmax(raw, dim=1).numpy()  # the guide's logits are its Categorical's: normalized
    want = np.stack([agent._guide.logits(x) for x in batch])
    # two float32 forward passes of one network (a batch, one position at a time): the sums'
    # order, picked by the CPU, moves the last bits of log-probabilities that reach |50|
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)
    # the package's search:guide=pretrained,policy=guide,sure=0.99 is the same agent: the same
    # moves, and the same values at the searched decisions
    from rummy_env.agents import make_agent

    agent = mod.make(5)
    built_in = make_agent("search:guide=pretrained,policy=guide,sure=0.99", seed=5)
    env.reset(seed=4)
    searched = 0
    for _ in range(14):
        o, _, term, trunc, _ = env.last()
        a = agent.act(o["observation"], o["action_mask"])
        assert o["action_mask"][a] == 1
        assert (built_in.act(o["observation"], o["action_mask"]), built_in.last_values) == (a, agent.last_values)
        searched += bool(agent.last_values)
        env.step(a)
    assert searched >= 1
