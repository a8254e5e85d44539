"""``rummy bench env`` runs and reports (a smoke test: no speed is asserted here;
performance is measured by ``rummy bench`` itself)."""
from __future__ import annotations

import json

import pytest

from extras import needs

from rummy_env.benchmark import speed as bench
from rummy_env.cli import main as rummy


def test_bench_env_runs_every_mode_and_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = rummy(["bench", "env", "--players", "2", "3", "--seconds", "0.02", "--repeats", "1",
                  "--no-peers", "--plain", "--json", str(out), "--modes", *bench.OUR_MODES])
    assert code == 0
    text = capsys.readouterr().out
    for mode in bench.OUR_MODES:
        assert bench.MODE_TITLES[mode] in text
    data = json.loads(out.read_text())
    got = {(r["mode"], r["players"]) for r in data["results"]}
    assert got == {(m, n) for m in bench.OUR_MODES for n in (2, 3)}
    for r in data["results"]:
        assert r["decisions_per_s"] > 0 and r["decisions_per_hand"] > 1
        assert r["rules"] == ("classic" if r["players"] == 2 else "turnover")



def test_ratio_rows_pair_ours_with_the_peers():
    rs = [bench.Result("raw_env", 2, "classic", 300.0, 1.0, 300.0),
          bench.Result("openspiel_gin_rummy", 2, "gin rummy", 100.0, 1.0, 100.0)]
    rows = bench.ratio_rows(rs)
    assert rows == [[bench.MODE_TITLES["raw_env"], bench.MODE_TITLES["openspiel_gin_rummy"], "3.00x"]]


def test_bench_rejects_a_preset_outside_its_player_range():
    with pytest.raises(ValueError, match="classic"):
        bench.rules_for("classic", 4)
    assert rummy(["bench", "env", "--rules", "classic", "--players", "4"]) == 2


@pytest.mark.parametrize("cmd", [["bench", "env", "--no-peers", "--seconds", "0.01", "--repeats", "1"],
                                 ["bench", "train", "--timesteps", "64"]])
