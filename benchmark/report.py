"""``rummy benchmark report``: the leaderboard page and its plots from rows.

Rows of the same task and algorithm (different training seeds) are aggregated as the
**interquartile mean** (IQM: the mean of the middle 50% of the seeds, a 25% trimmed
mean; rliable's ``metrics.aggregate_iqm``, Agarwal et al. 2021) with **95% percentile
bootstrap intervals** over the seeds (``iqm_interval``). Single
agents (the anchors, the shipped policy, an outside agent) are listed with their own
per-match intervals. Rows that are not the protocol's (``protocol_complete`` false)
are never aggregated: they are listed apart as smoke tests.

Rows arrive by pull request, so every input is checked before any is used
(``load_inputs``): one refused file stops the report with a line per refused file, and
nothing is written. The text a row brings (names, commands) is escaped where the page
shows it (``_text``, ``_code``) and in the plots' labels (``_plain``).
"""
from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .schema import BR_FORMAT, read_json, validate_best_response, validate_row
from .tasks import get_task


def iqm(values: Sequence[float]) -> float:
    """Interquartile mean of ``values`` (``scipy.stats.trim_mean(values, 0.25)``, as
    rliable's ``metrics.aggregate_iqm``: ``floor(n/4)`` values cut from each end).

    Raises:
        ValueError: no values.
    """
    from rliable import metrics

    a = np.asarray(values, dtype=np.float64).reshape(-1, 1)
    if a.size == 0:
        raise ValueError("iqm needs at least one value")
    return float(metrics.aggregate_iqm(a))


def iqm_interval(values: Sequence[float], reps: int = 2000, seed: int = 0,
                 confidence: float = 0.95) -> tuple[float, float, float]:
    """``(iqm, low, high)``: the IQM over runs with a percentile bootstrap interval
    (``reps`` resamples of the runs with replacement, seeded).

    The resampling is arch's ``IIDBootstrap`` with a seeded ``numpy`` Generator: the
    class rliable's ``StratifiedBootstrap`` extends, with a single stratum (each entry
    aggregates one task). rliable's own ``get_interval_estimates`` is not used because
    it gave different intervals for the same ``RandomState`` (3 distinct intervals in
    20 calls with rliable 1.2.0 and arch 7.2.0), and a regenerated leaderboard must
    print the same digits.

    Raises:
        ValueError: no values, or ``reps`` < 1.
    """
    from arch.bootstrap import IIDBootstrap
    from rliable import metrics

    a = np.asarray(values, dtype=np.float64).reshape(-1, 1)
    if a.size == 0:
        raise ValueError("iqm_interval needs at least one value")
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise ValueError(f"reps must be an int >= 1, got {reps!r}")
    point = float(metrics.aggregate_iqm(a))
    if np.all(a == a[0]):
        return point, point, point
    bs = IIDBootstrap(a, seed=np.random.default_rng(seed))
    ci = bs.conf_int(lambda x: np.array([metrics.aggregate_iqm(x)]), reps=reps, method="percentile",
                     size=confidence)
    return point, float(ci[0][0]), float(ci[1][0])


