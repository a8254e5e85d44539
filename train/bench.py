"""``rummy bench``: the command (``env`` and ``agent`` from ``rummy_env.eval.bench``, ``train`` here),
and ``rummy bench train``: training throughput and where the time goes.

Runs the real trainer (``rummy_env.train.trainer.Trainer``, no warm start, no evaluations, no checkpoints)
for a fixed number of learner timesteps and reports:

- learner timesteps per second (wall clock, PPO updates included);
- the share of wall time in rollouts and in PPO updates;
- within rollouts, the time spent waiting for the env step (game logic, observation
  encoding and opponents' moves; with ``workers > 1`` this runs in the worker
  processes in parallel) and the rest (the learner's own policy inference, masks,
  SB3 buffers);
- the opponents' decisions and their CPU time (summed over workers).
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``rummy bench``: the ``env`` and ``train`` sub-modes."""
    from rummy_env.eval.bench import (AGENT_DESCRIPTION, AGENT_HELP, ENV_DESCRIPTION, ENV_HELP,
                                      add_agent_arguments, add_env_arguments)

    sub = parser.add_subparsers(dest="bench_mode", metavar="env|train|agent")
    sub.required = True
    add_env_arguments(sub.add_parser("env", help=ENV_HELP, description=ENV_DESCRIPTION))
    add_agent_arguments(sub.add_parser("agent", help=AGENT_HELP, description=AGENT_DESCRIPTION))
    add_train_arguments(sub.add_parser("train", help="training throughput (needs the train extra)",
                                       description="Training throughput of the real trainer and where the time goes."))


def main(args: argparse.Namespace) -> int:
    """Entry point of ``rummy bench``; returns the exit code."""
    if args.bench_mode == "train":
        return run(args)
    if args.bench_mode == "agent":
        from rummy_env.eval.bench import run_agent

        return run_agent(args)
    from rummy_env.eval.bench import run_env

    return run_env(args)


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``rummy bench train``."""
    p.add_argument("--timesteps", type=int, default=65_536, help="learner timesteps per run (default 65,536)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to compare (default 1 2)")
    p.add_argument("--n-envs", type=int, default=64, help="games per rollout (default 64)")
    p.add_argument("--rules", default="classic", help="rules preset (default classic)")
    p.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                   help="any other TrainConfig key (TOML value), e.g. --set net_arch=[128,128]")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the results as JSON")


def measure(workers: int, timesteps: int, n_envs: int, rules: str, extra: dict[str, Any]) -> dict[str, Any]:
    """Train for ``timesteps`` and return the timing breakdown (seconds and shares)."""
    from .config import TrainConfig
    from .trainer import Trainer

    with tempfile.TemporaryDirectory() as tmp:
        cfg = TrainConfig.from_dict({**dict(rules=rules, timesteps=timesteps, n_envs=n_envs, workers=workers,
                                            out=tmp, eval_every=0, checkpoint_every=10**12, progress=False,
                                            warmstart_decisions=0),
                                     **extra})
        t = Trainer(cfg, verbose=0)
        model, venv = t.model, t.venv
        timer = {"env": 0.0, "update": 0.0, "rollout": 0.0}

        def timed(name, fn):
            def wrapper(*a, **k):
                t0 = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    timer[name] += time.perf_counter() - t0
            return wrapper

        venv.step_wait = timed("env", venv.step_wait)
        model.train = timed("update", model.train)
        model.collect_rollouts = timed("rollout", model.collect_rollouts)
        t0 = time.perf_counter()
        model.learn(total_timesteps=timesteps)
        wall = time.perf_counter() - t0
        steps = model.num_timesteps
        opp_dec, opp_time = venv.opponent_decisions, venv.opponent_time
        venv.close()
    rollout = timer["rollout"]
    return {
        "workers": workers, "n_envs": n_envs, "timesteps": steps, "wall_s": wall,
        "timesteps_per_s": steps / wall,
        "rollout_share": rollout / wall, "update_share": timer["update"] / wall,
        "env_share_of_rollout": timer["env"] / rollout if rollout else 0.0,
        "policy_share_of_rollout": 1 - timer["env"] / rollout if rollout else 0.0,
        "opponent_decisions": opp_dec, "opponent_cpu_s": opp_time,
        "opponent_cpu_share_of_env": opp_time / (timer["env"] * max(1, workers)) if timer["env"] else 0.0,
        "config": {"net_arch": cfg.net_arch, "n_steps": cfg.n_steps, "batch_size": cfg.batch_size,
                   "n_epochs": cfg.n_epochs},
    }


def run(args: argparse.Namespace) -> int:
    """Entry point called by ``rummy bench train``."""
    from rummy_env.eval.bench import check_json_path

    from .config import tomllib

    check_json_path(args.json)
    if args.timesteps < 1:
        raise ValueError(f"--timesteps must be >= 1, got {args.timesteps}")
    extra: dict[str, Any] = {}
    for item in args.set:
        k, _, v = item.partition("=")
        try:
            extra[k.strip()] = tomllib.loads(f"v = {v}")["v"]
        except tomllib.TOMLDecodeError:
            extra[k.strip()] = v
    rows = []
    for w in args.workers:
        print(f"training {args.timesteps:,} timesteps with {w} worker(s) ...", flush=True)
        rows.append(measure(w, args.timesteps, args.n_envs, args.rules, extra))
    head = ("workers", "timesteps/s", "rollout", "update", "env in rollout", "policy in rollout",
            "opponent CPU in env")
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for r in rows:
        print(f"| {r['workers']} | {r['timesteps_per_s']:,.0f} | {r['rollout_share']:.0%} | {r['update_share']:.0%} | "
              f"{r['env_share_of_rollout']:.0%} | {r['policy_share_of_rollout']:.0%} | "
              f"{r['opponent_cpu_share_of_env']:.0%} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0