def test_bench_json_path_is_checked_before_measuring(tmp_path, capsys, cmd):
    missing = tmp_path / "no_such_dir" / "b.json"
    assert rummy(cmd + ["--json", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "training" not in err
    assert rummy(cmd + ["--json", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert not missing.parent.exists()


def test_bench_agent_times_only_the_agents_own_decisions(capsys):
    from rummy_env.cli import main as rummy
    from rummy_env.benchmark.speed import time_agent

    r = time_agent("greedy", opponent="random", hands=1, seed=3)
    assert r["agent"] == "greedy" and r["decisions"] > 0
    assert 0 <= r["median_ms"] <= r["p95_ms"] <= r["max_ms"] and r["mean_ms"] <= r["max_ms"]
    with pytest.raises(ValueError, match="heads-up"):
        time_agent("greedy", rules={"preset": "turnover", "num_players": 3}, hands=1)
    assert rummy(["bench", "agent", "--agents", "greedy", "--hands", "1"]) == 0
    assert "time per decision" in capsys.readouterr().out
    long = "search:samples=1,depth=1,margin=0,halving=0,infer=1"  # 51 characters: wider than the column's 28
    assert rummy(["bench", "agent", "--agents", long, "greedy", "--hands", "1"]) == 0
    head, first, second = capsys.readouterr().out.splitlines()[1:4]
    assert first.startswith(long + " ") and second.startswith("greedy" + " " * (len(long) - 5))
    assert len(head) == len(first) == len(second)  # the columns line up
    assert rummy(["bench", "agent", "--hands", "0"]) == 2
    assert "--hands must be an int >= 1" in capsys.readouterr().err


def _stat(ct, callers=None):
    """A ``pstats`` entry: (calls, primitive calls, self s, cumulative s, {caller: (.., .., self, cum)})."""
    return (1, 1, 0.0, ct, {k: (1, 1, 0.0, v) for k, v in (callers or {}).items()})


def test_profile_groups_count_each_call_once_with_its_caller():
    """A hand-made profile: the advance loop calls a scripted agent (5 s, of which 1 s in
    the observation's PlayerView and 2 s in melds), the encoder (3 s, of which 0.5 s in
    engine.legal_actions), engine.apply (4 s, 1 s of it in melds) and a snapshot (6 s)."""
    needs("sb3_contrib")
    from rummy_env.benchmark.speed_train import env_groups

    adv = ("/x/rummy_env/train/vec_env.py", 108, "_advance")
    act = ("/x/rummy_env/agents/scripted.py", 200, "act")
    view = ("/x/rummy_env/observation.py", 341, "__init__")
    melds_in = ("/x/rummy_env/melds.py", 10, "melds_in")
    enc = ("/x/rummy_env/observation.py", 197, "encode")
    legal = ("/x/rummy_env/engine.py", 256, "legal_actions")
    apply_ = ("/x/rummy_env/engine.py", 300, "apply")
    snap = ("/x/rummy_env/train/pool.py", 109, "act_batch")
    rand = ("/x/rummy_env/observation.py", 500, "act")  # the random agent: scripted
    stats = {
        adv: _stat(21.5),
        act: _stat(5.0, {adv: 5.0}),
        view: _stat(1.0, {act: 1.0}),
        melds_in: _stat(3.0, {act: 2.0, apply_: 1.0}),
        enc: _stat(3.0, {adv: 3.0}),
        legal: _stat(0.5, {enc: 0.5}),
        apply_: _stat(4.0, {adv: 4.0}),
        snap: _stat(6.0, {adv: 6.0}),
        rand: _stat(0.5, {adv: 0.5}),
    }
    assert env_groups(stats) == pytest.approx(
        {"engine": 4.0, "observation": 3.0, "opponent_inference": 6.0, "scripted": 5.5})


def test_bench_train_profile_reports_every_group_and_they_add_up(tmp_path, capsys):
    """A tiny real run (snapshots, scripted opponents, 2 evaluations) with 1 and 2 workers:
    every group is reported, none is negative, the groups cover the wall time, and the
    parts the run certainly did take time."""
    needs("sb3_contrib")
    from rummy_env.benchmark.speed_train import PROFILE_GROUPS

    out = tmp_path / "profile.json"
    code = rummy(["bench", "train", "--profile", "--timesteps", "2048", "--workers", "1", "2", "--n-envs", "16",
                  "--set", "n_steps=64", "--set", "batch_size=512", "--set", "eval_deals=1",
                  "--set", 'eval_baselines=["random"]', "--json", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert [r["workers"] for r in rows] == [1, 2]
    for r in rows:
        assert list(r["shares"]) == list(PROFILE_GROUPS)
        assert all(v >= 0 for v in r["seconds"].values()), r["seconds"]
        assert r["accounted"] == pytest.approx(1.0, abs=0.08)
        assert r["evaluations"] == 3 and r["timesteps"] == 2048  # at 0 (before PPO), 1024 and 2048
        for g in ("engine", "observation", "learner_inference", "opponent_inference", "scripted", "ppo_update",
                  "evaluation"):
            assert r["seconds"][g] > 0, g
    # one worker: no inter-process transfer by definition; two: the learner's wait beyond the
    # busiest worker's busy time (0 when it waits no longer; the workers' start-up is not profiled)
    assert rows[0]["seconds"]["transfer"] == 0 and rows[1]["seconds"]["transfer"] >= 0
    assert len(rows[1]["worker_busy_s"]) == 2 and min(rows[1]["worker_busy_s"]) > 0
    for g in PROFILE_GROUPS:
        assert f"| {g} | " in text


def test_bench_train_full_pool_starts_with_every_snapshot_slot_taken(tmp_path):
    """Issue 26 item 1: ``--full-pool`` measures a long run's steady state, the pool full
    (``max_snapshots`` distinct snapshots) from the first step; a tiny run, one worker and two."""
    needs("sb3_contrib")
    out = tmp_path / "pool.json"
    code = rummy(["bench", "train", "--full-pool", "--timesteps", "1024", "--workers", "1", "2", "--n-envs", "16",
                  "--set", "n_steps=64", "--set", "batch_size=512", "--set", "max_snapshots=3", "--json", str(out)])
    assert code == 0
    rows = json.loads(out.read_text())
    assert [r["workers"] for r in rows] == [1, 2]
    for r in rows:
        assert r["full_pool"] and r["snapshots"] and r["timesteps"] == 1024
        assert r["pool_size"] == 3  # max_snapshots: full from the start, none added past it
        assert r["opponent_decisions"] > 0


def test_bench_train_profile_with_full_pool_profiles_a_full_pool(tmp_path):
    """``--profile --full-pool``: the profiled run's pool is full from the start too (the
    option is not ignored), and the groups still cover the wall time."""
    needs("sb3_contrib")
    out = tmp_path / "profile.json"
    code = rummy(["bench", "train", "--profile", "--full-pool", "--timesteps", "1024", "--workers", "2",
                  "--n-envs", "16", "--set", "n_steps=64", "--set", "batch_size=512", "--set", "max_snapshots=3",
                  "--set", "eval_every=0", "--json", str(out)])
    assert code == 0
    (r,) = json.loads(out.read_text())
    assert r["full_pool"] and r["pool_size"] == 3 and r["timesteps"] == 1024
    assert r["accounted"] == pytest.approx(1.0, abs=0.08)
    assert r["seconds"]["opponent_inference"] > 0
