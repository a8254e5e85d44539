"""Bad and unusual input at the deck-variant tables (RULES.md §10.1-10.3, §10.5; API.md's
Rules, action text, STATE and the illegal-action contract), as an adversarial user sends it.

Written by trying to break the variants: six tests reproduce what that found (7 players
refused by ``rummy eval``; ``JK=JK`` said the table had no jokers; a dig text at a
top-draw variant table named no rule; a lone melded joker lost its ``JK=`` form; a card
listed 100,001 times made a 700 kB message; ``rummy play`` suggested ``search`` where it
cannot play), the others pin bad input that is handled well (a clear ``ValueError`` that
changes nothing).

Card numbers are ``13 * suit + rank`` (suits C D H S, ranks A=0 .. K=12); the jokers
layout's ``discard JK`` is id 579 (docs/env.md "Deck variants").
"""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from rummy_env import Rules, SingleAgentEnv, rummy_v0, state_json
from rummy_env.cli import main as rummy

sys.path.insert(0, str(Path(__file__).parent))
from test_state_json import state_obj  # noqa: E402  (the STATE builder of the variant tests)

JK4 = {"preset": "jokers", "hand_size": 4}


def _snapshot(env) -> str:
    return json.dumps(env.unwrapped.state_dict(), sort_keys=True)


def _joker_state(meld_text: str) -> dict:
    """Seat 0 melded 4H <joker> 6H and holds KD; seat 1 is to draw; the meld's joker text is
    then replaced by ``meld_text``."""
    obj = state_obj(JK4, [["KD"], ["2C", "9D", "QS", "TS"]], ["8C"], melds=[["4H", "JK=5H", "6H"]],
                    current=1, has_melded=[True, False])
    obj["melds"][0][1] = meld_text
    return obj


# ================================================================ Rules

@pytest.mark.parametrize("over, needle", [
    (dict(jokers=1), "jokers must be 0 or 2"),
    (dict(jokers=4), "jokers must be 0 or 2"),
    (dict(jokers=True), "jokers must be 0 or 2"),
    (dict(jokers="2"), "jokers must be 0 or 2"),
    (dict(decks=3), "decks must be 1 or 2, got 3"),
    (dict(decks=True), "decks must be 1 or 2, got True"),
    (dict(decks=2.0), "decks must be 1 or 2, got 2.0"),
    (dict(aces="AROUND"), "aces must be one of low, high, either, around"),
    (dict(decks=2, num_players=8), "num_players must be an int from 2 to 7, got 8"),
    (dict(num_players=8), "num_players must be an int from 2 to 6, got 8"),
    (dict(num_players=7), "num_players=7 needs decks=2"),
    (dict(decks=2, num_players=7, hand_size=14), "hand_size must be null (by players) or an int from 1 to 13"),
    (dict(jokers=2, num_players=6, hand_size=13), "allowed hand_size for 6 players: 1 to 8"),
])
def test_rules_refuse_bad_deck_options(over, needle):
    with pytest.raises(ValueError) as e:
        Rules(**over)
    assert needle in str(e.value)


def test_rules_accept_the_largest_deals():
    # 7 x 13 = 91 of 104 cards (13 left for upcard and stock); with 4 jokers 17 left
    assert Rules(decks=2, num_players=7, hand_size=13).cards_dealt == 13
    assert Rules(decks=2, jokers=2, num_players=7).cards_dealt == 10  # §10.3: 10 at every count


@pytest.mark.parametrize("name, over, needle", [
    ("two_decks", dict(num_players=4), "presets that allow 4 players: turnover, deadwood, stalemate, rum500, jokers"),
    ("two_decks", dict(num_players=8), "presets that allow 8 players: none"),
    ("jokers", dict(num_players=7), "presets that allow 7 players: two_decks"),
])
def test_presets_refuse_bad_counts_and_clashes(name, over, needle):
    with pytest.raises(ValueError) as e:
        Rules.preset(name, **over)
    assert needle in str(e.value)
    with pytest.raises(ValueError) as e2:
        rummy_v0.env(rules=name, **over)
    assert needle in str(e2.value)


