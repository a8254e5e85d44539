"""Moves with jokers as short sequences of decisions (issue 24 item 3; docs/env.md "Moves
with jokers"): ``joker as <card>`` per joker in ascending card order, then the meld or
lay-off id. Every table's action space stays at most 2,048 ids; the legal moves are the
game's (RULES.md §10.2); a position mid-move has its own STATE and observation plane."""
from __future__ import annotations

import numpy as np
import pytest

from rummy_env import actions, engine, rummy_v0, state_json
from rummy_env.cards import mask_of, parse_card
from rummy_env.melds import MELD_ID_BY_MASK
from rummy_env.observation import Encoder
from rummy_env.rules import Rules
from rummy_env.table import layout
from test_variants import JOKERS, cards, hand, variant_position

JA = 580  # joker as AC at a jokers table: 579 standard ids, then discard JK (579)
J5 = Rules.preset("jokers", hand_size=5)  # 5 dealt each: seat 0 holds 6 after its draw
SEAT0 = ["4H", "6H", "JK", "9C", "KD", "QS"]
SEAT1 = ["5C", "2D", "3S", "8S", "TC"]


def test_every_table_fits_in_2048_ids_and_the_standard_ids_stay():
    for kind in actions.TABLE_KINDS:
        assert actions.num_actions(kind) <= 2048, kind
    assert actions.num_actions("standard") == 579 and actions.num_actions("rum500") == 631
    lay = actions.ActionLayout.of("rum500+around+jokers+two_decks")
    assert lay.n == 905 and lay.texts[:631] == actions.ACTION_TEXTS[:631]


def test_two_jokers_in_one_meld_are_named_lowest_card_first():
    # 4H 6H and two jokers: 'meld JK=3H 4H JK=5H 6H' (at most half jokers: 2 of 4) is
    # joker as 3H (580 + 28), joker as 5H (580 + 30), then the meld of 3H 4H 5H 6H
    s = variant_position(JOKERS, [["4H", "6H", "JK", "JK", "9C"], ["5C"]])
    meld = actions.MELD_BASE + MELD_ID_BY_MASK[mask_of(cards("3H", "4H", "5H", "6H"))]
    ids = engine.action_ids(s, "meld JK=3H 4H JK=5H 6H")
    assert ids == [JA + 28, JA + 30, meld]
    engine.apply(s, ids[0])
    # named 3H: the next joker may only name a higher card; naming a lower one says why
    with pytest.raises(engine.IllegalActionError, match="ascending card order"):
        engine.apply(s, JA + parse_card("2H"))
    with pytest.raises(engine.IllegalActionError, match="finish that move first"):
        engine.apply(s, actions.DISCARD_BASE + parse_card("9C"))
    assert s.named == 1 << 28
    for a in ids[1:]:
        assert a in engine.legal_actions(s)
        engine.apply(s, a)
    assert s.melds[-1].texts() == ["JK=3H", "4H", "JK=5H", "6H"] and hand(s, 0) == cards("9C")
    assert s.named == 0 and s.current == 0 and s.phase == engine.PLAY


def test_a_joker_lay_off_is_joker_as_then_the_lay_off():
    s = variant_position(JOKERS, [["JK", "9C", "KD"], ["5C"]], table=[["4H", "5H", "6H"]])
    assert engine.action_ids(s, "layoff JK=7H high") == [JA + 32, actions.LAYOFF_BASE + 3 * 32 + 2]
    engine.apply(s, JA + 32)
    # named 7H: the high end takes it (the low end wants 3H); nothing else is legal
    assert engine.legal_actions(s) == [actions.LAYOFF_BASE + 3 * 32 + 2]
    assert engine.legal_moves(s) == [("layoff JK=7H high", actions.LAYOFF_BASE + 3 * 32 + 2)]
    engine.apply(s, actions.LAYOFF_BASE + 3 * 32 + 2)
    assert s.melds[0].texts() == ["4H", "5H", "6H", "JK=7H"] and hand(s, 0) == cards("9C", "KD")


def test_a_text_that_does_not_continue_the_named_jokers_is_refused():
    s = variant_position(JOKERS, [["4H", "6H", "JK", "9C"], ["5C"]])
    engine.apply(s, JA + 30)  # joker as 5H
    with pytest.raises(ValueError, match="jokers are named for 5H"):
        engine.action_ids(s, "meld 5H 6H JK=7H")


