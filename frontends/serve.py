"""``rummy serve --policy DIR --port P [--host 127.0.0.1]``: an exported policy over HTTP.

Endpoints (FastAPI; the server binds 127.0.0.1 unless ``--host`` is given):

- ``POST /act`` with a position in API.md's STATE form (JSON). The policy answers
  for the player to move, from that player's observation only (the env's
  ``observe(agent)``; other hands and the stock order never reach the policy)::

      {"action": "discard KS", "action_id": 53, "player": 0,
       "legal_actions": [{"action": "discard KS", "action_id": 53, "probability": 0.41}, ...]}

  ``legal_actions`` lists every legal action, most probable first (ties by id);
  ``action`` is the first of them (greedy play). Without ``"rules"`` in the
  position, the policy's own rules apply. A body that is not JSON, a position that
  is not a legal one (a card twice, a bad meld, a hand already over, ...), unknown
  rules, rules for another player count or kind of table (``rummy_env.agents.table_misfit``) than
  the policy's, or rules other than
  those the policy was trained on get a 422 with ``{"detail": reason}``; the
  service keeps serving. Other rules are played only when ``spec.json`` says
  ``"rules": {"generalises": true, ...}``; the answer then carries
  ``"off_training_rules": true`` and a ``"note"``. The body must be sent as
  ``Content-Type: application/json`` (else 415) and be at most ``MAX_BODY_BYTES``
  (64 KiB; else 413, refused from its Content-Length before it is read, or as soon
  as a chunked body passes the limit). These checks (``read_json_body``) are shared
  with ``rummy web``.
- ``GET /spec``: the policy's ``spec.json``.
- ``GET /health``: ``{"status": "ok", "env": "rummy_v0", "rules": ..., "num_players": n}``.

Needs fastapi, uvicorn, onnxruntime and numpy (not torch).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from rummy_env.agents.onnx_agent import OnnxAgent

DEFAULT_HOST = "127.0.0.1"


from .request_body import MAX_BODY_BYTES, BodyRefused, json_content_type_refusal, read_json_body  # noqa: F401 - re-exported


class PositionRejected(ValueError):
    """A request the policy cannot answer; the message is the reason (sent with a 422)."""


class PolicyService:
    """The policy behind the HTTP endpoints, usable without HTTP.

    Args:
        policy_dir: an export directory (``policy.onnx`` + ``spec.json``).

    Raises:
        ValueError: a missing or corrupt export (as ``OnnxAgent``) or a spec whose rules
            cannot be built.
    """

    def __init__(self, policy_dir: str | Path) -> None:
        from rummy_env.rules import Rules

        self.agent = OnnxAgent(str(policy_dir))
        self.spec = self.agent.spec
        self.rules = Rules.make(self.spec["rules"]["json"])
        self.num_players = self.rules.num_players
        gen = self.spec["rules"].get("generalises", False)
        if not isinstance(gen, bool):
            raise ValueError(f"{policy_dir}: spec.json rules.generalises must be true or false, got {gen!r}")
        self.generalises = gen

    def act(self, position: Any) -> dict[str, Any]:
        """The policy's move in ``position`` (a STATE dict): ``{"action", "action_id",
        "legal_actions", "player"}`` as described in the module docstring.

        Raises:
            PositionRejected: the position is not an object, its rules are unknown or for
                another player count, or it is not a legal position with a move to make.
        """
        from rummy_env import rummy_v0
        from rummy_env.rules import Rules

        if not isinstance(position, dict):
            raise PositionRejected(f"a position is a JSON object (API.md STATE), got {type(position).__name__}")
        rules = self.rules
        if position.get("rules") is not None:
            try:
                rules = Rules.make(position["rules"])
            except (ValueError, TypeError) as e:
                raise PositionRejected(f"rules: {e}") from None
        if rules.num_players != self.num_players:
            raise PositionRejected(
                f"the position's rules are for {rules.num_players} players but this policy was trained "
                f"for {self.num_players}"
            )
        from rummy_env.agents import table_misfit
        from rummy_env.table import Table

        if table_misfit(self.agent, rules) is not None:  # the policy's sizes are those of another kind
            raise PositionRejected(
                f"the position's rules are a {Table.of(rules).kind} table but this policy was trained at a "
                f"{Table.of(self.rules).kind} table (their observations and actions differ)")
        off_table = rules != self.rules
        if off_table and not self.generalises:
            raise PositionRejected(
                f"rules: the position's rules {json.dumps(rules.to_json())} are not the rules this policy was "
                f"trained on ({json.dumps(self.rules.to_json())}); send those rules (or none), or export the "
                "policy with spec rules.generalises = true to allow other tables")
        env = rummy_v0.raw_env(rules=rules)
        try:
            env.reset(seed=0, options={"state": position})
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
            raise PositionRejected(str(e) or type(e).__name__) from None
        agent = env.agent_selection
        seat = env.agent_name_mapping[agent]
        ob = env.observe(agent)  # this seat's view only
        mask = ob["action_mask"]
        if not mask.any():
            raise PositionRejected(f"{agent} has no legal action in this position")
        probs = self.agent.probabilities(ob["observation"], mask)
        legal = np.flatnonzero(mask)
        order = sorted(legal.tolist(), key=lambda a: (-probs[a], a))
        texts = [env.action_text(a) for a in order]
        best = order[0]
        extra = {}
        if off_table:
            extra = {"off_training_rules": True,
                     "note": f"this policy was trained on {json.dumps(self.rules.to_json())}, not on these rules"}
        return {
            **extra,
            "action": texts[0],
            "action_id": int(best),
            "legal_actions": [
                {"action": t, "action_id": int(a), "probability": float(probs[a])} for t, a in zip(texts, order)
            ],
            "player": int(seat),
        }

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "env": self.spec["env"], "rules": self.spec["rules"]["json"],
                "num_players": self.num_players}


def create_app(policy_dir: str | Path) -> Any:
    """The FastAPI app serving ``policy_dir``.

    Raises:
        ValueError: a missing or corrupt export directory.
    """
    service = PolicyService(policy_dir)
    app = FastAPI(title="rummy policy", description="an exported rummy_v0 policy: POST /act with a STATE")
    app.state.service = service

    @app.get("/health")
    def health() -> dict:
        return service.health()

    @app.get("/spec")
    def spec() -> dict:
        return service.spec

    @app.post("/act")
    async def act(request: Request) -> JSONResponse:
        try:
            body = await read_json_body(request)
        except BodyRefused as e:
            return JSONResponse({"detail": str(e)}, status_code=e.status)
        # parsed, checked and answered in a worker thread: the event loop stays free, so
        # /health and other requests are answered while a position is being checked
        return await run_in_threadpool(_answer, body)

    def _answer(body: bytes) -> JSONResponse:
        try:
            position = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            return JSONResponse({"detail": f"the body is not JSON: {e}"}, status_code=422)
        except (ValueError, RecursionError) as e:  # huge integers, deep nesting
            return JSONResponse({"detail": f"the body is not a JSON position: {str(e)[:200]}"}, status_code=422)
        try:
            return JSONResponse(service.act(position))
        except PositionRejected as e:
            return JSONResponse({"detail": str(e)}, status_code=422)
        except RecursionError:
            return JSONResponse({"detail": "the position is nested too deeply"}, status_code=422)

    return app


def make_server(policy_dir: str | Path, port: int, host: str = DEFAULT_HOST, log_level: str = "info") -> Any:
    """A ``uvicorn.Server`` (not started) serving ``policy_dir`` on ``host:port``
    (``port`` 0 lets the OS choose; read it from ``server.servers[0].sockets`` once
    ``server.started``).

    Raises:
        ValueError: a bad port, or a missing or corrupt export directory.
    """
    import uvicorn

    if not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be an int in 0..65535, got {port!r}")
    app = create_app(policy_dir)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, workers=1,
                            access_log=log_level in ("info", "debug", "trace"))
    return uvicorn.Server(config)


def shipped_policy_dir(policy: str, rules: str | None = None, cache_dir: str | None = None) -> str:
    """The export directory ``rummy serve --policy`` names: ``policy`` itself, or for
    ``pretrained`` the policy shipped for the table of ``rules`` (default classic;
    ``rummy_env.agents.pretrained_for``) and for ``pretrained:PRESET`` that preset's,
    exported to ONNX on first use (``rummy_env.frontends.web.exported_pretrained``).

    Raises:
        ValueError: unknown rules, no shipped policy for the table, ``rules`` given with
            an export directory or with a ``pretrained:PRESET`` of another table, or a
            failed export."""
    text = str(policy).strip()
    low = text.lower()
    if low != "pretrained" and not low.startswith("pretrained:"):
        if rules is not None:
            raise ValueError(f"--rules chooses the table of --policy pretrained; the export directory {text} "
                             f"carries its own rules (its spec.json): drop --rules")
        return text
    from rummy_env.agents import PRETRAINED, pretrained_for
    from rummy_env.rules import Rules

    from .web import exported_pretrained

    own = pretrained_for(Rules.make(rules if rules is not None else "classic"))
    preset = low.partition(":")[2].strip() if ":" in low else own
    if preset is not None and preset not in PRETRAINED:
        raise ValueError(f"--policy {text}: no policy is shipped for {preset} (shipped: {', '.join(PRETRAINED)}); "
                         f"give an export directory (rummy export)")
    if ":" in low and rules is not None and preset != own:
        raise ValueError(f"--policy {text} is the policy of the {preset} table, but --rules {rules} asks for "
                         f"{'the ' + own + ' one' if own else 'a table no shipped policy plays'}: give one of them")
    if preset is None or preset not in PRETRAINED:
        raise ValueError(f"--policy {text}: no policy is shipped for {preset or 'the ' + str(rules) + ' table'} "
                         f"(shipped: {', '.join(PRETRAINED)}); give an export directory (rummy export)")
    return str(exported_pretrained(cache_dir, preset))


def _is_loopback(host: str) -> bool:
    from rummy_env.loopback import is_loopback

    return is_loopback(host)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default="pretrained", metavar="DIR",
                        help="an export directory (policy.onnx + spec.json), or 'pretrained' (the default: the "
                             "policy shipped for --rules, exported to ONNX on first use) or 'pretrained:PRESET'")
    parser.add_argument("--rules", default=None, metavar="PRESET",
                        help="with --policy pretrained: the table whose shipped policy is served (default classic)")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="where a shipped policy's export is kept (default: rummy web's cache folder)")
    parser.add_argument("--port", required=True, type=int, metavar="P", help="TCP port (0: any free port)")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to bind (default {DEFAULT_HOST}; only an explicit --host binds elsewhere)")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])


def main(args: argparse.Namespace) -> int:
    """Run ``rummy serve`` until interrupted; returns 0.

    Raises:
        ValueError: a bad port, a port in use, a ``--host`` that is no address or
            resolvable name, or a bad export directory (the CLI prints it, exit 2).
    """
    import socket

    host = args.host or DEFAULT_HOST
    if not isinstance(args.port, int) or not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be an int in 0..65535, got {args.port}")
    try:  # checked before the warning below: a host that names no address binds nothing
        family, kind, proto, _, address = socket.getaddrinfo(host, args.port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as e:
        raise ValueError(f"--host {host}: not an IP address or a host name this machine resolves "
                         f"({getattr(e, 'strerror', None) or e}); give e.g. 127.0.0.1 (this machine only, the "
                         "default) or 0.0.0.0 (every interface)") from None
    policy = shipped_policy_dir(args.policy, getattr(args, "rules", None), getattr(args, "cache", None))
    server = make_server(policy, args.port, host=host, log_level=args.log_level)
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:  # bound here, so that a port in use is one line, not uvicorn's log of it
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{args.port} ({e.strerror or e}); choose another --port") from None
    if not _is_loopback(host):
        print(f"warning: binding {host}: the policy service is reachable from other machines", file=sys.stderr)
    print(f"rummy serve: the policy {policy} answers on http://{host}:{sock.getsockname()[1]}/act; Ctrl-C "
          "stops it", file=sys.stderr, flush=True)
    server.run(sockets=[sock])
    return 0
