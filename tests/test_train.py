"""Self-play training (issue 5): end to end, resume, reward attribution, opponent pool, bad checkpoints."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from extras import needs

needs("sb3_contrib")

from rummy_env import Rules, engine, state_json  # noqa: E402
from rummy_env.agents import RandomAgent  # noqa: E402
from rummy_env.train.config import TrainConfig  # noqa: E402
from rummy_env.train.pool import OpponentPool  # noqa: E402
from rummy_env.train.trainer import CheckpointError, Trainer, load_checkpoint  # noqa: E402
from rummy_env.train.vec_env import SelfPlayVecEnv  # noqa: E402


def tiny_config(out: Path, **kw) -> TrainConfig:
    base = dict(timesteps=256, out=str(out), n_envs=8, n_steps=16, batch_size=64, n_epochs=1, workers=1,
                net_arch=[32, 32], snapshot_every=128, eval_every=0, checkpoint_every=10_000,
                final_eval_deals=4, eval_deals=2, eval_baselines=["random"], progress=False,
                warmstart_decisions=500, warmstart_epochs=1, warmstart_dagger_rounds=0)
    base.update(kw)
    return TrainConfig(**base)


def test_end_to_end_checkpoint_loads_and_plays(tmp_path):
    from rummy_env.agents import make_agent

    report = Trainer(tiny_config(tmp_path / "run"), verbose=0).learn()
    run = tmp_path / "run"
    assert report["timesteps"] >= 256
    ck = run / "checkpoints" / f"step_{report['timesteps']}"
    for f in ("model.zip", "pool.pt", "trainer_state.json", "rummy_config.json"):
        assert (ck / f).is_file(), f
    assert (run / "final_model.zip").is_file() and (run / "report.md").is_file()
    assert (run / "config.toml").is_file()
    assert json.loads((run / "rummy_config.json").read_text())["rules"] == "classic"
    # the saved model loads as an agent and plays a whole hand of legal moves
    agent = make_agent(f"ppo:{ck / 'model.zip'}")
    from rummy_env import rummy_v0

    env = rummy_v0.raw_env()
    env.reset(seed=3)
    moves = 0
    while not env.terminations["player_0"]:
        obs = env.observe(env.agent_selection)
        a = agent.act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][a] == 1
        env.step(a)
        moves += 1
    assert moves > 0


def test_resume_continues_step_count(tmp_path):
    cfg = tiny_config(tmp_path / "run", timesteps=128)
    first = Trainer(cfg, verbose=0).learn()
    ck = tmp_path / "run" / "checkpoints" / f"step_{first['timesteps']}"
    cfg2 = tiny_config(tmp_path / "run", timesteps=384)
    t = Trainer(cfg2, resume=str(ck), verbose=0)
    assert t.model.num_timesteps == first["timesteps"]
    assert len(t.pool.snapshots) >= 1  # the pool came back with the checkpoint
    second = t.learn()
    assert second["timesteps"] >= 384
    assert (tmp_path / "run" / "checkpoints" / f"step_{second['timesteps']}").is_dir()


def test_corrupt_checkpoint_raises_clear_error(tmp_path):
    cfg = tiny_config(tmp_path / "run", timesteps=128)
    rep = Trainer(cfg, verbose=0).learn()
    ck = tmp_path / "run" / "checkpoints" / f"step_{rep['timesteps']}"
    rules = Rules.preset("classic")
    (ck / "pool.pt").write_bytes(b"\x80\x02 truncated pickle")
    with pytest.raises(CheckpointError, match=r"corrupt .*pool.pt \(the opponent pool's snapshots\) cannot be read"):
        load_checkpoint(ck, cfg, rules)
    (ck / "model.zip").write_bytes(b"not a zip at all")
    with pytest.raises(CheckpointError, match="corrupt .*model.zip cannot be read"):
        load_checkpoint(ck, cfg, rules)
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(tmp_path / "nope", cfg, rules)
    (ck / "pool.pt").unlink()
    with pytest.raises(ValueError, match="missing pool.pt"):
        load_checkpoint(ck, cfg, rules)


def test_mismatched_checkpoint_rules(tmp_path):
    cfg = tiny_config(tmp_path / "run", timesteps=128)
    rep = Trainer(cfg, verbose=0).learn()
    ck = tmp_path / "run" / "checkpoints" / f"step_{rep['timesteps']}"
    with pytest.raises(CheckpointError, match="trained on rules"):
        load_checkpoint(ck, cfg, Rules.preset("turnover", num_players=3))


# Seat 0 (to play, has drawn) goes out by melding 4H 5H 6H and discarding KS.
# Seat 1 is left with 9D 4C AH KC = 9 + 4 + 1 + 10 = 24 points. Both melded earlier: no rummy.
# Hand sizes: 2 x 10 dealt, 8 in hands, +1 drawn -> 13 cards in melds (7 + 6).
def _going_out_position() -> dict:
    hand0 = ["4H", "5H", "6H", "KS"]
    hand1 = ["9D", "4C", "AH", "KC"]
    melds = [["2S", "3S", "4S", "5S", "6S", "7S", "8S"], ["5C", "6C", "7C", "8C", "9C", "TC"]]
    used = set(hand0 + hand1 + [c for m in melds for c in m])
    rest = [r + s for s in "CDHS" for r in "A23456789TJQK" if r + s not in used]
    return {"hands": [hand0, hand1], "melds": melds, "discard": [rest[0]], "stock": rest[1:],
            "current_player": 0, "phase": "play", "has_melded": [True, True]}


@pytest.mark.parametrize("reward,expected", [("points", 0.24), ("win", 1.0)])
def test_learner_reward_is_its_own_seat(reward, expected):
    pos = _going_out_position()
    pool = OpponentPool({"random": 1.0}, 1, 0.5, {"random": RandomAgent(0)})
    venv = SelfPlayVecEnv(Rules.preset("classic"), pool, n_envs=1, seed=0, reward_scale=0.01, reward=reward)
    venv.reset()
    g = venv.games[0]
    g.seat = 0
    g.state = state_json.from_json(pos)
    venv.step(np.array([engine.action_id(g.state, "meld 4H 5H 6H")]))
    _, rew, done, infos = venv.step(np.array([engine.action_id(g.state, "discard KS")]))
    assert done[0]
    # seat 0 went out (not rummy: it had melded before): collects seat 1's 24 points
    assert infos[0]["points"] == 24
    assert rew[0] == pytest.approx(expected)
    assert infos[0]["win"] == 1.0


def test_hand_rewards_points_and_win():
    from types import SimpleNamespace

    from rummy_env.train.rewards import hand_rewards

    st = state_json.from_json(_going_out_position())
    engine.apply(st, engine.action_id(st, "meld 4H 5H 6H"))
    engine.apply(st, engine.action_id(st, "discard KS"))
    # seat 0 went out and collects seat 1's deadwood: 9 + 4 + 1 + 10 = 24 points
    np.testing.assert_allclose(hand_rewards(st, "points", 0.01), [0.24, -0.24])
    np.testing.assert_allclose(hand_rewards(st, "points", 1.0), [24, -24])
    np.testing.assert_array_equal(hand_rewards(st, "win"), [1, -1])
    three = SimpleNamespace(payoffs=[-5, 12, -7], result={"winner": 1})
    np.testing.assert_array_equal(hand_rewards(three, "win"), [-1, 1, -1])
    void = SimpleNamespace(payoffs=[0, 0], result={"winner": None})
    np.testing.assert_array_equal(hand_rewards(void, "win"), [0, 0])
    with pytest.raises(ValueError, match="reward must be one of points, win, match, points[+]match"):
        hand_rewards(st, "score")
    with pytest.raises(ValueError, match="reward must be one of points, win, match, points[+]match"):
        TrainConfig.from_dict({"reward": "score"})
    # "match": 24 points at 0-0 decide nothing (target 100, RULES.md §7): 0 for both
    np.testing.assert_array_equal(hand_rewards(st, "match"), [0, 0])
    np.testing.assert_allclose(hand_rewards(st, "points+match", 0.01), [0.24, -0.24])  # the hand's points
    assert TrainConfig.from_dict({"reward": "match"}).reward == "match"


def test_the_match_reward_is_the_match_result():
    """RULES.md §7 (as RummyEnv(episode="match") rewards it, engine.match_payoffs): the
    winner +1, the others -1; a match won by k seats of n shares n - k among them."""
    from types import SimpleNamespace

    from rummy_env.train.rewards import hand_rewards

    # the 24-point hand of test_hand_rewards_points_and_win at 80-95: seat 0 reaches 104
    st = state_json.from_json(_going_out_position())
    st.scores = [80, 95]
    engine.apply(st, engine.action_id(st, "meld 4H 5H 6H"))
    engine.apply(st, engine.action_id(st, "discard KS"))
    assert st.scores == [104, 95] and st.match_over
    np.testing.assert_array_equal(hand_rewards(st, "match"), [1, -1])
    np.testing.assert_allclose(hand_rewards(st, "points+match", 0.01), [1.24, -1.24])
    three = SimpleNamespace(rules=SimpleNamespace(num_players=3), payoffs=[5, -5, 0], match_over=True,
                            match_winners=[0, 2])
    np.testing.assert_array_equal(hand_rewards(three, "match"), [0.5, -1, 0.5])
    tie = SimpleNamespace(rules=SimpleNamespace(num_players=2), payoffs=[0, 0], match_over=True, match_winners=[0, 1])
    np.testing.assert_array_equal(hand_rewards(tie, "match", reward_scale=7.0), [0, 0])


def test_opponent_pool_sampling():
    rng = np.random.default_rng(0)
    base = {"random": object(), "greedy": object(), "heuristic": object()}
    pool = OpponentPool({"snapshot": 1.0, "greedy": 1.0}, max_snapshots=2, latest_prob=1.0, baselines=base)
    # no snapshot yet: only greedy can be drawn
    assert {pool.sample(rng)[0] for _ in range(50)} == {"greedy"}
    from rummy_env.train.pool import ActorNet

    for step in (10, 20, 30):
        pool.add_net(ActorNet(546, [8], 579), step)
    assert pool.snapshot_steps == [20, 30]  # the oldest is dropped past max_snapshots
    draws = [pool.sample(rng) for _ in range(2000)]
    kinds = [k for k, _ in draws]
    share = kinds.count("snapshot") / len(kinds)
    assert 0.45 < share < 0.55  # weights 1:1
    # latest_prob=1: every snapshot draw is the newest one
    assert all(a is pool.snapshots[-1] for k, a in draws if k == "snapshot")
    assert all(a is base["greedy"] for k, a in draws if k == "greedy")


def test_snapshot_windows_share_one_older_snapshot_with_the_same_odds_per_hand():
    """``OpponentPool.rotate`` (``snapshot_rotation``): within a window every draw that
    does not pick the latest snapshot gives the window's one; the draws consume the
    generator as without windows (same kinds, same latest-or-not); over many windows
    each hand's snapshot has the odds it has without them: with latest_prob 0.5 and 4
    stored, the latest 0.5 + 0.5 / 4 = 0.625 and each other 0.125. A window whose
    snapshot is dropped draws uniformly again until the next rotation."""
    from rummy_env.train.pool import ActorNet

    def pool_of(n):
        pool = OpponentPool({"snapshot": 1.0, "greedy": 1.0}, max_snapshots=4, latest_prob=0.5,
                            baselines={"greedy": object()})
        for step in range(n):
            pool.add_net(ActorNet(548, [4], 579), step)
        return pool

    plain, windowed = pool_of(4), pool_of(4)
    for k in range(4):  # the same nets, so draws can be compared by index
        windowed.snapshots[k] = plain.snapshots[k]
    windowed.rotate(np.random.default_rng(9))
    w = windowed.window
    assert w in plain.snapshots
    r1, r2 = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(300):
        (k1, a1), (k2, a2) = plain.sample(r1), windowed.sample(r2)
        assert k1 == k2
        if k1 == "snapshot":  # the latest where both drew the latest (latest_prob), else the window's
            assert a2 is w or (a1 is a2 is plain.snapshots[-1])
    counts = np.zeros(4)
    rng, rot = np.random.default_rng(2), np.random.default_rng(3)
    n = 0
    for _ in range(4000):
        windowed.rotate(rot)
        for _ in range(10):
            kind, agent = windowed.sample(rng)
            if kind == "snapshot":
                counts[windowed.snapshots.index(agent)] += 1
                n += 1
    np.testing.assert_allclose(counts / n, [0.125, 0.125, 0.125, 0.625], atol=0.015)
    windowed.window = windowed.snapshots[0]
    windowed.add_net(ActorNet(548, [4], 579), 99)  # the window's snapshot is the oldest: dropped
    assert windowed.window is None
    assert len({id(a) for k, a in (windowed.sample(rng) for _ in range(200)) if k == "snapshot"}) == 4
    empty = pool_of(0)
    empty.rotate(rng)
    assert empty.window is None


def test_a_window_deals_its_games_two_snapshots_at_most():
    """``SelfPlayVecEnv(rotate_steps=...)``: the hands dealt in one window face the
    latest snapshot or the window's one (64 games against a pool of 6 snapshots); without
    windows they face more of the six. ``TrainConfig.snapshot_rotation`` becomes vector
    steps rounded up (``rotate_steps``) and must not be negative."""
    from rummy_env.train.pool import ActorNet, SnapshotAgent

    def opponents(rotate_steps):
        pool = OpponentPool({"snapshot": 1.0}, 6, 0.5, {})
        for step in range(6):
            pool.add_net(ActorNet(548, [4], 579), step)
        venv = SelfPlayVecEnv(Rules.preset("classic"), pool, n_envs=64, seed=4, rotate_steps=rotate_steps)
        venv.reset()
        return {id(a) for g in venv.games for a in g.opps if isinstance(a, SnapshotAgent)}, pool

    seen, pool = opponents(1000)
    assert seen == {id(pool.snapshots[-1]), id(pool.window)}
    seen, _ = opponents(0)
    assert len(seen) >= 4
    assert TrainConfig(snapshot_rotation=16384).rotate_steps == 64  # 256 games a step
    assert TrainConfig(snapshot_rotation=100, n_envs=64, n_steps=32, batch_size=64).rotate_steps == 2
    with pytest.raises(ValueError, match=r"snapshot_rotation must be an int >= 0 \(learner timesteps; 0: no "
                                         r"windows\), got -1"):
        TrainConfig.from_dict({"snapshot_rotation": -1})
    with pytest.raises(ValueError, match="rotate_steps must be an int >= 0, got -2"):
        SelfPlayVecEnv(Rules.preset("classic"), OpponentPool({"random": 1.0}, 1, 0.5, {"random": RandomAgent(0)}),
                       n_envs=1, rotate_steps=-2)


def test_config_toml_round_trip_and_errors(tmp_path):
    cfg = TrainConfig(timesteps=1234, net_arch=[64, 64], opponent_weights={"random": 1.0})
    p = tmp_path / "c.toml"
    p.write_text(cfg.to_toml())
    back = TrainConfig.from_toml(p)
    assert back == cfg
    with pytest.raises(ValueError, match="unknown config key"):
        TrainConfig.from_dict({"timestep": 5})
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig.from_dict({"n_envs": 8, "n_steps": 16, "batch_size": 100})
    with pytest.raises(ValueError, match="opponent_weights"):
        TrainConfig.from_dict({"opponent_weights": {"champion": 1.0}})


def test_warm_start_collects_teacher_decisions_and_clones_them():
    import torch
    from sb3_contrib import MaskablePPO

    from rummy_env.single_agent import SingleAgentEnv
    from rummy_env.train.warmstart import clone, collect

    rules = Rules.preset("classic")
    obs, masks, actions, returns = collect(rules, "greedy", 3000, seed=0, reward_scale=0.01)
    n = len(actions)
    assert 0 < n <= 3000 and obs.shape == (n, 548) and masks.shape == (n, 579)
    assert masks[np.arange(n), actions].all()  # every teacher action was legal
    # a seat's return is its own hand payoff (x 0.01): heads-up hands are zero-sum, so every
    # winner's +v has its loser's -v, and points are whole numbers
    pos = set(np.round(returns[returns > 0] * 100).astype(int))
    neg = set(np.round(-returns[returns < 0] * 100).astype(int))
    assert pos and pos == neg
    assert np.allclose(returns * 100, np.round(returns * 100), atol=1e-4)
    torch.manual_seed(0)
    model = MaskablePPO("MlpPolicy", SingleAgentEnv(seed=0), policy_kwargs=dict(net_arch=[64, 64]), seed=0)
    with torch.no_grad():
        feats = model.policy.extract_features(torch.as_tensor(obs), model.policy.pi_features_extractor)
        logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(feats))
        before = float((logits.masked_fill(~torch.as_tensor(masks), -1e9).argmax(1) == torch.as_tensor(actions))
                       .float().mean())
    res = clone(model.policy, obs, masks, actions, returns, epochs=5, batch_size=256, seed=0)
    assert res["accuracy"] > before + 0.2


def test_worker_processes_train_and_receive_snapshots(tmp_path):
    # the same run split over 2 worker processes: games step there, snapshots are sent there
    t = Trainer(tiny_config(tmp_path / "run", workers=2, timesteps=256), verbose=0)
    try:
        assert t.venv.num_envs == 8 and len(t.venv.procs) == 2
        report = t.learn()
    finally:
        t.venv.close()
    assert report["timesteps"] >= 256
    # a snapshot after the first vector step (8 games), then one per 128 steps
    assert t.pool.snapshot_steps[0] == 8 and len(t.pool.snapshots) >= 2
    assert all(not p.is_alive() for p in t.venv.procs)


def test_teacher_weights_override_the_heuristic_for_the_warm_start_only():
    from rummy_env.agents.scripted import HeuristicAgent
    from rummy_env.train.warmstart import collect

    tuned = HeuristicAgent(seed=0, W_OUT=24, W_WEAK=6.0)
    assert (tuned.W_OUT, tuned.W_WEAK) == (24.0, 6.0)
    assert (HeuristicAgent.W_OUT, HeuristicAgent(seed=0).W_OUT) == (8.0, 8.0)  # the baseline is untouched
    with pytest.raises(ValueError, match="unknown heuristic weight 'W_BOGUS'"):
        HeuristicAgent(W_BOGUS=1.0)
    with pytest.raises(ValueError, match="must be a finite number >= 0"):
        HeuristicAgent(W_OUT=-1)
    with pytest.raises(ValueError, match="LATE_STOCK counts cards"):
        HeuristicAgent(LATE_STOCK=10.5)
    assert HeuristicAgent(LATE_STOCK=12.0).LATE_STOCK == 12
    assert HeuristicAgent(HOLD_MELDS=1.0).HOLD_MELDS == 1
    for bad in ({"W_OUT": float("nan")}, {"W_OUT": float("inf")}, {"LATE_STOCK": float("inf")}):
        with pytest.raises(ValueError, match="must be a finite number >= 0"):
            HeuristicAgent(**bad)
    for bad in (2, 0.5, float("inf"), float("nan"), True):
        with pytest.raises(ValueError, match="HOLD_MELDS is 0 .meld early. or 1"):
            HeuristicAgent(HOLD_MELDS=bad)
    with pytest.raises(ValueError, match="HOLD_MELDS is 0"):
        TrainConfig.from_dict({"warmstart_teacher_weights": {"HOLD_MELDS": 3}})
    with pytest.raises(ValueError, match="unknown heuristic weight"):
        TrainConfig.from_dict({"warmstart_teacher_weights": {"W_BOGUS": 1.0}})
    rules = Rules.preset("classic")
    base = collect(rules, "heuristic", 2000, seed=3, teacher_weights={})
    again = collect(rules, "heuristic", 2000, seed=3, teacher_weights=None)
    other = collect(rules, "heuristic", 2000, seed=3, teacher_weights={"W_OUT": 24.0, "W_WEAK": 6.0})
    np.testing.assert_array_equal(base[2], again[2])  # {} and None: the baseline heuristic
    # the same seeded deals, but the tuned teacher discards differently somewhere
    k = min(len(base[2]), len(other[2]))
    assert (base[2][:k] != other[2][:k]).any()


def test_warm_start_behaviour_moves_while_the_teacher_labels():
    from rummy_env.agents.scripted import HeuristicAgent
    from rummy_env.train.warmstart import collect

    rules = Rules.preset("classic")
    # greedy moves in every seat: the positions are greedy's own games (same seeded deals) ...
    mixed = collect(rules, "heuristic", 1500, seed=5, behaviour={"greedy": 1.0})
    greedy_games = collect(rules, "greedy", 1500, seed=5)
    np.testing.assert_array_equal(mixed[0], greedy_games[0])
    np.testing.assert_array_equal(mixed[3], greedy_games[3])  # and their results
    # ... but every label is the heuristic's move there
    teacher = HeuristicAgent(seed=0)
    labels = np.array([teacher.act(o, m.astype(np.int8)) for o, m in zip(mixed[0], mixed[1])])
    assert (labels == mixed[2]).mean() > 0.99 and (mixed[2] != greedy_games[2]).any()
    # the teacher alone: {"teacher": 1} and no table at all are the same games
    alone = collect(rules, "heuristic", 1500, seed=5, behaviour={"teacher": 1.0, "greedy": 0.0})
    np.testing.assert_array_equal(alone[0], collect(rules, "heuristic", 1500, seed=5)[0])
    for bad, msg in (({"bogus": 1.0}, "unknown warm-start behaviour 'bogus'"),
                     ({"greedy": -1.0}, "must be a finite number >= 0"), ({"greedy": 0.0}, "all zero"),
                     ({"greedy": float("inf")}, "must be a finite number >= 0"),
                     ({"greedy": 1e308, "random": 1e308}, "too large to add up"),
                     ("greedy", "must be a table of weights")):
        with pytest.raises(ValueError, match=msg):
            collect(rules, "heuristic", 100, seed=5, behaviour=bad)
        with pytest.raises(ValueError, match=msg):
            TrainConfig.from_dict({"warmstart_behaviour": bad})


def test_dagger_labels_the_students_own_positions_with_the_teachers_moves():
    from rummy_env.agents.scripted import GreedyAgent, HeuristicAgent
    from rummy_env.train.warmstart import collect_on_policy

    rules = Rules.preset("classic")
    greedy, played = GreedyAgent(seed=0), {}

    def student(obs, masks):  # greedy plays; its move per position is recorded
        moves = np.array([greedy.act(o, m.astype(np.int8)) for o, m in zip(obs, masks)])
        played.update({o.tobytes(): a for o, a in zip(obs, moves)})
        return moves

    obs, masks, actions, returns = collect_on_policy(rules, "heuristic", 3000, seed=0, student=student, games=16)
    n = len(actions)
    assert 0 < n <= 3000 + 16 and obs.shape == (n, 548)
    assert masks[np.arange(n), actions].all()  # every label is a legal move
    teacher = HeuristicAgent(seed=0)
    labels = np.array([teacher.act(o, m.astype(np.int8)) for o, m in zip(obs, masks)])
    assert (labels == actions).mean() > 0.99  # the heuristic's moves (its seed only breaks exact ties)
    moved = np.array([played[o.tobytes()] for o in obs])  # what the student did there
    assert (moved != actions).any() and (moved == actions).mean() > 0.5
    # whole hands only: heads-up payoffs are zero-sum (x 0.01): every winner's +v has its loser's -v
    pos = set(np.round(returns[returns > 0] * 100).astype(int))
    assert pos and pos == set(np.round(-returns[returns < 0] * 100).astype(int))


def test_warm_start_with_a_dagger_round(tmp_path):
    cfg = tiny_config(tmp_path / "run")
    cfg.warmstart_dagger_rounds, cfg.warmstart_dagger_decisions, cfg.warmstart_dagger_epochs = 1, 2000, 1
    t = Trainer(cfg, verbose=0)
    try:
        ws = t.state["warm_start"]
    finally:
        t.venv.close()
    assert 0 <= ws["dagger_1_agreement_before"] <= 1 and 0 < ws["accuracy"] <= 1
    # the teacher's own games give at most 500 samples (unfinished hands dropped): the
    # last fit also saw the positions the policy reached itself
    assert ws["samples"] > 500


def test_evaluation_postfix_shows_the_match_win_rate_per_baseline():
    from rummy_env.train.trainer import evaluation_postfix

    res = {"random": {"mode": "matches", "match_win_rate": 0.975, "points_per_hand": 12.0, "hand_win_rate": 0.91},
           "heuristic": {"mode": "matches", "match_win_rate": 0.5, "points_per_hand": -1.0, "hand_win_rate": 0.48}}
    assert evaluation_postfix(res) == "eval: random 0.97, heuristic 0.50"  # 0.975 -> 0.97 (float rounding)
    hands = {"greedy": {"mode": "hands", "points_per_hand": 3.0, "hand_win_rate": 0.625}}
    assert evaluation_postfix(hands) == "eval: greedy h0.62"


def test_evaluations_inside_a_run_show_on_the_progress_bar(tmp_path):
    """A run with a bar and an evaluation every 128 steps: after it, the bar's postfix is the
    last in-run evaluation's match win rate per baseline (from ``eval_history.json``)."""
    from rummy_env.train.trainer import evaluation_postfix

    # features="none": the bar is the point, and the card features' forward pass, one
    # decision at a time, is most of the evaluations' matches
    cfg = tiny_config(tmp_path / "run", progress=True, eval_every=128, eval_deals=1,
                      eval_baselines=["random", "greedy"], final_eval_deals=1, warmstart_decisions=0,
                      eval_mode="matches", features="none")
    t = Trainer(cfg, verbose=0)
    t.learn()
    rows = [r for r in json.loads((tmp_path / "run" / "eval_history.json").read_text()) if not r.get("final")]
    assert [r["timesteps"] for r in rows] == [0, 128, 256]  # before PPO (issue 27), at 128 and 256 steps
    last = {b: rows[-1][b] for b in ("random", "greedy")}
    assert all(r["mode"] == "matches" for r in last.values())
    # by hand: "eval: " then each baseline's match win rate to two places, in the config's order
    want = (f"eval: random {last['random']['match_win_rate']:.2f}, "
            f"greedy {last['greedy']['match_win_rate']:.2f}")
    assert evaluation_postfix(last) == want
    assert t.progress_bar.postfix == want
    assert t.progress_bar.pbar.postfix == want  # what tqdm prints after the bar


