"""The learner's reward at the end of a hand, shared by self-play and the warm start."""
from __future__ import annotations

from typing import Any

import numpy as np

from rummy_env import engine

REWARDS = ("points", "win", "match", "points+match")
"""The learner's rewards (``TrainConfig.reward``)."""
MATCH_REWARDS = ("match", "points+match")
"""The rewards whose episode is a whole match (the others': one hand)."""


def hand_rewards(state: Any, reward: str = "points", reward_scale: float = 0.01) -> np.ndarray:
    """Each seat's reward for a finished hand, float32 ``[num_players]``.

    ``reward="points"``: the seat's payoff in points (RULES.md §5: the winner takes the
    others' deadwood, doubled when going rummy; zero-sum; under ``scoring="melds"``,
    §10.4, the seat's hand points minus the mean of the others') times ``reward_scale``.
    ``reward="win"``: +1 for the seat that went out, -1 for every other seat, 0 for all
    on a void hand (RULES.md §6); ``reward_scale`` is not applied. The evaluations
    count hands won, which "win" optimises directly; "points" also prices how much a
    hand is won or lost by. ``reward="match"``: 0 for a hand after which the match goes
    on; once a total reaches the target (RULES.md §7; every hand when the rules have no
    target) the match result, ``engine.match_payoffs``: +1 for a sole winner, -1 for each
    other seat, and ``k`` winners of a split match share ``n - k`` (``(n - k) / k`` each),
    as ``RummyEnv(episode="match")`` rewards it. ``reward="points+match"``: the "points"
    reward of every hand plus, after the match's last hand, the match result.

    Raises:
        ValueError: ``reward`` is not one of ``REWARDS``.
    """
    if reward == "points":
        return np.asarray(state.payoffs, dtype=np.float32) * reward_scale
    if reward == "win":
        w = state.result["winner"]
        out = np.zeros(len(state.payoffs), dtype=np.float32)
        if w is not None:
            out -= 1.0
            out[w] = 1.0
        return out
    if reward in MATCH_REWARDS:
        out = (np.asarray(state.payoffs, dtype=np.float32) * reward_scale if reward == "points+match"
               else np.zeros(len(state.payoffs), dtype=np.float32))
        if state.match_over:
            out += np.asarray(engine.match_payoffs(state), dtype=np.float32)
        return out
    raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")


def deadwood_potential(state: Any, seat: int, shaping: float, reward_scale: float = 0.01) -> float:
    """The potential ``phi(s)`` of the deadwood shaping: ``-shaping * reward_scale *
    deadwood``, where deadwood is the points of the cards in ``seat``'s hand
    (``engine.deadwood``: what the seat would pay if another seat went out now,
    RULES.md §5), and 0 once the hand is over.

    The shaped reward of a learner step from ``s`` to ``s'`` is ``r + gamma * phi(s') -
    phi(s)`` (potential-based shaping, Ng, Harada and Russell 1999): over a hand the
    shaping terms telescope to ``-phi(s_0)`` (``phi`` is 0 at its end), a constant of the
    deal that no action changes, so a policy's ranking, and the optimal policy, are
    those of the unshaped reward; it only rewards shedding points along the way
    (melding, laying off, discarding high cards) before the hand's end says whether that
    won. ``shaping``: float >= 0 (0: no shaping); ``reward_scale`` as for ``hand_rewards``.
    """
    if shaping == 0 or state.hand_over:
        return 0.0
    return -shaping * reward_scale * engine.deadwood(state, seat)
