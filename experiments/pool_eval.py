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


def _match_results(agent: str, d: str | Path, aliases: Sequence[str] = ()) -> dict[tuple[str, str, str], float]:
    """``agent``'s (or one of its ``aliases``') result (1 won, 0.5 split, 0 lost) of each match
    of ``d/games.csv``, keyed by ``(table, deal, rotation)``."""
    names = {agent, *aliases}
    out = {}
    with open(Path(d) / "games.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["outcome"] != "match":
                raise ValueError(f"{d}: not a match run (outcome {row['outcome']!r}); pair runs of matches")
            seats = [q for q in (0, 1) if row[f"seat{q}"] in names]
            if len(seats) != 1:
                raise ValueError(f"{d}: {agent!r} is not exactly one seat of the match {row['seat0']!r} - "
                                 f"{row['seat1']!r}")
            pay = float(row[f"payoff{seats[0]}"])
            out[(row["table"], row["deal"], row["rotation"])] = 1.0 if pay > 0 else (0.5 if pay == 0 else 0.0)
    return out


def paired(agent: str, dirs: Sequence[str | Path], other: str, other_dirs: Sequence[str | Path],
           aliases: Sequence[str] = ()) -> dict[str, Any]:
    """``agent``'s match win rate minus ``other``'s on the very same matches: ``dirs[i]`` and
    ``other_dirs[i]`` are runs of the same seed and match seeds against the same opponent
    (``rummy eval --deals N --seed S``), one with each agent. Per deal (its seat rotations share
    the cards: the cluster) the difference of the two agents' summed results; returns
    ``deals``, ``matches``, ``difference`` (in match win rate, a fraction) and ``ci`` (its 95%
    normal interval over the deals' differences), and ``same`` (deals whose matches both
    agents won and lost alike). ``aliases``: other names of ``agent`` (as ``pool``'s).

    Raises:
        ValueError: the lists differ in length, two paired runs hold other matches, or a run
            is not a match run with the agent in one seat."""
    if len(dirs) != len(other_dirs):
        raise ValueError(f"{len(dirs)} runs of {agent!r} but {len(other_dirs)} of {other!r}: pair them one to one")
    diffs: list[float] = []
    same = 0
    matches = 0
    for d, od in zip(dirs, other_dirs):
        a, b = _match_results(agent, d, aliases), _match_results(other, od)
        matches += len(a)
        if set(a) != set(b):
            raise ValueError(f"{d} and {od} hold other matches (seed, deals or tables differ): pair runs of the same "
                             f"matches")
        deals: dict[tuple[str, str], list[float]] = {}
        for k in a:
            deals.setdefault(k[:2], []).append(a[k] - b[k])
        for k, v in deals.items():
            diffs.append(sum(v))
            same += all(x == 0 for x in v)
    n = len(diffs)
    mean = sum(diffs) / n
    sd = (sum((x - mean) ** 2 for x in diffs) / (n - 1)) ** 0.5 if n > 1 else float("inf")
    per = matches / n  # matches per deal: the rotations
    half = 1.96 * sd / n ** 0.5
    return {"deals": n, "matches": matches, "difference": mean / per, "ci": [(mean - half) / per, (mean + half) / per],
            "same": same}


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("agent", help="the agent's name as in the runs (their games.csv)")
    p.add_argument("dirs", nargs="+", help="rummy eval --out folders of heads-up match runs")
    p.add_argument("--alias", action="append", default=[], metavar="NAME",
                   help="another name of the same agent in some runs (repeatable)")
    p.add_argument("--paired", nargs="+", metavar=("OTHER", "DIR"),
                   help="OTHER DIR...: also the agent's match win rate minus OTHER's on the same matches, DIR i "
                        "being OTHER's run of the seed of the agent's run i")
    a = p.parse_args(argv)
    if a.paired and len(a.paired) < 2:
        p.error("--paired needs OTHER and one run folder per run of the agent")
    try:
        r = pool(a.agent, a.dirs, a.alias)
        q = paired(a.agent, a.dirs, a.paired[0], a.paired[1:], a.alias) if a.paired else None
    except (ValueError, OSError) as e:
        p.error(str(e))
    mw, (ml, mh) = r["match_win_rate"], r["match_win_ci"]
    hw, (hl, hh) = r["hand_win_rate"], r["hand_win_ci"]
    print(f"{r['matches']} matches: {100 * mw:.1f}% [{100 * ml:.1f}, {100 * mh:.1f}], "
          f"{r['points_per_hand']:+.2f} [{r['points_ci'][0]:+.2f}, {r['points_ci'][1]:+.2f}] points per hand, "
          f"{100 * hw:.1f}% [{100 * hl:.1f}, {100 * hh:.1f}] of {r['hands']:,} hands")
    if q is not None:
        print(f"minus {a.paired[0]} on the same {q['matches']} matches ({q['deals']} deals): "
              f"{100 * q['difference']:+.2f} [{100 * q['ci'][0]:+.2f}, {100 * q['ci'][1]:+.2f}] points of match win "
              f"rate; the same results in {q['same']} deals")


if __name__ == "__main__":
    main()
