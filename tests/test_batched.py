"""The batched self-play env (issue 13): many games in lock-step give the trajectories
of the same games played one by one, games that end at different steps stay in step,
and the shared-memory worker path gives the arrays of the in-process path."""
from __future__ import annotations

import copy
import os
from collections import deque

import numpy as np
import pytest

from extras import needs

needs("sb3_contrib")
import torch  # noqa: E402

from rummy_env import Rules, SingleAgentEnv, engine, state_json  # noqa: E402
from rummy_env.observation import (Encoder, action_mask, action_mask_into, action_masks_into,  # noqa: E402
                                   obs_size)
from rummy_env.train.pool import ActorNet, SnapshotAgent  # noqa: E402
from rummy_env.train.subproc import MultiProcSelfPlayVecEnv, make_pool  # noqa: E402
from rummy_env.actions import num_actions, table_kind  # noqa: E402
from rummy_env.train.vec_env import SelfPlayVecEnv  # noqa: E402

WEIGHTS = {"snapshot": 0.4, "random": 0.2, "greedy": 0.2, "heuristic": 0.2}


def _positions(rules: Rules, games: int, seed: int) -> tuple[list, list]:
    """Every seat's view of every position of ``games`` random-play hands."""
    rng = np.random.default_rng(seed)
    states, seats = [], []
    for g in range(games):
        st = engine.new_game(rules, seed=seed + g)
        while True:
            for s in range(rules.num_players):
                states.append(st.copy())
                seats.append(s)
            if st.hand_over:
                break
            legal = engine.legal_actions(st)
            engine.apply(st, legal[int(rng.integers(len(legal)))])
    return states, seats


