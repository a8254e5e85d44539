"""A value-based reference algorithm: Tianshou's DQN with action masking on ``rummy_v0``.

``train_dqn(rules, timesteps, seed, out_dir)`` trains a Q-network with Tianshou's
(``tianshou>=2.0,<3``) ``DQN`` algorithm (double DQN, n-step returns, a target network,
Huber loss), its ``Collector``, ``VectorReplayBuffer`` and ``DummyVectorEnv``: the
learner plays one seat of ``rummy_env.SingleAgentEnv`` (a random seat each hand) and is
**trained against the scripted baselines, no self-play**: each of the ``n_envs`` games has
fixed opponents, drawn once from the mixture ``opponents`` (default 10% ``random``, 40%
``greedy``, 50% ``heuristic``, split over the games by largest remainder, shuffled by the
seed). The reward is the environment's own: the learner's zero-sum hand payoff in
points times ``reward_scale`` (0.01, as the PPO trainer; a 50-point hand = 0.5).

Masking: each game is wrapped in ``MaskedObsEnv``, whose observation is the dict
``{"obs": float32 (obs_dim,), "mask": int8 (N,)}`` (``N``: the table's ``Table.num_actions``):
``mask`` is exactly ``SingleAgentEnv.action_masks()``. Tianshou's
``DiscreteQLearningPolicy`` reads ``batch.obs.mask``: the greedy action and the
bootstrap action of the double-DQN target are argmaxes over the legal actions only, and
epsilon-greedy exploration samples uniformly among the legal actions. A masked-out
action is a bug: ``train_dqn`` raises ``RuntimeError`` if the env ever reports one.

The loop is Tianshou's pieces driven by hand (``Collector.collect`` of ``collect_steps``
learner steps, then ``DQN.update`` ``updates_per_step`` times per collected step, inside
``policy_within_training_step``), not ``OffPolicyTrainer``: Tianshou 2.0.1's trainer scans
the whole replay buffer for NaNs after every collection step and counts its run in epochs,
so it could neither stop at a step count nor evaluate on a step schedule cheaply.

Speed (defaults, one torch thread, measured on the project's 2-core machine while
other training runs shared it): 10 to 15 s to start (imports and Tianshou's numba
compilation, once per process), then 1,000 to 1,500 learner steps/s (about 1,500 per
CPU second), so 250,000 steps take 3 to 4.5 minutes. The gradient steps are most of it
(about 10 ms each at batch 128 on one core): ``updates_per_step=0.1`` adds about 1.5
minutes, ``batch_size=256`` about 60% more per step. The replay buffer (observation,
mask and next ones) holds about 5.5 kB per transition: 0.55 GB at the default 100,000.

The saved ``dqn.pt`` is a ``torch.save`` dict: ``format`` (1), ``state_dict`` (of
Tianshou's ``Net``: ``model.model.{0,2,4}.{weight,bias}``) and ``config`` (``obs_dim``,
``num_actions``, ``hidden_sizes``, ``rules`` in STATE form, ``library``,
``library_version``, ``hyper``). ``DQNAgent.load`` rebuilds the greedy agent from it and
``export_onnx`` writes it as ``policy.onnx`` + ``spec.json`` (``rummy_env.train.export``'s
format, Q-values as the logits) for ``make_agent("onnx:DIR")``.
"""
from __future__ import annotations

import copy
import math
import os
import time
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from rummy_env import Rules, SingleAgentEnv
from rummy_env.table import Table
from rummy_env.agents import BASELINES, make_agent
from rummy_env.agents.masking import mask_logits

MODEL_NAME = "dqn.pt"
MODEL_FORMAT = 1

