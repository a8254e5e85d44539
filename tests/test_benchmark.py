"""The benchmark (rummy_env.benchmark, docs/leaderboard.md): frozen tasks, the protocol's
seeds and seat rotations, the row schema, IQM and bootstrap arithmetic, ratings,
MODULE:ATTR agents, and the commands."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rummy_env.benchmark import protocol
from rummy_env.benchmark.tasks import FINGERPRINTS, TASKS, get_task
from rummy_env.cli import main as rummy
from rummy_env.eval import tournament
from rummy_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]

import importlib.util  # noqa: E402

needs_rliable = pytest.mark.skipif(
    importlib.util.find_spec("rliable") is None or importlib.util.find_spec("arch") is None,
    reason="needs the benchmark extra (rliable, arch): pip install -e '.[benchmark]'")
needs_torch = pytest.mark.skipif(importlib.util.find_spec("sb3_contrib") is None,
                                 reason="needs the train extra (torch, sb3-contrib): pip install -e '.[train]'")

OUTSIDE = textwrap.dedent('''
    """An outside agent: not part of rummy-env."""
    import numpy as np


    class LowestLegal:
        def __init__(self, seed=None):
            self.seed_given = seed

        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask)[0])


    agent = LowestLegal()


    def factory(seed):
        return LowestLegal(seed)


    def broken(seed):
        raise RuntimeError("no weights here")


    def returns_int(seed):
        return 7


    NOT_AN_AGENT = 42
''')


@pytest.fixture()
def outside(tmp_path, monkeypatch):
    d = tmp_path / "outside"
    d.mkdir()
    (d / "my_bench_agents.py").write_text(OUTSIDE)
    monkeypatch.syspath_prepend(str(d))
    sys.modules.pop("my_bench_agents", None)
    yield d
    sys.modules.pop("my_bench_agents", None)


# ---------------------------------------------------------------- tasks are frozen

def test_every_task_has_its_published_fingerprint():
    # a task whose content changes under the same id fails here: publish a new version
    assert set(FINGERPRINTS) == set(TASKS)
    for tid, task in TASKS.items():
        assert task.fingerprint() == FINGERPRINTS[tid], f"task {tid} changed: give it a new version"


@pytest.mark.parametrize("change", [dict(match_seeds=99), dict(protocol_seed=1), dict(anchors=("random",)),
                                    dict(budgets={"250k": 250_001, "2M": 2_000_000})])
def test_a_changed_task_no_longer_matches_its_fingerprint(change):
    t = dataclasses.replace(TASKS["classic-2p-v1"], **change)
    assert t.fingerprint() != FINGERPRINTS["classic-2p-v1"]


def test_a_changed_rule_changes_the_fingerprint():
    t = TASKS["classic-2p-v1"]
    t2 = dataclasses.replace(t, rules=dict(t.rules, aces="either"))
    assert t2.fingerprint() != t.fingerprint()


def test_task_ids_versions_and_rules_written_out():
    assert len(TASKS) >= 3
    for tid, t in TASKS.items():
        name, v = tid.rsplit("-v", 1)
        assert t.name == name and t.version == int(v) >= 1
        # every option of RULES.md §8 written out, and the preset rebuilt from them
        assert set(t.rules) == {"preset", *Rules.preset(t.rules["preset"]).options()}
        overrides = {"short-2p-v1": dict(hand_size=7, target=50)}.get(tid, {})  # the easy rung's deal and target
        assert t.make_rules() == Rules.make(t.rules["preset"], num_players=t.players, **overrides)
        assert t.make_rules().target is not None  # matches to the target
        assert "random" in t.anchors and "heuristic" in t.anchors
    c = get_task("classic-2p-v1")
    assert c.players == 2 and c.rotations == 2 and c.rules["target"] == 100
    assert c.anchors == ("random", "greedy", "heuristic", "search:samples=16")
    assert get_task("turnover-4p-v1").rotations == 4


def test_unknown_task_names_the_tasks_and_versions():
    with pytest.raises(ValueError, match=r"unknown task 'classic-2p-v9' \(versions of classic-2p: classic-2p-v1, classic-2p-v2\)"):
        get_task("classic-2p-v9")
    with pytest.raises(ValueError, match="tasks: classic-2p-v1, rum500-2p-v1, turnover-4p-v1"):
        get_task("chess")
    with pytest.raises(ValueError, match=r"budgets: 250k \(250,000 steps\), 2M \(2,000,000 steps\)"):
        TASKS["classic-2p-v1"].budget("1M")


# ---------------------------------------------------------------- the protocol's seeds and rotations

def test_match_seeds_are_the_published_list():
    t = TASKS["classic-2p-v1"]
    seeds = t.seeds()
    assert len(seeds) == 100 == len(set(seeds))
    assert seeds == [tournament.deal_seed(20261201, i) for i in range(100)]
    # the first two, written out (a change to deal_seed would change every task)
    assert seeds[:2] == [6466997712261723829, 8474108011611869667]


@pytest.mark.parametrize("tid, n", [("classic-2p-v1", 2), ("turnover-4p-v1", 4)])
def test_protocol_plays_every_seed_in_every_rotation(monkeypatch, tid, n):
    task = TASKS[tid]
    calls = []
    real = tournament.play_game

    def spy(rules, agents, seed, matches=False, encoder=None):
        calls.append((seed, [type(a).__name__ for a in agents], matches))
        return real(rules, agents, seed, matches=matches, encoder=encoder)

    monkeypatch.setattr(tournament, "play_game", spy)
    res = protocol.play_protocol(task, "random", match_seeds=2, workers=1, anchors=["greedy"])
    seeds = task.seeds()[:2]
    assert [c[0] for c in calls] == [s for s in seeds for _ in range(n)]
    assert all(c[2] for c in calls)  # whole matches
    # the agent (RandomAgent) takes each seat once per seed, the anchor (GreedyAgent) the others
    for k in range(2):
        seatings = [c[1] for c in calls[k * n:(k + 1) * n]]
        assert sorted(s.index("RandomAgent") for s in seatings) == list(range(n))
        assert all(s.count("GreedyAgent") == n - 1 for s in seatings)
    assert res["greedy"]["matches"] == 2 * n


def test_opponent_stats_are_the_swapped_evaluation_of_the_same_games():
    # greedy and heuristic choose without randomness: the swapped evaluation plays the same
    # games, so the mirrored result must be it exactly
    a = tournament.evaluate("greedy", "heuristic", deals=2, opponent_stats=True)
    b = tournament.evaluate("heuristic", "greedy", deals=2)
    mirrored = a["opponent"]
    for k in ("wins", "games", "hand_wins", "hands", "points_per_hand", "points_ci", "hand_win_rate",
              "match_win_rate", "match_win_ci", "opponent_win_rate", "mode"):
        assert mirrored[k] == b[k], k
    assert mirrored["wins"] + a["wins"] == a["games"]  # no split matches in these two
    assert mirrored["points_per_hand"] == pytest.approx(-a["points_per_hand"])  # zero-sum hands
    with pytest.raises(ValueError, match="opponent_stats needs a heads-up table; this one has 3 players"):
        tournament.evaluate("greedy", "heuristic", rules="turnover", players=3, deals=1, opponent_stats=True)


def test_anchors_play_each_heads_up_pair_once_and_write_both_rows(tmp_path, monkeypatch, capsys):
    task = dataclasses.replace(TASKS["classic-2p-v1"], anchors=("random", "greedy", "heuristic"))
    monkeypatch.setitem(TASKS, "classic-2p-v1", task)
    monkeypatch.setattr(task.__class__, "fingerprint", lambda self: "test")
    played = []
    real = tournament.evaluate

    def spy(a, b, **kw):
        played.append((a, b))
        return real(a, b, **kw)

    monkeypatch.setattr(tournament, "evaluate", spy)
    out = tmp_path / "anchors"
    assert rummy(["benchmark", "anchors", "--task", "classic-2p-v1", "--match-seeds", "2", "--workers", "1",
                  "--out", str(out)]) == 0
    assert played == [("random", "greedy"), ("random", "heuristic"), ("greedy", "heuristic")]
    cross = json.loads((out / "anchors.json").read_text())["crosstable"]
    for a in task.anchors:
        assert list(cross[a]) == [b for b in task.anchors if b != a]  # every other anchor, in the task's order
        for b in cross[a]:  # 2 seeds x 2 rotations; one side's wins are the other's losses (splits aside)
            assert cross[a][b]["games"] == 4 and cross[a][b]["wins"] + cross[b][a]["wins"] == 4
    greedy = json.loads((out / "greedy" / "row.json").read_text())
    assert set(greedy["results"]) == {"random", "heuristic"}
    assert greedy["results"]["heuristic"]["match_win_rate"] == cross["greedy"]["heuristic"]["wins"] / 4


def test_protocol_refuses_bad_seed_counts_and_anchors():
    t = TASKS["classic-2p-v1"]
    for bad in (0, 101, True, 2.0):
        with pytest.raises(ValueError, match=r"match_seeds must be an int in 1\.\.100"):
            protocol.play_protocol(t, "random", match_seeds=bad)
    with pytest.raises(ValueError, match="not among task classic-2p-v1's anchors"):
        protocol.play_protocol(t, "random", match_seeds=1, anchors=["pretrained"])


# ---------------------------------------------------------------- ratings

def test_rating_two_agents_by_hand():
    # 3 of 4 matches against random, nothing else: Bradley-Terry with 0.5 virtual wins a side
    res = {"random": {"match_win_rate": 0.75, "matches": 4}}
    r = protocol.crosstable_rating("me", res, {}, players=2)
    assert r["value"] == pytest.approx(400 * math.log10(3.5 / 1.5), abs=0.05)
    assert r["anchors"]["random"] == 0.0 and r["zero"] == "random"


def test_rating_uses_the_anchor_crosstable():
    # me beats greedy 1 of 2 (so level with greedy); greedy beats random 2 of 2
    res = {"greedy": {"match_win_rate": 0.5, "matches": 2}}
    table = {"greedy": {"random": {"wins": 2, "games": 2}}}
    r = protocol.crosstable_rating("me", res, table, players=2)
    # greedy over random: 2.5 : 0.5 -> 400 log10 5; me level with greedy (1.5 : 1.5)
    assert r["anchors"]["greedy"] == pytest.approx(r["value"], abs=1.0)
    assert r["anchors"]["greedy"] > 150 and r["anchors"]["random"] == 0.0


def test_rating_is_zero_at_heuristic():
    # me beats heuristic 3 of 4, heuristic beats random 4 of 4; heuristic is the zero
    res = {"heuristic": {"match_win_rate": 0.75, "matches": 4}, "random": {"match_win_rate": 1.0, "matches": 4}}
    table = {"heuristic": {"random": {"wins": 4, "games": 4}}}
    r = protocol.crosstable_rating("me", res, table, players=2)
    assert r["zero"] == "heuristic" and r["anchors"]["heuristic"] == 0.0
    assert r["value"] > 0 > r["anchors"]["random"]


def test_rating_at_four_players_counts_one_anchor_seat():
    # 1 of 4 matches at a 4-player table is the fair share: level with the anchor
    res = {"random": {"match_win_rate": 0.25, "matches": 4}}
    r = protocol.crosstable_rating("me", res, {}, players=4)
    assert r["value"] == pytest.approx(0.0, abs=0.05)


# ---------------------------------------------------------------- the row schema

def _fake_results(task, rate=0.6, match_seeds=None):
    # numbers that agree with each other as the row checks require: whole wins, Wilson intervals
    n = (task.match_seeds if match_seeds is None else match_seeds) * task.rotations
    wins = round(rate * n * 2) / 2
    hands = 9 * n // 2
    out = {}
    for a in task.anchors:
        out[a] = {"matches": n, "match_win_rate": wins / n, "match_win_ci": list(tournament.wilson_interval(wins, n)),
                  "points_per_hand": 1.5, "points_ci": [0.5, 2.5], "hands": hands,
                  "hand_win_rate": round(0.51 * hands) / hands,
                  "hand_win_ci": list(tournament.wilson_interval(round(0.51 * hands), hands)), "wins": wins,
                  "games": n}
    return out


def test_row_round_trips_and_says_when_it_is_not_the_protocols(tmp_path):
    t = TASKS["classic-2p-v1"]
    row = protocol.make_row(t, "my_agents:agent", "mine", _fake_results(t), match_seeds=100, workers=2,
                            eval_wall_s=12.3, command="rummy benchmark eval ...",
                            training={"budget": 250_000, "timesteps": 253_952, "seed": 3, "wall_time_s": 90.0,
                                      "curve": [{"timesteps": 50_000, "wall_time_s": 20.0, "match_win_rate": 0.2,
                                                 "points_per_hand": -3.0}]})
    assert row["protocol_complete"] and row["deviations"] == []
    assert row["task"]["fingerprint"] == FINGERPRINTS["classic-2p-v1"]
    assert row["engine"]["package"] == "rummy-env" and row["engine"]["env"] == "rummy_v0"
    assert row["evaluation"]["matches_per_anchor"] == 200
    p = protocol.save_row(row, tmp_path / "r")
    assert protocol.load_row(p) == json.loads(json.dumps(row)) == protocol.load_row(tmp_path / "r")
    short = protocol.make_row(t, "random", "random", _fake_results(t, match_seeds=5), match_seeds=5, workers=1,
                              eval_wall_s=1.0, command="x")
    assert not short["protocol_complete"]
    assert short["deviations"] == ["5 of the protocol's 100 match seeds per anchor"]


@pytest.mark.parametrize("edit, needle", [
    (lambda r: r.pop("results"), "results: missing"),
    (lambda r: r.update(format="other/1"), "format must be 'rummy-benchmark-row/1'"),
    (lambda r: r["results"]["random"].pop("points_ci"), "results['random'].points_ci: missing"),
    (lambda r: r["results"]["random"].update(match_win_rate=1.5),
     "results['random'].match_win_rate: Input should be less than or equal to 1, got 1.5"),
    (lambda r: r.update(protocol_complete=True, deviations=["x"]), "protocol_complete must be true exactly"),
    (lambda r: r["rating"].update(value="high"), "rating.value: Input should be a valid number, got 'high'"),
])
def test_bad_rows_are_refused_naming_the_field(tmp_path, edit, needle):
    t = TASKS["classic-2p-v1"]
    row = protocol.make_row(t, "random", "random", _fake_results(t), match_seeds=100, workers=1, eval_wall_s=1.0,
                            command="x")
    edit(row)
    with pytest.raises(ValueError, match=f"not a benchmark row: {__import__('re').escape(needle)}"):
        protocol.validate_row(row)
    (tmp_path / "row.json").write_text(json.dumps(row))
    with pytest.raises(ValueError, match="row.json: not a benchmark row"):
        protocol.load_row(tmp_path)


def test_load_row_errors(tmp_path):
    with pytest.raises(ValueError, match="no benchmark row at"):
        protocol.load_row(tmp_path / "nothing")
    (tmp_path / "row.json").write_text("{not json")
    with pytest.raises(ValueError, match="is not JSON"):
        protocol.load_row(tmp_path)


# ---------------------------------------------------------------- IQM and bootstrap

@needs_rliable
def test_iqm_by_hand():
    from rummy_env.benchmark.report import iqm

    assert iqm([0.1, 0.2, 0.3, 0.4, 1.0]) == pytest.approx(0.3)  # one cut from each end of five
    assert iqm([1, 2, 3, 4, 5, 6, 7, 8]) == pytest.approx(4.5)  # two cut from each end: mean of 3..6
    assert iqm([0.9]) == pytest.approx(0.9)
    with pytest.raises(ValueError):
        iqm([])


@needs_rliable
def test_bootstrap_interval_by_hand():
    from rummy_env.benchmark.report import iqm_interval

    # identical runs: no spread
    assert iqm_interval([0.4] * 5, reps=500) == pytest.approx((0.4, 0.4, 0.4))
    # two runs 0 and 1: a resample is {0,0}, {0,1} or {1,1} (means 0, .5, 1 with p .25, .5, .25),
    # so the 2.5% and 97.5% percentiles are 0 and 1
    point, lo, hi = iqm_interval([0.0, 1.0], reps=4000, seed=1)
    assert (point, lo, hi) == pytest.approx((0.5, 0.0, 1.0))
    # seeded: the same interval twice
    assert iqm_interval([0.1, 0.5, 0.2, 0.9, 0.4], seed=7) == iqm_interval([0.1, 0.5, 0.2, 0.9, 0.4], seed=7)


@needs_rliable
def test_report_aggregates_seeds_as_iqm(tmp_path):
    t = TASKS["classic-2p-v1"]
    rates = [0.30, 0.40, 0.50, 0.60, 0.90]
    for s, rate in enumerate(rates):
        row = protocol.make_row(
            t, f"ppo:run{s}", f"algo (seed {s})", _fake_results(t, rate), match_seeds=100, workers=2, eval_wall_s=60,
            command=f"rummy benchmark train --seed {s}", algorithm={"name": "algo", "library": "lib",
                                                                   "library_version": "1"},
            training={"budget": 250_000, "timesteps": 250_000, "seed": s, "wall_time_s": 100.0 + s, "curve": []})
        protocol.save_row(row, tmp_path / "rows" / f"s{s}")
    smoke = protocol.make_row(t, "x", "smoke", _fake_results(t, 0.99, match_seeds=3), match_seeds=3, workers=1,
                              eval_wall_s=1, command="smoke", algorithm={"name": "algo"},
                              training={"budget": 250_000, "timesteps": 9, "seed": 9, "wall_time_s": 1, "curve": []})
    protocol.save_row(smoke, tmp_path / "rows" / "smoke")
    assert rummy(["benchmark", "report", str(tmp_path / "rows"), "--out", str(tmp_path / "lb"), "--reps", "500"]) == 0
    page = (tmp_path / "lb" / "leaderboard.md").read_text()
    line = next(ln for ln in page.splitlines() if ln.startswith("| `algo`"))
    assert "| 5 |" in line  # the smoke row is not aggregated
    assert "**50.0%**" in line  # IQM of .3 .4 .5 .6 .9 = mean(.4, .5, .6)
    assert "smoke: 3 of the protocol's 100 match seeds" in page
    assert "How to submit a row" in page


# ---------------------------------------------------------------- MODULE:ATTR agents

def test_module_attr_specs_load(outside):
    from rummy_env.agents import make_agent

    a = make_agent("my_bench_agents:agent")
    assert type(a).__name__ == "LowestLegal"
    assert make_agent("my_bench_agents:factory", seed=5).seed_given == 5
    assert make_agent("my_bench_agents:LowestLegal", seed=6).seed_given == 6


@pytest.mark.parametrize("spec, needle", [
    ("no_such_module_xyz:agent", "cannot import module 'no_such_module_xyz' (ModuleNotFoundError"),
    ("my_bench_agents:nope", "my_bench_agents has no attribute 'nope' (it has: LowestLegal, NOT_AN_AGENT, agent"),
    ("my_bench_agents:NOT_AN_AGENT", "NOT_AN_AGENT is a int, neither an agent"),
    ("my_bench_agents:broken", "calling broken(None) raised RuntimeError: no weights here"),
    ("my_bench_agents:returns_int", "returns_int(None) returned a int, which has no act("),
    ("my bench:agent", "an outside agent is written MODULE:ATTR"),
    ("my_bench_agents:", "an outside agent is written MODULE:ATTR"),
])
def test_bad_module_attr_specs_say_what_is_wrong(outside, spec, needle):
    from rummy_env.agents import make_agent

    with pytest.raises(ValueError) as e:
        make_agent(spec)
    assert needle in str(e.value)


@needs_torch
def test_pretrained_preset_names():
    from rummy_env.agents import make_agent

    assert type(make_agent("pretrained:classic")).__name__ == "PPOAgent"
    with pytest.raises(ValueError, match="no policy is shipped for the turnover table yet"):
        make_agent("pretrained:turnover")
    with pytest.raises(ValueError, match="unknown preset 'chess'; presets: classic"):
        make_agent("pretrained:chess")


def _run(args, outside_dir, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(outside_dir))
    return subprocess.run([sys.executable, "-m", "rummy_env.cli", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)


def test_outside_agent_in_rummy_eval_and_benchmark_eval(outside, tmp_path):
    # a module on PYTHONPATH, outside this repository, through the installed command
    p = _run(["eval", "--agents", "my_bench_agents:agent", "heuristic", "--deals", "1", "--quiet"], outside, tmp_path)
    assert p.returncode == 0, p.stderr
    assert "my_bench_agents:agent" in p.stdout
    out = tmp_path / "row"
    p = _run(["benchmark", "eval", "--task", "classic-2p-v1", "--agent", "my_bench_agents:agent", "--match-seeds", "1",
              "--workers", "1", "--algorithm", "lowest-legal", "--library", "mine==0.1", "--budget-steps", "250000",
              "--train-seed", "3", "--train-wall-s", "12", "--out", str(out)], outside, tmp_path)
    assert p.returncode == 0, p.stderr
    row = protocol.load_row(out / "row.json")
    assert row["agent"]["spec"] == "my_bench_agents:agent"
    assert set(row["results"]) == set(TASKS["classic-2p-v1"].anchors)
    assert not row["protocol_complete"]
    assert row["command"].startswith("rummy benchmark eval --task classic-2p-v1 --agent my_bench_agents:agent")
    assert row["algorithm"]["name"] == "lowest-legal" and row["algorithm"]["library"] == "mine==0.1"
    tr = row["training"]
    assert (tr["budget_name"], tr["budget"], tr["seed"], tr["wall_time_s"]) == ("250k", 250_000, 3, 12.0)


def test_evaluate_agent_takes_an_object():
    from rummy_env.benchmark import evaluate_agent
    from rummy_env.observation import RandomAgent

    row = evaluate_agent("classic-2p-v1", RandomAgent(), match_seeds=1, workers=1)
    assert row["agent"]["name"] == "RandomAgent" and row["results"]["heuristic"]["matches"] == 2


# ---------------------------------------------------------------- the commands

def test_benchmark_list(capsys):
    assert rummy(["benchmark", "list"]) == 0
    out = capsys.readouterr().out
    for tid in TASKS:
        assert tid in out
    assert rummy(["benchmark", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data] == list(TASKS)
    assert data[0]["match_seed_list"] == TASKS["classic-2p-v1"].seeds()


@pytest.mark.parametrize("args, needle", [
    (["eval", "--task", "nope-v1", "--agent", "random", "--out", "X"], "unknown task 'nope-v1'"),
    (["eval", "--task", "classic-2p-v1", "--agent", "nosuch:thing", "--out", "X"], "cannot import module 'nosuch'"),
    (["eval", "--task", "classic-2p-v1", "--agent", "random", "--match-seeds", "0", "--out", "X"],
     "--match-seeds must be an int >= 1"),
    (["train", "--task", "classic-2p-v1", "--algo", "sarsa", "--seed", "0", "--out", "X"],
     "unknown algorithm 'sarsa'; algorithms: ppo, ppo-warmstart, rllib-ppo, dqn"),
    (["train", "--task", "classic-2p-v1", "--algo", "ppo", "--seed", "-1", "--out", "X"], "--seed must be an int >= 0"),
    (["train", "--task", "classic-2p-v1", "--algo", "ppo", "--seed", "0", "--budget", "lots", "--out", "X"],
     "--budget must be one of task classic-2p-v1's budgets (250k, 2M)"),
    (["best-response", "--task", "classic-2p-v1", "--agent", "random", "--budget", "0", "--out", "X"],
     "--budget must be an int >= 1"),
    (["best-response", "--task", "classic-2p-v1", "--agent", "random", "--match-seeds", "101", "--out", "X"],
     "--match-seeds must be at most task classic-2p-v1's 100 match seeds, got 101"),
    (["eval", "--task", "classic-2p-v1", "--agent", "random", "--match-seeds", "101", "--out", "X"],
     "--match-seeds must be at most task classic-2p-v1's 100 match seeds"),
    (["train", "--task", "classic-2p-v1", "--algo", "ppo", "--seed", "0", "--match-seeds", "101", "--out", "X"],
     "--match-seeds must be at most task classic-2p-v1's 100 match seeds"),
    (["anchors", "--task", "classic-2p-v1", "--match-seeds", "101", "--out", "X"],
     "--match-seeds must be at most task classic-2p-v1's 100 match seeds"),
    (["best-response", "--task", "classic-2p-v1", "--agent", "pretrained:rum500", "--out", "X"],
     "cannot play task classic-2p-v1"),
    (["best-response", "--task", "classic-2p-v1", "--agent", "search:samples=1,guide=pretrained:rum500", "--out", "X"],
     "cannot play task classic-2p-v1"),
])
def test_benchmark_bad_input_is_refused_before_anything_is_written(tmp_path, capsys, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    assert rummy(["benchmark", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    assert not (tmp_path / "X").exists()


def test_every_benchmark_subcommand_has_help(capsys):
    for sub in ("list", "eval", "train", "anchors", "report", "best-response"):
        with pytest.raises(SystemExit) as e:
            rummy(["benchmark", sub, "--help"])
        assert e.value.code == 0
        assert "usage: rummy benchmark " + sub in capsys.readouterr().out


def test_shipped_rows_are_valid_and_protocol_complete():
    rows = sorted((ROOT / "benchmark" / "rows").rglob("*.json"))
    for p in rows:
        data = json.loads(p.read_text())
        if data.get("format", "").startswith("rummy-benchmark-best-response"):
            assert data["protocol_complete"]
            continue
        row = protocol.load_row(p)
        assert row["protocol_complete"], p
        assert row["task"]["fingerprint"] == FINGERPRINTS[row["task"]["id"]]


def test_outside_agent_in_rummy_play(outside, monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert rummy(["play", "--opponent", "my_bench_agents:agent", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "your hand:" in out and "you left the game" in out


def test_best_response_refuses_an_empty_out_and_a_folder_that_holds_a_run(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["benchmark", "best-response", "--task", "classic-2p-v1", "--agent", "random", "--budget", "600"]
    assert rummy(base + ["--out", ""]) == 2
    assert "--out needs a folder name, got an empty one" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    held = tmp_path / "br" / "run"
    held.mkdir(parents=True)
    (held / "final_model.zip").write_bytes(b"an earlier run")
    assert rummy(base + ["--out", str(tmp_path / "br")]) == 2
    assert f"{held} already holds a run; give a new --out folder" in capsys.readouterr().err
    assert (held / "final_model.zip").read_bytes() == b"an earlier run" and len(list(held.iterdir())) == 1
