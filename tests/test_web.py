"""Issue 16: the web practice table's game API, without a browser (FastAPI TestClient).

Sessions are isolated, bad session ids and bad bodies get 4xx and change nothing,
illegal moves get 409 with the engine's reason and leave the game as it was, hands
and matches finish with the points the rules give (computed by hand below), the
practice positions load, bad positions are refused with the engine's message, and no
JSON answer ever carries the opponent's hidden cards or the stock.
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extras import needs

httpx = needs("httpx")

needs("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from rummy_env.frontends import web  # noqa: E402
from rummy_env.frontends.web import WebTable, create_app, load_positions, opponent_factory  # noqa: E402
from server_helpers import hidden_cards, keys_of, running_server  # noqa: E402

POINTS = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10, **{str(i): i for i in range(2, 10)}}
CARD_RE = re.compile(r"(?<![A-Za-z0-9])([A23456789TJQK][CDHS])(?![A-Za-z0-9])")
BASE = "http://127.0.0.1:8765"  # the TestClient's requests carry the Host of the table's own page


def points(cards):
    return sum(POINTS[c[0]] for c in cards)


@pytest.fixture()
def table():
    make, name = opponent_factory("heuristic")
    return WebTable(make, name, rules="classic", seed=11)


@pytest.fixture()
def client(table):
    with TestClient(create_app(table), base_url=BASE) as c:
        yield c


def server_state(table, sid):
    """The full position held by the server (test side only: never sent to the page)."""
    return table.game(sid).env.state_dict()




def face_up(sd):
    """The cards face up in ``sd``, or discarded earlier this hand."""
    return set(sd["discard"]).union(*sd["melds"], *sd["discards_by"])


def assert_no_hidden(text, hidden):
    """``text`` (a JSON answer) names none of ``hidden`` and has no field that could carry
    other hands or the stock."""
    named = set(CARD_RE.findall(text))
    leaked = named & hidden
    assert not leaked, f"the answer names hidden cards {sorted(leaked)}: {text[:300]}"
    keys = set(keys_of(json.loads(text)))
    assert not keys & {"hands", "stock", "known_cards", "discard", "state"}, keys


def move(client, sid, action):
    return client.post(f"/api/game/{sid}/move", json={"action": action})


# ---------------------------------------------------------------------------- the server

def test_page_config_and_loopback_only(table):
    with running_server(web.make_server(table, port=0, log_level="warning")) as addrs:
        assert addrs and all(a[0] == "127.0.0.1" for a in addrs)
        base = f"http://127.0.0.1:{addrs[0][1]}"
        page = httpx.get(base + "/", timeout=10)
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert '<script src="/static/table.js">' in page.text
        for f in ("table.js", "table.css"):
            assert httpx.get(f"{base}/static/{f}", timeout=10).status_code == 200
        cfg = httpx.get(base + "/api/config", timeout=10).json()
        assert cfg["agent"] == "heuristic" and cfg["rules"] == "classic"
        assert {"classic", "turnover", "deadwood", "stalemate", "practice"} <= set(cfg["presets"])
        # the heads-up table offers the presets it can start: two_decks is for 5-7 players (RULES.md §10.3)
        assert "two_decks" not in cfg["presets"] and {"rum500", "jokers"} <= set(cfg["presets"])
        assert [p["name"] for p in cfg["positions"]] == sorted(load_positions())


def test_rummy_web_cli_help_and_binds_127_0_0_1():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    h = subprocess.run([sys.executable, "-m", "rummy_env.cli", "web", "--help"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert h.returncode == 0
    for flag in ("--port", "--agent", "--rules", "--seed", "--cache"):
        assert flag in h.stdout
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, "-m", "rummy_env.cli", "web", "--agent", "greedy", "--port", str(port),
                          "--seed", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.time() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/config", timeout=1)
                break
            except httpx.TransportError:
                pass
            assert p.poll() is None, p.stderr.read().decode()
            assert time.time() < deadline, "rummy web did not start"
            time.sleep(0.1)
        assert r.status_code == 200 and r.json()["agent"] == "greedy"
        # the only listening socket of the process is on 127.0.0.1
        out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout if _has("ss") else ""
        for line in out.splitlines():
            if f"pid={p.pid}," in line:
                assert f"127.0.0.1:{port}" in line, line
    finally:
        p.terminate()
        p.wait(10)
    assert "http://127.0.0.1:" in p.stderr.read().decode()


def _has(cmd):
    from shutil import which

    return which(cmd) is not None


def test_cli_errors_are_clear():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for args, needle in ((["--agent", "nobody"], "unknown agent 'nobody'"),
                         (["--agent", "heuristic", "--rules", "no_such"], "unknown rules preset"),
                         (["--agent", "heuristic", "--rules", '{"preset": "turnover", "num_players": 3}'], "heads-up")):
        r = subprocess.run([sys.executable, "-m", "rummy_env.cli", "web", "--port", "0", *args],
                           capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 2, r.stderr
        assert needle in r.stderr, r.stderr


# ---------------------------------------------------------------------------- sessions

def test_every_preset_the_page_offers_starts_a_match(client):
    """The page's "New match" list is /api/config's presets: each one starts (the table's
    agent here is the heuristic, which plays every table)."""
    for preset in client.get("/api/config").json()["presets"]:
        r = client.post("/api/new", json={"seed": 1, "rules": preset})
        assert r.status_code == 200, (preset, r.text)
    assert client.post("/api/new", json={"seed": 1, "rules": "two_decks"}).status_code == 422


def test_sessions_are_isolated(client, table):
    a = client.post("/api/new", json={"seed": 5}).json()
    b = client.post("/api/new", json={"seed": 5}).json()
    c = client.post("/api/new", json={"seed": 6}).json()
    assert len({a["session"], b["session"], c["session"]}) == 3
    assert a["view"] == b["view"]  # the same seed deals the same hand
    assert server_state(table, a["session"]) == server_state(table, b["session"])
    assert server_state(table, a["session"]) != server_state(table, c["session"])
    before_b = client.get(f"/api/game/{b['session']}").json()
    before_c = server_state(table, c["session"])
    r = move(client, a["session"], "draw stock")
    assert r.status_code == 200 and r.json()["view"]["phase"] == "play"
    assert client.get(f"/api/game/{b['session']}").json() == before_b
    assert server_state(table, c["session"]) == before_c
    assert client.get(f"/api/game/{a['session']}").json()["view"]["phase"] == "play"


@pytest.mark.parametrize("preset", ["classic", "turnover", "deadwood", "stalemate", "practice"])
def test_every_preset_plays_heads_up(client, table, preset):
    from rummy_env import Rules

    r = client.post("/api/new", json={"rules": preset, "seed": 2})
    assert r.status_code == 200, r.text
    v = r.json()["view"]
    assert v["rules"] == preset and v["target"] == Rules.preset(preset).target and len(v["hand"]) == 10
    v = move(client, r.json()["session"], "draw stock").json()["view"]
    d = next(a for a in v["legal"] if a["kind"] == "discard")
    ans = move(client, r.json()["session"], d["action"]).json()
    assert [f["who"] for f in ans["frames"]][:2] == ["you", "computer"] and ans["view"]["to_move"] == "you"


def test_bad_and_unknown_session_ids(client, table):
    sid = client.post("/api/new", json={}).json()["session"]
    before = server_state(table, sid)
    for bad in ("nope", "x" * 300, sid[:-1], sid + "A", "%00"):
        for r in (client.get(f"/api/game/{bad}"), move(client, bad, "draw stock"),
                  client.post(f"/api/game/{bad}/next", json={})):
            assert r.status_code == 404, (bad, r.status_code, r.text)
            assert "unknown session id" in r.json()["detail"]
    # bad bodies on a good session: 400, nothing changes
    bad_bodies = [
        dict(content=b"{not json", headers={"content-type": "application/json"}),
        dict(json=[1, 2]),
        dict(json={"action": "draw stock", "action_id": 0}),
        dict(json={"move": "draw stock"}),
        dict(json={"action": 7}),
        dict(json={"action_id": 579}),
        dict(json={"action_id": True}),
    ]
    for kw in bad_bodies:
        r = client.post(f"/api/game/{sid}/move", **kw)
        assert r.status_code == 400, (kw, r.text)
        assert r.json()["detail"]
    r = client.post(f"/api/game/{sid}/move", content=b"x" * (web.MAX_BODY_BYTES + 1),
                    headers={"content-type": "application/json"})
    assert r.status_code == 413 and str(web.MAX_BODY_BYTES) in r.json()["detail"]
    assert server_state(table, sid) == before
    assert move(client, sid, "draw stock").status_code == 200


def test_old_sessions_are_dropped_beyond_the_limit(client, table, monkeypatch):
    monkeypatch.setattr(web, "MAX_SESSIONS", 3)
    sids = [client.post("/api/new", json={}).json()["session"] for _ in range(4)]
    assert client.get(f"/api/game/{sids[0]}").status_code == 404
    assert all(client.get(f"/api/game/{s}").status_code == 200 for s in sids[1:])


# ---------------------------------------------------------------------------- moves

def test_illegal_moves_are_refused_and_change_nothing(client, table):
    r = client.post("/api/new", json={"seed": 3}).json()
    sid, view = r["session"], r["view"]
    assert view["to_move"] == "you" and view["phase"] == "draw"
    assert [a["action"] for a in view["legal"]] == ["draw stock", "draw discard"]
    mine, up = view["hand"][0], view["upcard"]
    cases = [
        (f"discard {mine}", "must draw first"),
        ("meld 4H 9C KD", "is not a set"),
        ("dance", "dance"),
        (f"discard {up}", "must draw first"),
    ]
    for text, needle in cases:
        before = server_state(table, sid)
        r = move(client, sid, text)
        assert r.status_code == 409, (text, r.text)
        assert needle in r.json()["detail"], (text, r.json())
        assert server_state(table, sid) == before
        assert client.get(f"/api/game/{sid}").json()["view"] == view
    r = move(client, sid, "draw discard")
    assert r.status_code == 200
    view = r.json()["view"]
    assert up in view["hand"] and view["drawn_from_discard"] == up
    assert f"discard {up}" not in [a["action"] for a in view["legal"]]
    for text, needle in ((f"discard {up}", "taken from the discard pile this turn"),
                         ("draw stock", "has drawn this turn")):
        before = server_state(table, sid)
        r = move(client, sid, text)
        assert r.status_code == 409 and needle in r.json()["detail"], r.text
        assert server_state(table, sid) == before
    # the next hand cannot be asked for while this one is on
    r = client.post(f"/api/game/{sid}/next", json={})
    assert r.status_code == 409 and "not over" in r.json()["detail"]
    # a legal move by id works
    d = next(a for a in view["legal"] if a["kind"] == "discard")
    r = client.post(f"/api/game/{sid}/move", json={"action_id": d["id"]})
    assert r.status_code == 200
    frames = r.json()["frames"]
    assert frames[0]["who"] == "you" and frames[0]["action"] == d["action"]
    assert all(f["who"] == "computer" for f in frames[1:]) and len(frames) >= 3  # a draw and a discard at least
    assert r.json()["view"]["log"][-len(frames):] == [{"who": f["who"], "action": f["action"]} for f in frames]
    assert frames[-1]["view"] == r.json()["view"] and frames[0]["view"]["to_move"] == "computer"


def test_lay_off_position_whole_hand(client, table):
    """lay_off.json: you hold 4H 5H 6H 7C KS, the computer QD 2S, the table 8C 9C TC; the
    stock starts JD 9D 7H. Draw JD, meld 4H 5H 6H, lay 7C off on the low end of the
    clubs, discard KS; the computer draws (9D) and discards; draw 7H, lay it off on
    your hearts, discard JD: out, and you score the computer's two cards (RULES.md §5)."""
    r = client.post("/api/position", json={"name": "lay_off"})
    assert r.status_code == 200, r.text
    sid, v = r.json()["session"], r.json()["view"]
    assert r.json()["frames"] == []
    assert v["hand"] == ["7C", "4H", "5H", "6H", "KS"]  # clubs, diamonds, hearts, spades
    assert v["melds"] == [{"cards": ["8C", "9C", "TC"], "kind": "run"}]
    assert (v["opponent_hand_size"], v["stock_size"], v["upcard"], v["cards_dealt"]) == (2, 40, "3D", 5)
    v = move(client, sid, "draw stock").json()["view"]
    assert "JD" in v["hand"]
    lay = [a for a in v["legal"] if a["kind"] == "layoff"]
    assert lay == [{"action": "layoff 7C low", "id": lay[0]["id"], "kind": "layoff", "cards": ["7C"], "meld": 0}]
    v = move(client, sid, "meld 6H 4H 5H").json()["view"]  # cards in any order
    assert v["melds"][1] == {"cards": ["4H", "5H", "6H"], "kind": "run"}
    v = move(client, sid, "layoff 7C").json()["view"]
    assert v["melds"][0]["cards"] == ["7C", "8C", "9C", "TC"] and v["hand"] == ["JD", "KS"]
    ans = move(client, sid, "discard KS").json()
    assert ans["frames"][0]["who"] == "you" and ans["frames"][0]["action"] == "discard KS"
    moves = [f["action"] for f in ans["frames"][1:]]
    assert moves[0] == "draw stock" and moves[-1].startswith("discard ")  # the computer's turn
    assert all(f["who"] == "computer" for f in ans["frames"][1:])
    thrown = moves[-1].split()[1]
    assert thrown in ("QD", "2S", "9D")
    left = {"QD", "2S", "9D"} - {thrown}
    v = ans["view"]
    assert v["to_move"] == "you" and v["opponent_hand_size"] == 2 and v["upcard"] == thrown
    v = move(client, sid, "draw stock").json()["view"]
    assert "7H" in v["hand"]
    assert {"action": "layoff 7H high", "meld": 1} in [{k: a[k] for k in ("action", "meld")} for a in v["legal"]]
    move(client, sid, "layoff 7H high")
    ans = move(client, sid, "discard JD").json()
    assert [(f["who"], f["action"]) for f in ans["frames"]] == [("you", "discard JD")]  # out: no answer
    v = ans["view"]
    assert v["hand_over"] and v["hand"] == [] and v["legal"] == [] and v["to_move"] is None
    assert v["result"] == {"outcome": "out", "winner": "you", "rummy": False,
                           "points": {"you": points(left), "computer": 0}}
    assert v["scores"] == {"you": points(left), "computer": 0} and not v["match_over"]
    assert move(client, sid, "draw stock").status_code == 409
    # the next hand: the deal passes to the left, so the computer (seat 1) leads
    ans = client.post(f"/api/game/{sid}/next", json={}).json()
    v = ans["view"]
    assert v["hand_number"] == 2 and not v["hand_over"] and v["scores"]["you"] == points(left)
    assert ans["frames"] and ans["frames"][0]["action"].startswith("draw ")
    assert len(v["hand"]) == 5 and v["to_move"] == "you" and v["phase"] == "draw"
    assert v["log"] == [{"who": "computer", "action": f["action"]} for f in ans["frames"]]


