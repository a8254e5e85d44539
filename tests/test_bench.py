"""``rummy bench env`` runs and reports (a smoke test: no speed is asserted here;
performance is measured by ``rummy bench`` itself)."""
from __future__ import annotations

import json

import pytest

from rummy_env.eval import bench
from rummy_env.cli import main as rummy


def test_bench_env_runs_every_mode_and_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = rummy(["bench", "env", "--players", "2", "3", "--seconds", "0.02", "--repeats", "1",
                  "--no-peers", "--plain", "--json", str(out)])
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
    from rummy_env.eval.bench import time_agent

    r = time_agent("greedy", opponent="random", hands=1, seed=3)
    assert r["agent"] == "greedy" and r["decisions"] > 0
    assert 0 <= r["median_ms"] <= r["p95_ms"] <= r["max_ms"] and r["mean_ms"] <= r["max_ms"]
    with pytest.raises(ValueError, match="heads-up"):
        time_agent("greedy", rules={"preset": "turnover", "num_players": 3}, hands=1)
    assert rummy(["bench", "agent", "--agents", "greedy", "--hands", "1"]) == 0
    assert "time per decision" in capsys.readouterr().out
    assert rummy(["bench", "agent", "--hands", "0"]) == 2
    assert "--hands must be an int >= 1" in capsys.readouterr().err
