"""The evaluation reports both training backends write (``report.json``, ``report.md``),
and the one row format of an evaluation in ``eval_history.json``.

Every report leads with what wins the game (RULES.md §7): the match win rate with its
95% interval, then points per hand, then the hand win rate.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROW_KEYS = ("mode", "games", "win_rate", "win_ci", "match_win_rate", "match_win_ci", "points_per_hand",
            "points_ci", "hands", "hand_win_rate", "hand_win_ci")
"""The keys of an ``evaluate`` result kept per baseline in ``eval_history.json``."""


def history_row(r: dict[str, Any]) -> dict[str, Any]:
    """The part of one ``rummy_env.eval.tournament.evaluate`` result kept in the eval history."""
    return {k: r[k] for k in ROW_KEYS if k in r}


def score(results: dict[str, dict[str, Any]]) -> float:
    """The number the best model is chosen by: the mean over the baselines of ``win_rate``
    (the match win rate when the evaluation plays matches, else the hand win rate)."""
    return float(sum(r["win_rate"] for r in results.values()) / max(1, len(results)))


def append_history(history: list[dict[str, Any]], run_dir: Path, t: int, wall_time_s: float,
                   results: dict[str, dict[str, Any]], final: bool = False) -> dict[str, Any]:
    """Append one evaluation to ``history`` and rewrite ``run_dir/eval_history.json``
    (both training backends).

    Args:
        t: learner timesteps at the evaluation; wall_time_s: seconds of training so far
            (warm start and earlier segments of a resumed run included).
        results: baseline -> ``rummy_env.eval.tournament.evaluate`` dict.
        final: marks the final report's evaluation.

    Returns:
        the row: ``{"timesteps", "wall_time_s", ["final"], <baseline>: history_row, "score"}``.
    """
    row: dict[str, Any] = {"timesteps": t, "wall_time_s": round(wall_time_s, 1)}
    if final:
        row["final"] = True
    for b, r in results.items():
        row[b] = history_row(r)
    row["score"] = score(results)
    history.append(row)
    (run_dir / "eval_history.json").write_text(json.dumps(history, indent=2))
    return row


def summary_line(results: dict[str, dict[str, Any]]) -> str:
    """One line per evaluation for the progress log: per baseline, the match (or hand)
    win rate, points per hand and hand win rate."""
    parts = []
    for b, r in results.items():
        hand = f"hands {r['hand_win_rate']:.3f}"
        if r.get("mode") == "matches":
            parts.append(f"{b}: matches {r['match_win_rate']:.3f}, {r['points_per_hand']:+.2f} pts/hand, {hand}")
        else:
            parts.append(f"{b}: {hand}, {r['points_per_hand']:+.2f} pts/hand")
    return "; ".join(parts)


def percent(rate: float, ci: tuple[float, float] | list[float]) -> str:
    """A rate and its 95% interval as the README prints them: ``56.8% [53.7, 59.8]``."""
    return f"{100 * rate:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def results_table(results: dict[str, dict[str, Any]]) -> str:
    """A markdown table of ``evaluate`` results per baseline, match win rate first, the
    rates in percent with their 95% intervals (as the README's tables)."""
    lines = ["| opponent | matches | match win rate [95% CI] | points/hand [95% CI] | hands | hand win rate [95% CI] |",
             "|---|---:|---:|---:|---:|---:|"]
    for b, r in results.items():
        plo, phi = r["points_ci"]
        if r.get("mode") == "matches":
            mt = f"{r['matches']} | {percent(r['match_win_rate'], r['match_win_ci'])}"
        else:
            mt = "- | - (single hands)"
        lines.append(f"| {b} | {mt} | {r['points_per_hand']:+.2f} [{plo:+.2f}, {phi:+.2f}] | {r['hands']} | "
                     f"{percent(r['hand_win_rate'], r['hand_win_ci'])} |")
    return "\n".join(lines)


def throughput_line(report: dict[str, Any]) -> str | None:
    """The report's two speeds, named: over the whole run (warm start and evaluations
    included) and in the PPO phase alone (rollouts and updates: what the README and
    docs/benchmarks.md quote). None without ``timesteps_per_s``."""
    whole = report.get("timesteps_per_s")
    if whole is None:
        return None
    line = (f"Throughput: {whole:,.0f} learner timesteps/s over the whole run "
            f"({report['wall_time_s'] / 60:.1f} min, the warm start's {report.get('warm_start_s', 0) / 60:.1f} min "
            "and the evaluations included)")
    ppo = report.get("ppo_timesteps_per_s")
    if ppo:
        line += f"; {ppo:,.0f}/s in the PPO phase alone ({report['ppo_wall_time_s'] / 60:.1f} min)"
    parts = report.get("warm_start_parts_s")
    if parts:
        line += ". The warm start by part: " + ", ".join(f"{k.replace('_', ' ')} {v:.0f} s" for k, v in parts.items())
    return line + "."


def write_report(run_dir: Path, report: dict[str, Any], title: str, verbose: int = 1) -> str:
    """Write ``report`` (with ``results``: baseline -> ``rummy_env.eval.tournament.evaluate`` dict, and
    ``deals``) as ``report.json`` and a markdown table ``report.md`` headed ``title``;
    print the table when ``verbose``. Returns the markdown."""
    (run_dir / "report.json").write_text(json.dumps(report, indent=2, default=float))
    modes = {r.get("mode") for r in report["results"].values()}
    what = ("duplicate match seeds per baseline (each match to the target played in both seat rotations "
            "over the same deals)" if modes == {"matches"} else
            "duplicate deals per baseline (each played in both seat rotations)")
    lines = [f"# {title}", "", f"{report['deals']} {what}", "", results_table(report["results"])]
    speed = throughput_line(report)
    if speed:
        lines += ["", speed]
    text = "\n".join(lines) + "\n"
    (run_dir / "report.md").write_text(text)
    if verbose:
        print(text, end="", flush=True)
    return text


def plot_learning_curve(history: list[dict[str, Any]], baselines: list[str], path: Path, title: str) -> None:
    """Two panels over learner timesteps, one point per evaluation (the one at step 0,
    the warm-started policy, and the final one, a star, included when they are in
    ``history``): the win rate against each baseline (matches when the evaluations play
    matches) with 95% error bars, and points per hand, scaled to the baselines other
    than ``random`` (whose line leaves the panel; its legend gives its last value).
    A final point on the step of an in-run one is drawn 1.5% of the x range to the right."""
    if not history:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    # one kind of evaluation per curve: a run resumed with another eval_mode (or from a
    # checkpoint of a release that evaluated hands only) plots the kind it evaluates now
    kind = history[-1][baselines[0]].get("mode", "hands") if baselines and baselines[0] in history[-1] else "hands"
    history = [h for h in history if all(b in h and h[b].get("mode", "hands") == kind for b in baselines)]
    if not history:
        plt.close(fig)
        return
    xs = [h["timesteps"] for h in history]
    # the final evaluation often falls on the step of the last in-run one: drawn a little to
    # the right, as a star, so both show
    span = max(xs) - min(xs) or max(1, max(xs))
    xs = [x + (0.015 * span if h.get("final") and any(g["timesteps"] == h["timesteps"] and not g.get("final")
                                                        for g in history) else 0) for x, h in zip(xs, history)]
    finals = [i for i, h in enumerate(history) if h.get("final")]
    # the points panel is scaled to the baselines a policy is close to: random's +48 would
    # flatten the others onto 0, so its line leaves the panel and its legend says its value
    close = [b for b in baselines if b != "random"]
    pts_range: list[float] = []
    for b in baselines:
        rows = [h.get(b) for h in history]
        if any(r is None for r in rows):
            continue
        ys = [r["win_rate"] for r in rows]
        lo = [max(0.0, r["win_rate"] - r["win_ci"][0]) for r in rows]
        hi = [max(0.0, r["win_ci"][1] - r["win_rate"]) for r in rows]
        line = ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=f"vs {b}")
        colour = line[0].get_color()
        for i in finals:
            ax.plot([xs[i]], [ys[i]], marker="*", ms=13, color=colour, mec="black", mew=0.6, ls="none")
        pts = [r.get("points_per_hand", r.get("mean_points")) for r in rows]
        plo = [max(0.0, p - r["points_ci"][0]) for p, r in zip(pts, rows)]
        phi = [max(0.0, r["points_ci"][1] - p) for p, r in zip(pts, rows)]
        off = b == "random" and bool(close)
        bx.errorbar(xs, pts, yerr=[plo, phi], marker="o", capsize=3, color=colour,
                    label=f"vs {b} ({pts[-1]:+.1f} at the end, off this scale)" if off else f"vs {b}")
        for i in finals:
            bx.plot([xs[i]], [pts[i]], marker="*", ms=13, color=colour, mec="black", mew=0.6, ls="none")
        if not off:
            pts_range += [r["points_ci"][0] for r in rows] + [r["points_ci"][1] for r in rows]
    matches = kind == "matches"
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("learner timesteps")
    ax.set_ylabel("match win rate (duplicate matches)" if matches else "hand win rate (duplicate deals)")
    ax.set_ylim(0, 1)
    if finals:
        ax.plot([], [], marker="*", ms=11, color="grey", mec="black", mew=0.6, ls="none", label="final evaluation")
    ax.legend(fontsize=8)
    if pts_range:
        lo_, hi_ = min(pts_range + [0.0]), max(pts_range + [0.0])
        pad = 0.1 * (hi_ - lo_ or 1.0)
        bx.set_ylim(lo_ - pad, hi_ + pad)
    bx.axhline(0.0, color="grey", lw=0.8, ls="--")
    bx.set_xlabel("learner timesteps")
    bx.set_ylabel("points per hand (zero-sum)")
    bx.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
