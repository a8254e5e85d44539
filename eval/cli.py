"""``rummy eval``: a duplicate-deal tournament between agents.

``rummy eval --agents NAME NAME [NAME ...] --rules PRESET --deals N --seed S
[--out DIR] [--players N] [--hands | --matches] [--workers W] [--decision-limit S]``

On a table with a target (every preset but ``practice``) it plays duplicate
matches to the target by default: each of the ``--deals`` match seeds is played
once per seat rotation over the same sequence of deals. The results table leads
with the match win rate (a split counts half), then points per hand, then the
hand win rate, each with a 95% interval; ``--hands`` plays single hands instead.
It also prints the ratings; ``--out DIR`` also writes ``summary.csv``,
``games.csv``, ``results.json`` and ``win_rates.png`` (win rates and points per hand).

Each call into an agent has ``--decision-limit`` seconds (``DECISION_LIMIT`` by
default). An agent that raises or exits, ends its process, goes past the limit or
answers no legal action id stops the tournament with one line naming it, its seat and
what it did (``rummy_env.eval.referee.AgentError``), exit status 2, and no files.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from typing import Any


from .referee import DECISION_LIMIT, MAX_LIMIT, check_limit

MAX_SEED = 2**62 - 1
"""The largest ``--seed`` (the same bound as ``rummy web --seed``)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``rummy eval`` flags to ``parser``."""
    parser.add_argument("--agents", nargs="+", required=True, metavar="NAME",
                        help="two or more agents: random, greedy, heuristic, heuristic:OPTIONS (heuristic:holding, "
                             "heuristic:cutting, NAME=VALUE weights), search, search:OPTIONS, pretrained, "
                             "pretrained:PRESET, ppo:PATH, onnx:DIR, or MODULE:ATTR (an outside agent on PYTHONPATH)")
    parser.add_argument("--rules", default="classic", help="rules preset (default: classic)")
    parser.add_argument("--deals", type=int, default=200,
                        help="deals per table (match seeds when playing matches); each is played in every seat rotation")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    parser.add_argument("--out", default=None, metavar="DIR", help="write CSV, JSON and a PNG of win rates here")
    parser.add_argument("--players", type=int, default=None, help="seats per table (default: the preset's smallest)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--matches", dest="matches", action="store_const", const=True, default=None,
                      help="play full matches to the target (the default when the rules have a target)")
    mode.add_argument("--hands", dest="matches", action="store_const", const=False,
                      help="play single hands instead of matches")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes, capped at the pieces of work (chunks of deals, so never more "
                             "than --deals); results do not depend on it (default 1)")
    parser.add_argument("--decision-limit", type=float, default=DECISION_LIMIT, metavar="SECONDS",
                        help=f"wall-clock seconds an agent has for each decision (each act() call, and each seed() "
                             f"before a game); past it the tournament stops with one line naming the agent, exit "
                             f"status 2 (default {DECISION_LIMIT:g}; 0: no limit)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _fmt_rate(rate: float, ci: list[float]) -> str:
    lo, hi = ci
    return f"{100 * rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def _fmt_pts(row: dict) -> str:
    lo, hi = row["points_ci"]
    return f"{row['points_per_hand']:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def render(res: dict[str, Any]) -> str:
    """The results as plain text tables (what the terminal shows without colour)."""
    from rich.console import Console

    con = Console(width=120, record=True, file=open(os.devnull, "w"), color_system=None)
    for t in _tables(res):
        con.print(t)
    return con.export_text()


def output_console() -> "Console":
    """A rich ``Console`` for a command's tables: the terminal's width on a terminal; piped or
    redirected (rich would take 80 columns), at least 200 wide (``COLUMNS`` may widen it), so
    long agent names (``onnx:DIR``) and many columns are not squeezed or cut."""
    from rich.console import Console

    if sys.stdout.isatty():
        return Console()
    cols = os.environ.get("COLUMNS", "")
    return Console(width=max(200, int(cols) if cols.isdigit() else 0))


def _seconds(dt: float) -> str:
    """A duration in seconds for a summary line: one decimal from 1 s, two significant
    digits below (``0.034 s``, never ``0.0 s``)."""
    return f"{dt:.1f} s" if dt >= 1 else f"{dt:.2g} s"


def _tables(res: dict[str, Any]) -> list:
    from rich.table import Table
    from rich.text import Text

    st = res["settings"]
    matches = st["matches"]
    out = []
    title = (f"{st['players']}-player tables, rules {json.dumps(st['rules'])}, {st['deals']} "
             f"{'match seeds' if matches else 'deals'} x {st['rotations']} rotations, seed {st['seed']}"
             + (", duplicate matches to the target" if matches else ", single hands"))
    t = Table(title=title)
    cols = (("table", "agent", "matches", "match win rate [95% CI]", "points/hand [95% CI]", "hands",
             "hand win rate [95% CI]") if matches else
            ("table", "agent", "hands", "won", "void", "hand win rate [95% CI]", "points/hand [95% CI]"))
    for col in cols:
        t.add_column(col, justify="left" if col in ("table", "agent") else "right", no_wrap=True)
    for tab in res["tables"]:
        label = " vs ".join(dict.fromkeys(tab["table"]))
        for i, row in enumerate(tab["results"]):
            if matches:
                cells = (str(row["matches"]), _fmt_rate(row["match_win_rate"], row["match_win_ci"]), _fmt_pts(row),
                         str(row["hands"]), _fmt_rate(row["hand_win_rate"], row["hand_win_ci"]))
            else:
                cells = (str(row["hands"]), f"{row['hand_wins']:g}", str(row["voids"]),
                         _fmt_rate(row["hand_win_rate"], row["hand_win_ci"]), _fmt_pts(row))
            t.add_row(label if i == 0 else "", row["agent"], *cells)
        t.add_section()
    out.append(t)
    rt = res["ratings"]
    # a short title (a long one wraps over the narrow table's width); what the numbers
    # are follows the table as one line
    elo = rt["kind"] == "elo"
    r = Table(title="ratings (Elo)" if elo else "ratings (OpenSkill)")
    r.add_column("agent")
    if rt["kind"] == "elo":
        r.add_column("Elo", justify="right")
        for nm, v in sorted(rt["ratings"].items(), key=lambda kv: -kv[1]):
            r.add_row(nm, f"{v:.0f}")
    else:
        for c in ("mu", "sigma", "ordinal"):
            r.add_column(c, justify="right")
        for nm, v in sorted(rt["ratings"].items(), key=lambda kv: -kv[1]["ordinal"]):
            r.add_row(nm, f"{v['mu']:.2f}", f"{v['sigma']:.2f}", f"{v['ordinal']:.2f}")
    out.append(r)
    out.append(Text("Elo: a Bradley-Terry fit of the results, mean 1500" if elo
                    else "OpenSkill: Plackett-Luce; ordinal = mu - 3 sigma, the ranking's key"))
    return out


def write_outputs(res: dict[str, Any], out_dir: str) -> list[str]:
    """Write ``summary.csv`` (one row per table and agent), ``games.csv`` (one row per
    game), ``results.json`` (settings, tables, agents, ratings) and ``win_rates.png``
    into ``out_dir`` (created). Returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    p = os.path.join(out_dir, "summary.csv")
    with open(p, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["table", "agent", "matches", "match_win_rate", "match_win_lo", "match_win_hi",
                    "points_per_hand", "points_lo", "points_hi", "hands", "hand_wins", "voids", "hand_win_rate",
                    "hand_win_lo", "hand_win_hi"])
        for tab in res["tables"]:
            for row in tab["results"]:
                mt = ([row["matches"], row["match_win_rate"], *row["match_win_ci"]] if "matches" in row
                      else ["", "", "", ""])
                w.writerow([" ".join(tab["table"]), row["agent"], *mt, row["points_per_hand"], *row["points_ci"],
                            row["hands"], row["hand_wins"], row["voids"], row["hand_win_rate"],
                            *row["hand_win_ci"]])
    paths.append(p)
    p = os.path.join(out_dir, "games.csv")
    names = res["settings"]["agents"]
    n = res["settings"]["players"]
    with open(p, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["deal", "table", "rotation", *[f"seat{s}" for s in range(n)], "winner_seat", "outcome",
                    "rummy", "turns", "hands", *[f"payoff{s}" for s in range(n)],
                    *[f"hand_points{s}" for s in range(n)], *[f"hand_wins{s}" for s in range(n)]])
        for g in res["records"]:
            w.writerow([g["deal"], g["table"], g["rotation"], *[names[a] for a in g["seats"]],
                        "" if g["winner"] is None else g["winner"], g["outcome"], int(g["rummy"]),
                        g["turns"], g["hands"], *g["payoffs"], *g["hand_points"], *g["hand_wins"]])
    paths.append(p)
    p = os.path.join(out_dir, "results.json")
    with open(p, "w") as f:
        json.dump({k: v for k, v in res.items() if k != "records"}, f, indent=2)
    paths.append(p)
    p = os.path.join(out_dir, "win_rates.png")
    plot_win_rates(res, p)
    paths.append(p)
    return paths


