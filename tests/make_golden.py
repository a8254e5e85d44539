"""Write the golden game transcripts in tests/golden/ (replayed by test_golden.py).

One game for every kind of table (``actions.TABLE_KINDS``: the standard tables, 500 Rum
and every combination of the deck variants, with 500 Rum or without), and a few more
standard ones. Each game: one hand under its rules, dealt from a fixed seed, every
decision taken by a fixed seeded policy over ``engine.legal_actions``:

- ``random``: ``random.Random(policy_seed).choice`` of the legal ids;
- ``eager``: the same generator; when a meld, a lay-off or a dig is legal, one of them
  (a uniform choice) with probability 0.7, else any legal id; so the hand puts melds,
  jokers and digs on the table before it ends.

A transcript holds the rules, the seeds and the policy, the deal, one line per decision
(``seat action text``), at a few points of the game (the deal, the first meld or lay-off,
the first dig, half-way, the end) a ``check:`` line with the position's STATE
(``state_json.to_json``), the legal action ids there, and a checksum of every seat's
observation (the first 16 hex digits of the SHA-256 of its float32 bytes,
``observation.Encoder``), and the final result and scores.

Regenerate (only when a rules change is meant to change these games):
    python tests/make_golden.py
"""
from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from rummy_env import Rules, engine, state_json
from rummy_env.actions import DIG_BASE, MELD_BASE, table_kind
from rummy_env.observation import Encoder

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"

# name -> (rules, deal seed, policy seed, policy). The first four (random policy) are the
# standard tables' mix of endings: out (2 and 3 players), a stalled hand paid by lowest
# deadwood, a dry hand on request. The others give each remaining kind of table one game.
GAMES: dict[str, tuple[Rules, int, int, str]] = {
    "classic_2p": (Rules.preset("classic"), 11, 11, "random"),
    "turnover_3p": (Rules.preset("turnover", num_players=3), 7, 7, "random"),
    "deadwood_4p": (Rules.preset("deadwood", num_players=4), 1, 1, "random"),
    "practice_2p": (Rules.preset("practice"), 1, 1, "random"),
    # 500 Rum (RULES.md §10.4)
    "rum500_2p": (Rules.preset("rum500"), 2, 2, "eager"),
    # the deck variants (RULES.md §10.1-10.3)
    "around_2p": (Rules.preset("turnover", aces="around"), 0, 0, "eager"),
    "jokers_2p": (Rules.preset("jokers"), 0, 0, "eager"),
    "two_decks_5p": (Rules.preset("two_decks"), 0, 0, "eager"),
    "around_jokers_3p": (Rules.preset("jokers", aces="around", num_players=3), 1, 1, "eager"),
    "around_two_decks_2p": (Rules.preset("turnover", aces="around", decks=2), 2, 2, "eager"),
    "jokers_two_decks_4p": (Rules.preset("jokers", decks=2, num_players=4), 6, 6, "eager"),
    "around_jokers_two_decks_7p": (Rules.preset("two_decks", jokers=2, aces="around", num_players=7), 8, 8,
                                   "eager"),
    # 500 Rum with the deck variants (RULES.md §10.3-10.4)
    "rum500_around_2p": (Rules.preset("rum500", aces="around"), 0, 0, "eager"),
    "rum500_jokers_3p": (Rules.preset("rum500", jokers=2, num_players=3), 4, 4, "eager"),
    "rum500_two_decks_3p": (Rules.preset("rum500", decks=2, num_players=3), 0, 0, "eager"),
    "rum500_around_jokers_2p": (Rules.preset("rum500", aces="around", jokers=2), 7, 7, "eager"),
    # a dig table that does not score melds (the winner takes the deadwood)
    "dig_around_two_decks_2p": (Rules.preset("turnover", draw="dig", max_recycles=0, aces="around", decks=2),
                                6, 6, "eager"),
    "rum500_jokers_two_decks_4p": (Rules.preset("rum500", jokers=2, decks=2, num_players=4), 8, 8, "eager"),
    "rum500_around_jokers_two_decks_6p": (Rules.preset("rum500", aces="around", jokers=2, decks=2, num_players=6),
                                          9, 9, "eager"),
}

POLICIES = ("random", "eager")
EAGER = 0.7
"""The ``eager`` policy's probability of a meld, a lay-off or a dig when one is legal."""


def choose(policy: str, state: engine.GameState, rng: random.Random) -> int:
    """The policy's decision (module docstring)."""
    legal = engine.legal_actions(state)
    if policy == "random":
        return rng.choice(legal)
    plays = [a for a in legal if is_play(state, a)]
    if plays and rng.random() < EAGER:
        return rng.choice(plays)
    return rng.choice(legal)


