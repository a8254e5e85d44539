"""A batched self-play vector env for SB3: many games in lock-step in one process.

Each game is the single-agent view of ``rummy_env.SingleAgentEnv`` (the learner
plays one random seat per hand, the reward is the learner's own hand payoff times
``reward_scale``), but the work is done for all games at once:

- the observations of every game are written by one ``Encoder.encode_many`` call
  into one preallocated float32 ``[n_envs, obs_size]`` array, the action masks by one
  ``action_masks_into`` into one preallocated int8 ``[n_envs, num_actions]`` array
  (``SelfPlayVecEnv(obs_out=..., mask_out=...)`` takes arrays over shared memory:
  ``rummy_env.train.subproc`` hands each worker its rows);
- the opponents to move in every game are encoded and masked the same way, once per
  round of moves; the games waiting on the same snapshot policy are answered with one
  batched forward pass (``SnapshotAgent.act_batch``), the scripted baselines act game
  by game on their row of that batch.

Every game draws from its own generator (``numpy.random.SeedSequence(seed).spawn``):
its deals, its learner seat, its opponents, its snapshots' sampling noise, and its own
copy of each scripted baseline (seeded from it), so a game's trajectory does not depend
on the other games of the batch nor on the order they are stepped in (up to the last
bits of a snapshot's batched forward pass, which torch may compute differently for
another batch size): stepping a game alone gives the same observations, masks, rewards
and dones (``tests/test_batched.py``).

Implements SB3's ``VecEnv`` and sb3-contrib's ``action_masks`` protocol.
"""
from __future__ import annotations

import copy
import pickle
import time
from typing import Any, Iterable, Sequence

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from rummy_env import engine
from rummy_env.env import MAX_HANDS
from rummy_env.observation import Encoder, SeededAgent, action_masks_into
from rummy_env.table import Table
from rummy_env.rules import Rules

from .pool import OpponentPool, SnapshotAgent, TrunkCache, act_snapshots, act_snapshots_incremental
from .rewards import MATCH_REWARDS, REWARDS, deadwood_potential, hand_rewards