# ================================================================ action text

@pytest.fixture
def jokers_env():
    env = rummy_v0.env(rules="jokers")
    env.reset(seed=1)
    return env


@pytest.mark.parametrize("text, needle", [
    ("JK=", "names no action"),
    ("JK=XX", "names no action"),
    ("jk=5h", "names no action"),
    ("meld JK JK 5H", "a joker in a meld says which card it stands for"),
    ("layoff JK", "a joker laid off says which card it stands for"),
    ("layoff JK=7H middle", "the end of a lay-off is one of set, low, high"),
    ("meld 7S 7S 7H", "names a card twice"),
    ("meld 7S 7H JK=7H", "names a card twice"),
    ("meld JK=4H JK=6H 5H", "at most as many jokers as natural cards"),
    ("meld KS AS 2S", "only aces='around' allows"),
    ("meld JK=KS AS 2S", "only aces='around' allows"),
    ("discard JK=5H", "'JK=5H' is not a card"),
])
def test_malformed_joker_text_is_refused_at_a_jokers_table(jokers_env, text, needle):
    with pytest.raises(ValueError) as e:
        jokers_env.unwrapped.action_id(text)
    assert needle in str(e.value)


@pytest.mark.parametrize("rules", ["classic", "two_decks", Rules.preset("classic", aces="around")],
                         ids=["classic", "two_decks", "around"])
@pytest.mark.parametrize("text", ["discard JK", "meld 4H JK=5H 6H", "layoff JK=7H high", "meld JK JK 5H"])
def test_joker_text_at_a_joker_free_table_names_the_missing_jokers(rules, text):
    env = rummy_v0.env(rules=rules)
    env.reset(seed=0)
    with pytest.raises(ValueError) as e:
        env.unwrapped.action_id(text)
    assert "no jokers" in str(e.value)


def test_a_joker_texts_ids_at_the_jokers_table():
    env = rummy_v0.env(rules="jokers")
    env.reset(seed=0)
    u = env.unwrapped
    assert u.action_id("discard JK") == u.action_id(" discard jk ") == 579
    # the same meld whatever the order and case of its cards
    assert u.action_id("meld 4H JK=5H 6H") == u.action_id("meld JK=5H 6h 4h") == u.action_id("meld 4h jk=5h 6h")


@pytest.mark.parametrize("bad", [-1, 632, 2 ** 70, True, False, 5.0, "5", None])
def test_action_text_refuses_ids_outside_the_jokers_layout(jokers_env, bad):
    with pytest.raises(ValueError) as e:
        jokers_env.unwrapped.action_text(bad)
    assert "action must be an int in 0..631" in str(e.value)


def test_action_text_takes_numpy_ints(jokers_env):
    u = jokers_env.unwrapped
    assert u.action_text(np.int64(579)) == u.action_text(np.uint16(579)) == "discard JK"
    assert u.action_text(np.int32(631)) == u.action_text(631)



def test_a_joker_standing_for_a_joker_is_named_as_such(jokers_env):
    for text in ("meld 4H JK=JK 6H", "layoff JK=JK high"):
        with pytest.raises(ValueError) as e:
            jokers_env.unwrapped.action_id(text)
        assert "no jokers" not in str(e.value), str(e.value)
    with pytest.raises(ValueError) as e:
        state_json.from_json(_joker_state("JK=JK"))
    assert "melds[0]" in str(e.value) and "no jokers" not in str(e.value), str(e.value)



