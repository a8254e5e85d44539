"""The Ray/RLlib pieces of ``rummy train --backend rllib`` (imported after the Ray
environment is set up; see ``rummy_env.train.rllib``).

- ``make_vector_env``: the env runners' env, ``SelfPlayVectorEnv`` (``train/vector_env.py``):
  many games stepped at once with the SB3 backend's batched encoder and batched opponents,
  the opponents (snapshots and scripted baselines) inside the env, drawn per seat per
  hand from an ``OpponentPool`` with the SB3 trainer's semantics; registered with Ray
  as ``ENV_NAME``. Only the learner's decisions are env steps.
- ``CardPPOTorchRLModule``: the SB3 backend's policy network as an RLlib PPO module
  (``rummy_env.train.features.CardFeatures`` with the config's ``features``/``trunk``,
  shared by separate policy and value MLPs of ``net_arch``, then the action and value
  heads, with SB3's layer names and initialisation), illegal logits set to ``MASK_FILL``.
- ``MaskedPPOTorchRLModule``: RLlib's default PPO torch module on the ``"observation"``
  Box (no card features), the network of checkpoints written before; kept so they
  still load and export.
- ``RummyCallbacks``: the learner's win rate and points per opponent kind.
"""
from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.models.base import ACTOR, ENCODER_OUT
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule

from rummy_env.agents.masking import mask_logits

LEARNER = "default_policy"
"""The trained module's id (RLlib's ``DEFAULT_MODULE_ID``: one module, single-agent env runners)."""


# ---------------------------------------------------------------------------- the env

ENV_NAME = "rummy-selfplay-vector-v0"
"""The name ``make_vector_env`` is registered under (``ray.tune.registry.register_env``)."""


def make_vector_env(config: dict[str, Any]) -> Any:
    """The env runners' ``SelfPlayVectorEnv`` from RLlib's env config (the
    ``vector_entry_point`` RLlib calls with ``num_envs`` added):
    ``{"rules": Rules.to_json(), "num_envs": int, "reward_scale": float, "reward": str,
    "opponent_weights": {kind: weight}, "max_snapshots": int, "latest_prob": float,
    "rotate_steps": int, "seed": int}`` (the snapshots run in float32, stacked:
    ``OpponentPool``, as on the SB3 backend). The pool starts without snapshots (the trainer
    adds them: ``SelfPlayVectorEnv.add_snapshot``); the deals come from the seed RLlib's
    first ``reset`` gives (the run's seed plus the runner's index).

    Raises:
        ValueError: a bad rules object or reward (as ``SelfPlayVectorEnv``)."""
    from rummy_env.rules import Rules

    from .subproc import make_pool
    from .vector_env import SelfPlayVectorEnv

    cfg = dict(config)
    seed = int(cfg.get("seed", 0))
    pool = make_pool(dict(cfg.get("opponent_weights", {"random": 1.0})), int(cfg.get("max_snapshots", 8)),
                     float(cfg.get("latest_prob", 0.5)), seed=seed)
    return SelfPlayVectorEnv(Rules.from_json(cfg["rules"]), pool, int(cfg.get("num_envs", 1)), seed=seed,
                             reward_scale=float(cfg.get("reward_scale", 0.01)), reward=cfg.get("reward", "points"),
                             rotate_steps=int(cfg.get("rotate_steps", 0)))


# ---------------------------------------------------------------------------- modules

def _obs_and_mask(batch: dict[str, Any]) -> tuple[torch.Tensor, Any]:
    """The float32 observation ``[B, obs_dim]`` and the action mask (or None) of a batch
    whose ``Columns.OBS`` is the env's dict or a bare observation."""
    obs = batch[Columns.OBS]
    mask = None
    if isinstance(obs, dict):
        mask = obs["action_mask"]
        obs = obs["observation"]
    obs = obs.float() if isinstance(obs, torch.Tensor) else torch.as_tensor(np.asarray(obs), dtype=torch.float32)
    return obs, mask


