"""Write the golden game transcripts in tests/golden/ (replayed by test_golden.py).

Each game: one hand under a preset, dealt from a fixed seed, every decision taken by a
seeded random-legal policy (``random.Random(policy_seed).choice`` over
``engine.legal_actions``). A transcript holds the rules and seeds, the deal, one line
per decision (``seat action text``) and the final result and scores.

Regenerate (only when a rules change is meant to change these games):
    python tests/make_golden.py
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from rummy_env import Rules, engine, state_json
from rummy_env.actions import action_text

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"

# name -> (rules, deal seed, policy seed); chosen for a mix of endings:
# out (2 and 3 players), a stalled hand paid by lowest deadwood, a dry hand on request.
GAMES: dict[str, tuple[Rules, int, int]] = {
    "classic_2p": (Rules.preset("classic"), 11, 11),
    "turnover_3p": (Rules.preset("turnover", num_players=3), 7, 7),
    "deadwood_4p": (Rules.preset("deadwood", num_players=4), 1, 1),
    "practice_2p": (Rules.preset("practice"), 1, 1),
}


def deal_summary(state: engine.GameState) -> dict:
    j = state_json.to_json(state)
    return {"hands": j["hands"], "discard": j["discard"], "stock": j["stock"]}


def play_game(rules: Rules, seed: int, policy_seed: int) -> tuple[dict, list[tuple[int, str]], engine.GameState]:
    state = engine.new_game(rules, seed=seed)
    deal = deal_summary(state)
    rng = random.Random(policy_seed)
    moves = []
    while not state.hand_over:
        a = rng.choice(engine.legal_actions(state))
        moves.append((state.current, action_text(a)))
        engine.apply(state, a)
    return deal, moves, state


def final_summary(state: engine.GameState) -> dict:
    j = state_json.to_json(state)
    return {"result": j["result"], "scores": j["scores"], "turn": j["turn"], "recycles": j["recycles"],
            "hands": j["hands"], "match_winners": j.get("match_winners")}


def transcript(name: str, rules: Rules, seed: int, policy_seed: int) -> str:
    deal, moves, state = play_game(rules, seed, policy_seed)
    lines = [
        f"# golden game {name}: regenerate with `python tests/make_golden.py`",
        "rules: " + json.dumps(rules.to_json(), sort_keys=True),
        f"seed: {seed}",
        f"policy_seed: {policy_seed}",
        "deal: " + json.dumps(deal),
        "moves:",
    ]
    lines += [f"{seat} {text}" for seat, text in moves]
    lines.append("final: " + json.dumps(final_summary(state), sort_keys=True))
    return "\n".join(lines) + "\n"


def main() -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name, (rules, seed, policy_seed) in GAMES.items():
        path = GOLDEN_DIR / f"{name}.txt"
        path.write_text(transcript(name, rules, seed, policy_seed), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
