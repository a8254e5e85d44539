"""``rummy bench``: speed benchmarks of the environment (and a hook for training's).

``rummy bench env`` plays uniformly random legal moves (one action drawn from the
legal ids, read from the action mask) as fast as it can, through each layer of the
stack, and reports decisions per second and hands per second (the median of
``--repeats`` runs of ``--seconds`` each; the modes take turns, round-robin, so a
change in the machine's load hits them alike):

| mode | loop |
| --- | --- |
| ``engine`` | ``engine.legal_actions`` + ``engine.apply`` (no observation): the engine micro-benchmark |
| ``raw_env`` | ``rummy_v0.raw_env``: ``env.last()`` (observation + mask), then ``env.step`` |
| ``env`` | ``rummy_v0.env()``, the wrapped env, same loop |
| ``single`` | ``SingleAgentEnv`` with random opponents: ``action_masks()`` + ``step`` |
| ``engine_general`` | ``engine`` with a table without deck variants played by the general count-mask path (``--modes engine_general``; the fast path's reference) |

When they are importable, the same loop runs on two peers, side by side in the
same process, and the ratios (ours / peer) are printed:

| peer | loop | needs |
| --- | --- | --- |
| ``pz_gin_rummy`` | PettingZoo's ``gin_rummy_v4.env()``: ``env.last()`` then ``env.step`` | ``pettingzoo[classic]<1.27`` and rlcard |
| ``openspiel_gin_rummy`` | OpenSpiel's ``gin_rummy`` through pyspiel: ``observation_tensor()`` + ``legal_actions_mask()`` every decision | ``open-spiel`` |

Every mode counts a *decision* as one action of a player (chance events of
OpenSpiel and PettingZoo's dead steps after the end are not counted) and a *hand*
as one episode from the deal to its end; the PettingZoo loops also make the dead
steps (``step(None)`` for each terminated agent), as ``agent_iter`` would.

``rummy bench train`` is ``rummy_env.benchmark.speed_train`` beside it, which also builds
the ``rummy bench`` command from ``add_env_arguments`` and ``run_env`` here: this module
imports nothing from ``rummy_env.train``, so ``rummy bench env`` needs no train extra.

Run as ``rummy bench env`` or ``python -m rummy_env.benchmark.speed env``. Numbers are never
asserted by tests: performance is measured here only.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

OUR_MODES = ("engine", "raw_env", "env", "single", "engine_general")
DEFAULT_MODES = OUR_MODES[:4]  # engine_general on request (--modes): the fast path's reference
PEER_MODES = ("pz_gin_rummy", "openspiel_gin_rummy")
MODE_TITLES = {
    "engine": "engine (legal_actions + apply)",
    "engine_general": "engine, general (count-mask) path",
    "raw_env": "rummy_v0.raw_env (obs + mask)",
    "env": "rummy_v0.env() (wrapped)",
    "single": "SingleAgentEnv (random opponents)",
    "pz_gin_rummy": "PettingZoo gin_rummy_v4.env()",
    "openspiel_gin_rummy": "OpenSpiel gin_rummy (pyspiel)",
}
# ratios printed: (ours, peer)
RATIOS = (
    ("engine", "openspiel_gin_rummy"),
    ("raw_env", "openspiel_gin_rummy"),
    ("env", "openspiel_gin_rummy"),
    ("raw_env", "pz_gin_rummy"),
    ("env", "pz_gin_rummy"),
    ("single", "pz_gin_rummy"),
)


@dataclass
class Result:
    """One mode at one player count: the medians and every run's raw numbers."""

    mode: str
    players: int
    rules: str
    decisions_per_s: float
    hands_per_s: float
    decisions_per_hand: float
    runs: list[dict[str, float]] = field(default_factory=list)


# ---------------------------------------------------------------- the loops
# Each loop plays until ``deadline`` (a perf_counter time), checked at the end of
# every hand, and returns (decisions, hands, seconds).

