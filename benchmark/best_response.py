"""``rummy benchmark best-response``: an exploitability proxy for a frozen agent.

The procedure (fixed, so figures of different agents compare): the project's
MaskablePPO trainer, warm-started by the same short clone of ``heuristic`` as the
``ppo-warmstart`` reference algorithm (100k decisions and one DAgger round of 50k),
then ``budget`` learner steps with the frozen agent in every other seat
(``TrainConfig.fixed_opponent``, opponent kind "fixed" only); the final policy then
plays the task's match seeds against the frozen agent, every seat rotation. Its match
win rate (95% Wilson interval) is the figure: lower is less exploitable. It is a
proxy: a stronger best response (more steps, search) may find more.
"""
from __future__ import annotations

import datetime as _dt
import json
import time
from pathlib import Path
from typing import Any

from .protocol import engine_info, hardware_info
from .schema import BR_FORMAT, RESULT_KEYS, validate_best_response
from .tasks import Task

PROCEDURE = ("MaskablePPO (rummy train's trainer) warm-started by cloning heuristic (DECISIONS decisions + one "
             "DAgger round of DAGGER), then BUDGET learner steps against the frozen agent alone")
"""The ``procedure`` of a best response's JSON; ``DECISIONS`` and ``DAGGER`` are its run's
warm start (100k and 50k at a full budget, ``algos.WARM_DECISIONS`` / ``WARM_DAGGER``; a
smaller budget caps them), ``BUDGET`` its learner steps."""


def _thousands(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else f"{n:,}"


def best_response(task: Task, agent: str, budget: int, seed: int, out: Path, match_seeds: int | None = None,
                  workers: int = 2, command: str = "", verbose: int = 1) -> dict[str, Any]:
    """Train the best response and evaluate it; writes and returns ``out/best_response.json``.

    Args:
        agent: the frozen agent, a ``make_agent`` spec.
        budget: learner steps of PPO against it (the warm start's decisions come on top).
        match_seeds: the first N of the task's match seeds (default all; fewer: not the protocol's).

    Raises:
        ValueError: a bad agent, or an agent that cannot play the task's table; or a
            result that is not a valid best-response file (``validate_best_response``,
            naming the field; nothing is written).
    """
    from rummy_env.eval.tournament import evaluate
    from rummy_env.train.trainer import Trainer

    from .algos import ppo_config
    from .protocol import check_fits

    check_fits(task, agent)
    n = task.match_seeds if match_seeds is None else match_seeds
    run_dir = out / "run"
    cfg = ppo_config(task, budget, seed, run_dir, warm=True, opponent_weights={"fixed": 1.0},
                      fixed_opponent=agent, eval_every=0, eval_deals=1, final_eval_deals=1,
                      progress=bool(verbose))  # no evaluations until the end: the bar's lines say how far it is
    t0 = time.perf_counter()
    tr = Trainer(cfg, verbose=verbose)
    tr.learn()
    train_s = time.perf_counter() - t0
    br = f"ppo:{run_dir / 'final_model.zip'}"
    t1 = time.perf_counter()
    r = evaluate(br, agent, rules=task.make_rules(), deals=n, seed=task.protocol_seed, workers=workers,
                 players=task.players, matches=True)
    res = {
        "format": BR_FORMAT, "task": task.id, "fingerprint": task.fingerprint(), "agent": agent,
        "agent_name": agent, "budget": budget, "seed": seed, "procedure": PROCEDURE.replace("BUDGET", f"{budget:,}").replace(
            "DECISIONS", _thousands(cfg.warmstart_decisions)).replace("DAGGER", _thousands(cfg.warmstart_dagger_decisions)),
        "timesteps": int(tr.model.num_timesteps), "best_response": br, "match_seeds": n,
        "protocol_complete": n == task.match_seeds,
        "result": {k: r[k] for k in RESULT_KEYS}, "train_wall_s": round(train_s, 1),
        "eval_wall_s": round(time.perf_counter() - t1, 1), "engine": engine_info(), "hardware": hardware_info(workers),
        "command": command, "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    }
    validate_best_response(res)
    out.mkdir(parents=True, exist_ok=True)
    (out / "best_response.json").write_text(json.dumps(res, indent=1, allow_nan=False) + "\n")
    return res
