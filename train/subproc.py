"""Self-play games spread over worker processes, so rollouts use every core.

Each worker process owns a ``SelfPlayVecEnv`` with its share of the games, its own
copy of the opponent pool (snapshots are sent to it as weights) and its own scripted
baselines. The learner process only runs the policy and the PPO update.

The arrays of a step live in one block of shared memory (``SharedBatch``: the
observations float32 ``[n_envs, obs_dim]``, the masks int8 ``[n_envs, A]``, the
rewards, the dones and the actions), allocated by the learner before the workers
start; each worker's env writes its rows in place (``Encoder.encode_many`` straight
into the shared observations), so a step's pipe messages carry only the command and
the infos of the hands that ended, never the observations or masks.

Torch threads on 2 cores: each worker runs its snapshots' forward passes on one
thread (``torch.set_num_threads(1)``, set before anything else in the worker); the
learner runs its rollout forward passes on one thread while the workers step and
its PPO update on ``torch_threads`` (``SelfPlayPPO``), when the workers are idle. On
Linux the workers run as batch jobs (``batch_scheduling``), so waking one does not
preempt the learner.
"""
from __future__ import annotations

import cProfile
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import pstats
import time
from typing import Any

import gymnasium as gym
import numpy as np

from rummy_env.table import Table
from rummy_env.rules import Rules

from .vec_env import BatchedVecEnv


class SharedAgent:
    """An agent every game of a batch shares (``copy.deepcopy`` returns it): a frozen
    policy that acts greedily keeps no per-game state, and some (an onnxruntime
    session) cannot be copied."""

    def __init__(self, agent: Any, name: str) -> None:
        self.agent = agent
        self.name = name

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.agent.act(observation, action_mask)

    def seed(self, seed: int | None) -> None:  # noqa: ARG002 - shared: never reseeded per game
        return None

    def __deepcopy__(self, memo: dict) -> "SharedAgent":
        return self


def make_pool(weights: dict[str, float], max_snapshots: int, latest_prob: float, fixed: str = "",
              *, seed: int, stack: bool = True):
    """An ``OpponentPool`` with the scripted baselines (seeded) it needs, and the agent
    ``fixed`` (a ``make_agent`` spec, ``TrainConfig.fixed_opponent``) as the kind "fixed";
    ``stack``: its snapshots stacked (``OpponentPool``; float32, as every training pool)."""
    from rummy_env.agents import BASELINES, make_agent

    from .pool import OpponentPool

    baselines = {k: make_agent(k, seed=seed + i) for i, k in enumerate(BASELINES)
                 if weights.get(k, 0) > 0}
    if weights.get("fixed", 0) > 0:
        baselines["fixed"] = fixed_agent(make_agent(fixed, seed=seed + len(BASELINES)), fixed)
    return OpponentPool(weights, max_snapshots, latest_prob, baselines, stack=stack)


def fixed_agent(agent: Any, name: str) -> Any:
    """The pool's "fixed" opponent for ``agent`` (``make_agent(name)``): a trained policy
    (``PPOAgent``: ``pretrained``, ``pretrained:PRESET``, ``ppo:PATH``) becomes a greedy
    ``SnapshotAgent`` of its actor (``ActorNet.from_policy``), so the batched env answers
    all its games in one forward pass per round as it does the snapshots (it played one
    game at a time before: a best response against the plan policy took over an hour);
    its actions are ``agent.act``'s, the most probable legal action. Any other agent (a
    scripted one, the search, an ONNX policy, an outside ``MODULE:ATTR``) is shared by
    every game as it is (``SharedAgent``)."""
    from rummy_env.agents.ppo_agent import PPOAgent

    if isinstance(agent, PPOAgent):
        from .pool import ActorNet, SnapshotAgent

        return SnapshotAgent(ActorNet.from_policy(agent.policy), name=name, greedy=True)
    return SharedAgent(agent, name)