class _Game:
    """One game of the batch: its position, the learner's seat, the agents of the
    other seats (``None`` at the learner's), their kinds, its generator, its own
    copies of the scripted baselines (kind -> agent), its learner decisions this hand,
    its index in the batch; with a match reward, also the learner's payoffs and rewards
    summed over the match's hands so far (``points``, ``ret``)."""

    __slots__ = ("state", "seat", "opps", "kinds", "rng", "own", "length", "idx", "points", "ret", "phi")


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

    Observations: float32 ``[n_envs, obs_size(n, kind)]``; actions: ``Discrete(A)`` with
    ``A = Table.of(rules).num_actions``, the table's action count; ``action_masks()``: bool
    ``[n_envs, A]``. At
    the end of a hand the game is re-dealt at once and ``infos[i]`` holds
    ``terminal_observation``, ``episode`` (``r`` return, ``l`` learner decisions; the
    reward is ``rummy_env.train.rewards.hand_rewards`` for the learner's seat), ``win``
    (1 when the learner's payoff is positive), ``points`` (the payoff in points),
    ``opponent`` (the kinds) and ``outcome``.

    With ``reward="match"`` or ``"points+match"`` an episode is a whole match instead
    (RULES.md §7): when a hand ends and no total has reached the target, the next hand is
    dealt at once (the deal passes one seat left, the totals stay and are in the
    observations, the learner keeps its seat and its opponents), the step's reward is the
    hand's (0 under "match", the points reward under "points+match") and the episode goes
    on; at the match's end the reward adds the match result (``engine.match_payoffs``: +1
    won, -1 lost, heads-up; a tie 0) and the infos are the match's: ``win`` 1 when the
    learner won it alone, ``points`` its payoffs summed over the match's hands,
    ``episode`` its rewards summed (``r``) and its decisions (``l``) in the match,
    ``outcome`` the last hand's, ``hands`` the hands played. A match still undecided
    after ``rummy_env.env.MAX_HANDS`` hands ends truncated (no match result,
    ``TimeLimit.truncated``), as ``RummyEnv(episode="match")`` does.

    Args:
        obs_out: where the learner's observations are written (float32 ``[n_envs,
            obs_size(n, kind)]``, e.g. rows of a shared-memory block); a new array if None.
        mask_out: where the learner's masks are written (int8 ``[n_envs, A]``); a new
            array if None. ``obs``/``masks`` are these buffers (overwritten every step:
            ``reset``, ``step`` and ``action_masks`` return copies).
        rotate_steps: every this many steps (and at ``reset``) the pool starts a new
            window (``OpponentPool.rotate``, drawn from a generator of its own seeded by
            ``seed``): ``TrainConfig.snapshot_rotation`` in vector steps; 0: no windows.
        shaping: the deadwood shaping's weight (``TrainConfig.deadwood_shaping``, float
            >= 0; 0: none): each learner step's reward adds ``gamma * phi(s') - phi(s)``,
            ``phi`` = ``rewards.deadwood_potential`` of the learner's seat at its
            observations (0 at an episode's end), so a hand's (or a match's) shaped
            return is its unshaped one minus ``phi`` of its first observation. The
            infos' ``episode["r"]`` stays the unshaped return.
        gamma: the discount of the shaping term (PPO's ``gamma``).

    The scripted opponents are handed rows of a reused buffer (an agent that keeps its
    observation must copy it; the baselines do not keep it).

    Raises:
        ValueError: a bad ``reward``, an ``obs_out``/``mask_out`` of the wrong shape or
            dtype, or an action that is illegal in its game (names the game and action).
    """

    def __init__(self, rules: Rules, pool: OpponentPool, n_envs: int, seed: int = 0,
                 reward_scale: float = 0.01, reward: str = "points", obs_out: np.ndarray | None = None,
                 mask_out: np.ndarray | None = None, rotate_steps: int = 0, shaping: float = 0.0,
                 gamma: float = 1.0) -> None:
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        if not isinstance(rotate_steps, int) or rotate_steps < 0:
            raise ValueError(f"rotate_steps must be an int >= 0, got {rotate_steps!r}")
        if isinstance(shaping, bool) or not isinstance(shaping, (int, float)) or not 0 <= shaping < float("inf"):
            raise ValueError(f"shaping must be a finite number >= 0 (0: none), got {shaping!r}")
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0 <= gamma <= 1:
            raise ValueError(f"gamma must be a number in [0, 1], got {gamma!r}")
        self.shaping, self.gamma = float(shaping), float(gamma)
        self.rotate_steps = rotate_steps
        self._steps = 0
        self.restart_windows(seed)  # its own stream: the games' are unchanged
        self.rules = rules
        self.pool = pool
        self.reward_scale = reward_scale
        self.reward = reward
        self.n = rules.num_players
        self.encoder = Encoder.for_rules(rules)
        table = Table.of(rules)
        dim, n_act = table.obs_size, table.num_actions
        self.n_actions = n_act
        obs_space = gym.spaces.Box(table.obs_low, np.inf, shape=(dim,), dtype=np.float32)
        super().__init__(n_envs, obs_space, gym.spaces.Discrete(n_act))
        self.obs = self._buffer(obs_out, "obs_out", (n_envs, dim), np.float32)
        self.masks = self._buffer(mask_out, "mask_out", (n_envs, n_act), np.int8)
        # the opponents to move, one row per game: reused every round
        self._opp_obs = np.zeros((n_envs, dim), dtype=np.float32)
        self._opp_masks = np.zeros((n_envs, n_act), dtype=np.int8)
        self.games = [_Game() for _ in range(n_envs)]
        for i, g in enumerate(self.games):
            g.idx = i
        # the snapshots' trunks, seat by seat (act_snapshots_incremental): game i's seat q is row i * n + q
        self._trunks = TrunkCache(n_envs * self.n)
        self._seed = seed
        self._actions: np.ndarray | None = None
        self.opponent_decisions = 0
        self.opponent_time = 0.0

    @staticmethod
    def _buffer(given: np.ndarray | None, name: str, shape: tuple[int, int], dtype) -> np.ndarray:
        if given is None:
            return np.zeros(shape, dtype=dtype)
        if not isinstance(given, np.ndarray) or given.shape != shape or given.dtype != dtype \
                or not given.flags.c_contiguous:
            got = f"{given.dtype} {given.shape}" if isinstance(given, np.ndarray) else type(given).__name__
            raise ValueError(f"{name} must be a C-contiguous {np.dtype(dtype).name} array of shape {shape}, got {got}")
        return given

    # ---------------------------------------------------------------- game flow
    def _seed_game(self, g: _Game, ss: np.random.SeedSequence) -> None:
        """The game's generator and its own copies of the pool's scripted baselines
        (``SeededAgent.reseeded``: the baselines' only state is their generator, so a copy
        need not copy it; a deep copy of it, thrown away at once, was most of a reset's
        time)."""
        g.rng = np.random.default_rng(ss)
        kinds = sorted(self.pool.baselines)
        agent_seeds = ss.spawn(1)[0].generate_state(max(1, len(kinds)))
        g.own = {}
        for k, s in zip(kinds, agent_seeds):
            base = self.pool.baselines[k]
            if isinstance(base, SnapshotAgent):  # a frozen policy (the fixed kind): every game shares it
                continue
            if isinstance(base, SeededAgent):
                g.own[k] = base.reseeded(int(s))
                continue
            a = copy.deepcopy(base)
            if hasattr(a, "seed"):
                a.seed(int(s))
            g.own[k] = a

    def _deal(self, g: _Game) -> None:
        g.state = engine.new_game(self.rules, seed=int(g.rng.integers(2**62)))
        self._trunks.forget(g.idx * self.n, (g.idx + 1) * self.n)
        g.seat = int(g.rng.integers(self.n))
        g.opps = [None] * self.n
        g.kinds = []
        for q in range(self.n):
            if q != g.seat:
                kind, agent = self.pool.sample(g.rng)
                g.opps[q] = agent if isinstance(agent, SnapshotAgent) else g.own.get(kind, agent)
                g.kinds.append(kind)
        g.length = 0
        g.points = 0
        g.ret = 0.0

    def _next_hand(self, g: _Game) -> None:
        """Deal ``g``'s next hand of the match (``engine.next_hand``, from the game's
        generator) and play the opponents up to the learner's move or the hand's end."""
        engine.next_hand(g.state, seed=int(g.rng.integers(2**62)))
        self._trunks.forget(g.idx * self.n, (g.idx + 1) * self.n)
        self._advance([g])

    def _advance(self, games: Iterable[_Game]) -> None:
        """Play opponents' moves until each game has the learner to move or is over.

        Round by round: every game whose opponent is to move is encoded and masked in
        one batch (scripted games first, then snapshot games grouped by snapshot), then each
        scripted opponent acts on its row and the snapshots answer their games: those in
        the pool's stack with ``act_snapshots_incremental`` (each seat's trunk from its
        last one), any other (a pool that does not stack, a dropped snapshot finishing
        the hands it was dealt into) with ``act_snapshots`` (the card features of all its
        games in one pass, then each snapshot's learned layers on its own games)."""
        t0 = time.perf_counter()
        pending = [g for g in games if not g.state.hand_over and g.state.current != g.seat]
        enc, obs, masks = self.encoder, self._opp_obs, self._opp_masks
        legal_actions, apply = engine.legal_actions, engine.apply
        while pending:
            scripted: list[_Game] = []
            groups: dict[int, tuple[SnapshotAgent, list[_Game]]] = {}
            for g in pending:
                agent = g.opps[g.state.current]
                if isinstance(agent, SnapshotAgent):
                    groups.setdefault(id(agent), (agent, []))[1].append(g)
                else:
                    scripted.append(g)
            # one order: the scripted games, the stacked snapshots' games, the other snapshots'
            stacked: list[tuple[SnapshotAgent, list[_Game]]] = []
            whole: list[tuple[SnapshotAgent, list[_Game]]] = []
            for ag in groups.values():
                (stacked if self.pool.in_stack(ag[0]) else whole).append(ag)
            k = len(scripted)
            for _, gs in stacked + whole:
                scripted += gs
            order = scripted
            states = [g.state for g in order]
            enc.encode_many(states, [st.current for st in states], obs)
            action_masks_into([legal_actions(st) for st in states], masks)
            for i in range(k):
                st = order[i].state
                apply(st, order[i].opps[st.current].act(obs[i], masks[i]))
            k = self._snapshots_move(order, k, stacked, obs, masks, incremental=True)
            self._snapshots_move(order, k, whole, obs, masks, incremental=False)
            self.opponent_decisions += len(order)
            pending = [g for g in pending if not g.state.hand_over and g.state.current != g.seat]
        self.opponent_time += time.perf_counter() - t0

    def _snapshots_move(self, order: list[_Game], k: int, part: list[tuple[SnapshotAgent, list[_Game]]],
                        obs: np.ndarray, masks: np.ndarray, incremental: bool) -> int:
        """The snapshots of ``part`` (agent, games) answer their games, rows ``k ..`` of
        ``order``/``obs``/``masks`` in ``part``'s order, and the moves are played; returns the
        next row. ``incremental``: ``act_snapshots_incremental`` (stacked snapshots), else
        ``act_snapshots`` (every row's card features in one pass either way)."""
        if not part:
            return k
        j = k + sum(len(gs) for _, gs in part)
        batch = [(agent, [g.rng for g in gs]) for agent, gs in part]
        if incremental:
            seats = np.fromiter((g.idx * self.n + g.state.current for g in order[k:j]), np.int64, j - k)
            acts = act_snapshots_incremental(batch, obs[k:j], masks[k:j], self.pool, self._trunks, seats)
        else:
            acts = act_snapshots(batch, obs[k:j], masks[k:j])
        for g, a in zip(order[k:j], acts.tolist()):
            engine.apply(g.state, a)
        return j

    def _start(self, g: _Game) -> None:
        for _ in range(1000):
            self._deal(g)
            self._advance([g])
            if not g.state.hand_over:
                return
        raise RuntimeError("could not deal a hand in which the learner gets to move")

    def _write_obs(self) -> None:
        """Every game's learner observation and mask into ``obs`` and ``masks``."""
        states = [g.state for g in self.games]
        self.encoder.encode_many(states, [g.seat for g in self.games], self.obs)
        action_masks_into([engine.legal_actions(st) for st in states], self.masks)

    # ---------------------------------------------------------------- VecEnv API
    def reset_in_place(self) -> None:
        """``reset`` without the copy: the observations are in ``obs``, the masks in ``masks``."""
        seeds = self._seeds if any(s is not None for s in self._seeds) else [None] * self.num_envs
        base = np.random.SeedSequence(self._seed if seeds[0] is None else seeds[0])
        self._steps = 0
        if self.rotate_steps:
            self.pool.rotate(self._rotation_rng)
        for g, ss in zip(self.games, base.spawn(self.num_envs)):
            self._seed_game(g, ss)
            self._deal(g)
        self._advance(self.games)
        for g in self.games:
            if g.state.hand_over:
                self._start(g)
        self._reset_seeds()
        for g in self.games:
            g.phi = self._potential(g)
        self._write_obs()

    def reset(self) -> np.ndarray:
        """Deal every game from the seeds (``seed`` or SB3's ``VecEnv.seed``) and play the
        opponents up to the learner's first move: float32 ``[n_envs, obs_dim]`` (a copy).

        Raises:
            RuntimeError: no deal of a game reaches the learner before the hand ends.
        """
        self.reset_in_place()
        return self.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_in_place(self, actions: np.ndarray, rewards: np.ndarray, dones: np.ndarray) -> dict[int, dict[str, Any]]:
        """One learner action per game (int ``[n_envs]``), then the opponents' moves; the
        rewards (float32 ``[n_envs]``) and dones (``[n_envs]``) are written into the given
        arrays, the new observations and masks into ``obs`` and ``masks``. Returns the
        infos of the games whose hand ended, by game index (the others' are empty)."""
        for i, (g, a) in enumerate(zip(self.games, actions.tolist())):
            try:
                engine.apply(g.state, int(a))
            except ValueError as e:
                raise ValueError(f"game {i}: {e}") from None
            g.length += 1
        self._advance(self.games)
        rewards[:] = 0
        dones[:] = 0
        infos: dict[int, dict[str, Any]] = {}
        self._tick()
        for i, g in enumerate(self.games):
            if not g.state.hand_over:
                continue
            rewards[i], info = self._settle(g)
            if info is not None:
                infos[i] = info
                dones[i] = 1
                self._start(g)
        if self.shaping:
            self._shape(rewards, dones)
        self._write_obs()
        return infos

    def _potential(self, g: _Game) -> float:
        """``phi`` of the learner's position in ``g`` (``rewards.deadwood_potential``)."""
        return deadwood_potential(g.state, g.seat, self.shaping, self.reward_scale)

    def _shape(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Add the shaping term ``gamma * phi(s') - phi(s)`` to each game's reward (``s'``'s
        ``phi`` is 0 where the episode ended) and remember ``phi`` of each game's next
        observation (a new episode's first one where it ended)."""
        gamma = self.gamma
        for i, g in enumerate(self.games):
            new = self._potential(g)
            rewards[i] += (0.0 if dones[i] else gamma * new) - g.phi
            g.phi = new

    def _settle(self, g: _Game) -> tuple[float, dict[str, Any] | None]:
        """``g``'s hand is over: the learner's reward and, when the episode ends, its info
        (``_hand_end``; the caller deals the next episode). With a match reward and the
        match going on, the next hand is dealt and played up to the learner's move (a hand
        that ends before it adds its reward and is settled in turn): info None."""
        r, info = self._hand_end(g)
        while info is None:
            self._next_hand(g)
            if not g.state.hand_over:
                break
            more, info = self._hand_end(g)
            r += more
        return r, info

    def _tick(self) -> None:
        """Count a vector step; every ``rotate_steps`` of them the pool opens a new snapshot
        window (before the step's new deals)."""
        self._steps += 1
        if self.rotate_steps and self._steps % self.rotate_steps == 0:
            self.pool.rotate(self._rotation_rng)

    def restart_windows(self, seed: int) -> None:
        """Reseed the snapshot windows' generator as the constructor does for ``seed``."""
        self._rotation_rng = np.random.default_rng([seed, 0x524F54])

    def _hand_end(self, g: _Game) -> tuple[float, dict[str, Any] | None]:
        """The learner's reward for ``g``'s ended hand (``hand_rewards``, RULES.md §5) and
        the episode's info: ``terminal_observation`` (the learner's view of the ended hand,
        float32 ``[obs_dim]``), ``episode`` (``r``, ``l``), ``win``, ``points`` (the learner's
        payoff), ``opponent`` and ``outcome``. With a match reward the info is None
        while the match goes on; at its end (or its truncation after ``MAX_HANDS`` hands)
        the match's info (the class docstring)."""
        st = g.state
        pts = st.payoffs[g.seat]
        r = float(hand_rewards(st, self.reward, self.reward_scale)[g.seat])
        if self.reward not in MATCH_REWARDS:
            return r, {"terminal_observation": self.encoder.encode(st, g.seat),
                       "episode": {"r": r, "l": g.length}, "win": 1.0 if pts > 0 else 0.0, "points": pts,
                       "opponent": "+".join(g.kinds), "outcome": st.result["outcome"]}
        g.points += pts
        g.ret += r
        truncated = not st.match_over and st.hand_number + 1 >= MAX_HANDS
        if not st.match_over and not truncated:
            return r, None
        won = st.match_over and g.seat in st.match_winners and len(st.match_winners) == 1
        info = {"terminal_observation": self.encoder.encode(st, g.seat), "episode": {"r": g.ret, "l": g.length},
                "win": 1.0 if won else 0.0, "points": g.points, "opponent": "+".join(g.kinds),
                "outcome": st.result["outcome"], "hands": st.hand_number + 1}
        if truncated:
            info["TimeLimit.truncated"] = True
        return r, info

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """SB3's ``step_wait``: the actions given to ``step_async`` (``step_in_place``):
        observations float32 ``[n_envs, obs_dim]``, rewards float32 ``[n_envs]`` (the
        learner's hand reward at the end of a hand, else 0), dones bool ``[n_envs]``, and
        infos (see the class; empty while a hand goes on); copies.

        Raises:
            ValueError: an action illegal in its game (names the game and the action).
        """
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        done_infos = self.step_in_place(self._actions, rewards, dones)
        infos: list[dict[str, Any]] = [done_infos.get(i) or {} for i in range(self.num_envs)]
        return self.obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """Bool ``[n_envs, A]``: each game's legal actions for the learner (a copy)."""
        return self.masks.astype(bool)

    def close(self) -> None:
        pass

    _STATE = ("games", "pool", "_trunks", "_steps", "_rotation_rng", "_seed", "opponent_decisions", "opponent_time")

    def get_state(self) -> bytes:
        """Everything that decides this env's games from here on, pickled: every game's
        position, seat, opponents, generator and scripted copies, the pool (its snapshots
        and counters), the snapshots' trunk cache and the window schedule. ``set_state`` of
        it in another process (a resumed run) continues the very same games.

        Raises:
            ValueError: an opponent that cannot be pickled (an outside agent holding an open
                resource); the message names it.
        """
        try:
            return pickle.dumps({"rules": self.rules.to_json(), "n_envs": self.num_envs,
                                 **{k: getattr(self, k) for k in self._STATE}}, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise ValueError(f"the games cannot be saved for an exact resume: an opponent or a position does "
                             f"not pickle ({e})") from None

    def set_state(self, blob: bytes) -> None:
        """Continue the games saved by ``get_state`` (the observations and masks are written
        again from them).

        Raises:
            ValueError: the state is not a ``get_state`` blob of this env's rules and game
                count.
        """
        try:
            d = pickle.loads(blob)
            ok = isinstance(d, dict) and all(k in d for k in ("rules", "n_envs", *self._STATE))
        except Exception as e:  # noqa: BLE001 - any failure: not a state of this env
            raise ValueError(f"not a saved state of the self-play games ({type(e).__name__}: {e})") from None
        if not ok:
            raise ValueError("not a saved state of the self-play games (keys missing)")
        if d["rules"] != self.rules.to_json() or d["n_envs"] != self.num_envs:
            raise ValueError(f"the saved games are {d['n_envs']} games of rules {d['rules']!r}; this env has "
                             f"{self.num_envs} of {self.rules.to_json()!r}")
        for k in self._STATE:
            setattr(self, k, d[k])
        self._write_obs()

    def learner_seats(self) -> Sequence[int]:
        """The learner's seat (0..n-1) in each game, in game order."""
        return [g.seat for g in self.games]