Loop = Callable[[float], tuple[int, int, float]]


def _whole_hands(play_hand: Callable[[], int]) -> Loop:
    """The loop around ``play_hand`` (plays one whole hand, returns its decisions):
    hands one after another until the deadline."""

    def run(deadline: float) -> tuple[int, int, float]:
        decisions = hands = 0
        t0 = time.perf_counter()
        while True:
            decisions += play_hand()
            hands += 1
            t = time.perf_counter()
            if t >= deadline:
                return decisions, hands, t - t0

    return run


def _engine_loop(rules: Any, seed: int, general: bool = False) -> Loop:
    from rummy_env import engine

    rng = random.Random(seed)
    legal_actions, apply, new_game = engine.legal_actions, engine.apply, engine.new_game

    def play_hand() -> int:
        decisions = 0
        st = new_game(rules, seed=rng.getrandbits(63), _general=general)
        while not st.hand_over:
            legal = legal_actions(st)
            apply(st, legal[rng.randrange(len(legal))])
            decisions += 1
        return decisions

    return _whole_hands(play_hand)


def _aec_loop(env: Any, seed: int) -> Loop:
    """The PettingZoo AEC loop: ``last()`` then a random legal action from the mask."""
    import numpy as np

    rng = random.Random(seed)
    flatnonzero = np.flatnonzero

    def play_hand() -> int:
        decisions = 0
        env.reset(seed=rng.getrandbits(31))
        while env.agents:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
            decisions += 1
        return decisions

    return _whole_hands(play_hand)


def _raw_env_loop(rules: Any, seed: int) -> Loop:
    from rummy_env import rummy_v0

    return _aec_loop(rummy_v0.raw_env(rules=rules), seed)


def _env_loop(rules: Any, seed: int) -> Loop:
    from rummy_env import rummy_v0

    return _aec_loop(rummy_v0.env(rules=rules), seed)


def _single_loop(rules: Any, seed: int) -> Loop:
    import numpy as np

    from rummy_env import SingleAgentEnv

    env = SingleAgentEnv(rules=rules)
    rng = random.Random(seed)
    flatnonzero = np.flatnonzero
    count = [0]
    inner = env.env
    inner_step = inner.step

    def counting_step(action: Any) -> None:  # counts the opponents' decisions too
        count[0] += 1
        inner_step(action)

    inner.step = counting_step

    def play_hand() -> int:
        before = count[0]
        env.reset(seed=rng.getrandbits(31))
        done = False
        while not done:
            legal = flatnonzero(env.action_masks())
            _, _, done, trunc, _ = env.step(int(legal[rng.randrange(len(legal))]))
            done = done or trunc
        return count[0] - before

    return _whole_hands(play_hand)


def _pz_gin_loop(players: int, seed: int) -> Loop:
    from pettingzoo.classic import gin_rummy_v4  # needs pettingzoo<1.27 and rlcard

    return _aec_loop(gin_rummy_v4.env(), seed)


def _openspiel_loop(players: int, seed: int) -> Loop:
    import numpy as np
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)
    flatnonzero = np.flatnonzero
    asarray = np.asarray

    def play_hand() -> int:
        decisions = 0
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                continue
            p = state.current_player()
            asarray(state.observation_tensor(p), dtype=np.float32)
            legal = flatnonzero(asarray(state.legal_actions_mask(p), dtype=np.int8))
            state.apply_action(int(legal[rng.randrange(len(legal))]))
            decisions += 1
        return decisions

    return _whole_hands(play_hand)


# the loop of each mode: ours take the rules, the peers' games only a player count
def _engine_general_loop(rules: Any, seed: int) -> Loop:
    """The engine loop with a table without deck variants played by the general
    count-mask path (``engine.new_game(..., _general=True)``, the reference the fast path
    is tested against: tests/test_engine_paths.py); at a deck-variant table, ``engine``."""
    return _engine_loop(rules, seed, general=True)


