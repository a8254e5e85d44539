"""The benchmark: versioned tasks, one evaluation protocol, rows and the leaderboard
(docs/leaderboard.md).

- ``TASKS`` / ``get_task(id)``: the tasks (``tasks.Task``), frozen once published.
- ``evaluate_agent(task, agent)``: a row for any agent (a ``make_agent`` spec such as
  ``MODULE:ATTR``, or an agent object) under the task's protocol.
- ``ALGOS``: the reference algorithms of ``rummy benchmark train``.
- ``validate_row`` / ``load_row`` / ``save_row``: the row schema (``ROW_FORMAT``).
- ``iqm`` / ``iqm_interval``: the aggregate of a leaderboard entry (``report``).
"""
from __future__ import annotations

import time
from typing import Any

from .protocol import ROW_FORMAT, load_row, make_row, play_protocol, save_row, validate_row
from .tasks import PROTOCOL, TASKS, Task, get_task


def evaluate_agent(task: str | Task, agent: Any, name: str | None = None, match_seeds: int | None = None,
                   workers: int = 2, algorithm: dict[str, Any] | None = None,
                   training: dict[str, Any] | None = None) -> dict[str, Any]:
    """Evaluate ``agent`` under ``task``'s protocol and return its row (not written).

    Args:
        task: a task id or ``Task``.
        agent: a ``make_agent`` spec or an object with ``act(observation, action_mask)``
            (an object that cannot be pickled is played in this process).
        name: the row's agent name (default: the spec, or the object's class name).
        match_seeds: fewer than the task's seeds makes a row that is not the protocol's.

    Raises:
        ValueError: an unknown task, a bad agent, or an agent that cannot play the table.
    """
    t = get_task(task) if isinstance(task, str) else task
    spec = agent if isinstance(agent, str) else f"python:{type(agent).__module__}.{type(agent).__qualname__}"
    nm = name or (agent if isinstance(agent, str) else type(agent).__name__)
    n = t.match_seeds if match_seeds is None else match_seeds
    t0 = time.perf_counter()
    res = play_protocol(t, agent, match_seeds=n, workers=workers)
    return make_row(t, spec, nm, res, match_seeds=n, workers=workers, eval_wall_s=time.perf_counter() - t0,
                    command=f"rummy_env.benchmark.evaluate_agent({t.id!r}, {spec!r})", algorithm=algorithm,
                    training=training)


def __getattr__(name: str) -> Any:  # the heavier pieces load on first use
    if name == "ALGOS":
        from .algos import ALGOS

        return ALGOS
    if name in ("iqm", "iqm_interval"):
        from . import report

        return getattr(report, name)
    raise AttributeError(name)


__all__ = ["TASKS", "Task", "get_task", "PROTOCOL", "ROW_FORMAT", "evaluate_agent", "play_protocol", "make_row",
           "validate_row", "load_row", "save_row", "ALGOS", "iqm", "iqm_interval"]
