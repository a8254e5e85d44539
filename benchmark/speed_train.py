"""``rummy bench``: the command (``env`` and ``agent`` from ``rummy_env.benchmark.speed``, ``train`` here),
and ``rummy bench train``: training throughput and where the time goes. Both live in the
benchmark package (issue 24: one home for ``rummy bench``, beside ``rummy benchmark``),
which may import every layer before it.

Runs the real trainer (``rummy_env.train.trainer.Trainer``, no warm start, no evaluations, no checkpoints)
for a fixed number of learner timesteps and reports:

- learner timesteps per second (wall clock, PPO updates included);
- the share of wall time in rollouts and in PPO updates;
- within rollouts, the time spent waiting for the env step (game logic, observation
  encoding and opponents' moves; with ``workers > 1`` this runs in the worker
  processes in parallel) and the rest (the learner's own policy inference, masks,
  SB3 buffers);
- the opponents' decisions and their CPU time (summed over workers).

``--snapshots`` trains as a real run does (snapshots of the policy in the opponent pool
from step 0, evaluations off): the throughput of a real run, unprofiled.

``--full-pool`` starts that pool full (``max_snapshots`` distinct snapshots), as a long
run's pool is once it has grown: the throughput of a long real run, not of its first
steps.

``--profile`` instead runs the trainer as a real run does (snapshot and scripted
opponents, evaluations; ``profile_run``) under cProfile and reports where the wall time
goes, by ``PROFILE_GROUPS``.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``rummy bench``: the ``env`` and ``train`` sub-modes."""
    from rummy_env.benchmark.speed import (AGENT_DESCRIPTION, AGENT_HELP, ENV_DESCRIPTION, ENV_HELP,
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
        from rummy_env.benchmark.speed import run_agent

        return run_agent(args)
    from rummy_env.benchmark.speed import run_env

    return run_env(args)


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``rummy bench train``."""
    p.add_argument("--timesteps", type=int, default=65_536, help="learner timesteps per run (default 65,536)")
    p.add_argument("--workers", type=int, nargs="+", default=None,
                   help="worker counts to compare: SB3 worker processes, RLlib env runners (default 1 2)")
    p.add_argument("--backend", nargs="+", choices=("sb3", "rllib"), default=["sb3"],
                   help="training backend(s) to measure, in this order (default sb3; rllib needs the rllib extra). "
                        "Both: the same network and config, one after the other, and RLlib's rate as a share of "
                        "SB3's at the best worker count of each")
    p.add_argument("--n-envs", type=int, default=None,
                   help="games stepped at once (default: rummy train's, TrainConfig.n_envs: 256)")
    p.add_argument("--rules", default="classic", help="rules preset (default classic)")
    p.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                   help="any other TrainConfig key (TOML value), e.g. --set net_arch=[128,128]")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the results as JSON")
    p.add_argument("--snapshots", action="store_true",
                   help="train as a real run does (the opponent pool with snapshots of the policy from step 0; "
                        "no evaluations): the learner timesteps/s of a real run, without the profiler")
    p.add_argument("--full-pool", action="store_true",
                   help="as --snapshots, with the pool full from the start (max_snapshots distinct snapshots, "
                        "as a long run's pool is): the learner timesteps/s of a long real run")
    p.add_argument("--profile", action="store_true",
                   help="run a real run (snapshot and scripted opponents, evaluations: eval_every defaults to "
                        "half the timesteps) under cProfile, per worker count, and report the share of wall "
                        "time of each part (engine, observation, inference, PPO update, ...); with --full-pool "
                        "the pool starts full")


PROFILE_GROUPS = {
    "engine": "rules engine: rummy_env/engine.py, melds.py, cards.py (called by the env)",
    "observation": "observation encoding and action masks (rummy_env/observation.py)",
    "learner_inference": "the learner's policy forward pass during rollouts (FastMaskablePolicy.forward, "
                         "with_card_features, sampling_uniforms, predict_values)",
    "opponent_inference": "snapshot opponents' forward passes (pool.act_snapshots_incremental, pool.act_snapshots, "
                          "SnapshotAgent.act_batch)",
    "scripted": "scripted opponents (agents/scripted.py, the random agent)",
    "ppo_update": "the PPO update (model.train)",
    "evaluation": "evaluations inside the run (Trainer.evaluate)",
    "transfer": "inter-process transfer: the learner's wait in step_wait/step_part_wait/ready_workers/reset minus the workers' own busy time "
                "(pipes, pickling, scheduling; 0 with one worker)",
    "other": "everything else: SB3's rollout buffer and callbacks, snapshots, tensors, numpy glue",
}
"""The groups of ``profile_run``, in report order, with what each counts."""


def _file_is(key: tuple, *suffixes: str) -> bool:
    return key[0].replace("\\", "/").endswith(suffixes)


def _scripted(key: tuple) -> bool:
    return _file_is(key, "agents/scripted.py") or (_file_is(key, "rummy_env/observation.py") and key[2] == "act")


def _observation(key: tuple) -> bool:
    return _file_is(key, "rummy_env/observation.py") and not _scripted(key)


def _engine(key: tuple) -> bool:
    return _file_is(key, "rummy_env/engine.py", "rummy_env/melds.py", "rummy_env/cards.py")


def _entered(stats: dict, inside, outside_of) -> float:
    """Inclusive seconds spent in functions satisfying ``inside`` when called from a
    function satisfying neither ``inside`` nor ``outside_of`` (cProfile's per-caller
    cumulative times; calls from within the set, or from a group counted already, are
    not counted again)."""
    total = 0.0
    for key, (_cc, _nc, _tt, _ct, callers) in stats.items():
        if inside(key):
            total += sum(edge[3] for caller, edge in callers.items()
                         if not inside(caller) and not outside_of(caller))
    return total


def _cum(stats: dict, pred) -> float:
    return sum(v[3] for k, v in stats.items() if pred(k))


def env_groups(stats: dict) -> dict[str, float]:
    """Seconds of the env-side groups (engine, observation, scripted, opponent inference)
    of a ``pstats.Stats(...).stats`` dict; each counted once, a group's calls into
    another (a scripted agent reading the observation, the encoder asking the engine)
    staying with the caller."""
    scripted = _entered(stats, _scripted, lambda k: False)
    # the batched env's snapshots answer through act_snapshots_incremental and act_snapshots
    # (neither calls the other, nor act_batch)
    opponent = _cum(stats, lambda k: _file_is(k, "train/pool.py")
                    and k[2] in ("act_batch", "act_snapshots", "act_snapshots_incremental"))
    obs = _entered(stats, _observation, _scripted)
    engine = _entered(stats, _engine, lambda k: _observation(k) or _scripted(k))
    return {"engine": engine, "observation": obs, "opponent_inference": opponent, "scripted": scripted}


def profile_run(workers: int, timesteps: int, n_envs: int, rules: str, extra: dict[str, Any],
                top: int = 0, full_pool: bool = False) -> dict[str, Any]:
    """Train for ``timesteps`` as a real run does (the config's opponent pool, snapshots
    from step 0, evaluations at step 0 (the learning curve's first point) and every
    ``eval_every`` steps: default half of ``timesteps``; no warm start, no checkpoints) under cProfile and return where the wall time went.
    ``full_pool``: the pool starts full, as for ``measure`` (a long real run's steady state).

    The clock starts once the workers are up (their start-up, about a second once per
    run, is not profiled). The learner process is profiled except during ``model.train`` and
    ``Trainer.evaluate``, which are timed by the clock (``ppo_update``, ``evaluation``).
    With ``workers > 1`` each worker profiles its own env work; the learner's wait in
    ``step_wait``/``step_part_wait``/``ready_workers``/``reset`` is split into the workers' busy time (the busiest worker's,
    divided among the groups in the proportions of all workers' profiles) and
    ``transfer`` (the rest).

    Returns ``{"workers", "timesteps", "wall_s", "timesteps_per_s", "seconds": {group: s},
    "shares": {group: share of wall}, "accounted": sum of shares, "worker_busy_s": [...],
    "other_in_workers_s": the part of ``other`` on the workers' critical path (0 without workers),
    "full_pool", "pool_size": snapshots in the pool at the end, "top": [(function, self seconds), ...]}`` (groups: ``PROFILE_GROUPS``).
    """
    import cProfile
    import pstats

    from rummy_env.train.config import TrainConfig
    from rummy_env.train.trainer import SelfPlayCallback, Trainer

    extra = dict(extra)
    extra.setdefault("eval_every", max(1, timesteps // 2))
    with tempfile.TemporaryDirectory() as tmp:
        cfg = TrainConfig.from_dict({**dict(rules=rules, timesteps=timesteps, n_envs=n_envs, workers=workers,
                                            out=tmp, checkpoint_every=10**12, progress=False,
                                            warmstart_decisions=0), **extra})
        t = Trainer(cfg, verbose=0)
        model, venv = t.model, t.venv
        if full_pool:
            _fill_pool(t, cfg)
        prof = cProfile.Profile()
        clock = {"ppo_update": 0.0, "evaluation": 0.0}

        def unprofiled(name, fn):
            def wrapper(*a, **k):
                prof.disable()
                t0 = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    clock[name] += time.perf_counter() - t0
                    prof.enable()
            return wrapper

        # a subclass, not an instance attribute: Trainer.evaluate saves the model (SB3
        # pickles instance attributes, and the profiler cannot be pickled)
        model.__class__ = type(f"Profiled{type(model).__name__}", (type(model),),
                               {"train": unprofiled("ppo_update", type(model).train)})
        t.evaluate = unprofiled("evaluation", t.evaluate)
        multi = hasattr(venv, "start_profile")
        if multi:
            # the workers' start-up (spawning, imports: about a second, once per run) before the
            # clock: the profile is of the run's steady state, which a real run spends its time in
            venv.reset()
            venv.start_profile()
        t0 = time.perf_counter()
        prof.enable()
        try:
            model.learn(total_timesteps=timesteps, callback=SelfPlayCallback(t))
        finally:
            prof.disable()
        wall = time.perf_counter() - t0
        steps = model.num_timesteps
        worker_stats = venv.profile_stats() if multi else []
        venv.close()
    stats = pstats.Stats(prof).stats
    profiled = sum(v[2] for v in stats.values())
    sec = {g: 0.0 for g in PROFILE_GROUPS}
    sec["learner_inference"] = _cum(stats, lambda k: (_file_is(k, "train/policy.py")
                                                      and k[2] in ("forward", "with_card_features",
                                                                   "sampling_uniforms"))
                                    or (_file_is(k, "stable_baselines3/common/policies.py")
                                        and k[2] == "predict_values"))
    sec.update(clock)
    busy = [b for _, b in worker_stats]
    if multi:
        waited = _cum(stats, lambda k: _file_is(k, "train/subproc.py") and k[2] in ("step_wait", "step_part_wait", "reset", "ready_workers"))
        crit = min(max(busy, default=0.0), waited)
        per_worker = [env_groups(s) for s, _ in worker_stats]
        tot = {g: sum(p[g] for p in per_worker) for g in per_worker[0]} if per_worker else {}
        all_busy = sum(busy)
        for g, v in tot.items():  # the critical path, in the proportions of the workers' busy time
            sec[g] = crit * v / all_busy if all_busy else 0.0
        # whatever the workers did outside the four groups (SelfPlayVecEnv's own loops)
        other_in_workers = crit - sum(sec[g] for g in tot)
        sec["other"] += other_in_workers
        sec["transfer"] = waited - crit
        in_learner = sec["learner_inference"] + waited
    else:
        other_in_workers = 0.0
        sec.update(env_groups(stats))
        in_learner = sum(sec[g] for g in ("learner_inference", "engine", "observation", "opponent_inference",
                                          "scripted"))
    sec["other"] += profiled - in_learner
    shares = {g: v / wall for g, v in sec.items()}
    result = {"workers": workers, "n_envs": n_envs, "timesteps": steps, "wall_s": wall,
              "timesteps_per_s": steps / wall, "seconds": sec, "shares": shares,
              "accounted": sum(shares.values()), "worker_busy_s": busy,
              "evaluations": len(t.state["eval_history"]),
              "other_in_workers_s": other_in_workers, "full_pool": full_pool, "pool_size": len(t.pool.snapshots)}
    if top:
        ranked = sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]
        result["top"] = [(f"{Path(k[0]).name}:{k[1]}({k[2]})", v[2]) for k, v in ranked]
    return result


def print_profile(rows: list[dict[str, Any]]) -> None:
    """The ``--profile`` table: one column per worker count, one row per group (share of wall time)."""
    head = ["part of wall time"] + [f"{r['workers']} worker(s)" for r in rows]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for g in PROFILE_GROUPS:
        print(f"| {g} | " + " | ".join(f"{r['shares'][g]:.1%}" for r in rows) + " |")
    print("| (sum) | " + " | ".join(f"{r['accounted']:.1%}" for r in rows) + " |")
    print("| learner timesteps/s | " + " | ".join(f"{r['timesteps_per_s']:,.0f}" for r in rows) + " |")
    print("| evaluations | " + " | ".join(str(r["evaluations"]) for r in rows) + " |")
    for g, what in PROFILE_GROUPS.items():
        print(f"- {g}: {what}")
    print("(cProfile slows Python code more than torch's: the shares are of a profiled run)")


def _timed(timer: dict[str, float], name: str, fn: Any) -> Any:
    """``fn`` wrapped so that every call adds its wall seconds to ``timer[name]``."""
    def wrapper(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            timer[name] += time.perf_counter() - t0
    return wrapper


def _fill_pool(t: Any, cfg: Any) -> None:
    """The steady state of a long run: every snapshot slot of ``t``'s (a ``Trainer``) pool
    taken, each by its own net (a copy of the policy's)."""
    from rummy_env.train.pool import ActorNet

    for _ in range(cfg.max_snapshots):
        t._add_snapshot_net(ActorNet.from_policy(t.model.policy), 0)


def measure(workers: int, timesteps: int, n_envs: int, rules: str, extra: dict[str, Any],
            snapshots: bool = False, full_pool: bool = False) -> dict[str, Any]:
    """Train for ``timesteps`` and return the timing breakdown (seconds and shares).

    ``snapshots``: with the run's callback (``SelfPlayCallback``), so snapshots of the
    policy join the opponent pool from step 0 as in a real run (evaluations stay off);
    without it the opponents are the scripted baselines only. ``full_pool``: the pool
    starts full, ``max_snapshots`` distinct snapshots (each its own network, answered by
    its own forward pass per round), as a long real run's pool is after
    ``max_snapshots * snapshot_every`` steps (the default config: 8 after 1.6M)."""
    from rummy_env.train.config import TrainConfig
    from rummy_env.train.trainer import SelfPlayCallback, Trainer

    with tempfile.TemporaryDirectory() as tmp:
        cfg = TrainConfig.from_dict({**dict(rules=rules, timesteps=timesteps, n_envs=n_envs, workers=workers,
                                            out=tmp, eval_every=0, checkpoint_every=10**12, progress=False,
                                            warmstart_decisions=0),
                                     **extra})
        t = Trainer(cfg, verbose=0)
        model, venv = t.model, t.venv
        if full_pool:
            _fill_pool(t, cfg)
        timer = {"env": 0.0, "update": 0.0, "rollout": 0.0}

        def timed(name, fn):
            return _timed(timer, name, fn)

        venv.step_wait = timed("env", venv.step_wait)
        if hasattr(venv, "step_part_wait"):  # the pipelined rollout waits worker by worker
            venv.step_part_wait = timed("env", venv.step_part_wait)
            venv.ready_workers = timed("env", venv.ready_workers)  # ... for whichever has stepped
        model.train = timed("update", model.train)
        model.collect_rollouts = timed("rollout", model.collect_rollouts)
        t0 = time.perf_counter()
        model.learn(total_timesteps=timesteps, callback=SelfPlayCallback(t) if snapshots else None)
        wall = time.perf_counter() - t0
        steps = model.num_timesteps
        opp_dec, opp_time = venv.opponent_decisions, venv.opponent_time
        venv.close()
    rollout = timer["rollout"]
    return {
        "workers": workers, "n_envs": n_envs, "timesteps": steps, "wall_s": wall,
        "timesteps_per_s": steps / wall, "snapshots": snapshots, "full_pool": full_pool,
        "pool_size": len(t.pool.snapshots),
        "rollout_share": rollout / wall, "update_share": timer["update"] / wall,
        "env_share_of_rollout": timer["env"] / rollout if rollout else 0.0,
        "policy_share_of_rollout": 1 - timer["env"] / rollout if rollout else 0.0,
        "opponent_decisions": opp_dec, "opponent_cpu_s": opp_time,
        "opponent_cpu_share_of_env": opp_time / (timer["env"] * max(1, workers)) if timer["env"] else 0.0,
        "config": {"net_arch": cfg.net_arch, "n_steps": cfg.n_steps, "batch_size": cfg.batch_size,
                   "n_epochs": cfg.n_epochs},
    }


def measure_rllib(runners: int, timesteps: int, n_envs: int, rules: str, extra: dict[str, Any],
                  snapshots: bool = False, full_pool: bool = False) -> dict[str, Any]:
    """``measure`` for the RLlib backend (``rummy train --backend rllib``, in a local Ray of
    ``runners + 1`` CPUs started here when none runs): ``runners`` env runners sharing the
    config's ``n_envs`` games (``SelfPlayVectorEnv``), PPO iterations of ``n_steps * n_envs``
    learner steps until ``timesteps``. The clock runs from the first iteration (the
    algorithm's build and Ray's start are not counted, as the SB3 trainer's construction is
    not); ``snapshots``/``full_pool`` as for ``measure``.

    Returns ``measure``'s keys where they apply (``workers`` is the runner count) with
    ``update_share`` (``learner_group.update``), ``sync_share`` (the weights' broadcast) and
    ``rollout_share`` (the rest of each iteration: the runners' sampling and RLlib's
    bookkeeping of the episodes; the runners do not sample while the learner updates)."""
    import sys

    from rummy_env.train import rllib
    from rummy_env.train.config import TrainConfig

    started = "ray" not in sys.modules or not sys.modules["ray"].is_initialized()
    ray = rllib.init_ray(None, num_cpus=runners + 1)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = TrainConfig.from_dict({**dict(rules=rules, timesteps=timesteps, n_envs=n_envs, out=tmp,
                                                eval_every=0, checkpoint_every=10**12, progress=False,
                                                warmstart_decisions=0),
                                         **extra})
            t = rllib.RLlibTrainer(cfg, num_env_runners=runners, verbose=0)
            try:
                if full_pool:
                    for _ in range(cfg.max_snapshots):
                        t.add_snapshot(0)
                    t.state["next_snapshot"] = cfg.snapshot_every
                elif not snapshots:
                    t.state["next_snapshot"] = 10**15
                timer = {"update": 0.0, "sync": 0.0}
                lg, rg = t.algo.learner_group, t.algo.env_runner_group
                lg.update = _timed(timer, "update", lg.update)
                rg.sync_weights = _timed(timer, "sync", rg.sync_weights)
                t0 = time.perf_counter()
                while t.state["num_timesteps"] < timesteps:
                    t.train_iteration()
                wall = time.perf_counter() - t0
                steps = t.state["num_timesteps"]
                pool_size = len(t.pool.snapshots)
                games = rllib.runner_games(cfg, runners)
            finally:
                t.stop()
    finally:
        if started:
            ray.shutdown()
    return {
        "backend": "rllib", "workers": runners, "n_envs": n_envs, "games_per_runner": games, "timesteps": steps,
        "wall_s": wall, "timesteps_per_s": steps / wall, "snapshots": snapshots, "full_pool": full_pool,
        "pool_size": pool_size, "rollout_share": 1 - (timer["update"] + timer["sync"]) / wall,
        "update_share": timer["update"] / wall, "sync_share": timer["sync"] / wall,
        "config": {"net_arch": cfg.net_arch, "n_steps": cfg.n_steps, "batch_size": cfg.batch_size,
                   "n_epochs": cfg.n_epochs},
    }


def print_rows(rows: list[dict[str, Any]]) -> None:
    """The table of ``rummy bench train``: one row per backend and worker count; with both
    backends, RLlib's best learner timesteps/s as a share of SB3's best."""
    head = ("backend", "workers", "timesteps/s", "rollout", "update", "env in rollout", "policy in rollout",
            "opponent CPU in env")
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for r in rows:
        if r.get("backend") == "rllib":  # RLlib's parts: sampling (with its bookkeeping), update, broadcast
            print(f"| rllib | {r['workers']} runner(s) | {r['timesteps_per_s']:,.0f} | {r['rollout_share']:.0%} | "
                  f"{r['update_share']:.0%} | - | - | - |")
            continue
        print(f"| sb3 | {r['workers']} | {r['timesteps_per_s']:,.0f} | {r['rollout_share']:.0%} | "
              f"{r['update_share']:.0%} | {r['env_share_of_rollout']:.0%} | {r['policy_share_of_rollout']:.0%} | "
              f"{r['opponent_cpu_share_of_env']:.0%} |")
    best = {b: max((r["timesteps_per_s"] for r in rows if r.get("backend", "sb3") == b), default=0.0)
            for b in ("sb3", "rllib")}
    if best["sb3"] and best["rllib"]:
        print(f"rllib / sb3 (best of each): {best['rllib'] / best['sb3']:.0%} "
              f"({best['rllib']:,.0f} / {best['sb3']:,.0f} learner timesteps/s)")


def run(args: argparse.Namespace) -> int:
    """Entry point called by ``rummy bench train``."""
    from rummy_env.benchmark.speed import check_json_path

    from rummy_env.train.config import tomllib

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
    from rummy_env.train.config import TrainConfig

    n_envs = TrainConfig().n_envs if args.n_envs is None else args.n_envs  # TrainConfig.validate checks it
    backends = list(dict.fromkeys(getattr(args, "backend", None) or ["sb3"]))
    if any(w < 1 for w in args.workers or []):
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    rows = []
    if getattr(args, "profile", False):
        if backends != ["sb3"]:
            raise ValueError("--profile profiles the sb3 backend only; for --backend rllib the table reports "
                             "RLlib's iteration parts (sampling, update, weights' broadcast)")
        for w in args.workers or [1, 2]:
            print(f"profiling {args.timesteps:,} timesteps with {w} worker(s) ...", flush=True)
            rows.append(profile_run(w, args.timesteps, n_envs, args.rules, extra, top=15,
                                    full_pool=getattr(args, "full_pool", False)))
        print_profile(rows)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(rows, fh, indent=2)
        return 0
    if "rllib" in backends:
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise ValueError("--backend rllib needs the rllib extra (pip install 'rummy-env[rllib]')")
    snaps = getattr(args, "snapshots", False) or getattr(args, "full_pool", False)
    full = getattr(args, "full_pool", False)
    for backend in backends:
        for w in args.workers or [1, 2]:
            what = "worker(s)" if backend == "sb3" else "env runner(s)"
            print(f"training {args.timesteps:,} timesteps on {backend} with {w} {what} ...", flush=True)
            if backend == "sb3":
                row = measure(w, args.timesteps, n_envs, args.rules, extra, snapshots=snaps, full_pool=full)
                row["backend"] = "sb3"
            else:
                row = measure_rllib(w, args.timesteps, n_envs, args.rules, extra, snapshots=snaps, full_pool=full)
            rows.append(row)
    print_rows(rows)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0
