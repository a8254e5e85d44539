"""Refereeing the agents' calls during play, and the worker processes that play them.

Every call into an agent during an evaluation (``seed()`` before a game, ``act()`` for
each decision) goes through a ``Referee``: it has ``DECISION_LIMIT`` seconds of wall
clock (or the limit given), an ``act()`` must answer an action id as the env takes them
(``engine.as_action_id``: an ``int`` or a numpy integer, never a bool, a float, a string,
``None`` or an array of more than one number), and whatever the agent raises,
``SystemExit`` and ``KeyboardInterrupt`` included, becomes an ``AgentError``: one line
naming the agent, its seat, what it did and the game.

``play_in_workers`` runs jobs in worker processes and watches them from the parent, so
that an agent that ends its process (``os._exit``), or that the time-out signal does not
stop, is reported as well instead of leaving the evaluation waiting for ever.
"""
from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable, Iterator, Sequence

from rummy_env import engine

DECISION_LIMIT = 10.0
"""Seconds of wall clock an agent has for each call during play (``act()`` for one
decision, ``seed()`` before a game), unless the caller gives another ``decision_limit``
(``rummy eval --decision-limit``). Far above what the built-in agents need, the
slowest search settings on a busy machine included (their times per decision are in
docs/search.md), and short enough that an agent that hangs is reported soon."""

STOP_GRACE = 2.0
"""Seconds past the limit after which the parent stops a worker whose agent has not
returned (one that catches the time-out or is stuck where no signal reaches it)."""

MAX_LIMIT = 1e6
"""The largest ``decision_limit`` in seconds (the timer's range; 0 means no limit)."""

_REPEAT = 0.5  # after the limit, the time-out is raised again every _REPEAT s until the call returns


class AgentError(ValueError):
    """An agent failed during play: it raised (any ``BaseException``: ``sys.exit`` and
    ``KeyboardInterrupt`` too), ended its process, went past the per-decision limit, or
    answered something that is not a legal action id.

    ``str()`` is one line: ``agent NAME at seat S WHAT (deal D, rotation R)``; the
    ``rummy`` commands print it and exit 2. The parts are kept as ``agent`` (its display
    name, ``unique_names``), ``seat`` (None when no agent can be named), ``what`` and
    ``where``.
    """

    def __init__(self, agent: str | None, seat: int | None, what: str, where: str = "") -> None:
        self.agent, self.seat, self.what, self.where = agent, seat, what, where
        who = "a worker process" if agent is None else f"agent {agent!r}" + ("" if seat is None else f" at seat {seat}")
        super().__init__(f"{who} {what}" + (f" ({where})" if where else ""))

    def __reduce__(self) -> tuple:  # the parts cross from a worker process intact
        return (type(self), (self.agent, self.seat, self.what, self.where))


class _OverTime(BaseException):
    """Raised into an agent's call by the per-decision timer; a ``BaseException``, so that
    an agent's own ``except Exception`` does not take it."""


_LOCAL = threading.local()  # .referee: the Referee of the play in progress in this thread

