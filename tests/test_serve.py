"""Issue 6: `rummy serve` over real HTTP on 127.0.0.1: /act, /spec, /health, 422s."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from extras import needs

httpx = needs("httpx")
needs("fastapi")
needs("onnxruntime")
needs("torch")
needs("sb3_contrib")
needs("onnx")

from policy_helpers import tiny_policy  # noqa: E402
from server_helpers import running_server  # noqa: E402
from rummy_env import rummy_v0  # noqa: E402


@pytest.fixture(scope="module")
def server():
    from rummy_env.frontends.serve import make_server

    pol = tiny_policy()
    with running_server(make_server(pol["export"], port=0, log_level="warning")) as addrs:
        host, port = addrs[0][:2]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            yield {"client": client, "addrs": addrs, "export": pol["export"], "model": pol["model"]}


def position_after(seed, steps):
    """A real position: a dealt hand after ``steps`` random legal moves, and its env."""
    e = rummy_v0.raw_env()
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        e.step(int(rng.choice(e.legal_actions())))
    return e.state_dict(), e


def check_answer(body, env, model):
    agent = env.agent_selection
    ob = env.observe(agent)
    assert body["player"] == env.agent_name_mapping[agent]
    legal = env.legal_action_texts()
    got = body["legal_actions"]
    assert sorted(x["action"] for x in got) == sorted(legal)
    for x in got:
        assert env.action_text(x["action_id"]) == x["action"] and 0 <= x["probability"] <= 1
    assert abs(sum(x["probability"] for x in got) - 1) < 1e-6
    assert [x["probability"] for x in got] == sorted((x["probability"] for x in got), reverse=True)
    assert body["action"] == got[0]["action"] and body["action_id"] == got[0]["action_id"]
    expect, _ = model.predict(ob["observation"], action_masks=ob["action_mask"].astype(bool), deterministic=True)
    assert body["action_id"] == int(expect)


def test_bound_to_loopback_only(server):
    assert server["addrs"] and all(a[0] == "127.0.0.1" for a in server["addrs"])


def test_health_and_spec(server):
    c = server["client"]
    h = c.get("/health")
    assert h.status_code == 200 and h.json()["status"] == "ok" and h.json()["num_players"] == 2
    s = c.get("/spec")
    assert s.status_code == 200
    assert s.json() == json.loads((server["export"] / "spec.json").read_text())


def test_act_then_bad_positions_then_act_again(server):
    c, model = server["client"], server["model"]
    for seed, steps in ((1, 0), (2, 7), (3, 30)):  # draw and play phases, both seats
        pos, env = position_after(seed, steps)
        r = c.post("/act", json=pos)
        assert r.status_code == 200, r.text
        check_answer(r.json(), env, model)

    pos, env = position_after(4, 5)
    # malformed: not JSON, not an object, a missing field, a bad card text
    bad_requests = [
        (dict(content=b"{not json", headers={"content-type": "application/json"}), "not JSON"),
        (dict(json=[1, 2, 3]), "JSON object"),
        (dict(json={k: v for k, v in pos.items() if k != "hands"}), "missing field"),
        (dict(json=dict(pos, phase="dance")), "phase"),
        (dict(json=dict(pos, hands=[["ZZ"], pos["hands"][1]])), "hands[0]"),
        (dict(json=dict(pos, current_player="zero")), "current_player"),
    ]
    # illegal: a card twice, a card missing
    h0, h1 = pos["hands"]
    bad_requests.append((dict(json=dict(pos, hands=[h0 + [h1[0]], h1])), "appears twice"))
    bad_requests.append((dict(json=dict(pos, stock=pos["stock"][1:])), "missing"))
    # unknown rules name; rules for another player count than the policy's
    bad_requests.append((dict(json=dict(pos, rules="no_such_rules")), "unknown rules preset"))
    bad_requests.append((dict(json=dict(pos, rules={"preset": "classic", "bogus": 1})), "unknown rule option"))
    bad_requests.append((dict(json=dict(pos, rules={"preset": "turnover", "num_players": 3})), "3 players"))
    for kw, needle in bad_requests:
        r = c.post("/act", **kw)
        assert r.status_code == 422, (needle, r.status_code, r.text)
        assert needle in r.json()["detail"], (needle, r.json())
    # still serving
    r = c.post("/act", json=pos)
    assert r.status_code == 200
    check_answer(r.json(), env, model)
    # without "rules" the policy's own rules apply
    r2 = c.post("/act", json={k: v for k, v in pos.items() if k != "rules"})
    assert r2.status_code == 200 and r2.json() == r.json()


def test_answer_never_depends_on_hidden_cards(server):
    c = server["client"]
    pos, env = position_after(6, 4)
    me = pos["current_player"]
    other = 1 - me
    r1 = c.post("/act", json=pos).json()
    # swap an unknown card of the opponent with a stock card, and reverse the stock
    known = set(pos["known_cards"][other])
    i = next(k for k, card in enumerate(pos["hands"][other]) if card not in known)
    hands = [list(h) for h in pos["hands"]]
    stock = list(pos["stock"])
    hands[other][i], stock[0] = stock[0], hands[other][i]
    r2 = c.post("/act", json=dict(pos, hands=hands, stock=stock[::-1])).json()
    assert r1 == r2


def test_rummy_serve_cli_binds_127_0_0_1(server):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, "-m", "rummy_env.cli", "serve", "--policy", str(server["export"]),
                          "--port", str(port), "--log-level", "warning"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert p.poll() is None, p.stderr.read().decode()
            assert time.time() < deadline
            time.sleep(0.1)
        # the listening socket, from the kernel's table: 127.0.0.1 only
        hexport = f"{port:04X}"
        listen = []
        for line in open("/proc/net/tcp").read().splitlines()[1:] + open("/proc/net/tcp6").read().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and local.endswith(":" + hexport):
                listen.append(local.split(":")[0])
        assert listen == ["0100007F"], listen
    finally:
        p.terminate()
        p.wait(10)