def test_going_rummy_and_a_finished_match(client, table):
    """going_rummy.json with the match at 95-0: take the 9C, meld 9S 9D 9C and 4H 5H 6H:
    out in one turn without having melded before, so rummy doubles the computer's
    KC 2D 7S JH 3C: 2 x 32 = 64 (RULES.md §5), and 95 + 64 passes the target 100 (§7)."""
    pos = load_positions()["going_rummy"]["state"]
    r = client.post("/api/position", json={"state": dict(pos, scores=[95, 0])})
    assert r.status_code == 200, r.text
    sid = r.json()["session"]
    assert r.json()["view"]["scores"] == {"you": 95, "computer": 0}
    assert move(client, sid, "draw discard").status_code == 200
    assert move(client, sid, "meld 9S 9D 9C").status_code == 200
    ans = move(client, sid, "meld 4H 5H 6H").json()
    v = ans["view"]
    assert v["result"] == {"outcome": "out", "winner": "you", "rummy": True, "points": {"you": 64, "computer": 0}}
    assert v["scores"] == {"you": 159, "computer": 0}
    assert v["match_over"] and v["match_winners"] == ["you"]
    r = client.post(f"/api/game/{sid}/next", json={})
    assert r.status_code == 409 and "match is over" in r.json()["detail"]
    # a plain deal plays on to the target too: without scores the same hand is not the match
    r = client.post("/api/position", json={"name": "going_rummy"}).json()
    sid = r["session"]
    for a in ("draw discard", "meld 9S 9D 9C", "meld 4H 5H 6H"):
        v = move(client, sid, a).json()["view"]
    assert v["scores"]["you"] == 64 and not v["match_over"]
    assert client.post(f"/api/game/{sid}/next", json={}).status_code == 200


