"""Issue 18, the engine, env and single-agent wrapper: each test fails on the code before the fix."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from extras import needs

from helpers import table
from rummy_env import Rules, SingleAgentEnv, rummy_v0, state_json
from rummy_env.actions import action_text

# the 4-player table of test_empty_stock.py: spades and clubs melded, stock empty
MELDS = [[r + "S" for r in "A23456789TJQK"], [r + "C" for r in "A23456789TJQK"]]
HANDS = [["AD", "2D", "AH", "2H", "3D"], ["KD", "QD", "KH", "QH", "JD"],
         ["9D", "9H", "8D", "8H", "7D", "7H"], ["4D", "4H", "5D", "5H", "6D", "6H"]]


def snapshot(preset="turnover", **over) -> dict:
    """Player 0 to draw, stock empty, pile TD 3H JH TH: a frontend's snapshot."""
    trigger = over.pop("dry_trigger", "on_request")
    # built under on_request (where the snapshot is already legal), then given the trigger
    s = table(preset, HANDS, discard=["TD", "3H", "JH", "TH"], melds=MELDS, stock=[],
              over={"dry_trigger": "on_request", **over}, has_melded=[True] * 4)
    j = state_json.to_json(s)
    j["rules"] = dict(j["rules"], dry_trigger=trigger)
    assert j["stock"] == [] and j["phase"] == "draw" and not j["hand_over"]
    return j


# ------------------------------------------------------------------ 1. frontend snapshots

def test_snapshot_on_empty_shuffle_recycles_before_the_draw_seeded_by_the_env():
    pos = snapshot("turnover", dry_trigger="on_empty", recycle="shuffle", max_recycles=1)
    stocks = []
    for _ in range(2):
        e = rummy_v0.raw_env(rules=pos["rules"])
        e.reset(seed=7, options={"state": pos})
        j = e.state_dict()
        assert j["recycles"] == 1 and j["discard"] == ["TH"] and sorted(j["stock"]) == sorted(["TD", "3H", "JH"])
        assert e.agent_selection == "player_0" and j["phase"] == "draw" and not any(e.terminations.values())
        stocks.append(j["stock"])
    assert stocks[0] == stocks[1]  # the same env seed, the same shuffle
    seen = set()
    for seed in range(12):
        e = rummy_v0.raw_env(rules=pos["rules"])
        e.reset(seed=seed, options={"state": pos})
        seen.add(tuple(e.state_dict()["stock"]))
    assert len(seen) > 1  # the shuffle follows the seed


def test_snapshot_on_empty_without_recycle_ends_dry_at_reset():
    # deadwood preset: lowest deadwood collects; player 0 has 9, the others 50, 48, 30
    pos = snapshot("deadwood", dry_trigger="on_empty", max_recycles=0)
    e = rummy_v0.raw_env(rules=pos["rules"])
    e.reset(seed=0, options={"state": pos})
    assert all(e.terminations.values())
    # by hand: 50-9 + 48-9 + 30-9 = 41 + 39 + 21 = 101
    assert [e.rewards[a] for a in e.possible_agents] == [101, -41, -39, -21]
    assert e.infos["player_0"]["hand_result"]["outcome"] == "dry"
    assert e.infos["player_0"]["hand_result"]["winner"] == 0


def test_snapshot_on_request_recycles_when_the_player_asks():
    pos = snapshot("turnover", dry_trigger="on_request", recycle="turn_over")
    e = rummy_v0.raw_env(rules=pos["rules"])
    e.reset(seed=0, options={"state": pos})
    assert e.state_dict()["stock"] == [] and e.legal_action_texts()[:2] == ["draw stock", "draw discard"]
    e.step(e.action_id("draw stock"))
    j = e.state_dict()
    # turn_over: TD (the oldest) comes up first and is drawn; 3H, JH remain
    assert j["recycles"] == 1 and "TD" in j["hands"][0] and j["stock"] == ["3H", "JH"]


# ------------------------------------------------------------------ 2. infos

