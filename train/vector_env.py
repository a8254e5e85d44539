"""The batched self-play games as a Gymnasium ``VectorEnv``: what the RLlib backend's env
runners step (issue 26 item 3). Ray-free, so it is tested without Ray.

``SelfPlayVectorEnv`` steps ``num_envs`` games at once exactly as the SB3 backend's
``SelfPlayVecEnv`` does (the same object inside): the learner's observations of every game
encoded in one ``encode_many`` into preallocated arrays, the opponents' moves round by
round with the scripted ones on their rows and every snapshot's games in one forward pass
(``act_snapshots``), the opponents drawn per seat per hand from an ``OpponentPool`` with
the SB3 trainer's semantics. Only the learner's decisions are steps of the vector env, so
RLlib samples, stores and trains on the learner's steps alone.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from rummy_env import engine
from rummy_env.rules import Rules
from rummy_env.table import Table

from .pool import ActorNet, OpponentPool
from .rewards import hand_rewards
from .vec_env import SelfPlayVecEnv


_RESEED = 0x56454354  # the stream of the deals' seeds of resets given no seed


class SelfPlayVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` hands of ``rules``, the learner in one random seat of each, the other
    seats played by opponents drawn from ``pool`` (RULES.md §10 for the tables).

    Spaces (per game): observation ``Dict({"observation": Box float32 [obs_size],
    "action_mask": Box int8 [A]})``, action ``Discrete(A)`` (``A = Table.num_actions``,
    579 at a standard table). ``reset`` and ``step`` return the batch as
    ``{"observation": float32 [num_envs, obs_size], "action_mask": int8 [num_envs, A]}``
    (copies).

    Autoreset is Gymnasium's ``NEXT_STEP`` mode (what RLlib's ``SingleAgentEnvRunner``
    expects): the step that ends a game's hand returns that hand's final observation
    (the learner's view of the ended hand, an all-zero mask), ``terminated`` and the
    learner's hand reward (``rummy_env.train.rewards.hand_rewards``: points times
    ``reward_scale``, or the sign with ``reward="win"``); the game's next ``step``
    ignores its action and returns the first observation of a new hand (reward 0, not
    terminated). A hand never truncates.

    ``infos`` (Gymnasium's vector form: ``infos[key]`` an array over games, ``infos["_" +
    key]`` which games have it) carry, on a game's terminal step, ``win`` (1.0 if the
    learner's payoff is positive), ``points`` (the payoff) and ``opponent`` (the kinds of
    the other seats, ``"+"``-joined).

    Args:
        rules: the table (``Rules``).
        pool: the opponents (``OpponentPool``; ``add_net`` adds snapshots while it runs).
        num_envs: games stepped together (>= 1).
        seed: the first ``reset``'s deals when it is given none; later resets without a
            seed draw fresh deals from a generator seeded by the last seed given (or this).
        reward_scale, reward: as ``TrainConfig``.
        rotate_steps: snapshot windows (``TrainConfig.snapshot_rotation``) every this many
            steps and at ``reset``, as ``SelfPlayVecEnv``'s; 0: none.

    Raises:
        ValueError: ``num_envs`` < 1, a bad ``reward``; in ``step``, actions of the wrong
            shape or an action illegal in its game (names the game and the action).
    """

    # Gymnasium >= 1.1 names the mode; 1.0's vector envs all reset on the next step
    metadata = {"autoreset_mode": getattr(getattr(gym.vector, "AutoresetMode", None), "NEXT_STEP", "next_step")}

    def __init__(self, rules: Rules, pool: OpponentPool, num_envs: int, seed: int = 0,
                 reward_scale: float = 0.01, reward: str = "points", rotate_steps: int = 0) -> None:
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.games = SelfPlayVecEnv(rules, pool, num_envs, seed=seed, reward_scale=reward_scale, reward=reward,
                                    rotate_steps=rotate_steps)
        table = Table.of(rules)
        self.rules, self.pool, self.num_envs = rules, pool, num_envs
        self.reward, self.reward_scale = reward, reward_scale
        self.single_observation_space = gym.spaces.Dict({
            "observation": self.games.observation_space,
            "action_mask": gym.spaces.Box(0, 1, shape=(table.num_actions,), dtype=np.int8)})
        self.single_action_space = gym.spaces.Discrete(table.num_actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self._fresh = np.zeros(num_envs, dtype=bool)  # a new hand was dealt after the last step ended one
        self._seeds = np.random.default_rng([seed, _RESEED])
        self._seed = seed
        self._reset_once = False
        self.steps = 0
        """Learner decisions taken by this env (the steps an env runner sampled)."""

    # ---------------------------------------------------------------- pool
    def add_snapshot(self, spec: dict[str, Any], state_dict: dict[str, Any], step: int) -> None:
        """Add a snapshot (an ``ActorNet`` of ``spec`` with ``state_dict``, taken at learner
        step ``step``) to the pool; the oldest is dropped past ``max_snapshots``."""
        net = ActorNet(**spec)
        net.load_state_dict(state_dict)
        self.pool.add_net(net.eval(), step)

    def load_pool(self, state: dict[str, Any]) -> None:
        """Replace the pool's snapshots by ``OpponentPool.state()``'s."""
        self.pool.load_state(state)

    # ---------------------------------------------------------------- VectorEnv API
    def _batch(self) -> dict[str, np.ndarray]:
        return {"observation": self.games.obs.copy(), "action_mask": self.games.masks.copy()}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Deal every game and play the opponents up to the learner's first move.
        ``seed``: an int (the deals of every game spawned from it) or None (the
        constructor's seed on the first reset, then fresh deals). ``options`` are not
        supported. Returns ``(observations, {})``.

        Raises:
            ValueError: ``options`` given, or a seed that is not an int (a list of
                per-game seeds included); nothing is reset then.
        """
        if options:
            raise ValueError(f"reset takes no options, got {options!r}")
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)):
            raise ValueError(f"seed must be an int or None (one seed for all the games: each game's deals are "
                             f"spawned from it), got {seed!r}")
        if seed is None:
            seed = self._seed if not self._reset_once else int(self._seeds.integers(2**62))
        else:
            self._seeds = np.random.default_rng([int(seed), _RESEED])
        self._reset_once = True
        self.games.seed(int(seed))
        self.games.reset_in_place()
        self._fresh[:] = False
        return self._batch(), {}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner action per game (int ``[num_envs]``; ignored for a game whose last
        step ended its hand), then the opponents' moves up to the learner's next turn.

        Returns ``(observations, rewards float32 [num_envs], terminated bool [num_envs],
        truncated bool [num_envs] (all False), infos)`` (see the class).

        Raises:
            ValueError: ``actions`` not of shape ``[num_envs]``, or an action illegal in its
                game; the games are unchanged then.
        """
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be ints of shape ({self.num_envs},), got {acts.dtype} {acts.shape}")
        g = self.games
        stepped, idx = [], []
        for i, (game, a) in enumerate(zip(g.games, acts.tolist())):
            if self._fresh[i]:
                continue
            if not (0 <= a < g.n_actions and g.masks[i, a]):
                raise ValueError(f"game {i}: action {a} is not legal for the learner; legal: "
                                 f"{np.flatnonzero(g.masks[i]).tolist()}")
            stepped.append(game)
            idx.append(i)
        for game, i in zip(stepped, idx):
            engine.apply(game.state, int(acts[i]))
            game.length += 1
        self.steps += len(stepped)
        g._advance(stepped)
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        terminated = np.zeros(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {}
        ended: list[tuple[int, np.ndarray]] = []
        g._steps += 1
        if g.rotate_steps and g._steps % g.rotate_steps == 0:  # before this step's new deals, as SelfPlayVecEnv
            g.pool.rotate(g._rotation_rng)
        for i in idx:
            game = g.games[i]
            st = game.state
            if not st.hand_over:
                continue
            pts = st.payoffs[game.seat]
            rewards[i] = float(hand_rewards(st, self.reward, self.reward_scale)[game.seat])
            terminated[i] = True
            infos = self._add_info(infos, {"win": 1.0 if pts > 0 else 0.0, "points": float(pts),
                                           "opponent": "+".join(game.kinds)}, i)
            ended.append((i, g.encoder.encode(st, game.seat)))
            g._start(game)
        self._fresh[:] = False
        g._write_obs()
        for i, final in ended:
            g.obs[i] = final
            g.masks[i] = 0
            self._fresh[i] = True
        return self._batch(), rewards, terminated, np.zeros(self.num_envs, dtype=bool), infos

    def close_extras(self, **kwargs: Any) -> None:
        self.games.close()