_OUR_LOOPS = {"engine": _engine_loop, "raw_env": _raw_env_loop, "env": _env_loop, "single": _single_loop,
              "engine_general": _engine_general_loop}
_PEER_LOOPS = {"pz_gin_rummy": _pz_gin_loop, "openspiel_gin_rummy": _openspiel_loop}
assert tuple(_OUR_LOOPS) == OUR_MODES and tuple(_PEER_LOOPS) == PEER_MODES


def _make_loop(mode: str, rules: Any, players: int, seed: int) -> Loop:
    if mode in _OUR_LOOPS:
        return _OUR_LOOPS[mode](rules, seed)
    if mode in _PEER_LOOPS:
        return _PEER_LOOPS[mode](players, seed)
    raise ValueError(f"unknown bench mode {mode!r}; modes: {', '.join(OUR_MODES + PEER_MODES)}")


def peer_available(mode: str) -> str | None:
    """``None`` when the peer can run here, else why not (the missing package)."""
    try:
        if mode == "pz_gin_rummy":
            importlib.import_module("pettingzoo.classic.gin_rummy_v4")
        elif mode == "openspiel_gin_rummy":
            importlib.import_module("pyspiel")
    except Exception as e:  # noqa: BLE001 - any import failure means "not here"
        need = "pettingzoo[classic]<1.27 and rlcard" if mode == "pz_gin_rummy" else "open-spiel"
        return f"needs {need} ({type(e).__name__}: {e})"
    return None


def _result(mode: str, rules: Any, players: int, runs: list[dict[str, float]]) -> Result:
    dps = statistics.median(r["decisions_per_s"] for r in runs)
    hps = statistics.median(r["hands_per_s"] for r in runs)
    total_d = sum(r["decisions"] for r in runs)
    total_h = sum(r["hands"] for r in runs)
    name = rules if isinstance(rules, str) else getattr(rules, "preset_name", None) or "custom"
    if mode in PEER_MODES:
        name = "gin rummy"
    return Result(mode, players, str(name), dps, hps, total_d / max(total_h, 1), runs)


def measure_all(jobs: list[tuple[str, Any, int]], seconds: float, repeats: int, seed: int = 0,
                warmup: float = 0.3, progress: bool = True) -> list[Result]:
    """Measure every ``(mode, rules, players)`` job: after a short warm-up of each, the
    jobs run round-robin, ``repeats`` rounds of ``seconds`` each, so that a change in
    the machine's load hits every mode alike; returns the medians per job."""
    loops = []
    for mode, rules, players in jobs:
        loop = _make_loop(mode, rules, players, seed)
        loop(time.perf_counter() + warmup)
        loops.append(loop)
    runs: list[list[dict[str, float]]] = [[] for _ in jobs]
    for rnd in range(repeats):
        for i, (mode, _, players) in enumerate(jobs):
            if progress:
                print(f"round {rnd + 1}/{repeats}: {MODE_TITLES[mode]} at {players} players",
                      file=sys.stderr, flush=True)
            d, h, s = loops[i](time.perf_counter() + seconds)
            runs[i].append({"decisions": d, "hands": h, "seconds": s,
                            "decisions_per_s": d / s, "hands_per_s": h / s})
    return [_result(mode, rules, players, r) for (mode, rules, players), r in zip(jobs, runs)]


def measure(mode: str, rules: Any, players: int, seconds: float, repeats: int, seed: int = 0) -> Result:
    """One mode alone: ``repeats`` runs of ``seconds`` each; the medians."""
    return measure_all([(mode, rules, players)], seconds, repeats, seed, progress=False)[0]


# ---------------------------------------------------------------- rules per player count

def rules_for(preset: str | None, players: int) -> Any:
    """The ``Rules`` benchmarked at ``players``: ``preset`` (default: ``classic`` at 2
    players, ``turnover`` otherwise) with ``num_players``.

    Raises:
        ValueError: the preset does not allow that many players.
    """
    from rummy_env import Rules

    name = preset or ("classic" if players == 2 else "turnover")
    return Rules.preset(name, num_players=players)


