"""The duplicate-deal tournament (eval/): interval arithmetic, seat rotation, worker
independence, ratings, errors and the ``rummy eval`` command."""
from __future__ import annotations

import argparse
import json
import math

import pytest

from extras import needs

from rummy_env.eval import cli as eval_cli
from rummy_env.eval.tournament import (
    bradley_terry_elo,
    deal_seed,
    evaluate,
    make_tables,
    mean_interval,
    openskill_ratings,
    play_games,
    run_tournament,
    seating,
    wilson_interval,
)
from rummy_env import Rules, engine


def test_wilson_interval_by_hand():
    # 8 of 10, z = 1.96: centre (0.8 + 1.96^2/20) / (1 + 1.96^2/10) = 0.99208 / 1.38416 = 0.716738
    # margin 1.96 * sqrt(0.016 + 1.96^2/400) / 1.38416 = 1.96 * 0.160012 / 1.38416 = 0.226581
    lo, hi = wilson_interval(8, 10, z=1.96)
    assert lo == pytest.approx(0.716738 - 0.226581, abs=1e-5)
    assert hi == pytest.approx(0.716738 + 0.226581, abs=1e-5)
    # none of 0: the whole range; all of n: the upper end is 1
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(5, 5)[1] == 1.0


def test_mean_interval_by_hand():
    # 1..5: mean 3, s = sqrt(10/4) = 1.581139, half-width 1.96 * 1.581139 / sqrt(5) = 1.96 * 0.707107 = 1.385929
    m, lo, hi = mean_interval([1, 2, 3, 4, 5], z=1.96)
    assert m == 3
    assert lo == pytest.approx(3 - 1.385929, abs=1e-6) and hi == pytest.approx(3 + 1.385929, abs=1e-6)
    assert mean_interval([7]) == (7.0, 7.0, 7.0)
    assert all(math.isnan(x) for x in mean_interval([]))


def test_elo_fit_by_hand():
    # 3 wins to 1, no prior: strengths 3 : 1, so the gap is 400 log10 3 = 190.849
    r = bradley_terry_elo({(0, 1): (3.0, 1.0)}, 2, prior=0.0)
    assert r[0] - r[1] == pytest.approx(400 * math.log10(3), abs=1e-4)
    assert (r[0] + r[1]) / 2 == pytest.approx(1500)
    assert bradley_terry_elo({(0, 1): (2.0, 2.0)}, 2) == pytest.approx([1500, 1500])


def test_openskill_winner_rises():
    needs("openskill")
    r = openskill_ratings([((0, 1, 2), (10.0, -4.0, -6.0))] * 3, 3)
    assert r[0]["mu"] > 25 > r[2]["mu"]
    assert r[1]["mu"] > r[2]["mu"]


