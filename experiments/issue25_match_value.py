"""Issue 25, session 26: the search valued by the match, not the hand. Not part of the
package: a record of the experiment, played as a ``MODULE:ATTR`` agent. From the
repository's root:

    PYTHONPATH=experiments rummy eval --agents issue25_match_value:plain search --rules classic \\
        --deals 100 --seed 9301 --workers 2
    PYTHONPATH=experiments rummy eval --agents issue25_match_value:guided search --rules classic \\
        --deals 100 --seed 9302 --workers 2

and the same with ``guided_m1`` (seed 9303), ``plain_ht`` (9304) and ``guided_ht`` (9305).

``SearchAgent`` as shipped (``plain``: the default search; ``guided``: ``guide=pretrained``),
but a rollout's value is the seat's chance to win the match after the hand, not the hand's
points: 1 if the hand ends the match (RULES.md §7: a total reaches the target) with the
seat among the winners, 0 if it ends it otherwise, else ``match_value(need, opp_need)``, the
chance to win a two-player match from those points still needed. That table is computed
once per target by the recursion

    V(a, b) = sum_x p(x) [V(a - x, b) + V(a, b - x)] / (1 - p_void),
    V(a <= 0, b) = 1,  V(a, b <= 0) = 0,

over ``p(x)``, the chance that a given seat wins a hand for ``x`` points between two equal
players (the hands of ``hand_points``: whole hands from the deal played by the search's
holding rollout policy at every seat, RULES.md §5, rummy doubled) and ``p_void`` the chance
of a hand nobody wins. With more than two players the closest opponent (the highest
total) stands for all of them. The agent reads the observation and the mask alone (the
determinizations are ``SearchAgent``'s, the match totals and the target are in the
observation).
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np

from rummy_env import engine
from rummy_env.agents.search import SearchAgent, rollout
from rummy_env.rules import Rules


@lru_cache(maxsize=4)
def hand_points(hands: int = 20000, seed: int = 0) -> tuple[dict[int, float], float]:
    """``(p, p_void)``: ``p[x]`` the chance that seat 0 wins a classic two-player hand for
    ``x`` points (by symmetry, either seat), ``p_void`` the chance nobody wins it; from
    ``hands`` hands played from the deal by the holding rollout policy at both seats."""
    rules = Rules(num_players=2, target=None)
    wins: Counter = Counter()
    void = 0
    for i in range(hands):
        s = engine.new_game(rules, seed=seed * 1_000_003 + i)
        rollout(s, 0, policy="holding")
        w = s.result.get("winner")
        if w is None:
            void += 1
        else:
            wins[int(s.payoffs[w])] += 1
    p = {x: c / (2 * hands) for x, c in wins.items()}  # either seat: half the wins each
    return p, void / hands


@lru_cache(maxsize=8)
def match_table(target: int) -> np.ndarray:
    """``V[a, b]`` for ``a, b`` in ``0..target``: the chance that a seat that needs ``a`` more
    points wins a two-player match against an equal one that needs ``b`` (index 0: the
    match is over; ``V[0, b] = 1`` for ``b > 0``, ``V[a, 0] = 0``)."""
    p, p_void = hand_points()
    xs = np.array(sorted(p), dtype=np.int64)
    ps = np.array([p[x] for x in xs])
    V = np.zeros((target + 1, target + 1))
    V[0, 1:] = 1.0
    for a in range(1, target + 1):
        for b in range(1, target + 1):
            win = V[np.maximum(a - xs, 0), b]
            lose = V[a, np.maximum(b - xs, 0)]
            V[a, b] = float(ps @ (win + lose)) / (1 - p_void)
    return V


def match_value(s: engine.GameState, seat: int = 0) -> float:
    """``seat``'s chance to win the match once ``s``'s hand is over (see the module)."""
    t = s.rules.target
    if s.match_over:
        return 1.0 if seat in s.match_winners else 0.0
    V = match_table(int(t))
    need = t - s.scores[seat]
    opp = t - max(sc for q, sc in enumerate(s.scores) if q != seat)
    return float(V[max(0, min(t, need)), max(0, min(t, opp))])


class MatchValueSearch(SearchAgent):
    """``SearchAgent`` whose rollouts are valued by ``match_value`` at a table with a target
    (the hand's points at a table without one, or whose melds score). The rest is
    ``SearchAgent.search``: successive halving, the prior kept unless beaten by ``margin``
    standard errors."""

    def value(self, s) -> float:
        """``s`` (a sample with a candidate played, changed in place) played to the end of
        its hand by the rollout policy (``depth`` 0, the default), then valued by ``match_value`` for seat 0: a chance
        in [0, 1]; at a table without a target or whose melds score (RULES.md §10.4), the
        hand's points (``SearchAgent.value``)."""
        if not s.rules.target or s.table.melds_scoring:
            return super().value(s)
        rollout(s, 0, self.depth, policy=self.policy)
        return match_value(s, 0)


def plain(seed: int | None = None) -> MatchValueSearch:
    """The default search, valued by the match."""
    return MatchValueSearch(seed)


def guided(seed: int | None = None) -> MatchValueSearch:
    """The policy-guided search (``guide=pretrained``), valued by the match."""
    return MatchValueSearch(seed, guide="pretrained")


def guided_m1(seed: int | None = None) -> MatchValueSearch:
    """The policy-guided search valued by the match, ``margin=1``."""
    return MatchValueSearch(seed, guide="pretrained", margin=1.0)


def plain_ht(seed: int | None = None) -> MatchValueSearch:
    """The search valued by the match, with holding rollouts and putting the melds down now
    searched (``policy=holding,timing=1``)."""
    return MatchValueSearch(seed, policy="holding", timing=1)


def guided_ht(seed: int | None = None) -> MatchValueSearch:
    """The policy-guided search valued by the match, ``policy=holding,timing=1``."""
    return MatchValueSearch(seed, guide="pretrained", policy="holding", timing=1)
