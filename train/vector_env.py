"""The batched self-play games as a Gymnasium ``VectorEnv``: what the RLlib backend's env
runners step (issue 26 item 3). Ray-free, so it is tested without Ray.

``SelfPlayVectorEnv`` steps ``num_envs`` games at once exactly as the SB3 backend's
``SelfPlayVecEnv`` does (the same object inside): the learner's observations of every game
encoded in one ``encode_many`` into preallocated arrays, the opponents' moves round by
round with the scripted ones on their rows and the snapshots' games together (their trunks
incremental, ``act_snapshots_incremental``), the opponents drawn per seat per hand from an ``OpponentPool`` with
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
    terminated). A hand never truncates. With a match reward (``"match"``,
    ``"points+match"``) the episode is a match (``SelfPlayVecEnv``): a hand that leaves
    the match undecided is followed at once by the next (its reward that hand's: 0 under
    "match"; not terminated), the match's last hand ends the episode with the match
    result added, and a match undecided after ``MAX_HANDS`` hands is ``truncated``.

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
        ValueError: ``rules`` or ``pool`` of the wrong type, ``num_envs`` < 1, a negative
            or non-int ``seed`` or ``rotate_steps``, a ``reward_scale`` that is not a finite
            number, a bad ``reward``; in ``step``, actions of the wrong shape, an action
            illegal in its game (names the game and the action), a step before ``reset``
            or after ``close``.
    """

    # Gymnasium >= 1.1 names the mode; 1.0's vector envs all reset on the next step
    metadata = {"autoreset_mode": getattr(getattr(gym.vector, "AutoresetMode", None), "NEXT_STEP", "next_step")}

    def __init__(self, rules: Rules, pool: OpponentPool, num_envs: int, seed: int = 0,
                 reward_scale: float = 0.01, reward: str = "points", rotate_steps: int = 0) -> None:
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules (Rules.make(preset)), got {type(rules).__name__}")
        if not isinstance(pool, OpponentPool):
            raise ValueError(f"pool must be an OpponentPool (train.subproc.make_pool), got {type(pool).__name__}")
        for name, val, lo in (("num_envs", num_envs, 1), ("seed", seed, 0), ("rotate_steps", rotate_steps, 0)):
            if not isinstance(val, (int, np.integer)) or isinstance(val, (bool, np.bool_)) or val < lo:
                raise ValueError(f"{name} must be an int >= {lo}, got {val!r}")
        num_envs, seed, rotate_steps = int(num_envs), int(seed), int(rotate_steps)
        if isinstance(reward_scale, bool) or not isinstance(reward_scale, (int, float, np.floating)) \
                or not np.isfinite(reward_scale):
            raise ValueError(f"reward_scale must be a finite number, got {reward_scale!r}")
        self.games = SelfPlayVecEnv(rules, pool, num_envs, seed=seed, reward_scale=float(reward_scale),
                                    reward=reward, rotate_steps=rotate_steps)
        table = Table.of(rules)
        self.rules, self.pool, self.num_envs = rules, pool, num_envs
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
    def _net(self, spec: Any, state_dict: Any, what: str) -> ActorNet:
        """An ``ActorNet`` of ``spec`` with ``state_dict`` that plays this env's table.

        Raises:
            ValueError: a spec ``ActorNet`` does not take, weights that do not fit it, or a
                net for another table (observation or action sizes)."""
        if not isinstance(spec, dict):
            raise ValueError(f"{what}: the spec must be a dict of ActorNet's arguments (ActorNet.spec), "
                             f"got {type(spec).__name__}")
        try:
            net = ActorNet(**spec)
            net.load_state_dict(state_dict)
        except Exception as e:  # noqa: BLE001 - torch and ActorNet raise several kinds
            raise ValueError(f"{what}: not an ActorNet of its spec ({type(e).__name__}: {e})") from None
        want = (self.single_observation_space["observation"].shape[0], self.single_action_space.n)
        got = (net.spec["obs_dim"], net.spec["n_actions"])
        if got != want:
            raise ValueError(f"{what}: a net for observations of {got[0]} and {got[1]} actions; this table has "
                             f"{want[0]} and {want[1]}")
        return net.eval()

    @staticmethod
    def _check_step(step: Any, what: str) -> int:
        if not isinstance(step, (int, np.integer)) or isinstance(step, (bool, np.bool_)) or step < 0:
            raise ValueError(f"{what}: the step a snapshot was taken at must be an int >= 0, got {step!r}")
        return int(step)

    def add_snapshot(self, spec: dict[str, Any], state_dict: dict[str, Any], step: int) -> None:
        """Add a snapshot (an ``ActorNet`` of ``spec`` with ``state_dict``, taken at learner
        step ``step``) to the pool; the oldest is dropped past ``max_snapshots``.

        Raises:
            ValueError: a bad spec or weights, a net for another table, or a bad ``step``;
                the pool is unchanged then."""
        step = self._check_step(step, "add_snapshot")
        self.pool.add_net(self._net(spec, state_dict, "add_snapshot"), step)

    def load_pool(self, state: dict[str, Any]) -> None:
        """Replace the pool's snapshots by ``OpponentPool.state()``'s (``{"steps", "specs",
        "nets"}``, lists of one length, oldest first; past ``max_snapshots`` the oldest are
        dropped, as ``add_snapshot`` does).

        Raises:
            ValueError: not such a dict, lists of different lengths, or a snapshot
                ``add_snapshot`` would refuse; the pool is unchanged then."""
        keys = ("steps", "specs", "nets")
        if not isinstance(state, dict) or any(not isinstance(state.get(k), list) for k in keys):
            raise ValueError(f"load_pool takes OpponentPool.state(): a dict of lists {', '.join(keys)}, got "
                             f"{state if not isinstance(state, dict) else sorted(state)!r}")
        lens = {k: len(state[k]) for k in keys}
        if len(set(lens.values())) != 1:
            raise ValueError(f"load_pool: the lists must have one length, got {lens}")
        built = [(self._net(spec, sd, f"load_pool snapshot {i}"), self._check_step(st, f"load_pool snapshot {i}"))
                 for i, (st, spec, sd) in enumerate(zip(state["steps"], state["specs"], state["nets"]))]
        self.pool.clear()
        for net, step in built:
            self.pool.add_net(net, step)

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
            ValueError: ``options`` given, a seed that is not an int >= 0 (a list of
                per-game seeds included), or a closed env; nothing is reset then.
        """
        self._check_open()
        if options is not None and options != {}:
            raise ValueError(f"reset takes no options, got {options!r}")
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, (bool, np.bool_))
                                 or seed < 0):
            raise ValueError(f"seed must be an int >= 0 or None (one seed for all the games: each game's deals "
                             f"are spawned from it), got {seed!r}")
        if seed is None:
            seed = self._seed if not self._reset_once else int(self._seeds.integers(2**62))
        else:
            self._seeds = np.random.default_rng([int(seed), _RESEED])
            self.games.restart_windows(int(seed))  # the windows' draws too, as a new env of this seed's
        self._reset_once = True
        self.games.seed(int(seed))
        self.games.reset_in_place()
        self._fresh[:] = False
        return self._batch(), {}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner action per game (int ``[num_envs]``; ignored for a game whose last
        step ended its hand), then the opponents' moves up to the learner's next turn.

        Returns ``(observations, rewards float32 [num_envs], terminated bool [num_envs],
        truncated bool [num_envs] (True only for a match cut at ``MAX_HANDS``), infos)``
        (see the class).

        Raises:
            ValueError: ``actions`` not of shape ``[num_envs]``, an action illegal in its
                game, a step before ``reset`` or after ``close``; the games are unchanged then.
        """
        self._check_open()
        if not self._reset_once:
            raise ValueError("call reset() before step(): no hand has been dealt yet")
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
        truncated = np.zeros(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {}
        ended: list[tuple[int, np.ndarray]] = []
        g._tick()
        for i in idx:
            game = g.games[i]
            if not game.state.hand_over:
                continue
            rewards[i], info = g._settle(game)
            if info is None:  # a match reward: the match goes on in its next hand
                continue
            (truncated if info.get("TimeLimit.truncated") else terminated)[i] = True
            infos = self._add_info(infos, {k: info[k] for k in ("win", "points", "opponent")}, i)
            ended.append((i, info["terminal_observation"]))
            g._start(game)
        self._fresh[:] = False
        g._write_obs()
        for i, final in ended:
            g.obs[i] = final
            g.masks[i] = 0
            self._fresh[i] = True
        return self._batch(), rewards, terminated, truncated, infos

    def _check_open(self) -> None:
        if getattr(self, "closed", False):
            raise ValueError("this SelfPlayVectorEnv is closed: make a new one")

    def close_extras(self, **kwargs: Any) -> None:
        self.games.close()
