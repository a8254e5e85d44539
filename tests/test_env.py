"""The PettingZoo / Gymnasium contract of ``rummy_v0`` and ``SingleAgentEnv`` (issue 3).

PettingZoo's ``api_test`` and ``seed_test`` for every preset and player count,
Gymnasium's ``check_env``, the mask against ``engine.legal_actions``, illegal
actions in ``raw_env`` and ``env()``, hidden information, reward attribution,
prepared positions stepped by action text, match rewards, rendering, spaces and
fresh observations. Expected scores are computed by hand in the comments.

The tests are grouped by layer, not by kind of table (issue 24); after the standard
tables, the deck variants (RULES.md §10.1-10.3) through the env: property tests over random
legal play on every new preset and player count (hypothesis), PettingZoo's api_test and
seed_test on ``jokers`` (2 and 4 players) and ``two_decks`` (5 and 7), Gymnasium's env
checker, and the hidden-information contract.

Invariants checked at every step of random play: every card is present its number of
times (``decks`` per natural card, ``jokers * decks`` jokers; a melded joker counts as a
joker), the mask is exactly the legal list, every legal id's text reads back to that id,
every legal meld is a meld by an independent reading of the rules (jokers at most half,
distinct suits in a set, consecutive ranks in a run, K-A-2 only under ``around``), the
natural melds the hand holds are all listed when they leave a card to discard, hands
end within ``max_turns``, and positions round-trip through STATE JSON.
"""
from __future__ import annotations

import random
import warnings
from collections import Counter

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test

from extras import needs
from rummy_env import Rules, SingleAgentEnv, engine, rummy_v0, state_json
from rummy_env.actions import NUM_ACTIONS, action_text, table_kind
from rummy_env.cards import CARD_TEXT, FULL_DECK, JOKER, LAYER_MASK, cards_of, count_cards, count_of, parse_card
from rummy_env.melds import MELD_MASK, melds_in
from rummy_env.observation import action_mask

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


# ================================================================ the deck-variant tables

VARIANT_TABLES = {  # preset, overrides -> player range
    ("rum500", (("jokers", 2),)): (2, 6),
    ("rum500", (("decks", 2),)): (2, 7),
    ("rum500", (("aces", "around"), ("jokers", 2), ("decks", 2))): (2, 7),
    ("jokers", ()): (2, 6),
    ("two_decks", ()): (5, 7),
    ("turnover", (("aces", "around"),)): (2, 6),
    ("jokers", (("decks", 2),)): (2, 6),  # the preset's own range (RULES.md §10.5), two decks or not
    ("two_decks", (("jokers", 2), ("aces", "around"))): (5, 7),
}


@st.composite
def variant_rules(draw):
    (preset, over), (lo, hi) = draw(st.sampled_from(sorted(VARIANT_TABLES.items())))
    n = draw(st.integers(lo, hi))
    extra = draw(st.fixed_dictionaries({}, optional={
        "must_discard_to_go_out": st.booleans(),
        "layoffs": st.booleans(),
        "ace_points": st.sampled_from([1, 11]),
        "max_turns": st.integers(1, 80),
        "dry_trigger": st.sampled_from(["on_empty", "on_request"]),
    }))
    return Rules.preset(preset, num_players=n, **dict(over), **extra)


# ---------------------------------------------------------------- an independent reading of §3-§4, §10.1-10.3

def _card(word: str) -> tuple[int, bool]:
    """(card, is_joker) of one word of meld text: ``5H`` or ``JK=5H``."""
    if word.startswith("JK="):
        return parse_card(word[3:]), True
    return parse_card(word), False