def test_a_dig_draw_at_a_top_draw_variant_table_names_the_draw_rule(jokers_env):
    with pytest.raises(ValueError) as classic:
        e = rummy_v0.env(rules="classic")
        e.reset(seed=0)
        e.unwrapped.action_id("draw discard 7H")
    assert "draw='dig'" in str(classic.value)
    with pytest.raises(ValueError) as e:
        jokers_env.unwrapped.action_id("draw discard 7H")
    assert "draw='dig'" in str(e.value), str(e.value)


# ================================================================ illegal actions

def _took_joker_obj() -> dict:
    """Seat 0 took the upcard JK this turn (RULES.md §10.2: not discarded that turn)."""
    return state_obj(JK4, [["2C", "9D", "QS", "JK", "KH"], ["AC", "AD", "AH", "JK"]], ["8C"], phase="play",
                     drawn_from_discard="JK", known_cards=[["JK"], []])


@pytest.mark.parametrize("text, shown, reason", [
    ("discard JK", "discard JK", "JK was taken from the discard pile this turn"),
    # a move with jokers is refused at its first decision, joker as <card> (actions' docstring)
    ("layoff JK=7H high", "joker as 7H", "no meld or lay-off of player 0's can use a joker as 7H"),
    ("meld 2C JK=3C 4C", "joker as 3C", "no meld or lay-off of player 0's can use a joker as 3C"),
    ("discard 8C", "discard 8C", "8C is not in player 0's hand"),
    ("draw stock", "draw stock", "has drawn this turn"),
])
def test_raw_env_refuses_an_illegal_joker_action_and_changes_nothing(text, shown, reason):
    env = rummy_v0.raw_env(rules=JK4)
    env.reset(options={"state": _took_joker_obj()})
    assert env.legal_action_texts() == ["discard 2C", "discard 9D", "discard KH", "discard QS"]
    before = _snapshot(env)
    with pytest.raises(ValueError) as e:
        env.step(env.action_id(text))
    assert f"'{shown}' is illegal" in str(e.value) and reason in str(e.value)
    assert _snapshot(env) == before


def test_env_ends_the_episode_on_an_illegal_joker_discard():
    env = rummy_v0.env(rules=JK4)
    env.reset(options={"state": _took_joker_obj()})
    env.step(579)  # discard JK: masked out (taken this turn)
    assert env.rewards == {"player_0": -1.0, "player_1": 0}
    assert all(env.terminations.values())


@pytest.mark.parametrize("bad", [True, 10 ** 6, -1, 5.0])
def test_env_refuses_non_ids_at_a_jokers_table(bad):
    env = rummy_v0.env(rules="jokers")
    env.reset(seed=0)
    before = _snapshot(env)
    with pytest.raises(ValueError, match="action must be an int in 0..631"):
        env.step(bad)
    assert _snapshot(env) == before


def test_single_agent_jokers_out_of_range_and_bool():
    s = SingleAgentEnv(rules="jokers", seed=0)
    for a in (632, -1, np.int64(631)):
        s.reset(seed=0)
        _, reward, terminated, truncated, info = s.step(a)
        assert terminated and not truncated and info["illegal_action"] and reward == -1.0
    s.reset(seed=0)
    with pytest.raises(ValueError, match="got 'True' \\(bool\\)"):
        s.step(True)


# ================================================================ STATE JSON

@pytest.mark.parametrize("joker, needle", [
    ("JK", "JK=<card>"),
    ("JK=", "empty card text"),
    ("5H=JK", "'5H=JK' is not a card"),
    ("JK=5H=5H", "'5H=5H' is not a card"),
    ("JK = 5H", "'JK = 5H' is not a card"),
    (None, "a card must be text such as 'TH' or 'JK=5H', got None"),
    (30, "a card must be text such as 'TH' or 'JK=5H', got 30"),
])
def test_a_malformed_melded_joker_is_refused_and_the_env_keeps_its_position(joker, needle):
    env = rummy_v0.env(rules="jokers")
    env.reset(seed=3)
    before = _snapshot(env)
    obj = _joker_state(joker)
    with pytest.raises(ValueError) as e:
        env.reset(options={"state": obj})
    assert "melds[0]" in str(e.value) and needle in str(e.value), str(e.value)
    assert _snapshot(env) == before


