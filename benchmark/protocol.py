"""The evaluation protocol of every task (``tasks.PROTOCOL``) and the row it writes.

For each anchor of the task, ``rummy_env.eval.tournament.evaluate`` plays the task's
match seeds, each once per seat rotation: heads-up the agent and the anchor swap
seats over the same deals; at ``n`` players the agent holds one seat and the anchor
every other, rotated through all ``n`` seats. Every number of a row comes from
these duplicate matches (RULES.md §7: the game is won in matches): the match win
rate (a split match counts ``1/k``) with a 95% Wilson interval, points per hand
(clustered by match) with a 95% interval, and the hand win rate. A rating (Elo,
Bradley-Terry) is fitted to the whole crosstable: the agent's results against the
anchors and the anchors' results against each other (``anchor_crosstable``).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import pickle
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from .schema import RESULT_KEYS, ROW_FORMAT, read_json, validate_row
from .tasks import PROTOCOL, Task, get_task

ANCHOR_DIR = Path(__file__).resolve().parent / "anchors"
"""Where the anchors' crosstables are kept, one ``<task>.json`` each (``anchor_crosstable``)."""


def engine_info() -> dict[str, str]:
    """The engine's identity written into every row: package, version, env version."""
    from rummy_env import __version__

    return {"package": "rummy-env", "version": __version__, "env": "rummy_v0"}


