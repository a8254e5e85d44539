"""Issue 25, session 24: how the first hand of a classic match goes between two agents.

Each deal is played from both seats (agent A at seat 0, then at seat 1, the same cards),
the first hand of a match from 0-0, to its end. Printed per agent: the hands it won, how
many of them by going rummy (RULES.md §5: out in one turn with nothing melded before, the
points doubled), the mean points of its wins and the mean turns of the hands it won; and
the void hands. Against the holding heuristic (the search's base) a hand is a race to go
rummy, and a classic match to 100 is mostly one such race (docs/training.md, "The match
result as the reward"):

    python experiments/issue25_races.py pretrained heuristic:holding --deals 150 --seed 5000
"""
from __future__ import annotations

import argparse
from collections import Counter
from typing import Any, Sequence

from rummy_env import Rules
from rummy_env.agents import make_agent
from rummy_env.eval.tournament import play_game


def races(a: str, b: str, deals: int, seed: int, rules: str = "classic") -> dict[str, Any]:
    """Play ``deals`` first hands from both seats; returns ``{"A": stats, "B": stats,
    "void": int, "hands": int}`` with per agent ``wins``, ``rummy`` (wins by going rummy),
    ``points`` (summed over its wins) and ``turns`` (summed over its wins). Deal ``d`` is
    dealt from ``seed + d``; the agents are seeded ``d`` (A) and ``10**6 + d`` (B)."""
    r = Rules.make(rules)
    out: dict[str, Any] = {"A": Counter(), "B": Counter(), "void": 0, "hands": 0}
    for d in range(deals):
        for a_seat in (0, 1):
            pair = [make_agent(a, seed=d), make_agent(b, seed=10**6 + d)]
            agents = pair if a_seat == 0 else pair[::-1]
            res = play_game(r, agents, seed=seed + d)
            out["hands"] += 1
            w = res["winner"]
            if w is None:
                out["void"] += 1
                continue
            st = out["A" if w == a_seat else "B"]
            st["wins"] += 1
            st["rummy"] += int(res["rummy"])
            st["points"] += res["payoffs"][w]
            st["turns"] += res["turns"]
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--deals", type=int, default=150)
    p.add_argument("--seed", type=int, default=5000)
    args = p.parse_args(argv)
    res = races(args.a, args.b, args.deals, args.seed)
    print(f"{res['hands']} hands ({args.deals} deals from both seats), {res['void']} void")
    for k, name in (("A", args.a), ("B", args.b)):
        st = res[k]
        w = st["wins"]
        if w:
            print(f"{name}: won {w} ({100 * w / res['hands']:.1f}%), {st['rummy']} by going rummy, "
                  f"{st['points'] / w:.1f} points a win, {st['turns'] / w:.1f} turns")
        else:
            print(f"{name}: won 0")


if __name__ == "__main__":
    main()