def is_legal_meld(words: list[str], aces: str, max_jokers: int) -> bool:
    """A set (3-4 cards of one rank, distinct suits) or a run (3+ consecutive ranks of one
    suit, each rank once; K-A-2 only when aces is around, the ace low/high per aces
    otherwise), with at most half its cards jokers and at most ``max_jokers``."""
    cards = [_card(w) for w in words]
    ids = [c for c, _ in cards]
    jokers = sum(j for _, j in cards)
    if len(ids) < 3 or len(set(ids)) != len(ids) or jokers > len(ids) - jokers or jokers > max_jokers:
        return False
    ranks, suits = [c % 13 for c in ids], [c // 13 for c in ids]
    if len(set(ranks)) == 1:
        return len(ids) <= 4  # distinct cards of one rank are distinct suits
    if len(set(suits)) != 1 or len(ids) > 13:
        return False
    if len(ids) == 13:
        return True
    rs = set(ranks)
    starts = [r for r in rs if (r - 1) % 13 not in rs]
    if len(starts) != 1:
        return False  # not one cyclic interval
    lo = starts[0]
    wraps = lo + len(ids) - 1 > 12  # the interval passes K -> A
    if not wraps:
        return aces in ("low", "either", "around") or 0 not in rs  # an A at the low end needs the ace low
    ends_at_ace = (lo + len(ids) - 1) % 13 == 0  # ... Q K A: the ace played high
    if ends_at_ace:
        return aces in ("high", "either", "around")
    return aces == "around"  # K A 2: turns the corner


def check_position(env, state) -> None:
    rules = state.rules
    # every card its number of times
    cnt = Counter()
    for h in state.hands:
        cnt.update(count_cards(h))
    cnt.update(state.stock)
    cnt.update(state.discard)
    for m in state.melds:
        for c in m.cards():
            cnt[JOKER if m.jokers >> c & 1 else c] += 1
    assert all(cnt[c] == rules.decks for c in range(52)), {c: cnt[c] for c in range(52) if cnt[c] != rules.decks}
    assert cnt[JOKER] == rules.jokers * rules.decks
    assert set(cnt) <= set(range(53))
    legal = engine.legal_actions(state)
    if state.hand_over:
        return
    agent = env.agent_selection
    ob = env.observe(agent)
    assert np.array_equal(ob["action_mask"], action_mask(legal, size=state.num_actions))
    lay = state.variant
    hand = state.hands[state.current]
    held = Counter(count_cards(hand))
    texts = env.legal_action_texts()
    for a, env_text in zip(legal, texts):
        text = action_text(a, table_kind(rules))
        assert env_text == text == env.action_text(a) == action_text(a, state.table.kind)
        if state.named and not engine.is_joker_step(state, a):
            # jokers named: the id's plain text would play no joker, so it is refused; the
            # whole move's text (engine.move_text) reads back to the id
            with pytest.raises(ValueError, match="plays no joker"):
                env.action_id(text)
            assert engine.action_ids(state, engine.move_text(state, a)) == [a], text
        else:
            assert engine.action_id(state, text) == env.action_id(text) == a, text
    # the whole moves (a move with jokers is several decisions: joker as <card>, then the meld
    # or lay-off): each starts with a legal id, and their texts give their decisions back
    moves = engine.legal_moves(state)
    assert {a for _, a in moves} == set(legal)
    for text, a in moves:
        steps = engine.action_ids(state, text)
        assert steps[0] == a, text
        if len(steps) > 1:
            assert all(lay.joker_as <= x < lay.joker_as + 52 for x in steps[:-1]), text
            assert [x - lay.joker_as for x in steps[:-1]] == sorted(x - lay.joker_as for x in steps[:-1]), text
        if text.startswith("meld "):
            words = text.split()[1:]
            assert is_legal_meld(words, rules.aces, lay.max_jokers), text
            need = Counter(JOKER if w.startswith("JK=") else parse_card(w) for w in words)
            assert not need - held, (text, "not held")
    # completeness for natural melds: every set/run of distinct held natural cards that
    # leaves a card other than the one taken from the discard pile is listed
    if state.phase == engine.PLAY and state.bound < 0 and not state.named:  # (a dug card restricts the melds)
        f = state.drawn_from_discard
        for mid in melds_in(hand & LAYER_MASK & FULL_DECK, rules.aces):
            rest = held - Counter(cards_of(MELD_MASK[mid]))
            if any(c != f for c in rest):
                assert lay.meld_id[mid] in legal, action_text(lay.meld_id[mid], table_kind(rules))


def play_checked(rules: Rules, seed: int, json_every: int = 7) -> int:
    env = rummy_v0.raw_env(rules=rules)
    env.reset(seed=seed)
    rng = random.Random(seed)
    steps = 0
    while True:
        st_ = env.state
        check_position(env, st_)
        if st_.hand_over:
            break
        if steps % json_every == 0:
            d = state_json.to_json(st_)
            back = state_json.from_json(d)
            assert state_json.to_json(back) == d
            assert engine.legal_actions(back) == engine.legal_actions(st_)
        env.step(rng.choice(engine.legal_actions(st_)))
        steps += 1
        assert st_.turn <= rules.max_turns
    assert st_.result["outcome"] in ("out", "dry", "stalled")
    return steps


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant_rules(), st.integers(0, 10**6))
def test_random_play_keeps_every_invariant(rules, seed):
    """10 random variant tables in the suite; the ``slow`` twin below plays 40."""
    play_checked(rules, seed)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant_rules(), st.integers(0, 10**6))