DEFAULT_HYPER: dict[str, Any] = {
    "n_envs": 40,                # games stepped together (tianshou DummyVectorEnv; 40 divides every multiple of 1,000)
    "learning_rate": 2.5e-4,     # Adam step size
    "buffer_size": 100_000,      # replay buffer transitions (all games summed)
    "batch_size": 128,           # transitions per gradient step
    "gamma": 0.99,               # discount per learner decision
    "n_step": 3,                 # n-step return horizon
    "target_update_freq": 500,   # gradient steps between target-network copies
    "double_q": True,            # double DQN target
    "huber_delta": 1.0,          # Huber loss threshold (None: MSE)
    "eps_start": 1.0,            # epsilon-greedy exploration at step 0 ...
    "eps_end": 0.05,             # ... decayed linearly to this ...
    "eps_fraction": 0.3,         # ... over this fraction of the run
    "learning_starts": 2_000,    # learner steps collected before the first gradient step
    "updates_per_step": 0.0625,  # gradient steps per collected learner step (1 per 16)
    "collect_steps": 160,        # learner steps per collection (a multiple of n_envs)
    "hidden_sizes": (256, 256),  # the Q-network's ReLU MLP
    "reward_scale": 0.01,        # points -> reward
    "opponents": {"random": 0.1, "greedy": 0.4, "heuristic": 0.5},  # the baselines' mixture
    "torch_threads": 1,          # torch intra-op threads while training
}
"""Every hyper-parameter ``train_dqn`` takes (``**hyper``), with its default."""


# ---------------------------------------------------------------------------- validation

def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x)


def resolve_hyper(hyper: dict[str, Any]) -> dict[str, Any]:
    """The full hyper-parameter dict: ``DEFAULT_HYPER`` updated with ``hyper``, checked.

    Returns:
        a new dict with every key of ``DEFAULT_HYPER`` (``hidden_sizes`` a list of ints,
        ``opponents`` a dict baseline name -> weight summing to 1).

    Raises:
        ValueError: an unknown key (the message names it and lists the allowed keys), or
            a value of the wrong type or out of range (the message names the key).
    """
    unknown = sorted(set(hyper) - set(DEFAULT_HYPER))
    if unknown:
        raise ValueError(f"unknown DQN hyper-parameter(s) {', '.join(map(repr, unknown))}; "
                         f"allowed keys: {', '.join(DEFAULT_HYPER)}")
    h = {**copy.deepcopy(DEFAULT_HYPER), **hyper}

    def bad(key: str, want: str) -> ValueError:
        return ValueError(f"hyper-parameter {key!r} must be {want}, got {h[key]!r}")

    for key in ("n_envs", "buffer_size", "batch_size", "n_step", "target_update_freq", "collect_steps",
                "torch_threads"):
        if not _is_int(h[key]) or h[key] < 1:
            raise bad(key, "an int >= 1")
        h[key] = int(h[key])
    if not _is_int(h["learning_starts"]) or h["learning_starts"] < 0:
        raise bad("learning_starts", "an int >= 0")
    h["learning_starts"] = int(h["learning_starts"])
    for key, lo, hi in (("learning_rate", 0.0, None), ("reward_scale", 0.0, None), ("gamma", None, 1.0),
                        ("eps_start", None, 1.0), ("eps_end", None, 1.0), ("eps_fraction", None, 1.0),
                        ("updates_per_step", None, None)):
        v = h[key]
        if not _is_num(v) or v < 0 or (lo is not None and v <= lo) or (hi is not None and v > hi):
            rng = f"> {lo:g}" if lo is not None else ">= 0"
            raise bad(key, f"a finite number {rng}" + (f" and <= {hi:g}" if hi is not None else ""))
        h[key] = float(v)
    if h["huber_delta"] is not None:
        if not _is_num(h["huber_delta"]) or h["huber_delta"] <= 0:
            raise bad("huber_delta", "None (MSE loss) or a finite number > 0")
        h["huber_delta"] = float(h["huber_delta"])
    if not isinstance(h["double_q"], bool):
        raise bad("double_q", "a bool")
    hs = h["hidden_sizes"]
    if (isinstance(hs, (str, bytes)) or not hasattr(hs, "__iter__") or not list(hs)
            or not all(_is_int(x) and x >= 1 for x in hs)):
        raise bad("hidden_sizes", "a non-empty sequence of ints >= 1")
    h["hidden_sizes"] = [int(x) for x in hs]
    if h["collect_steps"] % h["n_envs"]:
        raise bad("collect_steps", f"a multiple of n_envs ({h['n_envs']})")
    if h["batch_size"] > h["buffer_size"]:
        raise bad("batch_size", f"<= buffer_size ({h['buffer_size']})")
    opp = h["opponents"]
    if (not isinstance(opp, dict) or not opp or any(k not in BASELINES for k in opp)
            or not all(_is_num(w) and w >= 0 for w in opp.values()) or sum(opp.values()) <= 0):
        raise bad("opponents", f"a dict of baseline names ({', '.join(BASELINES)}) to weights >= 0 "
                               "with a positive sum")
    total = float(sum(opp.values()))
    h["opponents"] = {k: float(opp[k]) / total for k in BASELINES if k in opp}
    return h