# ---------------------------------------------------------------------------- positions

def test_practice_positions_load(client, table):
    positions = load_positions()
    assert len(positions) >= 3
    cfg = client.get("/api/config").json()["positions"]
    assert [p["name"] for p in cfg] == list(positions)
    for p in cfg:
        assert p["title"] and p["teaches"].endswith(".") and p["teaches"].count(". ") == 0, p
    kinds = set()
    for name, p in positions.items():
        # small hands of the classic table, and 500 Rum's own (issue 25: digs and early melds)
        assert p["state"]["rules"] in ({"preset": "classic", "hand_size": 5}, {"preset": "rum500", "hand_size": 7})
        kinds.add(p["state"]["rules"]["preset"])
        r = client.post("/api/position", json={"name": name})
        assert r.status_code == 200, (name, r.text)
        v = r.json()["view"]
        assert v["title"] == p["title"] and v["cards_dealt"] == p["state"]["rules"]["hand_size"]
        assert v["to_move"] == "you" and v["dig"] == (p["state"]["rules"]["preset"] == "rum500")
        assert v["hand"] == sorted(p["state"]["hands"][0], key=lambda c: ("CDHS".index(c[1]), "A23456789TJQK".index(c[0])))
        assert v["opponent_hand_size"] == len(p["state"]["hands"][1])
        assert_no_hidden(r.text, hidden_cards(server_state(table, r.json()["session"])))
        # the same STATE sent as text loads the same table
        r2 = client.post("/api/position", json={"state": p["state"]})
        assert r2.status_code == 200 and dict(r2.json()["view"], title=p["title"]) == v
    assert kinds == {"classic", "rum500"}
    dig = client.post("/api/position", json={"name": "dig_the_pile"}).json()["view"]
    assert [a["action"] for a in dig["legal"]] == ["draw stock", "draw discard", "draw discard 7H"]
    assert dig["legal"][2]["cards"] == ["7H", "KC", "2D"] and dig["pile"] == ["QC", "8C", "7H", "KC", "2D"]


