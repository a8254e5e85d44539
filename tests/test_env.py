"""The PettingZoo / Gymnasium contract of ``rummy_v0`` and ``SingleAgentEnv`` (issue 3).

PettingZoo's ``api_test`` and ``seed_test`` for every preset and player count,
Gymnasium's ``check_env``, the mask against ``engine.legal_actions``, illegal
actions in ``raw_env`` and ``env()``, hidden information, reward attribution,
prepared positions stepped by action text, match rewards, rendering, spaces and
fresh observations. Expected scores are computed by hand in the comments.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from rummy_env import SingleAgentEnv, engine, rummy_v0
from rummy_env.actions import NUM_ACTIONS
from rummy_env.cards import CARD_TEXT, cards_of

PRESET_PLAYERS = {
    "classic": (2,),
    "practice": (2,),
    "stalemate": (2, 3, 4),
    "turnover": (2, 3, 4, 6),
    "deadwood": (2, 3, 4, 6),
}
CASES = [(p, n) for p, ns in PRESET_PLAYERS.items() for n in ns]

# The melds of the prepared two-player positions (13 cards: 2 x 10 dealt, 7 in hands).
MELDS = [["JS", "JD", "JH"], ["2S", "3S", "4S"], ["5C", "6C", "7C"], ["QC", "QD", "QH", "QS"]]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def state(hands, discard, melds, stock_top, current=0, phase="draw", rules=None, **extra):
    """A STATE dict (API.md) with every card not listed placed in the stock, after ``stock_top``."""
    used = {c for h in hands for c in h} | set(discard) | {c for m in melds for c in m} | set(stock_top)
    stock = list(stock_top) + [c for c in CARD_TEXT if c not in used]
    d = {"hands": hands, "stock": stock, "discard": discard, "melds": melds,
         "current_player": current, "phase": phase}
    if rules is not None:
        d["rules"] = rules
    d.update(extra)
    return d


P0 = ["4H", "5H", "JC", "AC", "2C", "3C", "8S", "8H", "8C", "KD"]
# player_0 draws 3H, melds 3H 4H 5H, AC 2C 3C and 8S 8H 8C, lays JC off on the jacks and
# discards KD: out, never having melded before: rummy, 2 x (KS 9D 4C AH = 10 + 9 + 4 + 1 = 24) = 48
GO_OUT = ("draw stock", "meld 5H 3H 4H", "meld AC 2C 3C", "meld 8S 8H 8C", "layoff JC", "discard KD")


def api_position(**extra):
    """API.md's example position, completed to 52 cards: player 1 holds KS 9D 4C AH, the
    table has the set of jacks, the discard pile is 9S 6H, the stock starts 3H 7D; player 0
    (who never melded, so holds the 10 cards dealt) holds 4H 5H JC and seven more."""
    fields = dict(has_melded=[False, True], turn=12, scores=[0, 0], dealer=1)
    fields.update(extra)
    return state([P0, ["KS", "9D", "4C", "AH"]], ["9S", "6H"], [["JS", "JD", "JH"], ["5S", "6S", "7S"]],
                 ["3H", "7D"], **fields)


def random_states(rules="classic", hands=6, seed=0, every=7, **kw):
    """Positions met in random legal play (every ``every``-th decision), as (env, STATE)."""
    env = rummy_v0.raw_env(rules=rules, **kw)
    rng = random.Random(seed)
    out = []
    for h in range(hands):
        env.reset(seed=seed * 1000 + h)
        k = 0
        while not env.terminations[env.agent_selection]:
            if k % every == 0:
                out.append(env.state_dict())
            legal = env.legal_actions()
            env.step(legal[rng.randrange(len(legal))])
            k += 1
    return env, out


# ---------------------------------------------------------------- PettingZoo / Gymnasium checks

@pytest.mark.parametrize("preset,n", CASES)
def test_pettingzoo_api_test(preset, n):
    api_test(rummy_v0.env(rules=preset, num_players=n), num_cycles=1000)


@pytest.mark.parametrize("preset,n", CASES)
def test_pettingzoo_seed_test(preset, n):
    seed_test(lambda: rummy_v0.env(rules=preset, num_players=n), num_cycles=300)


def test_pettingzoo_api_test_match_episodes():
    api_test(rummy_v0.env(episode="match"), num_cycles=1000)


@pytest.mark.parametrize("kw", [{}, {"rules": "turnover", "num_players": 4}])
def test_gymnasium_check_env(kw):
    check_env(SingleAgentEnv(**kw))


# ---------------------------------------------------------------- the mask

@pytest.mark.parametrize("preset,n", [("classic", 2), ("turnover", 3), ("deadwood", 6), ("practice", 2)])
def test_mask_equals_legal_actions(preset, n):
    env = rummy_v0.raw_env(rules=preset, num_players=n)
    rng = random.Random(n)
    for h in range(15):
        env.reset(seed=h)
        while not env.terminations[env.agent_selection]:
            st = env.unwrapped.state
            legal = engine.legal_actions(st)
            for a in env.possible_agents:
                m = env.observe(a)["action_mask"]
                assert m.dtype == np.int8 and m.shape == (NUM_ACTIONS,)
                if a == env.agent_selection:
                    assert np.flatnonzero(m).tolist() == list(legal)
                else:
                    assert not m.any()
            env.step(legal[rng.randrange(len(legal))])


def test_every_masked_action_steps_and_every_unmasked_one_raises():
    env = rummy_v0.raw_env()
    _, positions = random_states(hands=3, every=11)
    for pos in positions:
        env.reset(options={"state": pos})
        mask = env.observe(env.agent_selection)["action_mask"]
        before = env.state_dict()
        for a in np.flatnonzero(mask == 0).tolist():
            with pytest.raises(ValueError, match="illegal|must"):
                env.step(a)
        assert env.state_dict() == before
        for a in np.flatnonzero(mask).tolist():
            env.reset(options={"state": pos})
            env.step(a)
            assert env.state_dict() != before or env.terminations[env.possible_agents[0]]


def test_unmasked_action_message_names_the_action():
    env = rummy_v0.raw_env()
    env.reset(options={"state": api_position()})
    with pytest.raises(ValueError, match="'discard KS'"):
        env.step(env.unwrapped.action_id("discard KS"))


def test_env_illegal_action_ends_the_episode_with_minus_one():
    for offender in (0, 1):
        env = rummy_v0.env()
        env.reset(seed=3)
        if offender == 1:
            env.step(0)  # draw stock
            mask = env.last()[0]["action_mask"]
            env.step(int(np.flatnonzero(mask)[0]))
            while env.agent_selection != "player_1":
                mask = env.last()[0]["action_mask"]
                env.step(int(np.flatnonzero(mask)[-1]))  # a discard (or a lay-off) ends the turn
        agent = env.agent_selection
        assert agent == f"player_{offender}"
        mask = env.last()[0]["action_mask"]
        env.step(int(np.flatnonzero(mask == 0)[0]))
        assert all(env.terminations.values()) or all(env.truncations.values())
        for a in env.possible_agents:
            assert env.rewards[a] == (-1 if a == agent else 0)
            assert env._cumulative_rewards[a] == (-1 if a == agent else 0)
        while env.agents:
            env.step(None)


# ---------------------------------------------------------------- hidden information

def _observations(env, pos):
    env.reset(options={"state": pos})
    return {a: env.observe(a) for a in env.possible_agents}


@pytest.mark.parametrize("preset,n", [("classic", 2), ("turnover", 4)])
def test_observation_ignores_hidden_cards_and_stock_order(preset, n):
    env, positions = random_states(rules=preset, num_players=n, hands=4, every=9, seed=5)
    rng = random.Random(1)
    checked = 0
    for pos in positions:
        if pos["hand_over"]:
            continue
        pos = {k: v for k, v in pos.items() if k not in ("result", "match_winners")}
        base = _observations(env, pos)
        # the stock in another order
        perm = dict(pos, stock=rng.sample(pos["stock"], len(pos["stock"])))
        for a, ob in _observations(env, perm).items():
            assert np.array_equal(ob["observation"], base[a]["observation"])
            assert np.array_equal(ob["action_mask"], base[a]["action_mask"])
        # an opponent's hidden cards swapped with stock cards
        for q in range(n):
            hidden = [c for c in pos["hands"][q] if c not in pos["known_cards"][q]
                      and c != pos["drawn_from_discard"]]
            k = min(len(hidden), len(pos["stock"]), 3)
            if not k:
                continue
            out = rng.sample(hidden, k)
            into = rng.sample(pos["stock"], k)
            swap = dict(zip(out, into)) | dict(zip(into, out))
            hands = [list(h) for h in pos["hands"]]
            hands[q] = [swap.get(c, c) for c in hands[q]]
            changed = dict(pos, hands=hands, stock=[swap.get(c, c) for c in pos["stock"]])
            obs = _observations(env, changed)
            for i, a in enumerate(env.possible_agents):
                if i == q:
                    continue
                assert np.array_equal(obs[a]["observation"], base[a]["observation"]), (q, a)
                assert np.array_equal(obs[a]["action_mask"], base[a]["action_mask"])
            checked += 1
    assert checked > 10


# ---------------------------------------------------------------- rewards

def test_rewards_go_to_the_seat_that_goes_out():
    # player_1 draws KC, melds 6S 7S 8S and discards KC: out, having melded before (no rummy).
    # player_0 holds 4H 5H JC 9D = 4 + 5 + 10 + 9 = 28 points.
    pos = state([["4H", "5H", "JC", "9D"], ["6S", "7S", "8S"]], ["9S", "6H"], MELDS, ["KC"],
                current=1, has_melded=[True, True])
    env = rummy_v0.env()
    env.reset(options={"state": pos})
    for text in ("draw stock", "meld 6S 7S 8S", "discard KC"):
        assert env.agent_selection == "player_1"
        env.step(env.unwrapped.action_id(text))
    assert env.rewards == {"player_0": -28.0, "player_1": 28.0}
    assert env._cumulative_rewards == {"player_0": -28.0, "player_1": 28.0}
    assert all(env.terminations.values())
    assert env.unwrapped.state_dict()["result"]["winner"] == 1
    rewards = {}
    for agent in env.agent_iter():
        _, r, term, _, _ = env.last()
        assert term
        rewards[agent] = r
        env.step(None)
    assert rewards == {"player_0": -28.0, "player_1": 28.0}


def test_rewards_are_zero_sum_in_random_hands():
    for preset, n in (("classic", 2), ("turnover", 4), ("deadwood", 6)):
        env = rummy_v0.env(rules=preset, num_players=n)
        rng = random.Random(n)
        for h in range(8):
            env.reset(seed=h)
            total = 0.0
            for _ in env.agent_iter():
                obs, r, term, trunc, _ = env.last()
                total += r
                if term or trunc:
                    env.step(None)
                else:
                    env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            assert total == pytest.approx(0.0)


def test_api_position_stepped_by_text():
    env = rummy_v0.env()
    env.reset(options={"state": api_position()})
    u = env.unwrapped
    assert u.legal_action_texts() == ["draw stock", "draw discard"]
    env.step(u.action_id("draw stock"))
    s = u.state_dict()
    assert s["phase"] == "play" and sorted(s["hands"][0]) == sorted(P0 + ["3H"])
    assert s["stock"][0] == "7D"
    for text in GO_OUT[1:4]:
        env.step(u.action_id(text))
    assert sorted(u.state_dict()["hands"][0]) == ["JC", "KD"]
    assert "layoff JC set" in u.legal_action_texts()
    env.step(u.action_id("layoff JC"))
    s = u.state_dict()
    assert sorted(s["melds"][0]) == ["JC", "JD", "JH", "JS"] and s["hands"][0] == ["KD"]
    assert not s["hand_over"] and env.agent_selection == "player_0"
    env.step(u.action_id("discard KD"))
    s = u.state_dict()
    assert s["hand_over"] and s["hands"][0] == [] and s["discard"][-1] == "KD"
    assert s["result"]["outcome"] == "out" and s["result"]["winner"] == 0 and s["result"]["rummy"] is True
    assert s["result"]["points"] == [48, 0] and s["scores"] == [48, 0]
    assert env.rewards == {"player_0": 48.0, "player_1": -48.0}


def test_state_dict_round_trip_in_env():
    env = rummy_v0.raw_env()
    env.reset(seed=11)
    for _ in range(25):
        env.step(env.legal_actions()[0])
    s = env.state_dict()
    env2 = rummy_v0.raw_env()
    env2.reset(options={"state": s})
    assert env2.state_dict() == s
    for a in env.possible_agents:
        assert np.array_equal(env.observe(a)["observation"], env2.observe(a)["observation"])


# ---------------------------------------------------------------- match episodes

def test_match_ends_with_plus_one_minus_one():
    # the rummy of GO_OUT (48) takes player_0 from 60 to 108 >= 100
    env = rummy_v0.env(episode="match")
    env.reset(options={"state": api_position(scores=[60, 0])})
    for text in GO_OUT:
        env.step(env.unwrapped.action_id(text))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert env.unwrapped.state_dict()["match_winners"] == [0]


def test_match_split_is_shared():
    # penalty scoring, 3 players, target 100, scores 60 / 50 / 95. player_0 draws 5H and
    # melds 3H 4H 5H: out. player_1 is charged TC = 10 (-> 60), player_2 9D 8C = 17 (-> 112).
    # The lowest total (60) is shared by seats 0 and 1: each gets (3 - 2) / 2 = 0.5.
    rules = {"preset": "turnover", "num_players": 3, "scoring": "penalty", "target": 100}
    melds = MELDS + [["KS", "KD", "KH"]]
    pos = state([["3H", "4H"], ["TC"], ["9D", "8C"]], ["9S", "6H"], melds, ["5H"], rules=rules,
                has_melded=[True, True, True], scores=[60, 50, 95])
    env = rummy_v0.env(rules="turnover", num_players=3, scoring="penalty", target=100, episode="match")
    env.reset(options={"state": pos})
    env.step(env.unwrapped.action_id("draw stock"))
    env.step(env.unwrapped.action_id("meld 3H 4H 5H"))
    s = env.unwrapped.state_dict()
    assert s["result"]["points"] == [0, 10, 17] and s["scores"] == [60, 60, 112]
    assert s["match_winners"] == [0, 1]
    assert env.rewards == {"player_0": 0.5, "player_1": 0.5, "player_2": -1.0}


def test_match_deals_on_after_a_hand_below_the_target():
    env = rummy_v0.env(episode="match")
    env.reset(options={"state": api_position()})  # 48 < 100: the match goes on
    for text in GO_OUT:
        env.step(env.unwrapped.action_id(text))
    assert not any(env.terminations.values())
    s = env.unwrapped.state_dict()
    assert s["scores"] == [48, 0] and s["hand_number"] == 1 and not s["hand_over"]
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}


# ---------------------------------------------------------------- rendering, spaces, freshness

def test_render_ansi_shows_only_the_viewers_hand():
    env = rummy_v0.env(render_mode="ansi")
    env.reset(seed=4)
    st = env.unwrapped.state
    text = env.render()
    tokens = set(text.replace(",", " ").split())
    mover, other = st.current, 1 - st.current
    assert {CARD_TEXT[c] for c in cards_of(st.hands[mover])} <= tokens
    assert not {CARD_TEXT[c] for c in cards_of(st.hands[other])} & tokens
    quiet = rummy_v0.env()
    quiet.reset(seed=4)
    assert quiet.render() is None  # no render_mode: nothing to show


def test_spaces_are_the_same_object_on_every_call():
    env = rummy_v0.env(rules="turnover", num_players=4)
    for a in env.possible_agents:
        assert env.observation_space(a) is env.observation_space(a)
        assert env.action_space(a) is env.action_space(a)
        assert env.observation_space(a) is env.observation_space("player_0")
        assert env.action_space(a).n == NUM_ACTIONS
    assert env.observation_space("player_0")["action_mask"].dtype == np.int8


def test_observations_are_fresh_arrays():
    for env in (rummy_v0.raw_env(), rummy_v0.env()):
        env.reset(seed=2)
        a = env.agent_selection
        first = env.observe(a)
        keep = {k: v.copy() for k, v in first.items()}
        first["observation"][:] = 9.0
        first["action_mask"][:] = 0
        again = env.last()[0]
        assert np.array_equal(again["observation"], keep["observation"])
        assert np.array_equal(again["action_mask"], keep["action_mask"])
        assert again["observation"] is not first["observation"]
        assert not np.shares_memory(again["observation"], first["observation"])
    sa = SingleAgentEnv(seed=1)
    obs, _ = sa.reset()
    keep = obs.copy()
    obs[:] = 5.0
    assert np.array_equal(sa.env._obs(sa.seat), keep)
    mask = sa.action_masks()
    mask[:] = True
    assert sa.action_masks().sum() < NUM_ACTIONS


# ---------------------------------------------------------------- SingleAgentEnv

def test_single_agent_reward_is_the_learners_own():
    # as in test_rewards_go_to_the_seat_that_goes_out: the seat that goes out earns 28
    pos = state([["4H", "5H", "JC", "9D"], ["6S", "7S", "8S"]], ["9S", "6H"], MELDS, ["KC"],
                current=1, has_melded=[True, True])
    sa = SingleAgentEnv(learner_seat=1)
    obs, info = sa.reset(seed=0, options={"state": pos})
    assert info["seat"] == 1
    for text in ("draw stock", "meld 6S 7S 8S"):
        obs, r, term, trunc, info = sa.step(sa.env.action_id(text))
        assert (r, term, trunc) == (0.0, False, False)
    obs, r, term, trunc, info = sa.step(sa.env.action_id("discard KC"))
    assert term and not trunc and r == 28.0
    assert info["hand_result"]["winner"] == 1

    # the rummy of test_api_position_stepped_by_text, learned from seat 0
    sa0 = SingleAgentEnv(learner_seat=0)
    pos0 = api_position()
    obs, info = sa0.reset(seed=0, options={"state": pos0})
    for text in GO_OUT[:-1]:
        obs, r, term, trunc, info = sa0.step(sa0.env.action_id(text))
        assert not term
    obs, r, term, trunc, info = sa0.step(sa0.env.action_id(GO_OUT[-1]))
    assert term and r == 48.0


def test_single_agent_illegal_action_ends_with_the_penalty():
    sa = SingleAgentEnv(seed=3, illegal_penalty=-2.5)
    sa.reset()
    bad = int(np.flatnonzero(~sa.action_masks())[0])
    obs, r, term, trunc, info = sa.step(bad)
    assert term and not trunc and r == -2.5 and info["illegal_action"] is True
    assert obs.shape == sa.observation_space.shape
    assert not sa.action_masks().any()
    with pytest.raises(RuntimeError):
        sa.step(0)


def test_single_agent_seeded_episodes_repeat():
    def episode(seed):
        sa = SingleAgentEnv(rules="turnover", num_players=3, seed=None)
        obs, info = sa.reset(seed=seed)
        rng = random.Random(0)
        trace = [info["seat"], obs.tobytes()]
        done = False
        while not done:
            legal = np.flatnonzero(sa.action_masks())
            obs, r, done, _, _ = sa.step(int(legal[rng.randrange(len(legal))]))
            trace += [obs.tobytes(), r]
        return trace

    assert episode(7) == episode(7)
    assert episode(7) != episode(8)


def test_bad_action_types_raise_and_change_nothing():
    import numpy as np

    e = rummy_v0.raw_env()
    e.reset(seed=3)
    before = e.state_dict()
    for bad in (1.0, np.float64(0), True, "x", 600, -1):
        with pytest.raises(ValueError, match="action must be an int"):
            e.step(bad)
        assert e.state_dict() == before
    e.step(np.int64(1))  # numpy integers are ids like ints
    assert e.state_dict()["phase"] == "play"


def test_a_positions_rules_last_until_the_next_deal():
    e = rummy_v0.raw_env(rules="classic")
    e.reset(seed=1)
    s = e.state_dict()
    s["rules"] = {"preset": "classic", "aces": "high"}
    e.reset(options={"state": s})
    assert e.rules.aces == "high"
    e.reset(seed=2)
    assert e.rules.aces == "low" and e.state_dict()["rules"] == "classic"


def test_reset_options_and_calls_before_reset():
    e = rummy_v0.raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        e.state_dict()
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)
    with pytest.raises(ValueError, match="options must be a dict"):
        e.reset(options="x")


def test_observation_of_and_action_mask_of_are_observes_pieces():
    e = rummy_v0.raw_env(rules="turnover", num_players=3)
    e.reset(seed=5)
    for a in e.possible_agents:
        full = e.observe(a)
        obs, mask = e.observation_of(a), e.action_mask_of(a)
        assert obs.tobytes() == full["observation"].tobytes() and mask.dtype == np.int8
        assert (mask == full["action_mask"]).all()
        obs[:] = -1  # a fresh array: changing it changes nothing
        assert e.observe(a)["observation"].tobytes() == full["observation"].tobytes()
    with pytest.raises(ValueError, match="unknown agent"):
        e.observation_of("player_9")
    with pytest.raises(RuntimeError, match="reset"):
        rummy_v0.raw_env().action_mask_of("player_0")
