"""The Table (rummy_env/table.py, issue 24): one frozen description of a kind of table
built from the rules, standard included. Values below are counted by hand from
RULES.md and the layouts of actions.py / table.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rummy_env import engine, state_json
from rummy_env.actions import TABLE_KINDS, kind_name, num_actions, table_kind
from rummy_env.cards import JOKER
from rummy_env.engine import GameState, new_game
from rummy_env.env import raw_env
from rummy_env.rules import Rules
from rummy_env.table import Table, kind_layout, kind_players, obs_size, offsets


def test_classic_is_the_standard_kind_with_its_fixed_579_ids_and_548_entries():
    t = Table.of(Rules.preset("classic"))
    assert (t.kind, t.num_players, t.aces, t.jokers, t.decks) == ("standard", 2, "low", 0, 1)
    assert not (t.digs or t.melds_scoring or t.rum500 or t.around or t.two_decks)
    assert t.features == frozenset() and t.fixed_layout and t.action_layout is None
    # 2 draws + 52 discards + 369 catalogue melds (65 sets + 4 x 76 runs) + 52 x 3 lay-offs
    assert t.num_actions == 2 + 52 + (65 + 4 * 76) + 3 * 52 == 579
    # 8 own/public planes + 2 per opponent, 52 wide; 10 scalars with phase 2 wide; 3 per
    # opponent; 15 rule scalars (aces 3, max_recycles 2, 10 single flags)
    assert t.obs_size == 52 * (8 + 2) + 10 + 3 + 15 == 548
    assert t.obs_low == 0.0
    assert t.max_jokers == 0 and t.copies == 1 and t.num_cards == 52
    assert t.deck() == list(range(52))
    assert [r[0] for r in t.action_ranges] == ["draw", "discard", "meld", "layoff"]


def test_500_rum_adds_the_52_digs_and_its_pieces():
    t = Table.of(Rules.preset("rum500"))
    assert (t.kind, t.digs, t.melds_scoring, t.rum500, t.fixed_layout) == ("rum500", True, True, True, True)
    assert t.num_actions == 579 + 52 == 631
    # discard_depth 52 + bound 52 + meld_points 1, opp1_meld_points 1, rule_melds + rule_dig
    assert t.obs_size == 548 + 52 + 52 + 1 + 1 + 2 == 656
    assert t.obs_low == -math.inf  # totals may go negative (RULES.md §10.4)
    assert t.obs_offsets["discard_depth"] == slice(548, 600)
    # a dig table without meld scoring is a 500 Rum kind too (it keeps meld points)
    d = Table.of(Rules.preset("turnover", draw="dig", max_recycles=0))
    assert (d.kind, d.digs, d.melds_scoring, d.rum500) == ("rum500", True, False, True)
    m = Table.of(Rules.preset("classic", scoring="melds", rummy_multiplier=1))
    assert (m.kind, m.digs, m.melds_scoring, m.rum500) == ("rum500", False, True, True)


def test_the_deck_variants_name_their_kind_and_count_their_cards():
    j = Table.of(Rules.preset("jokers"))
    assert (j.kind, j.features, j.max_jokers, j.num_cards) == ("jokers", frozenset({"jokers"}), 2, 54)
    assert j.deck().count(JOKER) == 2 and len(j.deck()) == 54
    assert j.num_actions == 632 and j.action_layout.n == 632 and not j.fixed_layout
    two = Table.of(Rules.preset("two_decks"))
    assert (two.kind, two.num_players, two.copies, two.num_cards, two.max_jokers) == ("two_decks", 5, 2, 104, 0)
    assert two.num_actions == 579 and two.action_layout.n == 579  # a card is named, not its copy
    both = Table.of(Rules.preset("two_decks", jokers=2))
    assert (both.kind, both.num_cards, both.max_jokers) == ("jokers+two_decks", 108, 4)
    assert both.deck().count(JOKER) == 4 and both.deck().count(0) == 2
    a = Table.of(Rules.preset("turnover", aces="around"))
    assert (a.kind, a.around) == ("around", True)
    assert a.num_actions == 579 + 220  # the runs that turn the corner: 55 per suit


def test_one_object_per_distinct_table():
    c = Table.of(Rules.preset("classic"))
    assert Table.of(Rules.preset("classic", target=200)) is c  # the target is not part of the table
    assert Table.of(Rules.preset("classic", aces="high")) != c
    assert Table.of(Rules.preset("classic", aces="high")).kind == "standard"
    assert hash(c) == hash(Table(2))
    with pytest.raises(Exception):
        c.num_players = 3  # frozen


def test_every_kind_has_a_table_that_agrees_with_the_declared_layouts():
    seen = set()
    for rum in (False, True):
        for aces in ("low", "around"):
            for jokers in (0, 2):
                for decks in (1, 2):
                    t = Table(2, aces=aces, jokers=jokers, decks=decks, digs=rum, melds_scoring=rum)
                    seen.add(t.kind)
                    assert t.num_actions == num_actions(t.kind)
                    assert t.obs_size == obs_size(2, t.kind)
                    assert (kind_layout(t.kind) is None) == t.fixed_layout == (t.features == frozenset())
    assert seen == set(TABLE_KINDS) and len(seen) == 16
    r = Rules.preset("rum500", jokers=2, decks=2)
    assert Table.of(r).kind == table_kind(r) == "rum500+jokers+two_decks"


def test_kind_name_is_the_one_place_kinds_are_named():
    assert kind_name(False, []) == "standard"
    assert kind_name(True, ()) == "rum500"
    assert kind_name(True, ["two_decks", "around"]) == "rum500+around+two_decks"  # VARIANT_FEATURES order
    with pytest.raises(ValueError, match="unknown table features"):
        kind_name(False, ["wild"])


def test_bad_fields_are_refused_with_the_rule():
    with pytest.raises(ValueError, match=r"num_players must be an int in 2\.\.6 at a standard table"):
        Table(7)
    assert Table(7, decks=2).kind == "two_decks"  # 2-7 players with two decks (RULES.md §10.3)
    with pytest.raises(ValueError, match="aces must be one of"):
        Table(2, aces="wrap")
    with pytest.raises(ValueError, match="jokers must be 0 or 2"):
        Table(2, jokers=1)
    with pytest.raises(ValueError, match="decks must be 1 or 2"):
        Table(2, decks=3)
    with pytest.raises(TypeError, match="Table.of takes a Rules"):
        Table.of("classic")
    assert list(kind_players("two_decks")) == [2, 3, 4, 5, 6, 7]


def test_misfit_is_the_one_answer_to_does_this_policy_fit():
    t = Table.of(Rules.preset("classic"))
    assert t.misfit(548, 579) is None
    assert t.misfit(np.int64(548), np.int64(579)) is None  # gymnasium's Discrete.n is a numpy integer
    assert t.misfit(None, None) is None  # a scripted agent does not say
    assert t.misfit(656, 631) == ("it was trained for a 2-player rum500 table, this is a 2-player standard table "
                                  "(observations of 548 entries)")
    assert t.misfit(None, 631) == "it chooses among 631 actions (another table), a 2-player standard table has 579"
    three = Table.of(Rules.preset("turnover", num_players=3))
    assert three.misfit(548, 579).startswith("it was trained for a 2-player standard table, this is a 3-player")


def test_dig_card_names_the_card_a_dig_takes_and_nothing_else():
    rum = Table.of(Rules.preset("rum500"))
    assert rum.dig_card(579) == 0 and rum.dig_card(630) == 51  # draw discard AC .. KS
    assert rum.dig_card(1) is None and rum.dig_card(578) is None
    assert Table.of(Rules.preset("classic")).dig_card(579) is None
    # rum500+around+jokers: digs 579-630, draw discard JK 631, then the wrap melds from 632
    t = Table.of(Rules.preset("rum500", aces="around", jokers=2))
    assert t.action_layout.joker_dig == 631
    assert t.dig_card(600) == 21 and t.dig_card(631) == JOKER and t.dig_card(632) is None
    melds_only = Table.of(Rules.preset("classic", scoring="melds", rummy_multiplier=1))
    assert melds_only.num_actions == 631 and melds_only.dig_card(600) is None  # the ids exist, the draw is top


def test_a_position_carries_its_table_through_every_constructor():
    rules = Rules.preset("rum500", jokers=2)
    s = new_game(rules, seed=3)
    t = Table.of(rules)
    assert s.table is t and s.num_actions == t.num_actions and s.variant is t.action_layout
    assert s.copy().table is t
    engine.apply(s, engine.legal_actions(s)[0])
    back = state_json.from_json(state_json.to_json(s))
    assert back.table is t and state_json.to_json(back) == state_json.to_json(s)
    blank = GameState(Rules.preset("classic"))
    assert (blank.hands, blank.dealer, blank.scores, blank.table.kind) == ([0, 0], 1, [0, 0], "standard")
    assert blank.variant is None and blank.num_actions == 579
    env = raw_env(rules="jokers")
    assert env.table is Table.of(env.rules) and env.action_space("player_0").n == env.table.num_actions


def test_every_field_of_a_standard_table_lies_where_the_layout_says():
    off = offsets(2)
    assert off["hand"] == slice(0, 52) and off["opp1_known"] == slice(416, 468)
    assert off["is_mover"].start == 520 and off["rule_aces"] == slice(533, 536)