def test_a_text_that_plays_no_joker_is_refused_while_one_is_named():
    # after joker as 5H, 'meld 4H 5H 6H' written plainly must not be read as the joker move
    # (the joker would play 5H); the whole move's text and the next joker's step are taken
    s = variant_position(J5, [["4H", "5H", "6H", "JK", "9C", "KD"], SEAT1])
    meld = actions.MELD_BASE + MELD_ID_BY_MASK[mask_of(cards("4H", "5H", "6H"))]
    engine.apply(s, JA + 30)
    for text in ("meld 4H 5H 6H", "discard 9C"):
        with pytest.raises(ValueError, match="jokers are named for 5H .* plays no joker"):
            engine.action_ids(s, text)
    assert engine.action_ids(s, "meld 4H JK=5H 6H") == [meld]
    assert s.named == 1 << 30 and hand(s, 0) == cards("4H", "5H", "6H", "9C", "KD", "JK")


def test_joker_as_jk_says_a_joker_stands_for_a_card():
    s = variant_position(J5, [SEAT0, SEAT1])
    with pytest.raises(ValueError, match="a joker stands for a card .* not for a joker"):
        engine.action_ids(s, "joker as JK")


def test_digging_the_upcard_is_the_plain_draw_at_a_500_rum_jokers_table():
    # RULES.md §10.4: the top card alone is 'draw discard' (id 1), as at plain 500 Rum
    env = rummy_v0.raw_env(rules=Rules.preset("rum500", jokers=2))
    env.reset(seed=3)
    up = env.state_dict()["discard"][-1]
    assert env.action_ids(f"draw discard {up}") == [actions.DRAW_DISCARD]


def test_a_position_mid_move_round_trips_and_shows_the_named_joker_to_its_mover_only():
    env = rummy_v0.raw_env(rules=J5)
    s = variant_position(J5, [SEAT0, SEAT1])
    env.reset(options={"state": state_json.to_json(s)})
    env.step(JA + 30)
    d = env.state_dict()
    assert d["jokers_named"] == ["5H"]
    env2 = rummy_v0.raw_env(rules=J5)
    env2.reset(options={"state": d})
    assert env2.state_dict() == d and env2.legal_actions() == env.legal_actions()
    enc = Encoder.for_rules(J5)
    start = {name: off for name, off, _, _ in layout(2, "jokers")}["jokers_named"]
    mine, theirs = enc.encode(env.state, 0), enc.encode(env.state, 1)
    assert np.flatnonzero(mine[start:start + 52]).tolist() == [30]
    assert not theirs[start:start + 52].any()


@pytest.mark.parametrize("named, phase, needle", [
    (["5H"], "draw", "jokers_named must be empty in the draw phase"),
    (["5H", "5H"], "play", "names a card twice"),
    (["5H", "7H"], "play", r"names 2 joker\(s\), but the mover holds 1"),
    (["KS"], "play", "no legal meld or lay-off of the mover's plays jokers as those cards"),
    ("5H", "play", "jokers_named must be a list of card texts"),
    (["JK"], "play", "not for a joker"),
])
def test_bad_jokers_named_is_refused(named, phase, needle):
    s = variant_position(J5, [SEAT0, SEAT1])
    state_json.from_json(state_json.to_json(s))  # the position itself is a legal one
    d = state_json.to_json(s)
    if phase == "draw":  # seat 1 to draw (its 1 card + ... the play phase's seat 0 has drawn): move on a turn
        engine.apply(s, actions.DISCARD_BASE + parse_card("9C"))
        d = state_json.to_json(s)
        assert d["phase"] == "draw"
    d["jokers_named"] = named
    with pytest.raises(ValueError, match=needle):
        state_json.from_json(d)


def test_jokers_named_is_refused_at_a_table_without_jokers():
    env = rummy_v0.raw_env(rules="classic")
    env.reset(seed=0)
    d = env.state_dict()
    assert "jokers_named" not in d
    d["jokers_named"] = ["5H"]
    with pytest.raises(ValueError, match="jokers_named is only for tables with jokers"):
        state_json.from_json(d)


def test_joker_step_names_the_lowest_card_first_then_the_final_id():
    # a meld whose jokers play 3H (28) and 5H (30), last id 300: joker as 3H, joker as 5H,
    # then 300; a named card it has no joker for, or 5H named before 3H, starts another move
    lay = actions.ActionLayout.of("jokers")
    jm = 1 << 28 | 1 << 30
    assert lay.joker_step(jm, 0, 300) == JA + 28
    assert lay.joker_step(jm, 1 << 28, 300) == JA + 30
    assert lay.joker_step(jm, jm, 300) == 300
    assert lay.joker_step(jm, 1 << 30, 300) == -1  # 3H, lower, left unnamed
    assert lay.joker_step(jm, 1 << 29, 300) == -1  # 4H is not one of its jokers
    assert lay.joker_step(0, 0, 300) == 300 and lay.joker_step(0, 1 << 28, 300) == -1  # a natural move
    assert lay.joker_card(JA + 51) == 51 and lay.joker_card(JA + 52) == -1 and lay.joker_card(579) == -1