def test_warm_start_ticker_prints_at_most_one_line_per_interval(monkeypatch, capsys):
    from rummy_env.train import warmstart

    clock = iter([0.0, 5.0, 10.0, 16.0, 20.0, 31.5])  # Ticker() reads once, then once per call
    monkeypatch.setattr(warmstart.time, "perf_counter", lambda: next(clock))
    tick = warmstart.Ticker(t0=0.0, every=15.0)
    report = tick.bind("playing hands", 1000, "decisions")
    for done in (100, 200, 300, 400, 500):  # at 5, 10, 16, 20 and 31.5 s
        report(done)
    lines = capsys.readouterr().out.splitlines()
    # 16 s is the first time 15 s have passed since the start; 31.5 - 16 = 15.5 >= 15 again
    assert lines == ["[warm start] playing hands: 300/1,000 decisions, 16s elapsed",
                     "[warm start] playing hands: 500/1,000 decisions, 32s elapsed"]
    monkeypatch.undo()
    assert warmstart.Ticker(0.0, enabled=False).bind("x", 1, "y") is None


def test_packed_masks_are_the_dense_masks_and_fit_the_same():
    # the warm start keeps masks one bit per action (MaskRows): the same rows, the same
    # bits, and fit follows the same path (same seed, same losses) as on the bool array
    import torch

    from rummy_env.train.warmstart import MaskRows, collect, fit, sb3_forward
    from sb3_contrib import MaskablePPO
    from rummy_env.single_agent import SingleAgentEnv

    rules = Rules.preset("jokers")
    dense = collect(rules, "greedy", 600, seed=3)
    packed = collect(rules, "greedy", 600, seed=3, packed=True)
    assert isinstance(packed[1], MaskRows) and packed[1].shape == dense[1].shape == (len(dense[2]), 632)
    assert packed[1].packed.nbytes * 8 < dense[1].nbytes + 8 * len(dense[2])  # ceil(632 / 8) bytes a row
    assert np.array_equal(packed[1][:], dense[1]) and np.array_equal(packed[1][5], dense[1][5])
    n = len(dense[2])
    assert packed[1][np.arange(n), dense[2]].all()
    both = MaskRows.concat(packed[1], packed[1].select(slice(0, 10)))
    assert np.array_equal(both[:], np.concatenate([dense[1], dense[1][:10]]))
    losses = []
    for data in (dense, packed):
        torch.manual_seed(0)
        model = MaskablePPO("MlpPolicy", SingleAgentEnv(rules="jokers", seed=0), policy_kwargs=dict(net_arch=[16]),
                            seed=0, device="cpu")
        losses.append(fit(list(model.policy.parameters()), sb3_forward(model.policy), *data, epochs=1,
                          batch_size=128, seed=0))
    assert losses[0] == losses[1]


