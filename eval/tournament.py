"""Duplicate-deal tournaments between agents, with confidence intervals and ratings.

Every deal (a seed) is played once per seat rotation: at a table of ``n`` seats the
agents are rotated through all ``n`` seats over the same cards, so the luck of the
deal cancels and each agent moves first equally often (seat 0 moves first in
hand 1, RULES.md §2). Games run on ``rummy_env.engine`` with
``rummy_env.observation.Encoder`` directly (no wrappers), and the agents receive
only the observation vector and the action mask as numpy arrays.

Work is split by deal index into chunks; with ``workers > 1`` the chunks run in
worker processes and are merged in deal order, so results are identical for the same
seed whatever the worker count.

Every call into an agent during play is refereed (``rummy_env.eval.referee``): it has
``DECISION_LIMIT`` seconds (or the ``decision_limit`` given), an answer must be a legal
action id as the env takes them, and whatever an agent raises or does, ``sys.exit``
included, ends the evaluation with one ``AgentError`` line naming the agent, its seat
and what it did. An outside agent (``MODULE:ATTR``) plays in a worker process even with
one worker, so that one that ends its process (``os._exit``) or hangs where no signal
reaches it is reported as well.
"""
from __future__ import annotations

import itertools
import json
import math
from typing import Any, Callable, Sequence

import numpy as np

from rummy_env import engine
from rummy_env.observation import Encoder, action_mask
from rummy_env.rules import Rules

from .referee import DECISION_LIMIT, AgentError, Referee, check_limit, current, game_place, one_line, play_in_workers

Z95 = 1.959963984540054

AgentSpec = Any  # a make_agent name (str) or an agent object


# ----------------------------------------------------------------- statistics

def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (95% by default).

    Returns ``(low, high)`` in [0, 1]; ``(0.0, 1.0)`` when ``n == 0``.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return (max(0.0, min(p, centre - margin)), min(1.0, max(p, centre + margin)))


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean of ``values`` with a normal-approximation interval.

    Returns ``(mean, low, high)`` with half-width ``z * s / sqrt(n)``, ``s`` the sample
    standard deviation (``n - 1`` in the denominator). With fewer than two values
    the interval is the mean itself (one value) or ``nan`` (none).
    """
    n = len(values)
    if n == 0:
        return (float("nan"), float("nan"), float("nan"))
    a = np.asarray(values, dtype=np.float64)
    m = float(a.mean())
    if n == 1:
        return (m, m, m)
    hw = z * float(a.std(ddof=1)) / math.sqrt(n)
    return (m, m - hw, m + hw)


def bradley_terry_elo(pairs: dict[tuple[int, int], tuple[float, float]], k: int,
                      prior: float = 0.5, iters: int = 2000) -> list[float]:
    """Elo-scale ratings fitted to head-to-head results (Bradley-Terry maximum likelihood).

    Args:
        pairs: ``(i, j) -> (score_i, score_j)``: points each agent took off the other
            (a win 1, a void hand 0.5 each).
        k: number of agents.
        prior: virtual score added to each side of each pair (keeps an unbeaten
            agent finite).

    Returns:
        ``k`` ratings on the Elo scale (400 * log10 of strength), mean 1500. The fit is
        order-independent and deterministic.
    """
    wins = np.zeros((k, k))
    for (i, j), (si, sj) in pairs.items():
        wins[i, j] += si + prior
        wins[j, i] += sj + prior
    games = wins + wins.T
    p = np.ones(k)
    for _ in range(iters):
        w = wins.sum(axis=1)
        denom = np.array([sum(games[i, j] / (p[i] + p[j]) for j in range(k) if j != i and games[i, j] > 0)
                          for i in range(k)])
        new = np.where(denom > 0, w / np.where(denom > 0, denom, 1), p)
        new = new / np.exp(np.mean(np.log(new)))
        if np.max(np.abs(new - p)) < 1e-12:
            p = new
            break
        p = new
    r = 400 * np.log10(p)
    return [float(x) for x in r - r.mean() + 1500]


def openskill_ratings(games: Sequence[tuple[Sequence[int], Sequence[float]]], k: int) -> list[dict[str, float]]:
    """OpenSkill (Plackett-Luce) ratings from multi-player games, rated in the given order.

    Args:
        games: per game, the agent index at each seat and each seat's payoff (a higher
            payoff ranks higher; equal payoffs tie).
        k: number of agents.

    Returns:
        per agent ``{"mu", "sigma", "ordinal"}``. An agent at several seats of one game
        is rated once per seat and takes the mean of its updated ratings.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating() for _ in range(k)]
    for seats, pay in games:
        teams = [[model.rating(mu=ratings[a].mu, sigma=ratings[a].sigma)] for a in seats]
        order = sorted(set(pay), reverse=True)
        ranks = [order.index(x) for x in pay]
        out = model.rate(teams, ranks=ranks)
        upd: dict[int, list] = {}
        for a, team in zip(seats, out):
            upd.setdefault(a, []).append(team[0])
        for a, rs in upd.items():
            ratings[a] = model.rating(mu=sum(r.mu for r in rs) / len(rs), sigma=sum(r.sigma for r in rs) / len(rs))
    return [{"mu": r.mu, "sigma": r.sigma, "ordinal": r.mu - 3 * r.sigma} for r in ratings]