@pytest.mark.parametrize("field, value, needle", [
    ("hands", "KD", "hands must be a list of 2 hands"),
    ("discard", ["JK=8C"], "discard: 'JK=8C' is not a card"),
    ("drawn_from_discard", "JK=5H", "drawn_from_discard: 'JK=5H' is not a card"),
    ("known_cards", [[], ["JK"]], "known_cards[1] lists JK 1 time(s), but hands[1] holds JK 0 time(s)"),
])
def test_bad_state_fields_at_a_jokers_table(field, value, needle):
    obj = _joker_state("JK=5H")
    obj[field] = value
    with pytest.raises(ValueError) as e:
        state_json.from_json(obj)
    assert needle in str(e.value)


def test_a_four_card_set_plus_a_joker_is_refused():
    obj = _joker_state("JK=5H")
    obj["melds"][0] = ["7S", "7H", "7D", "7C", "JK=7S"]
    with pytest.raises(ValueError, match="7S appears twice in one meld"):
        state_json.from_json(obj)



def test_a_lone_melded_joker_is_named_in_its_joker_form():
    obj = _joker_state("JK=5H")
    obj["melds"][0] = ["JK=5H"]
    with pytest.raises(ValueError) as e:
        state_json.from_json(obj)
    assert "JK=5H" in str(e.value), str(e.value)


def test_state_without_rules_takes_the_envs_jokers_rules():
    obj = _joker_state("JK=5H")
    del obj["rules"]
    env = rummy_v0.env(rules="jokers", hand_size=4)
    env.reset(seed=0)
    env.reset(options={"state": obj})
    assert env.unwrapped.state_dict()["melds"] == [["4H", "JK=5H", "6H"]]



def test_a_huge_repeated_list_gets_a_short_message():
    obj = _joker_state("JK=5H")
    obj["stock"] = obj["stock"] + ["AC"] * 100_000
    with pytest.raises(ValueError) as e:
        state_json.from_json(obj)
    # refused from its length, before a card is read (issue 27): 45 + 100,000 cards, a deck of 54
    assert "stock lists 100045 cards; this table's deck has 54 (decks=1, jokers=2)" in str(e.value)
    assert len(str(e.value)) < 2000, len(str(e.value))


# ================================================================ CLI

def test_eval_two_decks_at_four_players_is_a_clear_error(capsys):
    assert rummy(["eval", "--agents", "heuristic", "greedy", "--rules", "two_decks", "--players", "4",
                  "--deals", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "preset 'two_decks' is for 5-7 players, not 4" in err and "Traceback" not in err


def test_eval_at_eight_players_is_a_clear_error(capsys):
    assert rummy(["eval", "--agents", "heuristic", "greedy", "--rules", "two_decks", "--players", "8",
                  "--deals", "1", "--quiet"]) == 2
    assert "presets that allow 8 players: none" in capsys.readouterr().err



def test_eval_plays_a_seven_player_two_decks_table(capsys):
    from rummy_env.eval.tournament import make_tables
    # 2 agents, 7 seats: one table, the agents repeated in order (make_tables' docstring)
    assert make_tables(2, 7) == [(0, 1, 0, 1, 0, 1, 0)]
    assert rummy(["eval", "--agents", "heuristic", "greedy", "--rules", "two_decks", "--players", "7",
                  "--deals", "1", "--hands", "--quiet"]) == 0



def test_play_takes_search_at_a_variant_table():
    from rummy_env.frontends.play import make_opponent
    from rummy_env.agents.search import SearchAgent
    agent, name = make_opponent("search", 0, Console(file=io.StringIO()), rules=Rules.preset("jokers"))
    assert isinstance(agent, SearchAgent) and name == "search"
