"""Issue 25, session 32: the policy-guided search with the plan clone (the shipped classic
policy since session 30) as its rollout policy, searching only where the plan clone is
unsure (docs/search.md, "The plan clone as the rollout policy"). Not part of the package: a
record of the experiment, played as a ``MODULE:ATTR`` agent. From the repository's root:

    PYTHONPATH=experiments rummy bench agent --agents issue25_plan_rollouts:make --hands 5
    PYTHONPATH=experiments rummy eval --agents issue25_plan_rollouts:make search --rules classic \\
        --deals 100 --seed 2039 --workers 2

``search:guide=pretrained,sure=0.99`` as shipped (the guide's most probable legal move is
the prior; a draw or discard where the guide is at least 0.99 sure of a candidate is that
move, unsearched; otherwise its top discards and the base's are searched; the guide plays
melds and lay-offs), but every rollout plays the hand out with the guide's most probable
legal move at every seat (``issue25_guide_rollouts.GuideRolloutSearch``, session 23, whose
guide was the policy before the plan clone; ``policy=guide`` of the package since), its
forward pass the guide's actor copied into an ``ActorNet`` (the plan features and the discard head, as the snapshots of a run
play): a one-step improvement of the plan clone by its own rollouts, where it is unsure.
The agent reads the observation and the mask alone (the determinizations are
``SearchAgent``'s).
"""
from __future__ import annotations

import numpy as np
import torch

from issue25_guide_rollouts import GuideRolloutSearch
from rummy_env.train.pool import ActorNet


class _ActorGuide:
    """What the search reads of its guide in the rollouts (``logits_batch``), answered by an
    ``ActorNet`` copy of a ``PPOAgent``'s actor."""

    def __init__(self, net: ActorNet) -> None:
        self.net = net

    def logits_batch(self, obs: np.ndarray) -> np.ndarray:
        """Logits float32 ``[B, n_actions]`` of ``obs`` float32 ``[B, obs_dim]`` (not
        normalized: the arg-max and the softmax are the guide's)."""
        with torch.no_grad():
            return self.net(torch.as_tensor(obs)).numpy()


class PlanRolloutSearch(GuideRolloutSearch):
    """``GuideRolloutSearch`` whose rollouts play the guide's ``ActorNet`` (the whole actor
    of the plan clone, discard head included); the guide itself ranks the moves."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._rollout_guide = _ActorGuide(ActorNet.from_policy(self._guide.policy))

    def search(self, v, cands, prior=None):
        guide, self._guide = self._guide, self._rollout_guide
        try:
            return super().search(v, cands, prior)
        finally:
            self._guide = guide


def make(seed: int | None = None) -> PlanRolloutSearch:
    """The measured agent: the shipped classic policy as the guide and the rollout policy,
    searched only where it is below 0.99 sure, 32 samples a candidate, margin 2."""
    torch.set_num_threads(1)
    return PlanRolloutSearch(seed, samples=32, guide="pretrained", sure=0.99)