def load_inputs(paths: Sequence[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows and best-response files from files or folders (every ``*.json`` under a
    folder but an anchors' ``anchors.json``; a file reached twice is read once).

    Every file is checked before any is used: a row by ``validate_row`` and
    ``check_rating``, a best response by ``validate_best_response``; then across files,
    among the rows that say they are the protocol's, one row per training seed of an
    algorithm at a budget and one row per agent name on a task, and one best response per
    frozen agent, budget and seed on a task (a copy would count twice).

    Raises:
        ValueError: one line per refused input (``FILE: FIELD: what is wrong``) after a
            first line saying how many; or no rows among the inputs.
    """
    from .protocol import check_rating

    files: list[Path] = []
    refused: list[str] = []
    for s in paths:
        p = Path(s)
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            found = sorted(q for q in p.rglob("*.json") if q.name != "anchors.json" and q.is_file())
            if not found:
                refused.append(f"{s}: holds no row.json or best_response.json")
            files += found
        else:
            refused.append(f"{s}: no such file or folder")
    rows: list[tuple[Path, dict[str, Any]]] = []
    brs: list[tuple[Path, dict[str, Any]]] = []
    seen: set[Path] = set()
    for p in files:
        if p.resolve() in seen:
            continue
        seen.add(p.resolve())
        try:
            data = read_json(p)
        except ValueError as e:
            refused.append(str(e))
            continue
        try:
            if isinstance(data, dict) and data.get("format") == BR_FORMAT:
                brs.append((p, validate_best_response(data)))
            else:
                rows.append((p, check_rating(validate_row(data))))
        except ValueError as e:
            refused.append(f"{p}: {e}")
    refused += _duplicates(rows, brs)
    if refused:
        raise ValueError(f"{len(refused)} input{'s' if len(refused) > 1 else ''} refused, nothing written:\n"
                         + "\n".join(refused))
    if not rows:
        raise ValueError("no benchmark rows among the inputs")
    return [r for _, r in rows], [b for _, b in brs]


def _duplicates(rows: Sequence[tuple[Path, dict[str, Any]]], brs: Sequence[tuple[Path, dict[str, Any]]]) -> list[str]:
    """One line per file that repeats an earlier one's entry (``load_inputs``)."""
    out: list[str] = []
    first: dict[tuple, Path] = {}

    def once(key: tuple, p: Path, msg: str) -> bool:
        if key in first:
            out.append(f"{p}: {msg} {first[key]} (one file each)")
            return False
        first[key] = p
        return True

    for p, r in rows:
        if not r["protocol_complete"]:
            continue
        task, alg, tr = r["task"]["id"], (r["algorithm"] or {}).get("name"), r["training"]
        if alg and tr is not None and not once(("seed", task, alg, tr["budget"], tr["seed"]), p,
                                               f"training.seed: {alg} at {tr['budget']:,} steps on {task} with seed "
                                               f"{tr['seed']} is also in"):
            continue
        once(("name", task, r["agent"]["name"]), p, f"agent.name: {r['agent']['name']!r} on {task} is also the name "
             f"of the row in")
    for p, b in brs:
        if b["protocol_complete"]:
            once(("br", b["task"], b["agent"], b["budget"], b["seed"]), p,
                 f"agent: the best response to {b['agent']!r} on {b['task']} at {b['budget']:,} steps with seed "
                 f"{b['seed']} is also in")
    return out


_ESCAPES = {c: f"&#{ord(c)};" for c in "\\`*_~|$"}
_ESCAPES.update({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def _text(s: Any) -> str:
    """``s`` as literal text in a Markdown table cell, for Python-Markdown (the docs site)
    and GitHub alike: the characters that would make HTML, emphasis, code, math, a
    strike-through or a new cell become character references, as does a ``]`` that
    would close a link or an image; a control character (a row refuses them) becomes a
    space, so it cannot end the table row."""
    out = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else _ESCAPES.get(c, c) for c in str(s))
    return re.sub(r"\](?=\s?[(\[])", "&#93;", out)


def _code(s: Any) -> str:
    """``s`` as inline code in a Markdown table cell: a backtick span when it holds no
    backtick, ``|`` or control character, else ``<code>`` around ``_text(s)`` (a backtick
    would end the span, and GitHub splits cells at a ``|`` even inside one)."""
    s = str(s)
    if any(c in "`|" or unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in s):
        return f"<code>{_text(s)}</code>"
    return f"`{s}`"


def _plain(s: Any) -> str:
    """``s`` as literal text in a matplotlib label (a ``$`` would start mathtext)."""
    return str(s).replace("$", r"\$")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _ci(lo: float, hi: float, pct: bool = True) -> str:
    return f"[{_pct(lo)}, {_pct(hi)}]" if pct else f"[{lo:+.2f}, {hi:+.2f}]"


def _short(anchor: str) -> str:
    return anchor.split(":")[0] if anchor.startswith("search") else anchor


def aggregate(rows: Sequence[dict[str, Any]], reps: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """Per (task, algorithm, budget) of the protocol-complete rows with an algorithm: the
    seeds, and per anchor the IQM [95% bootstrap interval] of the match win rate, points
    per hand and hand win rate; the IQM of the rating; the median training wall-clock."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        alg = r.get("algorithm") or {}
        if not r["protocol_complete"] or not alg.get("name") or r.get("training") is None:
            continue
        key = (r["task"]["id"], alg["name"], r["training"].get("budget"))
        groups.setdefault(key, []).append(r)
    out = []
    for (task, name, budget), rs in sorted(groups.items()):
        anchors = list(rs[0]["results"])
        per = {}
        for a in anchors:
            got = [r["results"][a] for r in rs if a in r["results"]]
            per[a] = {k: iqm_interval([g[k] for g in got], reps=reps, seed=seed)
                      for k in ("match_win_rate", "points_per_hand", "hand_win_rate")}
        rating = iqm_interval([r["rating"]["value"] for r in rs], reps=reps, seed=seed)
        walls = [r["training"]["wall_time_s"] for r in rs if r["training"].get("wall_time_s") is not None]
        alg = rs[0]["algorithm"]
        out.append({"task": task, "algorithm": name, "library": alg.get("library"),
                    "library_version": alg.get("library_version"), "budget": budget,
                    "seeds": sorted(r["training"]["seed"] for r in rs if r["training"].get("seed") is not None),
                    "runs": len(rs), "anchors": per, "rating": rating,
                    "train_wall_s_median": float(np.median(walls)) if walls else None,
                    "eval_wall_s_median": float(np.median([r["evaluation"]["wall_time_s"] for r in rs])),
                    "rows": rs})
    return out


def _plot_curves(groups: list[dict[str, Any]], task: str, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gs = [g for g in groups if g["task"] == task and any(r["training"]["curve"] for r in g["rows"])]
    if not gs:
        return False
    from matplotlib.ticker import FuncFormatter

    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex="col", sharey="row")
    for i, g in enumerate(gs):
        colour = f"C{i}"
        for k, r in enumerate(g["rows"]):
            c = r["training"]["curve"]
            xs = [p["timesteps"] for p in c]
            ws = [p["wall_time_s"] / 60 for p in c]
            ys = [100 * p["match_win_rate"] for p in c]
            ps = [p["points_per_hand"] for p in c]
            label = _plain(f"{g['algorithm']} ({len(g['rows'])} seeds)") if k == 0 else None
            axes[0, 0].plot(xs, ys, color=colour, alpha=0.6, marker=".", label=label)
            axes[0, 1].plot(ws, ys, color=colour, alpha=0.6, marker=".")
            axes[1, 0].plot(xs, ps, color=colour, alpha=0.6, marker=".")
            axes[1, 1].plot(ws, ps, color=colour, alpha=0.6, marker=".")
    axes[1, 0].set_xlabel("learner environment steps")
    axes[1, 0].xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:.0f}k"))
    axes[1, 1].set_xlabel("wall-clock (minutes, each row's machine)")
    axes[0, 0].set_ylabel("match win rate vs heuristic (%)\n40 matches a point")
    axes[1, 0].set_ylabel("points per hand vs heuristic")
    for ax in axes[0]:
        ax.axhline(50, color="grey", lw=0.8, ls="--")
    for ax in axes[1]:
        ax.axhline(0, color="grey", lw=0.8, ls="--")
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="best", fontsize=8)
    fig.suptitle(f"{task}: learning curves (one line per training seed)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _plot_iqm(groups: list[dict[str, Any]], singles: list[dict[str, Any]], task: str, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gs = [g for g in groups if g["task"] == task]
    ss = [r for r in singles if r["task"]["id"] == task and "heuristic" in r["results"]]
    if not gs and not ss:
        return False
    labels, vals, los, his = [], [], [], []
    for g in gs:
        if "heuristic" not in g["anchors"]:
            continue
        v, lo, hi = g["anchors"]["heuristic"]["match_win_rate"]
        labels.append(_plain(f"{g['algorithm']} (IQM of {len(g['rows'])})"))
        vals.append(100 * v), los.append(100 * (v - lo)), his.append(100 * (hi - v))
    for r in ss:
        res = r["results"]["heuristic"]
        v, (lo, hi) = res["match_win_rate"], res["match_win_ci"]
        labels.append(_plain(r["agent"]["name"]))
        vals.append(100 * v), los.append(100 * (v - lo)), his.append(100 * (hi - v))
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(labels) + 1.2))
    y = np.arange(len(labels))
    ax.barh(y, vals, xerr=[los, his], color=["C0"] * (len(labels) - len(ss)) + ["C2"] * len(ss), capsize=3)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.axvline(50, color="grey", lw=0.8, ls="--")
    ax.set_xlim(0, 100)
    ax.set_xlabel("match win rate against heuristic (%), 95% interval")
    ax.set_title(f"{task}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


SUBMIT = """## How to submit a row

1. Train your agent any way you like, with any library, for one of the task's budgets
   (learner environment steps; say honestly if you used more, e.g. a warm start).
2. Expose it as an importable object with `act(observation, action_mask) -> int`, or a
   factory `f(seed)` returning one, e.g. `my_agents.py` with `agent = MyAgent.load("w.pt")`;
   it acts on the observation and the mask alone (API.md "Agents").
3. Evaluate it under the protocol:

   ```bash
   PYTHONPATH=path/to/your/module rummy benchmark eval --task classic-2p-v1 --agent my_agents:agent \\
       --name "my algo (seed 0)" --algorithm "my algo" --library "mylib==1.0" --budget-steps 250000 \\
       --train-seed 0 --train-wall-s 1234 --out rows/my-algo-0
   ```
   For several training seeds, one row each (`--name "... (seed k)"`); five seeds or more are
   needed for a leaderboard entry.
4. Check it: `rummy benchmark report rows/my-algo-* benchmark/rows/classic-2p-v1 --out /tmp/lb`
   must list your rows as protocol-complete (a row made with `--match-seeds` is a smoke test).
5. Open a pull request adding the `row.json` files under `benchmark/rows/<task>/` and the
   regenerated page (`rummy benchmark report benchmark/rows --out docs`), with a link to the
   code that trained the agent.
"""


def render(rows: Sequence[dict[str, Any]], brs: Sequence[dict[str, Any]], groups: list[dict[str, Any]],
           images: dict[str, list[str]], command: str) -> str:
    """The leaderboard page as Markdown."""
    lines = ["# Leaderboard", "",
             f"<!-- generated by `{command}`: edit the rows, not this page -->", "",
             "Every number comes from the benchmark's protocol (`rummy benchmark list`): duplicate matches to "
             "the target against each anchor over the task's fixed match seeds, every seat rotation; the "
             "**match win rate** first (RULES.md §7: the game is won in matches), then **points per hand**, "
             "then the hand win rate. A reference algorithm's entry is the **interquartile mean (IQM) over its "
             "training seeds** with a 95% percentile bootstrap interval over the seeds; a single agent's numbers "
             "carry their own 95% intervals over its matches. Ratings are Elo from a Bradley-Terry fit to the "
             "whole crosstable (the agent's matches and the anchors' against each other), heuristic = 0.", ""]
    tasks = sorted({r["task"]["id"] for r in rows})
    for task in tasks:
        t = get_task(task)
        trs = [r for r in rows if r["task"]["id"] == task]
        lines += [f"## {task}", "", f"{t.description}. Anchors: {', '.join(f'`{a}`' for a in t.anchors)}; "
                  f"{t.match_seeds} match seeds x {t.rotations} seat rotations = {t.match_seeds * t.rotations} "
                  f"matches per anchor; budgets {', '.join(f'{k} = {v:,}' for k, v in t.budgets.items())} learner "
                  f"steps (reference: {t.reference_budget}). Task fingerprint `{t.fingerprint()}`.", ""]
        gs = [g for g in groups if g["task"] == task]
        anchors = list(t.anchors)
        if gs:
            lines += ["### Reference algorithms", "",
                      "IQM over training seeds [95% bootstrap interval]. Match win rate against each anchor; "
                      "points per hand and hand win rate against `heuristic`.", ""]
            head = ["algorithm", "library", "seeds", "budget"] + [f"vs {_short(a)}" for a in anchors] + [
                "points/hand vs heuristic", "hands vs heuristic", "rating", "train (median)"]
            lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for g in gs:
                cells = [_code(g["algorithm"]), _text(f"{g['library']} {g['library_version'] or ''}".strip()),
                         str(g["runs"]), f"{g['budget']:,}"]
                for a in anchors:
                    if a in g["anchors"]:
                        v, lo, hi = g["anchors"][a]["match_win_rate"]
                        cells.append(f"**{_pct(v)}** {_ci(lo, hi)}")
                    else:
                        cells.append("-")
                h = g["anchors"].get("heuristic")
                if h:
                    v, lo, hi = h["points_per_hand"]
                    cells.append(f"{v:+.2f} {_ci(lo, hi, pct=False)}")
                    v, lo, hi = h["hand_win_rate"]
                    cells.append(f"{_pct(v)} {_ci(lo, hi)}")
                else:
                    cells += ["-", "-"]
                v, lo, hi = g["rating"]
                cells.append(f"{v:+.0f} [{lo:+.0f}, {hi:+.0f}]")
                w = g["train_wall_s_median"]
                cells.append(f"{w / 60:.1f} min" if w is not None else "-")
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
        grouped = {id(r) for g in gs for r in g["rows"]}
        singles = [r for r in trs if r["protocol_complete"] and id(r) not in grouped]
        if singles:
            lines += ["### Single agents", "",
                      "The anchors (each against the others) and other agents: match win rate [95% Wilson "
                      "interval over its matches] against each anchor, points per hand against `heuristic`.", ""]
            head = ["agent"] + [f"vs {_short(a)}" for a in anchors] + ["points/hand vs heuristic", "rating"]
            lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for r in singles:
                cells = [_text(r["agent"]["name"])]
                for a in anchors:
                    x = r["results"].get(a)
                    cells.append(f"**{_pct(x['match_win_rate'])}** {_ci(*x['match_win_ci'])}" if x else "-")
                h = r["results"].get("heuristic")
                cells.append(f"{h['points_per_hand']:+.2f} {_ci(*h['points_ci'], pct=False)}" if h else "-")
                cells.append(f"{r['rating']['value']:+.0f}")
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
        tb = [b for b in brs if b["task"] == task and b["protocol_complete"]]
        if tb:
            lines += ["### Exploitability proxy (best response)", "",
                      "MaskablePPO warm-started by a short clone of `heuristic` (100k decisions and one DAgger "
                      "round of 50k), then trained against the frozen agent alone with a fixed budget and seed "
                      "(`rummy benchmark best-response`); its match win rate against the agent over the task's "
                      "match seeds, every seat rotation. Lower is less exploitable (a proxy: a stronger best "
                      "response may find more).", ""]
            lines += ["| frozen agent | best-response budget | match win rate of the best response | points/hand | "
                      "train | command |", "|---|---|---|---|---|---|"]
            names = {r["agent"]["spec"]: r["agent"]["name"] for r in trs}
            for b in tb:
                r = b["result"]
                lines.append(f"| {_text(names.get(b['agent'], b['agent_name']))} | {b['budget']:,} | "
                             f"**{_pct(r['match_win_rate'])}** {_ci(*r['match_win_ci'])} | "
                             f"{r['points_per_hand']:+.2f} | {b['train_wall_s'] / 60:.1f} min | {_code(b['command'])} |")
            lines.append("")
        for img in images.get(task, []):
            lines += [f"![{task}](img/{img})", ""]
        lines += ["### Every row", "",
                  "Each row's numbers, the machine and wall-clock it was measured with (as that machine was, "
                  "with whatever else ran on it), and the command that reproduces it from a fresh clone.", "",
                  "| agent | protocol | vs heuristic | points/hand vs heuristic | hands vs heuristic | rating | "
                  "train | eval | hardware | command |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in sorted(trs, key=lambda r: (r.get("algorithm") or {}).get("name") or "", reverse=False):
            h = r["results"].get("heuristic")
            tr = r.get("training") or {}
            hw = r["hardware"]
            proto = "complete" if r["protocol_complete"] else "smoke: " + "; ".join(map(_text, r["deviations"]))
            cells = [_text(r["agent"]["name"]), proto,
                     f"{_pct(h['match_win_rate'])} {_ci(*h['match_win_ci'])}" if h else "-",
                     f"{h['points_per_hand']:+.2f}" if h else "-", _pct(h["hand_win_rate"]) if h else "-",
                     f"{r['rating']['value']:+.0f}",
                     f"{tr['wall_time_s'] / 60:.1f} min" if tr.get("wall_time_s") else "-",
                     f"{r['evaluation']['wall_time_s'] / 60:.1f} min",
                     f"{hw.get('cores')} cores, {hw.get('workers')} workers", _code(r["command"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(SUBMIT)
    return "\n".join(lines)


def write_report(rows: Sequence[dict[str, Any]], brs: Sequence[dict[str, Any]], out: Path, reps: int = 2000,
                 seed: int = 0, command: str | None = None) -> list[Path]:
    """Write ``out/leaderboard.md`` and ``out/img/leaderboard_<task>_*.png``; returns the paths."""
    groups = aggregate(rows, reps=reps, seed=seed)
    grouped = {id(r) for g in groups for r in g["rows"]}
    singles = [r for r in rows if r["protocol_complete"] and id(r) not in grouped]
    img = out / "img"
    img.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    images: dict[str, list[str]] = {}
    for task in sorted({r["task"]["id"] for r in rows}):
        for kind, fn in (("iqm", lambda p: _plot_iqm(groups, singles, task, p)),
                         ("curves", lambda p: _plot_curves(groups, task, p))):
            name = f"leaderboard_{task}_{kind}.png"
            if fn(img / name):
                images.setdefault(task, []).append(name)
                written.append(img / name)
    page = out / "leaderboard.md"
    cmd = command or f"rummy benchmark report ... --out {os.fspath(out)}"
    page.write_text(render(rows, brs, groups, images, cmd))
    written.insert(0, page)
    return written