# ---------------------------------------------------------------- output

def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def table_rows(results: list[Result]) -> list[list[str]]:
    """Rows of the main table: mode, players, rules, decisions/s, hands/s, decisions/hand."""
    return [[MODE_TITLES[r.mode], str(r.players), r.rules, _fmt(r.decisions_per_s), _fmt(r.hands_per_s),
             f"{r.decisions_per_hand:.0f}"] for r in results]


def ratio_rows(results: list[Result]) -> list[list[str]]:
    """Rows of the ratio table (decisions/s ours / peer), at the peers' player count (2)."""
    by = {(r.mode, r.players): r for r in results}
    rows = []
    for ours, peer in RATIOS:
        a, b = by.get((ours, 2)), by.get((peer, 2))
        if a and b and b.decisions_per_s > 0:
            rows.append([MODE_TITLES[ours], MODE_TITLES[peer], f"{a.decisions_per_s / b.decisions_per_s:.2f}x"])
    return rows


def _print_tables(results: list[Result], notes: list[str], plain: bool) -> None:
    head = ["mode", "players", "rules", "decisions/s", "hands/s", "decisions/hand"]
    rhead = ["ours", "peer", "decisions/s ratio (ours / peer)"]
    rows, rrows = table_rows(results), ratio_rows(results)
    if not plain:
        try:
            from rich.console import Console
            from rich.table import Table
        except ImportError:
            plain = True
    if plain:
        for h, rs in ((head, rows), (rhead, rrows)):
            if not rs:
                continue
            w = [max(len(x) for x in col) for col in zip(h, *rs)]
            print("  ".join(x.ljust(n) for x, n in zip(h, w)))
            print("  ".join("-" * n for n in w))
            for r in rs:
                print("  ".join(x.rjust(n) if i > 2 else x.ljust(n) for i, (x, n) in enumerate(zip(r, w))))
            print()
    else:
        from ..eval.cli import output_console

        console = output_console()
        t = Table(title="rummy bench env: random legal play")
        for i, h in enumerate(head):
            t.add_column(h, justify="right" if i > 2 else "left")
        for r in rows:
            t.add_row(*r)
        console.print(t)
        if rrows:
            t2 = Table(title="ratios at 2 players")
            for i, h in enumerate(rhead):
                t2.add_column(h, justify="right" if i == 2 else "left")
            for r in rrows:
                t2.add_row(*r)
            console.print(t2)
    for n in notes:
        print(n)


# ---------------------------------------------------------------- the command

ENV_HELP = "random legal play through the engine, raw_env, env() and SingleAgentEnv, and the peers when importable"
ENV_DESCRIPTION = "Decisions/s and hands/s of random legal play (the median of several runs)."


def add_env_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``rummy bench env``."""
    p.add_argument("--players", type=int, nargs="+", default=[2, 4, 6], metavar="N",
                   help="player counts to measure (default: 2 4 6); the peers run at 2 only")
    p.add_argument("--seconds", type=float, default=3.0, help="length of one run in seconds (default 3)")
    p.add_argument("--repeats", type=int, default=3, help="runs per mode; the median is reported (default 3)")
    p.add_argument("--rules", default=None, metavar="PRESET",
                   help="rules preset (default: classic at 2 players, turnover at 3-6)")
    p.add_argument("--modes", nargs="+", default=list(DEFAULT_MODES), choices=OUR_MODES, metavar="MODE",
                   help=f"our modes to run (default: {' '.join(DEFAULT_MODES)}; also engine_general: the engine's "
                        "general count-mask path, which the fast path of the tables without deck variants is "
                        "checked against)")
    p.add_argument("--no-peers", action="store_true", help="skip PettingZoo gin_rummy_v4 and OpenSpiel gin_rummy")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and of the random moves")
    p.add_argument("--cpu", type=int, default=None,
                   help="pin this process to one CPU core (Linux) for steadier numbers")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the results as JSON")
    p.add_argument("--plain", action="store_true", help="a plain-text table instead of rich")


AGENT_HELP = "time per decision of agents (e.g. search), single-threaded"
AGENT_DESCRIPTION = ("Time per decision of each agent, playing whole hands against an opponent from both seats "
                     "(one thread; only the agent's own decisions are timed).")


def add_agent_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``rummy bench agent``."""
    p.add_argument("--agents", nargs="+", default=["search"], metavar="NAME",
                   help="make_agent names to time (default: search)")
    p.add_argument("--opponent", default="heuristic", help="who plays the other seat (default heuristic)")
    p.add_argument("--rules", default="classic", help="rules preset, heads-up (default classic)")
    p.add_argument("--hands", type=int, default=20, help="deals, each played from both seats (default 20)")
    p.add_argument("--seed", type=int, default=777, help="seed of the first deal (default 777)")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the results as JSON")


