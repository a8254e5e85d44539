"""The evaluator against outside agents that misbehave: every failure ends the evaluation
with one line naming the agent, its seat and what it did (exit status 2), with one worker
and with two, and nothing waits for ever.

The agents live in a module written into a temporary folder (``hostile_agents``, on
``PYTHONPATH`` as an outside agent's would be). Whatever may hang or end its process on a
broken evaluator runs in a subprocess with a timeout; the rest runs ``rummy_env.cli.main``
here. Every game is a two-deal tournament, so each test takes a few seconds.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from rummy_env import Rules
from rummy_env.agents import make_agent
from rummy_env.cli import main as rummy
from rummy_env.eval.referee import AgentError, Referee
from rummy_env.eval.tournament import DECISION_LIMIT, evaluate, play_games, run_tournament

AGENTS = '''
import os, sys, time
import numpy as np


class Agent:
    """A legal player (the first legal id) whose act() misbehaves as its subclass says."""

    def __init__(self, seed=None):
        pass

    def seed(self, seed):
        pass

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


class Exits(Agent):
    def act(self, observation, action_mask):
        sys.exit(3)


class HardExits(Agent):
    def act(self, observation, action_mask):
        os._exit(4)


class Interrupts(Agent):
    def act(self, observation, action_mask):
        raise KeyboardInterrupt


class Closes(Agent):  # another BaseException
    def act(self, observation, action_mask):
        raise GeneratorExit("closed")


class Sleeps(Agent):
    def act(self, observation, action_mask):
        time.sleep(600)


class Stubborn(Agent):  # takes every time-out and carries on: only stopping its process ends it
    def act(self, observation, action_mask):
        end = time.monotonic() + 600
        while time.monotonic() < end:
            try:
                time.sleep(600)
            except BaseException:
                pass


class Answers(Agent):
    """Answers ANSWER(first legal id)."""
    ANSWER = None

    def act(self, observation, action_mask):
        return type(self).ANSWER(int(np.flatnonzero(action_mask)[0]))


def answering(f):
    return type("Answers_" + f.__name__, (Answers,), {"ANSWER": staticmethod(f)})


plus_07 = answering(lambda a: a + 0.7)
as_str = answering(lambda a: str(a))
as_true = answering(lambda a: True)
as_none = answering(lambda a: None)
as_array = answering(lambda a: np.array([a]))
as_np_int = answering(lambda a: np.int64(a))


class SeedIsANumber:
    seed = 5

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


class SeedRaises(Agent):
    def seed(self, seed):
        raise RuntimeError("no seeds here")


class SeedExits(Agent):
    def seed(self, seed):
        sys.exit(5)


seed_is_a_number = SeedIsANumber()
seed_raises_object = SeedRaises()


class Greedy:
    """The built-in greedy agent, from outside."""

    def __init__(self, seed=None):
        from rummy_env.agents import make_agent
        self._a = make_agent("greedy", seed)

    def seed(self, seed):
        self._a.seed(seed)

    def act(self, observation, action_mask):
        return self._a.act(observation, action_mask)
'''

EXITS_AT_IMPORT = "import sys\nsys.exit(0)\n"

TIMEOUT = 60  # seconds: a regression fails instead of hanging the suite


@pytest.fixture(scope="module")
def agents_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("outside_agents")
    (d / "hostile_agents.py").write_text(AGENTS)
    (d / "exits_at_import.py").write_text(EXITS_AT_IMPORT)
    return d


@pytest.fixture
def on_path(agents_dir, monkeypatch):
    monkeypatch.syspath_prepend(str(agents_dir))
    return agents_dir


def _rummy_subprocess(agents_dir, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(agents_dir), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run([sys.executable, "-m", "rummy_env.cli", *argv], capture_output=True, text=True,
                          env=env, timeout=TIMEOUT)


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


# ----------------------------------------------------------------- exits, BaseExceptions, hangs

EXITS_AND_HANGS = [  # the agent, what the line says, and the limit it plays under (None: the default)
    ("Exits", "called sys.exit(3) in act()", None),
    ("HardExits", "ended its worker process (exit code 4) in act()", None),
    ("Interrupts", "raised KeyboardInterrupt in act()", None),
    ("Closes", "raised GeneratorExit in act(): closed", None),
    ("Sleeps", "took more than the 0.5 s limit in act()", "0.5"),
    ("Stubborn", "took more than the 0.5 s limit in act(); its worker was stopped", "0.5"),
]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("attr, what, limit", EXITS_AND_HANGS, ids=[a for a, _, _ in EXITS_AND_HANGS])
def test_an_agent_that_exits_raises_or_hangs_is_named_in_one_line(agents_dir, attr, what, limit, workers):
    t0 = time.monotonic()
    r = _rummy_subprocess(agents_dir, "eval", "--agents", "random", f"hostile_agents:{attr}", "--deals", "2",
                          "--workers", str(workers), "--quiet", *(["--decision-limit", limit] if limit else []))
    line = _one_line(r.stderr)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert line.startswith(f"rummy eval: error: agent 'hostile_agents:{attr}' at seat ")
    assert what in line and "(deal " in line and "rotation " in line, line
    assert time.monotonic() - t0 < 30  # the limit, the grace and the start, not a hang


@pytest.mark.parametrize("workers", [1, 2])
def test_benchmark_eval_names_an_agent_that_ends_its_process_and_writes_no_row(agents_dir, tmp_path, workers):
    out = tmp_path / "row"
    r = _rummy_subprocess(agents_dir, "benchmark", "eval", "--task", "classic-2p-v1", "--agent",
                          "hostile_agents:HardExits", "--match-seeds", "2", "--anchors", "random",
                          "--workers", str(workers), "--out", str(out), "--quiet")
    assert r.returncode == 2, (r.returncode, r.stderr)
    line = _one_line(r.stderr)
    assert "agent 'hostile_agents:HardExits' at seat 0 ended its worker process (exit code 4) in act()" in line
    assert not (out / "row.json").exists()


def test_an_agent_module_that_exits_at_import_fails_with_status_2(agents_dir, tmp_path):
    r = _rummy_subprocess(agents_dir, "eval", "--agents", "exits_at_import:agent", "random", "--deals", "1",
                          "--quiet")
    assert r.returncode == 2 and "importing module 'exits_at_import' called sys.exit(0)" in _one_line(r.stderr)
    out = tmp_path / "row"
    r = _rummy_subprocess(agents_dir, "benchmark", "eval", "--task", "classic-2p-v1", "--agent",
                          "exits_at_import:agent", "--match-seeds", "1", "--out", str(out), "--quiet")
    assert r.returncode == 2 and "called sys.exit(0)" in _one_line(r.stderr)
    assert not (out / "row.json").exists()


def test_ctrl_c_still_interrupts_an_evaluation_of_an_outside_agent(agents_dir):
    # a real SIGINT is the user's, not the agent's: exit 130 ("interrupted"), and the
    # worker process is gone with the parent
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(agents_dir), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    p = subprocess.Popen([sys.executable, "-c", "import signal, sys; signal.signal(signal.SIGINT, "
                          "signal.default_int_handler); from rummy_env.cli import main; sys.exit(main(sys.argv[1:]))",
                          "eval", "--agents", "hostile_agents:Sleeps", "random", "--deals", "2", "--quiet",
                          "--decision-limit", "0"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not _children(p.pid) and time.monotonic() < deadline:  # the worker has started
            time.sleep(0.1)
        kids = _children(p.pid)
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130 and "interrupted" in err, (p.returncode, err)
    time.sleep(1.5)
    assert kids and not [k for k in kids if _alive(k)]


def _children(pid: int) -> list[int]:
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, timeout=10).stdout
    except FileNotFoundError:
        pytest.skip("needs pgrep")
    return [int(x) for x in out.split()]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# ----------------------------------------------------------------- answers that are not action ids

NOT_IDS = [("plus_07", "got '0.7' (float)"), ("as_str", "(str)"), ("as_true", "got 'True' (bool)"),
           ("as_none", "(NoneType)"), ("as_array", "(ndarray)")]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("attr, what", NOT_IDS, ids=[a for a, _ in NOT_IDS])
def test_an_answer_that_is_not_an_action_id_is_refused_as_the_env_refuses_it(on_path, capsys, attr, what, workers):
    rc = rummy(["eval", "--agents", f"hostile_agents:{attr}", "random", "--deals", "2", "--workers", str(workers),
                "--quiet"])
    line = _one_line(capsys.readouterr().err)
    assert rc == 2
    assert line.startswith(f"rummy eval: error: agent 'hostile_agents:{attr}' at seat ")
    assert "answered in act() with no action id: action must be an int in 0..578" in line and what in line, line


def test_a_numpy_integer_is_an_action_id_and_outside_agents_play_the_same_games(on_path):
    # an outside agent plays in a worker process even with one worker: the same records as
    # the same agent built in, played here, and as the numbers measured before the referee
    rules = Rules.preset("classic")
    built_in = play_games(["greedy", "heuristic"], [(0, 1)], rules, deals=6, seed=3, matches=True)
    for w in (1, 2):
        outside = play_games(["hostile_agents:Greedy", "heuristic"], [(0, 1)], rules, deals=6, seed=3, matches=True,
                             workers=w)
        assert outside == built_in
    assert sum(g["hands"] for g in built_in) == 181
    assert sum(g["hand_points"][g["seats"].index(0)] for g in built_in) / 181 == pytest.approx(-3.3756906077348066)
    assert sum(g["match_winners"] == [g["seats"].index(0)] for g in built_in) == 1
    r = evaluate("hostile_agents:as_np_int", "random", deals=2, workers=1)
    assert r["games"] == 4


# ----------------------------------------------------------------- seed

def test_a_seed_attribute_that_is_not_a_method_is_refused_before_play(on_path, capsys):
    with pytest.raises(ValueError, match="seed_is_a_number is not an agent: its seed attribute is not a method"):
        make_agent("hostile_agents:seed_is_a_number")
    obj = type("SeedNumber", (), {"seed": 5, "act": lambda self, o, m: int(np.flatnonzero(m)[0])})()
    with pytest.raises(ValueError, match="SeedNumber is not.*seed attribute is not a method"):
        run_tournament([obj, "random"], deals=1)
    with pytest.raises(ValueError, match="seed attribute is not a method"):
        evaluate(obj, "random", deals=1)
    assert rummy(["eval", "--agents", "hostile_agents:seed_is_a_number", "random", "--deals", "1", "--quiet"]) == 2
    assert "its seed attribute is not a method seed(seed)" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_seed_that_raises_or_exits_is_named_in_one_line(on_path, capsys, workers):
    # the factory gets seed None (no call to seed() when the agent is made); the
    # tournament's seed() before each game is the one that fails
    for attr, what in (("SeedRaises", "raised RuntimeError in seed(): no seeds here"),
                       ("SeedExits", "called sys.exit(5) in seed()")):
        rc = rummy(["eval", "--agents", "random", f"hostile_agents:{attr}", "--deals", "2", "--workers", str(workers),
                    "--quiet"])
        line = _one_line(capsys.readouterr().err)
        assert rc == 2 and f"agent 'hostile_agents:{attr}' at seat " in line and what in line, line
    # an agent object seeded as it is loaded: the same failure, as make_agent's ValueError
    with pytest.raises(ValueError, match=r"seed_raises_object.seed\(7\) raised RuntimeError: no seeds here"):
        make_agent("hostile_agents:seed_raises_object", seed=7)


# ----------------------------------------------------------------- in this process

class _Sleepy:
    def __init__(self, secs):
        self.secs = secs

    def act(self, observation, action_mask):
        time.sleep(self.secs)
        return int(np.flatnonzero(action_mask)[0])


def test_an_agent_object_past_the_limit_is_stopped_in_this_process():
    t0 = time.monotonic()
    with pytest.raises(AgentError, match=r"agent '_Sleepy' at seat 0 took more than the 0.3 s limit in act\(\)") as e:
        evaluate(_Sleepy(600), "random", deals=1, decision_limit=0.3)
    assert time.monotonic() - t0 < 10
    assert (e.value.agent, e.value.seat) == ("_Sleepy", 0)
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_a_callers_own_alarm_is_left_alone_and_the_limit_still_holds():
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        with pytest.raises(AgentError, match="took more than the 0.1 s limit in act"):
            evaluate(_Sleepy(0.3), "random", deals=1, decision_limit=0.1)  # timed when act() returns
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 20  # the caller's timer still runs
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert not fired


def test_a_real_ctrl_c_interrupts_but_an_agents_keyboard_interrupt_is_its_failure():
    class RaisesInterrupt:
        def act(self, observation, action_mask):
            raise KeyboardInterrupt

    with pytest.raises(AgentError, match="raised KeyboardInterrupt in act"):
        evaluate(RaisesInterrupt(), "random", deals=1)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            evaluate(_Sleepy(5), "random", deals=1, decision_limit=20)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)


def test_the_referee_reads_the_answer_inside_the_limit():
    # an answer whose own conversion code misbehaves is the agent's failure, named
    class Index:
        def __index__(self):
            raise SystemExit(9)

    class GivesIndex:
        def act(self, observation, action_mask):
            return Index()

    with pytest.raises(AgentError, match=r"answered in act\(\) with an object that called sys.exit\(9\) when read"):
        evaluate(GivesIndex(), "random", deals=1)
    with Referee(1.0, ["a"]) as ref:
        ref.begin_game([0], ["a"], "here")
        assert ref.act(type("A", (), {"act": lambda self, o, m: np.int8(5)})(), 0, None, None, 579) == 5


def test_decision_limit_values(capsys):
    assert DECISION_LIMIT >= 5  # the search's slowest settings fit (docs/search.md)
    for bad in ("-1", "nan", "inf", "1e12"):
        assert rummy(["eval", "--agents", "greedy", "random", "--deals", "1", "--decision-limit", bad, "--quiet"]) == 2
        assert "--decision-limit must be a number of seconds in 0..1e+06" in _one_line(capsys.readouterr().err)
    for bad in (True, -0.5, float("nan"), "1", 1e7):
        with pytest.raises(ValueError, match="decision_limit must be"):
            evaluate("greedy", "random", deals=1, decision_limit=bad)
    assert evaluate("greedy", "random", deals=1, decision_limit=0)["games"] == 2  # 0: no limit