def plot_win_rates(res: dict[str, Any], path: str) -> None:
    """Two horizontal bar charts side by side (PNG): each agent's win rate at each
    table (matches when the tournament played matches) and its mean points per hand,
    both with 95% error bars. One row
    per agent and table, labelled on the y axis with room for every label (the
    figure grows with the number of rows), so labels never overlap."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    st = res["settings"]
    unit = "match" if st["matches"] else "hand"
    labels, rates, r_err, pts, p_err = [], [], [[], []], [], [[], []]
    for tab in res["tables"]:
        tl = " vs ".join(dict.fromkeys(tab["table"]))
        for row in tab["results"]:
            labels.append(f"{row['agent']}  ({tl})" if len(res["tables"]) > 1 else row["agent"])
            rates.append(row["win_rate"])
            r_err[0].append(max(0.0, row["win_rate"] - row["win_ci"][0]))
            r_err[1].append(max(0.0, row["win_ci"][1] - row["win_rate"]))
            pts.append(row["mean_points"])
            p_err[0].append(max(0.0, row["mean_points"] - row["points_ci"][0]))
            p_err[1].append(max(0.0, row["points_ci"][1] - row["mean_points"]))
    ys = list(range(len(labels)))[::-1]  # the first row on top
    width = 7 + 0.07 * max(len(x) for x in labels)
    fig, (a1, a2) = plt.subplots(1, 2, sharey=True, figsize=(width, 1.6 + 0.4 * len(labels)), layout="constrained")
    fig.get_layout_engine().set(w_pad=0.15, wspace=0.08)  # the panels' x labels apart
    a1.barh(ys, rates, xerr=r_err, capsize=3, color="#4477aa")
    a1.set_xlim(0, 1)
    a1.axvline(1 / st["players"], color="grey", lw=0.8, ls="--")
    a1.set_xlabel(f"{unit} win rate (dashed: 1 / players)")
    a2.barh(ys, pts, xerr=p_err, capsize=3, color="#cc6677")
    a2.axvline(0, color="grey", lw=0.8)
    a2.set_xlabel("points per hand")
    a1.set_yticks(ys)
    a1.set_yticklabels(labels, fontsize=8)
    fig.suptitle(f"{st['players']} players, {json.dumps(st['rules'])}, {st['deals']} deals (95% CI)", fontsize=9)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _processes(deals: int, workers: int) -> str:
    """The summary's note of the processes that played: ``--workers`` capped at the
    pieces of work (``worker_processes``) says so."""
    from .tournament import worker_processes

    n = worker_processes(deals, workers)
    text = "1 worker process" if n == 1 else f"{n} worker processes"
    if n < workers:
        text += f": --workers {workers} capped at the {n} piece{'' if n == 1 else 's'} of work"
    return text


def main(args: argparse.Namespace) -> int:
    """Run ``rummy eval``; returns the exit code.

    Raises:
        ValueError: bad agent names or paths, rules, deals, seed, workers or decision
            limit; or an ``AgentError``, an agent that failed during play (the ``rummy``
            dispatcher prints the message, one line, and exits 2).
    """
    from .tournament import make_tables, run_tournament

    if args.out is not None and not args.out.strip():
        raise ValueError("--out must name an output folder, got an empty path (leave --out out to write no files)")
    for flag, v, what in (("--workers", args.workers, " (worker processes)"), ("--deals", args.deals, "")):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{flag} must be an int >= 1{what}, got {v!r}")
    if args.out:  # fail before the tournament, not after it

        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise ValueError(f"--out {args.out!r} cannot be used as an output folder: {e}") from None

    from rummy_env.agents import make_agent
    from rummy_env.rules import Rules

    limit = getattr(args, "decision_limit", DECISION_LIMIT)  # a Namespace made by hand may leave it out
    try:
        check_limit(limit)
    except ValueError:
        raise ValueError(f"--decision-limit must be a number of seconds in 0..{MAX_LIMIT:g} (0: no limit), "
                         f"got {limit!r}") from None
    if len(args.agents) < 2:
        raise ValueError("--agents needs at least two agents")
    if not 0 <= args.seed <= MAX_SEED:
        raise ValueError(f"--seed must be an int in 0..{MAX_SEED} (2**62 - 1), got {args.seed}")
    for nm in args.agents:
        make_agent(nm)
    rules = Rules.make(args.rules, num_players=args.players)
    if args.matches and rules.target is None:
        raise ValueError(f"rules {args.rules!r} play a single hand; --matches needs a preset with a target")
    from .tournament import resolve_matches

    matches = resolve_matches(rules, args.matches)
    n_tables = len(make_tables(len(args.agents), rules.num_players))
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=args.deals, unit="match seed" if matches else "deal", desc=f"{n_tables} table(s) x {rules.num_players} rotations",
                   file=sys.stderr)
    t0 = time.perf_counter()
    try:
        res = run_tournament(args.agents, rules=rules, deals=args.deals, seed=args.seed, matches=matches,
                             workers=args.workers, progress=bar.update if bar else None,
                             decision_limit=limit)
    finally:
        if bar:
            bar.close()
    dt = time.perf_counter() - t0
    con = output_console()
    for t in _tables(res):
        con.print(t)
    con.print(f"{res['settings']['games']} games in {_seconds(dt)} ({_processes(args.deals, args.workers)})")
    if args.out:
        for p in write_outputs(res, args.out):
            con.print(f"wrote {p}")
    return 0
