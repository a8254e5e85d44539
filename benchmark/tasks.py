"""The benchmark's versioned tasks (docs/leaderboard.md, "Tasks").

A task fixes everything a reported number depends on: the table (a preset with every
option written out, RULES.md §8-§10), the number of players, match play to the
target (RULES.md §7), the anchors it is evaluated against, the evaluation protocol
(duplicate matches over a fixed list of match seeds, every seat rotation) and the
training budgets. A published task never changes: ``FINGERPRINTS`` holds the hash of
each task's canonical JSON and ``tests/test_benchmark.py`` fails if a task's content
changes while its id stays; a change is a new version (``classic-2p-v2``).

Since the second versions, a task also pins its anchors' play (``anchor_play``, made by
``anchor_play.measure``): each anchor's version and the digest of its actions on fixed
positions of the task's table, so that an anchor whose play changes fails
``tests/test_benchmark_anchors.py`` instead of changing the task silently.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from rummy_env.rules import Rules

PROTOCOL = "duplicate-matches/1"
"""The evaluation protocol's name and version (``protocol.py``): for each anchor, every
match seed is played once per seat rotation, the agent in one seat and the anchor in
every other, each hand of a match dealt from ``hand_seed(match_seed, k)``."""


@dataclass(frozen=True)
class Task:
    """One benchmark task (frozen once published).

    Attributes:
        id: ``NAME-vK`` (e.g. ``classic-2p-v1``).
        description: one line for ``rummy benchmark list``.
        rules: the table: ``{"preset": name, option: value, ...}`` with every option of
            RULES.md §8 written out (``Rules.from_json`` reads it back).
        anchors: the evaluation opponents, ``make_agent`` names (the search at a fixed budget).
        protocol_seed: the match seeds are ``deal_seed(protocol_seed, i)`` for
            ``i < match_seeds`` (``rummy_env.eval.tournament.deal_seed``): exactly the
            seeds ``rummy eval --seed protocol_seed --deals match_seeds`` plays.
        match_seeds: match seeds per anchor; each is played in every seat rotation.
        budgets: training budgets by name, in learner environment steps (the learner's
            own decisions); ``reference_budget`` names the one the reference rows use.
        anchor_play: the anchors' pinned play (``anchor_play.measure``'s form: the
            positions' procedure and digest, and per anchor its version, the number of
            positions and the digest of its actions); empty for the first versions, which
            did not pin it (their definition has no such key).
    """

    id: str
    description: str
    rules: dict[str, Any]
    anchors: tuple[str, ...]
    protocol_seed: int
    match_seeds: int
    budgets: dict[str, int] = field(default_factory=dict)
    reference_budget: str = ""
    anchor_play: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.id.rsplit("-v", 1)[0]

    @property
    def version(self) -> int:
        return int(self.id.rsplit("-v", 1)[1])

    @property
    def players(self) -> int:
        return int(self.rules["num_players"])

    @property
    def rotations(self) -> int:
        """Seat rotations per match seed: every seat (RULES.md §2: seat 0 moves first)."""
        return self.players

    def make_rules(self) -> Rules:
        """The task's ``Rules`` (every option as written in ``rules``)."""
        return Rules.from_json(dict(self.rules))

    def seeds(self) -> list[int]:
        """The published match seeds, in order (ints < 2**63)."""
        from rummy_env.eval.tournament import deal_seed

        return [deal_seed(self.protocol_seed, i) for i in range(self.match_seeds)]

    def budget(self, name: str | None = None) -> int:
        """Learner environment steps of the budget ``name`` (default: the reference one).

        Raises:
            ValueError: an unknown budget name (the message lists the task's).
        """
        key = name or self.reference_budget
        if key not in self.budgets:
            raise ValueError(f"task {self.id} has no budget {key!r}; budgets: "
                             + ", ".join(f"{k} ({v:,} steps)" for k, v in self.budgets.items()))
        return self.budgets[key]

    def to_json(self) -> dict[str, Any]:
        """Everything the task fixes, as JSON (what the fingerprint hashes and every row carries)."""
        out = {"id": self.id, "name": self.name, "version": self.version, "description": self.description,
                "rules": dict(self.rules), "players": self.players, "matches": True,
                "target": self.rules.get("target"), "anchors": list(self.anchors),
                "protocol": {"name": PROTOCOL, "protocol_seed": self.protocol_seed,
                             "match_seeds": self.match_seeds, "rotations": self.rotations,
                             "matches_per_anchor": self.match_seeds * self.rotations},
                "budgets": dict(self.budgets), "reference_budget": self.reference_budget}
        if self.anchor_play:
            out["anchor_play"] = json.loads(json.dumps(self.anchor_play))
        return out

    def fingerprint(self) -> str:
        """sha256 (first 16 hex digits) of the canonical JSON of ``to_json()`` and the seed list."""
        text = json.dumps({"task": self.to_json(), "seeds": self.seeds()}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def full_rules(preset: str, **overrides: Any) -> dict[str, Any]:
    """``{"preset": preset, **every option}`` of ``Rules.preset(preset, **overrides)``."""
    r = Rules.preset(preset, **overrides)
    return {"preset": preset, **r.options()}


_BUDGETS = {"250k": 250_000, "2M": 2_000_000}
SEARCH_ANCHOR = "search:samples=16"
"""The search anchor's fixed budget: 16 determinizations per candidate (the default
``search`` uses 32); chosen so that a whole protocol evaluation stays within about
15 minutes on 2 cores (docs/leaderboard.md gives the measured times)."""

LADDER = ("random", "greedy:eps=0.75", "greedy:eps=0.5", "greedy:eps=0.25", "greedy", "heuristic", SEARCH_ANCHOR)
"""The anchors of the heads-up tasks since their second versions, weakest first: between
``random`` and ``greedy`` three rungs of greedy with a share of random moves
(``EpsilonGreedyAgent``), so that a learner below greedy is still ranked."""

_BUDGETS_V2 = {"1M": 1_000_000, "10M": 10_000_000, "30M": 30_000_000}
_BUDGETS_SHORT = {"250k": 250_000, "1M": 1_000_000, "3M": 3_000_000}


def _pinned(positions: str, play: dict[str, str]) -> dict[str, Any]:
    """A task's ``anchor_play`` as published: the positions' procedure of ``anchor_play``
    with their ``positions`` digest, and every anchor of ``play`` at version 1 with its
    digest (the values ``anchor_play.measure`` printed when the task was made)."""
    from . import anchor_play as ap

    return {"positions": {"count": ap.POSITIONS, "seed": ap.POSITION_SEED, "stride": ap.POSITION_STRIDE,
                          "driver": ap.DRIVER, "digest": positions},
            "anchors": {a: {"version": 1, "positions": ap.positions_for(a), "digest": d} for a, d in play.items()}}


TASKS: dict[str, Task] = {t.id: t for t in (
    Task("classic-2p-v1", "classic straight rummy heads-up, matches to 100 (RULES.md §9 classic)",
         full_rules("classic"), ("random", "greedy", "heuristic", SEARCH_ANCHOR), protocol_seed=2026_1201,
         match_seeds=100, budgets=dict(_BUDGETS), reference_budget="250k"),
    Task("rum500-2p-v1", "500 Rum heads-up: melds score for their maker, the pile is dug, matches to 500 (§10.4)",
         full_rules("rum500"), ("random", "greedy", "heuristic", SEARCH_ANCHOR), protocol_seed=2026_1202,
         match_seeds=100, budgets=dict(_BUDGETS), reference_budget="250k"),
    Task("turnover-4p-v1", "four players, the pile turned over when the stock runs out, matches to 200 (§9 turnover)",
         full_rules("turnover", num_players=4), ("random", "greedy", "heuristic"), protocol_seed=2026_1203,
         match_seeds=50, budgets=dict(_BUDGETS), reference_budget="250k"),
    # the second versions: budgets where learning shows, the ladder of anchors, the anchors' play pinned
    Task("classic-2p-v2", "classic straight rummy heads-up, matches to 100 (RULES.md §9 classic)",
         full_rules("classic"), LADDER, protocol_seed=2026_1201, match_seeds=100, budgets=dict(_BUDGETS_V2),
         reference_budget="10M",
         anchor_play=_pinned("356b7d4a39d74055", {
             "random": "12a87bb3c833a526", "greedy:eps=0.75": "a3a8dfcecaf3a800", "greedy:eps=0.5": "d464334a4e6908bd",
             "greedy:eps=0.25": "a297dd617d13bf2d", "greedy": "a7aed0b76ebe5311", "heuristic": "e38f48d9e0283c38",
             SEARCH_ANCHOR: "e3b15823175f59d0"})),
    Task("short-2p-v1", "the easy rung: classic heads-up with seven-card hands, matches to 50 (RULES.md §8 hand_size)",
         full_rules("classic", hand_size=7, target=50), LADDER, protocol_seed=2026_1204, match_seeds=100,
         budgets=dict(_BUDGETS_SHORT), reference_budget="1M",
         anchor_play=_pinned("61b63e747b878e72", {
             "random": "27189d86b5987e4f", "greedy:eps=0.75": "ffcaf6f05dee30eb", "greedy:eps=0.5": "5d50aba63ef0fd63",
             "greedy:eps=0.25": "672bca0a16419cca", "greedy": "17be4110b6263b2a", "heuristic": "aa5e567cb07ec924",
             SEARCH_ANCHOR: "c3c9e7aacf5df579"})),
    Task("rum500-2p-v2", "500 Rum heads-up: melds score for their maker, the pile is dug, matches to 500 (§10.4)",
         full_rules("rum500"), LADDER, protocol_seed=2026_1202, match_seeds=100, budgets=dict(_BUDGETS_V2),
         reference_budget="10M",
         anchor_play=_pinned("12ee2958e3906cb8", {
             "random": "5a6f7fec97a5bcfe", "greedy:eps=0.75": "64be6046a276f0e3", "greedy:eps=0.5": "f13161bb5b4ed057",
             "greedy:eps=0.25": "32518c63e75f8662", "greedy": "dfadfe4b4df84b01", "heuristic": "4a7127a5a61bfd3c",
             SEARCH_ANCHOR: "0e8e902407e519c9"})),
)}

FINGERPRINTS = {
    "classic-2p-v1": "43ff279b4ebc19e9",
    "rum500-2p-v1": "8aa9cf98177b9ff7",
    "turnover-4p-v1": "7a75e4a889993102",
    "classic-2p-v2": "700a414081de724e",
    "short-2p-v1": "f8fadf81e69883ab",
    "rum500-2p-v2": "3418bbeb7363e533",
}
"""Each published task's ``fingerprint()``: a task whose content changes under the same id
fails ``tests/test_benchmark.py`` (publish a new version instead)."""


def get_task(task_id: str) -> Task:
    """The task ``task_id``.

    Raises:
        ValueError: an unknown id (the message lists the tasks; a known name with
            another version says which versions exist).
    """
    if not isinstance(task_id, str) or task_id not in TASKS:
        base = str(task_id).rsplit("-v", 1)[0]
        versions = [t for t in TASKS if t.rsplit("-v", 1)[0] == base]
        hint = f" (versions of {base}: {', '.join(versions)})" if versions else ""
        raise ValueError(f"unknown task {task_id!r}{hint}; tasks: {', '.join(TASKS)}")
    return TASKS[task_id]
