"""The anchors' pinned play (rummy_env.benchmark.anchor_play) and the ladder's rungs,
greedy with a share of random moves (``greedy:eps=E``, agents.scripted.EpsilonGreedyAgent).

An anchor is frozen once a task uses it: ``test_every_anchor_plays_as_when_its_task_was_published``
replays each pinned task's positions and fails, naming the anchor and what to do, when an
anchor's play changed."""
from __future__ import annotations

import numpy as np
import pytest

from rummy_env.agents import is_outside_agent, make_agent
from rummy_env.agents.scripted import EpsilonGreedyAgent, GreedyAgent
from rummy_env.benchmark import anchor_play as ap
from rummy_env.benchmark.tasks import LADDER, TASKS

PINNED = [t.id for t in TASKS.values() if t.anchor_play]


@pytest.fixture(scope="module")
def positions():
    return ap.positions(TASKS["classic-2p-v2"].make_rules())


# ---------------------------------------------------------------- the pins

@pytest.mark.parametrize("tid", PINNED)
def test_every_anchor_plays_as_when_its_task_was_published(tid):
    problems = ap.check(TASKS[tid])
    assert not problems, "\n".join(problems)


def test_the_pins_are_in_every_new_tasks_definition():
    assert set(PINNED) == {"classic-2p-v2", "short-2p-v1", "rum500-2p-v2"}
    for tid in PINNED:
        t = TASKS[tid]
        pins = t.anchor_play
        assert t.anchors == LADDER and list(pins["anchors"]) == list(t.anchors)
        assert pins["positions"] | {"digest": None} == {"count": 200, "seed": ap.POSITION_SEED, "stride": 5,
                                                        "driver": "meld-else-random", "digest": None}
        for a, pin in pins["anchors"].items():
            assert pin["version"] == ap.ANCHOR_VERSIONS[a] == 1
            assert pin["positions"] == (24 if a.startswith("search") else 200)
        assert t.to_json()["anchor_play"] == pins  # so in the fingerprint and in every row
    assert "anchor_play" not in TASKS["classic-2p-v1"].to_json()  # the first versions stay as published


def test_a_changed_anchor_fails_the_check_and_says_what_to_do(monkeypatch):
    # greedy discarding its lowest card of a kind instead of the highest: every greedy rung changes
    def low_discard(self, v):
        a = original(self, v)
        cand = [c for c in range(52) if v.discardable >> c & 1]
        return 2 + min(cand) if 2 <= a < ap.MELD_BASE and cand else a

    original = GreedyAgent._play
    monkeypatch.setattr(GreedyAgent, "_play", low_discard)
    problems = ap.check(TASKS["short-2p-v1"])
    named = [p.split("'")[1] for p in problems]
    assert named == ["greedy:eps=0.75", "greedy:eps=0.5", "greedy:eps=0.25", "greedy"]
    assert "An anchor is frozen once a task uses it" in problems[-1]
    assert "raise ANCHOR_VERSIONS['greedy']" in problems[-1] and "publish a new version" in problems[-1]


def test_a_superseded_anchor_is_not_replayed_and_is_listed(monkeypatch, capsys):
    monkeypatch.setitem(ap.ANCHOR_VERSIONS, "greedy", 2)
    monkeypatch.setattr(GreedyAgent, "_play", lambda self, v: v.legal[0])
    problems = ap.check(TASKS["short-2p-v1"])
    assert "greedy" not in [p.split("'")[1] for p in problems]
    assert ap.superseded(TASKS["short-2p-v1"]) == ["greedy"]
    from rummy_env.cli import main as rummy

    assert rummy(["benchmark", "list"]) == 0
    assert "superseded" in capsys.readouterr().out  # in the task's anchors cell (rich wraps its lines)


def test_changed_positions_are_named_before_any_anchor(monkeypatch):
    monkeypatch.setattr(ap, "driver_move", lambda mask, rng: int(np.flatnonzero(mask)[0]))
    problems = ap.check(TASKS["classic-2p-v2"])
    assert len(problems) == 1 and "its positions changed" in problems[0] and "new version of the task" in problems[0]


def test_positions_are_legal_decisions_of_the_tasks_table(positions):
    assert len(positions) == ap.POSITIONS
    assert ap.positions_digest(positions) == TASKS["classic-2p-v2"].anchor_play["positions"]["digest"]
    assert all(m.any() and o.dtype == np.float32 for o, m in positions)
    assert sum(1 for _, m in positions if m[ap.MELD_BASE:ap.DIG_BASE].any()) >= 10  # some melds and lay-offs
    assert ap.spread(list(range(200)), 24)[:3] == [0, 8, 16] and ap.spread(list(range(5)), 5) == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------- greedy:eps=E

def test_greedy_eps_names_and_bad_values():
    a = make_agent("greedy:eps=0.25", seed=3)
    assert isinstance(a, EpsilonGreedyAgent) and a.eps == 0.25
    assert not is_outside_agent("greedy:eps=0.5")
    for bad, needle in (("greedy:eps=1.5", "eps must be a number in [0, 1], got '1.5'"),
                        ("greedy:eps=nan", "eps must be a number in [0, 1]"),
                        ("greedy:eps=x", "eps must be a number in [0, 1], got 'x'"),
                        ("greedy:0.5", "greedy takes one option, eps=E"),
                        ("greedy:", "greedy takes one option, eps=E")):
        with pytest.raises(ValueError, match=None) as e:
            make_agent(bad)
        assert needle in str(e.value) and repr(bad) in str(e.value)
    with pytest.raises(ValueError, match="a number in"):
        EpsilonGreedyAgent(0, eps=True)


def test_greedy_eps_ends_are_greedy_and_random_and_it_is_seeded(positions):
    greedy = ap.anchor_actions("greedy", positions)
    assert ap.anchor_actions("greedy:eps=0", positions) == greedy
    # the share of moves unlike greedy's: a random move agrees with greedy's by chance (a draw has two)
    share = {eps: np.mean([x != g for x, g in zip(ap.anchor_actions(f"greedy:eps={eps}", positions), greedy)])
             for eps in (0.5, 1)}
    assert share[1] >= 0.45 and 0.3 * share[1] <= share[0.5] <= 0.7 * share[1], share
    # deterministic given the seed, different with another one
    run = [make_agent("greedy:eps=0.5", seed=s) for s in (7, 7, 8)]
    plays = [[a.act(o, m) for o, m in positions[:60]] for a in run]
    assert plays[0] == plays[1] != plays[2]
    # reseeded copies (the batched training env's) play as a fresh agent of that seed
    twin = run[0].reseeded(7)
    assert [twin.act(o, m) for o, m in positions[:60]] == plays[0]
