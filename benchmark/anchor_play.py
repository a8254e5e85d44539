"""The anchors' play, pinned: what makes an anchor part of a task's definition.

An anchor is a frozen opponent: a task's numbers mean something only while its anchors
play as they did when the task was published. So every task published since
``classic-2p-v2`` carries, for each anchor, its declared version (``ANCHOR_VERSIONS``)
and the digest of the actions it chooses on a fixed set of positions of the task's
table (``play_digest``), inside the task's definition and so inside its fingerprint and
every row. ``tests/test_benchmark_anchors.py`` plays the positions again: an anchor
whose play changed (a new rule in ``greedy``, a retuned ``heuristic``) fails it, and
the change is published as a new task version with the anchor's version raised and
the new digests, never under the old task id.

The positions (``positions``): single hands of the task's table dealt from
``deal_seed(POSITION_SEED, g)``, played in every seat by a driver that is no anchor
(``driver_move``: a meld or lay-off when one is legal, else a random legal action);
every ``POSITION_STRIDE``-th decision of either seat is kept, up to
``POSITIONS`` (the search anchor is pinned on ``SEARCH_POSITIONS`` of them, evenly spaced). The anchor
answers each position after ``seed(deal_seed(POSITION_SEED, i))`` (a stochastic anchor is
deterministic given its seed), and the digest is the first 16 hex digits of the sha256
of the action ids in order.
"""
from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Sequence

import numpy as np

from rummy_env.actions import DIG_BASE, MELD_BASE
from rummy_env.rules import Rules

POSITIONS = 200
"""Positions per table on which each anchor's play is pinned."""

POSITION_SEED = 2026_1210
"""Seeds the hands the positions come from and the anchor's seed at each position."""

POSITION_STRIDE = 5
"""Every fifth decision of the hands is kept, so the positions spread over many hands."""

SEARCH_POSITIONS = 24
"""On how many of the positions (evenly spaced, ``spread``) the search anchor's play is pinned: a search
decision plays many rollouts, so it costs far more than a scripted anchor's."""

DRIVER = "meld-else-random"
"""Who plays the hands the positions come from (``driver_move``), in every seat."""

ANCHOR_VERSIONS = {
    "random": 1,
    "greedy:eps=0.75": 1,
    "greedy:eps=0.5": 1,
    "greedy:eps=0.25": 1,
    "greedy": 1,
    "heuristic": 1,
    "search:samples=16": 1,
}
"""Each anchor's version: raised, with a new version of every task that has the anchor,
whenever its play changes (``play_digest``)."""


def driver_move(action_mask: np.ndarray, rng: random.Random) -> int:
    """The positions' driver (``DRIVER``): a meld or lay-off drawn uniformly from the legal
    ones when there is one, else a uniformly random legal action. It is no anchor's code,
    so an anchor that changes leaves the positions as they were."""
    legal = np.flatnonzero(action_mask)
    put = legal[(legal >= MELD_BASE) & (legal < DIG_BASE)]
    pick = put if put.size else legal
    return int(pick[rng.randrange(pick.size)])