def test_random_play_keeps_every_invariant_40_tables(rules, seed):
    play_checked(rules, seed)


@pytest.mark.parametrize("preset,n", [("jokers", 2), ("jokers", 6), ("two_decks", 5), ("two_decks", 7)])
def test_full_hands_at_each_new_preset(preset, n):
    # a few whole hands at the default max_turns (300) at each preset's ends of its range
    for seed in range(3):
        play_checked(Rules.preset(preset, num_players=n), seed, json_every=25)


# ---------------------------------------------------------------- PettingZoo and Gymnasium

@pytest.mark.parametrize("preset,n,over", [("jokers", 2, {}), ("jokers", 4, {}), ("two_decks", 5, {}), ("two_decks", 7, {}),
                                           ("rum500", 2, {"jokers": 2}), ("rum500", 7, {"decks": 2})])
def test_pettingzoo_api_and_seed_tests(preset, n, over):
    from pettingzoo.test import api_test, seed_test

    api_test(rummy_v0.env(rules=preset, num_players=n, **over), num_cycles=300)
    seed_test(lambda: rummy_v0.env(rules=preset, num_players=n, **over), num_cycles=100)


def test_spaces_per_kind():
    # the fixed Discrete(N) of each kind (actions.py's layout): jokers 632, two_decks 579
    for preset, n, size in [("jokers", 2, 632), ("two_decks", 5, 579), ("two_decks", 7, 579)]:
        env = rummy_v0.env(rules=preset, num_players=n)
        assert env.action_space("player_0").n == size
        space = env.observation_space("player_0")
        assert space["action_mask"].shape == (size,) and space["action_mask"].dtype == np.int8


def test_single_agent_env_passes_gymnasiums_checker_at_jokers():
    from gymnasium.utils.env_checker import check_env

    env = SingleAgentEnv(rules="jokers", seed=0)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=1)
    assert obs.shape == env.observation_space.shape and env.action_masks().shape == (632,)


# ---------------------------------------------------------------- hidden information

