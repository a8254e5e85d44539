"""Self-play games spread over worker processes, so rollouts use every core.

Each worker process owns a ``SelfPlayVecEnv`` with its share of the games, its own
copy of the opponent pool (snapshots are sent to it as weights) and its own scripted
baselines. The learner process only runs the policy and the PPO update.
"""
from __future__ import annotations

import cProfile
import multiprocessing as mp
import pstats
import time
from typing import Any

import gymnasium as gym
import numpy as np

from rummy_env.actions import num_actions, table_kind
from rummy_env.observation import obs_size
from rummy_env.rules import Rules

from .vec_env import BatchedVecEnv


def make_pool(weights: dict[str, float], max_snapshots: int, latest_prob: float, seed: int):
    """An ``OpponentPool`` with the scripted baselines (seeded) it needs."""
    from rummy_env.agents import BASELINES, make_agent

    from .pool import OpponentPool

    baselines = {k: make_agent(k, seed=seed + i) for i, k in enumerate(BASELINES)
                 if weights.get(k, 0) > 0}
    return OpponentPool(weights, max_snapshots, latest_prob, baselines)


def _worker(conn, rules_json: Any, n_envs: int, seed: int, reward_scale: float, pool_args: tuple,
            reward: str = "points") -> None:
    import torch

    torch.set_num_threads(1)
    from .pool import ActorNet
    from .vec_env import SelfPlayVecEnv

    pool = make_pool(*pool_args, seed=seed)
    venv = SelfPlayVecEnv(Rules.from_json(rules_json), pool, n_envs, seed=seed, reward_scale=reward_scale,
                          reward=reward)
    prof, busy = None, 0.0  # ``rummy bench train --profile``: cProfile of the env work, its seconds
    try:
        while True:
            cmd, data = conn.recv()
            if cmd in ("reset", "step") and prof is not None:
                t0 = time.perf_counter()
                prof.enable()
            if cmd == "reset":
                obs = venv.reset()
                reply = (obs, venv.action_masks())
            elif cmd == "step":
                obs, rew, done, infos = venv.step(data)
                reply = (obs, rew, done, infos, venv.action_masks(), venv.opponent_time, venv.opponent_decisions)
            if cmd in ("reset", "step"):
                if prof is not None:
                    prof.disable()
                    busy += time.perf_counter() - t0
                conn.send(reply)
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
    bool ``[n_envs, num_actions(rules)]``)."""

    def __init__(self, rules: Rules, n_envs: int, workers: int, seed: int, reward_scale: float,
                 weights: dict[str, float], max_snapshots: int, latest_prob: float,
                 reward: str = "points") -> None:
        n = rules.num_players
        super().__init__(n_envs, gym.spaces.Box(0.0, np.inf, shape=(obs_size(n, table_kind(rules)),),
                                                dtype=np.float32),
                         gym.spaces.Discrete(num_actions(rules)))
        self.per = n_envs // workers
        ctx = mp.get_context("spawn")
        seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(workers)]
        self.conns, self.procs = [], []
        for w in range(workers):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, daemon=True,
                            args=(child, rules.to_json(), self.per, seeds[w], reward_scale,
                                  (weights, max_snapshots, latest_prob), reward))
            p.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(p)
        self._masks = np.zeros((n_envs, num_actions(rules)), dtype=bool)
        self.opponent_time = 0.0
        self.opponent_decisions = 0
        self._opp = [(0.0, 0)] * workers
        self._closed = False

    def add_snapshot(self, net: Any, step: int) -> None:
        """Send a frozen ``ActorNet`` to every worker's pool."""
        for c in self.conns:
            c.send(("add_snapshot", (net.spec, net.state_dict(), step)))

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
        for c in self.conns:
            c.send(("reset", None))
        res = [c.recv() for c in self.conns]
        self._masks = np.concatenate([r[1] for r in res])
        return np.concatenate([r[0] for r in res])

    def step_async(self, actions: np.ndarray) -> None:
        actions = np.asarray(actions)
        for w, c in enumerate(self.conns):
            c.send(("step", actions[w * self.per:(w + 1) * self.per]))

    def step_wait(self):
        res = [c.recv() for c in self.conns]
        obs = np.concatenate([r[0] for r in res])
        rew = np.concatenate([r[1] for r in res])
        done = np.concatenate([r[2] for r in res])
        infos = [i for r in res for i in r[3]]
        self._masks = np.concatenate([r[4] for r in res])
        self._opp = [(r[5], r[6]) for r in res]
        self.opponent_time = sum(t for t, _ in self._opp)
        self.opponent_decisions = sum(d for _, d in self._opp)
        return obs, rew, done, infos

    def action_masks(self) -> np.ndarray:
        return self._masks.copy()

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
