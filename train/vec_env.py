"""A batched self-play vector env for SB3: many games in lock-step in one process.

Each game is the single-agent view of ``rummy_env.SingleAgentEnv`` (the learner
plays one random seat per hand, the reward is the learner's own hand payoff times
``reward_scale``), but opponents' moves are computed for all games at once: the
games waiting on the same snapshot policy are answered with one batched forward
pass. Scripted baselines act game by game.

Implements SB3's ``VecEnv`` and sb3-contrib's ``action_masks`` protocol.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from rummy_env import engine
from rummy_env.actions import num_actions, table_kind
from rummy_env.observation import Encoder, action_mask, obs_size
from rummy_env.rules import Rules

from .pool import OpponentPool, SnapshotAgent
from .rewards import REWARDS, hand_rewards


class _Game:
    __slots__ = ("state", "seat", "opps", "kinds", "rng", "ret", "length")


class BatchedVecEnv(VecEnv):
    """The parts of SB3's ``VecEnv`` that every batch of self-play games shares: one
    object holds all games, so attributes are its own, and the only per-env method is
    sb3-contrib's ``action_masks`` (subclasses define ``action_masks()``)."""

    render_mode = None

    def action_masks(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        raise AttributeError(f"{type(self).__name__} has no per-env method {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


class SelfPlayVecEnv(BatchedVecEnv):
    """``n_envs`` games of ``rules`` against opponents drawn from ``pool``.

    Observations: float32 ``[n_envs, obs_size(n, kind)]``; actions: ``Discrete(num_actions(rules))``;
    ``action_masks()``: bool ``[n_envs, 579]``. At the end of a hand the game is
    re-dealt at once and ``infos[i]`` holds ``terminal_observation``, ``episode``
    (``r`` return, ``l`` learner decisions; the reward is ``rummy_env.train.rewards.hand_rewards`` for the
    learner's seat), ``win`` (1 when the learner's payoff is
    positive), ``points`` (the payoff in points) and ``opponent`` (the kinds).

    Raises:
        ValueError: an action that is illegal in its game (names the game and action).
    """


    def __init__(self, rules: Rules, pool: OpponentPool, n_envs: int, seed: int = 0,
                 reward_scale: float = 0.01, reward: str = "points") -> None:
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        self.rules = rules
        self.pool = pool
        self.reward_scale = reward_scale
        self.reward = reward
        self.n = rules.num_players
        self.encoder = Encoder.for_rules(rules)
        self.n_actions = num_actions(rules)
        obs_space = gym.spaces.Box(0.0, np.inf, shape=(obs_size(self.n, table_kind(rules)),), dtype=np.float32)
        super().__init__(n_envs, obs_space, gym.spaces.Discrete(self.n_actions))
        self.games = [_Game() for _ in range(n_envs)]
        self._seed = seed
        self._actions: np.ndarray | None = None
        self.opponent_decisions = 0
        self.opponent_time = 0.0

    # ---------------------------------------------------------------- game flow
    def _deal(self, g: _Game) -> None:
        g.state = engine.new_game(self.rules, seed=int(g.rng.integers(2**62)))
        g.seat = int(g.rng.integers(self.n))
        g.opps = [None] * self.n
        g.kinds = []
        for q in range(self.n):
            if q != g.seat:
                kind, agent = self.pool.sample(g.rng)
                g.opps[q] = agent
                g.kinds.append(kind)
        g.ret = 0.0
        g.length = 0

    def _advance(self, games: Iterable[_Game]) -> None:
        """Play opponents' moves until each game has the learner to move or is over."""
        import time

        t0 = time.perf_counter()
        pending = [g for g in games if not g.state.hand_over and g.state.current != g.seat]
        enc = self.encoder.encode
        while pending:
            batches: dict[int, tuple[SnapshotAgent, list[_Game]]] = {}
            for g in pending:
                st = g.state
                agent = g.opps[st.current]
                if isinstance(agent, SnapshotAgent):
                    batches.setdefault(id(agent), (agent, []))[1].append(g)
                else:
                    mask = action_mask(engine.legal_actions(st), size=self.n_actions)
                    engine.apply(st, agent.act(enc(st, st.current), mask))
                    self.opponent_decisions += 1
            for agent, gs in batches.values():
                obs = np.stack([enc(g.state, g.state.current) for g in gs])
                masks = np.zeros((len(gs), self.n_actions), dtype=bool)
                for i, g in enumerate(gs):
                    action_mask(engine.legal_actions(g.state), out=masks[i])
                acts = agent.act_batch(obs, masks, rng=gs[0].rng)
                for g, a in zip(gs, acts):
                    engine.apply(g.state, int(a))
                self.opponent_decisions += len(gs)
            pending = [g for g in pending if not g.state.hand_over and g.state.current != g.seat]
        self.opponent_time += time.perf_counter() - t0

    def _start(self, g: _Game) -> None:
        for _ in range(1000):
            self._deal(g)
            self._advance([g])
            if not g.state.hand_over:
                return
        raise RuntimeError("could not deal a hand in which the learner gets to move")

    # ---------------------------------------------------------------- VecEnv API
    def reset(self) -> np.ndarray:
        seeds = self._seeds if any(s is not None for s in self._seeds) else [None] * self.num_envs
        base = np.random.SeedSequence(self._seed if seeds[0] is None else seeds[0])
        for g, ss in zip(self.games, base.spawn(self.num_envs)):
            g.rng = np.random.default_rng(ss)
            self._deal(g)
        self._advance(self.games)
        for g in self.games:
            if g.state.hand_over:
                self._start(g)
        self._reset_seeds()
        return self._obs()

    def _obs(self) -> np.ndarray:
        enc = self.encoder.encode
        return np.stack([enc(g.state, g.seat) for g in self.games])

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i, (g, a) in enumerate(zip(self.games, self._actions)):
            try:
                engine.apply(g.state, int(a))
            except ValueError as e:
                raise ValueError(f"game {i}: {e}") from None
            g.length += 1
        self._advance(self.games)
        for i, g in enumerate(self.games):
            st = g.state
            if st.hand_over:
                pts = st.payoffs[g.seat]
                r = float(hand_rewards(st, self.reward, self.reward_scale)[g.seat])
                rewards[i] = r
                dones[i] = True
                infos[i] = {
                    "terminal_observation": self.encoder.encode(st, g.seat),
                    "episode": {"r": r, "l": g.length},
                    "win": 1.0 if pts > 0 else 0.0,
                    "points": pts,
                    "opponent": "+".join(g.kinds),
                    "outcome": st.result["outcome"],
                }
                self._start(g)
        return self._obs(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """Bool ``[n_envs, 579]``: each game's legal actions for the learner."""
        masks = np.zeros((self.num_envs, self.n_actions), dtype=bool)
        for i, g in enumerate(self.games):
            action_mask(engine.legal_actions(g.state), out=masks[i])
        return masks

    def close(self) -> None:
        pass

    def learner_seats(self) -> Sequence[int]:
        return [g.seat for g in self.games]