@pytest.mark.parametrize("preset,n", [("jokers", 3), ("two_decks", 5)])
def test_observation_ignores_hidden_cards_and_stock_order_at_deck_variant_tables(preset, n):
    env = rummy_v0.raw_env(rules=preset, num_players=n)
    rng = random.Random(3)
    checked = 0
    for seed in range(4):
        env.reset(seed=seed)
        for _ in range(rng.randrange(5, 60)):
            if env.state.hand_over:
                break
            env.step(rng.choice(engine.legal_actions(env.state)))
        if env.state.hand_over:
            continue
        pos = state_json.to_json(env.state)
        base = {a: env.observe(a)["observation"].copy() for a in env.possible_agents}
        for q in range(n):
            # an opponent's hidden cards (not known, not the card taken) swapped with stock cards
            known = Counter(pos["known_cards"][q])
            hidden = list((Counter(pos["hands"][q]) - known).elements())
            if pos["drawn_from_discard"] in hidden and q == pos["current_player"]:
                hidden.remove(pos["drawn_from_discard"])
            k = min(len(hidden), len(pos["stock"]), 3)
            if not k:
                continue
            out = rng.sample(hidden, k)
            into = rng.sample(pos["stock"], k)
            hands = [list(h) for h in pos["hands"]]
            stock = list(pos["stock"])
            for o, i in zip(out, into):
                hands[q][hands[q].index(o)] = i
                stock[stock.index(i)] = o
            changed = dict(pos, hands=hands, stock=stock)
            changed = {k2: v for k2, v in changed.items() if k2 not in ("result", "match_winners")}
            try:
                env.reset(options={"state": changed})
            except ValueError:
                continue  # the swap made the mover unable to finish (a copy of the taken card)
            for i, a in enumerate(env.possible_agents):
                if i != q:
                    assert np.array_equal(env.observe(a)["observation"], base[a]), (preset, q, a)
            checked += 1
        env.reset(options={"state": {k2: v for k2, v in pos.items() if k2 not in ("result", "match_winners")}})
    assert checked >= 4


# ---------------------------------------------------------------- train, export, ONNX, serve at a jokers table

@pytest.fixture(scope="module")
def jokers_run(tmp_path_factory):
    """A tiny `rummy train --rules jokers` run (warm start, snapshots, the card features
    told the table by num_players/kind) and its export."""
    for module in ("torch", "sb3_contrib", "onnx", "onnxscript", "onnxruntime"):  # train + export extras
        needs(module)
    from rummy_env.cli import main as rummy
    from rummy_env.train.config import TrainConfig
    from rummy_env.train.trainer import Trainer

    root = tmp_path_factory.mktemp("jokers_run")
    cfg = TrainConfig(rules="jokers", timesteps=256, out=str(root / "run"), n_envs=8, n_steps=16, batch_size=64,
                      n_epochs=1, workers=1, net_arch=[32], trunk=32, snapshot_every=128, eval_every=0,
                      checkpoint_every=10_000, final_eval_deals=2, eval_deals=2, eval_baselines=["random"],
                      progress=False, warmstart_decisions=400, warmstart_epochs=1, warmstart_dagger_rounds=1,
                      warmstart_dagger_decisions=300, warmstart_dagger_epochs=1)
    report = Trainer(cfg, verbose=0).learn()
    assert report["timesteps"] >= 256
    zip_path = root / "run" / "final_model.zip"
    assert rummy(["export", str(zip_path), "--out", str(root / "export")]) == 0
    return zip_path, root / "export"


def test_export_of_a_jokers_policy_declares_its_layouts(jokers_run):
    import json

    import onnxruntime as ort

    _, export = jokers_run
    spec = json.loads((export / "spec.json").read_text())
    assert spec["actions"]["kind"] == "jokers" and spec["actions"]["num_actions"] == 632
    table = spec["actions"]["table"]
    # 579 discard JK, 580 + card: joker as <card> (580 = joker as AC, 631 = joker as KS)
    assert table[579]["text"] == "discard JK" and table[580]["text"] == "joker as AC"
    assert table[631]["text"] == "joker as KS" and len(table) == 632
    # the observation: the 2-player standard 548, the joker pieces 1 + 1 + 1 + 1 + 52 * 5 and
    # the other seat's 1 + 1 (762 before the jokers_named plane), + 52 jokers_named
    assert spec["cards"]["joker"]["text"] == "JK" and spec["observation"]["size"] == 548 + 264 + 2 == 814
    sess = ort.InferenceSession(str(export / "policy.onnx"), providers=["CPUExecutionProvider"])
    assert {i.name: i.shape for i in sess.get_inputs()} == {"observation": ["batch", 814], "action_mask": ["batch", 632]}
    # the card features read a 2-player layout (10 card planes: 8 + 2 for the one other seat)
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(jokers_run[0]), device="cpu")
    assert model.policy.features_extractor.core.planes == 10


