"""Smoke runs of ``rummy benchmark train`` for every ``--algo`` and of ``best-response``
at tiny budgets: each trains, evaluates into a valid row that says it is not the
protocol's, and keeps its learning curve (docs/leaderboard.md)."""
from __future__ import annotations

import importlib.util
import json

import pytest

from rummy_env.benchmark import protocol
from rummy_env.benchmark.algos import ALGOS
from rummy_env.cli import main as rummy

pytest.importorskip("sb3_contrib", reason="needs the train extra: pip install -e '.[train]'")

NEEDS = {"rllib-ppo": ("ray.rllib", "the rllib extra: pip install -e '.[rllib]'"),
         "dqn": ("tianshou", "the benchmark extra: pip install -e '.[benchmark]'")}


# rllib-ppo: tests/test_rllib.py; plain ppo under -m slow (ppo-warmstart runs the same run_ppo, after a warm start)
@pytest.mark.parametrize("algo", [pytest.param(a, marks=pytest.mark.slow) if a == "ppo" else a
                                  for a in ALGOS if a != "rllib-ppo"])
def test_benchmark_train_smoke(tmp_path, capsys, algo):
    check_smoke_run(tmp_path, algo)


def check_smoke_run(tmp_path, algo):
    """A tiny ``rummy benchmark train`` of ``algo`` writes a valid row (also used by
    tests/test_rllib.py for rllib-ppo, inside its local Ray)."""
    if algo in NEEDS and importlib.util.find_spec(NEEDS[algo][0].split(".")[0]) is None:
        # find_spec, not importorskip: importing tianshou imports Ray, which must come after ray_environ
        pytest.skip(f"--algo {algo} needs {NEEDS[algo][1]}")
    out = tmp_path / algo
    budget = 512 if algo == "rllib-ppo" else 2048  # rllib: one 512-step iteration (Ray starts slowly)
    assert rummy(["benchmark", "train", "--task", "classic-2p-v1", "--algo", algo, "--seed", "1", "--budget",
                  str(budget), "--match-seeds", "1", "--anchors", "random", "greedy", "--workers", "1", "--quiet",
                  "--out", str(out)]) == 0
    row = protocol.load_row(out / "row.json")
    assert row["algorithm"]["name"] == algo and row["algorithm"]["library_version"]
    tr = row["training"]
    assert tr["seed"] == 1 and tr["budget"] == budget and tr["timesteps"] >= budget
    assert tr["curve"], "a learning curve point at least"
    assert all(0 <= p["match_win_rate"] <= 1 for p in tr["curve"])
    steps = [p["timesteps"] for p in tr["curve"]]
    assert steps == sorted(steps) and steps[-1] == tr["timesteps"]  # the last point: the trained agent
    assert not row["protocol_complete"]
    assert any("not a budget of the task" in d for d in row["deviations"])
    assert any("1 of the protocol's 100 match seeds" in d for d in row["deviations"])
    assert set(row["results"]) == {"random", "greedy"}
    assert "anchors not played: heuristic, search:samples=16" in row["deviations"]
    assert all(r["matches"] == 2 for r in row["results"].values())
    assert row["command"] == (f"rummy benchmark train --task classic-2p-v1 --algo {algo} --seed 1 --budget {budget} "
                              f"--match-seeds 1 --anchors random greedy --out {out}")
    if algo == "ppo-warmstart":
        assert tr["extra_env_steps"] == 2048 + 1024  # the warm start, capped by the budget
    # the trained agent plays again from its spec
    from rummy_env.agents import make_agent

    make_agent(row["agent"]["spec"])


def test_best_response_smoke(tmp_path, capsys):
    out = tmp_path / "br"
    assert rummy(["benchmark", "best-response", "--task", "classic-2p-v1", "--agent", "greedy", "--budget", "2048",
                  "--match-seeds", "2", "--workers", "1", "--quiet", "--out", str(out)]) == 0
    res = json.loads((out / "best_response.json").read_text())
    assert res["format"] == "rummy-benchmark-best-response/1"
    assert res["agent"] == "greedy" and res["budget"] == 2048 and res["timesteps"] >= 2048
    assert res["result"]["matches"] == 4 and not res["protocol_complete"]
    assert 0 <= res["result"]["match_win_rate"] <= 1
    assert "best response against greedy" in capsys.readouterr().out


def test_reference_ppo_keeps_the_published_rollout(tmp_path):
    # the reference rows of ppo / ppo-warmstart were trained with 64 games x 64 steps a
    # rollout; rummy train's default changed to 256 x 16 (the same 4,096 steps), and a
    # task's reproducing command must keep training what its rows were trained with
    from rummy_env.benchmark.algos import ppo_config
    from rummy_env.benchmark.tasks import get_task
    from rummy_env.train.config import TrainConfig

    task = get_task("classic-2p-v1")
    for warm in (False, True):
        cfg = ppo_config(task, 500_000, 0, tmp_path / "run", warm)
        assert (cfg.n_envs, cfg.n_steps) == (64, 64)
    assert (TrainConfig().n_envs, TrainConfig().n_steps) == (256, 16)
    assert ppo_config(task, 1_000, 0, tmp_path / "run", False).n_envs == 16  # a smoke test's own