@pytest.mark.parametrize("preset,n", [("classic", 2), ("turnover", 3), ("turnover", 6), ("rum500", 2), ("rum500", 4)])
def test_encode_many_and_masks_into_are_byte_for_byte_encode_and_action_mask(preset, n):
    rules = Rules.make(preset, num_players=n)
    states, seats = _positions(rules, 3, seed=11)
    ref = np.stack([Encoder.for_rules(rules).encode(s, q) for s, q in zip(states, seats)])
    dim = obs_size(n, table_kind(rules))
    out = np.full((len(states) + 2, dim), 7.0, dtype=np.float32)
    Encoder.for_rules(rules).encode_many(states, seats, out)
    assert out[:-2].tobytes() == ref.tobytes()
    assert (out[-2:] == 7.0).all()  # rows past the batch are left alone
    row = np.full(dim, -1.0, dtype=np.float32)
    enc = Encoder.for_rules(rules)
    for i in (0, len(states) // 2, len(states) - 1):
        assert enc.encode_into(states[i], seats[i], row) is row
        assert row.tobytes() == ref[i].tobytes()
    legals = [engine.legal_actions(s) for s in states]
    masks = np.full((len(states) + 1, num_actions(rules)), 5, dtype=np.int8)
    action_masks_into(legals, masks)
    assert (masks[:-1] == np.stack([action_mask(x, size=num_actions(rules)) for x in legals])).all()
    assert (masks[-1] == 5).all()
    one = np.ones(num_actions(rules), dtype=bool)
    assert (action_mask_into(legals[1], one) == action_mask(legals[1], size=num_actions(rules)).astype(bool)).all()


def test_encode_many_takes_each_states_own_rules_and_checks_out():
    a = Rules.make("classic")
    b = Rules.make("classic", layoffs=False, rummy_multiplier=1)
    sa, sb = engine.new_game(a, seed=1), engine.new_game(b, seed=2)
    out = np.zeros((3, obs_size(2)), dtype=np.float32)
    enc = Encoder(2)
    enc.encode_many([sa, sb, sa], [0, 1, 1], out)
    for row, st, seat in zip(out, (sa, sb, sa), (0, 1, 1)):
        assert row.tobytes() == Encoder(2).encode(st, seat).tobytes()
    with pytest.raises(ValueError, match="float32"):
        enc.encode_many([sa], [0], np.zeros((1, obs_size(2))))
    with pytest.raises(ValueError, match=r"\[>= 2"):
        enc.encode_many([sa, sb], [0, 0], np.zeros((1, obs_size(2)), dtype=np.float32))


def _snapshot(rules: Rules, seed: int) -> ActorNet:
    torch.manual_seed(seed)
    return ActorNet(obs_size(rules.num_players), [16], num_actions(rules))


class _Acts:
    """An opponent for ``SingleAgentEnv`` that only acts (no ``seed``: the env must not reseed it)."""

    def __init__(self, agent):
        self.agent = agent

    def act(self, observation, action_mask):
        return self.agent.act(observation, action_mask)


class _SnapshotActs:
    """A snapshot answering one position at a time, its Gumbel noise from ``rng``."""

    def __init__(self, snap: SnapshotAgent, rng: np.random.Generator):
        self.snap, self.rng = snap, rng

    def act(self, observation, action_mask):
        return int(self.snap.act_batch(observation[None], action_mask[None], rng=self.rng)[0])


def _record_deals(venv: SelfPlayVecEnv) -> dict[int, dict]:
    """Wrap ``venv._deal`` to keep, per game, what its latest hand started from: the deal,
    the learner's seat, copies of the game's generator and of its own baselines, and the
    opponents' agents."""
    deals: dict[int, dict] = {}
    index = {id(g): i for i, g in enumerate(venv.games)}
    deal = venv._deal

    def recording(g):
        deal(g)
        kind_of = {id(a): k for k, a in g.own.items()}
        deals[index[id(g)]] = {"state": g.state.copy(), "seat": g.seat, "rng": copy.deepcopy(g.rng),
                               "own": copy.deepcopy(g.own),
                               "opps": [None if a is None else a if isinstance(a, SnapshotAgent) else kind_of[id(a)]
                                        for a in g.opps]}
    venv._deal = recording
    return deals


def _single_env(rules: Rules, d: dict) -> tuple[SingleAgentEnv, np.ndarray]:
    """The hand a recorded deal starts, played by ``SingleAgentEnv`` against the same agents."""
    rng = copy.deepcopy(d["rng"])
    opps = [_SnapshotActs(a, rng) if isinstance(a, SnapshotAgent) else _Acts(copy.deepcopy(d["own"])[a])
            for q, a in enumerate(d["opps"]) if q != d["seat"]]
    env = SingleAgentEnv(rules, opponents=opps, learner_seat=d["seat"], reward_scale=0.01)
    st = d["state"]
    env.reset(options={"state": state_json.to_json(st)})
    obs = env.env.observe(env.env.possible_agents[d["seat"]])["observation"]
    # the shuffles of a recycle come from the position's RNG: the deal's own (no recycle can have happened yet)
    env.env.state.rng.setstate(st.rng.getstate())
    return env, obs


@pytest.mark.parametrize("preset,n,steps", [("classic", 2, 70), ("turnover", 3, 50)])
def test_batched_stepping_gives_the_trajectories_of_one_game_at_a_time(preset, n, steps):
    """Six games in lock-step against snapshot, random, greedy and heuristic opponents:
    each game's observations, masks, rewards and dones are those of ``SingleAgentEnv``
    playing the same deal against the same agents (same generators), hand after hand."""
    rules = Rules.make(preset, num_players=n)
    pool = make_pool(WEIGHTS, 4, 0.5, seed=3)
    pool.add_net(_snapshot(rules, 0), 0)
    pool.add_net(_snapshot(rules, 1), 1)
    venv = SelfPlayVecEnv(rules, pool, n_envs=6, seed=5)
    deals = _record_deals(venv)
    obs = venv.reset()
    singles = {i: _single_env(rules, deals[i]) for i in range(6)}
    for i, (env, first) in singles.items():
        assert obs[i].tobytes() == first.tobytes()
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(steps):
        masks = venv.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        for i, (env, _) in singles.items():
            assert (env.action_masks() == masks[i]).all()
        obs, rew, done, infos = venv.step(acts)
        for i in range(6):
            env, _ = singles[i]
            o, r, term, trunc, _ = env.step(int(acts[i]))
            assert bool(done[i]) == (term or trunc)
            assert rew[i] == pytest.approx(r, rel=1e-6, abs=1e-9)
            if done[i]:
                ends += 1
                assert infos[i]["terminal_observation"].tobytes() == o.tobytes()
                singles[i] = _single_env(rules, deals[i])  # the game was re-dealt at once
                o = singles[i][1]
            assert obs[i].tobytes() == o.tobytes(), f"game {i}"
    assert ends >= 3  # hands did end (and restart) along the way


# Seat 0 (to play, has drawn) goes out by melding 4H 5H 6H and discarding KS: 2 learner moves.
# Seat 1 holds 9D 4C AH KC = 9 + 4 + 1 + 10 = 24 points. Both melded earlier: no rummy.
def _going_out(hand0: list[str], melds: list[list[str]]) -> dict:
    hand1 = ["9D", "4C", "AH", "KC"]
    used = set(hand0 + hand1 + [c for m in melds for c in m])
    rest = [r + s for s in "CDHS" for r in "A23456789TJQK" if r + s not in used]
    return {"hands": [hand0, hand1], "melds": melds, "discard": [rest[0]], "stock": rest[1:],
            "current_player": 0, "phase": "play", "has_melded": [True, True]}


TWO_MOVES = _going_out(["4H", "5H", "6H", "KS"], [["2S", "3S", "4S", "5S", "6S", "7S", "8S"],
                                                  ["5C", "6C", "7C", "8C", "9C", "TC"]])
ONE_MOVE = _going_out(["KS"], [["2S", "3S", "4S", "5S", "6S", "7S", "8S"], ["5C", "6C", "7C", "8C", "9C", "TC"],
                               ["4H", "5H", "6H"]])


def test_games_ending_at_different_steps_stay_in_step():
    """Game 0 goes out on its 2nd learner move, game 1 on its 1st, game 2 plays on: each
    finished game is re-dealt at once and the others go on from where they were."""
    rules = Rules.make("classic")
    pool = make_pool({"greedy": 1.0}, 1, 0.5, seed=0)
    venv = SelfPlayVecEnv(rules, pool, n_envs=3, seed=2)
    venv.reset()
    for i, pos in ((0, TWO_MOVES), (1, ONE_MOVE)):
        g = venv.games[i]
        g.seat, g.state = 0, state_json.from_json(pos)
    g2 = venv.games[2]
    before = g2.state.copy()

    a0 = engine.action_id(venv.games[0].state, "meld 4H 5H 6H")
    a1 = engine.action_id(venv.games[1].state, "discard KS")
    a2 = engine.legal_actions(g2.state)[0]
    obs, rew, done, infos = venv.step(np.array([a0, a1, a2]))
    assert done.tolist() == [False, True, False]
    assert rew.tolist() == [0.0, pytest.approx(0.24), 0.0]  # seat 1's 24 deadwood points, scale 0.01
    assert infos[1]["points"] == 24 and infos[1]["episode"] == {"r": pytest.approx(0.24), "l": 1}
    assert infos[0] == {} and infos[2] == {}
    # game 0 went on: 4H 5H 6H are on the table, KS alone in hand
    enc = Encoder(2)
    assert obs[0].tobytes() == enc.encode(venv.games[0].state, 0).tobytes()
    assert engine.legal_actions(venv.games[0].state) == [engine.action_id(venv.games[0].state, "discard KS")]
    # game 1 was re-dealt: a fresh hand with the learner to move
    g1 = venv.games[1]
    assert not g1.state.hand_over and g1.state.current == g1.seat
    assert g1.state.hands[g1.seat].bit_count() == 10 and len(g1.state.stock) in (30, 31)
    assert obs[1].tobytes() == enc.encode(g1.state, g1.seat).tobytes()
    # game 2: the learner's draw (legal id 0, "draw stock") and nothing else: a draw does not
    # end the turn, so the opponent does not move and the position is the draw applied alone
    assert a2 == engine.DRAW_STOCK
    engine.apply(before, a2)
    assert state_json.to_json(g2.state) == state_json.to_json(before)
    assert g2.state.phase == engine.PLAY and g2.state.current == g2.seat
    masks = venv.action_masks()
    assert (masks[1] == action_mask(engine.legal_actions(g1.state)).astype(bool)).all()

    a0 = engine.action_id(venv.games[0].state, "discard KS")
    a1 = engine.legal_actions(g1.state)[0]
    a2 = engine.legal_actions(g2.state)[0]
    obs, rew, done, infos = venv.step(np.array([a0, a1, a2]))
    assert done.tolist() == [True, False, False]
    assert rew.tolist() == [pytest.approx(0.24), 0.0, 0.0]
    assert infos[0]["episode"] == {"r": pytest.approx(0.24), "l": 2} and infos[0]["win"] == 1.0
    g0 = venv.games[0]
    assert g0.state.hands[g0.seat].bit_count() == 10 and g0.state.hand_number == 0
    assert g1.length == 1 and g0.length == 0  # learner decisions of the current hand


@pytest.mark.parametrize("reward,hand_part", [("match", 0.0), ("points+match", 0.24)])
def test_match_episodes_carry_the_totals_and_reward_the_match_result(reward, hand_part):
    """``reward="match"`` (RULES.md §7, target 100 heads-up): game 0's learner goes out for
    24 points at 0-0, so the match goes on: reward 0, no end, the next hand dealt at once
    with the totals 24-0, the deal passed left (the dealer moves from seat 1 to seat 0, so
    seat 1 leads and the learner moves after it), the same seat and opponent.
    Game 1's learner goes out for 24 at 90-30: 114 reaches the target, it wins the match:
    reward +1, the episode ends with the match's info, and a new match is dealt. Under
    "points+match" each of those hands also pays its points (24 x 0.01)."""
    rules = Rules.make("classic")
    pool = make_pool({"greedy": 1.0}, 1, 0.5, seed=0)
    venv = SelfPlayVecEnv(rules, pool, n_envs=2, seed=2, reward=reward)
    venv.reset()
    for i, scores in ((0, [0, 0]), (1, [90, 30])):
        g = venv.games[i]
        g.seat, g.state = 0, state_json.from_json(ONE_MOVE)
        g.state.scores = scores
    opp0 = venv.games[0].opps[1]
    acts = np.array([engine.action_id(g.state, "discard KS") for g in venv.games])
    obs, rew, done, infos = venv.step(acts)
    assert rew.tolist() == [pytest.approx(hand_part), pytest.approx(1.0 + hand_part)]
    assert done.tolist() == [False, True]
    g0 = venv.games[0]
    assert infos[0] == {}
    assert g0.state.scores == [24, 0] and g0.state.hand_number == 1 and g0.state.dealer == 0
    assert g0.seat == 0 and g0.opps[1] is opp0 and g0.points == 24 and g0.length == 1
    assert not g0.state.hand_over and g0.state.current == 0
    assert g0.state.hands[0].bit_count() == 10 and len(g0.state.stock) in (30, 31)
    assert obs[0].tobytes() == Encoder(2).encode(g0.state, 0).tobytes()  # the totals are in it
    info = infos[1]
    assert info["episode"] == {"r": pytest.approx(1.0 + hand_part), "l": 1}
    assert info["win"] == 1.0 and info["points"] == 24
    assert info["hands"] == 1 and info["outcome"] == "out" and "TimeLimit.truncated" not in info
    g1 = venv.games[1]
    assert g1.state.scores == [0, 0] and g1.state.hand_number == 0 and g1.points == 0


def test_match_episodes_of_greedy_play_end_only_with_a_total_at_the_target():
    """A greedy learner against greedy and heuristic opponents, ``reward="match"``: every
    step's reward is 0 but the last of a match; a match ends (heads-up, standard scoring:
    the hand's winner scores what the loser pays, RULES.md §5, §7) with +1 when the
    learner's payoffs over the match sum above 0, -1 below, 0 at a tie; the learner keeps
    its seat through the match's hands."""
    from rummy_env.agents import GreedyAgent

    rules = Rules.make("classic")
    venv = SelfPlayVecEnv(rules, make_pool({"greedy": 0.5, "heuristic": 0.5}, 1, 0.5, seed=0), n_envs=6, seed=5,
                          reward="match")
    obs = venv.reset()
    learner = GreedyAgent(seed=0)
    seats = [g.seat for g in venv.games]
    results = []
    for _ in range(600):
        acts = np.array([learner.act(o, m) for o, m in zip(obs, venv.action_masks().astype(np.int8))])
        obs, rew, done, infos = venv.step(acts)
        for i, g in enumerate(venv.games):
            if not done[i]:
                assert rew[i] == 0.0 and g.seat == seats[i]
                continue
            assert rew[i] == float(np.sign(infos[i]["points"])) == infos[i]["episode"]["r"]
            assert infos[i]["win"] == (1.0 if rew[i] > 0 else 0.0)
            results.append((float(rew[i]), infos[i]["hands"]))
            seats[i] = g.seat
    assert len(results) >= 5
    assert {r for r, _ in results} >= {1.0, -1.0} and max(h for _, h in results) > 1


def test_a_match_undecided_after_max_hands_is_truncated_without_a_result(monkeypatch):
    """``MAX_HANDS`` set to 1: game 0's learner goes out for 24 at 0-0 (the match is not
    decided, RULES.md §7), so the episode ends truncated (SB3's ``TimeLimit.truncated``,
    the ended hand's terminal observation) with no match result: reward 0, win 0."""
    import rummy_env.train.vec_env as vec_env_module

    monkeypatch.setattr(vec_env_module, "MAX_HANDS", 1)
    venv = SelfPlayVecEnv(Rules.make("classic"), make_pool({"greedy": 1.0}, 1, 0.5, seed=0), n_envs=1, seed=2,
                          reward="match")
    venv.reset()
    g = venv.games[0]
    g.seat, g.state = 0, state_json.from_json(ONE_MOVE)
    final = g.state.copy()
    engine.apply(final, engine.action_id(final, "discard KS"))
    _, rew, done, infos = venv.step(np.array([engine.action_id(g.state, "discard KS")]))
    assert rew.tolist() == [0.0] and done.tolist() == [True]
    info = infos[0]
    assert info["TimeLimit.truncated"] is True and info["hands"] == 1 and info["win"] == 0.0
    assert info["points"] == 24 and info["episode"] == {"r": 0.0, "l": 1}
    assert info["terminal_observation"].tobytes() == Encoder(2).encode(final, 0).tobytes()
    assert venv.games[0].state.scores == [0, 0]  # a new match was dealt


def test_shared_memory_workers_give_the_arrays_of_the_in_process_envs():
    """Two worker processes over shared memory against two in-process envs with the
    workers' seeds and pools, stepped with the same actions: the same observations,
    masks, rewards, dones and infos."""
    rules = Rules.make("classic")
    weights = {"snapshot": 0.5, "random": 0.2, "heuristic": 0.3}
    multi = MultiProcSelfPlayVecEnv(rules, 8, 2, seed=9, reward_scale=0.01, weights=weights,
                                    max_snapshots=2, latest_prob=0.5)
    try:
        net = _snapshot(rules, 4)
        multi.add_snapshot(net, 0)
        local = []
        for s in multi.worker_seeds:
            pool = make_pool(weights, 2, 0.5, seed=s)
            pool.add_net(copy.deepcopy(net), 0)
            local.append(SelfPlayVecEnv(rules, pool, 4, seed=s, reward_scale=0.01))
        obs = multi.reset()
        assert obs.tobytes() == np.concatenate([v.reset() for v in local]).tobytes()
        rng = np.random.default_rng(1)
        ends = 0
        for _ in range(40):
            masks = multi.action_masks()
            assert masks.dtype == bool and (masks == np.concatenate([v.action_masks() for v in local])).all()
            acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rew, done, infos = multi.step(acts)
            ref = [v.step(acts[4 * w:4 * w + 4]) for w, v in enumerate(local)]
            assert obs.tobytes() == np.concatenate([r[0] for r in ref]).tobytes()
            assert rew.tobytes() == np.concatenate([r[1] for r in ref]).tobytes()
            assert (done == np.concatenate([r[2] for r in ref])).all()
            ref_infos = [i for r in ref for i in r[3]]
            for got, want in zip(infos, ref_infos):
                assert got.keys() == want.keys()
                if got:
                    ends += 1
                    assert got["terminal_observation"].tobytes() == want["terminal_observation"].tobytes()
                    assert {k: v for k, v in got.items() if k != "terminal_observation"} == \
                        {k: v for k, v in want.items() if k != "terminal_observation"}
        assert ends >= 1
        bad = multi.action_masks()
        wrong = np.array([int(np.flatnonzero(~m)[0]) for m in bad])
        with pytest.raises(ValueError, match=r"worker 0 \(games 0\.\.3\): game 0"):
            multi.step(wrong)
        if hasattr(os, "SCHED_BATCH"):  # Linux: the workers are batch jobs, the learner is not
            assert [os.sched_getscheduler(p.pid) for p in multi.procs] == [os.SCHED_BATCH] * 2
            assert os.sched_getscheduler(0) != os.SCHED_BATCH
    finally:
        multi.close()


@pytest.mark.parametrize("features", ["cards", "none"])
def test_snapshots_answer_their_games_as_each_alone(features):
    """``act_snapshots`` (the card features of every snapshot's games in one pass) picks,
    row for row, what each snapshot's own ``act_batch`` picks on its rows with the same
    generators, sampling and greedy alike, at a 3-player deadwood table."""
    from rummy_env.train.pool import act_snapshots

    rules = Rules.preset("deadwood", num_players=3)
    states, seats = _positions(rules, 3, seed=5)
    obs = np.zeros((len(states), obs_size(3)), dtype=np.float32)
    Encoder(3).encode_many(states, seats, obs)
    masks = np.stack([action_mask(engine.legal_actions(st)) if st.current == s and not st.hand_over else
                      np.eye(num_actions(rules), dtype=np.int8)[0] for st, s in zip(states, seats)])
    rows = min(len(obs), 30)
    obs, masks = obs[:rows], masks[:rows]
    agents = []
    for i, greedy in enumerate((False, True, False)):
        torch.manual_seed(10 + i)
        net = ActorNet(obs_size(3), [16], num_actions(rules), features=features, trunk=8, num_players=3,
                       kind="standard")
        agents.append(SnapshotAgent(net, greedy=greedy))
    cuts = [0, 7, 19, rows]
    groups = [(a, [np.random.default_rng(100 * i + r) for r in range(cuts[i + 1] - cuts[i])])
              for i, a in enumerate(agents)]
    got = act_snapshots(groups, obs, masks)
    want = np.concatenate([a.act_batch(obs[cuts[i]:cuts[i + 1]], masks[cuts[i]:cuts[i + 1]],
                                       rngs=[np.random.default_rng(100 * i + r) for r in range(cuts[i + 1] - cuts[i])])
                           for i, a in enumerate(agents)])
    np.testing.assert_array_equal(got, want)
    assert all(masks[r, a] for r, a in enumerate(got))  # every pick is legal in its row
    with pytest.raises(ValueError, match="the groups answer 29 rows, the batch has 30"):
        act_snapshots([(agents[0], groups[0][1][:-1])] + groups[1:], obs, masks)


def _pipelined_model(seed: int, copies: int, n_steps: int):
    """``copies`` two-worker envs of 8 classic games (random and heuristic opponents, the
    same seed) and a small ``SelfPlayPPO`` on the first."""
    from rummy_env.train.policy import FastMaskablePolicy, SelfPlayPPO

    envs = [MultiProcSelfPlayVecEnv(Rules.make("classic"), 8, 2, seed=seed, reward_scale=0.01,
                                    weights={"random": 0.5, "heuristic": 0.5}, max_snapshots=1, latest_prob=0.5)
            for _ in range(copies)]
    model = SelfPlayPPO(FastMaskablePolicy, envs[0], n_steps=n_steps, batch_size=2 * n_steps, seed=0,
                        policy_kwargs={"net_arch": [16]}, device="cpu")
    return envs, model


def _restart(model, env, callback) -> None:
    """Point ``model`` at a freshly reset ``env`` with empty episode buffers, step count 0
    and ``callback`` initialised, as at the start of ``learn``."""
    model._last_obs, model._last_episode_starts = env.reset(), np.ones(8, dtype=bool)
    model.num_timesteps = 0
    model.ep_info_buffer, model.ep_success_buffer = deque(maxlen=100), deque(maxlen=100)
    callback.init_callback(model)


def test_pipelined_rollout_collects_what_sb3s_loop_collects():
    """``SelfPlayPPO`` over two worker processes answers each worker's games as soon as
    that worker has stepped (``_collect_pipelined``); with a deterministic policy its
    rollouts (two, across a rollout boundary) hold what sb3-contrib's own
    ``collect_rollouts`` collects from an env of the same seed: the same observations,
    actions, rewards, episode starts and masks, values and log-probabilities up to the
    batch's float rounding, the same returns, and one ``on_step`` per step."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    class Count(BaseCallback):
        def _on_step(self):
            self.n_calls_seen = getattr(self, "n_calls_seen", 0) + 1
            assert len(self.locals["infos"]) == 8 and self.locals["new_obs"].shape[0] == 8
            return True

    envs, model = _pipelined_model(seed=4, copies=2, n_steps=24)
    try:
        pol = model.policy
        plain_forward = pol.forward
        pol.forward = lambda obs, deterministic=False, action_masks=None, **kw: plain_forward(obs, True, action_masks)
        got, ends = [], []
        for env, collect in zip(envs, (model.collect_rollouts,
                                       lambda *a: MaskablePPO.collect_rollouts(model, *a))):
            cb = Count()
            _restart(model, env, cb)
            rolls = []
            for _ in range(2):
                assert collect(env, cb, model.rollout_buffer, 24)
                b = model.rollout_buffer
                rolls.append({k: getattr(b, k).copy() for k in ("observations", "actions", "rewards", "episode_starts",
                                                               "action_masks", "values", "log_probs", "returns")})
            got.append(rolls)
            ends.append((model._last_obs.copy(), model.num_timesteps, cb.n_calls_seen))
        for a, b in zip(*got):
            for k in ("observations", "actions", "rewards", "episode_starts", "action_masks"):
                np.testing.assert_array_equal(a[k], b[k], err_msg=k)
            for k in ("values", "log_probs", "returns"):
                np.testing.assert_allclose(a[k], b[k], rtol=1e-4, atol=1e-5, err_msg=k)
        assert any(r["rewards"].any() and r["episode_starts"][1:].any() for r in got[0])  # hands ended inside
        np.testing.assert_array_equal(ends[0][0], ends[1][0])
        assert ends[0][1:] == ends[1][1:] == (2 * 24 * 8, 48)
        class Stop(BaseCallback):  # stops the rollout at its 5th step, with both workers' steps in flight
            def _on_step(self):
                return self.n_calls < 5

        stop = Stop()
        stop.init_callback(model)
        assert not model.collect_rollouts(envs[0], stop, model.rollout_buffer, 24)
        assert stop.n_calls == 5 and model.num_timesteps == 2 * 24 * 8 + 5 * 8
        # the steps in flight were waited for: the workers answer the next step, not a stale one
        masks = envs[0].action_masks()
        np.testing.assert_array_equal(model._last_obs, envs[0].shared.obs)
        acts = np.array([int(np.flatnonzero(m)[0]) for m in masks])
        obs, _, _, _ = envs[0].step(acts)
        assert obs.shape == (8, obs_size(2)) and not np.array_equal(obs, model._last_obs)
        with pytest.raises(ValueError, match=r"worker must be in 0\.\.1, got 2"):
            envs[0].step_part_async(2, np.zeros(4, dtype=np.int64))
        with pytest.raises(ValueError, match="worker 0 plays 4 games: give 4 actions, got 3"):
            envs[0].step_part_async(0, np.zeros(3, dtype=np.int64))
    finally:
        for env in envs:
            env.close()


def test_pipelined_rollout_samples_what_sb3s_loop_samples_in_any_order_of_the_workers():
    """Sampling, not only a deterministic policy: the pipelined rollout draws each step's
    Gumbel noise for all games at once (``torch.rand`` of ``[n_envs, A]``, what SB3's
    loop draws for its one forward pass), so from the same torch seed it samples the
    actions sb3-contrib's ``collect_rollouts`` samples, and the same again when the
    workers are answered in the other order (as when worker 1 finishes first)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    class Go(BaseCallback):
        def _on_step(self):
            return True

    envs, model = _pipelined_model(seed=6, copies=3, n_steps=20)
    try:
        envs[2].ready_workers = lambda pending: sorted(pending, reverse=True)  # worker 1 first, always
        got = []
        for env, collect in zip(envs, (model.collect_rollouts, lambda *a: MaskablePPO.collect_rollouts(model, *a),
                                       model.collect_rollouts)):
            cb = Go()
            _restart(model, env, cb)
            torch.manual_seed(123)
            assert collect(env, cb, model.rollout_buffer, 20)
            got.append(model.rollout_buffer.actions.copy())
        assert len(np.unique(got[0])) > 5  # sampled: many different actions
        np.testing.assert_array_equal(got[0], got[1])
        np.testing.assert_array_equal(got[0], got[2])
    finally:
        for env in envs:
            env.close()


def test_each_game_owns_its_scripted_opponents():
    """Every game plays its own copy of each scripted baseline with its own generator
    (copied shallowly: the generator is the only state, and seeding replaces it), never
    the pool's object or another game's; an agent with other state is copied deeply."""
    from rummy_env.observation import SeededAgent

    class Noted(SeededAgent):  # keeps a note of its own: must not be shared between games
        def __init__(self):
            super().__init__(0)
            self.notes = []

        def act(self, observation, action_mask):
            self.notes.append(1)
            return int(np.flatnonzero(action_mask)[0])

    rules = Rules.make("classic")
    pool = make_pool({"random": 0.5, "heuristic": 0.5}, 1, 0.5, seed=3)
    pool.baselines["noted"] = Noted()
    venv = SelfPlayVecEnv(rules, pool, n_envs=3, seed=5)
    venv.reset()
    for kind, base in pool.baselines.items():
        copies = [g.own[kind] for g in venv.games]
        assert all(type(c) is type(base) and c is not base and c._rng is not base._rng for c in copies)
        assert len({id(c._rng) for c in copies}) == 3
    notes = [g.own["noted"].notes for g in venv.games]
    assert len({id(n) for n in notes}) == 3 and all(n is not pool.baselines["noted"].notes for n in notes)


def test_reseeded_copies_share_nothing_but_what_seed_replaces():
    """``SeededAgent.reseeded``: the copy plays the stream of its new seed (the same moves
    as the agent seeded so); an agent with state besides its generator, or with
    ``__slots__``, is copied deeply, so that state is its own."""
    import random

    from rummy_env.observation import SeededAgent

    class Slotted(SeededAgent):
        __slots__ = ("_rng", "notes")

        def __init__(self):
            self._rng = random.Random(0)
            self.notes = []

    base = Slotted()
    twin = base.reseeded(7)
    assert twin is not base and twin.notes is not base.notes
    assert twin._rng.random() == random.Random(7).random()
    r = make_pool({"random": 1.0}, 1, 0.5, seed=0).baselines["random"]
    c = r.reseeded(11)
    assert c is not r and c._rng is not r._rng and c._rng.random() == random.Random(11).random()