def time_agent(name: str, opponent: str = "heuristic", rules: Any = "classic", hands: int = 20,
               seed: int = 777) -> dict[str, Any]:
    """Milliseconds per decision of agent ``name`` over ``hands`` deals (``seed``,
    ``seed + 1``, ...), each played once from each seat against ``opponent``.

    Returns ``{"agent", "decisions", "mean_ms", "median_ms", "p95_ms", "max_ms"}``
    (only the agent's own ``act`` calls are timed, wall clock; p95 is the nearest-rank
    95th percentile).

    Raises:
        ValueError: an unknown agent name, rules that are not heads-up, or ``hands < 1``.
    """
    from rummy_env import engine
    from rummy_env.agents import make_agent
    from rummy_env.observation import Encoder, action_mask
    from rummy_env.rules import Rules

    if not isinstance(hands, int) or hands < 1:
        raise ValueError(f"--hands must be an int >= 1, got {hands!r}")
    r = Rules.make(rules)
    if r.num_players != 2:
        raise ValueError(f"rummy bench agent plays heads-up tables, got {r.num_players} players")
    make_agent(name), make_agent(opponent)  # names checked before any play
    enc = Encoder.for_rules(r)
    times: list[float] = []
    for g in range(hands):
        for seat in (0, 1):
            ags = {seat: make_agent(name, seed=g), 1 - seat: make_agent(opponent, seed=g)}
            st = engine.new_game(r, seed=seed + g)
            while not st.hand_over:
                p = st.current
                obs, mask = enc.encode(st, p), action_mask(engine.legal_actions(st), size=st.num_actions)
                t0 = time.perf_counter()
                a = ags[p].act(obs, mask)
                if p == seat:
                    times.append(time.perf_counter() - t0)
                engine.apply(st, int(a))
    ms = sorted(t * 1000.0 for t in times)
    p95 = ms[min(len(ms) - 1, math.ceil(0.95 * len(ms)) - 1)]
    return {"agent": name, "decisions": len(ms), "mean_ms": statistics.fmean(ms), "median_ms": statistics.median(ms),
            "p95_ms": p95, "max_ms": ms[-1]}


