"""Issue 18: every surface (engine, env, single-agent wrapper, CLI, server) driven with a
table of bad inputs. Each row must give a clear message naming the field and what is
allowed, change nothing (position, RNG state, files), and never raise a traceback
(the CLI) or answer a 500 (the server)."""
from __future__ import annotations

import copy
import re

import numpy as np
import pytest

from extras import needs

from rummy_env import Rules, SingleAgentEnv, engine, rummy_v0, state_json
from rummy_env.cli import main as rummy


def _pos(seed=0):
    e = rummy_v0.raw_env()
    e.reset(seed=seed)
    return e.state_dict()


POS = _pos()

# ------------------------------------------------------------------ engine (apply, Rules, STATE)

ENGINE_ACTIONS = [  # (action, words the message must contain)
    (10**20, "0..578"), (True, "0..578"), (-1, "0..578"), (3.0, "0..578"), ("draw", "0..578"),
    (None, "0..578"), (np.array([0, 1]), "0..578"), (100, "is illegal: player 0 must draw first"),
]


@pytest.mark.parametrize("action, needle", ENGINE_ACTIONS, ids=lambda x: repr(x)[:20])
def test_engine_apply(action, needle):
    s = state_json.from_json(POS, seed=1)
    before, rng = state_json.to_json(s), s.rng.getstate()
    with pytest.raises(ValueError, match=needle):
        engine.apply(s, action)
    assert state_json.to_json(s) == before and s.rng.getstate() == rng


RULES = [  # (rules JSON, field named)
    ({"preset": ["classic"]}, "preset"), ({"preset": "classic", "ace_points": 11.0}, "ace_points"),
    ({"preset": "classic", "num_players": 3}, "num_players"), ({"aces": "both"}, "aces"),
    ({"preset": "classic", "max_turns": 0}, "max_turns"), ({"preset": "classic", "layoffs": 1}, "layoffs"),
    ({"preset": "classic", "bogus": 1}, "unknown rule option"), ({"preset": "nope"}, "unknown rules preset"),
    (5, "rules must be"), ({"target": 1.5}, "target"), ({"num_players": True}, "num_players"),
]


@pytest.mark.parametrize("rules, needle", RULES, ids=lambda x: repr(x)[:30])
def test_engine_rules(rules, needle):
    with pytest.raises(ValueError, match=needle):
        Rules.from_json(rules)


STATES = [  # (change to a legal position, field named)
    (dict(scores=[10**400, 0]), "scores"), (dict(scores=[1.0, 0]), "scores"), (dict(scores=[-1, 0]), "scores"),
    (dict(hand_number=10**30), "hand_number"), (dict(turn=-1), "turn"), (dict(recycles=True), "recycles"),
    (dict(current_player=2), "current_player"), (dict(phase="dance"), "phase"),
    (dict(rules={"preset": "classic", "ace_points": 11.0}), "ace_points"), (dict(hands=[["ZZ"], []]), "hands"),
    (dict(has_melded=[1, 0]), "has_melded"), (dict(bogus=1), "unknown field"),
    (dict(hand_over=True), "result"), (dict(hand_over=True, result={"outcome": "out"}), "result.winner"),
    (dict(dealer=1.0), "dealer"),
]


@pytest.mark.parametrize("change, needle", STATES, ids=lambda x: repr(x)[:30])
def test_engine_state(change, needle):
    with pytest.raises(ValueError, match=needle):
        state_json.from_json(dict(POS, **change))


# ------------------------------------------------------------------ env (raw_env and env())

