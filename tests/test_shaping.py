"""The potential-based deadwood shaping (``TrainConfig.deadwood_shaping``): a hand's
shaped return is its unshaped return minus ``phi`` of its first observation, where
``phi = -w * reward_scale * (points in the learner's hand)`` (RULES.md §5's deadwood),
whatever the moves, so the shaping changes no policy's ranking."""
from __future__ import annotations

import numpy as np
import pytest

from extras import needs

needs("sb3_contrib")

from rummy_env import Rules, engine  # noqa: E402
from rummy_env.cards import card_points  # noqa: E402
from rummy_env.train.config import TrainConfig, check_rllib_network  # noqa: E402
from rummy_env.train.rewards import deadwood_potential  # noqa: E402
from rummy_env.train.subproc import make_pool  # noqa: E402
from rummy_env.train.vec_env import SelfPlayVecEnv  # noqa: E402

WEIGHT, SCALE = 2.0, 0.01


def _hand_points(state, seat: int) -> int:
    """The points of ``seat``'s cards, counted card by card (RULES.md §1: ace 1, faces 10)."""
    hand = state.hands[seat]
    return sum(card_points(c, state.rules.ace_points) for c in range(52) if hand >> c & 1)


def _play(rules: Rules, shaping: float, gamma: float, steps: int, seed: int = 3) -> list[dict]:
    """Random legal learner moves (the same ones for every ``shaping``: the moves are drawn
    from a generator of their own, and the shaping changes no position) in 8 games; each
    finished episode's rewards, discounted return and the learner's points at its first
    observation."""
    pool = make_pool({"greedy": 1.0}, 1, 0.5, seed=seed)
    venv = SelfPlayVecEnv(rules, pool, 8, seed=seed, reward_scale=SCALE, shaping=shaping, gamma=gamma)
    venv.reset()
    rng = np.random.default_rng(99)
    first = [_hand_points(g.state, g.seat) for g in venv.games]
    rewards: list[list[float]] = [[] for _ in venv.games]
    episodes = []
    for _ in range(steps):
        masks = venv.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        venv.step_async(actions)
        _, r, done, infos = venv.step_wait()
        for i in range(len(venv.games)):
            rewards[i].append(float(r[i]))
            if done[i]:
                rs = rewards[i]
                episodes.append({"rewards": rs, "first_points": first[i], "points": infos[i]["points"],
                                 "return": sum(x * gamma ** t for t, x in enumerate(rs))})
                rewards[i] = []
                first[i] = _hand_points(venv.games[i].state, venv.games[i].seat)
    return episodes


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_a_hands_shaped_return_is_its_unshaped_return_plus_its_first_deadwood(gamma):
    rules = Rules.make("classic")
    plain = _play(rules, 0.0, gamma, 120)
    shaped = _play(rules, WEIGHT, gamma, 120)
    assert len(plain) == len(shaped) >= 10
    for p, s in zip(plain, shaped):
        assert p["points"] == s["points"] and p["first_points"] == s["first_points"]
        # unshaped: only the hand's end pays, its points times the scale (RULES.md §5)
        assert p["rewards"][-1] == pytest.approx(p["points"] * SCALE)
        assert all(x == 0 for x in p["rewards"][:-1])
        # shaped: the same plus -phi(s_0) = WEIGHT * SCALE * the first hand's points
        assert s["return"] == pytest.approx(p["return"] + WEIGHT * SCALE * p["first_points"], abs=1e-5)
    # the shaping pays along the way: some step before a hand's end is rewarded
    assert any(x != 0 for s in shaped for x in s["rewards"][:-1])


def test_the_potential_is_minus_the_hands_points_and_zero_once_the_hand_is_over():
    st = engine.new_game(Rules.make("classic"), seed=5)
    seat = st.current
    pts = _hand_points(st, seat)
    assert 7 <= pts <= 70  # seven cards of 1-10 points each
    assert deadwood_potential(st, seat, WEIGHT, SCALE) == pytest.approx(-WEIGHT * SCALE * pts)
    assert deadwood_potential(st, seat, 0.0, SCALE) == 0.0
    while not st.hand_over:
        engine.apply(st, engine.legal_actions(st)[0])
    assert deadwood_potential(st, seat, WEIGHT, SCALE) == 0.0


@pytest.mark.parametrize("bad", [-0.5, float("inf"), float("nan"), True, "1"])
def test_a_bad_shaping_weight_is_refused(bad):
    with pytest.raises(ValueError, match="shaping"):
        TrainConfig(deadwood_shaping=bad).validate()
    pool = make_pool({"greedy": 1.0}, 1, 0.5, seed=0)
    with pytest.raises(ValueError, match="shaping"):
        SelfPlayVecEnv(Rules.make("classic"), pool, 2, shaping=bad)


def test_the_rllib_backend_refuses_shaping():
    with pytest.raises(ValueError, match="deadwood_shaping"):
        check_rllib_network(TrainConfig(deadwood_shaping=1.0))


def test_the_scratch_config_loads_clones_nothing_and_trains_at_a_tiny_budget(tmp_path):
    from rummy_env.train.config import shipped_configs
    from rummy_env.train.trainer import Trainer

    assert "scratch" in shipped_configs()
    cfg = TrainConfig.from_toml("scratch")
    assert cfg.warmstart_teacher == "none" and cfg.warmstart_decisions == 0 and not cfg.init_policy
    assert cfg.opponent_weights == {"greedy": 1.0} and cfg.deadwood_shaping > 0
    cfg.timesteps, cfg.n_envs, cfg.n_steps, cfg.batch_size, cfg.workers = 256, 16, 16, 64, 1
    # the final evaluation plays single hands: an untrained policy's match to 100 lasts
    # thousands of its decisions, each a pass of the card head, and this test is about the training
    cfg.eval_every, cfg.final_eval_deals, cfg.eval_baselines, cfg.eval_mode = 0, 1, ["random"], "hands"
    cfg.progress, cfg.out = False, str(tmp_path / "run")
    report = Trainer(cfg, verbose=0).learn()
    assert report["timesteps"] == 256
    assert (tmp_path / "run" / "final_model.zip").is_file()


def test_an_unknown_config_name_lists_the_shipped_ones(tmp_path):
    with pytest.raises(ValueError, match="no such file, nor a shipped config.*scratch"):
        TrainConfig.from_toml("scratchy")
    with pytest.raises(ValueError, match="is a folder"):
        TrainConfig.from_toml(str(tmp_path))