def _shape(v):
    if isinstance(v, dict):
        return {k: _shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return ("list", len(v), tuple(sorted({type(x).__name__ for x in v})))
    return type(v).__name__


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_infos_have_the_same_keys_and_types_at_every_step(episode):
    e = rummy_v0.env(episode=episode)
    shapes, outcomes = set(), set()
    rng = np.random.default_rng(0)
    for ep in range(3):
        e.reset(seed=ep)
        for agent in e.agent_iter(max_iter=5000):
            ob, r, term, trunc, info = e.last()
            shapes.add(repr(_shape(info)))
            outcomes.add(info["hand_result"]["outcome"])
            if term or trunc:
                e.step(None)
            else:
                e.step(int(rng.choice(np.flatnonzero(ob["action_mask"]))))
    assert len(shapes) == 1, shapes
    assert "" in outcomes and outcomes - {""}  # steps while playing and at a hand's end


@pytest.mark.parametrize("make", [rummy_v0.env, rummy_v0.raw_env], ids=["wrapped", "raw"])
def test_a_caller_clearing_the_info_from_last_changes_nothing_in_the_env(make):
    """``last()`` hands the caller its info dict; a caller that clears it after every
    ``last()`` plays the same match as one that leaves it alone, and each new hand's first
    step still hands out a full info (with ``hand_over`` false again)."""
    mine, twin = (make(episode="match", max_hands=3) for _ in range(2))
    mine.reset(seed=4)
    twin.reset(seed=4)
    rng = np.random.default_rng(4)
    ended, fresh = 0, 0
    for _ in range(5000):
        if not twin.agents:  # every agent stepped out of the finished episode
            break
        ob, r, term, trunc, info = mine.last()
        _, r2, term2, trunc2, info2 = twin.last()
        assert (mine.agent_selection, r, term, trunc) == (twin.agent_selection, r2, term2, trunc2)
        if info:  # a full info: the env's own, refreshed since it was last cleared
            assert info == info2
            fresh += 1
        ended += info2["hand_over"]
        info.clear()
        if term or trunc:
            mine.step(None)
            twin.step(None)
            continue
        a = int(rng.choice(np.flatnonzero(ob["action_mask"])))
        mine.step(a)  # raised KeyError: 'hand_over' when the env read the cleared info back
        twin.step(a)
        assert mine.state_dict() == twin.state_dict()
    assert not mine.agents and not twin.agents  # both episodes finished, the same way
    assert ended >= 1 and fresh >= 2  # a hand ended mid-match and the next one's info came fresh


def _cleared(ob, info):
    ob.clear()
    info.clear()


def _mask_zeroed(ob, info):
    ob["action_mask"][:] = 0


def _mask_replaced(ob, info):
    ob["action_mask"] = np.ones_like(ob["action_mask"])


@pytest.mark.parametrize("change", [_cleared, _mask_zeroed, _mask_replaced], ids=lambda f: f.__name__[1:])
def test_a_caller_changing_the_observation_from_last_changes_nothing_in_the_env(change):
    """The wrapped env (PettingZoo AEC) hands the caller the observation dict and its mask:
    a caller that clears or overwrites them after every ``last()`` plays the same match as
    one that leaves them alone (legal moves stay legal, the episode ends the same way)."""
    mine, twin = (rummy_v0.env(episode="match", max_hands=2) for _ in range(2))
    mine.reset(seed=6)
    twin.reset(seed=6)
    rng = np.random.default_rng(6)
    for _ in range(5000):
        if not twin.agents:
            break
        ob, r, term, trunc, info = mine.last()
        ob2, r2, term2, trunc2, _ = twin.last()
        assert (mine.agent_selection, r, term, trunc) == (twin.agent_selection, r2, term2, trunc2)
        a = None if term or trunc else int(rng.choice(np.flatnonzero(ob2["action_mask"])))
        change(ob, info)
        mine.step(a)  # a zeroed mask ended the episode with -1 for a legal move; a cleared one raised KeyError
        twin.step(a)
        assert mine.unwrapped.state_dict() == twin.unwrapped.state_dict()
    assert not mine.agents and not twin.agents


def test_an_illegal_action_after_the_caller_unmasked_it_still_ends_the_episode():
    """The illegal-move convention (-1 for the offender, the episode over) reads the env's
    own mask, not the one handed to the caller, which the caller set to all ones."""
    e = rummy_v0.env()
    e.reset(seed=2)
    ob, *_ = e.last()
    mover = e.agent_selection
    illegal = int(np.flatnonzero(ob["action_mask"] == 0)[0])
    ob["action_mask"][:] = 1
    e.step(illegal)  # raised IllegalActionError from the bare env
    assert all(e.terminations.values())
    assert e.rewards[mover] == -1 and sum(e.rewards.values()) == -1


def test_single_agent_infos_stored_in_a_torchrl_replay_buffer():
    torch = needs("torch")
    td_mod = needs("tensordict")
    from torchrl.data import LazyTensorStorage, ReplayBuffer

    def tensors(info):
        out = {}
        for k, v in info.items():
            if isinstance(v, dict):
                out[k] = tensors(v)
            elif isinstance(v, str):  # strings as a fixed-size code: outcome index
                out[k] = torch.tensor(["", "out", "dry", "stalled"].index(v))
            else:
                out[k] = torch.as_tensor(v)
        return out

    env = SingleAgentEnv(seed=3, max_turns=60)  # stalled hands and hands gone out
    rb = ReplayBuffer(storage=LazyTensorStorage(5000))
    obs, info = env.reset()
    outcomes = set()
    rng = np.random.default_rng(3)
    steps = 0
    while steps < 3000:
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        nxt, r, term, trunc, info = env.step(a)
        outcomes.add(info["hand_result"]["outcome"])
        rb.add(td_mod.TensorDict({"obs": torch.as_tensor(obs), "action": torch.tensor(a),
                                  "reward": torch.tensor(r), "done": torch.tensor(term or trunc),
                                  "next_obs": torch.as_tensor(nxt), "info": tensors(info)}, batch_size=[]))
        steps += 1
        obs = nxt
        if term or trunc:
            obs, info = env.reset()
    assert len(rb) == 3000
    batch = rb.sample(64)
    assert batch["info", "hand_result", "points"].shape == (64, 2)
    assert batch["info", "match_won"].dtype == torch.bool
    assert "" in outcomes and outcomes - {""}


# ------------------------------------------------------------------ 3, 4. env and Rules inputs

def test_env_step_huge_and_bool_actions_are_refused_cleanly():
    for bad in (10**20, True, -1, 3.0, "draw"):
        e = rummy_v0.env()
        e.reset(seed=0)
        before = e.unwrapped.state_dict()
        with pytest.raises(ValueError, match="action must be an int in 0..578"):
            e.step(bad)
        assert e.unwrapped.state_dict() == before and not any(e.terminations.values())


def test_env_bounds_check_survives_python_O():
    code = ("from rummy_env import rummy_v0\ne = rummy_v0.env(); e.reset(seed=0)\n"
            "try:\n    e.step(10**6)\nexcept ValueError as x:\n    print('refused:', x)\n")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=60)
    assert "refused: action must be an int in 0..578" in out.stdout, out.stderr