ENV_CALLS = [  # (what is done to a started env, error type, words)
    (lambda e: e.step(10**20), ValueError, "0..578"),
    (lambda e: e.step(True), ValueError, "0..578"),
    (lambda e: e.step(1.5), ValueError, "0..578"),
    (lambda e: e.step("x"), ValueError, "0..578"),
    (lambda e: e.reset(seed="abc"), ValueError, "seed must be None or an int"),
    (lambda e: e.reset(seed=1.5), ValueError, "seed must be None or an int"),
    (lambda e: e.reset(seed=-3), ValueError, "seed must be None or an int"),
    (lambda e: e.reset(options=[1]), ValueError, "options must be a dict"),
    (lambda e: e.reset(options={"state": dict(POS, scores=[10**400, 0])}), ValueError, "scores"),
    (lambda e: e.reset(options={"state": dict(POS, turn=2.0)}), ValueError, "turn"),
    (lambda e: e.unwrapped.observe("player_9"), ValueError, "unknown agent"),
    # the classic table's forms only: no dig ('draw discard 7H') or joker ('JK') forms (issue 27)
    (lambda e: e.unwrapped.action_id("fly away"), ValueError,
     re.escape("'fly away' names no action; forms: 'draw stock', 'draw discard', 'meld 4H 5H 6H', "
               "'layoff JC set|low|high', 'layoff JC', 'discard KS'") + "$"),
]


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw_env", "env"])
@pytest.mark.parametrize("call, exc, needle", ENV_CALLS, ids=range(len(ENV_CALLS)))
def test_env(call, exc, needle, wrapped):
    e = rummy_v0.env() if wrapped else rummy_v0.raw_env()
    e.reset(seed=3)
    raw = e.unwrapped
    before, seeder = raw.state_dict(), copy.deepcopy(raw._seeder.bit_generator.state)
    with pytest.raises(exc, match=needle):
        call(e)
    assert raw.state_dict() == before and raw._seeder.bit_generator.state == seeder
    assert not any(raw.terminations.values())


ENV_ARGS = [(dict(reward_scale=float("inf")), "reward_scale"), (dict(reward_scale=0), "reward_scale"),
            (dict(episode="game"), "episode"), (dict(render_mode="gui"), "render_mode"),
            (dict(max_hands=0), "max_hands"), (dict(max_hands=2.0), "max_hands"),
            (dict(rules={"preset": "classic"}, num_players=3), "num_players"), (dict(ace_points=11.0), "ace_points")]


@pytest.mark.parametrize("kw, needle", ENV_ARGS, ids=lambda x: repr(x)[:30])
def test_env_args(kw, needle):
    with pytest.raises(ValueError, match=needle):
        rummy_v0.raw_env(**kw)


def test_env_before_reset():
    e = rummy_v0.raw_env(render_mode="ansi")
    for call in (lambda: e.observe("player_0"), e.render, e.state_dict, lambda: e.step(0)):
        with pytest.raises(RuntimeError, match="reset"):
            call()


# ------------------------------------------------------------------ single-agent wrapper

WRAPPER_STEPS = [(np.array([0, 1]), "0-d or 1-element integer array"), (np.array([1.0]), "integer array"),
                 (np.zeros((1, 2), dtype=int), "integer array"), (1.5, "0..578"), (True, "0..578"), ("a", "0..578")]


@pytest.mark.parametrize("action, needle", WRAPPER_STEPS, ids=lambda x: repr(x)[:20])
def test_wrapper_step(action, needle):
    env = SingleAgentEnv(seed=4)
    env.reset()
    before = env.state_dict()
    with pytest.raises(ValueError, match=needle):
        env.step(action)
    assert env.state_dict() == before and env.action_masks().any()


WRAPPER_ARGS = [(dict(learner_seat=True), "learner_seat"), (dict(learner_seat=2), "learner_seat"),
                (dict(illegal_penalty=float("nan")), "illegal_penalty"), (dict(illegal_penalty="x"), "illegal_penalty"),
                (dict(seed="abc"), "seed"), (dict(opponents=[1, 2]), "opponents"), (dict(reward_scale=float("inf")),
                                                                                   "reward_scale")]


@pytest.mark.parametrize("kw, needle", WRAPPER_ARGS, ids=lambda x: repr(x)[:30])
def test_wrapper_args(kw, needle):
    with pytest.raises(ValueError, match=needle):
        SingleAgentEnv(**kw)


@pytest.mark.parametrize("kw, needle", [(dict(seed="abc"), "seed"), (dict(seed=2.5), "seed"),
                                        (dict(options={"state": dict(POS, scores=[10**400, 0])}), "scores")])
def test_wrapper_reset(kw, needle):
    s, twin = SingleAgentEnv(seed=8), SingleAgentEnv(seed=8)
    s.reset()
    twin.reset()
    with pytest.raises(ValueError, match=needle):
        s.reset(**kw)
    assert s.state_dict() == twin.state_dict()
    assert np.array_equal(s.reset()[0], twin.reset()[0])  # the RNG did not move


# ------------------------------------------------------------------ CLI

