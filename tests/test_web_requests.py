"""The web table against other sites' pages, big bodies and slow turns.

One inference session per policy, shared by every game; only the table's own page is
served (``Host`` and ``Origin`` checked, every POST sent as JSON); a body is refused
from its ``Content-Length`` or as soon as a streamed body passes the limit; the
computer's turn and a new game's opponent are built and played off the event loop, so
``/api/config`` answers in under 50 ms meanwhile; the port is checked before the
shipped policy is exported; a client's ``seed`` is taken only by a practice table.
Every server started here binds 127.0.0.1 and is reached there.
"""
from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import threading
import time

import pytest

from extras import needs

httpx = needs("httpx")
needs("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from rummy_env.frontends import web  # noqa: E402
from rummy_env.frontends.web import WebTable, create_app, opponent_factory  # noqa: E402
from server_helpers import running_server  # noqa: E402

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"  # the TestClient's requests carry this Host (and server port)


@pytest.fixture()
def table():
    make, name = opponent_factory("heuristic")
    return WebTable(make, name, rules="classic", seed=11)


@pytest.fixture()
def client(table):
    with TestClient(create_app(table), base_url=BASE) as c:
        yield c


def start(table):
    """``(server, addresses)`` context for ``table`` on 127.0.0.1, a free port."""
    return running_server(web.make_server(table, port=0, log_level="warning"))


# ---------------------------------------------------------------------------- one session per policy

class CountingSessions:
    """Wraps ``onnxruntime.InferenceSession`` and counts the sessions made."""

    def __init__(self, monkeypatch):
        import onnxruntime

        self.made = 0
        real = onnxruntime.InferenceSession
        counter = self

        class Counted(real):
            def __init__(self, *a, **k):
                counter.made += 1
                super().__init__(*a, **k)

        monkeypatch.setattr(onnxruntime, "InferenceSession", Counted)


def _play_games(table, n):
    """``n`` new matches, each played to the computer's answer of the person's first turn."""
    games = []
    for _ in range(n):
        ans = table.new_match({})
        g = table.game(ans["session"])
        if g.view()["to_move"] == "you":
            g.move({"action": "draw stock"})
            d = next(a for a in g.view()["legal"] if a["kind"] == "discard")
            frames = g.move({"action_id": d["id"]})
            assert frames[1]["who"] == "computer"
        games.append(g)
    return games


@pytest.mark.parametrize("agent", ["onnx", "pretrained-onnx"])
def test_one_inference_session_per_policy_shared_by_every_game(agent, monkeypatch):
    from policy_helpers import tiny_policy

    export = tiny_policy()["export"]
    sessions = CountingSessions(monkeypatch)
    if agent == "onnx":
        make, name = opponent_factory(f"onnx:{export}")
    else:  # the default opponent: the shipped policy's export (here the tiny one's)
        monkeypatch.setattr(web, "exported_pretrained", lambda cache=None, preset="classic": export)
        make, name = opponent_factory("pretrained-onnx")
    table = WebTable(make, name, rules="classic")
    games = _play_games(table, 40)
    assert sessions.made == 1, f"{sessions.made} onnxruntime sessions for 40 games"
    assert len({id(g.opponent) for g in games}) == 1
    # the one session plays games in several threads at once
    errors = []

    def play():
        try:
            _play_games(table, 5)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=play) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and sessions.made == 1


def test_scripted_opponents_are_still_built_per_game_with_its_seed(table):
    a, b = (table.game(table.new_match({})["session"]) for _ in range(2))
    assert a.opponent is not b.opponent


# ---------------------------------------------------------------------------- the table's own page only

def test_cross_site_simple_requests_are_refused(client, table):
    n = len(table.sessions)
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None):
        headers = {"content-type": ctype} if ctype else {}
        r = client.post("/api/new", content=b"{}", headers=headers)
        assert r.status_code == 415, (ctype, r.text)
        assert "Content-Type must be application/json" in r.json()["detail"]
    sid = client.post("/api/new", json={}).json()["session"]
    n += 1
    for path in (f"/api/game/{sid}/move", f"/api/game/{sid}/next", "/api/position"):
        r = client.post(path, content=b'{"action": "draw stock"}', headers={"content-type": "text/plain"})
        assert r.status_code == 415, (path, r.text)
    assert len(table.sessions) == n
    assert client.get(f"/api/game/{sid}").json()["view"]["phase"] == "draw"  # the move was not played


@pytest.mark.parametrize("origin", ["http://evil.example", "https://127.0.0.1:8765", "http://127.0.0.1:9999",
                                    "null", "http://localhost.evil.example:8765"])
def test_another_sites_origin_is_refused(client, table, origin):
    n = len(table.sessions)
    r = client.post("/api/new", json={}, headers={"origin": origin})
    assert r.status_code == 403 and "another site" in r.json()["detail"], r.text
    assert client.get("/api/config", headers={"origin": origin}).status_code == 403
    assert len(table.sessions) == n


@pytest.mark.parametrize("origin", [None, f"http://127.0.0.1:{PORT}", f"http://localhost:{PORT}",
                                    f"http://LOCALHOST:{PORT}"])