# a worker's record in the shared array the parent reads (doubles): what the worker is
# calling (_IDLE, _ACT, _SEED, _MAKE), the seat, the agent's index, when the call began
# (time.monotonic, the same clock in every process), and the game: deal, table, rotation
_REC = 7
_IDLE, _ACT, _SEED, _MAKE = 0.0, 1.0, 2.0, 3.0
_CALLS = {_ACT: "in act()", _SEED: "in seed()", _MAKE: "while it was being made"}


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line (whitespace runs and control characters as one space), cut to ``limit``."""
    out = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return out if len(out) <= limit else out[:limit - 3] + "..."


def _what_raised(e: BaseException, call: str) -> str:
    """``called sys.exit(3) in act()`` or ``raised RuntimeError in act(): text``, on one line
    (``call``: where, e.g. ``in act()``)."""
    try:
        if isinstance(e, SystemExit):
            code = "" if e.code is None else repr(e.code) if isinstance(e.code, str) else str(e.code)
            return f"called sys.exit({one_line(code, 60)}) {call}"
        text = one_line(str(e))
    except Exception:  # noqa: BLE001 - an exception (or exit code) whose str() fails
        return f"called sys.exit(...) {call}" if isinstance(e, SystemExit) else f"raised {type(e).__name__} {call}"
    return f"raised {type(e).__name__} {call}" + (f": {text}" if text else "")


def game_place(deal: int, table: int, rotation: int, tables: int) -> str:
    """Where a game is in a tournament, for a message: ``deal 3, rotation 1`` (the table too when there are several)."""
    return f"deal {deal}, " + (f"table {table}, " if tables > 1 else "") + f"rotation {rotation}"


def check_limit(limit: Any) -> float | None:
    """A ``decision_limit``: seconds in ``(0, MAX_LIMIT]``, or ``None`` / ``0`` for none.

    Raises:
        ValueError: not a number of seconds in ``0..MAX_LIMIT`` (a bool is not one).
    """
    if limit is None:
        return None
    if (isinstance(limit, bool) or not isinstance(limit, (int, float)) or not math.isfinite(limit)
            or not 0 <= limit <= MAX_LIMIT):
        raise ValueError(f"decision_limit must be a number of seconds in 0..{MAX_LIMIT:g} (0: no limit), "
                         f"got {limit!r}")
    return float(limit) or None


class Referee:
    """Makes every call into the agents of one play (``seed()``, ``act()``) and turns
    whatever goes wrong into an ``AgentError`` naming the agent, its seat and the game.

    Each call is timed: with a timer (``signal.setitimer``, possible in the main thread
    when nobody else uses ``SIGALRM``) an agent past the limit is interrupted by
    ``_OverTime``, again every ``_REPEAT`` s until its call returns; without one the
    time is checked when the call returns. In a worker process the call is also written
    to the shared ``record``, so the parent can stop a worker whose agent does not
    return and name the agent of a worker that died.

    ``KeyboardInterrupt`` raised by an agent is the agent's failure; one raised by a real
    Ctrl-C (or by a ``SIGTERM`` handler that raises it, as ``rummy train``'s does) still
    stops the caller: in this process's main thread the callable ``SIGINT`` and
    ``SIGTERM`` handlers are wrapped to note that a signal came.
    """

    def __init__(self, limit: float | None, names: Sequence[str] | None = None, record: Any = None,
                 slot: int = 0, worker: bool = False) -> None:
        """``limit``: seconds a call (``None``: no limit, ``check_limit``); ``names``: the
        agents' display names by agent index; ``record`` and ``slot``: a worker's place in
        the array its parent reads; ``worker``: this is a worker process, whose
        ``SIGALRM`` is the referee's."""
        self.limit = limit
        self.names = list(names) if names is not None else None
        self.record = record
        self.base = slot * _REC
        self.worker = worker
        self.seats: list[int] = []
        self.labels: list[str] = []
        self.where = ""
        self.timer = False
        self.interrupted = False
        self._armed = False
        self._saved: dict[int, Any] = {}
        self._outer: Any = None

    # --- installing and removing the signal handlers
    def __enter__(self) -> "Referee":
        self._outer = getattr(_LOCAL, "referee", None)
        _LOCAL.referee = self
        if threading.current_thread() is not threading.main_thread():
            return self  # no signals off the main thread: the time is checked after each call
        if self.limit is not None and hasattr(signal, "setitimer"):
            current = signal.getsignal(signal.SIGALRM)
            free = current in (signal.SIG_DFL, signal.SIG_IGN) and signal.getitimer(signal.ITIMER_REAL)[0] == 0
            if self.worker or free:  # a caller's own alarm is left alone
                self._saved[signal.SIGALRM] = current
                signal.signal(signal.SIGALRM, self._alarm)
                self.timer = True
        if not self.worker:
            for sig in (signal.SIGINT, signal.SIGTERM):
                prev = signal.getsignal(sig)
                if callable(prev):
                    self._saved[sig] = prev
                    signal.signal(sig, self._noting(prev))
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in self._saved.items():
            if handler is not None:
                signal.signal(sig, handler)
        self._saved.clear()
        _LOCAL.referee = self._outer

    def _alarm(self, signum: int, frame: Any) -> None:  # noqa: ARG002
        # the timer is set as each call begins and left to run out after it: an alarm
        # between calls finds nothing armed and is ignored (one system call a decision)
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, _REPEAT)  # again, until the call returns
            raise _OverTime

    def _noting(self, prev: Callable) -> Callable:
        def handler(signum: int, frame: Any) -> Any:
            self.interrupted = True
            return prev(signum, frame)
        return handler

    # --- one game
    def begin_game(self, seats: Sequence[int] | None, labels: Sequence[str], place: str,
                   game: tuple[int, int, int] = (-1, -1, -1)) -> None:
        """The game about to be played: the agent's index and display name by seat, where
        it is for a message (``game_place``) and, for the parent, its deal, table and rotation."""
        self.seats = list(seats) if seats is not None else []
        self.labels = list(labels)
        self.where = place
        if self.record is not None:
            b = self.base
            self.record[b + 4], self.record[b + 5], self.record[b + 6] = game

    def note(self, phase: float, seat: int, agent: int) -> None:
        """Write what this worker is calling into its record (the parent reads it)."""
        if self.record is not None:
            b = self.base
            self.record[b + 1], self.record[b + 2], self.record[b + 3] = seat, agent, time.monotonic()
            self.record[b] = phase

    @contextlib.contextmanager
    def making(self, seat: int, agent: int) -> Iterator[None]:
        """Around making agent ``agent`` for ``seat`` in a worker (``make_agent``): a worker
        that dies there is named by its record. No time limit (loading a policy may be slow)."""
        self.note(_MAKE, seat, agent)
        try:
            yield
        finally:
            self.note(_IDLE, seat, agent)

    def act(self, agent: Any, seat: int, observation: Any, mask: Any, n: int) -> int:
        """``agent.act(observation, mask)`` as an action id in ``0..n-1`` (legality is the engine's).

        Raises:
            AgentError: the agent raised, went past the limit or answered no action id.
        """
        return self._call(seat, _ACT, agent.act, (observation, mask), n)

    def seed(self, agent: Any, seat: int, value: int) -> None:
        """``agent.seed(value)``, when the agent has a ``seed`` attribute.

        Raises:
            AgentError: ``seed`` is not callable, raised, or went past the limit.
        """
        try:
            fn = getattr(agent, "seed", None)
        except Exception as e:  # noqa: BLE001 - a property of the agent's own that fails
            raise AgentError(self.label(seat), seat, _what_raised(e, "when its seed attribute was read"),
                             self.where) from e
        if fn is None:
            return
        if not callable(fn):
            raise AgentError(self.label(seat), seat, f"has a seed attribute that is not a method seed(seed) "
                                                     f"(its type: {type(fn).__name__})", self.where)
        self._call(seat, _SEED, fn, (value,), None)

    def label(self, seat: int) -> str:
        """The display name of the agent at ``seat`` in the game being played."""
        return self.labels[seat] if seat < len(self.labels) else f"seat {seat}"

    def _call(self, seat: int, phase: float, fn: Callable, args: tuple, n: int | None) -> Any:
        reading = False  # the answer is being read as an action id (its own code may run)
        if self.record is not None:
            self.note(phase, seat, self.seats[seat] if seat < len(self.seats) else -1)
        t0 = time.monotonic()
        try:
            try:
                if self.timer:
                    self._armed = True
                    signal.setitimer(signal.ITIMER_REAL, self.limit)
                out = fn(*args)
                if n is not None and (type(out) is not int or not 0 <= out < n):
                    reading = True
                    out = engine.as_action_id(out, n)
            finally:
                self._armed = False  # an alarm from here on is ignored
                if self.record is not None:
                    self.record[self.base] = _IDLE
        except BaseException as e:  # noqa: BLE001 - everything an agent can raise, exits included
            if isinstance(e, KeyboardInterrupt) and self.interrupted:
                raise  # a real Ctrl-C, not the agent's
            raise self._failure(seat, phase, reading, e) from e
        if self.limit is not None and time.monotonic() - t0 > self.limit:
            raise AgentError(self.label(seat), seat, self._late(phase), self.where)
        return out

    def _late(self, phase: float) -> str:
        return f"took more than the {self.limit:g} s limit {_CALLS[phase]}"

    def _failure(self, seat: int, phase: float, reading: bool, e: BaseException) -> AgentError:
        if isinstance(e, _OverTime):
            what = self._late(phase)
        elif reading and isinstance(e, ValueError):
            what = f"answered {_CALLS[phase]} with no action id: {one_line(str(e))}"
        elif reading:
            what = f"answered {_CALLS[phase]} with an object that {_what_raised(e, 'when read as an action id')}"
        else:
            what = _what_raised(e, _CALLS[phase])
        return AgentError(self.label(seat), seat, what, self.where)


