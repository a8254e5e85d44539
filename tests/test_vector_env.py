"""The RLlib backend's env (issue 26 item 3): ``SelfPlayVectorEnv`` is the SB3 backend's
batched games as a Gymnasium vector env in NEXT_STEP autoreset mode. Each game's
trajectory (observations, masks, rewards, ends of hands) is the one ``SelfPlayVecEnv``
gives for the same seed and the same moves; the step after a hand ends is a reset."""
from __future__ import annotations

import numpy as np
import pytest

from extras import needs

needs("sb3_contrib")
import gymnasium as gym  # noqa: E402

from rummy_env import Rules, engine, state_json  # noqa: E402
from rummy_env.observation import Encoder  # noqa: E402
from rummy_env.table import Table  # noqa: E402
from rummy_env.train.pool import ActorNet  # noqa: E402
from rummy_env.train.subproc import make_pool  # noqa: E402
from rummy_env.train.vec_env import SelfPlayVecEnv  # noqa: E402
from rummy_env.train.vector_env import SelfPlayVectorEnv  # noqa: E402

WEIGHTS = {"random": 0.4, "greedy": 0.3, "heuristic": 0.3}


def _pick(rng: np.random.Generator, mask_row: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask_row)))


def _vector(rules: Rules, n: int, seed: int, weights=WEIGHTS, **kw) -> SelfPlayVectorEnv:
    return SelfPlayVectorEnv(rules, make_pool(weights, 3, 0.5, seed=0), n, seed=seed, **kw)


def test_spaces_and_the_first_observations_are_each_learners_view():
    rules = Rules.make("classic")
    env = _vector(rules, 3, seed=4)
    table = Table.of(rules)
    assert env.single_action_space == gym.spaces.Discrete(579)
    assert env.single_observation_space["observation"].shape == (table.obs_size,)
    assert env.single_observation_space["action_mask"].dtype == np.int8
    if hasattr(gym.vector, "AutoresetMode"):  # gymnasium >= 1.1 (RLlib's 1.2.2, the main venv's newest)
        assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    obs, infos = env.reset()
    assert infos == {}
    assert obs["observation"].shape == (3, table.obs_size) and obs["observation"].dtype == np.float32
    assert obs["action_mask"].shape == (3, 579) and obs["action_mask"].dtype == np.int8
    enc = Encoder.for_rules(rules)
    for i, g in enumerate(env.games.games):
        assert g.state.current == g.seat and not g.state.hand_over  # the learner is to move
        assert np.array_equal(obs["observation"][i], enc.encode(g.state, g.seat))
        assert np.flatnonzero(obs["action_mask"][i]).tolist() == sorted(engine.legal_actions(g.state))
    assert obs["observation"] is not env.games.obs  # a copy


@pytest.mark.parametrize("preset,n,reward", [("classic", 2, "points"), ("turnover", 3, "win"), ("rum500", 2, "points"),
                                                ("classic", 2, "match")])