def test_reset_bad_seed_and_observe_before_reset():
    e = rummy_v0.raw_env(render_mode="ansi")
    with pytest.raises(RuntimeError, match="call reset"):
        e.observe("player_0")
    with pytest.raises(RuntimeError, match="call reset"):
        e.render()
    for bad in ("abc", 1.5, -1, True):
        with pytest.raises(ValueError, match="seed must be None or an int >= 0"):
            e.reset(seed=bad)
    assert e.state is None


def test_rules_refuse_floats_lists_and_a_bypassed_player_range():
    with pytest.raises(ValueError, match="ace_points must be one of 1, 11; got 11.0"):
        Rules(ace_points=11.0)
    with pytest.raises(ValueError, match="ace_points"):
        state_json.from_json(dict(_pos(), rules={"preset": "classic", "ace_points": 11.0}))
    with pytest.raises(ValueError, match="unknown rules preset"):
        Rules.from_json({"preset": ["classic"]})
    with pytest.raises(ValueError, match="preset 'classic' is for 2-2 players, not 3"):
        rummy_v0.raw_env(rules={"preset": "classic"}, num_players=3)
    with pytest.raises(ValueError, match="preset 'classic' is for 2-2 players"):
        Rules.preset("classic").replace(num_players=3)
    assert Rules.make({"preset": "turnover"}, num_players=3).num_players == 3
    with pytest.raises(ValueError, match="reward_scale must be a finite number"):
        rummy_v0.raw_env(reward_scale=float("inf"))
    with pytest.raises(ValueError, match="illegal_penalty must be a finite number"):
        SingleAgentEnv(illegal_penalty=float("nan"))
    with pytest.raises(ValueError, match="learner_seat must be None or a seat"):
        SingleAgentEnv(learner_seat=True)
    with pytest.raises(ValueError, match="action must be an int"):
        action_text(3.0)
    assert action_text(np.int64(3)) == action_text(3)


def _pos(seed=0):
    e = rummy_v0.raw_env()
    e.reset(seed=seed)
    return e.state_dict()


def _finished(seed=1):
    e = rummy_v0.raw_env()
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not e.state.hand_over:
        e.step(int(rng.choice(e.legal_actions())))
    return e.state_dict()