def test_docs_list_every_position_and_the_screenshot():
    text = (Path(__file__).resolve().parents[1] / "docs" / "web.md").read_text(encoding="utf-8")
    assert "rummy web" in text and "](img/web_table.png)" in text
    assert (Path(__file__).resolve().parents[1] / "docs" / "img" / "web_table.png").is_file()
    for name, p in load_positions().items():
        assert f"| `{name}` | {p['teaches']} |" in text, name


def test_take_the_upcard_and_aces_low_lessons(client):
    sid = client.post("/api/position", json={"name": "take_the_upcard"}).json()["session"]
    v = move(client, sid, "draw discard").json()["view"]
    assert "meld 8D 8H 8S" in [a["action"] for a in v["legal"]]
    sid = client.post("/api/position", json={"name": "aces_low"}).json()["session"]
    move(client, sid, "draw discard")
    r = move(client, sid, "meld QH KH AH")  # AH is not even held; Q-K-A is no run here anyway
    assert r.status_code == 409
    r = move(client, sid, "meld AS 2S 3S")
    assert r.status_code == 200 and r.json()["view"]["melds"] == [{"cards": ["AS", "2S", "3S"], "kind": "run"}]


def test_bad_states_are_refused(client, table):
    pos = load_positions()["lay_off"]["state"]
    h0, h1 = pos["hands"]
    # a finished hand (a stalled one: a hand that went out needs the winner's hand empty)
    over = dict(pos, hand_over=True, turn=300, result={"outcome": "stalled", "winner": None, "rummy": False,
                                                       "points": [0, 0]})
    cases = [
        ({"state": dict(pos, hands=[h0 + [h1[0]], h1])}, 422, "appears twice"),
        ({"state": dict(pos, stock=pos["stock"][1:])}, 422, "missing"),
        ({"state": {k: v for k, v in pos.items() if k != "melds"}}, 422, "missing field"),
        ({"state": dict(pos, phase="dance")}, 422, "phase"),
        ({"state": dict(pos, melds=[["8C", "9C", "JC"]], stock=[c for c in pos["stock"] if c != "JC"] + ["TC"])},
         422, "melds[0]"),
        ({"state": dict(pos, rules="no_such_rules")}, 422, "unknown rules preset"),
        ({"state": dict(pos, rules={"preset": "turnover", "num_players": 3})}, 422, "hands must be a list of 3"),
        ({"state": dict(pos, surprise=1)}, 422, "unknown field"),
        ({"state": over}, 422, "already over"),
        ({"state": [1, 2]}, 422, "JSON object"),
        ({"name": "no_such_position"}, 404, "unknown practice position"),
        ({"name": "lay_off", "state": pos}, 400, "a position is"),
        ({"state": pos, "seat": 2}, 400, "seat must be 0 or 1"),
        ({}, 400, "a position is"),
    ]
    n = len(table.sessions)
    for body, status, needle in cases:
        r = client.post("/api/position", json=body)
        assert r.status_code == status, (needle, r.status_code, r.text)
        assert needle in r.json()["detail"], (needle, r.json())
    assert len(table.sessions) == n  # nothing was started
    for body, status, needle in (({"rules": "no_such"}, 422, "unknown rules preset"),
                                 ({"rules": {"preset": "turnover", "num_players": 4}}, 422, "heads-up"),
                                 ({"seed": -1}, 400, "seed"), ({"colour": "red"}, 400, "a new match")):
        r = client.post("/api/new", json=body)
        assert r.status_code == status and needle in r.json()["detail"], r.text
    # the refused requests broke nothing: a position still loads and plays
    sid = client.post("/api/position", json={"name": "lay_off"}).json()["session"]
    assert move(client, sid, "draw stock").status_code == 200


def test_position_with_the_computer_to_move_and_seat_1(client, table):
    pos = load_positions()["take_the_upcard"]["state"]
    # the same position seen from seat 1: the computer (seat 0) moves first
    r = client.post("/api/position", json={"state": pos, "seat": 1})
    assert r.status_code == 200
    ans = r.json()
    assert ans["frames"] and ans["frames"][0]["action"].startswith("draw ")
    v = ans["view"]
    assert v["seat"] == 1 and v["to_move"] == "you"
    assert v["hand"] == sorted(pos["hands"][1], key=lambda c: ("CDHS".index(c[1]), "A23456789TJQK".index(c[0])))
    assert_no_hidden(json.dumps(ans), hidden_cards(server_state(table, ans["session"]), seat=1))


# ---------------------------------------------------------------------------- hidden information