def test_each_games_trajectory_is_the_sb3_envs_and_a_hands_end_is_next_step_autoreset(preset, n, reward):
    """Both envs from one seed, each game's moves from its own generator: the vector env
    gives per game the SB3 env's observations, masks, rewards and ends of hands; the
    terminal step shows the ended hand (the SB3 env's terminal_observation, a zero mask),
    and the game's next step ignores its action and shows the new hand."""
    rules = Rules.make(preset, num_players=n)
    games, seed, scale = 4, 21, 0.01
    sb3 = SelfPlayVecEnv(rules, make_pool(WEIGHTS, 3, 0.5, seed=0), games, seed=seed, reward_scale=scale,
                         reward=reward)
    vec = _vector(rules, games, seed, reward_scale=scale, reward=reward)
    ref_obs = sb3.reset()
    ref_masks = sb3.action_masks().astype(np.int8)
    obs, _ = vec.reset()
    assert np.array_equal(obs["observation"], ref_obs) and np.array_equal(obs["action_mask"], ref_masks)

    def trajectory(step_fn, first_obs, first_masks, decisions: int) -> list[list[tuple]]:
        rngs = [np.random.default_rng([seed, i]) for i in range(games)]
        out: list[list[tuple]] = [[("obs", first_obs[i].tobytes(), first_masks[i].tobytes())] for i in range(games)]
        while min(sum(1 for e in t if e[0] == "act") for t in out) < decisions:
            step_fn(rngs, out)
        return out

    def sb3_step(rngs, out) -> None:
        masks = sb3.action_masks()
        acts = np.array([_pick(rngs[i], masks[i]) for i in range(games)])
        o, r, d, infos = sb3.step(acts)
        m = sb3.action_masks().astype(np.int8)
        for i in range(games):
            out[i].append(("act", int(acts[i])))
            out[i].append(("reward", float(r[i]), bool(d[i])))
            out[i].append(("obs", o[i].tobytes(), m[i].tobytes()))
            if d[i]:
                out[i][-2:-2] = [("final", infos[i]["terminal_observation"].tobytes())]

    fresh = np.zeros(games, dtype=bool)
    ignored = []

    def vec_step(rngs, out) -> None:
        nonlocal obs
        acts = np.array([0 if fresh[i] else _pick(rngs[i], obs["action_mask"][i]) for i in range(games)])
        before = vec.steps
        obs, r, term, trunc, infos = vec.step(acts)
        assert not trunc.any()
        assert vec.steps - before == games - fresh.sum()  # the ignored actions are no decisions
        for i in range(games):
            if fresh[i]:  # a reset: the new hand's first view, nothing else
                assert r[i] == 0 and not term[i] and obs["action_mask"][i].any()
                ignored.append(i)
                out[i].append(("obs", obs["observation"][i].tobytes(), obs["action_mask"][i].tobytes()))
                continue
            out[i].append(("act", int(acts[i])))
            if term[i]:
                st_final = obs["observation"][i].tobytes()
                assert not obs["action_mask"][i].any()  # nothing to do in an ended hand
                assert infos["_win"][i] and infos["opponent"][i]
                out[i].append(("final", st_final))
                out[i].append(("reward", float(r[i]), True))
            else:
                out[i].append(("reward", float(r[i]), False))
                out[i].append(("obs", obs["observation"][i].tobytes(), obs["action_mask"][i].tobytes()))
        fresh[:] = term

    want = trajectory(sb3_step, ref_obs, ref_masks, 60)
    got = trajectory(vec_step, obs["observation"], obs["action_mask"], 60)
    # the SB3 env's step that ends a hand gives (final, reward, next hand's obs); the vector
    # env's gives (final, reward) and its reset step the obs: the same entries in one order.
    # The vector env spends a step on each reset, so each game's lists are compared as far
    # as both go (at least 60 decisions)
    for i in range(games):
        k = min(len(got[i]), len(want[i]))
        assert sum(1 for e in got[i][:k] if e[0] == "act") >= 60
        assert got[i][:k] == want[i][:k], f"game {i}"
    assert ignored, "no hand ended: the test saw no autoreset"


def test_a_hands_reward_is_the_learners_payoff_in_points_times_the_scale():
    """Game 0 is set to a position where the learner (seat 0, both seats melded earlier)
    goes out by discarding KS; the opponent holds 9D 4C AH KC: 9 + 4 + 1 + 10 = 24 points
    (RULES.md §5), so with ``reward_scale`` 0.5 its reward is 12.0, ``points`` 24 and
    ``win`` 1; every other game's reward that step is 0 unless its hand ended, and then
    it is 0.5 x its own payoff."""
    from test_batched import ONE_MOVE

    rules = Rules.make("classic")
    env = _vector(rules, 3, seed=3, reward_scale=0.5)
    obs, _ = env.reset()
    g = env.games.games[0]
    g.seat, g.state = 0, state_json.from_json(ONE_MOVE)
    env.games._write_obs()  # the games' observations and masks, of the position set
    acts = np.array([engine.action_id(g.state, "discard KS")]
                    + [_pick(np.random.default_rng(0), m) for m in obs["action_mask"][1:]])
    obs, r, term, _, infos = env.step(acts)
    assert term[0] and r[0] == 12.0 and infos["points"][0] == 24 and infos["win"][0] == 1.0
    for i in (1, 2):
        assert r[i] == (0.5 * infos["points"][i] if term[i] else 0.0)