def test_state_scores_bounded_and_a_finished_hand_checked():
    p = _pos()
    with pytest.raises(ValueError, match=r"scores must be ints in 0\.\.1139"):  # 99 + 2 x 52 x 10
        state_json.from_json(dict(p, scores=[10**400, 0]))
    f = _finished()
    st = state_json.from_json(f)
    assert st.hand_over
    pts = f["result"]["points"]
    for bad, needle in (
        (dict(f, scores=[x + 100 for x in f["scores"]]), "already reach the target"),
        (dict(f, result=dict(f["result"], winner="zero")), "result.winner"),
        (dict(f, result=dict(f["result"], points=[1.5, 0])), "result.points"),
        (dict(f, result=dict(f["result"], payoffs=[5, 5])), "result.payoffs"),
        (dict(f, result=dict(f["result"], extra=1)), "unknown key"),
        (dict(f, result=dict(f["result"], rummy="yes")), "result.rummy"),
        (dict(f, scores=[0, 0], result=dict(f["result"], points=[max(pts) + 1, 0])), "exceed the scores"),
    ):
        with pytest.raises(ValueError, match=needle):
            state_json.from_json(bad)


def test_act_answers_422_for_unbounded_scores():
    needs("fastapi")
    needs("torch")
    needs("sb3_contrib")
    needs("onnx")
    needs("onnxruntime")
    from fastapi.testclient import TestClient

    from policy_helpers import tiny_policy
    from rummy_env.frontends.serve import create_app

    with TestClient(create_app(tiny_policy()["export"])) as c:
        r = c.post("/act", json=dict(_pos(), scores=[10**400, 0]))
        assert r.status_code == 422 and "scores" in r.json()["detail"]
        r = c.post("/act", json=dict(_pos(), rules={"preset": "classic", "ace_points": 1.0}))
        assert r.status_code == 422 and "ace_points" in r.json()["detail"]


# ------------------------------------------------------------------ 5. the wrapper

def test_single_agent_step_accepts_1_element_integer_arrays():
    for wrap in (lambda a: np.array([a]), lambda a: np.array(a), lambda a: np.int32(a)):
        env = SingleAgentEnv(seed=0)
        env.reset()
        a = int(np.flatnonzero(env.action_masks())[0])
        _, r, term, trunc, info = env.step(wrap(a))
        assert info["illegal_action"] is False and not term
    env = SingleAgentEnv(seed=0)
    env.reset()
    before = env.state_dict()
    for bad in (np.array([0, 1]), np.array([0.0]), np.array([True])):
        with pytest.raises(ValueError, match="0-d or 1-element integer array"):
            env.step(bad)
    assert env.state_dict() == before


def test_single_agent_reset_never_returns_a_finished_episode_and_check_env_passes():
    from gymnasium.utils.env_checker import check_env

    env = SingleAgentEnv(seed=0, max_turns=1)
    for _ in range(30):
        env.reset()
        assert env.action_masks().any()
    check_env(SingleAgentEnv(seed=1, max_turns=1), skip_render_check=True)
    with pytest.raises(ValueError, match="no deal of 100 reached the learner's seat 1"):
        SingleAgentEnv(seed=0, max_turns=1, learner_seat=1).reset()


def test_a_match_reaching_max_hands_is_truncated():
    # stalemate with max_turns=2: every hand stalls void, no score ever: the match would never end
    env = rummy_v0.raw_env(rules={"preset": "stalemate", "max_turns": 2}, episode="match", max_hands=3)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(100):
        if env.truncations[env.agent_selection]:
            break
        env.step(int(rng.choice(env.legal_actions())))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.state.hand_number == 2 and env.rewards == {a: 0.0 for a in env.possible_agents}
    s = SingleAgentEnv(seed=0, rules={"preset": "stalemate", "max_turns": 2}, episode="match", max_hands=3)
    s.reset()
    for _ in range(100):
        _, r, term, trunc, _ = s.step(int(np.flatnonzero(s.action_masks())[0]))
        if term or trunc:
            break
    assert trunc and not term and r == 0.0
    with pytest.raises(ValueError, match="max_hands must be an int >= 1"):
        rummy_v0.raw_env(max_hands=0)


def test_a_refused_reset_changes_nothing_rng_included():
    e = rummy_v0.raw_env()
    e.reset(seed=5)
    before = e.state_dict()
    bad = dict(before, hands=[["ZZ"], before["hands"][1]])
    with pytest.raises(ValueError):
        e.reset(options={"state": bad})
    assert e.state_dict() == before
    e.reset()
    twin = rummy_v0.raw_env()
    twin.reset(seed=5)
    twin.reset()
    assert e.state_dict() == twin.state_dict()  # the refused reset drew nothing from the RNG
    s, t = SingleAgentEnv(seed=9), SingleAgentEnv(seed=9)
    s.reset()
    t.reset()
    with pytest.raises(ValueError):
        s.reset(options={"state": bad})
    with pytest.raises(ValueError):
        s.reset(seed="abc")
    assert s.state_dict() == t.state_dict()
    a, b = s.reset(), t.reset()
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
