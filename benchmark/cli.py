"""``rummy benchmark``: versioned tasks, one protocol, rows and the leaderboard.

``rummy benchmark list`` | ``eval --task T --agent SPEC --out DIR`` | ``train --task T
--algo A --seed S --out DIR`` | ``anchors --task T --out DIR`` | ``report ROWS... --out DIR``
| ``best-response --task T --agent SPEC --budget N --out DIR``. See docs/leaderboard.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any


_FLAGS = (("task", "--task"), ("algo", "--algo"), ("agent", "--agent"), ("seed", "--seed"), ("budget", "--budget"),
          ("budget_steps", "--budget-steps"), ("train_seed", "--train-seed"), ("train_wall_s", "--train-wall-s"),
          ("match_seeds", "--match-seeds"), ("name", "--name"),
          ("algorithm", "--algorithm"), ("library", "--library"), ("anchors", "--anchors"), ("out", "--out"))


def _command(args: argparse.Namespace) -> str:
    """The command that reproduces a result (written into its row): the sub-command and
    every flag that changes what is played, as given."""
    parts = ["rummy", "benchmark", args.bench_command]
    for attr, flag in _FLAGS:
        v = getattr(args, attr, None)
        if isinstance(v, list):
            parts += [flag, *map(str, v)]
        elif v is not None:
            parts += [flag, str(v)]
    return " ".join(shlex.quote(p) for p in parts)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``rummy benchmark`` sub-commands and their flags to ``parser``."""
    sub = parser.add_subparsers(dest="bench_command", metavar="SUBCOMMAND")
    p = sub.add_parser("list", help="the tasks with their versions, rules, anchors, protocol and budgets",
                       description="List the benchmark's tasks (a task never changes once published; "
                                   "a change is a new version).")
    p.add_argument("--json", action="store_true", help="print every task's full definition and match seeds as JSON")

    def common(q: argparse.ArgumentParser, anchors: bool = True, out: str = "folder for row.json (created)") -> None:
        q.add_argument("--task", required=True, help="task id, e.g. classic-2p-v1 (see `rummy benchmark list`)")
        q.add_argument("--out", required=True, metavar="DIR", help=out)
        q.add_argument("--match-seeds", type=int, default=None, metavar="N",
                       help="play only the first N of the task's match seeds (a smoke test: the row then says it "
                            "is not the protocol's)")
        q.add_argument("--workers", type=int, default=2, help="evaluation processes (results do not depend on it)")
        if anchors:
            q.add_argument("--anchors", nargs="+", default=None, metavar="ANCHOR",
                           help="play only these of the task's anchors (a smoke test: the row then says it is not "
                                "the protocol's)")
        q.add_argument("--quiet", action="store_true", help="no progress lines")

    p = sub.add_parser("eval", help="evaluate one agent under a task's protocol and write row.json",
                       description="Evaluate one agent under the task's protocol (duplicate matches against every "
                                   "anchor over the task's match seeds, every seat rotation) and write DIR/row.json.")
    common(p)
    p.add_argument("--agent", required=True, metavar="SPEC",
                   help="a make_agent name: random, greedy, heuristic, search[:OPTIONS], pretrained, ppo:PATH, "
                        "onnx:DIR, or MODULE:ATTR (an outside agent on PYTHONPATH)")
    p.add_argument("--name", default=None, help="the agent's name in the leaderboard (default: SPEC)")
    p.add_argument("--algorithm", default=None, help="the algorithm that trained it (written into the row)")
    p.add_argument("--library", default=None, help="the library it was trained with, e.g. cleanrl==1.2")
    p.add_argument("--budget-steps", type=int, default=None, metavar="N",
                   help="learner environment steps it was trained for (written into the row)")
    p.add_argument("--train-wall-s", type=float, default=None, metavar="S", help="its training wall-clock in seconds")
    p.add_argument("--train-seed", type=int, default=None, metavar="S",
                   help="its training seed (rows of one --algorithm and --budget-steps aggregate over seeds)")
    p.add_argument("--quick", action="store_true",
                   help="a pre-check: every anchor but the search, the slowest to play; the row "
                        "says it is not the protocol's and its command names the anchors played")

    p = sub.add_parser("train", help="train a reference algorithm under a task's budget, then evaluate it into row.json",
                       description="Train a reference algorithm (ppo, ppo-warmstart, rllib-ppo, dqn) with one seed "
                                   "under the task's budget, then evaluate it under the protocol into DIR/row.json "
                                   "(with its learning curve).")
    common(p)
    p.add_argument("--algo", required=True, help="ppo, ppo-warmstart, rllib-ppo or dqn")
    p.add_argument("--seed", type=int, required=True, help="training seed (>= 0)")
    p.add_argument("--budget", default=None,
                   help="a budget name of the task (default: its reference budget) or a number of learner steps "
                        "(fewer than the named budget's makes a smoke-test row)")

    p = sub.add_parser("anchors", help="the anchors' own rows and their crosstable (used by every row's rating)",
                       description="Evaluate every anchor of the task against the others under the protocol; write "
                                   "one row per anchor into DIR and the crosstable into DIR/anchors.json "
                                   "(copy it to benchmark/anchors/TASK.json to rate rows against it).")
    common(p, anchors=False)

    p = sub.add_parser("report", help="the leaderboard (Markdown) and plots from rows",
                       description="Aggregate rows into the leaderboard: per task and algorithm, the interquartile "
                                   "mean over training seeds (rliable) with 95% bootstrap intervals.")
    p.add_argument("rows", nargs="+", metavar="ROW", help="row.json files, folders holding one, or best-response JSON files")
    p.add_argument("--out", required=True, metavar="DIR", help="writes DIR/leaderboard.md and DIR/img/leaderboard_*.png")
    p.add_argument("--reps", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")

    p = sub.add_parser("best-response", help="exploitability proxy: train a best response against a frozen agent",
                       description="Train PPO against the frozen agent alone (fixed budget and seed), then report the "
                                   "best response's match win rate against it over the task's match seeds "
                                   "(lower is less exploitable).")
    common(p, anchors=False, out="folder for best_response.json and the training run (DIR/run/; created, and "
                                  "refused when it already holds a run)")
    p.add_argument("--agent", required=True, metavar="SPEC", help="the frozen agent (a make_agent name)")
    p.add_argument("--budget", type=int, default=250_000, metavar="N", help="learner steps of the best response (default 250000)")
    p.add_argument("--seed", type=int, default=0, help="the best response's training seed (default 0)")


def _check_anchors(task: Any, anchors: list[str] | None) -> None:
    bad = [a for a in anchors or [] if a not in task.anchors]
    if bad:
        raise ValueError(f"--anchors: {', '.join(bad)} not among task {task.id}'s anchors ({', '.join(task.anchors)})")


def quick_anchors(task: Any) -> list[str]:
    """``--quick``'s anchors: the task's anchors but the search (a row of them is not the protocol's)."""
    return [a for a in task.anchors if a.split(":", 1)[0] != "search"]


def _positive(name: str, v: Any, lo: int = 1) -> None:
    if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < lo):
        raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")