def test_tables_and_seat_rotation():
    assert make_tables(2, 2) == [(0, 1)]
    assert make_tables(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert make_tables(2, 4) == [(0, 1, 0, 1)]
    assert len(make_tables(5, 3)) == 10
    assert seating((0, 1), 0) == [0, 1] and seating((0, 1), 1) == [1, 0]
    assert seating((0, 1, 2), 1) == [1, 2, 0] and seating((0, 1, 2), 2) == [2, 0, 1]
    with pytest.raises(ValueError, match="at least two agents"):
        make_tables(1, 2)


def test_duplicate_deals_rotate_seats_over_the_same_cards():
    rules = Rules.preset("turnover", num_players=3)
    recs = play_games(["heuristic", "greedy", "random"], [(0, 1, 2)], rules, deals=2, seed=5)
    assert [(g["deal"], g["rotation"]) for g in recs] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    for d in range(2):
        rots = [g for g in recs if g["deal"] == d]
        # every agent sits in every seat once per deal
        for seat in range(3):
            assert sorted(g["seats"][seat] for g in rots) == [0, 1, 2]
    # the deal itself does not depend on who sits where: same seed, same cards per seat
    a = engine.new_game(rules, seed=deal_seed(5, 0))
    b = engine.new_game(rules, seed=deal_seed(5, 0))
    assert a.hands == b.hands and a.stock == b.stock
    assert deal_seed(5, 0) != deal_seed(5, 1) != deal_seed(6, 0)


def test_same_seed_same_results_with_one_and_two_workers():
    one = run_tournament(["heuristic", "random", "greedy"], rules="classic", deals=5, seed=3, workers=1)
    two = run_tournament(["heuristic", "random", "greedy"], rules="classic", deals=5, seed=3, workers=2)
    assert one["records"] == two["records"]
    assert json.dumps(one["tables"]) == json.dumps(two["tables"])
    assert one["ratings"] == two["ratings"]
    other = run_tournament(["heuristic", "random", "greedy"], rules="classic", deals=5, seed=4, workers=1)
    assert other["records"] != one["records"]


def test_summary_counts_add_up():
    res = run_tournament(["greedy", "random"], rules="classic", deals=4, seed=0)
    tab = res["tables"][0]
    assert tab["games"] == 8
    g, r = tab["results"]
    voids = sum(1 for x in res["records"] if x["winner"] is None)
    assert g["games"] == r["games"] == 8
    assert g["wins"] + r["wins"] + voids == 8
    assert g["mean_points"] == pytest.approx(-r["mean_points"])  # zero-sum hands


def test_evaluate_for_training():
    out = evaluate("heuristic", "random", rules="classic", deals=5, seed=1)
    assert set(out) >= {"win_rate", "win_ci", "mean_points", "points_ci", "games", "opponent_win_rate"}
    assert out["games"] == 10
    assert out["win_ci"][0] <= out["win_rate"] <= out["win_ci"][1]
    assert out["win_rate"] >= 0.8
    # a policy object works too, and 4-player tables seat it against three copies
    from rummy_env.agents import GreedyAgent

    out4 = evaluate(GreedyAgent(0), "random", rules="turnover", players=4, deals=2, seed=0)
    assert out4["games"] == 8


def test_bad_agents_raise_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown agent 'nobody'.*allowed names"):
        run_tournament(["heuristic", "nobody"], deals=1)
    with pytest.raises(ValueError, match="not found"):
        evaluate(f"ppo:{tmp_path}/missing.zip", "random", deals=1)
    with pytest.raises(ValueError, match="deals must be"):
        run_tournament(["heuristic", "random"], deals=0)
    with pytest.raises(ValueError, match="act"):
        run_tournament(["heuristic", object()], deals=1)


def _args(**kw):
    p = argparse.ArgumentParser()
    eval_cli.add_arguments(p)
    argv = []
    for k, v in kw.items():
        flag = "--" + k
        if v is True:
            argv.append(flag)
        elif isinstance(v, list):
            argv += [flag, *v]
        else:
            argv += [flag, str(v)]
    return p.parse_args(argv)


def test_cli_writes_csv_json_png(tmp_path, capsys):
    needs("openskill")
    needs("matplotlib")
    out = tmp_path / "res"
    rc = eval_cli.main(_args(agents=["heuristic", "greedy", "random"], rules="classic", deals=3, seed=0,
                             out=str(out), quiet=True))
    assert rc == 0
    text = capsys.readouterr().out
    assert "heuristic vs greedy" in text and "Elo" in text
    for f in ("summary.csv", "games.csv", "results.json", "win_rates.png"):
        assert (out / f).stat().st_size > 0
    data = json.loads((out / "results.json").read_text())
    assert data["settings"]["deals"] == 3 and len(data["tables"]) == 3
    assert len((out / "games.csv").read_text().strip().splitlines()) == 1 + 3 * 3 * 2


def test_cli_tables_and_matches(capsys):
    needs("openskill")
    rc = eval_cli.main(_args(agents=["heuristic", "greedy"], rules="turnover", players=4, deals=1, quiet=True))
    assert rc == 0 and "OpenSkill" in capsys.readouterr().out
    rc = eval_cli.main(_args(agents=["greedy", "random"], rules="classic", deals=1, matches=True, quiet=True))
    assert rc == 0 and "matches" in capsys.readouterr().out
    with pytest.raises(ValueError, match="single hand"):
        eval_cli.main(_args(agents=["greedy", "random"], rules="practice", deals=1, matches=True, quiet=True))
    with pytest.raises(ValueError, match="unknown agent"):
        eval_cli.main(_args(agents=["greedy", "bogus"], deals=1, quiet=True))


def test_worker_processes_play_a_torch_policy_after_the_parent_used_torch_threads(tmp_path):
    # A forked worker must not wait on the parent's OpenMP threads: the parent runs a
    # multi-threaded op first, then two workers load and play a card-feature policy
    # (building its features fills tensors big enough to go parallel). Same records
    # as one process; SIGALRM turns a hang into a failure.
    import signal

    torch = needs("torch")
    needs("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from rummy_env import SingleAgentEnv
    from rummy_env.train.features import CardFeatures

    torch.set_num_threads(2)
    (torch.rand(512, 512) @ torch.rand(512, 512)).sum().item()
    env = SingleAgentEnv(rules="classic", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu",
                        policy_kwargs=dict(features_extractor_class=CardFeatures,
                                           features_extractor_kwargs=dict(cards=True, trunk=16), net_arch=[16]))
    path = tmp_path / "p.zip"
    model.save(path)

    def hang(signum, frame):  # noqa: ARG001
        raise TimeoutError("workers hung")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(120)
    try:
        two = evaluate(f"ppo:{path}", "greedy", Rules.preset("classic"), deals=4, seed=1, workers=2)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    one = evaluate(f"ppo:{path}", "greedy", Rules.preset("classic"), deals=4, seed=1, workers=1)
    assert two["games"] == 8 and two["win_rate"] == one["win_rate"] and two["mean_points"] == one["mean_points"]


def test_evaluate_reports_progress_by_chunks_of_deals():
    # rummy train's final evaluation prints from this callback, so it is never silent for
    # long: every deal is counted once, in chunks (eval.tournament._chunks), whatever the workers
    got = []
    r = evaluate("greedy", "random", rules="classic", deals=20, seed=1, matches=False, progress=got.append)
    assert sum(got) == 20 and len(got) > 1 and r["games"] == 40


def test_summary_durations_and_piped_tables_stay_readable(monkeypatch, capsys):
    """A summary line never says ``0.0 s`` (a few fast games: two significant digits below
    a second), and a table piped or redirected is drawn at least 200 columns wide (rich
    alone would cut it at 80), wider when ``COLUMNS`` says so."""
    from rummy_env.eval.cli import _seconds, output_console

    assert (_seconds(0.0341), _seconds(0.5), _seconds(1.0), _seconds(322.44)) == ("0.034 s", "0.5 s", "1.0 s", "322.4 s")
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    monkeypatch.delenv("COLUMNS", raising=False)
    assert output_console().width == 200
    monkeypatch.setenv("COLUMNS", "250")
    assert output_console().width == 250
    monkeypatch.setenv("COLUMNS", "90")
    assert output_console().width == 200
