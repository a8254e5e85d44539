"""Issue 25, session 31: how sure is the guide at the decisions the guided search
searches, and how often does the search override it? Not part of the package: a record
of the measurement behind ``search:...,sure=P`` (docs/search.md, "How sure the guide is").
From the repository's root:

    python experiments/issue25_guide_confidence.py --hands 40 --seed 3100

plays ``--hands`` classic hands (seeds ``seed .. seed + hands - 1``), the guided search
(``search:guide=pretrained``, seeded ``seed``) against the plain search (``search``,
seeded ``seed + 1``), the seats swapped every other hand; at each decision the guided
search searches (a draw between the stock and the upcard, a discard) it records the
guide's probability of its most probable legal move (``guide_probability``) and whether
the search's choice differs from the guide's (an override). Prints the decisions and the
override rate by band of that probability.
"""
from __future__ import annotations

import argparse

import numpy as np

from rummy_env.agents import make_agent
from rummy_env.agents.search import SearchAgent, guide_probability
from rummy_env.eval.tournament import play_game
from rummy_env.rules import Rules

BANDS = ((0.0, 0.5), (0.5, 0.9), (0.9, 0.99), (0.99, 1.0), (1.0, 1.0))
"""Bands of the guide's probability: ``[lo, hi)``, the last one exactly 1.0 (float64)."""


class Recorded(SearchAgent):
    """The guided search, recording ``(probability, overridden)`` per searched decision in
    ``records``."""

    def __init__(self, seed: int | None = None, **kw) -> None:
        super().__init__(seed, guide="pretrained", **kw)
        self.records: list[tuple[float, bool]] = []
        self._p = 1.0

    def _guided(self, v, observation, action_mask):
        lg = self._guide.logits(observation)
        self._p = guide_probability(lg, v.legal)
        return super()._guided(v, observation, action_mask)

    def search(self, v, cands: list[int], prior: int | None = None) -> int:
        a = super().search(v, cands, prior)
        self.records.append((self._p, a != prior))
        return a


def bands(records: list[tuple[float, bool]]) -> list[tuple[str, int, float]]:
    """``(band, decisions, override rate)`` per band of ``BANDS`` (rate 0.0 for an empty band)."""
    out = []
    for lo, hi in BANDS:
        inside = [o for p, o in records if (p == 1.0 if lo == hi else lo <= p < hi)]
        name = "1.0" if lo == hi else f"[{lo}, {hi})"
        out.append((name, len(inside), float(np.mean(inside)) if inside else 0.0))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=40, help="classic hands to play (default 40)")
    ap.add_argument("--seed", type=int, default=3100, help="the first hand's seed and the agents' (default 3100)")
    args = ap.parse_args(argv)
    rules = Rules.preset("classic")
    guided, plain = Recorded(args.seed), make_agent("search", seed=args.seed + 1)
    for i in range(args.hands):
        play_game(rules, [guided, plain] if i % 2 == 0 else [plain, guided], seed=args.seed + i)
    r = guided.records
    print(f"{len(r)} searched decisions in {args.hands} hands; the search overrode the guide at "
          f"{sum(o for _, o in r)} ({np.mean([o for _, o in r]):.1%})")
    for name, n, rate in bands(r):
        print(f"guide's probability {name}: {n} decisions ({n / max(1, len(r)):.0%}), overridden {rate:.1%}")


if __name__ == "__main__":
    main()