class CardPPOTorchRLModule(TorchRLModule, ValueFunctionAPI):
    """The SB3 backend's policy network (``FastMaskablePolicy`` as ``rummy_env.train.trainer``
    builds it) as an RLlib PPO torch module, built from the same classes with the same
    attribute names, so its ``state_dict`` is the SB3 policy's (without SB3's
    ``pi_/vf_features_extractor`` aliases of the shared extractor):

    - ``features_extractor``: ``CardFeatures(cards=features != "none", trunk=trunk,
      jokers=features == "cards+jokers")``
      (or SB3's ``FlattenExtractor`` with ``features="none"`` and ``trunk=0``),
      shared by the policy and the value network;
    - ``mlp_extractor``: SB3's ``MlpExtractor`` with ``net_arch=dict(pi=net_arch, vf=net_arch)``
      and ``Tanh``;
    - ``action_net``: ``Linear(net_arch[-1], N)`` (N: the table's ``Table.num_actions``);
      ``value_net``: ``Linear(net_arch[-1], 1)``;
    - initialised as SB3 does (``ortho_init``: orthogonal weights with gain sqrt(2) for
      the extractor and the MLPs, 0.01 for the action head, 1 for the value head; zero biases).

    ``model_config``: ``{"features": "cards" | "cards+jokers" | "none", "trunk": int >= 0, "net_arch": [int, ...],
    "num_players": int, "kind": str, "precision": str}`` (the ``TrainConfig`` keys of the same
    names; defaults ``"cards"``, 256, ``[128]``, ``"float32"``; the table, ``Table.num_players``
    and ``Table.kind``, is needed with card features or a trunk). With a ``precision`` that
    trains in bfloat16 on this CPU (``use_bf16``), ``_forward``, ``_forward_train`` and
    ``compute_values`` run the layers under ``torch.autocast("cpu", torch.bfloat16)`` and
    return float32 logits and values, as ``FastMaskablePolicy`` does; ``logits``,
    ``logits_and_values`` and ``actor_net`` (the warm start, evaluation, export) stay float32.
    The observation space may be the env's Dict (``"observation"`` Box + ``"action_mask"``)
    or the Box alone. Every forward pass reads ``"observation"`` as float32 ``[B, obs_dim]``
    and sets the logits ``[B, N]`` (N: the table's action count, ``Table.num_actions``: 579 at a standard table) of actions whose ``"action_mask"`` bit is 0 to
    ``MASK_FILL``; the batch it is given is not changed. ``_forward_train`` returns the
    shared features as ``Columns.EMBEDDINGS`` so the PPO learner's value pass reuses them.

    Raises:
        ValueError: a bad ``features``, ``trunk`` or ``net_arch`` (the ``TrainConfig`` rules).
    """

    def setup(self) -> None:
        from stable_baselines3.common.policies import BasePolicy
        from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor

        from .features import CardFeatures

        cfg = dict(self.model_config or {})
        self.features = cfg.get("features", "cards")
        self.trunk = cfg.get("trunk", 256)
        self.net_arch = list(cfg.get("net_arch", [128]))
        from .config import check_features

        check_features(self.features)
        if not isinstance(self.trunk, int) or isinstance(self.trunk, bool) or self.trunk < 0:
            raise ValueError(f"trunk must be an int >= 0, got {self.trunk!r}")
        if not self.net_arch or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0
                                        for x in self.net_arch):
            raise ValueError(f"net_arch must be a non-empty list of positive ints, got {self.net_arch!r}")
        space = self.observation_space
        box = space["observation"] if isinstance(space, gym.spaces.Dict) else space
        self.obs_dim = int(box.shape[0])
        self.n_actions = int(self.action_space.n)
        self.num_players, self.kind = cfg.get("num_players"), cfg.get("kind")
        from .precision import use_bf16

        # decided where the module is built (the learner's machine, each runner's), as the SB3
        # backend decides in each process; RLlib's PPO calls only the three methods below
        self.bf16 = use_bf16(cfg.get("precision", "float32"))
        if self.features != "none" or self.trunk:
            if self.num_players is None:
                raise ValueError("model_config needs the table: num_players and kind (Table.num_players, Table.kind)")
            self.features_extractor: torch.nn.Module = CardFeatures(box, cards=self.features != "none",
                                                                    trunk=self.trunk, num_players=self.num_players,
                                                                    kind=self.kind,
                                                                    jokers=self.features == "cards+jokers")
        else:
            self.features_extractor = FlattenExtractor(box)
        dim = self.features_extractor.features_dim
        self.mlp_extractor = MlpExtractor(dim, net_arch=dict(pi=self.net_arch, vf=self.net_arch),
                                          activation_fn=torch.nn.Tanh)
        self.action_net = torch.nn.Linear(self.mlp_extractor.latent_dim_pi, self.n_actions)
        self.value_net = torch.nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
        for part, gain in ((self.features_extractor, np.sqrt(2)), (self.mlp_extractor, np.sqrt(2)),
                           (self.action_net, 0.01), (self.value_net, 1.0)):
            part.apply(partial(BasePolicy.init_weights, gain=gain))

    # -- the network
    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        """Unmasked logits float32 ``[B, N]`` of observations float32 ``[B, obs_dim]``."""
        return self.action_net(self.mlp_extractor.forward_actor(self.features_extractor(obs.float())))

    def logits_and_values(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits [B, N], values [B])`` with the shared features computed once: the
        ``forward`` of ``rummy_env.train.warmstart.fit`` (as ``sb3_forward`` is for SB3)."""
        feats = self.features_extractor(obs.float())
        latent_pi, latent_vf = self.mlp_extractor(feats)
        return self.action_net(latent_pi), self.value_net(latent_vf).squeeze(-1)

    def actor_net(self) -> Any:
        """A copy of the actor as ``rummy_env.train.pool.ActorNet`` (observation ->
        logits; the module SB3 snapshots and ``rummy export`` use), frozen, in eval mode."""
        from .pool import ActorNet

        net = ActorNet(self.obs_dim, self.net_arch, self.n_actions, "Tanh", self.features, self.trunk,
                       self.num_players, self.kind)
        if not isinstance(net.features, torch.nn.Identity):
            net.features.load_state_dict(_copy(self.features_extractor.state_dict()))
        net.policy_net.load_state_dict(_copy(self.mlp_extractor.policy_net.state_dict()))
        net.action_net.load_state_dict(_copy(self.action_net.state_dict()))
        return net

    def load_sb3_policy(self, policy: Any) -> None:
        """Copy the weights of an sb3-contrib ``MaskableActorCriticPolicy`` built with the
        same ``features``/``trunk``/``net_arch`` into this module (strict: every tensor).

        Raises:
            ValueError: the policy's network differs (names or shapes)."""
        sd = {k: v for k, v in policy.state_dict().items()
              if not k.startswith(("pi_features_extractor.", "vf_features_extractor."))}
        try:
            self.load_state_dict(_copy(sd), strict=True)
        except RuntimeError as e:
            raise ValueError(f"the SB3 policy's network differs from this module's: {e}") from None

    def sb3_state_dict(self) -> dict[str, torch.Tensor]:
        """This module's weights under the SB3 policy's names (with its extractor aliases):
        ``policy.load_state_dict(module.sb3_state_dict())`` for a policy of the same shape."""
        sd = _copy(self.state_dict())
        for alias in ("pi_features_extractor.", "vf_features_extractor."):
            sd.update({alias + k[len("features_extractor."):]: v for k, v in list(sd.items())
                       if k.startswith("features_extractor.")})
        return sd

    # -- RLlib's API
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, mask = _obs_and_mask(batch)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            logits = self.logits(obs)
        logits = logits.float()
        return {Columns.ACTION_DIST_INPUTS: mask_logits(logits, mask) if mask is not None else logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, mask = _obs_and_mask(batch)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            feats = self.features_extractor(obs)
            logits = self.action_net(self.mlp_extractor.forward_actor(feats))
        logits = logits.float()
        return {Columns.ACTION_DIST_INPUTS: mask_logits(logits, mask) if mask is not None else logits,
                Columns.EMBEDDINGS: feats}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        """Values float32 ``[B]`` (from ``embeddings``, the shared features, when given)."""
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            if embeddings is None:
                obs, _ = _obs_and_mask(batch)
                embeddings = self.features_extractor(obs)
            values = self.value_net(self.mlp_extractor.forward_critic(embeddings)).squeeze(-1)
        return values.float()


def _copy(sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in sd.items()}


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """The network of RLlib checkpoints written before ``CardPPOTorchRLModule`` (kept so
    they load and export): RLlib's default PPO torch module (separate actor and critic MLPs by default) built
    on the ``"observation"`` Box of the env's Dict space. Every forward pass reads the
    observation dict, casts ``"observation"`` to float32 and sets the logits of actions
    whose ``"action_mask"`` bit is 0 to ``MASK_FILL``. The batch it is given is left
    unchanged (a shallow copy is passed on)."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        self.observation_space_with_mask = observation_space
        inner = observation_space
        if isinstance(observation_space, gym.spaces.Dict):
            inner = observation_space["observation"]
        super().__init__(observation_space=inner, **kwargs)

    def setup(self) -> None:
        super().setup()
        # as RLlib's action-masking example: report the env's Dict space (this is also
        # what a checkpoint stores as the constructor argument)
        self.observation_space = self.observation_space_with_mask

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        obs = batch[Columns.OBS]
        mask = None
        if isinstance(obs, dict):
            mask = obs["action_mask"]
            obs = obs["observation"]
        out = dict(batch)
        out[Columns.OBS] = obs.float() if isinstance(obs, torch.Tensor) else torch.as_tensor(obs, dtype=torch.float32)
        return out, mask

    @staticmethod
    def _mask(out: dict[str, Any], mask: Any) -> dict[str, Any]:
        if mask is not None:
            logits = out[Columns.ACTION_DIST_INPUTS]
            out[Columns.ACTION_DIST_INPUTS] = mask_logits(logits, mask)
        return out

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        b, mask = self._split(batch)
        return self._mask(super()._forward(b, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        b, mask = self._split(batch)
        return self._mask(super()._forward_train(b, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        b, _ = self._split(batch)
        return super().compute_values(b, embeddings)


class ActorLogits(torch.nn.Module):
    """The actor of a ``MaskedPPOTorchRLModule`` as a plain module: observation float32
    ``[B, obs_dim]`` -> logits ``[B, N]`` (no mask). Used for export and evaluation."""

    def __init__(self, module: MaskedPPOTorchRLModule) -> None:
        super().__init__()
        enc = module.encoder
        self.shared = not hasattr(enc, "actor_encoder")
        self.encoder = enc.encoder if self.shared else enc.actor_encoder
        self.pi = module.pi
        self.eval()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        feats = self.encoder({Columns.OBS: obs.float()})[ENCODER_OUT]
        if isinstance(feats, dict):
            feats = feats[ACTOR]
        return self.pi(feats)


def actor_of(module: Any) -> torch.nn.Module:
    """The actor (observation float32 ``[B, obs_dim]`` -> logits ``[B, N]``) of a
    learner module as a plain torch module in eval mode, a copy: as ``ActorNet`` for a
    ``CardPPOTorchRLModule``, as ``ActorLogits`` for an older ``MaskedPPOTorchRLModule``."""
    import copy

    if hasattr(module, "actor_net"):
        return module.actor_net()
    return copy.deepcopy(ActorLogits(module)).eval()


# ---------------------------------------------------------------------------- metrics

class RummyCallbacks(RLlibCallback):
    """Logs, per finished hand, whether the learner won and its points (the env's
    terminal infos: ``win`` and ``points``, hand points, not the scaled reward), overall
    and per opponent kind (``win/all``, ``win/heuristic``, ``points/snapshot``, ...;
    several seats: the kinds ``"+"``-joined, sorted)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        info = episode.get_infos(-1) or {}
        if "win" not in info:
            return
        opps = "+".join(sorted(str(info.get("opponent", "")).split("+")))
        for key in ("all", opps):
            metrics_logger.log_value(f"win/{key}", float(info["win"]), reduce="mean", window=200)
            metrics_logger.log_value(f"points/{key}", float(info["points"]), reduce="mean", window=200)
