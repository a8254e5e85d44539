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
    # the warm start it ran, capped by the small budget (min(100k, 2048) decisions, one round of 1,024)
    assert res["procedure"] == ("MaskablePPO (rummy train's trainer) warm-started by cloning heuristic (2,048 "
                                "decisions + one DAgger round of 1,024), then 2,048 learner steps against the frozen "
                                "agent alone")


def test_reference_runs_train_what_their_published_rows_were_trained_with(tmp_path):
    # every published PPO-family row records its TrainConfig; the reproducing command
    # (ppo_config for the row's task, budget and seed) must give that config again, though
    # rummy train's defaults moved since (256 x 16 rollouts, precision "auto"). Keys added
    # after a row was made must take the value that behaves as before: precision float32,
    # no init_policy, no snapshot windows, the dense discard head.
    from pathlib import Path

    from rummy_env.benchmark.algos import ppo_config
    from rummy_env.benchmark.tasks import get_task

    added_since = {"precision": "float32", "init_policy": "", "snapshot_rotation": 0, "discard_head": "dense",
                   "warmstart_meld_weight": 1.0, "deadwood_shaping": 0.0}
    rows = sorted(Path(__file__).resolve().parents[1].glob("benchmark/rows/*/*.json"))
    checked = 0
    for path in rows:
        row = json.loads(path.read_text())
        train = row.get("training") or {}
        name = (row.get("algorithm") or {}).get("name", "")
        if name not in ("ppo", "ppo-warmstart", "rllib-ppo") or "config" not in train:
            continue
        cfg = ppo_config(get_task(path.parent.name), train["budget"], train["seed"], tmp_path / "run",
                         name == "ppo-warmstart").to_dict()
        recorded = {**added_since, **train["config"]}
        diff = {k: (recorded.get(k), cfg.get(k)) for k in set(recorded) | set(cfg)
                if k != "out" and recorded.get(k) != cfg.get(k)}
        assert not diff, f"{path.name}: (recorded, now) {diff}"
        checked += 1
    assert checked >= 15  # ppo, ppo-warmstart and rllib-ppo, 5 seeds each on classic-2p-v1


def test_best_response_shows_its_progress_unless_quiet(tmp_path, capsys):
    """The best response has no evaluations before its end: without ``--quiet`` the
    training's progress bar says how far it is (plain lines on a log file), with it
    nothing does."""
    common = ["benchmark", "best-response", "--task", "classic-2p-v1", "--agent", "random", "--budget", "600",
              "--match-seeds", "1", "--workers", "1"]
    assert rummy(common + ["--out", str(tmp_path / "loud")]) == 0
    assert "timesteps (whole rollouts of" in capsys.readouterr().err
    assert rummy(common + ["--quiet", "--out", str(tmp_path / "quiet")]) == 0
    assert "timesteps (whole rollouts of" not in capsys.readouterr().err