def _card_model(trunk: int):
    """A seeded MaskablePPO with the card-feature network (net_arch [32], ``trunk``) at
    the classic table, for the fit tests."""
    import torch
    from sb3_contrib import MaskablePPO

    from rummy_env.single_agent import SingleAgentEnv
    from rummy_env.train.features import CardFeatures

    torch.manual_seed(0)
    return MaskablePPO("MlpPolicy", SingleAgentEnv(rules="classic", seed=0), seed=0, device="cpu",
                       policy_kwargs=dict(net_arch=[32], features_extractor_class=CardFeatures,
                                          features_extractor_kwargs=dict(cards=True, trunk=trunk)))


def test_fit_with_the_card_feature_cache_is_the_fit_without_it():
    # the default network's card features have no weights: fit computes them once per
    # sample (fixed_features, uint8) and trains the same weights, bit for bit, as a
    # forward that recomputes them every minibatch
    import torch

    from rummy_env.train.warmstart import collect, fit, fixed_features, sb3_forward

    rules = Rules.make("classic")
    data = collect(rules, "greedy", 700, seed=5)
    results = []
    for cached in (True, False):
        model = _card_model(trunk=16)
        f = sb3_forward(model.policy)
        assert hasattr(f, "fixed") and hasattr(f, "head")
        if cached:
            cache = fixed_features(f, data[0], chunk=256)  # chunked: 700 rows in 3 parts
            assert cache.dtype == torch.uint8 and cache.shape == (len(data[2]), 1208)  # EXTRA heads-up
            x = torch.as_tensor(data[0][:50])
            with torch.no_grad():
                for a, b in zip(f.head(x, cache[:50]), f(x)):
                    torch.testing.assert_close(a, b, rtol=0, atol=0)
        forward = f if cached else (lambda o, f=f: f(o))  # a plain function: no cache
        losses = fit(list(model.policy.parameters()), forward, *data, epochs=2, batch_size=128, seed=0)
        results.append((losses, [p.detach().clone() for p in model.policy.parameters()]))
    assert results[0][0] == results[1][0]
    assert all(torch.equal(a, b) for a, b in zip(results[0][1], results[1][1]))
    with pytest.raises(ValueError, match=f"cache has 10 rows for {len(data[2])} samples"):
        fit(list(model.policy.parameters()), f, *data, epochs=1, cache=cache[:10])
    with pytest.raises(ValueError, match="a cache needs a forward with a fixed part"):
        fit(list(model.policy.parameters()), lambda o: f(o), *data, epochs=1, cache=cache)