def play_hand(client, table, sid, first, max_requests=400):
    """Play the person's side of one hand from its views only (meld, lay off, draw the
    stock, discard the highest card), checking every JSON answer for hidden cards: those
    hidden both before and after the request (the computer's moves happen in between),
    and, in the final view, those hidden after it."""
    answers = [first]
    before = server_state(table, sid)
    seen = face_up(before)
    for _ in range(max_requests):
        last = answers[-1]
        after = server_state(table, sid)
        hidden = hidden_cards(before, seen=seen) & hidden_cards(after, seen=seen)
        assert_no_hidden(last["text"], hidden)
        assert_no_hidden(json.dumps(last["json"]["view"]), hidden_cards(after, seen=seen))
        seen |= face_up(after)
        v = last["json"]["view"]
        if v["hand_over"]:
            return answers
        legal = v["legal"]
        pick = (next((a for a in legal if a["kind"] == "meld"), None)
                or next((a for a in legal if a["kind"] == "layoff"), None)
                or next((a for a in legal if a["action"] == "draw stock"), None)
                or next((a for a in legal if a["kind"] == "draw"), None)
                or max((a for a in legal if a["kind"] == "discard"), key=lambda a: POINTS[a["cards"][0][0]]))
        before = after
        r = move(client, sid, pick["action"])
        assert r.status_code == 200, r.text
        answers.append({"text": r.text, "json": r.json()})
        g = client.get(f"/api/game/{sid}")
        assert_no_hidden(g.text, hidden_cards(server_state(table, sid), seen=seen))
    raise AssertionError("the hand did not end")


def test_hidden_information_never_sent_over_a_whole_hand(client, table):
    recycled = 0
    for seed in (1, 2, 3):
        r = client.post("/api/new", json={"seed": seed})
        sid = r.json()["session"]
        answers = play_hand(client, table, sid, {"text": r.text, "json": r.json()})
        sd = server_state(table, sid)
        assert sd["hand_over"]
        recycled += sd["recycles"]
        assert sum(f["who"] == "computer" for a in answers for f in a["json"]["frames"]) > 0  # the computer played
        last = answers[-1]["json"]["view"]
        assert last["opponent_hand_size"] == len(sd["hands"][1]) and last["stock_size"] == len(sd["stock"])
        assert last["result"]["outcome"] in ("out", "dry", "stalled")
    assert recycled >= 1  # one of the hands went through a recycled stock (seed 1 does)


def test_computer_acts_on_its_observation_and_mask_only(table):
    """The opponent is handed ``env.observe(its agent)`` and nothing else."""
    import numpy as np

    seen = []

    class Recorder:
        def act(self, observation, action_mask):
            seen.append((observation.copy(), action_mask.copy()))
            return int(np.flatnonzero(action_mask)[0])

    game = web.TableGame("classic", lambda seed: Recorder(), "recorder", seed=4)
    game.move({"action": "draw stock"})
    env = game.env
    d = next(a for a in game.view()["legal"] if a["kind"] == "discard")
    shadow = __import__("rummy_env").rummy_v0.raw_env()
    shadow.reset(seed=0, options={"state": env.state_dict()})
    shadow.step(d["id"])
    expect = shadow.observe(shadow.agent_selection)
    game.move({"action_id": d["id"]})
    assert seen, "the computer did not move"
    obs, mask = seen[0]
    assert np.array_equal(obs, expect["observation"]) and np.array_equal(mask, expect["action_mask"])


# ---------------------------------------------------------------------------- the default opponent

def test_default_opponent_needs_torch_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(ValueError, match="--agent heuristic"):
        web.exported_pretrained(tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("pretrained-onnx-*"))


def test_unknown_agent_lists_the_names():
    with pytest.raises(ValueError, match="unknown agent 'nobody'.*heuristic"):
        opponent_factory("nobody")


def test_default_opponent_is_the_shipped_policy_exported_once(tmp_path):
    needs("torch")
    needs("onnx")
    needs("onnxruntime")
    cache = tmp_path / "cache"
    make, name = opponent_factory("pretrained-onnx", cache_dir=cache)
    assert not cache.exists()  # exported when a table first needs it (a 500 Rum server never needs this one)
    make(0)
    (folder,) = list(cache.glob("pretrained-onnx-*"))
    assert (folder / "policy.onnx").is_file() and (folder / "spec.json").is_file()
    assert name == "pretrained-onnx (the shipped policy)"
    mtime = (folder / "policy.onnx").stat().st_mtime_ns
    assert web.exported_pretrained(cache) == folder and (folder / "policy.onnx").stat().st_mtime_ns == mtime
    assert [p.name for p in cache.iterdir()] == [folder.name]  # no temporary folder left
    # it plays a hand's turn as the web opponent, the same move the shipped zip's greedy policy makes
    from rummy_env.agents import make_agent

    game = web.TableGame("classic", make, name, seed=8)
    game.move({"action": "draw stock"})
    d = next(a for a in game.view()["legal"] if a["kind"] == "discard")
    shadow = __import__("rummy_env").rummy_v0.raw_env()
    shadow.reset(seed=0, options={"state": game.env.state_dict()})
    shadow.step(d["id"])
    ob = shadow.observe(shadow.agent_selection)
    expect = make_agent("pretrained").act(ob["observation"], ob["action_mask"])
    frames = game.move({"action_id": d["id"]})
    assert frames[1]["who"] == "computer" and frames[1]["action"] == shadow.action_text(expect)


# ---------------------------------------------------------------------------- 500 Rum (issue 15)

ALL_CARDS = [r + s for s in "CDHS" for r in "A23456789TJQK"]
# 5H 6H wait for the 7H; nothing else in the hand melds with 7H, KC, 2D or 8C
HAND_DIG = ["5H", "6H", "9C", "JD", "2S", "4C", "8D", "TS", "QH", "3S", "6C", "AD", "9S"]
OTHER_DIG = ["KD", "QD", "8S", "4S", "TC", "3H", "AC", "5D", "7D", "JC", "KS", "9H", "2H"]


