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
"""
from __future__ import annotations

import random

import numpy as np
import torch

from rummy_env import engine
from rummy_env.agents.search import Knowledge, SearchAgent, _encoder, determinize
from rummy_env.observation import PlayerView, action_masks_into


def guide_logits(guide, obs: np.ndarray) -> np.ndarray:
    """The guide's (a ``PPOAgent``) action logits for a batch: float32 ``[B, n_actions]``
    for ``obs`` float32 ``[B, obs_dim]``."""
    with torch.no_grad():
        return guide.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()


def guide_rollouts(states: list, guide, seat: int = 0) -> list[float]:
    """Play every state of ``states`` (``GameState``, changed in place) to the end of its hand
    with the guide's most probable legal move at every seat; ``seat``'s payoff in each
    (points, RULES.md §5)."""
    enc = _encoder(states[0].table)
    n_act = states[0].num_actions
    obs = np.zeros((len(states), enc.size), np.float32)
    masks = np.zeros((len(states), n_act), np.int8)
    active = [s for s in states if not s.hand_over]
    while active:
        k = len(active)
        enc.encode_many(active, [s.current for s in active], obs)
        action_masks_into([engine.legal_actions(s) for s in active], masks[:k])
        lg = np.where(masks[:k] != 0, guide_logits(guide, obs[:k])[:, :n_act], -np.inf)
        for s, a in zip(active, lg.argmax(1).tolist()):
            engine.apply(s, a)
        active = [s for s in active if not s.hand_over]
    return [float(s.payoffs[seat]) for s in states]


class GuideRolloutSearch(SearchAgent):
    """``SearchAgent`` whose ``search`` values each candidate by ``guide_rollouts`` (a guide
    is required: ``guide=``)."""

    def search(self, v: PlayerView, cands: list[int], prior: int | None = None) -> int:
        """Mean payoff of each candidate over ``samples`` shared determinizations, each
        played out by the guide; the best replaces ``prior`` only when its paired mean
        advantage exceeds ``margin`` standard errors (as ``SearchAgent.search``)."""
        k = Knowledge(v)
        rng = random.Random(self._rng.getrandbits(64))
        states, owner = [], []
        for _ in range(self.samples):
            base = determinize(k, rng, self.infer)
            engine.legal_actions(base)
            for a in cands:
                s = base.copy()
                engine.apply(s, a)
                states.append(s)
                owner.append(a)
        vals: dict[int, list[float]] = {a: [] for a in cands}
        for a, r in zip(owner, guide_rollouts(states, self._guide)):
            vals[a].append(r)
        return self.choose(vals, cands, prior)


def make(seed: int | None = None) -> GuideRolloutSearch:
    """The measured agent: the shipped classic policy as the guide, 16 samples, margin 2."""
    torch.set_num_threads(1)
    return GuideRolloutSearch(seed, samples=16, guide="pretrained")


def make32(seed: int | None = None) -> GuideRolloutSearch:
    """The second measured agent: 32 samples, margin 0.5."""
    torch.set_num_threads(1)
    return GuideRolloutSearch(seed, samples=32, guide="pretrained", margin=0.5)
