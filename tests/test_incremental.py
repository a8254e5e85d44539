"""What training no longer computes twice (issue 26): the snapshots' incremental trunks
(``OpponentPool``'s stack, ``TrunkCache``, ``act_snapshots_incremental``) against the
whole forward pass, and the PPO update's kept card features
(``FixedFeaturesRolloutBuffer``) against computing them again."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from extras import needs

needs("torch")
import torch  # noqa: E402

from rummy_env import Rules  # noqa: E402
from rummy_env.table import Table  # noqa: E402
from rummy_env.train.pool import (ActorNet, OpponentPool, TrunkCache, act_snapshots,  # noqa: E402
                                  act_snapshots_incremental)
from rummy_env.train.subproc import make_pool  # noqa: E402
from rummy_env.train.vec_env import SelfPlayVecEnv  # noqa: E402

WEIGHTS = {"snapshot": 0.6, "random": 0.1, "greedy": 0.15, "heuristic": 0.15}


def _net(rules: Rules, seed: int, features: str = "cards", trunk: int = 24, discard_head: bool = False) -> ActorNet:
    table = Table.of(rules)
    torch.manual_seed(seed)
    net = ActorNet(table.obs_size, [16], table.num_actions, features=features, trunk=trunk,
                   num_players=table.num_players, kind=table.kind, discard_head=discard_head)
    with torch.no_grad():  # weights large enough that the sums' order matters at float32's last bits
        for p in net.parameters():
            p.mul_(3.0)
        if discard_head:  # its last layer starts at zero: give it scores
            net.discard_scorer.net[-1].weight.normal_(0, 0.5)
    return net


def _play(venv: SelfPlayVecEnv, steps: int, seed: int, check=None) -> list[np.ndarray]:
    """Random legal learner moves; the observations after every step (and ``check()``)."""
    rng = np.random.default_rng(seed)
    out = [venv.reset()]
    for _ in range(steps):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()])
        out.append(venv.step(acts)[0])
        if check is not None:
            check()
    return out


@pytest.mark.parametrize("preset,n,discard_head", [("classic", 2, False), ("deadwood", 3, False), ("classic", 2, True)])
def test_stacked_snapshots_play_the_moves_of_the_whole_forward_pass(preset, n, discard_head):
    """Games against a stacked pool (10 snapshots added to 4 slots, so slots are reused)
    follow, step for step, the trajectories of the same games against the same nets
    answered whole (``stack=False``: ``act_snapshots``), at a 2- and a 3-player table, and
    with nets that have a discard head (``discard_head=True``)."""
    rules = Rules.make(preset, num_players=n)
    nets = [_net(rules, s, discard_head=discard_head) for s in range(10)]
    runs = []
    for stack in (True, False):
        pool = make_pool(WEIGHTS, 4, 0.5, seed=3, stack=stack)
        venv = SelfPlayVecEnv(rules, pool, n_envs=12, seed=7)
        for i, net in enumerate(nets[:6]):
            pool.add_net(copy.deepcopy(net), i)
        obs = _play(venv, 40, seed=1)
        for i, net in enumerate(nets[6:]):  # the oldest dropped: their slots take the new ones
            pool.add_net(copy.deepcopy(net), 6 + i)
        obs += _play(venv, 40, seed=2)
        assert pool.stackable is stack
        runs.append((obs, venv.opponent_decisions))
    (a, da), (b, db) = runs
    assert da == db and da > 400
    for t, (x, y) in enumerate(zip(a, b)):
        assert x.tobytes() == y.tobytes(), f"step {t}"


def test_each_seats_trunk_stays_the_whole_products_over_a_hand():
    """After every step, each remembered seat's pre-activation (``TrunkCache.h``, built
    from the seat's previous one plus the changed features' columns) is ``W x + b`` of its
    features computed whole, within 1e-4 (the sums' order), for the snapshot that
    answered it; a new hand forgets the game's seats."""
    rules = Rules.preset("classic")
    pool = make_pool({"snapshot": 1.0}, 3, 0.5, seed=3)
    for i in range(3):
        pool.add_net(_net(rules, 20 + i), i)
    venv = SelfPlayVecEnv(rules, pool, n_envs=8, seed=11)
    cache = venv._trunks
    by_serial = {a.serial: a.net for a in pool.snapshots}
    worst, checked = [0.0], [0]

    def check():
        for row in torch.nonzero(cache.serial >= 0).flatten().tolist():
            net = by_serial[int(cache.serial[row])]
            with torch.no_grad():
                want = net.features.trunk[0](cache.x[row][None])[0]
            worst[0] = max(worst[0], float((cache.h[row] - want).abs().max()))
            checked[0] += 1

    _play(venv, 60, seed=4, check=check)
    assert checked[0] > 300 and worst[0] < 1e-4
    g = venv.games[0]
    venv._deal(g)
    assert (cache.serial[0:2] == -1).all()


def test_the_pools_stack_holds_each_snapshots_trunk_in_its_slot():
    """Slots (2 x max_snapshots): the first free one; a dropped snapshot keeps its slot
    (``in_stack``: its hands in play still go incrementally) until no slot is free, then
    the one dropped longest ago gives its slot to the new snapshot (and leaves the stack);
    the stacked rows are the trunk's weights transposed; serials count the snapshots
    added; ``clear`` frees every slot. Not stacked: a bfloat16 pool, ``stack=False``, nets
    without a trunk (``stackable`` False), a net of another spec than the stacked ones."""
    rules = Rules.preset("classic")
    pool = OpponentPool({"snapshot": 1.0}, 2, 0.5, {})
    added = []
    for i in range(4):
        pool.add_net(_net(rules, i), i)
        added.append(pool.snapshots[-1])
    assert [a.slot for a in added] == [0, 1, 2, 3] and [a.serial for a in added] == [0, 1, 2, 3]
    assert pool.snapshots == added[2:] and all(pool.in_stack(a) for a in added)  # 0 and 1 dropped, still slotted
    pool.add_net(_net(rules, 4), 4)
    pool.add_net(_net(rules, 5), 5)
    added += pool.snapshots
    assert [a.slot for a in added] == [None, None, 2, 3, 0, 1]
    assert not pool.in_stack(added[0]) and not pool.in_stack(added[1]) and pool.in_stack(added[2])
    wt, bias, width = pool.stack()
    assert width == Table.of(rules).obs_size + 1208 == 1756 and wt.shape == (4 * 1756, 24)
    for a in added[2:]:
        lin = a.net.features.trunk[0]
        assert torch.equal(wt[a.slot * width:(a.slot + 1) * width], lin.weight.t())
        assert torch.equal(bias[a.slot], lin.bias)
    assert pool.stackable and pool.slotted == [added[4], added[5], added[2], added[3]]
    pool.clear()
    assert pool.snapshots == [] and pool.slotted == [None] * 4 and not pool.stackable
    assert all(a.slot is None for a in added)
    other = _net(rules, 9, trunk=12)
    pool.add_net(_net(rules, 5), 0)
    pool.add_net(other, 1)  # another spec: not in the stack
    assert pool.snapshots[1].slot is None and not pool.stackable
    for kw in ({"bf16": True}, {"stack": False}):
        p = OpponentPool({"snapshot": 1.0}, 2, 0.5, {}, **kw)
        p.add_net(_net(rules, 1), 0)
        assert not p.stackable
        with pytest.raises(ValueError, match="no snapshot of this pool is stacked"):
            p.stack()
    p = OpponentPool({"snapshot": 1.0}, 2, 0.5, {})
    p.add_net(_net(rules, 1, features="none", trunk=0), 0)
    assert not p.stackable


def test_incremental_answers_match_act_snapshots_and_refuse_bad_batches():
    """On one batch, fresh seats (nothing remembered): the actions of ``act_snapshots``
    with the same generators; a batch whose groups miss a row, keys out of range or
    repeated, or an agent outside the stack is refused, the cache unchanged."""
    rules = Rules.preset("classic")
    pool = make_pool({"snapshot": 1.0}, 3, 0.5, seed=3)
    for i in range(3):
        pool.add_net(_net(rules, 30 + i), i)
    venv = SelfPlayVecEnv(rules, pool, n_envs=10, seed=2)
    obs = venv.reset()
    masks = venv.masks
    groups = lambda: [(a, [np.random.default_rng(7 * i + r) for r in range(k)])  # noqa: E731
                      for i, (a, k) in enumerate(zip(pool.snapshots, (3, 4, 3)))]
    cache = TrunkCache(20)
    keys = np.arange(10) * 2
    got = act_snapshots_incremental(groups(), obs, masks, pool, cache, keys)
    np.testing.assert_array_equal(got, act_snapshots(groups(), obs, masks))
    before = (cache.x.clone(), cache.h.clone(), cache.serial.clone())
    bad = [
        ((groups()[:2], obs, masks, pool, cache, keys), "the groups answer 7 rows, the batch has 10"),
        ((groups(), obs, masks, pool, cache, np.arange(10) * 3), "keys must be 10 distinct rows of the cache"),
        ((groups(), obs, masks, pool, cache, np.zeros(10, int)), "keys must be 10 distinct rows"),
        ((groups(), obs, masks, pool, cache, keys[:9]), "keys must be 10 distinct rows"),
    ]
    outsider = copy.copy(pool.snapshots[0])
    bad.append((([(outsider, [np.random.default_rng(0)] * 10)], obs, masks, pool, cache, keys),
                "must be a snapshot in the pool's stack"))
    for args, msg in bad:
        with pytest.raises(ValueError, match=msg):
            act_snapshots_incremental(*args)
    assert all(torch.equal(x, y) for x, y in zip(before, (cache.x, cache.h, cache.serial)))
    with pytest.raises(ValueError, match="a TrunkCache needs rows >= 1, got 0"):
        TrunkCache(0)


def _ppo(env, seed: int, keep: bool):
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

    from rummy_env.train.features import CardFeatures
    from rummy_env.train.policy import FastMaskablePolicy, FixedFeaturesRolloutBuffer, SelfPlayPPO

    pk = {"features_extractor_class": CardFeatures, "net_arch": [16],
          "features_extractor_kwargs": {"cards": True, "trunk": 8, "num_players": 2, "kind": "standard"}}
    model = SelfPlayPPO(FastMaskablePolicy, env, n_steps=8, batch_size=16, n_epochs=2, seed=seed,
                        policy_kwargs=pk, device="cpu")
    assert isinstance(model.rollout_buffer, FixedFeaturesRolloutBuffer)
    if not keep:
        model.rollout_buffer = MaskableRolloutBuffer(8, env.observation_space, env.action_space, "cpu",
                                                     gamma=model.gamma, gae_lambda=model.gae_lambda,
                                                     n_envs=env.num_envs)
    return model


@pytest.mark.parametrize("workers", [1, 2])
def test_the_update_from_kept_card_features_is_the_update_from_observations(workers):
    """Two rollouts and updates with the card features kept in the buffer (from the
    pipelined rollout's forward passes with 2 workers, computed in ``get``, a step at a
    time, with SB3's loop in one process) end with the weights, bit for bit, of the
    same training that computes the features again from the observations in every
    minibatch; the buffer's samples are the observations followed by their features."""
    from rummy_env.train.subproc import MultiProcSelfPlayVecEnv

    rules = Rules.preset("classic")
    weights = {"random": 0.5, "heuristic": 0.5}
    params, envs = [], []
    try:
        for keep in (True, False):
            env = (SelfPlayVecEnv(rules, make_pool(weights, 1, 0.5, seed=2), 8, seed=4) if workers == 1 else
                   MultiProcSelfPlayVecEnv(rules, 8, 2, seed=4, reward_scale=0.01, weights=weights,
                                           max_snapshots=1, latest_prob=0.5))
            envs.append(env)
            model = _ppo(env, seed=0, keep=keep)
            fx = model.policy.features_extractor
            calls = []
            fx.fixed = lambda o, f=fx.fixed: calls.append(len(o)) or f(o)  # the buffer's own pass
            model.learn(total_timesteps=2 * 8 * 8)
            if keep:  # one pass per step in get, or none: the rollout's forward passes gave them
                assert calls == ([8] * 16 if workers == 1 else [])
            params.append({k: v.clone() for k, v in model.policy.state_dict().items()})
            if keep:
                buf = model.rollout_buffer
                obs = torch.as_tensor(buf.observations[:5])
                sample = buf._get_samples(np.arange(5))
                assert sample.observations.shape == (5, fx.core.out_dim) == (5, 1756)
                assert torch.equal(sample.observations, fx.core(obs))
                assert torch.equal(fx(sample.observations), fx(obs))
    finally:
        for env in envs:
            env.close()
    assert params[0].keys() == params[1].keys()
    for k in params[0]:
        assert torch.equal(params[0][k], params[1][k]), k


@pytest.mark.parametrize("preset,n,features,decks", [("classic", 2, "cards", 1), ("jokers", 3, "cards+jokers", 1),
                                                     ("deadwood", 3, "cards", 2)])
def test_snapshots_added_mid_hand_play_the_moves_of_the_whole_forward_pass(preset, n, features, decks):
    """A snapshot added every 5 steps with hands in play (max_snapshots 2: 4 slots), so
    dropped snapshots keep playing their hands, first from their kept slot, then whole
    once a newer snapshot has taken it: the trajectories are those of the same nets
    answered whole (``stack=False``), at a 2-player, a 3-player jokers (joker planes) and a
    3-player two-deck table."""
    rules = Rules.make(preset, num_players=n, decks=decks)
    nets = [_net(rules, s, features=features) for s in range(10)]
    runs = []
    for stack in (True, False):
        pool = make_pool({"snapshot": 0.8, "random": 0.2}, 2, 0.3, seed=3, stack=stack)
        venv = SelfPlayVecEnv(rules, pool, n_envs=6, seed=7)
        for i in range(2):
            pool.add_net(copy.deepcopy(nets[i]), i)
        rng = np.random.default_rng(1)
        obs, whole = [venv.reset()], 0
        for t in range(40):
            if t % 5 == 4:
                pool.add_net(copy.deepcopy(nets[2 + t // 5]), 2 + t // 5)
            obs.append(venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()]))[0])
            whole += sum(1 for g in venv.games for a in g.opps if hasattr(a, "net") and not pool.in_stack(a))
        runs.append((obs, venv.opponent_decisions, whole))
    (a, da, whole), (b, db, _) = runs
    assert da == db and whole > 0  # some games went on with a snapshot that had lost its slot
    for t, (x, y) in enumerate(zip(a, b)):
        assert x.tobytes() == y.tobytes(), f"step {t}"


def test_kept_features_hold_negative_values_and_fall_back_when_an_int8_cannot():
    """At a two-deck table a card can be seen twice, so some card features are negative:
    the buffer keeps them exactly (int8), and the network's output from a sample equals its
    output from the observation. A value an int8 cannot hold (a fraction, 300, NaN) makes
    the rollout keep none: its samples are the observations alone."""
    import gymnasium as gym

    from rummy_env import engine
    from rummy_env.observation import Encoder
    from rummy_env.train.features import CardFeatures
    from rummy_env.train.policy import FixedFeaturesRolloutBuffer

    rules = Rules.make("deadwood", num_players=2, decks=2)
    table, enc = Table.of(rules), Encoder.for_rules(rules)
    space = gym.spaces.Box(-np.inf, np.inf, (table.obs_size,), np.float32)
    fx = CardFeatures(space, cards=True, trunk=8, num_players=2, kind=table.kind)
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(40):
        st = engine.new_game(rules, seed=seed)
        while not st.hand_over and len(rows) < 4:
            o = enc.encode(st, st.current).astype(np.float32)
            if fx.fixed(torch.as_tensor(o)[None]).min() < 0:
                rows.append(o)
            acts = engine.legal_actions(st)
            engine.apply(st, acts[rng.integers(len(acts))])
    assert len(rows) == 4
    obs = np.stack(rows)
    for how in ("rollout", "get", "fraction", "too large", "nan"):
        buf = FixedFeaturesRolloutBuffer(1, space, gym.spaces.Discrete(table.num_actions), "cpu", n_envs=4,
                                         features=fx)
        feats = fx.fixed(torch.as_tensor(obs))
        kept = {"rollout": feats, "get": None, "fraction": feats + 0.5,
                "too large": feats.index_put((torch.tensor(1), torch.tensor(3)), torch.tensor(300.0)),
                "nan": feats.index_put((torch.tensor(2), torch.tensor(0)), torch.tensor(float("nan")))}[how]
        buf.add(obs, np.zeros((4, 1)), np.zeros(4), np.zeros(4), torch.zeros(4), torch.zeros(4),
                action_masks=np.ones((4, table.num_actions), bool), fixed=kept)
        buf.compute_returns_and_advantage(torch.zeros(4), np.zeros(4))
        sample = next(buf.get(4))
        order = torch.as_tensor(obs)[[int(np.flatnonzero((obs == r).all(1))[0]) for r in sample.observations[:, :table.obs_size].numpy()]]
        with torch.no_grad():
            if how in ("fraction", "too large", "nan"):
                assert not buf.exact and sample.observations.shape == (4, table.obs_size)
            else:
                assert buf.exact and sample.observations[:, table.obs_size:].min() < 0
                assert torch.equal(sample.observations, fx.core(order))
            assert torch.equal(fx(sample.observations), fx(order))


def test_a_pool_reloaded_with_other_nets_and_a_pool_that_keeps_none():
    """A pool reloaded with nets of another trunk width: the games' remembered trunks are
    dropped and play goes on with the new nets; ``max_snapshots = 0`` keeps no snapshot."""
    rules = Rules.preset("classic")
    pool = make_pool({"snapshot": 1.0}, 2, 0.5, seed=0)
    venv = SelfPlayVecEnv(rules, pool, 4, seed=0)
    pool.add_net(_net(rules, 1, trunk=24), 0)
    _play(venv, 3, seed=1)
    assert venv._trunks.h.shape == (8, 24)
    other = _net(rules, 2, trunk=12)
    pool.load_state({"steps": [5], "specs": [other.spec], "nets": [other.state_dict()]})
    _play(venv, 5, seed=2)
    assert venv._trunks.h.shape == (8, 12) and pool.stackable
    empty = OpponentPool({"snapshot": 1.0}, 0, 0.5, {})
    empty.add_net(_net(rules, 3), 0)
    assert empty.snapshots == [] and empty.slotted == []