def current() -> "Referee | None":
    """The ``Referee`` of the play in progress in this thread, if any."""
    return getattr(_LOCAL, "referee", None)


def init_worker() -> None:
    """A worker process's start: one torch thread, default signal handling (SIGINT
    ignored: the parent handles Ctrl-C and ends the workers), and a thread that ends the
    worker when its parent is gone (killed without the chance to end its workers, while
    an agent is busy). The workers already split the cores, and a forked child must not
    enter the OpenMP thread pool its parent started (it would wait forever for threads
    that were not forked)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    # the parent's Ctrl-C / SIGTERM handlers (rummy train checkpoints on them) are not
    # the workers': the parent stops the workers, a worker just ends
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parent = os.getppid()

    def orphaned() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=orphaned, name="rummy-eval-parent-watch", daemon=True).start()


class _WorkerTraceback(Exception):
    """The traceback of an error raised in a worker process (the cause of the error re-raised in the parent)."""

    def __str__(self) -> str:
        return "\n" + str(self.args[0]) if self.args else ""


def _worker_main(conn: Any, record: Any, slot: int, run: Callable[[Any], Any], jobs: Sequence[Any],
                 limit: float | None, names: Sequence[str]) -> None:
    """A worker process: ``run(jobs[j])`` for each index ``j`` the parent sends over
    ``conn`` (``None`` ends it), under a ``Referee`` that writes into slot ``slot`` of
    ``record``; answers ``("ok", result)``, or ``("error", exception, traceback)`` and ends."""
    init_worker()
    with Referee(limit, names, record=record, slot=slot, worker=True):
        while True:
            try:
                j = conn.recv()
            except (EOFError, OSError):  # the parent is gone
                return
            if j is None:
                return
            try:
                out = run(jobs[j])
            except BaseException as e:  # noqa: BLE001 - sent to the parent, which raises it
                tb = "" if isinstance(e, AgentError) else traceback.format_exc()
                try:
                    conn.send(("error", e, tb))
                except Exception:  # noqa: BLE001 - an exception that does not pickle
                    conn.send(("error", RuntimeError(f"{type(e).__name__}: {one_line(str(e))}"), tb))
                return
            conn.send(("ok", out))


def _exit_text(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def play_in_workers(run: Callable[[Any], Any], jobs: Sequence[Any], workers: int, limit: float | None,
                    names: Sequence[str], tables: int = 1,
                    done: Callable[[int], None] | None = None) -> list[Any]:
    """``[run(job) for job in jobs]``, played in ``workers`` processes (one job at a time
    each) under a ``Referee`` with ``limit`` and the agents' display ``names``;
    ``done(j)`` is called as job ``j`` finishes (in any order). ``run`` must be a
    module-level function (it is pickled where processes are spawned, not forked).

    The parent waits on each worker's pipe and process. A worker that died, or one whose
    agent is ``STOP_GRACE`` s past the limit (the worker is then stopped), raises
    ``AgentError`` naming the agent and the game from the worker's record (``tables``:
    how many tables the games are at, for that name); an error raised in a worker is
    raised here, its traceback as the cause. Every worker is ended before this returns
    or raises.

    Raises:
        AgentError (a ``ValueError``): an agent's failure, in a worker or of a worker.
    """
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else None)
    record = ctx.RawArray("d", workers * _REC)
    for i in range(workers):
        record[i * _REC + 4] = -1.0  # no game yet
    procs, conns = [], []
    for i in range(workers):
        mine, theirs = ctx.Pipe()
        # the jobs go with the process (inherited when forked): agent objects need no pickling there
        p = ctx.Process(target=_worker_main, args=(theirs, record, i, run, jobs, limit, names), daemon=True)
        p.start()
        theirs.close()
        procs.append(p)
        conns.append(mine)
    results: list[Any] = [None] * len(jobs)
    todo = iter(range(len(jobs)))
    busy: dict[int, int] = {}  # worker -> job index

    def give(i: int) -> None:
        j = next(todo, None)
        conns[i].send(j)
        if j is not None:
            busy[i] = j

    def named(i: int, what: str, after: str = "") -> AgentError:
        """The failure of worker ``i``'s agent, from the worker's record: ``what`` it did
        ``in act()`` (or wherever the record says it was), then ``after``."""
        b = i * _REC
        phase, seat, agent = record[b], int(record[b + 1]), int(record[b + 2])
        deal, table, rotation = int(record[b + 4]), int(record[b + 5]), int(record[b + 6])
        place = game_place(deal, table, rotation, tables) if deal >= 0 else ""
        if phase == _IDLE or not 0 <= agent < len(names):
            return AgentError(None, None, f"{what} outside any call to an agent{after}", place)
        return AgentError(names[agent], seat, f"{what} {_CALLS[phase]}{after}", place)

    def died(i: int) -> AgentError:
        procs[i].join(1)
        code = _exit_text(procs[i].exitcode)
        b = i * _REC
        if record[b] == _IDLE:
            return named(i, f"ended ({code})")  # "a worker process ended (...) outside any call to an agent"
        return named(i, f"ended its worker process ({code})")

    clean = False
    try:
        for i in range(workers):
            give(i)
        while busy:
            waiting = [conns[i] for i in busy] + [procs[i].sentinel for i in busy]
            multiprocessing.connection.wait(waiting, timeout=0.2 if limit is not None else None)
            for i in list(busy):
                if conns[i].poll():
                    try:
                        msg = conns[i].recv()
                    except EOFError:  # closed without an answer: the worker died
                        raise died(i) from None
                    if msg[0] == "error":
                        _, err, tb = msg
                        if tb:
                            raise err from _WorkerTraceback(tb)
                        raise err
                    j = busy.pop(i)
                    results[j] = msg[1]
                    if done:
                        done(j)
                    give(i)
                elif not procs[i].is_alive():
                    raise died(i)
            if limit is not None:
                now = time.monotonic()
                for i in busy:
                    b = i * _REC
                    if record[b] in (_ACT, _SEED) and now - record[b + 3] > limit + STOP_GRACE:
                        procs[i].kill()
                        raise named(i, f"took more than the {limit:g} s limit", "; its worker was stopped")
        clean = True
    finally:
        for i, p in enumerate(procs):
            if not clean and p.is_alive():
                p.kill()
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()
            conns[i].close()
    return results