# ----------------------------------------------------------------- tables and seeds

def deal_seed(seed: int, deal: int) -> int:
    """The engine seed of deal number ``deal`` of a tournament seeded ``seed`` (63-bit int)."""
    s = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(seed) >> 32 & 0xFFFFFFFF, int(deal)]).generate_state(2)
    return (int(s[0]) << 31 | int(s[1])) & ((1 << 63) - 1)


def agent_seed(seed: int, deal: int, table: int, rotation: int, seat: int) -> int:
    """The seed an agent gets for one game (every game's agents are reseeded)."""
    s = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(deal), table, rotation, seat, 7]).generate_state(1)
    return int(s[0])


def make_tables(num_agents: int, players: int) -> list[tuple[int, ...]]:
    """Which agents sit at each table (agent indices by table position).

    Heads-up: every pair ``(i, j)``, ``i < j``. Larger tables: with no more agents than
    seats, one table with the agents repeated in order to fill it; with more, every
    combination of ``players`` agents.

    Raises:
        ValueError: fewer than two agents, or a player count outside 2..7 (7 with two
            decks, RULES.md §10.3; the rules check their own range).
    """
    if num_agents < 2:
        raise ValueError(f"a tournament needs at least two agents, got {num_agents}")
    if not 2 <= players <= 7:
        raise ValueError(f"players must be 2..7, got {players}")
    if num_agents <= players and not (players == 2 and num_agents > 2):
        return [tuple(i % num_agents for i in range(players))]
    return list(itertools.combinations(range(num_agents), players))


def seating(table: Sequence[int], rotation: int) -> list[int]:
    """Agent index at each seat in one rotation: seat ``s`` holds table position
    ``(s + rotation) % n``, so over ``n`` rotations every agent takes every seat."""
    n = len(table)
    return [table[(s + rotation) % n] for s in range(n)]


# ----------------------------------------------------------------- playing

def hand_seed(seed: int, hand: int) -> int:
    """The engine seed of hand number ``hand`` (1-based; hand 1 uses ``seed`` itself) of
    a match played from ``seed``. Every hand of a match is dealt from its own seed, so
    a duplicate match replays the same sequence of deals whatever happened in the
    earlier hands (a recycle of the stock or a longer hand draws no card of the next
    deal)."""
    if hand <= 1:
        return int(seed)
    s = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(seed) >> 32 & 0xFFFFFFFF, int(hand), 11]).generate_state(2)
    return (int(s[0]) << 31 | int(s[1])) & ((1 << 63) - 1)