def _one_line(flag: str, text: str | None) -> None:
    """A flag whose text goes into the row and onto the leaderboard: one line, not blank."""
    if text is not None and (not text.strip() or any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text)):
        raise ValueError(f"{flag} must be one line of text, not blank and without control characters, got {text!r}")


def _match_seeds(task: Any, n: int | None) -> None:
    """``--match-seeds``: None, or an int in 1 .. the task's match seeds."""
    _positive("--match-seeds", n)
    if n is not None and n > task.match_seeds:
        raise ValueError(f"--match-seeds must be at most task {task.id}'s {task.match_seeds} match seeds, got {n}")


def _out_dir(path: str) -> Path:
    if not path.strip():
        raise ValueError("--out needs a folder name, got an empty one")
    d = Path(path)
    if d.exists() and not d.is_dir():
        raise ValueError(f"--out {path!r} is a file; give a folder")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"--out {path!r} cannot be used as an output folder: {e}") from None
    return d


def _say(args: argparse.Namespace, msg: str) -> None:
    if not getattr(args, "quiet", False):
        print(msg, file=sys.stderr, flush=True)


def _printer(args: argparse.Namespace):
    def progress(anchor: str, r: dict[str, Any], secs: float) -> None:
        lo, hi = r["match_win_ci"]
        _say(args, f"  vs {anchor}: {r['match_win_rate']:.1%} of {r['matches']} matches [{lo:.1%}, {hi:.1%}], "
                   f"{r['points_per_hand']:+.2f} points per hand, hands {r['hand_win_rate']:.1%} ({secs:.0f} s)")
    return progress