def rum500_state(hands, discard, melds=(), rules="rum500", **fields):
    """A 500 Rum STATE: the given hands, discard pile (bottom first) and melds, every
    other card in the stock in card order, seat 0 to draw."""
    used = {c for h in hands for c in h} | set(discard) | {c for m in melds for c in m}
    d = {"rules": rules, "hands": [list(h) for h in hands], "stock": [c for c in ALL_CARDS if c not in used],
         "discard": list(discard), "melds": [list(m) for m in melds], "current_player": 0, "phase": "draw"}
    d.update(fields)
    return d


class DigFirst:
    """An opponent that digs the discard pile whenever its mask allows (the first legal
    dig id, RULES.md §10.4), and otherwise plays as the heuristic does."""

    def __init__(self):
        from rummy_env.agents import make_agent

        self.base = make_agent("heuristic", seed=0)
        self.digs = 0

    def act(self, observation, action_mask):
        import numpy as np

        from rummy_env.actions import DIG_BASE

        digs = np.flatnonzero(action_mask[DIG_BASE:])
        if len(digs):
            self.digs += 1
            return DIG_BASE + int(digs[0])
        return self.base.act(observation, action_mask)


def test_rum500_dig_through_the_api(client, table):
    """The pile QC 8C 7H KC 2D (bottom to top) at a classic server: the position plays at
    a 500 Rum table. The 7H can be dug (5H 6H 7H), the 8C and KC cannot (nothing melds
    them). The dig takes 7H KC 2D and binds the 7H: no discard until 5H 6H 7H is melded
    (18 points: 5 + 6 + 7), then KC and 2D are free to discard (RULES.md §10.4)."""
    state = rum500_state([HAND_DIG, OTHER_DIG], ["QC", "8C", "7H", "KC", "2D"])
    r = client.post("/api/position", json={"state": state})
    assert r.status_code == 200, r.text
    sid, v = r.json()["session"], r.json()["view"]
    assert v["rules"] == "rum500" and v["target"] == 500 and v["dig"] is True
    assert v["pile"] == ["QC", "8C", "7H", "KC", "2D"] and v["upcard"] == "2D" and v["discard_size"] == 5
    assert v["meld_points"] == {"you": 0, "computer": 0} and v["bound"] is None and v["agent_note"] is None
    assert v["legal"] == [
        {"action": "draw stock", "id": 0, "kind": "draw", "cards": [], "meld": None},
        {"action": "draw discard", "id": 1, "kind": "draw", "cards": [], "meld": None},
        {"action": "draw discard 7H", "id": 579 + 13 * 2 + 6, "kind": "dig", "cards": ["7H", "KC", "2D"],
         "meld": None},
    ]
    assert_no_hidden(r.text, hidden_cards(server_state(table, sid)))
    # a dig whose deepest card cannot be melded: refused with the engine's reason, nothing changes
    before = server_state(table, sid)
    for bad in ("draw discard 8C", "draw discard KC"):
        r = move(client, sid, bad)
        assert r.status_code == 409 and "could not be melded or laid off" in r.json()["detail"], r.text
        assert server_state(table, sid) == before
    # the dig, by its action text
    ans = move(client, sid, "draw discard 7H").json()
    assert [(f["who"], f["action"]) for f in ans["frames"]] == [("you", "draw discard 7H")]
    v = ans["view"]
    assert v["pile"] == ["QC", "8C"] and v["upcard"] == "8C" and v["discard_size"] == 2
    assert v["bound"] == "7H" and len(v["hand"]) == 16 and {"7H", "KC", "2D"} <= set(v["hand"])
    assert v["drawn_from_discard"] is None
    # while the 7H is in hand: no discard is offered, the one meld that plays it is
    assert [a["action"] for a in v["legal"]] == ["meld 5H 6H 7H"]
    assert not [a for a in v["legal"] if a["kind"] == "discard"]
    before = server_state(table, sid)
    for bad in ("discard 2D", "discard 9C", "discard 7H"):
        r = move(client, sid, bad)
        assert r.status_code == 409, (bad, r.text)
        assert server_state(table, sid) == before
    v = move(client, sid, "meld 5H 6H 7H").json()["view"]
    assert v["bound"] is None and v["meld_points"] == {"you": 18, "computer": 0}
    assert {"discard KC", "discard 2D"} <= {a["action"] for a in v["legal"] if a["kind"] == "discard"}
    r = move(client, sid, "discard 2D")
    assert r.status_code == 200
    frames = r.json()["frames"]
    assert frames[0]["view"]["pile"] == ["QC", "8C", "2D"] and frames[0]["view"]["to_move"] == "computer"
    assert frames[1]["who"] == "computer"
    sd = server_state(table, sid)
    assert r.json()["view"]["pile"] == sd["discard"]
    assert r.json()["view"]["opponent_hand_size"] == len(sd["hands"][1])
    assert_no_hidden(r.text, hidden_cards(sd) & hidden_cards(before))