def play_game(rules: Rules, agents: Sequence[Any], seed: int, matches: bool = False,
              encoder: Encoder | None = None) -> dict[str, Any]:
    """Play one hand (or, with ``matches``, one match to ``rules.target``) from ``seed``.

    ``agents[s]`` plays seat ``s`` and gets only ``(observation float32 (obs_size(n),),
    action_mask int8 (N,))`` (N: the table's action count). In a match, hand ``k`` is dealt from
    ``hand_seed(seed, k)`` (the dealer passes left each hand, RULES.md §7). Each
    ``act()`` is refereed (the module's docstring): within ``DECISION_LIMIT`` seconds
    when called on its own, within the tournament's limit when ``play_games`` calls it.

    Returns:
        ``{"payoffs": per seat (hand points, zero-sum; for a match +1 / -1 / split as
        ``engine.match_payoffs``), "winner": seat or None, "outcome", "rummy", "turns",
        "hands", "decisions", "match_winners" (None for a hand), "hand_points": per seat,
        the sum of its hand points over the hands played (zero-sum), "hand_wins": per
        seat, hands it won (went out, or collected a dry hand), "hand_voids": hands
        nobody won}``.

    Raises:
        AgentError (a ``ValueError``): an agent raised or exited, went past the limit,
            answered no action id or an illegal one (the message names it and its seat).
        ValueError: ``matches`` for rules without a target.
    """
    ref = current()
    if ref is None:
        with Referee(DECISION_LIMIT) as ref:
            ref.begin_game(None, [type(a).__name__ for a in agents], f"seed {seed}")
            return _play(ref, rules, agents, seed, matches, encoder)
    return _play(ref, rules, agents, seed, matches, encoder)


def _play(ref: Referee, rules: Rules, agents: Sequence[Any], seed: int, matches: bool,
          encoder: Encoder | None) -> dict[str, Any]:
    n = rules.num_players
    if matches and rules.target is None:
        raise ValueError("--matches needs rules with a target (this preset plays a single hand)")
    enc = encoder or Encoder.for_rules(rules)
    st = engine.new_game(rules, seed=seed)
    decisions = 0
    hands = 1
    first = None
    hand_points = [0] * n
    hand_wins = [0] * n
    voids = 0
    while True:
        while not st.hand_over:
            p = st.current
            mask = action_mask(engine.legal_actions(st), size=st.num_actions)
            a = ref.act(agents[p], p, enc.encode(st, p), mask, st.num_actions)
            try:
                engine.apply(st, a)
            except engine.IllegalActionError as e:
                raise AgentError(ref.label(p), p, f"played an illegal action: {one_line(str(e))}", ref.where) from None
            decisions += 1
        if first is None:
            first = dict(st.result, turns=st.turn, payoffs=list(st.payoffs))
        for q in range(n):
            hand_points[q] += st.payoffs[q]
        if st.result["winner"] is None:
            voids += 1
        else:
            hand_wins[st.result["winner"]] += 1
        if not matches or st.match_over:
            break
        hands += 1
        engine.next_hand(st, seed=hand_seed(seed, hands))
    out = {
        "payoffs": [float(x) for x in (engine.match_payoffs(st) if matches else st.payoffs)],
        "winner": st.result["winner"] if not matches else (st.match_winners[0] if len(st.match_winners) == 1 else None),
        "outcome": st.result["outcome"] if not matches else "match",
        "rummy": bool(first["rummy"]) if not matches else False,
        "turns": st.turn,
        "hands": hands,
        "decisions": decisions,
        "match_winners": list(st.match_winners) if matches else None,
        "hand_points": [float(x) for x in hand_points],
        "hand_wins": hand_wins,
        "hand_voids": voids,
    }
    return out


_WORKER_AGENTS: dict[tuple[int, int], Any] = {}


def _instantiate(specs: Sequence[AgentSpec], idx: int, seat: int, ref: Referee) -> Any:
    spec = specs[idx]
    if not isinstance(spec, str):
        return spec
    key = (idx, seat)
    a = _WORKER_AGENTS.get(key)
    if a is None:
        from rummy_env.agents import make_agent

        with ref.making(seat, idx):
            a = make_agent(spec)
        _WORKER_AGENTS[key] = a
    return a


def _run_chunk(job: tuple) -> list[dict[str, Any]]:
    """Play deals ``lo..hi-1`` of a job at every table in every rotation, refereed by the
    thread's ``Referee`` (``play_games`` sets one up)."""
    specs, tables, rules, seed, lo, hi, matches = job
    ref = current()
    _WORKER_AGENTS.clear()
    n = rules.num_players
    enc = Encoder.for_rules(rules)
    names = ref.names if ref.names is not None else unique_names(specs)
    out = []
    for d in range(lo, hi):
        ds = deal_seed(seed, d)
        for t, table in enumerate(tables):
            for r in range(n):
                seats = seating(table, r)
                ref.begin_game(seats, [names[i] for i in seats], game_place(d, t, r, len(tables)), (d, t, r))
                ags = []
                for s, idx in enumerate(seats):
                    a = _instantiate(specs, idx, s, ref)
                    ref.seed(a, s, agent_seed(seed, d, t, r, s))
                    ags.append(a)
                g = play_game(rules, ags, ds, matches=matches, encoder=enc)
                g.update(deal=d, table=t, rotation=r, seats=seats)
                out.append(g)
    return out


