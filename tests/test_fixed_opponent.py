"""The pool's "fixed" opponent (``TrainConfig.fixed_opponent``, the benchmark's best
response): a trained policy plays as a greedy snapshot of its actor, answered in the
batched env's snapshot path, with the moves the policy's own ``act`` makes."""
from __future__ import annotations

import numpy as np
import pytest

from extras import needs

needs("sb3_contrib")

from rummy_env import Rules  # noqa: E402
from rummy_env.agents import GreedyAgent, make_agent  # noqa: E402
from rummy_env.agents.ppo_agent import PPOAgent  # noqa: E402
from rummy_env.train.pool import OpponentPool, SnapshotAgent  # noqa: E402
from rummy_env.train.subproc import SharedAgent, fixed_agent, make_pool  # noqa: E402
from rummy_env.train.vec_env import SelfPlayVecEnv  # noqa: E402


@pytest.fixture(scope="module")
def shipped() -> PPOAgent:
    agent = make_agent("pretrained")
    assert isinstance(agent, PPOAgent)
    return agent


def test_a_trained_fixed_opponent_is_a_greedy_snapshot_and_a_scripted_one_is_shared(shipped):
    frozen = fixed_agent(shipped, "pretrained")
    assert isinstance(frozen, SnapshotAgent) and frozen.greedy and frozen.name == "pretrained"
    assert frozen.net.spec["features"] == "cards+plan" and frozen.net.spec["discard_head"] == "cards+stock"
    heur = fixed_agent(make_agent("heuristic", seed=0), "heuristic")
    assert isinstance(heur, SharedAgent) and heur.name == "heuristic"
    pool = make_pool({"fixed": 1.0}, 1, 0.5, "pretrained", seed=0)
    assert isinstance(pool.baselines["fixed"], SnapshotAgent) and not pool.in_stack(pool.baselines["fixed"])


def _play(pool: OpponentPool, steps: int) -> tuple[list, list, list]:
    """``steps`` steps of 6 classic games whose learner is the greedy agent; every step's
    observations, rewards and dones."""
    venv = SelfPlayVecEnv(Rules.make("classic"), pool, n_envs=6, seed=11)
    obs = venv.reset()
    learner = GreedyAgent(seed=0)
    seen, rewards, dones = [obs.copy()], [], []
    for _ in range(steps):
        acts = np.array([learner.act(o, m) for o, m in zip(obs, venv.action_masks().astype(np.int8))])
        obs, rew, done, _ = venv.step(acts)
        seen.append(obs.copy())
        rewards.append(rew.copy())
        dones.append(done.copy())
    return seen, rewards, dones


def test_the_batched_fixed_policy_plays_the_games_its_own_act_plays(shipped):
    """The same games against the policy played one game at a time through its ``act``
    (``SharedAgent``, the path before) and as the batched greedy snapshot: every step's
    observations, rewards and dones agree, so its moves are the policy's argmax moves
    (a hand's 6 games ask it for several moves a round, so the batch path is exercised)."""
    weights = {"fixed": 1.0}
    one_by_one = OpponentPool(weights, 1, 0.5, {"fixed": SharedAgent(shipped, "pretrained")})
    batched = make_pool(weights, 1, 0.5, "pretrained", seed=0)
    want = _play(one_by_one, 60)
    got = _play(batched, 60)
    assert sum(int(d.sum()) for d in want[2]) >= 2  # hands ended: the opponent moved to the end
    for w, g in zip(want[0], got[0]):
        np.testing.assert_array_equal(w, g)
    for w, g in zip(want[1] + want[2], got[1] + got[2]):
        np.testing.assert_array_equal(w, g)


def test_the_fixed_snapshot_is_shared_by_every_game_not_copied():
    pool = make_pool({"fixed": 1.0}, 1, 0.5, "pretrained", seed=0)
    venv = SelfPlayVecEnv(Rules.make("classic"), pool, n_envs=4, seed=3)
    venv.reset()
    frozen = pool.baselines["fixed"]
    for g in venv.games:
        assert "fixed" not in g.own
        assert all(o is frozen for q, o in enumerate(g.opps) if q != g.seat)


@pytest.mark.parametrize("kw, words", [
    (dict(rules="classic", fixed_opponent="pretrained:rum500", opponent_weights={"fixed": 1.0}),
     "fixed_opponent 'pretrained:rum500' cannot play this run's table: it was trained for a 2-player rum500 "
     "table, this is a 2-player standard table"),
    (dict(rules="turnover", num_players=4, fixed_opponent="pretrained", opponent_weights={"fixed": 1.0}),
     "fixed_opponent 'pretrained' cannot play this run's table: it was trained for a 2-player standard table, "
     "this is a 4-player standard table"),
    (dict(rules="classic", fixed_opponent="search:samples=1,guide=pretrained:rum500", opponent_weights={"fixed": 1.0}),
     "cannot play this run's table: its guide 'pretrained:rum500' was trained for a 2-player rum500 table"),
    (dict(fixed_opponent="heuristic"), "fixed_opponent names 'heuristic', but opponent_weights gives the kind "
                                       "'fixed' no weight, so it would never play"),
    (dict(fixed_opponent="heuristic", opponent_weights={"fixed": 0, "random": 1.0}), "gives the kind 'fixed' no weight"),
    (dict(opponent_weights={"fixed": -1, "random": 2.0}), r"opponent_weights\['fixed'\] must be a number >= 0, got -1"),
    (dict(opponent_weights={1: 1.0}), "opponent_weights's keys must be names \\(strings\\), got the key 1"),
])
def test_a_fixed_opponent_that_cannot_play_or_would_never_play_is_refused_before_training(kw, words):
    from rummy_env.train.config import TrainConfig

    with pytest.raises(ValueError, match=words):
        TrainConfig(**kw).validate()
