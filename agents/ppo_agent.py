"""An agent from a policy saved by Stable-Baselines3 (``MaskablePPO`` or ``PPO`` zip).

torch and SB3 are imported only when a ``PPOAgent`` is built, so the scripted agents
and ``make_agent`` stay light.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import zipfile
from collections.abc import Iterator

import numpy as np

from .masking import mask_logits

# Release 0.1 installed agents/, train/ and eval/ as top-level packages, so the
# policy zips it saved pickle classes such as ``train.policy.FastMaskablePolicy``.
_LEGACY_PACKAGES = ("agents", "train", "eval")


@contextlib.contextmanager
def legacy_module_names() -> Iterator[None]:
    """While open, ``train.X`` (and ``agents.X``, ``eval.X``) resolve to ``rummy_env.train.X``.

    SB3 unpickles a saved policy's classes by module path; zips saved before the
    packages moved under ``rummy_env`` name ``train.policy`` and ``train.features``.
    The aliases are added to ``sys.modules`` only where no such module is already
    imported (a user's own ``train`` package is never replaced) and removed on exit.
    """
    added: list[str] = []

    class _Alias:  # a meta-path finder that maps the old names onto the new ones
        @staticmethod
        def find_spec(fullname, path=None, target=None):  # noqa: ARG004
            head = fullname.split(".", 1)[0]
            if head not in _LEGACY_PACKAGES or fullname in sys.modules:
                return None
            module = importlib.import_module("rummy_env." + fullname)
            added.append(fullname)
            return importlib.util.spec_from_loader(fullname, _Loaded(module))

    class _Loaded:
        def __init__(self, module):
            self.module = module

        def create_module(self, spec):  # noqa: ARG002
            return self.module

        def exec_module(self, module):  # noqa: ARG002
            return None

    finder = _Alias()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in added:
            if sys.modules.get(name) is sys.modules.get("rummy_env." + name):
                sys.modules.pop(name, None)


class PPOAgent:
    """Acts greedily with a saved SB3 policy: the most probable legal action.

    The policy's action logits are computed for the observation, every masked-out
    action is set to ``MASK_FILL`` (``rummy_env.agents.masking``), and the arg-max is returned (ties: lowest id), so the
    agent is deterministic and ``seed`` has no effect.

    Args:
        path: an SB3 ``.zip`` saved by ``MaskablePPO.save`` (sb3-contrib) or ``PPO.save``.
        seed: accepted for the agent protocol; unused.

    Raises:
        ValueError: the file is missing, is not an SB3 zip, or its policy has no
            discrete action distribution.
    """

    name = "ppo"

    def __init__(self, path: str, seed: int | None = None) -> None:
        path = os.fspath(path)
        if os.path.isdir(path):
            raise ValueError(f"{path!r} is a folder; give the policy's file, an SB3 .zip saved by MaskablePPO or PPO "
                             f"(a run folder holds it as final_model.zip or best_model.zip; an ONNX export's folder "
                             f"is played as onnx:DIR)")
        if not os.path.isfile(path):
            raise ValueError(f"policy file not found: {path!r} (expected an SB3 .zip saved by MaskablePPO or PPO)")
        if not zipfile.is_zipfile(path):
            raise ValueError(f"{path!r} is not an SB3 policy zip (corrupt or another format)")
        import torch

        model = None
        errors = []
        try:
            from sb3_contrib import MaskablePPO

            with legacy_module_names():
                model = MaskablePPO.load(path, device="cpu")
        except Exception as e:  # noqa: BLE001 - a PPO zip fails here; try the next loader
            errors.append(f"MaskablePPO: {e}")
        if model is None:
            try:
                from stable_baselines3 import PPO

                with legacy_module_names():
                    model = PPO.load(path, device="cpu")
            except Exception as e:  # noqa: BLE001
                errors.append(f"PPO: {e}")
        if model is None:
            raise ValueError(f"cannot load {path!r} as a MaskablePPO or PPO zip: {'; '.join(errors)}")
        self.path = path
        self.policy = model.policy
        self.policy.set_training_mode(False)
        self._torch = torch
        shape = getattr(model.observation_space, "shape", None)
        self.obs_shape = tuple(shape) if shape is not None else None
        n_act = getattr(model.action_space, "n", None)
        if n_act is None:
            raise ValueError(f"{path!r}: the policy's action space is not Discrete")
        self.n_actions = int(n_act)

    def seed(self, seed: int | None = None) -> None:
        """No effect: greedy play is deterministic."""

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """The policy's action logits for one observation: float32 ``(n_actions,)`` (its
        ``Categorical``'s, normalized: log-probabilities over every action id)."""
        return self.logits_batch(np.asarray(observation, dtype=np.float32).reshape(1, -1))[0]

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        """The policy's action logits for a batch, one forward pass: float32 ``[B, n_actions]``
        for ``observations`` ``[B, obs_dim]`` (row ``i`` is ``logits(observations[i])``).

        Raises:
            ValueError: the policy has no categorical action distribution."""
        torch = self._torch
        obs = np.asarray(observations, dtype=np.float32)
        with torch.no_grad():
            dist = self.policy.get_distribution(torch.as_tensor(obs))
            d = getattr(dist, "distribution", None)
            if d is None or not hasattr(d, "logits"):
                raise ValueError(f"{self.path!r}: the policy has no categorical action distribution")
            return d.logits.cpu().numpy().astype(np.float32, copy=False)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal action with the highest logit.

        Args:
            observation: float32 ``(obs_size(n),)``; must match the policy's input size.
            action_mask: int8 ``(N,)`` (the policy's action count: ``actions.num_actions(kind)`` of its
                table kind), 1 = legal.

        Raises:
            ValueError: the observation does not fit the policy, or no action is legal.
        """
        obs = np.asarray(observation, dtype=np.float32)
        if self.obs_shape is not None and obs.shape != self.obs_shape:
            from rummy_env.observation import describe_table

            def table(shape: tuple, n_actions: int | None) -> str:
                return describe_table(shape[0], n_actions) if len(shape) == 1 else f"shape {shape}"

            mask_len = np.shape(action_mask)[-1] if np.ndim(action_mask) else None
            raise ValueError(f"observation shape {obs.shape} does not fit the policy's {self.obs_shape}: the "
                             f"policy was trained for {table(self.obs_shape, self.n_actions)}, the observation is "
                             f"from {table(obs.shape, mask_len)}")
        mask = np.asarray(action_mask).astype(bool)
        if not mask.any():
            raise ValueError("no legal action in the mask: this seat is not to move")
        lg = self.logits(obs)
        lg = mask_logits(lg, mask[: lg.shape[0]])
        return int(np.argmax(lg))
