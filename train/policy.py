"""``FastMaskablePolicy``, ``SelfPlayPPO``: sb3-contrib's masked actor-critic with a leaner forward pass.

sb3-contrib's ``MaskableActorCriticPolicy`` builds a ``MaskableCategorical`` per call:
two normalisations of the logits (one before and one after masking) and a
``torch.multinomial`` draw, which for 64 games x 579 actions costs more than the
network itself. This subclass computes the same quantities directly:

- illegal logits are replaced by ``MASK_FILL`` (-1e9, ``rummy_env.agents.masking``);
  sb3-contrib's ``MaskableCategorical.apply_masking`` uses -1e8: both underflow to
  probability exactly 0, so the distribution is the same;
- one ``log_softmax`` gives the log-probabilities;
- actions are sampled by the Gumbel-max trick (``argmax(log p + G)``, ``G = -log(-log U)``,
  ``U`` uniform), which draws from the same categorical distribution, or taken by argmax
  when ``deterministic``;
- the entropy is sb3-contrib's: ``-sum p log p`` over legal actions only.

Same weights, same outputs (``tests/test_features.py`` checks log-probabilities,
values and entropies against the parent class); ``predict``, saving and loading
are the parent's.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from rummy_env.agents.masking import mask_logits



def _mask_tensor(action_masks, shape: torch.Size, device: torch.device) -> torch.Tensor:
    return torch.as_tensor(np.asarray(action_masks) if not isinstance(action_masks, torch.Tensor) else action_masks,
                           dtype=torch.bool, device=device).reshape(shape)


class FastMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` with one log-softmax and Gumbel-max sampling.

    ``forward(obs [B, obs_dim], deterministic, action_masks [B, N] (N: the table's action count, ``Table.num_actions``: 579 at a standard table) bool)`` returns
    ``(actions int64 [B], values float32 [B, 1], log_prob float32 [B])``;
    ``evaluate_actions`` returns ``(values [B, 1], log_prob [B], entropy [B])``.
    """

    def _latents(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.extract_features(obs)
        if self.share_features_extractor:
            return self.mlp_extractor(features)
        pi_features, vf_features = features
        return self.mlp_extractor.forward_actor(pi_features), self.mlp_extractor.forward_critic(vf_features)

    def _log_probs(self, latent_pi: torch.Tensor, action_masks) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        logits = self.action_net(latent_pi)
        masks = None
        if action_masks is not None:
            masks = _mask_tensor(action_masks, logits.shape, logits.device)
            logits = mask_logits(logits, masks)
        return torch.log_softmax(logits, dim=-1), masks

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: Optional[np.ndarray] = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        latent_pi, latent_vf = self._latents(obs)
        values = self.value_net(latent_vf)
        logp, _ = self._log_probs(latent_pi, action_masks)
        if deterministic:
            actions = logp.argmax(dim=-1)
        else:
            # Gumbel-max: argmax(log p + G), G = -log(-log U), U ~ Uniform[0, 1)
            actions = (logp - torch.rand_like(logp).log_().neg_().log_()).argmax(dim=-1)
        return actions, values, logp.gather(-1, actions[:, None]).squeeze(-1)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: Optional[torch.Tensor] = None
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        latent_pi, latent_vf = self._latents(obs)
        values = self.value_net(latent_vf)
        logp, masks = self._log_probs(latent_pi, action_masks)
        log_prob = logp.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)
        p_log_p = logp.exp() * logp
        if masks is not None:
            p_log_p = torch.where(masks, p_log_p, torch.zeros_like(p_log_p))
        return values, log_prob, -p_log_p.sum(-1)


class SelfPlayPPO(MaskablePPO):
    """``MaskablePPO`` that runs rollouts on one torch thread and updates on ``update_threads``.

    During a rollout the learner infers one small batch per step while the worker
    processes wait for it, and the workers step games while it waits for them; on 2
    cores a second torch thread in the learner only adds synchronisation stalls. With
    ``workers = 1`` the games (and their snapshots' forward passes) run in the learner
    process between its forward passes, on the same thread; a second thread there
    speeds batches of tens of rows little and, when another job holds a core, makes
    every forward pass wait for the descheduled thread. The PPO update runs while the
    workers are idle, so it gets every thread. ``Trainer`` sets ``update_threads`` to
    ``torch_threads`` (2); with ``update_threads = 1`` (the default) nothing changes. Saved zips load with plain
    ``MaskablePPO.load``.
    """

    update_threads: int = 1

    def collect_rollouts(self, *args, **kwargs):  # noqa: D102 (SB3's)
        if self.update_threads > 1:
            torch.set_num_threads(1)
        try:
            return super().collect_rollouts(*args, **kwargs)
        finally:
            if self.update_threads > 1:
                torch.set_num_threads(self.update_threads)
