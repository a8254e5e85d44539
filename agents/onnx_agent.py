"""``OnnxAgent``: plays an exported policy (``policy.onnx`` + ``spec.json``, see
``train/export.py``) with onnxruntime and numpy only: nothing here (or in its
imports) needs torch or stable-baselines3.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from rummy_env.actions import TABLE_KINDS, num_actions

NUM_ACTIONS = {kind: num_actions(kind) for kind in TABLE_KINDS}  # Discrete(N) per table kind; checked against spec.json
_INPUTS = ("observation", "action_mask")
_OUTPUTS = ("masked_logits", "action")


def load_spec(policy_dir: str | Path) -> dict[str, Any]:
    """Read and check ``policy_dir/spec.json``.

    Raises:
        ValueError: the directory or ``spec.json`` is missing, or ``spec.json`` is not
            JSON or lacks what a policy spec has (env ``rummy_v0``, the observation
            size, the action table, the rules).
    """
    d = Path(policy_dir)
    if not d.is_dir():
        raise ValueError(f"policy directory {d} does not exist (expected policy.onnx and spec.json in it)")
    sp = d / "spec.json"
    if not sp.is_file():
        raise ValueError(f"spec.json is missing in {d}")
    try:
        spec = json.loads(sp.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{sp} is corrupt (not JSON: {e})") from None
    try:
        if spec["env"] != "rummy_v0":
            raise ValueError(f"{sp} is for env {spec['env']!r}, not rummy_v0")
        size = spec["observation"]["size"]
        table = spec["actions"]["table"]
        n = spec["rules"]["num_players"]
        spec["rules"]["json"]
        if not isinstance(size, int) or size <= 0 or not isinstance(n, int):
            raise TypeError("observation.size and rules.num_players must be ints")
        kind = spec["actions"].get("kind", "standard")  # specs written before 500 Rum have no kind
        if kind not in NUM_ACTIONS:
            raise TypeError(f"actions.kind must be one of {', '.join(NUM_ACTIONS)}, got {kind!r}")
        n_act = NUM_ACTIONS[kind]
        if len(table) != n_act or any(e["id"] != i for i, e in enumerate(table)):
            raise TypeError(f"actions.table must list ids 0..{n_act - 1} in order (a {kind} table)")
        spec["actions"]["kind"] = kind
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"{sp} is corrupt (not a policy spec: {type(e).__name__}: {e})") from None
    return spec


def load_session(policy_dir: str | Path, spec: dict[str, Any] | None = None) -> Any:
    """An onnxruntime session (one CPU thread) over ``policy_dir/policy.onnx``, checked
    against the spec: inputs ``observation`` [batch, obs_dim] and ``action_mask``
    [batch, N] (``N = actions.num_actions(kind)``, the action count of the spec's table kind),
    outputs ``masked_logits`` and ``action``.

    Raises:
        ValueError: ``policy.onnx`` is missing, corrupt, or has other inputs/outputs.
    """
    import onnxruntime as ort

    d = Path(policy_dir)
    p = d / "policy.onnx"
    if not p.is_file():
        raise ValueError(f"policy.onnx is missing in {d}")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    try:
        sess = ort.InferenceSession(str(p), sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types
        raise ValueError(f"{p} is corrupt (onnxruntime cannot load it: {type(e).__name__}: {e})") from None
    ins = {i.name: i for i in sess.get_inputs()}
    outs = [o.name for o in sess.get_outputs()]
    if set(ins) != set(_INPUTS) or set(outs) != set(_OUTPUTS):
        raise ValueError(f"{p} has inputs {sorted(ins)} and outputs {outs}; expected {list(_INPUTS)} and {list(_OUTPUTS)}")
    if spec is not None:
        dim = ins["observation"].shape[1]
        if dim != spec["observation"]["size"]:
            raise ValueError(f"{p} takes observations of size {dim} but spec.json says {spec['observation']['size']}")
    return sess


def softmax_legal(masked_logits: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    """Probabilities (float64, same shape) from masked logits; illegal actions get exactly 0."""
    z = np.asarray(masked_logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z) * (np.asarray(action_mask) != 0)
    return e / e.sum(axis=-1, keepdims=True)


class OnnxAgent:
    """An agent (API.md's protocol) that plays an exported policy greedily.

    Args:
        path: the export directory (``policy.onnx`` + ``spec.json``); a path to the
            ``policy.onnx`` file itself is taken as its directory.
        seed: accepted for the agent protocol; play is deterministic (the most
            probable legal action), so it changes nothing.

    Attributes:
        spec: the parsed ``spec.json``; ``obs_dim``: the observation length; ``num_actions``:
            the action count of its table kind (``actions.num_actions(kind)``).

    Raises:
        ValueError: a missing directory, or a missing or corrupt ``policy.onnx`` or
            ``spec.json`` (the message says which).
    """

    def __init__(self, path: str, seed: int | None = None) -> None:
        d = Path(path)
        if d.suffix == ".onnx" and d.is_file():
            d = d.parent
        self.path = d
        self.spec = load_spec(d)
        self.obs_dim = int(self.spec["observation"]["size"])
        self.num_actions = NUM_ACTIONS[self.spec["actions"]["kind"]]
        self.session = load_session(d, self.spec)
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        """Kept for the protocol; greedy play uses no randomness."""
        self._seed = seed

    def _check(self, observation: Any, action_mask: Any) -> tuple[np.ndarray, np.ndarray]:
        obs = np.asarray(observation, dtype=np.float32)
        mask = np.asarray(action_mask)
        if obs.ndim == 1:
            obs, mask = obs[None], mask[None]
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim:
            from rummy_env.observation import describe_table

            why = ""
            if obs.ndim == 2:
                why = (f": this policy was trained for a {self.spec['rules']['num_players']}-player "
                       f"{self.spec['actions']['kind']} table, and this observation is from "
                       f"{describe_table(obs.shape[1], mask.shape[-1] if mask.ndim else None)}")
            raise ValueError(f"observation must have shape ({self.obs_dim},) or (batch, {self.obs_dim}), "
                             f"got {obs.shape}{why}")
        na = self.num_actions
        if mask.shape != (obs.shape[0], na):
            raise ValueError(f"action_mask must have shape ({na},) or ({obs.shape[0]}, {na}), got {mask.shape}")
        if not (mask != 0).any(axis=1).all():
            raise ValueError("action_mask has no legal action (is this seat to move?)")
        return np.ascontiguousarray(obs), (mask != 0).astype(np.int8)

    def evaluate(self, observation: Any, action_mask: Any) -> tuple[np.ndarray, np.ndarray]:
        """Run the graph: ``(masked_logits float32 [B, N], action int64 [B])`` for
        ``observation`` float32 ``[obs_dim]`` or ``[B, obs_dim]`` and ``action_mask``
        (any int/bool dtype, nonzero = legal) ``[N]`` or ``[B, N]``.

        Raises:
            ValueError: wrong shapes, or a row with no legal action.
        """
        obs, mask = self._check(observation, action_mask)
        logits, action = self.session.run(list(_OUTPUTS), {"observation": obs, "action_mask": mask})
        return logits, action

    def probabilities(self, observation: Any, action_mask: Any) -> np.ndarray:
        """The policy's distribution over the N actions of its table kind (``actions.num_actions(kind)``;
        float64 ``[N]`` for one observation, ``[B, N]`` for a batch); illegal actions have probability 0."""
        logits, _ = self.evaluate(observation, action_mask)
        p = softmax_legal(logits, self._check(observation, action_mask)[1])
        return p[0] if np.asarray(observation).ndim == 1 else p

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The most probable legal action id for one observation (float32 ``[obs_dim]``)
        and its mask (``[N]``, 1 = legal).

        Raises:
            ValueError: wrong shapes or no legal action.
        """
        _, action = self.evaluate(observation, action_mask)
        return int(action[0])

    def __repr__(self) -> str:
        return f"OnnxAgent({str(self.path)!r})"