def test_a_match_reward_goes_on_after_a_hand_and_a_cut_match_is_truncated(monkeypatch):
    """``reward="match"``: the learner's 24-point hand at 0-0 decides nothing (target 100,
    RULES.md §7), so the game goes on in the next hand (reward 0, neither terminated nor
    truncated); with ``MAX_HANDS`` 1 the same step truncates the match instead."""
    import rummy_env.train.vec_env as vec_env_module
    from test_batched import ONE_MOVE

    def step_the_going_out(env):
        env.reset()
        g = env.games.games[0]
        g.seat, g.state = 0, state_json.from_json(ONE_MOVE)
        env.games._write_obs()
        return env.step(np.array([engine.action_id(g.state, "discard KS")]))

    env = _vector(Rules.make("classic"), 1, seed=3, reward="match")
    obs, r, term, trunc, _ = step_the_going_out(env)
    assert r[0] == 0.0 and not term[0] and not trunc[0] and obs["action_mask"][0].any()
    assert env.games.games[0].state.scores == [24, 0]
    monkeypatch.setattr(vec_env_module, "MAX_HANDS", 1)
    obs, r, term, trunc, infos = step_the_going_out(env)
    assert r[0] == 0.0 and not term[0] and trunc[0] and not obs["action_mask"][0].any()
    assert infos["points"][0] == 24 and infos["win"][0] == 0.0


def test_an_illegal_action_or_a_bad_batch_is_refused_and_changes_nothing():
    rules = Rules.make("classic")
    env = _vector(rules, 3, seed=8)
    obs, _ = env.reset()
    snapshot = [g.state.copy() for g in env.games.games]
    illegal = int(np.flatnonzero(obs["action_mask"][1] == 0)[0])
    acts = np.array([_pick(np.random.default_rng(0), m) for m in obs["action_mask"]])
    acts[1] = illegal
    with pytest.raises(ValueError, match=f"game 1: action {illegal} is not legal"):
        env.step(acts)
    for bad, msg in ((acts[:2], r"shape \(3,\)"), (acts.astype(np.float32), "ints"), (np.array([0, 0, 600]), "game")):
        with pytest.raises(ValueError, match=msg):
            env.step(bad)
    for g, st in zip(env.games.games, snapshot):  # no game moved
        assert state_json.to_json(g.state) == state_json.to_json(st)
    assert env.steps == 0
    with pytest.raises(ValueError, match="no options"):
        env.reset(options={"x": 1})
    for bad in ("7", [1, 2, 3], 1.5, True, -1):
        with pytest.raises(ValueError, match="seed must be an int >= 0 or None"):
            env.reset(seed=bad)
    for g, st in zip(env.games.games, snapshot):  # nor did a refused reset deal
        assert state_json.to_json(g.state) == state_json.to_json(st)


def test_seeded_resets_repeat_their_deals_and_resets_without_a_seed_deal_afresh():
    rules = Rules.make("classic")
    env = _vector(rules, 4, seed=1)
    a = env.reset(seed=9)[0]["observation"]
    b = env.reset(seed=9)[0]["observation"]
    c = env.reset()[0]["observation"]
    d = env.reset()[0]["observation"]
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(c, d)
    assert np.array_equal(_vector(rules, 4, seed=1).reset()[0]["observation"],
                          _vector(rules, 4, seed=1).reset(seed=1)[0]["observation"])


def test_snapshots_join_the_pool_and_play_as_opponents():
    rules = Rules.make("classic")
    import torch

    env = _vector(rules, 8, seed=2, weights={"snapshot": 0.7, "random": 0.3})
    table = Table.of(rules)
    torch.manual_seed(0)  # the snapshot's weights, so the hands played are the same every run
    net = ActorNet(table.obs_size, [16], table.num_actions, "Tanh", "cards", 32, 2, table.kind)
    for step in (0, 10, 20, 30):  # max_snapshots 3: the oldest is dropped
        env.add_snapshot(net.spec, net.state_dict(), step)
    assert env.pool.snapshot_steps == [10, 20, 30]
    obs, _ = env.reset()
    kinds = []
    rng = np.random.default_rng(1)
    for _ in range(300):
        obs, _, term, _, infos = env.step(np.array([_pick(rng, m) if m.any() else 0 for m in obs["action_mask"]]))
        kinds += [infos["opponent"][i] for i in np.flatnonzero(term)]
    assert kinds.count("snapshot") > 0 and kinds.count("random") > 0  # both kinds sat at the table
    state = env.pool.state()
    other = _vector(rules, 2, seed=0)
    other.load_pool(state)
    assert other.pool.snapshot_steps == [10, 20, 30]


def test_num_envs_must_be_a_positive_int():
    rules = Rules.make("classic")
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="num_envs must be an int >= 1"):
            _vector(rules, bad, seed=0)