def test_fit_in_bfloat16_learns_the_teacher_as_float32_does():
    """``fit(..., bf16=True)`` (``TrainConfig.precision``): the same samples and seeds
    cloned with the forward pass in bfloat16 reach the float32 fit's agreement with the
    teacher within 5 points, with float32 weights that differ from it (the products did
    run in bfloat16); a config with another precision is refused."""
    import torch

    from rummy_env.train.warmstart import collect, fit, sb3_forward

    rules = Rules.make("classic")
    data = collect(rules, "greedy", 3000, seed=6)
    out = []
    for bf16 in (False, True):
        model = _card_model(trunk=32)
        res = fit(list(model.policy.parameters()), sb3_forward(model.policy), *data, epochs=4, batch_size=256,
                  seed=0, bf16=bf16)
        out.append((res, [p.detach().clone() for p in model.policy.parameters()]))
    (r32, w32), (r16, w16) = out
    assert r32["accuracy"] > 0.5  # the fit learned the teacher at all
    assert abs(r16["accuracy"] - r32["accuracy"]) < 0.05
    assert all(w.dtype == torch.float32 for w in w16)
    assert not all(torch.equal(a, b) for a, b in zip(w32, w16))
    with pytest.raises(ValueError, match="precision must be one of auto, float32, bfloat16, got 'half'"):
        TrainConfig.from_dict({"precision": "half"})
    assert TrainConfig().precision == "auto"