def cmd_list(args: argparse.Namespace) -> int:
    from .tasks import TASKS

    if args.json:
        print(json.dumps([dict(t.to_json(), fingerprint=t.fingerprint(), match_seed_list=t.seeds())
                          for t in TASKS.values()], indent=1))
        return 0
    from rich.console import Console
    from rich.table import Table

    tab = Table(title="rummy-env benchmark tasks (docs/leaderboard.md)")
    for c in ("task", "table", "players", "anchors", "protocol", "budgets (learner steps)", "fingerprint"):
        tab.add_column(c)
    from rummy_env.rules import Rules

    from .anchor_play import superseded

    for t in TASKS.values():
        base = Rules.preset(t.rules["preset"], num_players=t.players).options()
        changed = [f"{k} {v}" for k, v in t.rules.items() if k not in ("preset", "target") and base.get(k) != v]
        anchors = ", ".join(t.anchors)
        if t.anchor_play:
            old = superseded(t)
            anchors += " (play pinned" + (f"; superseded since: {', '.join(old)}" if old else "") + ")"
        tab.add_row(t.id, f"{t.rules['preset']} (target {t.rules.get('target')}{''.join(', ' + c for c in changed)})",
                    str(t.players), anchors,
                    f"{t.match_seeds} match seeds x {t.rotations} rotations, seed {t.protocol_seed}",
                    ", ".join(f"{k}={v:,}" + (" (reference)" if k == t.reference_budget else "")
                              for k, v in t.budgets.items()), t.fingerprint())
    Console(width=max(160, Console().width)).print(tab)
    print("every option of each table: rummy benchmark list --json")
    return 0


def _evaluate_into_row(args: argparse.Namespace, task: Any, spec: str, name: str, command: str,
                       algorithm: dict | None = None, training: dict | None = None, deviations: list | None = None,
                       out: Path | None = None) -> dict[str, Any]:
    from .protocol import make_row, play_protocol, save_row

    n = task.match_seeds if args.match_seeds is None else args.match_seeds
    _say(args, f"[benchmark] {task.id}: {name} against {', '.join(args.anchors or task.anchors)}, {n} match seeds x "
               f"{task.rotations} rotations each")
    t0 = time.perf_counter()
    res = play_protocol(task, spec, match_seeds=n, workers=args.workers, anchors=args.anchors,
                        progress=_printer(args))
    row = make_row(task, spec, name, res, match_seeds=n, workers=args.workers, eval_wall_s=time.perf_counter() - t0,
                   command=command, algorithm=algorithm, training=training, deviations=deviations or [])
    path = save_row(row, out or Path(args.out))
    _say(args, f"[benchmark] rating {row['rating']['value']:+.0f} Elo ({row['rating']['zero']} = 0); "
               f"{'protocol complete' if row['protocol_complete'] else 'NOT the protocol: ' + '; '.join(row['deviations'])}")
    print(f"wrote {path}")
    return row