def test_onnx_and_ppo_agents_agree_and_play_legal_jokers_hands(jokers_run):
    from rummy_env.agents import make_agent, table_misfit
    from rummy_env.eval.tournament import play_game

    zip_path, export = jokers_run
    onnx, ppo = make_agent(f"onnx:{export}"), make_agent(f"ppo:{zip_path}")
    env = rummy_v0.raw_env(rules="jokers")
    env.reset(seed=9)
    rng = random.Random(0)
    for _ in range(40):
        if env.state.hand_over:
            break
        ob = env.observe(env.agent_selection)
        a = onnx.act(ob["observation"], ob["action_mask"])
        assert a == ppo.act(ob["observation"], ob["action_mask"]) and ob["action_mask"][a]
        env.step(rng.choice(engine.legal_actions(env.state)))
    r = play_game(Rules.preset("jokers"), [onnx, make_agent("random", seed=1)], seed=4)
    assert r["outcome"] in ("out", "dry", "stalled")
    # the policy names its table when asked to play another (a 4-player standard table:
    # observations of 762 entries, 579 actions)
    why = table_misfit(onnx, Rules.preset("turnover", num_players=4))
    assert "2-player jokers table" in why and "762 entries" in why


def test_serve_answers_a_jokers_position_and_refuses_a_standard_one(jokers_run):
    needs("fastapi")
    httpx = needs("httpx")

    from rummy_env.frontends.serve import make_server
    from server_helpers import running_server

    _, export = jokers_run
    env = rummy_v0.raw_env(rules="jokers")
    env.reset(seed=3)
    rng = random.Random(2)
    for _ in range(25):
        env.step(rng.choice(engine.legal_actions(env.state)))
    legal = {action_text(a, "jokers") for a in engine.legal_actions(env.state)}
    with running_server(make_server(export, port=0, log_level="warning")) as addrs:
        assert all(a[0] == "127.0.0.1" for a in addrs)
        with httpx.Client(base_url=f"http://127.0.0.1:{addrs[0][1]}", timeout=10) as c:
            body = c.post("/act", json=state_json.to_json(env.state)).json()
            assert body["action"] in legal and {x["action"] for x in body["legal_actions"]} == legal
            classic = rummy_v0.raw_env()
            classic.reset(seed=2)
            r = c.post("/act", json=classic.state_dict())
            assert r.status_code == 422 and "standard table" in r.text


# ---------------------------------------------------------------- terminal play and the web table

def test_rummy_play_a_whole_jokers_hand_in_the_terminal():
    # always the first listed move (draw stock, then the first discard or meld): the hand
    # ends (out, dry or stalled) with jokers printed as JK and no traceback
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "rummy_env.cli", "play", "--rules", "jokers", "--opponent", "heuristic",
                        "--seed", "5"], input="1\n" * 700, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, OMP_NUM_THREADS="1", COLUMNS="100"))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "your hand:" in r.stdout and "rules: jokers" in r.stdout
    assert "hand over:" in r.stdout and "points this hand:" in r.stdout


def test_web_table_plays_the_deck_variants():
    """Issue 25: the web table plays every heads-up table (it refused the deck variants before)."""
    from rummy_env.frontends.web import WebTable, opponent_factory

    make, name = opponent_factory("heuristic")
    for rules in ("jokers", {"preset": "classic", "decks": 2}, {"preset": "classic", "aces": "around"}):
        t = WebTable(make, name, rules=rules, seed=3)
        v = t.new_match({})["view"]
        assert v["agent"] == "heuristic" and len(v["hand"]) == 10 and v["to_move"] in ("you", "computer")