def test_the_warm_start_with_its_cache_across_dagger_rounds_ends_with_the_weights_without_it():
    # warm_start keeps the card features of the teacher's positions and appends each DAgger
    # round's: the rows must line up with the samples, so the weights after the cloning and
    # two DAgger rounds are bit for bit those of a forward that has no cache
    import torch

    from rummy_env.train import warmstart
    from rummy_env.train.features import CardFeatures
    from sb3_contrib import MaskablePPO
    from rummy_env.single_agent import SingleAgentEnv

    cfg = TrainConfig(warmstart_decisions=600, warmstart_epochs=1, warmstart_dagger_rounds=2,
                      warmstart_dagger_decisions=300, warmstart_dagger_epochs=1, workers=1, seed=4)
    cfg.validate()
    rules = Rules.make("classic")
    ends, samples = [], []
    for cached in (True, False):
        torch.manual_seed(0)
        model = MaskablePPO("MlpPolicy", SingleAgentEnv(rules="classic", seed=0), seed=0, device="cpu",
                            policy_kwargs=dict(net_arch=[16], features_extractor_class=CardFeatures,
                                               features_extractor_kwargs=dict(cards=True, trunk=16)))
        f = warmstart.sb3_forward(model.policy)
        res = warmstart.warm_start(cfg, rules, list(model.policy.parameters()), f if cached else (lambda o, f=f: f(o)),
                                   verbose=0)
        ends.append([p.detach().clone() for p in model.policy.parameters()])
        samples.append(res["samples"])
    assert samples[0] == samples[1] > 600  # the DAgger rounds' positions were added
    assert all(torch.equal(a, b) for a, b in zip(*ends))