def test_bad_arguments_pools_and_lifecycle_are_refused_and_change_nothing():
    import torch

    rules = Rules.make("classic")
    table = Table.of(rules)
    pool = make_pool(WEIGHTS, 3, 0.5, seed=0)
    for kw, msg in ((dict(reward_scale="x"), "reward_scale must be a finite number"),
                    (dict(reward_scale=float("nan")), "reward_scale must be a finite number"),
                    (dict(seed=-1), "seed must be an int >= 0"), (dict(seed=True), "seed must be an int >= 0"),
                    (dict(rotate_steps=True), "rotate_steps must be an int >= 0")):
        with pytest.raises(ValueError, match=msg):
            SelfPlayVectorEnv(rules, pool, 2, **kw)
    with pytest.raises(ValueError, match="rules must be a Rules"):
        SelfPlayVectorEnv("classic", pool, 2)
    with pytest.raises(ValueError, match="pool must be an OpponentPool"):
        SelfPlayVectorEnv(rules, {}, 2)

    env = _vector(rules, 3, seed=5, weights={"snapshot": 0.5, "random": 0.5})
    with pytest.raises(ValueError, match=r"call reset\(\) before step\(\)"):
        env.step(np.zeros(3, dtype=np.int64))
    torch.manual_seed(0)
    good = ActorNet(table.obs_size, [16], table.num_actions, "Tanh", "cards", 32, 2, table.kind)
    other = Table.of(Rules.make("turnover", num_players=3))
    alien = ActorNet(other.obs_size, [16], other.num_actions, "Tanh", "none", 0)
    env.add_snapshot(good.spec, good.state_dict(), 7)
    for args, msg in (((alien.spec, alien.state_dict(), 8), "a net for observations of"),
                      ((good.spec, alien.state_dict(), 8), "not an ActorNet of its spec"),
                      ((dict(good.spec, activation="Nope"), good.state_dict(), 8), "not an ActorNet of its spec"),
                      (("spec", good.state_dict(), 8), "the spec must be a dict"),
                      ((good.spec, good.state_dict(), -5), "must be an int >= 0"),
                      ((good.spec, good.state_dict(), "x"), "must be an int >= 0")):
        with pytest.raises(ValueError, match=msg):
            env.add_snapshot(*args)
        assert env.pool.snapshot_steps == [7]  # unchanged
    state = env.pool.state()
    for bad, msg in ((None, "a dict of lists"), ({"steps": [5]}, "a dict of lists"),
                     ({"steps": [5, 6], "specs": [good.spec], "nets": [good.state_dict()] * 2}, "one length"),
                     ({"steps": [5, 6], "specs": [good.spec, alien.spec], "nets": [good.state_dict()] * 2},
                      "load_pool snapshot 1")):
        with pytest.raises(ValueError, match=msg):
            env.load_pool(bad)
        assert env.pool.snapshot_steps == [7]  # nothing loaded, nothing lost
    env.load_pool({"steps": [1, 2, 3, 4], "specs": [good.spec] * 4, "nets": [good.state_dict()] * 4})
    assert env.pool.snapshot_steps == [2, 3, 4]  # max_snapshots 3: the oldest dropped, as add_snapshot does
    env.load_pool(state)
    assert env.pool.snapshot_steps == [7]

    env.reset(seed=3)
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="no options"):
        env.reset(options=[])
    env.close()
    with pytest.raises(ValueError, match="closed"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="closed"):
        env.reset()


def test_a_seeded_reset_repeats_the_game_with_snapshot_windows_too():
    """``reset(seed)`` restarts every stream the games draw from, the snapshot windows'
    included: the same seed twice on one env gives the same trajectory."""
    import torch

    rules = Rules.make("classic")
    table = Table.of(rules)
    env = _vector(rules, 4, seed=0, weights={"snapshot": 0.9, "random": 0.1}, rotate_steps=3)
    torch.manual_seed(1)
    for step in range(3):
        net = ActorNet(table.obs_size, [16], table.num_actions, "Tanh", "cards", 32, 2, table.kind)
        env.add_snapshot(net.spec, net.state_dict(), step)

    def run() -> list[bytes]:
        obs, _ = env.reset(seed=5)
        rng = np.random.default_rng(0)
        out = []
        for _ in range(120):
            obs, r, term, _, _ = env.step(np.array([_pick(rng, m) if m.any() else 0 for m in obs["action_mask"]]))
            out.append(obs["observation"].tobytes() + r.tobytes())
        return out

    assert run() == run()
