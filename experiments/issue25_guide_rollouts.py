"""Issue 25, session 23: the policy-guided search with the guide as its rollout policy
(docs/search.md, "The guide as the rollout policy"). Not part of the package: a record of
the experiment, played as a ``MODULE:ATTR`` agent. From the repository's root:

    PYTHONPATH=experiments rummy bench agent --agents issue25_guide_rollouts:make --hands 3
    PYTHONPATH=experiments rummy eval --agents issue25_guide_rollouts:make search --rules classic \\
        --deals 100 --seed 7001 --workers 2
    PYTHONPATH=experiments rummy eval --agents issue25_guide_rollouts:make32 search --rules classic \\
        --deals 100 --seed 7002 --workers 2

``SearchAgent(guide=...)`` as shipped (the guide's most probable legal move is the prior,
its top discards and the base's are searched, the guide plays melds and lay-offs), but
every rollout plays the hand out with the guide's most probable legal move at every seat
(RULES.md §3-§6 through the engine's checked ``apply``). All the rollouts of a decision
(samples x candidates, on the same determinizations) step in lockstep: one
``encode_many`` and one batched forward pass of the guide per step over the rollouts still
running. No successive halving: every candidate gets every sample. The agent reads the
observation and the mask alone (the determinizations are ``SearchAgent``'s).

Since session 32 the package does this itself: ``search:guide=POLICY,policy=guide``
(``rummy_env.agents.search.guide_rollouts``); this file keeps the measured agents' names
and settings on top of it.
"""
from __future__ import annotations

import torch

from rummy_env.agents.search import SearchAgent
from rummy_env.agents.search import guide_rollouts as _guide_rollouts


def guide_rollouts(states: list, guide, seat: int = 0) -> list[float]:
    """Play every state of ``states`` (``GameState``, changed in place) to the end of its hand
    with the guide's (a ``PPOAgent``) most probable legal move at every seat; ``seat``'s payoff
    in each (points, RULES.md §5): the package's ``guide_rollouts`` with the guide's
    ``logits_batch``."""
    return _guide_rollouts(states, guide.logits_batch, seat)


class GuideRolloutSearch(SearchAgent):
    """``SearchAgent`` with ``policy="guide"`` (a guide is required: ``guide=``): each
    candidate valued by ``guide_rollouts`` on every sample, the best replacing the prior only
    when its paired mean advantage exceeds ``margin`` standard errors."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("policy", "guide")
        super().__init__(*args, **kwargs)


def make(seed: int | None = None) -> GuideRolloutSearch:
    """The measured agent: the shipped classic policy as the guide, 16 samples, margin 2."""
    torch.set_num_threads(1)
    return GuideRolloutSearch(seed, samples=16, guide="pretrained")


def make32(seed: int | None = None) -> GuideRolloutSearch:
    """The second measured agent: 32 samples, margin 0.5."""
    torch.set_num_threads(1)
    return GuideRolloutSearch(seed, samples=32, guide="pretrained", margin=0.5)