def test_the_tables_own_origin_and_none_are_served(client, origin):
    headers = {"origin": origin} if origin else {}
    r = client.post("/api/new", json={}, headers=headers)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("host", ["evil.example", f"evil.example:{PORT}", "127.0.0.1:9999", "localhost",
                                  f"127.0.0.2:{PORT}", f"[::1]:{PORT}"])
def test_a_foreign_host_is_refused_dns_rebinding(table, host):
    with TestClient(create_app(table), base_url=BASE) as c:
        n = len(table.sessions)
        for r in (c.get("/", headers={"host": host}), c.get("/api/config", headers={"host": host}),
                  c.post("/api/new", json={}, headers={"host": host})):
            assert r.status_code == 400 and "Host must be 127.0.0.1:8765 or localhost:8765" in r.json()["detail"]
        assert len(table.sessions) == n
        assert c.get("/", headers={"host": f"localhost:{PORT}"}).status_code == 200


def test_request_checks_on_a_real_server_on_127_0_0_1(table):
    with start(table) as addrs:
        assert addrs and all(a[0] == "127.0.0.1" for a in addrs)
        port = addrs[0][1]
        url = f"http://127.0.0.1:{port}"
        n = len(table.sessions)
        with httpx.Client(base_url=url, timeout=10) as c:
            # what a page on another site can send without a preflight: refused, nothing started
            r = c.post("/api/new", content=b"{}", headers={"content-type": "text/plain",
                                                           "origin": "http://evil.example"})
            assert r.status_code == 403
            r = c.post("/api/new", content=b"a=1", headers={"content-type": "application/x-www-form-urlencoded"})
            assert r.status_code == 415
            r = c.get("/api/config", headers={"host": f"rebound.example:{port}"})
            assert r.status_code == 400 and f"localhost:{port}" in r.json()["detail"]
            assert len(table.sessions) == n
            # the table's own page
            for origin in (url, f"http://localhost:{port}"):
                r = c.post("/api/new", json={}, headers={"origin": origin})
                assert r.status_code == 200, r.text
            assert c.get("/", headers={"host": f"localhost:{port}"}).status_code == 200


# ---------------------------------------------------------------------------- the body limit while reading

