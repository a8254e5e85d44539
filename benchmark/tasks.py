"""The benchmark's versioned tasks (docs/leaderboard.md, "Tasks").

A task fixes everything a reported number depends on: the table (a preset with every
option written out, RULES.md §8-§10), the number of players, match play to the
target (RULES.md §7), the anchors it is evaluated against, the evaluation protocol
(duplicate matches over a fixed list of match seeds, every seat rotation) and the
training budgets. A published task never changes: ``FINGERPRINTS`` holds the hash of
each task's canonical JSON and ``tests/test_benchmark.py`` fails if a task's content
changes while its id stays; a change is a new version (``classic-2p-v2``).
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
    """

    id: str
    description: str
    rules: dict[str, Any]
    anchors: tuple[str, ...]
    protocol_seed: int
    match_seeds: int
    budgets: dict[str, int] = field(default_factory=dict)
    reference_budget: str = ""

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
        return {"id": self.id, "name": self.name, "version": self.version, "description": self.description,
                "rules": dict(self.rules), "players": self.players, "matches": True,
                "target": self.rules.get("target"), "anchors": list(self.anchors),
                "protocol": {"name": PROTOCOL, "protocol_seed": self.protocol_seed,
                             "match_seeds": self.match_seeds, "rotations": self.rotations,
                             "matches_per_anchor": self.match_seeds * self.rotations},
                "budgets": dict(self.budgets), "reference_budget": self.reference_budget}

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
)}

FINGERPRINTS = {
    "classic-2p-v1": "43ff279b4ebc19e9",
    "rum500-2p-v1": "8aa9cf98177b9ff7",
    "turnover-4p-v1": "7a75e4a889993102",
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