def test_rum500_the_computer_digs_and_its_bound_card_is_not_in_the_view(table):
    """After you dig 7H KC 2D, meld 5H 6H 7H and discard 2D, the pile is QC 8C 2D; the
    computer (TC JC in hand) digs the QC, taking QC 8C 2D, and must meld TC JC QC. Its
    bound card is never in the view (only the person's own), and the cards it took are
    the only ones of its hand the answers name."""
    opp = DigFirst()
    t = WebTable(lambda seed: opp, "dig-first", rules="classic", seed=5)
    with TestClient(create_app(t), base_url=BASE) as c:
        r = c.post("/api/position", json={"state": rum500_state([HAND_DIG, OTHER_DIG], ["QC", "8C", "7H", "KC", "2D"])})
        sid = r.json()["session"]
        for a in ("draw discard 7H", "meld 5H 6H 7H"):
            assert move(c, sid, a).status_code == 200
        start = server_state(t, sid)
        r = move(c, sid, "discard 2D")
        assert r.status_code == 200, r.text
        frames = r.json()["frames"]
        comp = [f["action"] for f in frames if f["who"] == "computer"]
        assert comp[0] == "draw discard QC" and opp.digs == 1
        assert "meld TC JC QC" in comp and comp[-1].startswith("discard ")
        dug = frames[1]["view"]
        assert dug["pile"] == [] and dug["to_move"] == "computer" and dug["bound"] is None
        assert dug["opponent_hand_size"] == 13 + 3 and dug["legal"] == []
        after = frames[comp.index("meld TC JC QC") + 1]["view"]
        assert after["meld_points"] == {"you": 18, "computer": 30}  # 10 + 10 + 10
        assert all(f["view"]["bound"] is None for f in frames)
        sd = server_state(t, sid)
        assert {"QC", "8C"} <= set(sd["known_cards"][1]) | {c for m in sd["melds"] for c in m}
        assert_no_hidden(r.text, hidden_cards(start) & hidden_cards(sd))


def test_rum500_hand_end_shows_every_seats_points(client, table):
    """3-card hands ({"preset": "rum500", "hand_size": 3}): you hold 5H 6H 9C, the pile is
    8C 7H; the computer has melded AC 2C 3C (6 points) and holds KD QD JS (30). Take the
    7H, meld 5H 6H 7H, discard 9C: out. You score 18 - 0 = 18, the computer 6 - 30 = -24
    (RULES.md §10.4: every seat, melded minus held; totals may go negative)."""
    state = rum500_state([["5H", "6H", "9C"], ["KD", "QD", "JS"]], ["8C", "7H"], melds=[["AC", "2C", "3C"]],
                         rules={"preset": "rum500", "hand_size": 3}, meld_points=[0, 6],
                         has_melded=[False, True])
    r = client.post("/api/position", json={"state": state})
    assert r.status_code == 200, r.text
    sid = r.json()["session"]
    v = move(client, sid, "draw discard").json()["view"]
    assert v["drawn_from_discard"] == "7H" and v["bound"] is None  # the top card alone is the plain draw
    assert move(client, sid, "meld 5H 6H 7H").json()["view"]["meld_points"] == {"you": 18, "computer": 6}
    ans = move(client, sid, "discard 9C").json()
    v = ans["view"]
    assert v["hand_over"] and v["legal"] == [] and v["bound"] is None
    assert v["result"] == {"outcome": "out", "winner": "you", "rummy": False,
                           "points": {"you": 18, "computer": -24},
                           "melded": {"you": 18, "computer": 6}, "held": {"you": 0, "computer": 30}}
    assert v["scores"] == {"you": 18, "computer": -24} and not v["match_over"]
    # the computer's held points are told, its cards are not
    assert_no_hidden(json.dumps(ans), {"KD", "QD", "JS"} | set(server_state(table, sid)["stock"]))
    nxt = client.post(f"/api/game/{sid}/next", json={}).json()["view"]
    assert nxt["hand_number"] == 2 and nxt["meld_points"] == {"you": 0, "computer": 0}
    assert nxt["scores"] == {"you": 18, "computer": -24} and len(nxt["pile"]) >= 1


def test_rum500_new_match_and_a_whole_hand_without_hidden_cards(client, table):
    r = client.post("/api/new", json={"rules": "rum500", "seed": 4})
    assert r.status_code == 200, r.text
    v = r.json()["view"]
    assert v["rules"] == "rum500" and len(v["hand"]) == 13 and v["dig"] and v["pile"] == [v["upcard"]]
    sid = r.json()["session"]
    answers = play_hand(client, table, sid, {"text": r.text, "json": r.json()})
    sd = server_state(table, sid)
    last = answers[-1]["json"]["view"]
    assert sd["hand_over"] and last["pile"] == sd["discard"]
    res = last["result"]
    for who in ("you", "computer"):
        assert res["points"][who] == res["melded"][who] - res["held"][who]
    seat_you = last["seat"]
    assert res["held"]["you"] == points(sd["hands"][seat_you])
    assert res["held"]["computer"] == points(sd["hands"][1 - seat_you])
    assert [res["melded"]["you"], res["melded"]["computer"]] == sd["meld_points"]


class MisfitPolicy:
    """Stands in for the shipped classic policy: an observation of 548 and 579 actions."""
    obs_dim, num_actions = 548, 579

    def act(self, observation, action_mask):
        raise AssertionError("a policy of another table must never be asked to act")


class MisfitMaker:
    def __init__(self, fallback):
        self.fallback = fallback

    def __call__(self, seed):
        return MisfitPolicy()


def test_rum500_default_opponent_falls_back_to_heuristic_with_a_note():
    t = WebTable(MisfitMaker("heuristic"), "pretrained-onnx (the shipped policy)", rules="rum500", seed=2)
    with TestClient(create_app(t), base_url=BASE) as c:
        cfg = c.get("/api/config").json()
        assert cfg["agent"] == "heuristic" and cfg["rules"] == "rum500" and "rum500" in cfg["presets"]
        assert "no shipped policy plays a 500 Rum table" in cfg["agent_note"] and "'heuristic'" in cfg["agent_note"]
        r = c.post("/api/new", json={})
        assert r.status_code == 200, r.text
        v = r.json()["view"]
        assert v["agent"] == "heuristic" and "500 Rum" in v["agent_note"]
        move(c, r.json()["session"], "draw stock")
        d = next(a for a in c.get(f"/api/game/{r.json()['session']}").json()["view"]["legal"] if a["kind"] == "discard")
        ans = move(c, r.json()["session"], d["action"]).json()
        assert [f["who"] for f in ans["frames"]][:2] == ["you", "computer"]  # the heuristic played
    # a policy that does fit (a classic table) plays itself: no note
    t2 = WebTable(MisfitMaker("heuristic"), "shipped", rules="classic")
    assert t2.config()["agent"] == "shipped" and t2.config()["agent_note"] is None