def _chunks(deals: int, workers: int) -> list[tuple[int, int]]:
    size = max(1, min(50, math.ceil(deals / (max(1, workers) * 8))))
    return [(i, min(deals, i + size)) for i in range(0, deals, size)]


def worker_processes(deals: int, workers: int) -> int:
    """How many processes ``workers`` asked for become: at most one per piece of work (a
    chunk of deals, ``_chunks``), so never more than ``deals``; a process more would start
    and wait with nothing to play. ``1``: the games are played in this process (an outside
    agent's in one worker process, ``play_games``)."""
    return min(workers, len(_chunks(deals, workers)))


def _isolate(specs: Sequence[AgentSpec]) -> bool:
    """Whether the agents must play in a worker process even with one worker: any
    outside agent (``MODULE:ATTR``), whose ``os._exit`` or unstoppable hang this process
    could not survive."""
    from rummy_env.agents import is_outside_agent

    return any(is_outside_agent(s) for s in specs)


def play_games(specs: Sequence[AgentSpec], tables: Sequence[tuple[int, ...]], rules: Rules, deals: int,
               seed: int, matches: bool = False, workers: int = 1,
               progress: Callable[[int], None] | None = None,
               decision_limit: float | None = DECISION_LIMIT) -> list[dict[str, Any]]:
    """Play ``deals`` deals at every table in every rotation; the game records in order
    (deal, table, rotation), independent of ``workers``.

    ``workers`` is capped at the pieces of work (``worker_processes``). With one process
    the games are played in this one, unless an agent is an outside one (``MODULE:ATTR``):
    then one worker process plays them. Each agent call is refereed (the module's
    docstring) with ``decision_limit`` seconds each (``None`` or ``0``: no limit). ``progress(k)`` is called after each finished chunk with the
    number of deals in it.

    Raises:
        AgentError (a ``ValueError``): an agent raised or exited (in ``act()``,
            ``seed()`` or while a worker made it), ended its worker process, went past
            the limit, or answered no action id or an illegal one.
        ValueError: bad ``deals``, ``workers`` or ``decision_limit``.
    """
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be an int >= 1, got {deals!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    limit = check_limit(decision_limit)
    jobs = [(list(specs), list(tables), rules, seed, lo, hi, matches) for lo, hi in _chunks(deals, workers)]
    names = unique_names(specs)
    procs = worker_processes(deals, workers)
    if procs > 1 or _isolate(specs):
        done = (lambda j: progress(jobs[j][5] - jobs[j][4])) if progress else None
        chunks = play_in_workers(_run_chunk, jobs, procs, limit, names, len(tables), done)
        return [g for recs in chunks for g in recs]
    records: list[dict[str, Any]] = []
    with Referee(limit, names):
        for job in jobs:
            records.extend(_run_chunk(job))
            if progress:
                progress(job[5] - job[4])
    return records


# ----------------------------------------------------------------- summaries

def ratio_interval(totals: Sequence[float], counts: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """A ratio of sums ``sum(totals) / sum(counts)`` with a 95% interval that treats each
    pair ``(totals[i], counts[i])`` as one cluster (e.g. the points and the hands of one
    match), so hands of the same match are not counted as independent.

    Returns ``(ratio, low, high)``; the half-width is ``z * sqrt(k / (k - 1) * sum(e_i^2)) / sum(counts)``
    with residuals ``e_i = totals[i] - ratio * counts[i]`` over ``k`` clusters (the
    delta-method variance of a ratio estimator). One cluster: the ratio itself; none
    (or no counts): ``nan``.
    """
    y = np.asarray(totals, dtype=np.float64)
    h = np.asarray(counts, dtype=np.float64)
    k = len(y)
    if k == 0 or h.sum() <= 0:
        return (float("nan"), float("nan"), float("nan"))
    r = float(y.sum() / h.sum())
    if k == 1:
        return (r, r, r)
    e = y - r * h
    hw = z * math.sqrt(k / (k - 1) * float((e * e).sum())) / float(h.sum())
    return (r, r - hw, r + hw)


def _agent_stats(records: Sequence[dict], agent: int, matches: bool) -> dict[str, Any]:
    """One agent's results over ``records`` (every seat it held).

    Keys for both modes: ``games`` (matches or hands played), ``wins`` and ``win_rate``
    / ``win_ci`` (of those games: matches in match mode, a split match counting
    ``1/k`` for each of its ``k`` winners; hands otherwise), ``hands``, ``hand_wins``,
    ``voids`` (hands nobody won), ``hand_win_rate`` / ``hand_win_ci``,
    ``points_per_hand`` / ``points_ci`` (mean hand points, zero-sum, 95% interval:
    clustered by match in match mode) and ``mean_points`` (the same number). Match
    mode adds ``matches``, ``match_win_rate`` and ``match_win_ci``. Win intervals are
    Wilson score intervals.
    """
    games = 0
    wins = 0.0
    hand_wins = 0
    voids = 0
    pts: list[float] = []
    cnt: list[float] = []
    for g in records:
        for s, a in enumerate(g["seats"]):
            if a != agent:
                continue
            games += 1
            if matches:
                w = g["match_winners"]
                if s in w:
                    wins += 1 / len(w)
            elif g["winner"] == s:
                wins += 1
            hand_wins += g["hand_wins"][s]
            voids += g["hand_voids"]
            pts.append(g["hand_points"][s])
            cnt.append(g["hands"])
    hands = int(sum(cnt))
    lo, hi = wilson_interval(wins, games)
    hlo, hhi = wilson_interval(hand_wins, hands)
    m, mlo, mhi = ratio_interval(pts, cnt) if matches else mean_interval(pts)
    out = {"games": games, "wins": wins, "win_rate": wins / games if games else float("nan"), "win_ci": [lo, hi],
           "hands": hands, "hand_wins": hand_wins, "voids": voids,
           "hand_win_rate": hand_wins / hands if hands else float("nan"), "hand_win_ci": [hlo, hhi],
           "points_per_hand": m, "points_ci": [mlo, mhi], "mean_points": m}
    if matches:
        out.update(matches=games, match_win_rate=out["win_rate"], match_win_ci=[lo, hi])
    return out


def summarize(names: Sequence[str], tables: Sequence[tuple[int, ...]], records: Sequence[dict],
              players: int, matches: bool) -> dict[str, Any]:
    """Per-table and per-agent statistics and ratings from game records.

    Returns a JSON-able dict: ``tables`` (per table: its agents and, per agent, games,
    wins, win rate with a 95% Wilson interval, mean points per game with a 95% normal
    interval, voids), ``agents`` (the same over all tables) and ``ratings`` (Elo from a
    Bradley-Terry fit for heads-up tables, OpenSkill Plackett-Luce for 3-6 players).
    """
    by_table: dict[int, list[dict]] = {}
    for g in records:
        by_table.setdefault(g["table"], []).append(g)
    out_tables = []
    for t, table in enumerate(tables):
        recs = by_table.get(t, [])
        rows = []
        for a in sorted(set(table)):
            row = {"agent": names[a]}
            row.update(_agent_stats(recs, a, matches))
            rows.append(row)
        out_tables.append({"table": [names[a] for a in table], "games": len(recs), "results": rows})
    agents_out = []
    for a, nm in enumerate(names):
        row = {"agent": nm}
        row.update(_agent_stats(records, a, matches))
        agents_out.append(row)
    ratings: dict[str, Any]
    if players == 2:
        pairs: dict[tuple[int, int], list[float]] = {}
        for g in records:
            a, b = g["seats"]
            if a == b:
                continue
            key = (min(a, b), max(a, b))
            sc = pairs.setdefault(key, [0.0, 0.0])
            if matches:
                w = g["match_winners"]
                share = [(1 / len(w)) if s in w else 0.0 for s in range(2)]
            elif g["winner"] is None:
                share = [0.5, 0.5]
            else:
                share = [1.0 if g["winner"] == s else 0.0 for s in range(2)]
            for s, ag in enumerate((a, b)):
                sc[0 if ag == key[0] else 1] += share[s]
        elo = bradley_terry_elo({k: (v[0], v[1]) for k, v in pairs.items()}, len(names))
        ratings = {"kind": "elo", "ratings": {nm: elo[i] for i, nm in enumerate(names)}}
    else:
        os_r = openskill_ratings([(g["seats"], g["payoffs"]) for g in records], len(names))
        ratings = {"kind": "openskill", "ratings": {nm: os_r[i] for i, nm in enumerate(names)}}
    return {"tables": out_tables, "agents": agents_out, "ratings": ratings}


def unique_names(specs: Sequence[AgentSpec]) -> list[str]:
    """Display names for agent specs: the name string (``#2``... for repeats) or the
    object's ``name`` attribute / class name."""
    base = [s if isinstance(s, str) else getattr(s, "name", type(s).__name__) for s in specs]
    out = []
    for i, b in enumerate(base):
        k = base[:i].count(b)
        out.append(b if k == 0 and base.count(b) == 1 else f"{b}#{k + 1}")
    return out


def _resolve_rules(rules: Any, players: int | None) -> Rules:
    return Rules.make(rules, num_players=players)


def resolve_matches(rules: Rules, matches: bool | None) -> bool:
    """Whether to play full matches: ``None`` means yes when the rules have a target
    (RULES.md §7: the game is won in matches), single hands otherwise.

    Raises:
        ValueError: ``matches=True`` for rules without a target.
    """
    if matches is None:
        return rules.target is not None
    if matches and rules.target is None:
        raise ValueError("matches need rules with a target (this table plays a single hand); play hands instead")
    return bool(matches)


def _checked_agent(spec: AgentSpec) -> Any:
    """The agent ``spec`` stands for, checked before any game: ``make_agent``'s for a
    name, else the object itself if it passes ``rummy_env.agents.agent_problem``.

    Raises:
        ValueError: a bad name (``make_agent``'s message), or an object without
            ``act()`` or with a ``seed`` attribute that is not a method.
    """
    from rummy_env.agents import agent_problem, make_agent

    if isinstance(spec, str):
        return make_agent(spec)  # fail fast with make_agent's message
    why = agent_problem(spec)
    if why is not None:
        raise ValueError(f"an agent must be a make_agent name or an object with act() (and, if it has one, a "
                         f"seed(seed) method); a {type(spec).__name__} is not: {why}")
    return spec


def run_tournament(agents: Sequence[AgentSpec], rules: Any = "classic", deals: int = 200, seed: int = 0,
                   players: int | None = None, matches: bool | None = None, workers: int = 1,
                   progress: Callable[[int], None] | None = None,
                   decision_limit: float | None = DECISION_LIMIT) -> dict[str, Any]:
    """A duplicate-deal tournament.

    Args:
        agents: ``make_agent`` names or agent objects (with ``workers > 1`` objects go to
            the worker processes as the parent holds them, by fork, or pickled where
            processes are spawned).
        rules: preset name, ``Rules`` or dict of options; ``players`` overrides the count.
        deals: deals per table (match seeds in match mode); each is played once per
            seat rotation (duplicate: the same cards, the seats rotated).
        seed: the tournament seed (deal ``i`` uses ``deal_seed(seed, i)``).
        matches: play full matches to the target (default when the rules have one:
            ``resolve_matches``) or single hands (False).
        workers: processes, capped at the pieces of work (``worker_processes``); results
            do not depend on it.
        decision_limit: seconds each call into an agent may take (``DECISION_LIMIT``;
            ``None`` or 0: no limit), ``play_games``.

    Returns:
        ``summarize(...)`` plus ``settings`` and ``records`` (one dict per game).

    Raises:
        AgentError (a ``ValueError``): an agent failed during play (``play_games``): the
            message names it, its seat and what it did.
        ValueError: bad agents, rules, deals, workers or limit (agents are checked before
            play), or a policy trained for another table (``rummy_env.agents.table_misfit``).
    """
    from rummy_env.agents import table_misfit

    r = _resolve_rules(rules, players)
    matches = resolve_matches(r, matches)
    check_limit(decision_limit)
    for s in agents:
        a = _checked_agent(s)
        why = table_misfit(a, r)  # a policy trained for another table (RULES.md §10.4 tables differ)
        if why is not None:
            raise ValueError(f"agent {s if isinstance(s, str) else type(s).__name__!r} cannot play "
                             f"{json.dumps(r.to_json())} with {r.num_players} players: {why}")
    names = unique_names(agents)
    tables = make_tables(len(agents), r.num_players)
    records = play_games(agents, tables, r, deals, seed, matches=matches, workers=workers, progress=progress,
                         decision_limit=decision_limit)
    res = summarize(names, tables, records, r.num_players, matches)
    res["settings"] = {"agents": names, "rules": r.to_json(), "players": r.num_players, "deals": deals,
                       "seed": seed, "matches": matches, "rotations": r.num_players,
                       "games": len(records)}
    res["records"] = records
    return res


def evaluate(agent_a: AgentSpec, agent_b: AgentSpec = "heuristic", rules: Any = "classic", deals: int = 200,
             seed: int = 0, workers: int = 1, players: int | None = None,
             matches: bool | None = None, opponent_stats: bool = False,
             progress: Callable[[int], None] | None = None,
             decision_limit: float | None = DECISION_LIMIT) -> dict[str, Any]:
    """Evaluate one agent (e.g. a policy being trained) against a baseline: duplicate
    matches to the target (the default when the rules have one), or duplicate hands.

    Heads-up by default; with ``players = n > 2`` ``agent_a`` plays one seat against
    ``n - 1`` copies of ``agent_b``. Each deal (match seed) is played in every seat
    rotation; in a match, hand ``k`` of every rotation has the same cards
    (``hand_seed``).

    Returns:
        ``_agent_stats`` for ``agent_a``: in match mode ``match_win_rate`` /
        ``match_win_ci`` (a split counts half), ``points_per_hand`` / ``points_ci`` and
        ``hand_win_rate`` / ``hand_win_ci`` first of all; ``win_rate`` is the match win
        rate in match mode and the hand win rate otherwise; plus ``mode``
        ("matches" or "hands") and ``opponent_win_rate``. 95% intervals.
        ``opponent_stats`` (heads-up only): also ``"opponent"``, the same result for
        ``agent_b`` from the same games (what ``evaluate(agent_b, agent_a)`` measures,
        without playing them again; the agents' seeds follow their places, so a second
        evaluation with the places swapped plays other random choices).
        ``progress(k)``: called as chunks of deals finish (``play_games``), ``k`` deals each.
        ``decision_limit``: seconds each call into an agent may take (``play_games``).

    Raises:
        AgentError (a ``ValueError``): an agent failed during play (``play_games``): the
            message names it, its seat and what it did.
        ValueError: bad agents, rules, deals, workers or limit; ``opponent_stats`` at a
            table of more than 2 players.
    """
    r = _resolve_rules(rules, players)
    matches = resolve_matches(r, matches)
    n = r.num_players
    if opponent_stats and n != 2:
        raise ValueError(f"opponent_stats needs a heads-up table; this one has {n} players (agent_b holds {n - 1} "
                         "seats, so its result is not agent_b's against agent_a)")
    specs = [agent_a, agent_b] if n == 2 else [agent_a] + [agent_b] * (n - 1)
    check_limit(decision_limit)
    for s in (agent_a, agent_b):
        _checked_agent(s)
    tables = [tuple(range(len(specs)))]
    records = play_games(specs, tables, r, deals, seed, matches=matches, workers=workers, progress=progress,
                         decision_limit=decision_limit)
    a = _agent_stats(records, 0, matches)
    # the opponents' wins counted as agent_a's are (a split match shares 1/k each)
    a["opponent_win_rate"] = sum(_agent_stats(records, i, matches)["wins"] for i in range(1, len(specs))) / len(records)
    a["mode"] = "matches" if matches else "hands"
    if opponent_stats:
        b = _agent_stats(records, 1, matches)
        b["opponent_win_rate"] = a["wins"] / len(records)
        b["mode"] = a["mode"]
        a["opponent"] = b
    return a


__all__ = [
    "wilson_interval", "mean_interval", "bradley_terry_elo", "openskill_ratings", "deal_seed", "agent_seed",
    "make_tables", "seating", "hand_seed", "play_game", "ratio_interval", "resolve_matches", "play_games", "summarize", "run_tournament", "evaluate",
    "unique_names", "AgentError", "DECISION_LIMIT",
]