def test_fixed_features_is_none_without_a_fixed_part_or_for_values_not_in_a_byte():
    import torch

    from rummy_env.train.warmstart import fixed_features, sb3_forward
    from sb3_contrib import MaskablePPO
    from rummy_env.single_agent import SingleAgentEnv

    model = MaskablePPO("MlpPolicy", SingleAgentEnv(rules="classic", seed=0), policy_kwargs=dict(net_arch=[8]),
                        seed=0, device="cpu")
    obs = np.zeros((4, 548), dtype=np.float32)
    assert not hasattr(sb3_forward(model.policy), "fixed") and fixed_features(sb3_forward(model.policy), obs) is None

    def forward(o):
        raise AssertionError("not called")
    for bad in (0.5, -1.0, 256.0):
        forward.fixed = lambda o, bad=bad: torch.full((len(o), 3), bad)
        assert fixed_features(forward, obs) is None
    forward.fixed = lambda o: torch.full((len(o), 3), 255.0)
    assert torch.equal(fixed_features(forward, obs), torch.full((4, 3), 255, dtype=torch.uint8))


def test_collect_in_parts_is_the_parts_played_one_by_one():
    """``collect(..., workers=2)``: part 0 in this process with the seed, part 1 in a spawned
    process with ``part_seed``; the samples are the two serial collections end to end."""
    from rummy_env.train.warmstart import collect, part_seed

    rules = Rules.make("classic")
    both = collect(rules, "greedy", 4000, seed=3, workers=2)
    first = collect(rules, "greedy", 2000, seed=3)
    second = collect(rules, "greedy", 2000, seed=part_seed(3, 1))
    assert part_seed(3, 0) == 3 and part_seed(3, 1) == 3 + 1_000_003
    for got, a, b in zip(both, first, second):
        np.testing.assert_array_equal(got, np.concatenate([a, b]))
    assert len(both[2]) < 4000  # each part drops its unfinished last hand
    with pytest.raises(ValueError, match="workers must be an int >= 1, got 0"):
        collect(rules, "greedy", 4000, seed=3, workers=0)
    with pytest.raises(ValueError, match="unknown warm-start behaviour 'nobody'"):
        collect(rules, "greedy", 4000, seed=3, workers=2, behaviour={"nobody": 1.0})