def run_agent(args: argparse.Namespace) -> int:
    """``rummy bench agent``: time each agent, print a table, optionally write JSON."""
    check_json_path(args.json)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    rows = [time_agent(a, args.opponent, args.rules, args.hands, args.seed) for a in args.agents]
    print(f"time per decision, {args.hands} deals x 2 seats against {args.opponent}, rules {args.rules}, one thread")
    w = max([28] + [len(r["agent"]) for r in rows])  # a long agent name widens the column, never shifts the rest
    print(f"{'agent':<{w}} {'decisions':>9} {'mean ms':>8} {'median':>8} {'p95':>8} {'max':>8}")
    for r in rows:
        print(f"{r['agent']:<{w}} {r['decisions']:>9} {r['mean_ms']:>8.2f} {r['median_ms']:>8.2f} {r['p95_ms']:>8.2f} "
              f"{r['max_ms']:>8.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]), "results": rows}, fh,
                      indent=2)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``python -m rummy_env.benchmark.speed``: the ``env`` mode alone (``rummy bench``
    adds ``train`` through ``rummy_env.benchmark.speed_train``)."""
    sub = parser.add_subparsers(dest="bench_mode", metavar="env")
    sub.required = True
    add_env_arguments(sub.add_parser("env", help=ENV_HELP, description=ENV_DESCRIPTION))


def check_json_path(path: str | None) -> None:
    """Fail before measuring when ``--json PATH`` cannot be written.

    Raises:
        ValueError: PATH is a directory, its folder does not exist, or it is not writable.
    """
    if path is None:
        return
    if not str(path).strip():
        raise ValueError("--json must be a file path such as bench.json, got an empty path")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"--json {path}: is a directory; give a file path such as {os.path.join(path, 'bench.json')}")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"--json {path}: {folder} is a file, not a folder")
    if not os.path.isdir(folder):
        raise ValueError(f"--json {path}: folder {folder} does not exist")
    existed = os.path.exists(path)
    try:  # the real test (root passes os.access everywhere; /proc and read-only mounts do not)
        with open(path, "a"):
            pass
    except OSError as e:
        raise ValueError(f"--json {path}: not writable ({e.strerror or e})") from None
    if not existed:
        os.remove(path)  # leave no file behind: the results are written after the run


def _check_args(args: argparse.Namespace) -> None:
    check_json_path(args.json)
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        raise ValueError(f"--seconds must be a finite number of seconds > 0, got {args.seconds}")
    if args.cpu is not None:
        if not hasattr(os, "sched_setaffinity"):
            raise ValueError("--cpu needs Linux (os.sched_setaffinity)")
        allowed = sorted(os.sched_getaffinity(0))
        if args.cpu not in allowed:
            raise ValueError(f"--cpu {args.cpu}: this process may run on CPU(s) {', '.join(map(str, allowed))} only")
    if args.repeats < 1:
        raise ValueError(f"--repeats must be >= 1, got {args.repeats}")
    for n in args.players:
        if not 2 <= n <= 7:
            raise ValueError(f"--players takes counts from 2 to 7 (7 with two decks), got {n}")


def run_env(args: argparse.Namespace) -> int:
    """``rummy bench env``: measure, print the tables, optionally write JSON."""
    _check_args(args)
    if args.cpu is not None:  # checked in _check_args
        os.sched_setaffinity(0, {args.cpu})
    rules = {n: rules_for(args.rules, n) for n in args.players}  # fails early on a bad preset
    jobs: list[tuple[str, Any, int]] = [(mode, rules[n], n) for n in args.players for mode in args.modes]
    notes: list[str] = []
    if not args.no_peers:
        for mode in PEER_MODES:
            why = peer_available(mode)
            if why:
                notes.append(f"{MODE_TITLES[mode]}: skipped, {why}")
            else:
                jobs.append((mode, None, 2))
    results = measure_all(jobs, args.seconds, args.repeats, seed=args.seed)
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    notes.append(f"{args.repeats} round-robin runs of {args.seconds:g} s per mode (median); python {platform.python_version()}, "
                 f"{platform.machine()}, {os.cpu_count()} CPUs, pinned to {affinity}")
    _print_tables(results, notes, args.plain)
    if args.json:
        out = {"command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
               "python": platform.python_version(), "cpus": os.cpu_count(), "affinity": affinity,
               "results": [asdict(r) for r in results], "ratios": ratio_rows(results)}
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


def main(args: argparse.Namespace) -> int:
    """Entry point of ``python -m rummy_env.benchmark.speed env``; returns the exit code."""
    return run_env(args)


if __name__ == "__main__":
    _parser = argparse.ArgumentParser(prog="python -m rummy_env.benchmark.speed", description="Speed benchmarks of rummy-env.")
    add_arguments(_parser)
    sys.exit(main(_parser.parse_args()))