def _check_run_args(timesteps: Any, seed: Any, eval_every: Any, evaluate: Any, progress: Any) -> None:
    if not _is_int(timesteps) or timesteps < 1:
        raise ValueError(f"timesteps must be an int >= 1, got {timesteps!r}")
    if not _is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if not _is_int(eval_every) or eval_every < 0:
        raise ValueError(f"eval_every must be an int >= 0 (0: only at the end), got {eval_every!r}")
    for name, f in (("evaluate", evaluate), ("progress", progress)):
        if f is not None and not callable(f):
            raise ValueError(f"{name} must be None or callable, got {f!r}")


# ---------------------------------------------------------------------------- the environment

class MaskedObsEnv(gym.Env):
    """``SingleAgentEnv`` with the mask in the observation, as Tianshou's DQN reads it.

    Observation: ``{"obs": float32 (obs_dim,), "mask": int8 (N,)}`` where ``mask`` is
    ``env.action_masks()`` (1 = legal; all zeros once the hand is over). Reward,
    ``terminated`` and ``truncated`` are the env's. Info: ``{"illegal_action": bool}``
    only (the env's flag; the replay buffer stores it); ``illegal_actions`` counts them.

    Args:
        env: the ``SingleAgentEnv`` to wrap.
    """

    metadata = {"render_modes": []}

    def __init__(self, env: SingleAgentEnv) -> None:
        self.env = env
        n = int(env.action_space.n)
        self.observation_space = gym.spaces.Dict(
            {"obs": env.observation_space, "mask": gym.spaces.MultiBinary(n)})
        self.action_space = env.action_space
        self.illegal_actions = 0

    def _obs(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {"obs": obs, "mask": self.env.action_masks().astype(np.int8)}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """``SingleAgentEnv.reset`` (same arguments and errors), the dict observation."""
        obs, _ = self.env.reset(seed=seed, options=options)
        return self._obs(obs), {"illegal_action": False}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        """``SingleAgentEnv.step`` (same arguments and errors), the dict observation."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        illegal = bool(info["illegal_action"])
        self.illegal_actions += illegal
        return self._obs(obs), float(reward), bool(terminated), bool(truncated), {"illegal_action": illegal}


def opponent_kinds(n_envs: int, mix: dict[str, float], seed: int, seats: int = 1) -> list[list[str]]:
    """The baseline names playing the ``seats`` other seats of each of ``n_envs`` games.

    The ``n_envs * seats`` places are split over the baselines of ``mix`` (name ->
    weight, summing to 1) by largest remainder, then shuffled by ``seed``: the same
    arguments always give the same list (``n_envs`` lists of ``seats`` names).
    """
    total = n_envs * seats
    names = list(mix)
    exact = [mix[k] * total for k in names]
    counts = [int(math.floor(x)) for x in exact]
    for i in sorted(range(len(names)), key=lambda i: (counts[i] - exact[i], i))[: total - sum(counts)]:
        counts[i] += 1
    flat = [k for k, c in zip(names, counts) for _ in range(c)]
    order = np.random.default_rng(np.random.SeedSequence([seed, 0x0DD])).permutation(total)
    flat = [flat[i] for i in order]
    return [flat[i * seats:(i + 1) * seats] for i in range(n_envs)]


def make_envs(rules: Rules, hyper: dict[str, Any], seed: int) -> list[MaskedObsEnv]:
    """The ``hyper["n_envs"]`` training games: each a ``MaskedObsEnv`` over a
    ``SingleAgentEnv(rules, opponents, learner_seat=None, reward_scale=...)`` seeded from
    ``seed`` (``numpy.random.SeedSequence(seed).spawn``), with its own scripted opponents
    (``opponent_kinds``)."""
    n = hyper["n_envs"]
    kinds = opponent_kinds(n, hyper["opponents"], seed, rules.num_players - 1)
    seeds = [int(s.generate_state(1)[0]) & 0x7FFFFFFF for s in np.random.SeedSequence(seed).spawn(n)]
    envs = []
    for i in range(n):
        opps = [make_agent(k, seed=seeds[i] + 1 + j) for j, k in enumerate(kinds[i])]
        env = SingleAgentEnv(rules, opponents=opps if len(opps) > 1 else opps[0], learner_seat=None,
                             seed=seeds[i], reward_scale=hyper["reward_scale"])
        envs.append(MaskedObsEnv(env))
    return envs


# ---------------------------------------------------------------------------- the network and agent

def _import_tianshou() -> Any:
    """Import tianshou without letting it import Ray: tianshou's optional Ray worker
    imports ``ray`` when it is installed, and a Ray imported before
    ``rummy_env.train.rllib.ray_environ`` would not keep a later local Ray node on
    127.0.0.1 (``init_ray`` refuses it). The Ray worker is not used here."""
    import sys

    if "tianshou" in sys.modules or "ray" in sys.modules:
        import tianshou

        return tianshou
    sys.modules["ray"] = None  # type: ignore[assignment]  # `import ray` raises ImportError meanwhile
    try:
        import tianshou
    finally:
        if sys.modules.get("ray", 0) is None:
            del sys.modules["ray"]
    return tianshou


def build_net(obs_dim: int, n_actions: int, hidden_sizes: list[int]) -> Any:
    """Tianshou's ``Net``: a ReLU MLP ``float32 [B, obs_dim] -> Q-values float32 [B, n_actions]``
    (``net(obs)`` returns ``(q, state)``; ``net.model.model`` is the plain ``nn.Sequential``)."""
    _import_tianshou()
    from tianshou.utils.net.common import Net

    return Net(state_shape=obs_dim, action_shape=n_actions, hidden_sizes=list(hidden_sizes))


class DQNAgent:
    """A greedy agent (API.md's protocol) over a DQN Q-network: the legal action with the
    highest Q-value (the first on ties), computed as the exported ONNX graph does
    (``mask_logits`` then argmax).

    Args:
        net: the Q-network (``build_net``'s Tianshou ``Net``, or any module mapping float32
            ``[B, obs_dim]`` to ``[B, N]``; a ``Net``'s ``(q, state)`` tuple is accepted);
            it is used as is (not copied) and put in eval mode.
        obs_dim: the observation length it takes.
        num_actions: N, its output count (the table's ``Table.num_actions``).
        config: the ``dqn.pt`` config it came from (kept as ``self.config``), optional.
        seed: accepted for the protocol; play is deterministic.

    Attributes: ``obs_dim``, ``num_actions`` (read by ``rummy_env.agents.table_misfit``),
    ``config``, ``net``.

    It runs the network with torch on the CPU at the process's torch thread count and
    does not change it: on a busy 2-core machine ``torch.set_num_threads(1)`` makes one
    decision (a batch of 1) many times faster.
    """

    def __init__(self, net: Any, obs_dim: int, num_actions: int, config: dict | None = None,
                 seed: int | None = None) -> None:
        self.net = net.eval()
        self.obs_dim = int(obs_dim)
        self.num_actions = int(num_actions)
        self.config = dict(config or {})
        self.seed(seed)

    @classmethod
    def load(cls, path: str | os.PathLike, seed: int | None = None) -> "DQNAgent":
        """The agent saved by ``train_dqn`` in ``path`` (a ``dqn.pt`` file, or its folder).

        Raises:
            ValueError: the file is missing or not a ``dqn.pt`` of this format.
        """
        net, config = load_model(path)
        return cls(net, config["obs_dim"], config["num_actions"], config=config, seed=seed)

    def seed(self, seed: int | None) -> None:
        """Kept for the protocol; greedy play uses no randomness."""
        self._seed = seed

    def q_values(self, observation: Any) -> np.ndarray:
        """The Q-values, float32 ``[N]`` for one observation ``[obs_dim]``, ``[B, N]`` for ``[B, obs_dim]``.

        Raises:
            ValueError: an observation of another shape.
        """
        import torch

        obs = np.asarray(observation, dtype=np.float32)
        one = obs.ndim == 1
        if one:
            obs = obs[None]
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim:
            raise ValueError(f"observation must have shape ({self.obs_dim},) or (batch, {self.obs_dim}), "
                             f"got {np.shape(observation)}")
        with torch.no_grad():
            out = self.net(torch.from_numpy(np.ascontiguousarray(obs)))
        q = (out[0] if isinstance(out, tuple) else out).numpy().astype(np.float32, copy=False)
        return q[0] if one else q

    def act_batch(self, observations: Any, action_masks: Any) -> np.ndarray:
        """Greedy legal actions, int64 ``[B]``, for float32 ``[B, obs_dim]`` and masks ``[B, N]``
        (any int/bool dtype, nonzero = legal).

        Raises:
            ValueError: wrong shapes, or a row with no legal action.
        """
        q = self.q_values(np.asarray(observations, dtype=np.float32).reshape(-1, self.obs_dim))
        mask = np.asarray(action_masks)
        if mask.shape != q.shape:
            raise ValueError(f"action_mask must have shape {q.shape}, got {mask.shape}")
        if not (mask != 0).any(axis=1).all():
            raise ValueError("action_mask has no legal action (is this seat to move?)")
        return np.argmax(mask_logits(q, mask), axis=1).astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal action (mask 1) with the highest Q-value for one observation (float32
        ``[obs_dim]``) and its mask (int8 or bool ``[N]``).

        Raises:
            ValueError: wrong shapes or no legal action.
        """
        obs = np.asarray(observation, dtype=np.float32)
        mask = np.asarray(action_mask)
        if obs.shape != (self.obs_dim,):
            raise ValueError(f"observation must have shape ({self.obs_dim},), got {obs.shape}")
        if mask.shape != (self.num_actions,):
            raise ValueError(f"action_mask must have shape ({self.num_actions},), got {mask.shape}")
        return int(self.act_batch(obs[None], mask[None])[0])

    def __repr__(self) -> str:
        return f"DQNAgent(obs_dim={self.obs_dim}, num_actions={self.num_actions})"


def _model_file(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p / MODEL_NAME if p.is_dir() else p


def load_model(path: str | os.PathLike) -> tuple[Any, dict[str, Any]]:
    """``(net, config)`` from a ``dqn.pt`` (or the folder holding one): the Q-network
    (``build_net``, weights loaded, eval mode) and its saved config.

    Raises:
        ValueError: the file is missing, corrupt, or not a ``dqn.pt`` of this format.
    """
    import torch

    p = _model_file(path)
    if not p.is_file():
        raise ValueError(f"DQN model {p} does not exist")
    try:
        blob = torch.load(str(p), map_location="cpu", weights_only=True)
        if not isinstance(blob, dict) or blob.get("format") != MODEL_FORMAT:
            raise TypeError(f"not a dqn.pt of format {MODEL_FORMAT}")
        cfg = blob["config"]
        net = build_net(int(cfg["obs_dim"]), int(cfg["num_actions"]), list(cfg["hidden_sizes"]))
        net.load_state_dict(blob["state_dict"])
    except Exception as e:  # noqa: BLE001 - torch raises many kinds on a bad file
        raise ValueError(f"{p} is not a DQN model saved by train_dqn: {type(e).__name__}: {e}") from None
    return net.eval(), dict(cfg)


# ---------------------------------------------------------------------------- training

def _epsilon(t: int, total: int, h: dict[str, Any]) -> float:
    span = h["eps_fraction"] * total
    if span <= 0 or t >= span:
        return h["eps_end"]
    return h["eps_start"] + (h["eps_end"] - h["eps_start"]) * t / span


def build_training(rules: Rules, seed: int, hyper: dict[str, Any]) -> dict[str, Any]:
    """The Tianshou pieces of a run (seeds torch and numpy's global RNG, which Tianshou's
    exploration and replay sampling use): ``{"envs", "venv", "net", "policy",
    "algorithm", "buffer", "collector", "obs_dim", "num_actions"}``. ``hyper`` must be
    ``resolve_hyper``'s output. The collector is reset (every game dealt)."""
    import torch

    _import_tianshou()
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    np.random.seed(seed)
    torch.manual_seed(seed)
    envs = make_envs(rules, hyper, seed)
    venv = DummyVectorEnv([(lambda e=e: e) for e in envs])
    obs_dim = int(envs[0].env.observation_space.shape[0])
    n_act = int(envs[0].action_space.n)
    net = build_net(obs_dim, n_act, hyper["hidden_sizes"])
    policy = DiscreteQLearningPolicy(model=net, action_space=envs[0].action_space,
                                     observation_space=envs[0].observation_space,
                                     eps_training=hyper["eps_start"], eps_inference=0.0)
    algorithm = DQN(policy=policy, optim=AdamOptimizerFactory(lr=hyper["learning_rate"]), gamma=hyper["gamma"],
                    n_step_return_horizon=hyper["n_step"], target_update_freq=hyper["target_update_freq"],
                    is_double=hyper["double_q"], huber_loss_delta=hyper["huber_delta"])
    buffer = VectorReplayBuffer(hyper["buffer_size"], len(envs))
    collector = Collector(algorithm, venv, buffer, exploration_noise=True)
    collector.reset()
    return {"envs": envs, "venv": venv, "net": net, "policy": policy, "algorithm": algorithm, "buffer": buffer,
            "collector": collector, "obs_dim": obs_dim, "num_actions": n_act}


def _snapshot_agent(net: Any, obs_dim: int, n_act: int, config: dict) -> DQNAgent:
    return DQNAgent(copy.deepcopy(net), obs_dim, n_act, config=config)


def train_dqn(rules: Any, timesteps: int, seed: int, out_dir: str | os.PathLike, *, eval_every: int = 0,
              evaluate: Callable[[DQNAgent, int, float], Any] | None = None,
              progress: Callable[[int], Any] | None = None, **hyper: Any) -> dict[str, Any]:
    """Train Tianshou DQN on ``rules`` against the scripted baselines (no self-play).

    Args:
        rules: a ``rummy_env.Rules`` (or anything ``Rules.make`` takes: a preset name, a
            STATE-style dict); any player count (the opponents fill every other seat).
        timesteps: learner environment steps to train for (the learner's own decisions,
            all games summed), an int >= 1; rounded up to a multiple of ``n_envs``
            (collection steps every game at once), so at most ``n_envs - 1`` more (none
            for a multiple of 1,000 at the default 40 games).
        seed: an int >= 0; seeds torch, numpy's global RNG (Tianshou's exploration and
            replay sampling), the deals, seats and opponents of every game. Two runs with
            the same arguments give the same network on one CPU (torch permitting). The
            global RNG states of numpy and torch are kept across ``evaluate`` calls, so
            evaluating does not change the training.
        out_dir: folder for ``dqn.pt`` (created if needed).
        eval_every: call ``evaluate`` each time another ``eval_every`` learner steps have
            been trained (0: only at the end); it is always called once at the end.
        evaluate: ``evaluate(agent, t, wall_time_s)``: ``agent`` a ``DQNAgent`` over a copy of
            the current Q-network, ``t`` the learner steps so far, ``wall_time_s`` the
            seconds since ``train_dqn`` was called (imports and set-up included, time
            spent inside ``evaluate`` excluded). Its return value is ignored.
        progress: ``progress(t)``, called with the learner steps so far about once a
            second (and at the end).
        **hyper: any of ``DEFAULT_HYPER``'s keys (see there for defaults and meaning).

    Returns:
        ``{"timesteps": int trained, "wall_time_s": float (evaluate calls excluded),
        "hyper": every hyper-parameter used (``DEFAULT_HYPER``'s keys), "library":
        "tianshou", "library_version": tianshou.__version__, "model_path": str (dqn.pt)}``.

    Raises:
        ValueError: bad ``timesteps``, ``seed``, ``eval_every``, callbacks or rules, or an
            unknown hyper-parameter key (the message names it and lists the allowed keys)
            or a bad value.
        ImportError: tianshou (or torch) is not installed.
        RuntimeError: the learner took a masked-out action (a bug; never expected).
    """
    t0 = time.perf_counter()
    _check_run_args(timesteps, seed, eval_every, evaluate, progress)
    h = resolve_hyper(hyper)
    rules_obj = Rules.make(rules)
    timesteps, seed, eval_every = int(timesteps), int(seed), int(eval_every)
    import torch

    tianshou = _import_tianshou()
    from tianshou.utils.torch_utils import policy_within_training_step

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(h["torch_threads"])
    try:
        eval_time = 0.0
        run = build_training(rules_obj, seed, h)
        collector, algorithm, policy, buffer = run["collector"], run["algorithm"], run["policy"], run["buffer"]
        net, obs_dim, n_act = run["net"], run["obs_dim"], run["num_actions"]
        config = {"obs_dim": obs_dim, "num_actions": n_act, "hidden_sizes": list(h["hidden_sizes"]),
                  "rules": rules_obj.to_json(), "library": "tianshou", "library_version": tianshou.__version__,
                  "hyper": {k: (list(v) if isinstance(v, tuple) else v) for k, v in h.items()}}

        def wall() -> float:
            return time.perf_counter() - t0 - eval_time

        def run_eval(t: int, w: float | None = None) -> None:
            nonlocal eval_time
            if evaluate is None:
                return
            agent = _snapshot_agent(net, obs_dim, n_act, config)
            w = wall() if w is None else w
            e0 = time.perf_counter()
            np_state, torch_state = np.random.get_state(), torch.get_rng_state()
            try:
                evaluate(agent, t, w)
            finally:
                np.random.set_state(np_state)
                torch.set_rng_state(torch_state)
                torch.set_num_threads(h["torch_threads"])
                eval_time += time.perf_counter() - e0

        t = 0
        next_eval = eval_every if eval_every else None
        last_progress = time.perf_counter()
        pending_updates = 0.0
        n_envs, chunk = h["n_envs"], h["collect_steps"]
        while t < timesteps:
            n_step = min(chunk, -(-(timesteps - t) // n_envs) * n_envs)
            with policy_within_training_step(policy):
                policy.set_eps_training(_epsilon(t, timesteps, h))
                stats = collector.collect(n_step=n_step)
                t += stats.n_collected_steps
                illegal = sum(e.illegal_actions for e in run["envs"])
                if illegal:
                    raise RuntimeError(f"DQN took {illegal} masked-out action(s); the action mask was not applied")
                if t >= h["learning_starts"] and len(buffer) >= h["batch_size"]:
                    pending_updates += stats.n_collected_steps * h["updates_per_step"]
                    while pending_updates >= 1.0:
                        algorithm.update(buffer=buffer, sample_size=h["batch_size"])
                        pending_updates -= 1.0
            if next_eval is not None and t >= next_eval and t < timesteps:
                run_eval(t)
                while next_eval <= t:
                    next_eval += eval_every
            if progress is not None and time.perf_counter() - last_progress >= 1.0:
                progress(t)
                last_progress = time.perf_counter()
        net.eval()
        model_path = out / MODEL_NAME
        tmp = out / (MODEL_NAME + ".tmp")
        torch.save({"format": MODEL_FORMAT, "state_dict": net.state_dict(), "config": config}, str(tmp))
        os.replace(tmp, model_path)
        train_wall = wall()
        run["venv"].close()
        if progress is not None:
            progress(t)
        run_eval(t, train_wall)
    finally:
        torch.set_num_threads(threads)
    return {"timesteps": t, "wall_time_s": train_wall, "hyper": config["hyper"], "library": "tianshou",
            "library_version": tianshou.__version__, "model_path": str(model_path)}


# ---------------------------------------------------------------------------- ONNX export

def export_onnx(model_path: str | os.PathLike, out_dir: str | os.PathLike, rules: Any = None) -> dict[str, Any]:
    """Write ``out_dir/policy.onnx`` + ``out_dir/spec.json`` in ``rummy_env.train.export``'s
    format (``build_spec``, ``masked_graph``, ``write_policy_dir``), the Q-values as the
    logits: inputs ``observation`` float32 ``[batch, obs_dim]`` and ``action_mask`` int8
    ``[batch, N]``, outputs ``masked_logits`` float32 ``[batch, N]`` (illegal = -1e9) and
    ``action`` int64 ``[batch]``, the greedy legal action ``DQNAgent`` plays, so
    ``make_agent("onnx:" + out_dir)`` plays its moves.

    Args:
        model_path: a ``dqn.pt`` written by ``train_dqn`` (or its folder).
        out_dir: the folder to write (created if needed; the two files are replaced).
        rules: the rules it was trained on (``Rules``, preset name or dict); ``None``: the
            rules saved in ``dqn.pt``.

    Returns:
        the spec (the contents of ``spec.json``).

    Raises:
        ValueError: a missing or corrupt model, bad rules, or rules whose observation size
            or action count differ from the network's.
    """
    from .export import build_spec, masked_graph, write_policy_dir

    net, cfg = load_model(model_path)
    if rules is None:
        rules_obj, rules_source = Rules.make(cfg["rules"]), f"saved in {_model_file(model_path)}"
    else:
        rules_obj, rules_source = Rules.make(rules), "given to export_onnx"
    table = Table.of(rules_obj)
    want_dim, want_n = table.obs_size, table.num_actions
    if table.misfit(cfg["obs_dim"], cfg["num_actions"]) is not None:
        raise ValueError(f"the DQN network takes observations of {cfg['obs_dim']} and has {cfg['num_actions']} "
                         f"outputs, but {table.describe()} has {want_dim} and {want_n} "
                         f"({rules_source}); the rules do not match the model")
    spec = build_spec(rules_obj, rules_source, want_dim, f"tianshou DQN {_model_file(model_path)}")
    write_policy_dir(masked_graph(net.model.model), spec, want_dim, Path(out_dir))
    return spec


__all__ = ["train_dqn", "DQNAgent", "export_onnx", "load_model", "resolve_hyper", "DEFAULT_HYPER",
           "MaskedObsEnv", "opponent_kinds", "make_envs", "build_net", "build_training"]