def test_search_fits_every_kind_of_table():
    from rummy_env.actions import TABLE_KINDS
    from rummy_env.agents import make_agent, table_misfit

    agent = make_agent("search", seed=0)
    for rules in (Rules.preset("jokers"), Rules.preset("two_decks"), Rules.preset("classic"),
                  Rules.preset("classic", aces="around"), Rules.preset("rum500", jokers=2)):
        assert table_misfit(agent, rules) is None
    assert set(agent.table_kinds) == set(TABLE_KINDS)


# ---------------------------------------------------------------- the variant pieces of an observation, by hand

def test_observation_shows_copies_and_jokers_where_they_are():
    # two decks with jokers, 5 players, 5 cards dealt. Seat 0 (to draw) holds 5H 5H JK 2C 9S;
    # seat 1 melded 4H JK=5H 6H (so holds 2 cards). The pile, bottom first: 7C JK 7C 9D.
    from test_state_json import state_obj

    from rummy_env.cards import CARD_TEXT
    from rummy_env.observation import JOKER_SCALE, offsets

    rules = {"preset": "two_decks", "num_players": 5, "jokers": 2, "hand_size": 5}
    obj = state_obj(rules, [["5H", "5H", "JK", "2C", "9S"], ["KD", "KC"], None, None, None],
                    ["7C", "JK", "7C", "9D"], melds=[["4H", "JK=5H", "6H"]], has_melded=[False, True, False, False, False])
    env = rummy_v0.raw_env(rules=Rules.make(rules))
    env.reset(options={"state": obj})
    o = env.observe("player_0")["observation"]
    off = offsets(5, "jokers+two_decks")

    def cards(piece):
        return sorted(CARD_TEXT[int(c)] for c in np.flatnonzero(o[off[piece]] > 0.5))

    assert cards("hand") == ["2C", "5H", "9S"]              # natural cards, at least one copy
    assert cards("hand_twice") == ["5H"]
    assert o[off["hand_jokers"]][0] == 1 / JOKER_SCALE         # one joker held
    assert cards("upcard") == ["9D"] and o[off["upcard_joker"]][0] == 0
    assert cards("discard_below") == ["7C"] and cards("discard_below_twice") == ["7C"]
    assert o[off["discard_jokers"]][0] == 1 / JOKER_SCALE      # the JK under the upcard
    assert cards("table") == ["4H", "6H"]                     # the joker's 5H is not a natural 5H
    assert cards("table_jokers") == ["5H"]
    # 4H JK=5H 6H takes 3H / 7H at its ends, naturally or as a joker (1 joker in 3 cards:
    # one more makes 2 of 4, at most half)
    assert cards("layoff_low") == cards("joker_layoff_low") == ["3H"]
    assert cards("layoff_high") == cards("joker_layoff_high") == ["7H"]
    assert cards("joker_layoff_set") == [] and cards("table_twice") == []
    assert o[off["rule_two_decks"]][0] == 1
    # the seat after seat 0 (opp1) is seat 1: no known cards, 2 in hand
    assert o[off["opp1_known_jokers"]][0] == 0 and cards("opp1_known_twice") == []