def cmd_eval(args: argparse.Namespace) -> int:
    from rummy_env.agents import make_agent

    from .tasks import get_task

    task = get_task(args.task)
    _check_anchors(task, args.anchors)
    if args.quick:
        if args.anchors:
            raise ValueError("--quick plays every anchor but the search; give --quick or --anchors, not both")
        args.anchors = quick_anchors(task)
    _match_seeds(task, args.match_seeds)
    _positive("--workers", args.workers)
    _positive("--budget-steps", args.budget_steps)
    _positive("--train-seed", args.train_seed, lo=0)
    if args.train_wall_s is not None and not (math.isfinite(args.train_wall_s) and args.train_wall_s >= 0):
        raise ValueError(f"--train-wall-s must be a finite number of seconds >= 0, got {args.train_wall_s!r}")
    for flag, text in (("--name", args.name), ("--algorithm", args.algorithm), ("--library", args.library)):
        _one_line(flag, text)
    make_agent(args.agent)  # a bad spec fails before any folder is made
    out = _out_dir(args.out)
    algorithm = None
    if args.algorithm or args.library:
        algorithm = {"name": args.algorithm, "library": args.library, "library_version": None}
    training = None
    deviations = []
    if args.budget_steps is not None:
        budget_name = next((k for k, v in task.budgets.items() if v == args.budget_steps), None)
        training = {"budget_name": budget_name, "budget": args.budget_steps, "timesteps": args.budget_steps,
                    "seed": args.train_seed, "wall_time_s": args.train_wall_s, "curve": [], "extra_env_steps": 0}
        if budget_name is None:
            deviations.append(f"trained for {args.budget_steps:,} learner steps, not a budget of the task "
                              f"({', '.join(f'{k} = {v:,}' for k, v in task.budgets.items())})")
    _evaluate_into_row(args, task, args.agent, args.name or args.agent, _command(args), algorithm, training,
                       deviations, out=out)
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from .algos import get_algo
    from .tasks import get_task

    task = get_task(args.task)
    algo = get_algo(args.algo)
    _check_anchors(task, args.anchors)
    _positive("--seed", args.seed, lo=0)
    _match_seeds(task, args.match_seeds)
    _positive("--workers", args.workers)
    b = args.budget
    if b is None or b in task.budgets:
        budget_name, steps = b or task.reference_budget, task.budget(b)
    elif str(b).isdigit() and int(b) >= 1:
        steps = int(b)
        budget_name = next((k for k, v in task.budgets.items() if v == steps), None)
    else:
        raise ValueError(f"--budget must be one of task {task.id}'s budgets ({', '.join(task.budgets)}) or a "
                         f"number of learner steps >= 1, got {b!r}")
    deviations = []
    if budget_name is None:
        ref = task.budget()
        deviations.append(f"trained for {steps:,} learner steps, not a budget of the task "
                          f"(reference {task.reference_budget} = {ref:,})")
    out = _out_dir(args.out)
    if (out / "run").exists() and any((out / "run").iterdir()):
        raise ValueError(f"{out / 'run'} already holds a run; give a new --out folder")
    _say(args, f"[benchmark] training {algo.name} ({algo.library}) on {task.id}, seed {args.seed}, {steps:,} learner steps")
    try:
        res = algo.run(task, budget_name or "custom", steps, args.seed, out, verbose=0 if args.quiet else 1)
    except ImportError as e:
        raise ValueError(f"--algo {algo.name} needs the {algo.extra} extra (pip install -e '.[{algo.extra}]'): {e}") from None
    tr = res["training"]
    if tr["timesteps"] < steps:
        deviations.append(f"stopped at {tr['timesteps']:,} of {steps:,} learner steps")
    tr["command"] = _command(args)
    name = f"{algo.name} (seed {args.seed})"
    _evaluate_into_row(args, task, res["agent"], name, _command(args), res["algorithm"], tr, deviations, out=out)
    return 0


