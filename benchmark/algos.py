"""The reference algorithms of ``rummy benchmark train --algo ALGO`` (docs/leaderboard.md).

Each trains under a task's budget (learner environment steps: the learner's own
decisions) with one seed, records a learning curve (match win rate against
``heuristic`` on 20 duplicate match seeds, at five points of the run and at its end,
against learner steps and wall-clock), and returns the trained agent as a
``make_agent`` spec for the protocol evaluation.

| algo | library | what it is |
| --- | --- | --- |
| ``ppo`` | sb3-contrib MaskablePPO | ``rummy train``'s self-play (snapshot pool and scripted baselines), no warm start |
| ``ppo-warmstart`` | sb3-contrib MaskablePPO | the same after a short warm start: 100k decisions cloned from ``heuristic`` and one DAgger round of 50k (extra environment steps, not counted in the budget: the row says how many) |
| ``rllib-ppo`` | Ray RLlib PPO | ``rummy train --backend rllib``: the same network, pool and hyper-parameters on RLlib, no warm start, one env runner stepping the config's 64 games |
| ``dqn`` | Tianshou DQN | value-based, action-masked Q-learning against the scripted baselines (no self-play; ``rummy_env.train.dqn``) |
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .tasks import Task

CURVE_POINTS = 5
"""Evaluations during a run (plus the final one) for the learning curve."""
CURVE_DEALS = 20
"""Duplicate match seeds against ``heuristic`` per curve point (40 matches heads-up)."""
CURVE_OPPONENT = "heuristic"
SMOKE_BELOW = 50_000
"""A budget below this is a smoke test (never a task's budget): its PPO runs 16 games in
one process with 512-step rollouts, and its curve points play 1 match seed."""
PPO_PINNED = {"n_envs": 64, "n_steps": 64, "precision": "float32", "snapshot_rotation": 0}
"""The keys of the reference PPO runs (``ppo``, ``ppo-warmstart``, ``rllib-ppo``, best
responses) fixed with the published rows, where ``rummy train``'s defaults have moved
since: they were trained with 64 games x 64 steps a rollout (256 x 16 now: the same 4,096
steps, faster; docs/benchmarks.md) and in float32 (before the ``precision`` key, whose
default ``"auto"`` trains in bfloat16 on a CPU that has it), with every snapshot draw
uniform over the pool (no ``snapshot_rotation`` windows, which came later; off by default
too). The smoke test's own rollout wins over the first two."""
WARM_DECISIONS = 100_000
"""Teacher decisions of the short warm start (``ppo-warmstart``, best responses); the
budget instead when it is smaller."""
WARM_DAGGER = 50_000
"""Positions of its one DAgger round (half the budget when that is smaller)."""


@dataclass(frozen=True)
class Algo:
    """A reference algorithm: its name, library, a description and its runner."""

    name: str
    library: str
    description: str
    run: Callable[..., dict[str, Any]]
    extra: str
    """The pip extra it needs (``pip install -e '.[EXTRA]'``)."""


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _curve_point(t: int, wall: float, r: dict[str, Any]) -> dict[str, Any]:
    return {"timesteps": int(t), "wall_time_s": round(float(wall), 1), "match_win_rate": r["match_win_rate"],
            "match_win_ci": list(r["match_win_ci"]), "points_per_hand": r["points_per_hand"]}


def _curve_from_history(run_dir: Path) -> list[dict[str, Any]]:
    """The learning curve from a trainer's ``eval_history.json`` (both PPO backends)."""
    path = run_dir / "eval_history.json"
    if not path.is_file():
        return []
    out = []
    for row in json.loads(path.read_text()):
        r = row.get(CURVE_OPPONENT)
        if r and "match_win_rate" in r:
            out.append(_curve_point(row["timesteps"], row["wall_time_s"], r))
    return out


def ppo_config(task: Task, budget: int, seed: int, run_dir: Path, warm: bool, **over: Any):
    """The ``TrainConfig`` of the PPO reference runs (``ppo``, ``ppo-warmstart``) and of
    ``best-response``: the task's preset and players, ``budget`` learner steps, the
    learning curve's evaluations (``CURVE_POINTS`` points against ``CURVE_OPPONENT``),
    the short warm start (``WARM_DECISIONS`` + ``WARM_DAGGER``) when ``warm``; a budget
    under ``SMOKE_BELOW`` is a smoke test (16 games in this process, one deal per
    evaluation). ``over`` overrides any key; the progress bar is off unless it gives
    ``progress=True`` (the runners and ``best-response`` do unless ``--quiet``).

    Raises:
        ValueError: the task's rules are not its preset's at its player count (the PPO
            runners train on presets). The config is checked when a ``Trainer`` is made
            (``TrainConfig.validate``).
    """
    from rummy_env.rules import Rules
    from rummy_env.train.config import TrainConfig

    preset, n = task.rules["preset"], task.players
    if Rules.make(preset, num_players=n) != task.make_rules():
        raise ValueError(f"task {task.id}'s rules are not the {preset} preset at {n} players; the PPO runners "
                         f"train on presets")
    deals = CURVE_DEALS if budget >= SMOKE_BELOW else 1
    d: dict[str, Any] = dict(rules=preset, num_players=n, timesteps=budget, seed=seed, out=str(run_dir),
                             eval_every=max(1, budget // CURVE_POINTS), eval_deals=deals,
                             eval_baselines=[CURVE_OPPONENT], final_eval_deals=deals,
                             checkpoint_every=max(budget, 1), progress=False)  # the callers turn it on
    d.update(PPO_PINNED)  # what the published rows were trained with
    if budget < SMOKE_BELOW:  # a smoke test: 16 games in this process, small batches
        d.update(n_envs=16, workers=1, n_steps=32, batch_size=256)
    if warm:  # WARM_DECISIONS, or the budget when smaller (a smoke test)
        d.update(warmstart_decisions=min(WARM_DECISIONS, budget), warmstart_dagger_rounds=1,
                 warmstart_dagger_decisions=min(WARM_DAGGER, max(1, budget // 2)))
    else:
        d.update(warmstart_decisions=0)
    d.update(over)
    return TrainConfig(**d)


def _training(budget_name: str, budget: int, seed: int, timesteps: int, wall: float, curve: list, cfg: Any = None,
              extra_steps: int = 0, note: str = "") -> dict[str, Any]:
    out = {"budget_name": budget_name, "budget": budget, "timesteps": int(timesteps), "seed": seed,
           "wall_time_s": round(wall, 1), "curve": curve, "extra_env_steps": int(extra_steps)}
    if cfg is not None:
        out["config"] = cfg
    if note:
        out["note"] = note
    return out


def run_ppo(task: Task, budget_name: str, budget: int, seed: int, out: Path, warm: bool = False,
            verbose: int = 1) -> dict[str, Any]:
    """sb3-contrib MaskablePPO self-play (``rummy train``'s trainer) under the budget.

    Returns ``{"agent": "ppo:PATH", "training": ..., "algorithm": ...}``."""
    from rummy_env.train.trainer import Trainer

    run_dir = out / "run"
    cfg = ppo_config(task, budget, seed, run_dir, warm, progress=bool(verbose))
    t0 = time.perf_counter()
    tr = Trainer(cfg, verbose=verbose)
    tr.learn()
    wall = time.perf_counter() - t0
    ws = tr.state.get("warm_start") or {}
    extra = (cfg.warmstart_decisions + cfg.warmstart_dagger_rounds * cfg.warmstart_dagger_decisions) if warm else 0
    note = (f"plus a warm start of {extra:,} teacher-labelled decisions ({ws.get('collect_s', 0) + ws.get('fit_s', 0):.0f} s), "
            "not counted in the budget" if warm else "")
    name = "ppo-warmstart" if warm else "ppo"
    return {"agent": f"ppo:{run_dir / 'final_model.zip'}",
            "training": _training(budget_name, budget, seed, tr.model.num_timesteps, wall, _curve_from_history(run_dir),
                                  cfg.to_dict(), extra, note),
            "algorithm": {"name": name, "library": "sb3-contrib", "library_version": _version("sb3-contrib"),
                          "class": "MaskablePPO", "self_play": True, "warm_start": warm}}


def run_ppo_warm(task: Task, budget_name: str, budget: int, seed: int, out: Path, verbose: int = 1) -> dict[str, Any]:
    """``run_ppo`` with the short warm start (module table)."""
    return run_ppo(task, budget_name, budget, seed, out, warm=True, verbose=verbose)


def run_rllib(task: Task, budget_name: str, budget: int, seed: int, out: Path, verbose: int = 1) -> dict[str, Any]:
    """Ray RLlib PPO (``rummy train --backend rllib``: one env runner stepping the config's
    games, ``SelfPlayVectorEnv``); the final checkpoint is exported to ONNX and evaluated
    as ``onnx:DIR``."""
    from rummy_env.train import rllib
    from rummy_env.train.export import export_rllib_checkpoint

    run_dir = out / "run"
    cfg = ppo_config(task, budget, seed, run_dir, warm=False)
    import sys

    started = "ray" not in sys.modules or not sys.modules["ray"].is_initialized()
    ray = rllib.init_ray(None, num_cpus=2)
    t0 = time.perf_counter()
    trainer = rllib.RLlibTrainer(cfg, num_env_runners=1, verbose=verbose)
    try:
        trainer.learn()
        ckpt = trainer.last_checkpoint
        steps = trainer.state["num_timesteps"]
    finally:
        trainer.stop()
        if started:
            ray.shutdown()
    wall = time.perf_counter() - t0
    policy = out / "policy"
    export_rllib_checkpoint(ckpt, policy)
    return {"agent": f"onnx:{policy}",
            "training": _training(budget_name, budget, seed, steps, wall, _curve_from_history(run_dir), cfg.to_dict(),
                                  note=f"one env runner stepping {cfg.n_envs} games at once"),
            "algorithm": {"name": "rllib-ppo", "library": "ray[rllib]", "library_version": _version("ray"),
                          "class": "PPO", "self_play": True, "warm_start": False}}


def run_dqn(task: Task, budget_name: str, budget: int, seed: int, out: Path, verbose: int = 1) -> dict[str, Any]:
    """Tianshou DQN with the action mask (``rummy_env.train.dqn``) against the scripted
    baselines; exported to ONNX (Q-values as logits) and evaluated as ``onnx:DIR``."""
    from rummy_env.eval.tournament import evaluate
    from rummy_env.train import dqn

    rules = task.make_rules()
    curve: list[dict[str, Any]] = []
    deals = CURVE_DEALS if budget >= SMOKE_BELOW else 1

    def on_eval(agent: Any, t: int, wall: float) -> None:
        r = evaluate(agent, CURVE_OPPONENT, rules=rules, deals=deals, seed=10_000 + seed, matches=True)
        curve.append(_curve_point(t, wall, r))
        if verbose:
            print(f"[eval @ {t:,} steps, {wall:.0f}s] vs {CURVE_OPPONENT}: matches {r['match_win_rate']:.3f}", flush=True)

    last = [time.perf_counter()]

    def progress(t: int) -> None:
        if verbose and time.perf_counter() - last[0] >= 20:
            last[0] = time.perf_counter()
            print(f"[dqn] {t:,} / {budget:,} learner steps", flush=True)

    res = dqn.train_dqn(rules, budget, seed, out / "run", eval_every=max(1, budget // CURVE_POINTS),
                        evaluate=on_eval, progress=progress)
    policy = out / "policy"
    dqn.export_onnx(res["model_path"], policy, rules)
    return {"agent": f"onnx:{policy}",
            "training": _training(budget_name, budget, seed, res["timesteps"], res["wall_time_s"], curve, res["hyper"],
                                  note="trained against the scripted baselines (no self-play)"),
            "algorithm": {"name": "dqn", "library": res["library"], "library_version": res["library_version"],
                          "class": "DQN", "self_play": False, "warm_start": False}}


ALGOS: dict[str, Algo] = {a.name: a for a in (
    Algo("ppo", "sb3-contrib", "MaskablePPO self-play, no warm start", run_ppo, "train"),
    Algo("ppo-warmstart", "sb3-contrib", "MaskablePPO self-play after a short warm start from heuristic",
         run_ppo_warm, "train"),
    Algo("rllib-ppo", "ray[rllib]", "RLlib PPO self-play (the same network and pool)", run_rllib, "rllib"),
    Algo("dqn", "tianshou", "Tianshou DQN with the action mask, against the scripted baselines", run_dqn, "benchmark"),
)}


def get_algo(name: str) -> Algo:
    """The algorithm ``name``.

    Raises:
        ValueError: an unknown name (the message lists the algorithms).
    """
    if name not in ALGOS:
        raise ValueError(f"unknown algorithm {name!r}; algorithms: {', '.join(ALGOS)}")
    return ALGOS[name]