class SharedBatch:
    """The arrays of a batch of ``n_envs`` games over one shared buffer (a
    ``multiprocessing`` ``RawArray`` of the spawn context, handed to the workers when
    they start): ``obs`` float32 ``[n_envs, obs_dim]``, ``masks`` int8 ``[n_envs, A]``,
    ``rewards`` float32 ``[n_envs]``, ``dones`` uint8 ``[n_envs]``, ``actions`` int64
    ``[n_envs]``. ``SharedBatch(n_envs, obs_dim, n_actions, raw)`` in a worker gives
    views of the same memory."""

    FIELDS = ("obs", "masks", "rewards", "dones", "actions")

    def __init__(self, n_envs: int, obs_dim: int, n_actions: int, raw: Any = None, ctx: Any = None) -> None:
        specs = [("obs", np.float32, (n_envs, obs_dim)), ("masks", np.int8, (n_envs, n_actions)),
                 ("rewards", np.float32, (n_envs,)), ("dones", np.uint8, (n_envs,)),
                 ("actions", np.int64, (n_envs,))]
        offsets, off = [], 0
        for _, dt, shape in specs:
            offsets.append(off)
            off += -(-int(np.prod(shape)) * np.dtype(dt).itemsize // 8) * 8  # 8-byte aligned
        self.nbytes = off
        self.args = (n_envs, obs_dim, n_actions)
        self.raw = raw if raw is not None else (ctx or mp).RawArray("b", off)
        buf = np.frombuffer(self.raw, dtype=np.uint8)
        for (name, dt, shape), o in zip(specs, offsets):
            size = int(np.prod(shape)) * np.dtype(dt).itemsize
            setattr(self, name, buf[o:o + size].view(dt).reshape(shape))


def batch_scheduling() -> bool:
    """Ask Linux to schedule this process as a batch job (``SCHED_BATCH``, which needs no
    privilege): a worker woken by the learner's message then does not preempt the learner
    at once, so on a machine with fewer cores than processes the learner, on the rollout's
    critical path, is not pushed off its core each time it sends a worker its actions
    (issue 26: a real run +2-3%). Returns whether it took effect (False where the OS has
    no such policy)."""
    import os

    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError):
        return False
    return True


def _worker(conn, rules_json: Any, n_envs: int, seed: int, reward_scale: float, pool_args: tuple,
            reward: str = "points", shared: tuple | None = None, rotate_steps: int = 0,
            shaping: tuple[float, float] = (0.0, 1.0)) -> None:
    import signal

    import torch

    # Ctrl-C (and a SIGTERM sent to the process group, as `timeout` and job schedulers do)
    # reaches every process of the group: the learner finishes its rollout and writes an
    # exact checkpoint (Trainer.learn), so the games must go on meanwhile; a worker whose
    # learner is gone ends when its pipe closes (EOFError below)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    torch.set_num_threads(1)
    batch_scheduling()
    from .pool import ActorNet
    from .vec_env import SelfPlayVecEnv

    raw, args, lo = shared
    batch = SharedBatch(*args, raw=raw)
    hi = lo + n_envs
    obs, masks, rew, done, acts = (batch.obs[lo:hi], batch.masks[lo:hi], batch.rewards[lo:hi],
                                   batch.dones[lo:hi], batch.actions[lo:hi])
    pool = make_pool(*pool_args, seed=seed)
    venv = SelfPlayVecEnv(Rules.from_json(rules_json), pool, n_envs, seed=seed, reward_scale=reward_scale,
                          reward=reward, obs_out=obs, mask_out=masks, rotate_steps=rotate_steps,
                          shaping=shaping[0], gamma=shaping[1])
    prof, busy = None, 0.0  # ``rummy bench train --profile``: cProfile of the env work, its seconds
    try:
        while True:
            cmd, data = conn.recv()
            if cmd in ("reset", "step") and prof is not None:
                t0 = time.perf_counter()
                prof.enable()
            if cmd == "reset":
                venv.reset_in_place()
                reply = None
            elif cmd == "step":
                try:
                    infos = venv.step_in_place(acts.copy(), rew, done)
                    reply = (infos, venv.opponent_time, venv.opponent_decisions)
                except ValueError as e:
                    reply = e
            if cmd in ("reset", "step"):
                if prof is not None:
                    prof.disable()
                    busy += time.perf_counter() - t0
                conn.send(reply)
            elif cmd == "get_state":
                try:
                    conn.send(venv.get_state())
                except ValueError as e:
                    conn.send(e)
            elif cmd == "set_state":
                try:
                    venv.set_state(data)
                    conn.send(None)
                except ValueError as e:
                    conn.send(e)
            elif cmd == "profile":
                prof, busy = cProfile.Profile(), 0.0
            elif cmd == "profile_stats":
                stats = pstats.Stats(prof).stats if prof is not None else {}
                conn.send((stats, busy))
                prof = None
            elif cmd == "add_snapshot":
                spec, sd, step = data
                net = ActorNet(**spec)
                net.load_state_dict(sd)
                pool.add_net(net, step)
            elif cmd == "close":
                break
    except (KeyboardInterrupt, EOFError):
        pass
    finally:
        conn.close()