def test_rummy_play_takes_players_for_a_seven_player_two_decks_table():
    needs("torch")  # the default opponent, the shipped policy, is loaded to find it does not fit
    needs("sb3_contrib")
    import os
    import subprocess
    import sys

    # the default opponent (the shipped classic policy) does not fit: heuristic plays every
    # other seat, and the table says so once
    r = subprocess.run([sys.executable, "-m", "rummy_env.cli", "play", "--rules", "two_decks", "--players", "7",
                        "--seed", "5"], input="1\n" * 2500, capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, OMP_NUM_THREADS="1", COLUMNS="120"))
    assert r.returncode == 0, r.stderr
    assert "player_6: " in r.stdout and "player_7" not in r.stdout
    assert r.stdout.count("no shipped policy plays this table") == 1
    bad = subprocess.run([sys.executable, "-m", "rummy_env.cli", "play", "--rules", "classic", "--players", "3"],
                         input="", capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "preset 'classic' is for 2-2 players, not 3" in bad.stderr


@pytest.mark.parametrize("rules,taken,second,meld", [
    # two decks: seat 0 takes the 7H from the pile and melds a 7H; whether it holds the
    # dealt second 7H (or a 3S instead) must not show in the others' observations
    ({"preset": "two_decks", "num_players": 5, "hand_size": 5}, "7H", "7H", "meld 7H 8H 9H"),
    # jokers: it takes the joker upcard and melds a joker; a second joker held or not
    ({"preset": "jokers", "hand_size": 5}, "JK", "JK", "meld JK=7H 8H 9H"),
])
def test_what_others_know_does_not_depend_on_hidden_copies(rules, taken, second, meld):
    from test_state_json import state_obj

    seen = []
    for hidden in (second, "3S"):
        r = Rules.make(rules)
        others = [None] * (r.num_players - 1)
        obj = state_obj(rules, [["8H", "9H", hidden, "KC", "2D"]] + others, ["QD", taken])
        env = rummy_v0.raw_env(rules=r)
        env.reset(options={"state": obj})
        for text in ("draw discard", meld, "discard KC"):
            for a in env.action_ids(text):  # a meld with a joker: joker as <card>, then the meld
                env.step(a)
        seen.append([env.observe(a)["observation"] for a in env.possible_agents[1:]])
    for a, b in zip(*seen):
        assert np.array_equal(a, b)


# ---------------------------------------------------------------- digs at 500 Rum with the variants, by brute force

def _plays_bound(st, c, depth):
    """Whether some sequence of at most ``depth`` melds and lay-offs, each legal when the
    dig rule is ignored, plays ``c`` (the natural card, or a joker when ``c`` is JOKER)
    with the turn still able to end: an independent reading of RULES.md §10.4."""
    if depth == 0:
        return False
    saved, st.bound, st._legal = st.bound, -1, None
    moves = [t for t, _ in engine.legal_moves(st) if not t.startswith("discard")]  # whole moves, jokers too
    st.bound, st._legal = saved, None
    p = st.current
    for text in moves:
        s2 = st.copy()
        s2.bound, s2._legal = -1, None
        for a in engine.action_ids(s2, text):
            engine.apply(s2, a)
        if count_of(s2.hands[p], c) < count_of(st.hands[p], c):  # the move played c (or a joker)
            if s2.hand_over or engine.legal_actions(s2):
                return True
        elif not s2.hand_over and _plays_bound(s2, c, depth - 1):
            return True
    return False


@pytest.mark.parametrize("over", [dict(jokers=2, hand_size=7), dict(decks=2, hand_size=7, num_players=3)])
def test_digs_at_500_rum_with_variants_match_a_brute_force(over):
    # every dig the draw phase could name (the topmost copy of each card under the upcard)
    # is legal exactly when a short search finds a way to play the dug card this turn
    from rummy_env.cards import count_add

    rules = Rules.preset("rum500", **over)
    checked = 0
    for seed in range(12):
        st = engine.new_game(rules, seed)
        rng = random.Random(seed)
        while not st.hand_over:
            legal = engine.legal_actions(st)
            if st.phase == engine.DRAW and len(st.discard) > 1:
                lay, disc = st.variant, st.discard
                seen = {disc[-1]}
                for i in range(len(disc) - 2, -1, -1):
                    c = disc[i]
                    if c in seen:
                        continue
                    seen.add(c)
                    s2 = st.copy()
                    for x in disc[i:]:
                        s2.hands[s2.current] = count_add(s2.hands[s2.current], x)
                    del s2.discard[i:]
                    s2.phase, s2.bound, s2._legal = engine.PLAY, c, None
                    dig = lay.joker_dig if c == JOKER else lay.dig_base + c
                    assert (dig in legal) == _plays_bound(s2, c, 3), (seed, c)
                    checked += 1
            engine.apply(st, rng.choice(legal))
    assert checked > 200