def test_the_cloning_loss_weighs_the_positions_with_a_meld_by_warmstart_meld_weight():
    """Logits all zero: a position's cross-entropy is log(legal moves). Position 0 has four
    discards and two melds legal (log 6), positions 1-3 four discards (log 4). Weight 3 at
    positions with a meld: (3 log 6 + 3 log 4) / 6 = 1.5890; weight 1 (the plain mean):
    (log 6 + 3 log 4) / 4 = 1.4877. Learning rate 0: the loss is that of the start."""
    import math

    import numpy as np
    import torch

    from rummy_env.actions import DISCARD_BASE, MELD_BASE
    from rummy_env.train.config import TrainConfig
    from rummy_env.train.warmstart import fit

    n_actions = 579
    bias = torch.nn.Parameter(torch.zeros(()))

    def forward(o):
        return torch.zeros(len(o), n_actions) + 0 * bias, torch.zeros(len(o)) + 0 * bias

    masks = np.zeros((4, n_actions), dtype=bool)
    masks[:, DISCARD_BASE:DISCARD_BASE + 4] = True
    masks[0, MELD_BASE:MELD_BASE + 2] = True
    obs, acts, rets = np.zeros((4, 3), np.float32), np.full(4, DISCARD_BASE), np.zeros(4, np.float32)
    for w, want in ((3.0, (3 * math.log(6) + 3 * math.log(4)) / 6), (1.0, (math.log(6) + 3 * math.log(4)) / 4)):
        res = fit([bias], forward, obs, masks, acts, rets, epochs=1, batch_size=4, lr=0.0, meld_weight=w)
        assert res["policy_loss"] == pytest.approx(want, abs=1e-5)
    for bad in (0, -1.0, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="warmstart_meld_weight must be a finite number"):
            TrainConfig(warmstart_meld_weight=bad).validate()
    TrainConfig(warmstart_meld_weight=4.0).validate()