@pytest.mark.parametrize("declare_length", [True, False])
def test_a_big_body_is_refused_before_it_is_read(table, declare_length):
    app = create_app(table)
    chunk, n_chunks = b" " * 4096, 1000  # 4 MB offered, 64 KiB allowed
    reads, sent = [0], []
    headers = [(b"host", f"127.0.0.1:{PORT}".encode()), (b"content-type", b"application/json")]
    if declare_length:
        headers.append((b"content-length", str(len(chunk) * n_chunks).encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/api/new", "raw_path": b"/api/new", "query_string": b"",
             "root_path": "", "headers": headers, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", PORT)}

    async def receive():
        reads[0] += 1
        return {"type": "http.request", "body": chunk, "more_body": reads[0] < n_chunks}

    async def send(msg):
        sent.append(msg)

    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert reads[0] <= (0 if declare_length else web.MAX_BODY_BYTES // len(chunk) + 1), reads[0]
    assert not table.sessions


def test_a_200_mb_content_length_is_answered_at_once_on_a_real_server(table):
    with start(table) as addrs:
        assert all(a[0] == "127.0.0.1" for a in addrs)
        port = addrs[0][1]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall((f"POST /api/new HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                       f"Content-Length: {200 * 2**20}\r\n\r\n{{").encode())
            answer = b""  # the body is never sent: a server that read it first would not answer
            while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
                got = s.recv(4096)
                if not got:
                    break
                answer += got
            answer = answer.decode("latin-1")
        assert answer.startswith("HTTP/1.1 413"), answer[:200]
        assert str(web.MAX_BODY_BYTES) in answer


# ---------------------------------------------------------------------------- off the event loop

class Slow:
    """An opponent whose decisions wait (up to ``hold`` s) until ``release`` is set; ``thinking``
    is set while it waits. Otherwise it plays as the heuristic does."""

    def __init__(self, hold=10.0):
        from rummy_env.agents import make_agent

        self.base = make_agent("heuristic", seed=0)
        self.thinking, self.release, self.hold = threading.Event(), threading.Event(), hold

    def act(self, observation, action_mask):
        self.thinking.set()
        self.release.wait(self.hold)
        return self.base.act(observation, action_mask)


def _config_times(c, n=5):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        r = c.get("/api/config")
        out.append(time.perf_counter() - t)
        assert r.status_code == 200
    return out


def test_config_answers_in_under_50_ms_while_the_computer_thinks():
    slow = Slow()
    table = WebTable(lambda seed: slow, "slow", rules="classic", seed=3)
    with start(table) as addrs:
        assert all(a[0] == "127.0.0.1" for a in addrs)
        with httpx.Client(base_url=f"http://127.0.0.1:{addrs[0][1]}", timeout=30) as c:
            slow.release.set()  # the deal (the computer may lead) is played at once
            ans = c.post("/api/new", json={}).json()
            sid = ans["session"]
            if ans["view"]["to_move"] == "you":
                c.post(f"/api/game/{sid}/move", json={"action": "draw stock"})
            v = c.get(f"/api/game/{sid}").json()["view"]
            d = next(a for a in v["legal"] if a["kind"] == "discard")
            slow.release.clear()
            slow.thinking.clear()
            done = {}
            mover = threading.Thread(target=lambda: done.update(
                r=c.post(f"/api/game/{sid}/move", json={"action_id": d["id"]})))
            mover.start()
            try:
                assert slow.thinking.wait(10), "the computer's turn did not start"
                times = _config_times(c)
                other = c.post("/api/position", json={"name": "lay_off"})  # another game starts meanwhile
                assert other.status_code == 200 and other.json()["view"]["to_move"] == "you", other.text
                assert mover.is_alive()  # the turn was still being computed
            finally:
                slow.release.set()
                mover.join(30)
            assert max(times) < 0.05, [round(t * 1000, 1) for t in times]
            assert done["r"].status_code == 200 and done["r"].json()["frames"][1]["who"] == "computer"


def test_config_answers_while_a_new_games_opponent_is_loaded():
    """A new game's opponent (the first-use export of a shipped policy, a policy's load) is
    built in a worker thread: the table answers meanwhile."""
    from rummy_env.agents import make_agent

    loading, release = threading.Event(), threading.Event()
    calls = [0]

    def make(seed):  # the table's own check is the first call; a new match's load waits
        calls[0] += 1
        if calls[0] > 1:
            loading.set()
            release.wait(10)
        return make_agent("heuristic", seed=seed)

    table = WebTable(make, "loading", rules="classic")
    with start(table) as addrs:
        assert all(a[0] == "127.0.0.1" for a in addrs)
        with httpx.Client(base_url=f"http://127.0.0.1:{addrs[0][1]}", timeout=30) as c:
            done = {}
            t = threading.Thread(target=lambda: done.update(r=c.post("/api/new", json={})))
            t.start()
            try:
                assert loading.wait(10)
                times = _config_times(c)
                assert t.is_alive()  # the opponent was still being loaded
            finally:
                release.set()
                t.join(30)
            assert max(times) < 0.05, [round(x * 1000, 1) for x in times]
            assert done["r"].status_code == 200


# ---------------------------------------------------------------------------- the port first

def _web_args(**kw):
    parser = argparse.ArgumentParser()
    web.add_arguments(parser)
    args = parser.parse_args([])
    for k, v in kw.items():
        setattr(args, k, v)
    return args


def test_the_port_is_checked_before_the_policy_is_exported(monkeypatch, tmp_path):
    exports = []

    def export(cache=None, preset="classic"):
        exports.append(preset)
        raise AssertionError("the export started before the port was checked")

    monkeypatch.setattr(web, "exported_pretrained", export)
    with pytest.raises(ValueError, match=r"--port must be in 0\.\.65535, got 99999"):
        web.main(_web_args(port=99999, cache=str(tmp_path)))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{port}"):
            web.main(_web_args(port=port, cache=str(tmp_path)))
    assert exports == []


def test_rummy_web_port_99999_fails_at_once_and_exports_nothing(tmp_path):
    cache = tmp_path / "cache"
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "rummy_env.cli", "web", "--port", "99999", "--cache", str(cache)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--port must be in 0..65535, got 99999" in r.stderr, r.stderr
    assert not cache.exists()  # no export was started
    assert time.perf_counter() - t < 30  # the export alone takes about 35 s


# ---------------------------------------------------------------------------- a client's seed

def test_a_clients_seed_is_refused_unless_the_table_is_for_practice():
    make, name = opponent_factory("heuristic")
    fair = WebTable(make, name, rules="classic")
    with TestClient(create_app(fair), base_url=BASE) as c:
        assert c.get("/api/config").json()["allow_seed"] is False
        r = c.post("/api/new", json={"seed": 3})
        assert r.status_code == 400 and "--allow-seed" in r.json()["detail"], r.text
        assert not fair.sessions
        assert c.post("/api/new", json={"rules": "turnover"}).status_code == 200  # no seed: a fair deal
    practice = WebTable(make, name, rules="classic", allow_seed=True)
    with TestClient(create_app(practice), base_url=BASE) as c:
        assert c.get("/api/config").json()["allow_seed"] is True
        a, b = (c.post("/api/new", json={"seed": 3}).json() for _ in range(2))
        assert a["view"]["hand"] == b["view"]["hand"]  # the seed deals the same hand
        assert c.post("/api/new", json={"seed": -1}).status_code == 400
    # a seeded server (--seed) is a practice table already; it may be closed explicitly
    assert WebTable(make, name, rules="classic", seed=5).allow_seed is True
    assert WebTable(make, name, rules="classic", seed=5, allow_seed=False).allow_seed is False


def test_rummy_web_help_names_allow_seed():
    h = subprocess.run([sys.executable, "-m", "rummy_env.cli", "web", "--help"], capture_output=True, text=True,
                       timeout=60)
    assert h.returncode == 0 and "--allow-seed" in h.stdout
    args = _web_args()
    assert args.allow_seed is False
