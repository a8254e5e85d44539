"""Pool the matches of several ``rummy eval --out DIR`` runs into one row per agent: match
win rate (Wilson 95% interval; a split match counts 1/k to each of its k winners), points
per hand (interval clustered by match) and hands won (Wilson), as ``rummy eval`` computes
them for one run (``rummy_env.eval.tournament``). Used for the pooled rows of
docs/training.md ("The match result as the reward"), e.g.:

    for s in 9201 9202 9203; do rummy eval --agents ppo:runs/pm/run/final_model.zip search \\
        --rules classic --deals 100 --seed $s --workers 2 --out runs/pm/ev_search_$s; done
    python experiments/pool_eval.py ppo:runs/pm/run/final_model.zip runs/pm/ev_search_920{1,2,3}

One policy evaluated under two names (``ppo:ZIP`` before it shipped, ``pretrained`` after)
is pooled with ``--alias``: ``python experiments/pool_eval.py ppo:ZIP DIR... --alias pretrained``.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path
from typing import Any, Sequence

from rummy_env.eval.tournament import ratio_interval, wilson_interval


def pool(agent: str, dirs: Sequence[str | Path], aliases: Sequence[str] = ()) -> dict[str, Any]:
    """``agent``'s results over the heads-up matches in each ``DIR/games.csv`` (a seat whose
    name is ``agent`` or one of ``aliases`` is the agent's; a match between two of these names
    is an error: it is not a match against an opponent): ``matches``,
    ``match_win_rate`` and ``match_win_ci``, ``points_per_hand`` and ``points_ci`` (hand
    points, RULES.md §5), ``hands``, ``hand_win_rate`` and ``hand_win_ci`` (fractions).

    Raises:
        ValueError: ``agent`` plays no match in those files, a file is not a match run, or
            a match is between the agent's names.
    """
    names = {agent, *aliases}
    wins = 0.0
    games = hand_wins = 0
    pts: list[float] = []
    cnt: list[int] = []
    for d in dirs:
        with open(Path(d) / "games.csv", newline="") as f:
            for row in csv.DictReader(f):
                if row["outcome"] != "match":
                    raise ValueError(f"{d}: not a match run (outcome {row['outcome']!r}); pool runs of matches")
                seats = [q for q in (0, 1) if row[f"seat{q}"] in names]
                if len(seats) == 2:
                    raise ValueError(f"{d}: a match between {row['seat0']!r} and {row['seat1']!r}, both "
                                     f"names of the agent pooled; pool matches against opponents")
                for q in seats:
                    games += 1
                    pay = float(row[f"payoff{q}"])
                    wins += 1.0 if pay > 0 else (0.5 if pay == 0 else 0.0)  # heads-up: a split match is 0 each
                    hand_wins += int(row[f"hand_wins{q}"])
                    pts.append(float(row[f"hand_points{q}"]))
                    cnt.append(int(row["hands"]))
    if not games:
        raise ValueError(f"{' / '.join(sorted(names))!r} plays no match in {', '.join(map(str, dirs))}")
    hands = sum(cnt)
    m, lo, hi = ratio_interval(pts, cnt)
    return {"matches": games, "match_win_rate": wins / games, "match_win_ci": list(wilson_interval(wins, games)),
            "points_per_hand": m, "points_ci": [lo, hi], "hands": hands, "hand_win_rate": hand_wins / hands,
            "hand_win_ci": list(wilson_interval(hand_wins, hands))}


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("agent", help="the agent's name as in the runs (their games.csv)")
    p.add_argument("dirs", nargs="+", help="rummy eval --out folders of heads-up match runs")
    p.add_argument("--alias", action="append", default=[], metavar="NAME",
                   help="another name of the same agent in some runs (repeatable)")
    a = p.parse_args(argv)
    r = pool(a.agent, a.dirs, a.alias)
    mw, (ml, mh) = r["match_win_rate"], r["match_win_ci"]
    hw, (hl, hh) = r["hand_win_rate"], r["hand_win_ci"]
    print(f"{r['matches']} matches: {100 * mw:.1f}% [{100 * ml:.1f}, {100 * mh:.1f}], "
          f"{r['points_per_hand']:+.2f} [{r['points_ci'][0]:+.2f}, {r['points_ci'][1]:+.2f}] points per hand, "
          f"{100 * hw:.1f}% [{100 * hl:.1f}, {100 * hh:.1f}] of {r['hands']:,} hands")


if __name__ == "__main__":
    main()
