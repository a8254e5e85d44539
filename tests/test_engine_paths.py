"""The engine's two paths agree (issue 24; STYLE.md: "a fast path is an optimisation
checked by a differential test").

The tables without deck variants (kinds ``"standard"`` and ``"rum500"``) are played by
the engine's fast path (``GameState.variant is None``: plain 52-bit masks); the deck
variants by the general count-mask path (``_legal_variant`` / ``_apply_variant``).
``engine.new_game(rules, seed, _general=True)`` routes a table without deck variants
through the general path with the same ids and the same deal, and these tests play
random matches of every such kind (every preset, and options that change what is legal
or how a hand is scored) through both paths side by side: at every step the two legal
action lists, the STATE (``state_json.to_json``), the engine's own fields, every seat's
observation and, once a hand ends, the result and payoffs must be the same; an illegal
action must be refused by both, changing nothing.
"""
from __future__ import annotations

import random

import pytest

from rummy_env import Rules, engine, state_json
from rummy_env.actions import MELD_BASE, table_kind
from rummy_env.observation import Encoder

TABLES = [  # (preset, overrides): every preset without deck variants, and options that change the rules path
    ("classic", {}),
    ("turnover", dict(num_players=3)),
    ("turnover", dict(num_players=6)),
    ("deadwood", dict(num_players=4)),
    ("stalemate", dict(num_players=2)),
    ("practice", {}),  # dry_trigger on_request
    ("classic", dict(aces="high", ace_points=11)),
    ("classic", dict(aces="either", must_discard_to_go_out=True)),
    ("classic", dict(layoffs=False, rummy_needs_no_discard=True)),
    ("turnover", dict(num_players=3, scoring="penalty", max_turns=40)),
    ("deadwood", dict(num_players=2, max_turns=25)),  # stalled hands paid by the lowest deadwood
    ("rum500", {}),
    ("rum500", dict(num_players=3)),
    ("rum500", dict(must_discard_to_go_out=True, aces="either")),
    ("rum500", dict(layoffs=False)),
    ("rum500", dict(draw="top")),  # meld scoring without digging
    ("classic", dict(draw="dig", max_recycles=0)),  # digging without meld scoring
]
IDS = [p + "".join(f"-{k}={v}" for k, v in o.items()) for p, o in TABLES]

FIELDS = ("hands", "stock", "discard", "melds", "current", "phase", "drawn_from_discard", "has_melded",
          "melded_this_turn", "recycles", "turn", "scores", "dealer", "hand_number", "known", "discards_by",
          "hand_over", "result", "match_over", "match_winners", "layoff_masks", "payoffs", "meld_points",
          "bound", "num_actions")


def same_position(fast: engine.GameState, gen: engine.GameState, enc: Encoder, where: str) -> None:
    for f in FIELDS:
        assert getattr(fast, f) == getattr(gen, f), (where, f, getattr(fast, f), getattr(gen, f))
    assert state_json.to_json(fast) == state_json.to_json(gen), where
    for seat in range(fast.rules.num_players):
        assert enc.encode(fast, seat).tobytes() == enc.encode(gen, seat).tobytes(), (where, seat)


def test_the_switch_routes_a_standard_table_through_the_general_path():
    for rules in (Rules.preset("classic"), Rules.preset("rum500")):
        fast, gen = engine.new_game(rules, seed=3), engine.new_game(rules, seed=3, _general=True)
        assert fast.variant is None and gen.variant is not None
        assert gen.variant.n == fast.num_actions == gen.num_actions
        assert gen.variant.texts == tuple(engine.action_text(a, fast.table.kind) for a in range(fast.num_actions))
        # the layout of a kind without deck variants is still refused outside the test switch
        with pytest.raises(ValueError, match="fixed layout"):
            engine.ActionLayout.of(table_kind(rules))


@pytest.mark.parametrize("preset,over", TABLES, ids=IDS)
def test_both_paths_play_the_same_matches(preset, over):
    rules = Rules.preset(preset, **over)
    assert table_kind(rules) in ("standard", "rum500")
    enc = Encoder.for_rules(rules)
    seen = {"steps": 0, "hands": 0, "melds": 0, "refused": 0, "digs": 0}
    for seed in range(4):
        fast, gen = engine.new_game(rules, seed=seed), engine.new_game(rules, seed=seed, _general=True)
        rng = random.Random(seed)
        for hand in range(3):  # up to three hands of the match
            while True:
                where = f"seed {seed} hand {hand} turn {fast.turn} phase {fast.phase}"
                legal = engine.legal_actions(fast)
                assert engine.legal_actions(gen) == legal, where
                same_position(fast, gen, enc, where)
                if fast.hand_over:
                    break
                if rng.random() < 0.1:  # an illegal id: both refuse it and change nothing
                    bad = rng.choice([a for a in range(fast.num_actions) if a not in legal])
                    before = state_json.to_json(fast)
                    for s in (fast, gen):
                        with pytest.raises(engine.IllegalActionError):
                            engine.apply(s, bad)
                    assert state_json.to_json(fast) == before == state_json.to_json(gen), where
                    seen["refused"] += 1
                plays = [a for a in legal if a >= MELD_BASE]  # melds, lay-offs, digs: exercise the table
                a = rng.choice(plays) if plays and rng.random() < 0.6 else rng.choice(legal)
                seen["melds"] += MELD_BASE <= a < engine.LAYOFF_BASE
                seen["digs"] += a >= engine.DIG_BASE
                engine.apply(fast, a)
                engine.apply(gen, a)
                seen["steps"] += 1
            seen["hands"] += 1
            if fast.match_over:
                break
            engine.next_hand(fast)
            engine.next_hand(gen)
    assert seen["steps"] > 150 and seen["melds"] > 10 and seen["refused"] > 5, seen
    if rules.draw == "dig":
        assert seen["digs"], seen
