"""Issue 25, session 27: where does a student (a clone) disagree with its teacher? Not part of
the package: a record of the experiment. From the repository's root:

    python experiments/issue25_disagreement.py ppo:runs/cardhead2/run/final_model.zip \\
        --teacher heuristic:cutting --opponent heuristic --hands 100 --seed 7

The student plays ``hands`` classic hands against ``opponent`` (seats alternating by hand;
hand ``h`` dealt with seed ``seed * 1000 + h``); at each of the student's decisions the
teacher is asked what it would play there (it acts on the same observation and mask).
Printed: the share of the student's decisions where both agree, then a row per pair of
kinds (the teacher's move, the student's move: draw, discard, meld, layoff, other) with
the count and share of decisions agreeing and disagreeing; ``--json`` writes them too.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys

from rummy_env import rummy_v0
from rummy_env.actions import DISCARD_BASE, LAYOFF_BASE, MELD_BASE, NUM_ACTIONS
from rummy_env.agents import make_agent


def kind(a: int) -> str:
    """The kind of a classic action id (``rummy_env.actions``: draw 0-1, discard 2-53, meld
    54-422, layoff 423-578)."""
    if a < DISCARD_BASE:
        return "draw"
    if a < MELD_BASE:
        return "discard"
    if a < LAYOFF_BASE:
        return "meld"
    return "layoff" if a < NUM_ACTIONS else "other"


def paired_moves(student: str, teacher: str = "heuristic:cutting", opponent: str = "heuristic", hands: int = 100,
                 seed: int = 7):
    """Yield ``(env, teacher_move, student_move)`` at each of the student's decisions in
    ``hands`` classic hands against ``opponent`` (seats alternating by hand; hand ``h`` dealt
    with seed ``seed * 1000 + h``; agents made with ``seed``), before the student's move is
    played: the teacher is asked on the same observation and mask."""
    st, te, opp = (make_agent(s, seed=seed) for s in (student, teacher, opponent))
    for h in range(hands):
        env = rummy_v0.env(rules="classic")
        env.reset(seed=seed * 1000 + h)
        me = env.agents[h % 2]
        for seat in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            o, m = obs["observation"], obs["action_mask"]
            if seat == me:
                a = st.act(o, m)
                yield env, te.act(o, m), a
            else:
                a = opp.act(o, m)
            env.step(a)


def disagreement(student: str, teacher: str = "heuristic:cutting", opponent: str = "heuristic", hands: int = 100,
                 seed: int = 7) -> dict:
    """``{"decisions": n, "agree": share, "rows": [[teacher_kind, student_kind, agreed, count], ...]}``
    over the student's decisions in ``hands`` classic hands (see the module docstring)."""
    counts: collections.Counter = collections.Counter()
    for _, t, a in paired_moves(student, teacher, opponent, hands, seed):
        counts[kind(t), kind(a), a == t] += 1
    n = sum(counts.values())
    rows = [[tk, sk, ok, c] for (tk, sk, ok), c in sorted(counts.items())]
    return {"decisions": n, "agree": sum(c for (_, _, ok), c in counts.items() if ok) / max(n, 1), "rows": rows}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("student", help="an agent name (rummy_env.agents.make_agent), e.g. ppo:PATH")
    p.add_argument("--teacher", default="heuristic:cutting")
    p.add_argument("--opponent", default="heuristic")
    p.add_argument("--hands", type=int, default=100)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", help="also write the result here")
    a = p.parse_args(argv)
    res = disagreement(a.student, a.teacher, a.opponent, a.hands, a.seed)
    n = res["decisions"]
    print(f"{a.student} against {a.opponent}, {a.hands} hands: {n} decisions, agreeing with {a.teacher} on "
          f"{res['agree'] * 100:.1f}%")
    for tk, sk, ok, c in res["rows"]:
        print(f"  teacher {tk:8s} student {sk:8s} {'agree' if ok else 'DIFFER':6s} {c:5d}  {c / n * 100:5.1f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    main(sys.argv[1:])