def is_play(state: engine.GameState, a: int) -> bool:
    """A meld, a lay-off (a joker's too) or a dig: any id from ``MELD_BASE`` on but ``discard JK``."""
    return a >= MELD_BASE and (state.variant is None or a != state.variant.joker_discard)


def is_dig(state: engine.GameState, a: int) -> bool:
    lay = state.variant
    if lay is None:
        return a >= DIG_BASE
    return lay.dig_base >= 0 and (lay.dig_base <= a < lay.dig_base + 52 or a == lay.joker_dig)


def text(state: engine.GameState, a: int) -> str:
    """The line's text: the id's action text, except the id that finishes a move with
    jokers, written as the whole move (``meld 4H JK=5H 6H`` after ``joker as 5H``:
    ``engine.move_text``), which is how the replay's ``engine.action_id`` reads it."""
    return engine.move_text(state, a)


def obs_checksums(state: engine.GameState, enc: Encoder) -> list[str]:
    """Every seat's observation checksum: the first 16 hex digits of SHA-256 of its bytes."""
    return [hashlib.sha256(enc.encode(state, seat).tobytes()).hexdigest()[:16]
            for seat in range(state.rules.num_players)]


def checkpoint(state: engine.GameState, enc: Encoder) -> dict:
    return {"state": state_json.to_json(state), "legal": list(engine.legal_actions(state)),
            "obs": obs_checksums(state, enc)}


def deal_summary(state: engine.GameState) -> dict:
    j = state_json.to_json(state)
    return {"hands": j["hands"], "discard": j["discard"], "stock": j["stock"]}


def final_summary(state: engine.GameState) -> dict:
    j = state_json.to_json(state)
    out = {"result": j["result"], "scores": j["scores"], "turn": j["turn"], "recycles": j["recycles"],
           "hands": j["hands"], "match_winners": j.get("match_winners")}
    if "meld_points" in j:
        out["meld_points"] = j["meld_points"]
    return out


def play_game(rules: Rules, seed: int, policy_seed: int, policy: str):
    """``(deal, lines, state)``: the moves as ``(seat, text)`` and the checkpoints as
    ``("check", dict)`` in the order they occur."""
    state = engine.new_game(rules, seed=seed)
    enc = Encoder.for_rules(rules)
    deal = deal_summary(state)
    rng = random.Random(policy_seed)
    moves: list[tuple[int, str, bool, bool]] = []  # seat, text, a play, a dig
    probe = state.copy()
    while not probe.hand_over:  # a first pass finds the points to check
        a = choose(policy, probe, rng)
        moves.append((probe.current, text(probe, a), is_play(probe, a), is_dig(probe, a)))
        engine.apply(probe, a)
    first_play = next((i + 1 for i, m in enumerate(moves) if m[2] and not m[3]), None)
    first_dig = next((i + 1 for i, m in enumerate(moves) if m[3]), None)
    at = sorted({0, len(moves) // 2, len(moves)} | {i for i in (first_play, first_dig) if i is not None})
    lines: list = []
    for i in range(len(moves) + 1):
        if i in at:
            lines.append(("check", checkpoint(state, enc)))
        if i < len(moves):
            seat, t, _, _ = moves[i]
            lines.append((seat, t))
            engine.apply(state, engine.action_id(state, t))
    assert state_json.to_json(state) == state_json.to_json(probe)
    return deal, lines, state


def transcript(name: str, rules: Rules, seed: int, policy_seed: int, policy: str) -> str:
    deal, moves, state = play_game(rules, seed, policy_seed, policy)
    lines = [
        f"# golden game {name}: regenerate with `python tests/make_golden.py`",
        f"# kind: {table_kind(rules)}",
        "rules: " + json.dumps(rules.to_json(), sort_keys=True),
        f"seed: {seed}",
        f"policy_seed: {policy_seed}",
        f"policy: {policy}",
        "deal: " + json.dumps(deal),
        "moves:",
    ]
    for seat, t in moves:
        lines.append("check: " + json.dumps(t, sort_keys=True) if seat == "check" else f"{seat} {t}")
    lines.append("final: " + json.dumps(final_summary(state), sort_keys=True))
    return "\n".join(lines) + "\n"


def main() -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name, (rules, seed, policy_seed, policy) in GAMES.items():
        path = GOLDEN_DIR / f"{name}.txt"
        path.write_text(transcript(name, rules, seed, policy_seed, policy), encoding="utf-8")
        print(f"wrote {path} ({table_kind(rules)})")


if __name__ == "__main__":
    main()