def positions(rules: Rules, n: int = POSITIONS, seed: int = POSITION_SEED,
              stride: int = POSITION_STRIDE) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` positions ``(observation, action_mask)`` of ``rules``'s table: every
    ``stride``-th decision of single hands dealt from ``deal_seed(seed, g)`` and played by
    ``driver_move`` from ``random.Random(deal_seed(seed, g))`` (module docstring)."""
    from rummy_env import engine
    from rummy_env.eval.tournament import deal_seed
    from rummy_env.observation import Encoder, action_mask

    enc = Encoder.for_rules(rules)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    decisions = 0
    game = 0
    while len(out) < n:
        s = deal_seed(seed, game)
        rng = random.Random(s)
        st = engine.new_game(rules, seed=s)
        while not st.hand_over and len(out) < n:
            obs = enc.encode(st, st.current)
            mask = action_mask(engine.legal_actions(st), size=st.num_actions)
            if decisions % stride == 0:
                out.append((np.array(obs, copy=True), np.array(mask, copy=True)))
            engine.apply(st, driver_move(mask, rng))
            decisions += 1
        game += 1
    return out


def positions_digest(pos: Sequence[tuple[np.ndarray, np.ndarray]]) -> str:
    """sha256 (16 hex digits) of the positions' bytes: changes when the engine deals,
    plays or encodes them differently (then every anchor's digest may change too)."""
    h = hashlib.sha256()
    for obs, mask in pos:
        h.update(np.ascontiguousarray(obs, dtype=np.float32).tobytes())
        h.update(np.ascontiguousarray(mask, dtype=np.int8).tobytes())
    return h.hexdigest()[:16]


def anchor_actions(anchor: str, pos: Sequence[tuple[np.ndarray, np.ndarray]],
                   seed: int = POSITION_SEED) -> list[int]:
    """The action ``anchor`` (a ``make_agent`` name) chooses at each position, seeded
    ``deal_seed(seed, i)`` at position ``i``.

    Raises:
        ValueError: the anchor answers an action its mask does not allow.
    """
    from rummy_env.agents import make_agent
    from rummy_env.eval.tournament import deal_seed

    agent = make_agent(anchor, seed=seed)
    out = []
    for i, (obs, mask) in enumerate(pos):
        agent.seed(deal_seed(seed, i))
        a = int(agent.act(obs, mask))
        if not 0 <= a < mask.size or not mask[a]:
            raise ValueError(f"anchor {anchor!r} answered {a}, an illegal action, at position {i}")
        out.append(a)
    return out


def play_digest(anchor: str, pos: Sequence[tuple[np.ndarray, np.ndarray]], seed: int = POSITION_SEED) -> str:
    """sha256 (16 hex digits) of ``anchor_actions(anchor, pos, seed)``."""
    text = json.dumps(anchor_actions(anchor, pos, seed), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def spread(pos: Sequence[Any], n: int) -> list[Any]:
    """``n`` of the positions, evenly spaced (all of them when ``n`` is their number)."""
    return [pos[i * len(pos) // n] for i in range(n)]


def positions_for(anchor: str) -> int:
    """On how many of the positions ``anchor``'s play is pinned: ``POSITIONS``, the search's
    ``SEARCH_POSITIONS`` for a search anchor."""
    return SEARCH_POSITIONS if anchor.split(":", 1)[0] == "search" else POSITIONS


def measure(rules: Rules, anchors: Sequence[str]) -> dict[str, Any]:
    """The pins of a new task's anchors at ``rules``'s table, measured by running them now
    (what a new task version writes into its ``anchor_play``): ``{"positions": {"count",
    "seed", "stride", "driver", "digest"}, "anchors": {anchor: {"version", "positions",
    "digest"}}}`` with each anchor's current ``ANCHOR_VERSIONS``."""
    pos = positions(rules)
    return {"positions": {"count": POSITIONS, "seed": POSITION_SEED, "stride": POSITION_STRIDE,
                          "driver": DRIVER, "digest": positions_digest(pos)},
            "anchors": {a: {"version": ANCHOR_VERSIONS[a], "positions": positions_for(a),
                            "digest": play_digest(a, spread(pos, positions_for(a)))} for a in anchors}}


def check(task: Any) -> list[str]:
    """Replay ``task``'s pinned positions and anchors (a ``tasks.Task`` with ``anchor_play``);
    returns one line per difference (empty: every anchor plays as when the task was
    published). An anchor whose ``ANCHOR_VERSIONS`` entry is above the version the task
    pinned has been superseded on purpose and is not replayed (``superseded``)."""
    pins = task.anchor_play
    if not pins:
        return []
    p = pins["positions"]
    pos = positions(task.make_rules(), p["count"], p["seed"], p["stride"])
    got = positions_digest(pos)
    if got != p["digest"]:
        return [f"task {task.id}: its positions changed (digest {got}, published {p['digest']}): the engine now "
                f"deals, plays or encodes the table's hands differently, so the task's numbers are no longer "
                f"reproducible; publish a new version of the task"]
    out = []
    for a, pin in pins["anchors"].items():
        if ANCHOR_VERSIONS.get(a, pin["version"]) > pin["version"]:
            continue
        got = play_digest(a, spread(pos, pin["positions"]), p["seed"])
        if got != pin["digest"]:
            out.append(f"task {task.id}: anchor {a!r} (version {pin['version']}) plays differently on the task's "
                       f"{pin['positions']} positions (digest {got}, published {pin['digest']}). An anchor is frozen "
                       f"once a task uses it: undo the change, or raise ANCHOR_VERSIONS[{a!r}] in "
                       f"benchmark/anchor_play.py and publish a new version of every task that has it "
                       f"(anchor_play.measure gives its pins); the published tasks stay as they are")
    return out


def superseded(task: Any) -> list[str]:
    """The anchors of ``task`` pinned at a version below their current ``ANCHOR_VERSIONS``:
    the task's rows were measured against play the code no longer has."""
    pins = task.anchor_play or {}
    return [a for a, pin in pins.get("anchors", {}).items() if ANCHOR_VERSIONS.get(a, pin["version"]) > pin["version"]]