def test_rum500_an_agent_that_does_not_fit_is_refused_clearly():
    with pytest.raises(ValueError, match=r"cannot play a 500 Rum table \(it was trained for a 2-player standard "
                                         r"table, this is a 2-player rum500 table \(observations of 656 entries\)\)"
                                         r".*--agent heuristic"):
        WebTable(MisfitMaker(None), "onnx:/x", rules="rum500")
    t = WebTable(MisfitMaker(None), "onnx:/x", rules="classic")
    with TestClient(create_app(t), base_url=BASE) as c:
        n = len(t.sessions)
        for r in (c.post("/api/new", json={"rules": "rum500"}),
                  c.post("/api/position", json={"state": rum500_state([HAND_DIG, OTHER_DIG], ["8C", "7H"])})):
            assert r.status_code == 422 and "--agent heuristic" in r.json()["detail"], r.text
        assert len(t.sessions) == n


def test_rum500_cli_refuses_a_classic_policy_and_names_heuristic():
    needs("torch")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-m", "rummy_env.cli", "web", "--port", "0", "--agent", "pretrained",
                        "--rules", "rum500"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "cannot play a 500 Rum table" in r.stderr and "--agent heuristic" in r.stderr, r.stderr


def test_a_table_without_a_shipped_policy_falls_back_to_heuristic(classic_onnx_cache):
    """The default opponent plays the policy shipped for each table (issue 25); at a table
    no shipped policy plays (round-the-corner runs here), heuristic plays and the note says why."""
    before = sorted(p.name for p in classic_onnx_cache.iterdir())
    make, name = opponent_factory("pretrained-onnx", cache_dir=classic_onnx_cache)
    around = {"preset": "classic", "aces": "around"}
    t = WebTable(make, name, rules=around, seed=1)
    cfg = t.config()
    assert cfg["agent"] == "heuristic"
    assert cfg["agent_note"] == "no shipped policy plays a 2-player around table; the computer plays 'heuristic' here"
    assert sorted(p.name for p in classic_onnx_cache.iterdir()) == before  # nothing exported for a table none plays
    v = t.new_match({})["view"]
    assert v["agent"] == "heuristic" and v["agent_note"] == cfg["agent_note"]
    v = t.new_match({"rules": "classic"})["view"]  # the same server: the shipped policy plays a classic match
    assert v["agent"] == name and v["agent_note"] is None


def test_a_move_with_a_joker_is_one_text_at_the_web_table(client):
    """A jokers table (RULES.md §10.2): the view lists whole moves ('meld 4H JK=5H 6H'),
    posting that text plays both of its decisions (joker as 5H, then the meld) and logs the
    move once; a text whose later decision is illegal is refused whole, changing nothing."""
    from test_joker_steps import J5, SEAT0, SEAT1
    from test_variants import variant_position

    from rummy_env import state_json

    pos = state_json.to_json(variant_position(J5, [SEAT0, SEAT1]))
    r = client.post("/api/position", json={"state": pos})
    assert r.status_code == 200, r.text
    sid, v = r.json()["session"], r.json()["view"]
    legal = {a["action"]: a for a in v["legal"]}
    assert "meld 4H JK=5H 6H" in legal and legal["meld 4H JK=5H 6H"]["id"] == 580 + 30  # joker as 5H
    assert not any(t.startswith("joker as") for t in legal)
    before = client.get(f"/api/game/{sid}").json()["view"]
    # its first decision (joker as 5H) is legal (4H JK=5H 6H), its second is not: 3H is not held
    bad = move(client, sid, "meld 3H 4H JK=5H")
    assert bad.status_code == 409 and "does not hold 3H" in bad.json()["detail"], bad.text
    assert client.get(f"/api/game/{sid}").json()["view"] == before
    ans = move(client, sid, "meld 4H JK=5H 6H")
    assert ans.status_code == 200, ans.text
    v = ans.json()["view"]
    assert v["melds"][0]["cards"] == ["4H", "JK=5H", "6H"]
    assert v["log"] == [{"who": "you", "action": "meld 4H JK=5H 6H"}]


def test_an_illegal_action_id_after_naming_a_joker_is_a_409(client, table):
    """Mid-move at a jokers table (RULES.md §10.2: 'joker as 5H' posted by id, the meld still
    to come), an illegal action id is refused with 409 naming the move as illegal, and the
    game is unchanged: the move can still be finished."""
    from test_joker_steps import J5, SEAT0, SEAT1
    from test_variants import variant_position

    from rummy_env import state_json
    from rummy_env.actions import action_text

    pos = state_json.to_json(variant_position(J5, [SEAT0, SEAT1]))
    sid = client.post("/api/position", json={"state": pos}).json()["session"]
    r = client.post(f"/api/game/{sid}/move", json={"action_id": 580 + 30})  # joker as 5H
    assert r.status_code == 200, r.text
    view = r.json()["view"]
    assert view["to_move"] == "you" and [a["action"] for a in view["legal"]] == ["meld 4H JK=5H 6H"]
    kind = table.game(sid).env.kind
    meld_3h = next(a for a in range(table.game(sid).env.num_actions) if action_text(a, kind) == "meld 3H 4H 5H")
    for bad, needle in ((0, "'draw stock' is illegal: player 0 has drawn this turn"),
                        (meld_3h, "'meld 3H 4H 5H' is illegal")):
        before = server_state(table, sid)
        r = client.post(f"/api/game/{sid}/move", json={"action_id": bad})
        assert r.status_code == 409, (bad, r.status_code, r.text)
        assert needle in r.json()["detail"], r.json()
        assert server_state(table, sid) == before
        assert client.get(f"/api/game/{sid}").json()["view"] == view
    r = client.post(f"/api/game/{sid}/move", json={"action_id": view["legal"][0]["id"]})
    assert r.status_code == 200, r.text
    assert r.json()["frames"][0]["action"] == "meld 4H JK=5H 6H"