CLI = [  # (argv, words of the message)
    (["train", "--set", "learning_rate=abc"], "learning_rate must be a finite number"),
    (["train", "--set", "gamma=abc"], "gamma must be a finite number"),
    (["train", "--set", "opponent_weights=5"], "opponent_weights must be a table"),
    (["train", "--set", "eval_baselines=5"], "eval_baselines must be a list of strings"),
    (["train", "--set", "learning_rate=inf"], "learning_rate must be a finite number"),
    (["train", "--set", "n_envs=2.5"], "n_envs must be an int"),
    (["train", "--set", "bogus=1"], "unknown config key"),
    (["train", "--out", ""], "--out must name a run folder"),
    (["train", "--out", "{file}/run"], "is a file, so no run folder"),
    (["train", "--resume", "{file}"], "is not a checkpoint folder"),
    (["bench", "env", "--cpu", "99"], "--cpu 99"),
    (["bench", "env", "--seconds", "nan"], "--seconds must be a finite number"),
    (["bench", "env", "--players", "9"], "--players"),
    (["bench", "train", "--json", "{file}/b.json"], "is a file, not a folder"),
    (["export", "pretrained", "--out", ""], "--out must name a folder"),
    (["eval", "--agents", "random"], "at least two agents"),
    (["play", "--rules", "nope"], "unknown rules preset"),
    (["play", "--seat", "5"], "--seat"),
]


@pytest.mark.parametrize("argv, needle", CLI, ids=lambda x: " ".join(x)[:40] if isinstance(x, list) else None)
def test_cli(tmp_path, monkeypatch, capsys, argv, needle):
    if argv[0] == "train":
        needs("torch")
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "a_file"
    f.write_text("x")
    argv = [a.replace("{file}", str(f)) for a in argv]
    if argv[0] == "train" and "--out" not in argv:
        argv += ["--out", str(tmp_path / "run")]
    rc = rummy(argv)
    cap = capsys.readouterr()
    assert rc == 2 and needle in cap.err, (rc, cap.err)
    assert "Traceback" not in cap.err + cap.out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"] and f.read_text() == "x"  # no files


# ------------------------------------------------------------------ server

@pytest.fixture(scope="module")
def client():
    needs("fastapi")
    from fastapi.testclient import TestClient

    from policy_helpers import tiny_policy
    from rummy_env.frontends.serve import create_app

    with TestClient(create_app(tiny_policy()["export"]), raise_server_exceptions=False) as c:
        yield c


SERVER = [  # (request kwargs, status, words)
    (dict(content=b"{", headers={"content-type": "application/json"}), 422, "not JSON"),
    (dict(content=b"[1]", headers={"content-type": "application/json"}), 422, "JSON object"),
    (dict(content=b"1" * 70_000, headers={"content-type": "application/json"}), 413, "larger than"),
    (dict(content=b"{}", headers={"content-type": "text/plain"}), 415, "Content-Type"),
    (dict(content=b"{}"), 415, "Content-Type"),
    (dict(json=dict(POS, scores=[10**400, 0])), 422, "scores"),
    (dict(json=dict(POS, rules={"preset": "classic", "ace_points": 11.0})), 422, "ace_points"),
    (dict(json=dict(POS, rules={"preset": "classic", "ace_points": 11})), 422, "not the rules this policy"),
    (dict(json=dict(POS, rules={"preset": ["classic"]})), 422, "preset"),
    (dict(json=dict(POS, hand_number=10**30)), 422, "hand_number"),
    (dict(json=dict(POS, turn=1.0)), 422, "turn"),
    (dict(json=dict(POS, hand_over=True, result={"outcome": "out", "winner": 9, "points": [0, 0]})), 422,
     "result.winner"),
    (dict(json=dict(POS, current_player=True)), 422, "current_player"),
]


@pytest.mark.parametrize("kw, status, needle", SERVER, ids=range(len(SERVER)))
def test_server(client, kw, status, needle):
    needs("fastapi")
    needs("torch")
    needs("sb3_contrib")
    needs("onnx")
    needs("onnxruntime")
    r = client.post("/act", **kw)
    assert r.status_code == status, (r.status_code, r.text)
    assert needle in r.json()["detail"]
    assert client.post("/act", json=POS).status_code == 200  # still serving, unchanged