class MultiProcSelfPlayVecEnv(BatchedVecEnv):
    """``n_envs`` self-play games over ``workers`` processes (same interface as
    ``SelfPlayVecEnv``: observations float32 ``[n_envs, obs_dim]``, ``action_masks()``
    bool ``[n_envs, A]``, ``A = Table.of(rules).num_actions``), the step's arrays in shared memory (``SharedBatch``). Worker
    ``w`` plays games ``w * per .. (w + 1) * per - 1`` with the seed
    ``SeedSequence(seed).spawn(workers)[w]``, so the results are those of
    ``SelfPlayVecEnv``s of ``per`` games with those seeds, side by side. The
    workers' snapshots run in float32, stacked (``act_snapshots_incremental``). ``rotate_steps``: each worker's pool windows
    (``SelfPlayVecEnv``'s, with the worker's seed).

    Raises:
        ValueError: an action that is illegal in its game (names the game and action).
    """

    def __init__(self, rules: Rules, n_envs: int, workers: int, seed: int, reward_scale: float,
                 weights: dict[str, float], max_snapshots: int, latest_prob: float,
                 reward: str = "points", fixed: str = "", rotate_steps: int = 0, shaping: float = 0.0,
                 gamma: float = 1.0) -> None:
        table = Table.of(rules)
        n_act, dim = table.num_actions, table.obs_size
        super().__init__(n_envs, gym.spaces.Box(table.obs_low, np.inf, shape=(dim,), dtype=np.float32),
                         gym.spaces.Discrete(n_act))
        self.per = n_envs // workers
        ctx = mp.get_context("spawn")
        self.shared = SharedBatch(n_envs, dim, n_act, ctx=ctx)
        seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(workers)]
        self.worker_seeds = seeds
        self.conns, self.procs = [], []
        for w in range(workers):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, daemon=True,
                            args=(child, rules.to_json(), self.per, seeds[w], reward_scale,
                                  (weights, max_snapshots, latest_prob, fixed), reward,
                                  (self.shared.raw, self.shared.args, w * self.per), rotate_steps,
                                  (shaping, gamma)))
            p.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(p)
        self.opponent_time = 0.0
        self.opponent_decisions = 0
        self._opp = [(0.0, 0)] * workers
        self._closed = False

    def add_snapshot(self, net: Any, step: int) -> None:
        """Send a frozen ``ActorNet`` to every worker's pool."""
        for c in self.conns:
            c.send(("add_snapshot", (net.spec, net.state_dict(), step)))

    def get_state(self) -> list[bytes]:
        """Each worker's ``SelfPlayVecEnv.get_state`` (its games, pool and generators), in
        worker order; call it between steps.

        Raises:
            ValueError: a worker's games cannot be pickled (its message).
        """
        for c in self.conns:
            c.send(("get_state", None))
        states = [c.recv() for c in self.conns]
        for s in states:
            if isinstance(s, ValueError):
                raise s
        return states

    def set_state(self, states: list[bytes]) -> None:
        """Give each worker its saved games back (``get_state``'s list) and read the
        observations and masks they write.

        Raises:
            ValueError: another number of workers than saved, or a worker's refusal (other
                rules or game count).
        """
        if not isinstance(states, list) or len(states) != len(self.conns):
            n = len(states) if isinstance(states, list) else "no"
            raise ValueError(f"the saved games are of {n} worker(s), this run has {len(self.conns)}: resume with the "
                             f"same workers and n_envs")
        for c, s in zip(self.conns, states):
            c.send(("set_state", s))
        errors = [e for e in (c.recv() for c in self.conns) if e is not None]
        if errors:
            raise errors[0]

    def start_profile(self) -> None:
        """Start a cProfile in every worker, of its env work only (reset and step)."""
        for c in self.conns:
            c.send(("profile", None))

    def profile_stats(self) -> list[tuple[dict, float]]:
        """Per worker: the ``pstats.Stats(...).stats`` dict of its profile since
        ``start_profile`` and its busy seconds (time from a request's arrival to its reply,
        pickling excluded); stops the profiles."""
        for c in self.conns:
            c.send(("profile_stats", None))
        return [c.recv() for c in self.conns]

    def reset(self) -> np.ndarray:
        """Every worker deals its games and plays to the learner's first move:
        float32 ``[n_envs, obs_dim]`` (a copy of the shared block)."""
        for c in self.conns:
            c.send(("reset", None))
        for c in self.conns:
            c.recv()
        return self.shared.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self.shared.actions[:] = np.asarray(actions).reshape(self.num_envs)
        for c in self.conns:
            c.send(("step", None))

    def step_part_async(self, w: int, actions: np.ndarray) -> None:
        """Send worker ``w`` its games' actions (int ``[per]``, for games ``w * per ..``) and
        let it step them while the others wait or step: the pipelined rollout
        (``SelfPlayPPO``) overlaps the learner's forward pass of one worker's games with
        the other workers' stepping.

        Raises:
            ValueError: ``w`` is not a worker index or ``actions`` is not ``per`` actions."""
        if not 0 <= w < len(self.conns):
            raise ValueError(f"worker must be in 0..{len(self.conns) - 1}, got {w!r}")
        actions = np.asarray(actions).reshape(-1)
        if actions.shape != (self.per,):
            raise ValueError(f"worker {w} plays {self.per} games: give {self.per} actions, got {actions.shape[0]}")
        self.shared.actions[w * self.per:(w + 1) * self.per] = actions
        self.conns[w].send(("step", None))

    def step_part_wait(self, w: int) -> dict[int, dict[str, Any]]:
        """Wait for worker ``w``'s step (``step_part_async``): its games' observations,
        masks, rewards and dones are then in ``shared``'s rows ``w * per .. (w + 1) * per - 1``;
        returns the infos of its hands that ended, by the batch's game index.

        Raises:
            ValueError: an action illegal in its game (names the worker and its games)."""
        r = self.conns[w].recv()
        if isinstance(r, ValueError):
            raise ValueError(f"worker {w} (games {w * self.per}..{(w + 1) * self.per - 1}): {r}")
        self._opp[w] = (r[1], r[2])
        self.opponent_time = sum(t for t, _ in self._opp)
        self.opponent_decisions = sum(d for _, d in self._opp)
        return {w * self.per + i: info for i, info in r[0].items()}

    def ready_workers(self, workers: list[int]) -> list[int]:
        """Of ``workers`` (indices with a step in flight, ``step_part_async``), those whose
        step has finished, in index order; blocks until at least one has. Their
        ``step_part_wait`` then returns at once."""
        ready = set(mp_connection.wait([self.conns[w] for w in workers]))
        return [w for w in workers if self.conns[w] in ready]

    @property
    def num_workers(self) -> int:
        """The worker processes (each plays ``per`` games)."""
        return len(self.conns)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """SB3's ``step_wait`` over the workers (``SelfPlayVecEnv.step_wait``'s arrays and
        infos, the workers' games side by side; copies of the shared block).

        Raises:
            ValueError: an action illegal in its game: the worker's error, naming the
                worker and its range of games.
        """
        res = [c.recv() for c in self.conns]
        for w, r in enumerate(res):
            if isinstance(r, ValueError):  # the worker's game numbers are its own: name the batch's
                raise ValueError(f"worker {w} (games {w * self.per}..{(w + 1) * self.per - 1}): {r}")
        sh = self.shared
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for w, r in enumerate(res):
            for i, info in r[0].items():
                infos[w * self.per + i] = info
        self._opp = [(r[1], r[2]) for r in res]
        self.opponent_time = sum(t for t, _ in self._opp)
        self.opponent_decisions = sum(d for _, d in self._opp)
        return sh.obs.copy(), sh.rewards.copy(), sh.dones.astype(bool), infos

    def action_masks(self) -> np.ndarray:
        """Bool ``[n_envs, A]``: each game's legal actions for the learner (a copy)."""
        return self.shared.masks.astype(bool)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for c in self.conns:
            try:
                c.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
