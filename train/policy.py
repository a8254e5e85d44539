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
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from rummy_env.actions import DISCARD_BASE
from rummy_env.agents.masking import mask_logits

from .features import add_discard_scores



def _mask_tensor(action_masks, shape: torch.Size, device: torch.device) -> torch.Tensor:
    return torch.as_tensor(np.asarray(action_masks) if not isinstance(action_masks, torch.Tensor) else action_masks,
                           dtype=torch.bool, device=device).reshape(shape)


class FastMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` with one log-softmax and Gumbel-max sampling.

    ``forward(obs [B, obs_dim], deterministic, action_masks [B, N] (N: the table's action count, ``Table.num_actions``: 579 at a standard table) bool)`` returns
    ``(actions int64 [B], values float32 [B, 1], log_prob float32 [B])``;
    ``evaluate_actions`` returns ``(values [B, 1], log_prob [B], entropy [B])``. With
    ``CardFeatures`` both also take ``[B, obs_dim + EXTRA]``: observations followed by their
    card features (``with_card_features``; the pipelined rollout and the
    ``FixedFeaturesRolloutBuffer``), with the same outputs.

    ``bf16 = True`` (set by ``Trainer`` from ``TrainConfig.precision``) runs the network's
    layers under ``torch.autocast("cpu", torch.bfloat16)`` in ``forward``,
    ``evaluate_actions`` and ``predict_values`` (the rollout and the PPO update alike,
    so the update's first ratios are those of the rollout's own arithmetic): the weights,
    gradients and Adam stay float32, the logits and values come back as float32, and the
    masking, log-softmax, sampling and entropy are float32. The default, False, is float32
    throughout (what a loaded zip does).
    """

    bf16: bool = False

    def _latents(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.extract_features(obs)
        if self.share_features_extractor:
            return self.mlp_extractor(features)
        pi_features, vf_features = features
        return self.mlp_extractor.forward_actor(pi_features), self.mlp_extractor.forward_critic(vf_features)

    def _build(self, lr_schedule) -> None:  # noqa: D102 (SB3's)
        super()._build(lr_schedule)
        scorer = self.discard_scorer
        if scorer is not None:
            if not self.share_features_extractor:
                raise ValueError("a discard head (CardFeatures discard_head=True) needs the features extractor "
                                 "shared by the policy and the value network (share_features_extractor=True)")
            last = scorer.net[-1]  # SB3's orthogonal init reached it: start at zero again (CardDiscardHead)
            torch.nn.init.zeros_(last.weight)
            torch.nn.init.zeros_(last.bias)

    @property
    def discard_scorer(self) -> Optional[torch.nn.Module]:
        """The features extractor's ``CardDiscardHead`` (``discard_head = "cards"``), else None."""
        return getattr(self.features_extractor, "discard_scorer", None)

    def _heads(self, obs: torch.Tensor, masks: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Float32 logits ``[B, N]`` and values ``[B, 1]`` (the layers in bfloat16 when ``bf16``);
        with a discard head, its scores added to the discard logits. ``masks`` (bool
        ``[B, N]``, the legal actions) lets the discard head score only the rows where a
        discard is legal: elsewhere the discard logits are masked out, so their scores change
        no legal action's log-probability and get no gradient (the other rows' discard
        logits are left without scores)."""
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            if self.discard_scorer is None:
                latent_pi, latent_vf = self._latents(obs)
                logits = self.action_net(latent_pi)
            else:
                fx = self.features_extractor
                full = fx.full_features(obs)
                latent_pi, latent_vf = self.mlp_extractor(fx(full))
                logits = self.action_net(latent_pi)
                if masks is None:
                    logits = fx.scored(logits, full)
                else:
                    logits = add_discard_scores(logits, self._discard_rows_scores(full, masks))
            values = self.value_net(latent_vf)
        return logits.float(), values.float()

    def _discard_rows_scores(self, full: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """The discard head's scores ``[B, 52]`` of the rows of ``full`` where ``masks`` has a
        legal discard (``actions.DISCARD_BASE`` + card), zeros in the other rows."""
        rows = masks[:, DISCARD_BASE:DISCARD_BASE + 52].any(1)
        n = int(rows.sum())
        if n == rows.shape[0]:
            return self.discard_scorer(full)
        scores = self.discard_scorer(full[rows]) if n else full.new_zeros((0, 52))
        out = scores.new_zeros((full.shape[0], 52))
        out[rows] = scores
        return out

    def get_distribution(self, obs: torch.Tensor, action_masks: Optional[np.ndarray] = None):
        """sb3-contrib's (what ``predict`` and ``PPOAgent.logits`` read); with a discard head,
        over the logits with its scores added (``_heads``)."""
        if self.discard_scorer is None:
            return super().get_distribution(obs, action_masks)
        logits, _ = self._heads(obs)
        distribution = self.action_dist.proba_distribution(action_logits=logits)
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        return distribution

    def sampling_uniforms(self, rows: int, n_actions: int) -> torch.Tensor:
        """Float32 ``[rows, n_actions]`` uniform draws in [0, 1) (``torch.rand``, torch's
        global generator, as ``forward`` draws them itself) for ``forward``'s ``uniform``:
        the Gumbel noise of the pipelined rollout's step, drawn for all its games at once."""
        return torch.rand((rows, n_actions))

    def with_card_features(self, obs: torch.Tensor) -> torch.Tensor:
        """Float32 ``[B, obs_dim + EXTRA]``: the observations followed by their weight-free
        card features (``CardFeatures.has_fixed`` only; computed as ``forward`` computes them,
        under the same autocast), which ``forward`` and ``evaluate_actions`` take in place of
        the observations (the pipelined rollout keeps them for the update:
        ``FixedFeaturesRolloutBuffer``)."""
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            return self.features_extractor.core(obs.float())

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:  # noqa: D102 (SB3's)
        if not self.bf16:
            return super().predict_values(obs)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return super().predict_values(obs).float()

    def _log_probs(self, logits: torch.Tensor, action_masks) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        masks = None
        if action_masks is not None:
            masks = _mask_tensor(action_masks, logits.shape, logits.device)
            logits = mask_logits(logits, masks)
        return torch.log_softmax(logits, dim=-1), masks

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: Optional[np.ndarray] = None,
                uniform: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """SB3's ``forward``; ``uniform`` (float32 ``[B, N]`` in [0, 1), overwritten): the
        draws of the Gumbel noise, else ``torch.rand_like`` of the logits (the pipelined
        rollout draws a whole step's at once, so the rows' noise does not depend on the
        order in which the workers are answered)."""
        masks = None if action_masks is None else _mask_tensor(action_masks, (obs.shape[0], -1), obs.device)
        logits, values = self._heads(obs, masks)
        logp, _ = self._log_probs(logits, masks)
        if deterministic:
            actions = logp.argmax(dim=-1)
        else:
            # Gumbel-max: argmax(log p + G), G = -log(-log U), U ~ Uniform[0, 1)
            u = torch.rand_like(logp) if uniform is None else uniform
            actions = (logp - u.log_().neg_().log_()).argmax(dim=-1)
        return actions, values, logp.gather(-1, actions[:, None]).squeeze(-1)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: Optional[torch.Tensor] = None
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        masks = None if action_masks is None else _mask_tensor(action_masks, (obs.shape[0], -1), obs.device)
        logits, values = self._heads(obs, masks)
        logp, masks = self._log_probs(logits, masks)
        log_prob = logp.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)
        if masks is None:
            p_log_p = logp.exp() * logp
        else:
            # exp of the illegal entries' ~-1e9 takes torch's slow underflow path (about 12x
            # a normal exp on this CPU): exponentiate 0 there instead, then drop them
            zero = torch.zeros_like(logp)
            legal_logp = torch.where(masks, logp, zero)
            p_log_p = torch.where(masks, legal_logp.exp() * legal_logp, zero)
        return values, log_prob, -p_log_p.sum(-1)


class FixedFeaturesRolloutBuffer(MaskableRolloutBuffer):
    """sb3-contrib's ``MaskableRolloutBuffer`` that also keeps every position's weight-free
    card features (``CardFeatures.fixed``: int8 ``[n_steps, n_envs, EXTRA]``: small whole
    numbers, negative at two-deck tables, where a card can be seen twice), so the PPO update does
    not compute them again for each minibatch of each epoch (issue 26: a quarter of the
    update's time). Its samples' ``observations`` are float32 ``[B, obs_dim + EXTRA]``, the
    observations followed by their features, which ``CardFeatures.forward`` takes as they
    are: the same network outputs and gradients as from the observations alone.

    ``add(..., fixed=float32 tensor [n_envs, EXTRA])`` stores a step's features (the
    pipelined rollout passes those its forward passes computed); a step added without them
    (SB3's own rollout loop) gets them, one step at a time, when ``get`` is first called.
    Should a value not fit an int8 exactly (a fraction, or outside -128..127), the rollout
    keeps none: its samples are the observations alone, and the update computes the
    features itself, as without this buffer.

    Args:
        features: the policy's ``CardFeatures`` (``has_fixed``); the rest as
            ``MaskableRolloutBuffer``.
    """

    def __init__(self, *args, features: torch.nn.Module, **kwargs) -> None:
        self.features = features
        self.extra = int(features.core.out_dim - features.core.obs_dim)
        super().__init__(*args, **kwargs)

    def reset(self) -> None:
        self.fixed = np.zeros((self.buffer_size, self.n_envs, self.extra), dtype=np.int8)
        self.has_fixed = np.zeros(self.buffer_size, dtype=bool)
        self.exact = True  # every value stored so far fits an int8 exactly
        super().reset()

    def _store(self, pos: int, x: torch.Tensor) -> None:
        xs = x.detach().float().numpy()
        with np.errstate(invalid="ignore"):  # NaN or out of range: caught by the comparison
            b = xs.astype(np.int8)
        if not np.equal(b, xs).all():  # compared as float32 (numpy: half the time of torch's to + equal)
            self.exact = False
            return
        self.fixed[pos] = b.reshape(self.n_envs, self.extra)
        self.has_fixed[pos] = True

    def add(self, *args, fixed: Optional[torch.Tensor] = None, **kwargs) -> None:  # noqa: D102 (SB3's)
        if fixed is not None and self.exact:
            self._store(self.pos, torch.as_tensor(fixed))
        super().add(*args, **kwargs)

    def get(self, batch_size: Optional[int] = None):  # noqa: D102 (SB3's)
        if not self.generator_ready:
            with torch.no_grad():
                for pos in np.flatnonzero(~self.has_fixed):
                    if not self.exact:
                        break
                    self._store(int(pos), self.features.fixed(torch.as_tensor(self.observations[pos])))
            self.fixed = self.swap_and_flatten(self.fixed)
        yield from super().get(batch_size)

    def _get_samples(self, batch_inds: np.ndarray, env=None):  # noqa: D102 (SB3's)
        samples = super()._get_samples(batch_inds, env)
        if not self.exact:
            return samples
        obs = torch.cat([samples.observations, self.to_torch(self.fixed[batch_inds]).float()], dim=1)
        return samples._replace(observations=obs)


class SelfPlayPPO(MaskablePPO):
    """``MaskablePPO`` that runs rollouts on one torch thread and updates on ``update_threads``.

    During a rollout the learner infers one small batch per worker per step while the
    other workers step their games (``_collect_pipelined``, over worker processes); on 2
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

    def _setup_model(self) -> None:
        """SB3's, with a ``FixedFeaturesRolloutBuffer`` in place of sb3-contrib's default
        buffer when the policy's features extractor has weight-free card features
        (``CardFeatures.has_fixed``; not saved in a zip: a loaded model sets it up again). A
        ``rollout_buffer_class`` given to the model is kept as it is."""
        super()._setup_model()
        fx = self.policy.features_extractor
        if getattr(fx, "has_fixed", False) and type(self.rollout_buffer) is MaskableRolloutBuffer:
            self.rollout_buffer = FixedFeaturesRolloutBuffer(
                self.n_steps, self.observation_space, self.action_space, self.device, gamma=self.gamma,
                gae_lambda=self.gae_lambda, n_envs=self.n_envs, features=fx, **self.rollout_buffer_kwargs)

    def _update_info_buffer(self, infos: list[dict], dones: Optional[np.ndarray] = None) -> None:
        """SB3's, over the games whose info is not empty only (a hand that ended): the same
        episode and success buffers, without two dict lookups per game per step (the
        rollout's infos are empty while hands go on; 256 games a step)."""
        kept = [i for i, info in enumerate(infos) if info]
        super()._update_info_buffer([infos[i] for i in kept], None if dones is None else np.asarray(dones)[kept])

    def collect_rollouts(self, env, callback, rollout_buffer, n_rollout_steps: int,
                         use_masking: bool = True) -> bool:
        """SB3's ``collect_rollouts`` on one torch thread; over worker processes
        (``MultiProcSelfPlayVecEnv`` with 2 or more) pipelined (``_collect_pipelined``)."""
        if self.update_threads > 1:
            torch.set_num_threads(1)
        try:
            if use_masking and getattr(env, "num_workers", 1) > 1 and hasattr(env, "step_part_async"):
                return self._collect_pipelined(env, callback, rollout_buffer, n_rollout_steps)
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        finally:
            if self.update_threads > 1:
                torch.set_num_threads(self.update_threads)

    def _collect_pipelined(self, env, callback, rollout_buffer, n_rollout_steps: int) -> bool:
        """``MaskablePPO.collect_rollouts`` with the learner's forward pass of one worker's
        games overlapping the other workers' stepping (issue 26).

        SB3 waits for every worker, runs one forward pass over all games and sends the
        actions, so the workers sit idle during the forward pass and the learner during
        the step. Here each worker's games get their own forward pass as soon as that
        worker has stepped: for step ``t + 1`` worker 0's games are answered while worker
        1 still steps ``t``, and so on round the workers. The buffer, the callbacks
        (``on_step`` once per step of every game, with ``infos``, ``dones``, ``rewards``
        and ``new_obs`` in ``locals``), ``num_timesteps`` and the returns are SB3's:
        with a deterministic policy the buffer holds what SB3's loop collects
        (``tests/test_batched.py``); sampling draws its Gumbel noise per worker's rows.
        The callbacks of step ``t`` run while the workers step ``t + 1``, so a snapshot a
        callback adds at step ``t`` plays from step ``t + 2``. When a callback stops the
        run, the workers' steps in flight are waited for and their transitions dropped."""
        from stable_baselines3.common.utils import obs_as_tensor

        assert self._last_obs is not None, "No previous observation was provided"
        self.policy.set_training_mode(False)
        rollout_buffer.reset()
        callback.on_rollout_start()
        n, per, workers, sh = env.num_envs, env.per, env.num_workers, env.shared
        rows = [slice(w * per, (w + 1) * per) for w in range(workers)]
        cur_obs = np.array(self._last_obs, dtype=np.float32)
        cur_masks = env.action_masks()
        nxt_obs, nxt_masks = np.empty_like(cur_obs), np.empty_like(cur_masks)
        acts = np.empty(n, dtype=np.int64)
        vals = torch.empty((n, 1))
        logps = torch.empty(n)
        nxt_acts, nxt_vals, nxt_logps = np.empty_like(acts), torch.empty_like(vals), torch.empty_like(logps)

        n_act = cur_masks.shape[1]
        # the card features each forward pass computes go to the buffer for the update
        keep = isinstance(rollout_buffer, FixedFeaturesRolloutBuffer)
        obs_dim = cur_obs.shape[1]
        cur_fixed = torch.empty((n, rollout_buffer.extra if keep else 0))
        nxt_fixed = torch.empty_like(cur_fixed)

        def step_noise():  # one draw for the step's rows, whatever order the workers are answered in
            return self.policy.sampling_uniforms(n, n_act)

        def answer(w, obs, masks, a_out, v_out, lp_out, noise, f_out):
            with torch.no_grad():
                x = obs_as_tensor(obs[rows[w]], self.device)
                if keep:  # observations followed by their card features: CardFeatures takes them as they are
                    x = self.policy.with_card_features(x)
                    f_out[rows[w]] = x[:, obs_dim:]
                a, v, lp = self.policy(x, action_masks=masks[rows[w]], uniform=noise[rows[w]])
            a_out[rows[w]] = a.cpu().numpy()
            v_out[rows[w]] = v
            lp_out[rows[w]] = lp
            env.step_part_async(w, a_out[rows[w]])

        noise = step_noise()
        for w in range(workers):
            answer(w, cur_obs, cur_masks, acts, vals, logps, noise, cur_fixed)
        new_obs = cur_obs
        dones = np.zeros(n, dtype=bool)
        for step in range(n_rollout_steps):
            last = step == n_rollout_steps - 1
            rewards = np.empty(n, dtype=np.float32)
            dones = np.empty(n, dtype=bool)
            infos: list[dict] = [{} for _ in range(n)]
            noise = None if last else step_noise()
            pending = list(range(workers))
            while pending:  # each worker as soon as it has stepped: none waits behind a slower one
                for w in env.ready_workers(pending):
                    pending.remove(w)
                    for i, info in env.step_part_wait(w).items():
                        infos[i] = info
                    r = rows[w]
                    nxt_obs[r], nxt_masks[r] = sh.obs[r], sh.masks[r] != 0
                    rewards[r], dones[r] = sh.rewards[r], sh.dones[r] != 0
                    if not last:  # worker w steps t + 1 while the learner waits for the others
                        answer(w, nxt_obs, nxt_masks, nxt_acts, nxt_vals, nxt_logps, noise, nxt_fixed)
            new_obs = nxt_obs.copy()
            self.num_timesteps += n
            actions = acts
            callback.update_locals(locals())
            if not callback.on_step():
                for w in range(0 if last else workers):  # the steps in flight: wait, drop
                    env.step_part_wait(w)
                self._last_obs = sh.obs.copy()
                self._last_episode_starts = sh.dones != 0
                return False
            self._update_info_buffer(infos, dones)
            rollout_buffer.add(cur_obs, acts.reshape(-1, 1), rewards, self._last_episode_starts, vals, logps,
                               action_masks=cur_masks, **({"fixed": cur_fixed} if keep else {}))
            self._last_obs = new_obs
            self._last_episode_starts = dones
            if not last:
                cur_obs, nxt_obs = nxt_obs, cur_obs
                cur_masks, nxt_masks = nxt_masks, cur_masks
                acts, nxt_acts = nxt_acts, acts
                vals, nxt_vals = nxt_vals, vals
                logps, nxt_logps = nxt_logps, logps
                cur_fixed, nxt_fixed = nxt_fixed, cur_fixed
        with torch.no_grad():
            values = self.policy.predict_values(obs_as_tensor(new_obs, self.device))
        rollout_buffer.compute_returns_and_advantage(last_values=values, dones=dones)
        callback.on_rollout_end()
        return True