def hardware_info(workers: int) -> dict[str, Any]:
    """The machine a row was measured on: CPU model, cores, the workers used, OS, Python, torch."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    torch = sys.modules.get("torch")
    return {"cpu": cpu, "cores": os.cpu_count(), "workers": workers, "os": platform.platform(),
            "python": platform.python_version(), "torch": getattr(torch, "__version__", None)}


def _result(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r[k] for k in RESULT_KEYS}


def _agent_for_workers(agent: Any, workers: int) -> tuple[Any, int]:
    """An agent object is sent to worker processes by pickling; one that cannot be
    pickled (an onnxruntime session) is played in this process."""
    if isinstance(agent, str) or workers == 1:
        return agent, workers
    try:
        pickle.dumps(agent)
        return agent, workers
    except Exception:  # noqa: BLE001 - any pickling failure: play in-process
        return agent, 1


def play_protocol(task: Task, agent: Any, match_seeds: int | None = None, workers: int = 2,
                  anchors: Sequence[str] | None = None,
                  progress: Callable[[str, dict[str, Any], float], None] | None = None,
                  opponent_stats: bool = False) -> dict[str, dict[str, Any]]:
    """Evaluate ``agent`` (a ``make_agent`` spec or an agent object) against each anchor.

    Args:
        match_seeds: the first ``match_seeds`` of the task's seeds (default: all; fewer
            makes a row that is not the protocol's).
        anchors: a subset of the task's anchors (default: all).
        progress: called after each anchor with its name, its result and the seconds it took.
        opponent_stats: heads-up tasks only: each result also holds ``"opponent"``, the
            anchor's own result against ``agent`` from the same matches (``evaluate``'s
            ``opponent_stats``), which ``rummy benchmark anchors`` uses to play each pair
            of anchors once.

    Returns:
        anchor -> ``rummy_env.eval.tournament.evaluate`` result (``match_win_rate``,
        ``match_win_ci``, ``points_per_hand``, ``points_ci``, ``hand_win_rate``, ...,
        ``wins``, ``games``).

    Raises:
        ValueError: a bad agent, an agent that cannot play the task's table, a seed
            count outside 1..task.match_seeds, or an anchor not in the task.
    """
    from rummy_env.eval.tournament import evaluate

    n = task.match_seeds if match_seeds is None else match_seeds
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= task.match_seeds:
        raise ValueError(f"match_seeds must be an int in 1..{task.match_seeds} (the task's seeds), got {match_seeds!r}")
    names = list(task.anchors if anchors is None else anchors)
    bad = [a for a in names if a not in task.anchors]
    if bad:
        raise ValueError(f"{', '.join(bad)} not among task {task.id}'s anchors ({', '.join(task.anchors)})")
    check_fits(task, agent)
    agent, workers = _agent_for_workers(agent, workers)
    rules = task.make_rules()
    out = {}
    for a in names:
        t0 = time.perf_counter()
        out[a] = evaluate(agent, a, rules=rules, deals=n, seed=task.protocol_seed, workers=workers,
                          players=task.players, matches=True, opponent_stats=opponent_stats)
        if progress:
            progress(a, out[a], time.perf_counter() - t0)
    return out


def check_fits(task: Task, agent: Any) -> None:
    """Check that ``agent`` (a ``make_agent`` spec or an object with ``act``) can play
    ``task``'s table (``rummy_env.agents.table_misfit``).

    Raises:
        ValueError: not an agent, or one made for another table (the reason named).
    """
    from rummy_env.agents import make_agent, table_misfit

    a = make_agent(agent) if isinstance(agent, str) else agent
    if not callable(getattr(a, "act", None)):
        raise ValueError(f"an agent must be a make_agent name or an object with act(); got {agent!r}")
    why = table_misfit(a, task.make_rules())
    if why is not None:
        raise ValueError(f"agent {agent if isinstance(agent, str) else type(agent).__name__!r} cannot play task "
                         f"{task.id}: {why}")


# ---------------------------------------------------------------------------- ratings

def anchor_crosstable(task: Task) -> dict[str, dict[str, dict[str, float]]]:
    """The anchors' results against each other under the protocol: ``{anchor: {other:
    {"wins": w, "games": g}}}``, read from ``anchors/<task>.json`` (written by
    ``rummy benchmark eval`` of each anchor with ``--anchor-table``); ``{}`` when the
    task has none yet."""
    path = ANCHOR_DIR / f"{task.id}.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if data.get("fingerprint") != task.fingerprint():
        raise ValueError(f"{path} was measured for another version of task {task.id} "
                         f"(fingerprint {data.get('fingerprint')}, the task's {task.fingerprint()})")
    return data["crosstable"]


def crosstable_rating(name: str, results: dict[str, dict[str, Any]], anchors_table: dict[str, dict[str, dict]],
                      players: int) -> dict[str, Any]:
    """Elo ratings (a Bradley-Terry fit, ``rummy_env.eval.tournament.bradley_terry_elo``)
    of the agent and the anchors from their match results.

    Each heads-up pairing counts the matches each side won (a split half each). At
    ``n > 2`` players a table of the agent and ``n - 1`` copies of an anchor counts as
    the agent against one anchor seat: the agent's wins against the anchor seats' wins
    divided by ``n - 1`` (each seat's fair share is ``1/n``). The ratings are shifted
    so that the ``heuristic`` anchor (else ``random``) is 0, which makes a row's rating
    comparable across rows of the same task. (Not ``random``: every agent but random
    wins all its matches against it, so its gap to random is set by the fit's prior
    of half a win a side: 400 log10(200.5 / 0.5) = 1041 at 200 matches.)

    Returns:
        ``{"kind": "elo", "value": the agent's rating, "anchors": {anchor: rating}}``.
    """
    from rummy_env.eval.tournament import bradley_terry_elo

    names = [name] + [a for a in results if a != name]
    for a, row in anchors_table.items():
        for b in row:
            for x in (a, b):
                if x not in names:
                    names.append(x)
    idx = {n: i for i, n in enumerate(names)}
    pairs: dict[tuple[int, int], tuple[float, float]] = {}

    def add(a: str, b: str, wins: float, games: float) -> None:
        if a == b or games <= 0:
            return
        other = (games - wins) / (players - 1)
        i, j = idx[a], idx[b]
        key = (min(i, j), max(i, j))
        si, sj = pairs.get(key, (0.0, 0.0))
        mine, theirs = (wins, other) if i < j else (other, wins)
        pairs[key] = (si + mine, sj + theirs)

    for a, r in results.items():
        add(name, a, float(r["match_win_rate"]) * float(r["matches"]), float(r["matches"]))
    for a, row in anchors_table.items():
        for b, r in row.items():
            if a != name and b != name:
                add(a, b, float(r["wins"]), float(r["games"]))
    elo = bradley_terry_elo(pairs, len(names))
    ref = next((a for a in ("heuristic", "random") if a in idx), None)
    zero = elo[idx[ref]] if ref else 1500.0
    rated = {n: round(elo[i] - zero, 1) for n, i in idx.items()}
    return {"kind": "elo", "zero": ref or "mean 1500",
            "value": rated[name], "anchors": {n: v for n, v in rated.items() if n != name}}


# ---------------------------------------------------------------------------- rows

def make_row(task: Task, agent_spec: str, agent_name: str, results: dict[str, dict[str, Any]], *,
             match_seeds: int, workers: int, eval_wall_s: float, command: str,
             algorithm: dict[str, Any] | None = None, training: dict[str, Any] | None = None,
             deviations: Sequence[str] = (), self_anchor: str | None = None,
             crosstable: dict[str, dict[str, dict]] | None = None) -> dict[str, Any]:
    """A benchmark row (``ROW_FORMAT``; schema in docs/benchmark.md), checked by ``validate_row``.

    ``protocol_complete`` is true only when every anchor was played over all the task's
    match seeds and ``deviations`` is empty (a training run shorter than the budget adds
    one); such a row is a leaderboard entry, any other a smoke test. ``self_anchor``: the
    row of an anchor, which plays every anchor but itself; ``crosstable``: the anchors'
    crosstable to rate against (default ``anchor_crosstable(task)``).
    """
    devs = list(deviations)
    if match_seeds != task.match_seeds:
        devs.append(f"{match_seeds} of the protocol's {task.match_seeds} match seeds per anchor")
    missing = [a for a in task.anchors if a not in results and a != self_anchor]
    if missing:
        devs.append(f"anchors not played: {', '.join(missing)}")
    table = anchor_crosstable(task) if crosstable is None else crosstable
    rating = crosstable_rating(agent_name, results, table, task.players)
    row = {
        "format": ROW_FORMAT,
        "task": {"id": task.id, "version": task.version, "fingerprint": task.fingerprint(), "protocol": PROTOCOL,
                 "definition": task.to_json()},
        "protocol_complete": not devs,
        "deviations": devs,
        "engine": engine_info(),
        "agent": {"spec": agent_spec, "name": agent_name},
        "algorithm": algorithm,
        "training": training,
        "evaluation": {"match_seeds": match_seeds, "rotations": task.rotations,
                       "matches_per_anchor": match_seeds * task.rotations, "wall_time_s": round(eval_wall_s, 1),
                       "anchor_crosstable": bool(table)},
        "hardware": hardware_info(workers),
        "results": {a: _result(r) for a, r in results.items()},
        "rating": rating,
        "command": command,
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    }
    validate_row(row)
    return row


def check_rating(row: dict[str, Any]) -> dict[str, Any]:
    """Check a valid row's ``rating`` against a fresh fit (``crosstable_rating``) of its
    results and, when ``evaluation.anchor_crosstable`` says it was rated with one, the
    task's anchor crosstable (``anchor_crosstable``); returns the row.

    A rating is the one number of a row that the other numbers do not pin down by
    themselves, so the leaderboard re-fits it rather than trusting it. A row rated
    without the crosstable of a task that has one is refused too: its rating would not
    compare with the others'. Each rating is rounded to 0.1, so one rounding step apart
    is allowed.

    Raises:
        ValueError: ``not a benchmark row: rating...`` (or ``evaluation.anchor_crosstable``)
            with the stored and the fitted numbers.
    """
    t = get_task(row["task"]["id"])
    table = anchor_crosstable(t)
    if table and not row["evaluation"]["anchor_crosstable"]:
        raise ValueError(f"not a benchmark row: evaluation.anchor_crosstable: false, but task {t.id}'s ratings are "
                         f"fitted with its anchors' crosstable (benchmark/anchors/{t.id}.json)")
    want = crosstable_rating(row["agent"]["name"], row["results"], table, t.players)
    got = row["rating"]
    basis = "the row's results" + (" and the task's anchor crosstable" if table else "")
    if got["zero"] != want["zero"]:
        raise ValueError(f"not a benchmark row: rating.zero: {got['zero']!r}, but the fit to {basis} is zero at "
                         f"{want['zero']!r}")
    if abs(got["value"] - want["value"]) > 0.11:
        raise ValueError(f"not a benchmark row: rating.value: {got['value']:+.1f}, but the fit to {basis} gives "
                         f"{want['value']:+.1f}")
    if set(got["anchors"]) != set(want["anchors"]):
        raise ValueError(f"not a benchmark row: rating.anchors: rates {', '.join(sorted(got['anchors']))}, but the "
                         f"fit to {basis} rates {', '.join(sorted(want['anchors']))}")
    for a, v in want["anchors"].items():
        if abs(got["anchors"][a] - v) > 0.11:
            raise ValueError(f"not a benchmark row: rating.anchors[{a!r}]: {got['anchors'][a]:+.1f}, but the fit to "
                             f"{basis} gives {v:+.1f}")
    return row


def save_row(row: dict[str, Any], out_dir: str | os.PathLike) -> Path:
    """Validate ``row`` (``validate_row``) and write it as ``out_dir/row.json``; returns the path.

    Raises:
        ValueError: the row is not valid (naming the field); nothing is written.
    """
    validate_row(row)
    text = json.dumps(row, indent=1, allow_nan=False) + "\n"
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    p = d / "row.json"
    p.write_text(text)
    return p


def load_row(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate a row (``row.json`` or a folder holding one; ``validate_row``).

    Raises:
        ValueError: the file is missing, unreadable, not JSON, or not a row; the message
            starts with the file and names the field.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "row.json"
    if not p.is_file():
        raise ValueError(f"no benchmark row at {path} (expected a row.json file or a folder holding one)")
    row = read_json(p)
    try:
        return validate_row(row)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None