def cmd_anchors(args: argparse.Namespace) -> int:
    from .protocol import make_row, play_protocol, save_row
    from .tasks import get_task

    task = get_task(args.task)
    _match_seeds(task, args.match_seeds)
    _positive("--workers", args.workers)
    out = _out_dir(args.out)
    n = task.match_seeds if args.match_seeds is None else args.match_seeds
    results: dict[str, dict[str, Any]] = {a: {} for a in task.anchors}
    times: dict[str, float] = {a: 0.0 for a in task.anchors}
    heads_up = task.players == 2
    for i, a in enumerate(task.anchors):
        # heads-up, each pair is played once and gives both anchors' results (the same
        # duplicate matches seen from each side); with more players each anchor holds one
        # seat against copies of the other, so every ordered pair is its own evaluation
        others = list(task.anchors[i + 1:]) if heads_up else [b for b in task.anchors if b != a]
        if not others:
            continue
        _say(args, f"[benchmark] anchor {a} against {', '.join(others)}")
        printer = _printer(args)

        def progress(b: str, res: dict[str, Any], dt: float, a: str = a, printer=printer) -> None:
            times[a] += dt
            if heads_up:
                times[b] += dt
                results[b][a] = res.pop("opponent")
            results[a][b] = res
            if printer:
                printer(b, res, dt)

        play_protocol(task, a, match_seeds=n, workers=args.workers, anchors=others, progress=progress,
                      opponent_stats=heads_up)
    results = {a: {b: results[a][b] for b in task.anchors if b in results[a]} for a in task.anchors}
    table = {a: {b: {"wins": r["wins"], "games": r["games"]} for b, r in res.items()} for a, res in results.items()}
    cross = {"task": task.id, "fingerprint": task.fingerprint(), "match_seeds": n,
             "complete": n == task.match_seeds, "crosstable": table, "command": _command(args)}
    (out / "anchors.json").write_text(json.dumps(cross, indent=1) + "\n")
    print(f"wrote {out / 'anchors.json'}")
    for a, res in results.items():
        row = make_row(task, a, a, res, match_seeds=n, workers=args.workers, eval_wall_s=times[a],
                       command=_command(args), self_anchor=a, crosstable=table)
        print(f"wrote {save_row(row, out / a.replace(':', '_').replace('=', '-'))}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import load_inputs, write_report

    _positive("--reps", args.reps)
    _positive("--seed", args.seed, lo=0)
    rows, brs = load_inputs(args.rows)
    out = _out_dir(args.out)
    command = " ".join(["rummy benchmark report", *map(shlex.quote, args.rows), "--out", shlex.quote(args.out)])
    for p in write_report(rows, brs, out, reps=args.reps, seed=args.seed, command=command):
        print(f"wrote {p}")
    return 0


def cmd_best_response(args: argparse.Namespace) -> int:
    from .best_response import best_response
    from .protocol import check_fits
    from .tasks import get_task

    task = get_task(args.task)
    _positive("--budget", args.budget)
    _positive("--seed", args.seed, lo=0)
    _match_seeds(task, args.match_seeds)
    _positive("--workers", args.workers)
    check_fits(task, args.agent)  # a bad agent, or one for another table, fails before any folder is made
    run = Path(args.out) / "run"
    if args.out.strip() and run.is_dir() and any(run.iterdir()):
        raise ValueError(f"{run} already holds a run; give a new --out folder")
    out = _out_dir(args.out)
    res = best_response(task, args.agent, args.budget, args.seed, out, match_seeds=args.match_seeds,
                        workers=args.workers, command=_command(args), verbose=0 if args.quiet else 1)
    r = res["result"]
    lo, hi = r["match_win_ci"]
    print(f"best response against {args.agent}: {r['match_win_rate']:.1%} [{lo:.1%}, {hi:.1%}] of {r['matches']} "
          f"matches, {r['points_per_hand']:+.2f} points per hand")
    print(f"wrote {out / 'best_response.json'}")
    return 0


def main(args: argparse.Namespace) -> int:
    """Run ``rummy benchmark SUBCOMMAND``; returns the exit code.

    Raises:
        ValueError: a bad task, agent, algorithm, budget or folder (printed by the ``rummy``
            dispatcher, exit 2).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cmd = getattr(args, "bench_command", None)
    if cmd is None:
        print("rummy benchmark: give a sub-command: list, eval, train, anchors, report, best-response "
              "(rummy benchmark --help)", file=sys.stderr)
        return 2
    if cmd == "list":
        return cmd_list(args)
    if cmd == "report":
        return cmd_report(args)
    return {"eval": cmd_eval, "train": cmd_train, "anchors": cmd_anchors,
            "best-response": cmd_best_response}[cmd](args)
