"""``rummy web [--port P] [--agent NAME] [--rules RULES] [--seed S] [--allow-seed] [--cache DIR]``:
a practice table in the browser.

One process (FastAPI + uvicorn, bound to 127.0.0.1 only) serves a single page (plain
HTML/CSS/JS in ``web_table/static/``, no build step) on which a person plays heads-up
Straight Rummy against the computer: a whole match to the rules' target (RULES.md §7),
hand by hand, or a prepared practice position (``web_table/positions/*.json``: smaller
hands, one idea each, as in the rule texts' practice table).

The opponent (``--agent``) is by default the shipped policy exported to ONNX
(``pretrained-onnx``: ``agents/pretrained/policy.zip`` is exported with
``rummy_env.train.export.export_policy`` on first use into ``--cache``, by default
``$XDG_CACHE_HOME/rummy-env`` or ``~/.cache/rummy-env``), or any name
``rummy_env.agents.make_agent`` takes (``heuristic``, ``greedy``, ``random``,
``pretrained``, ``onnx:DIR``, ``ppo:PATH``, and ``search`` where it exists). The
computer acts on its own observation and action mask only (``env.observe``). A policy
is loaded once and plays every game (one inference session per policy: ``Opponent``).

Every heads-up table is played. 500 Rum (``--rules rum500``, RULES.md §10.4-10.5): the
whole discard pile is shown and may be dug (``draw discard 7H``), each seat's meld
points are shown, the dug card is named until it is melded or laid off, and two
practice positions of its own teach the dig and early melds. The deck variants
(§10.1-10.3: ``--rules jokers``, ``{"preset": "classic", "decks": 2}``, ``aces:
"around"``): a joker in hand is a star, a joker on the table shows the card it stands
for (``JK=4H``: a starred 4 of hearts), the second copy of a card in a hand is primed
and selected on its own, runs that turn the corner are drawn in their order, and when
a joker can stand for more than one card the page marks the legal moves to pick from.
The default opponent is the policy shipped for the table (``rummy_env.agents.pretrained_for``:
``pretrained:rum500`` at a 500 Rum table, ``pretrained:jokers`` at the jokers table, exported to ONNX on first use); at a table
no shipped policy plays, ``heuristic`` plays for it, and the view and ``/api/config``
say so (``agent_note``); an agent named with ``--agent`` that does not fit the table
is refused with a message naming ``--agent heuristic`` (``fit_opponent``).

Games are held server-side, one per session id. The JSON API (every error is
``{"detail": reason}``):

==============================  ==========================================================
``GET /api/config``             the opponent, the default rules, the presets, the positions
``POST /api/new``               ``{"rules"?: preset | object, "seed"?: int}``: a new match
                                (``seed`` only at a practice table: ``--allow-seed``)
``POST /api/position``          ``{"name": position}`` or ``{"state": STATE, "seat"?: 0|1}``
``GET /api/game/{id}``          the table as the person sees it
``POST /api/game/{id}/move``    ``{"action": "meld 4H 5H 6H"}`` or ``{"action_id": 159}``
``POST /api/game/{id}/next``    deal the next hand of the match (after a hand is over)
==============================  ==========================================================

Every game answer is ``{"session", "view", "frames"}``: ``view`` is the table
after everything (``TableGame.view``), ``frames`` the moves this request made, each
``{"who": "you" | "computer", "action": text, "view": the table after it}``: the
person's move (for ``move``), then the computer's moves until the person is to move
again or the hand is over, for the page to show one at a time. Status codes: 400 a body
that is not the JSON asked for, a ``seed`` at a table that takes none, or a ``Host``
other than the table's own; 403 a request from another site's page (its ``Origin``);
404 an unknown session id or position name; 409 a move that is not legal now (the
engine's reason; the game is unchanged), or ``next`` while the hand is on; 413 a body
over ``MAX_BODY_BYTES``; 415 a POST not sent as ``application/json``; 422 a STATE or
rules the engine refuses (its message).

Only this machine's page is served (``request_refusal``): ``Host`` must be
``127.0.0.1:PORT`` or ``localhost:PORT`` (against DNS rebinding), an ``Origin`` must be
the table's own, and a POST must be JSON (another site's page cannot send that without
a CORS preflight, which is not answered). Games are played in worker threads, so
``/api/config`` and other games answer while the computer thinks or a shipped policy
is exported on first use.

Hidden information (RULES.md §1, API.md "Agents"): a view carries the person's own
hand, the table melds, the upcard, the discard pile's size, the stock's size and the
opponent's hand size, never the opponent's cards or the stock. At a 500 Rum table the
whole discard pile is face up (§10.4) and is in the view.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import secrets
import shutil
import sys
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from rummy_env import engine
from rummy_env.actions import DIG_BASE, LAYOFF_BASE
from rummy_env.rules import PRESETS, Rules, preset_players

try:  # the web extra; FastAPI reads the endpoints' annotations from this module's globals
    from fastapi import FastAPI, Request
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles
except ImportError as _e:  # pragma: no cover - reported by create_app
    FastAPI = Request = FileResponse = JSONResponse = StaticFiles = None  # type: ignore[assignment,misc]
    _FASTAPI_MISSING: ImportError | None = _e
else:
    _FASTAPI_MISSING = None

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_AGENT = "pretrained-onnx"
FALLBACK_AGENT = "heuristic"  # plays for the default opponent at a table it does not fit
HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "web_table" / "static"
POSITIONS_DIR = HERE / "web_table" / "positions"
MAX_BODY_BYTES = 64 * 1024  # a full position is about 1 KB
MAX_SESSIONS = 256  # the least recently used game is dropped beyond this
MAX_LOG = 40  # moves of the current hand kept in a view
MAX_COMPUTER_ACTIONS = 200  # one computer turn is a draw, melds / lay-offs and a discard


class Rejected(ValueError):
    """A request the table refuses; ``status`` is the HTTP status, the message the reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------------------- the opponent

def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/rummy-env``, else ``~/.cache/rummy-env``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rummy-env"


def exported_pretrained(cache_dir: str | os.PathLike | None = None, preset: str = "classic") -> Path:
    """The folder of the policy shipped for ``preset`` (``rummy_env.agents.PRETRAINED``)
    exported to ONNX (``policy.onnx`` + ``spec.json``), exporting it on first use.

    The folder is ``<cache_dir>/pretrained-onnx-<first 12 hex digits of the zip's
    SHA-256>`` (``pretrained-PRESET-onnx-...`` for another preset than classic), so a
    new shipped policy is exported afresh. The export is written to a temporary folder
    beside it and renamed into place.

    Raises:
        ValueError: no policy is shipped, the cache folder cannot be written, or torch,
            stable-baselines3 or onnx (needed for the export) are missing; the message
            says what to install, or to use ``--agent heuristic``.
    """
    from rummy_env.agents import pretrained_path

    zip_path = Path(pretrained_path(preset))
    if not zip_path.is_file():
        raise ValueError(f"no pretrained policy is shipped ({zip_path} is missing); start with --agent heuristic")
    digest = hashlib.sha256(zip_path.read_bytes()).hexdigest()[:12]
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    out = cache / (f"pretrained-onnx-{digest}" if preset == "classic" else f"pretrained-{preset}-onnx-{digest}")
    if (out / "policy.onnx").is_file() and (out / "spec.json").is_file():
        return out
    try:
        import onnx  # noqa: F401
        import sb3_contrib  # noqa: F401
        import torch  # noqa: F401

        from rummy_env.train.export import export_policy
    except ImportError as e:
        raise ValueError(
            f"the default opponent is the shipped policy exported to ONNX, and exporting it on first use needs "
            f"torch, stable-baselines3 and onnx ({e}); install them (pip install torch "
            f"'rummy-env[train,export]') or start with --agent heuristic"
        ) from None
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=cache))
    except OSError as e:
        raise ValueError(f"cannot use the cache folder {cache} ({e}); give another with --cache DIR") from None
    try:
        print(f"exporting the policy shipped for {preset} to ONNX in {out} (first use; up to a minute) ...",
              file=sys.stderr)
        export_policy(str(zip_path), tmp)
        try:
            os.replace(tmp, out)
        except OSError:  # another process exported it meanwhile
            if not (out / "policy.onnx").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def shared_agent(agent: Any) -> bool:
    """Whether ``agent`` may be played by every game of the server at once: a greedy
    policy that keeps no state between decisions and ignores its seed (``OnnxAgent``,
    whose onnxruntime session may be run from several threads at once, and
    ``PPOAgent``). One such agent per policy keeps the server's memory flat in the
    number of games; any other agent (the scripted ones, ``search``, an outside agent)
    is built for each game with that game's seed."""
    from rummy_env.agents.onnx_agent import OnnxAgent
    from rummy_env.agents.ppo_agent import PPOAgent

    return isinstance(agent, (OnnxAgent, PPOAgent))


class Opponent:
    """``make(seed) -> agent`` for one ``--agent`` name (what ``opponent_factory`` returns).

    A policy (``shared_agent``) is loaded once, on the first call, and that one agent
    (one inference session) plays in every game; other agents are built per call. Calls
    may come from several threads at once (the server plays games in worker threads).

    Args:
        spec: the ``rummy_env.agents.make_agent`` name it builds.
        name: how the page names it.
        fallback: the agent played instead at a table this one does not fit (its
            observation or action count is another table's), or ``None``: such a
            table is refused. Only the default opponent has one (``heuristic``).
        cache_dir: where the shipped policies are exported (``exported_pretrained``).
        shipped: the default opponent: at each table the policy shipped for it.
        agent: an agent already built from ``spec`` (``opponent_factory``'s check),
            kept when it can be shared.
    """

    def __init__(self, spec: str | None, name: str, fallback: str | None = None,
                 cache_dir: str | os.PathLike | None = None, shipped: bool = False, agent: Any = None) -> None:
        self.spec, self.name, self.fallback = spec, name, fallback
        self.cache_dir, self.shipped = cache_dir, shipped
        self._by_preset: dict[str, "Opponent"] = {}
        self._shared: Any = agent if agent is not None and shared_agent(agent) else None
        self._lock = threading.Lock()  # one export and one load, however many games ask at once
        self._tables_lock = threading.Lock()

    def __call__(self, seed: int | None) -> Any:
        """The agent for one game: the shared policy, or a new agent seeded with ``seed``.

        Raises:
            ValueError: an agent that cannot be built (``make_agent``), or a failed
                first-use export of the shipped policy (``exported_pretrained``)."""
        from rummy_env.agents import make_agent

        with self._lock:
            if self._shared is not None:
                return self._shared
            if self.spec is None:  # the shipped classic policy, exported on first use
                self.spec = f"onnx:{exported_pretrained(self.cache_dir)}"
            agent = make_agent(self.spec, seed=seed)
            if shared_agent(agent):
                self._shared = agent
            return agent

    def for_table(self, rules: Rules) -> "Opponent":
        """The opponent at a table of ``rules``: for the default opponent (``shipped``) the
        policy shipped for that table (``rummy_env.agents.pretrained_for``, exported to ONNX
        on first use: ``pretrained:rum500`` at a 500 Rum table, ``pretrained:jokers`` at the jokers table), itself otherwise.

        Raises:
            ValueError: the export of that table's policy fails (``exported_pretrained``)."""
        from rummy_env.agents import pretrained_for

        preset = pretrained_for(rules) if self.shipped else None
        if preset is None or preset == "classic":
            return self
        with self._tables_lock:
            if preset not in self._by_preset:
                folder = exported_pretrained(self.cache_dir, preset)
                self._by_preset[preset] = Opponent(f"onnx:{folder}",
                                                   f"{DEFAULT_AGENT} (the policy shipped for {preset})",
                                                   fallback=self.fallback)
            return self._by_preset[preset]


def opponent_factory(name: str = DEFAULT_AGENT, cache_dir: str | os.PathLike | None = None
                     ) -> tuple[Opponent, str]:
    """``(make(seed) -> agent, description)`` for ``--agent name``.

    ``pretrained-onnx`` is the policy shipped for each table exported to ONNX
    (``exported_pretrained``, when a table first needs it: ``Opponent.for_table``,
    ``fit_opponent``); ``heuristic`` plays for it at a table no shipped policy plays.
    Any other name goes to ``rummy_env.agents.make_agent`` and must fit the table it is
    asked to play; one agent of it is built here, so a bad name fails at once (a policy
    built here is the one every game plays: ``Opponent``).

    Raises:
        ValueError: an unknown agent name (the message lists the allowed ones), a
            missing or corrupt policy, or a missing package for the export.
    """
    from rummy_env.agents import make_agent

    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"--agent must be a non-empty name, got {name!r}")
    if name.strip().lower() == DEFAULT_AGENT:
        # the policy of each table is exported when a table first needs it (fit_opponent)
        desc = f"{DEFAULT_AGENT} (the shipped policy)"
        return Opponent(None, desc, fallback=FALLBACK_AGENT, cache_dir=cache_dir, shipped=True), desc
    try:
        checked = make_agent(name, seed=0)
    except ValueError as e:
        raise ValueError(f"--agent: {e}; or '{DEFAULT_AGENT}' (the shipped policy exported to ONNX)") from None
    return Opponent(name, name, agent=checked), name


def fit_opponent(make_opponent: Callable[[int | None], Any], agent_name: str, rules: Rules,
                 seed: int | None) -> tuple[Any, str, str | None]:
    """``(agent, name, note)``: the opponent built for a heads-up table of ``rules``.

    When the agent does not fit the table (``rummy_env.agents.table_misfit``: another player count or kind of
    table, e.g. the shipped classic policy at a 500 Rum table, RULES.md §10.4) and
    ``make_opponent`` has a ``fallback`` (the default opponent), that agent plays
    instead, and ``note`` says so; else ``note`` is ``None``.

    Raises:
        ValueError: the agent does not fit and has no fallback (the message names the
            table, why, and ``--agent heuristic``).
    """
    from rummy_env.agents import builtin_opponents, make_agent, table_misfit
    from rummy_env.table import Table

    from rummy_env.agents import pretrained_for

    t = Table.of(rules)
    table = "a 500 Rum table" if t.rum500 and t.fixed_layout else t.describe()
    fallback = getattr(make_opponent, "fallback", None)
    if getattr(make_opponent, "shipped", False) and pretrained_for(rules) is None:  # nothing to export or load
        note = f"no shipped policy plays {table}; the computer plays '{fallback}' here"
        return make_agent(fallback, seed=seed), fallback, note
    if callable(getattr(make_opponent, "for_table", None)):  # the default: the policy shipped for this table
        own = make_opponent.for_table(rules)
        if own is not make_opponent:
            make_opponent, agent_name = own, own.name
    try:
        agent = make_opponent(seed)
    except ValueError as e:
        if getattr(make_opponent, "shipped", False) or agent_name.startswith(DEFAULT_AGENT):
            raise ValueError(f"{e}; or start with --agent heuristic") from None
        raise
    why = table_misfit(agent, rules)
    if why is None:
        return agent, agent_name, None
    if fallback is None:
        others = ", ".join(n for n in builtin_opponents(rules) if n != FALLBACK_AGENT)
        raise ValueError(f"the opponent {agent_name!r} cannot play {table} ({why}); start rummy web with "
                         f"--agent {FALLBACK_AGENT} (or {others}), or a policy trained for such "
                         "a table (onnx:DIR, ppo:PATH)")
    note = (f"no shipped policy plays {table} ({agent_name}: {why}); the computer plays '{fallback}' here")
    return make_agent(fallback, seed=seed), fallback, note


# ---------------------------------------------------------------------------- positions

def load_positions(folder: str | os.PathLike = POSITIONS_DIR) -> dict[str, dict[str, Any]]:
    """The practice positions: ``{name: {"title", "teaches", "state"}}`` from
    ``folder/*.json`` (each file ``{"title": str, "teaches": one sentence, "state": STATE}``),
    in file-name order.

    Raises:
        ValueError: a file that is not JSON or lacks one of the three keys.
    """
    out: dict[str, dict[str, Any]] = {}
    for p in sorted(Path(folder).glob("*.json")):
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ValueError(f"practice position {p} is not JSON: {e}") from None
        if not isinstance(d, dict) or not all(k in d for k in ("title", "teaches", "state")):
            raise ValueError(f"practice position {p} needs 'title', 'teaches' and 'state'")
        out[p.stem] = {"title": str(d["title"]), "teaches": str(d["teaches"]), "state": d["state"]}
    return out


# ---------------------------------------------------------------------------- one game

_RANKS = "A23456789TJQK"
_SUITS = "CDHS"


def _hand_order(card: str) -> tuple[int, int]:
    """Sort key of a card text: by suit (clubs, diamonds, hearts, spades), then rank."""
    return (_SUITS.find(card[1:2]), _RANKS.find(card[:1]))


def _action_kind(text: str) -> str:
    return text.split(" ", 1)[0]


def state_melds_sizes(state: Any) -> list[int]:
    """Cards in each table meld of an engine position (``Meld.mask``: a joker counted as the
    card it stands for), in the engine's order."""
    return [m.mask.bit_count() for m in state.melds]


def _natural(card: str) -> str:
    """The card a card text stands for: ``"JK=5H"`` (a joker in a meld, RULES.md §10.2) ->
    ``"5H"``; any other text itself."""
    return card.split("=", 1)[1] if "=" in card else card


def _meld_kind(cards: list[str]) -> str:
    """``"set"`` or ``"run"`` of a table meld's card texts (a joker counts as the card it
    stands for, RULES.md §10.2)."""
    return "set" if len({_natural(c)[0] for c in cards}) == 1 else "run"


class TableGame:
    """One person's game against the computer, held by the server.

    Args:
        rules: a preset name, a STATE-style rules object or a ``Rules`` (heads-up only).
        make_opponent: ``make(seed) -> agent``; the agent's ``act(observation,
            action_mask) -> int`` plays the other seat.
        agent_name: how the page names the opponent.
        seat: the person's seat (0 or 1).
        seed: seeds the deals and the opponent (``None``: a random seed).
        state: a STATE to start from instead of a deal (``reset(options={"state": ...})``).
        title: the practice position's title, if any.

    A STATE whose rules are another kind of table than ``rules`` (a 500 Rum position on
    a classic server) is played at a table of its own rules. The opponent is fitted to
    the table (``fit_opponent``): ``agent_name`` and ``agent_note`` say who plays.

    Raises:
        ValueError: rules that are not heads-up or unknown, a bad seat, a STATE the
            engine refuses (its message), or an opponent that cannot play the table.
    """

    def __init__(self, rules: Any, make_opponent: Callable[[int | None], Any], agent_name: str,
                 seat: int = 0, seed: int | None = None, state: dict | None = None,
                 title: str | None = None) -> None:
        from rummy_env import rummy_v0
        from rummy_env.table import Table

        if isinstance(state, dict) and state.get("rules") is not None:
            # a position of another kind of table (a 500 Rum one, RULES.md §10.4) needs an env
            # of its kind; a position whose rules are refused is left to the engine's message
            try:
                own = Rules.make(state["rules"])
            except (ValueError, TypeError):
                own = None
            if own is not None and Table.of(own).kind != Table.of(Rules.make(rules)).kind:
                rules = own
        self.env = rummy_v0.raw_env(rules=rules)
        if self.env.rules.num_players != 2:
            raise ValueError(f"the web table is heads-up: rules with num_players 2, got {self.env.rules.num_players}")
        if not isinstance(seat, int) or isinstance(seat, bool) or seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, got {seat!r}")
        self.seat = seat
        self.me = self.env.possible_agents[seat]
        self.rng = random.Random(secrets.randbits(63) if seed is None else seed)
        options = None if state is None else {"state": state}
        self.env.reset(seed=self.rng.getrandbits(63), options=options)  # raises ValueError on a bad STATE
        if self.env.rules.num_players != 2:
            raise ValueError("the web table is heads-up: the position must be for 2 players")
        self.opponent, self.agent_name, self.agent_note = fit_opponent(
            make_opponent, agent_name, self.env.rules, self.rng.getrandbits(31))
        self.title = title
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ the public view
    def _who(self, seat: int | None) -> str | None:
        if seat is None:
            return None
        return "you" if seat == self.seat else "computer"

    def _meld_targets(self, ids: list[int], texts: list[str]) -> dict[str, int]:
        """For each lay-off of the legal moves ``texts`` (``ids``: their next decisions),
        the index of the table meld it extends (the view lists the melds in the engine's
        order), by move text. A standard lay-off id names its target
        (``engine.layoff_target``); at a deck-variant table (a joker's lay-off, RULES.md
        §10.2) the move is played on a copy of the position and the meld that grew is its
        target."""
        state = self.env.state
        melds = state.melds
        out = {}
        for a, t in zip(ids, texts):
            if not t.startswith("layoff"):
                continue
            if self.env.table.fixed_layout and LAYOFF_BASE <= a < DIG_BASE:
                out[t] = engine.layoff_target(melds, *divmod(a - LAYOFF_BASE, 3))
                continue
            after = state.copy()
            for x in engine.action_ids(after, t):
                engine.apply(after, x)
            grew = [i for i, (m0, m1) in enumerate(zip(state_melds_sizes(state), state_melds_sizes(after)))
                    if m1 > m0]
            if grew:
                out[t] = grew[0]
        return out

    def view(self) -> dict[str, Any]:
        """The table as the person sees it (JSON-able). Keys: ``seat``, ``agent``,
        ``rules`` (STATE form), ``target``, ``cards_dealt``, ``title``, ``hand_number``,
        ``turn``, ``phase``, ``to_move`` (``"you"``, ``"computer"`` or null once the hand
        is over), ``hand`` (the person's cards, sorted by suit then rank), ``melds``
        (the table melds, each ``{"cards", "kind": "set"|"run"}``), ``upcard`` (or
        null), ``discard_size``, ``stock_size``, ``opponent_hand_size``, ``scores``
        (``{"you", "computer"}``: match totals), ``drawn_from_discard``, ``legal`` (the
        person's legal actions: ``{"action", "id", "kind", "cards", "meld"}``, ``meld``
        the index of the meld a lay-off extends), ``log`` (this hand's moves,
        ``{"who", "action"}``, at most ``MAX_LOG``), ``hand_over``, ``result``
        (``{"outcome", "winner", "rummy", "points": {"you", "computer"}}`` or null),
        ``match_over`` and ``match_winners``. Never another hand or the stock.

        The opponent: ``agent`` (the one playing) and ``agent_note`` (why another agent
        plays than the one asked for, ``fit_opponent``; else null). At a 500 Rum table
        (RULES.md §10.4): ``dig`` (true when the whole discard pile is face up and may be
        dug), ``pile`` (the discard pile, bottom to top; null at other tables),
        ``meld_points`` (``{"you", "computer"}``: points melded and laid off this hand;
        null unless ``scoring = "melds"``), ``bound`` (the card the person dug this turn
        and must still meld or lay off, else null; never the computer's), legal digs
        with ``kind`` ``"dig"`` and ``cards`` the cards it takes (bottom to top), and a
        ``result`` with ``melded`` and ``held`` per seat besides ``points`` (melded minus
        held). At a jokers table: ``jokers_named``, the cards the person has named jokers
        for (``joker as <card>`` posted by id or alone) in the move still to finish, else
        null; ``legal`` then lists the moves that finish it.
        """
        env = self.env
        sd = env.state_dict()
        me, other = self.seat, 1 - self.seat
        hand_over = bool(sd["hand_over"])
        legal: list[dict[str, Any]] = []
        if not hand_over and sd["current_player"] == me:
            moves = env.legal_moves()  # whole moves: a meld with jokers is one (engine.legal_moves)
            ids = [a for _, a in moves]
            texts = [t for t, _ in moves]
            targets = self._meld_targets(ids, texts)
            for a, t in zip(ids, texts):
                kind = _action_kind(t)
                words = t.split()
                cards = words[1:] if kind == "meld" else words[1:2] if kind in ("layoff", "discard") else []
                if kind == "draw" and len(words) == 3:  # a dig (RULES.md §10.4): that card and every card above it
                    kind = "dig"
                    pile = sd["discard"]
                    top = len(pile) - 1 - pile[::-1].index(words[2])  # its topmost copy (§10.3)
                    cards = list(pile[top:])
                legal.append({"action": t, "id": int(a), "kind": kind, "cards": cards, "meld": targets.get(t)})
        melds = [{"cards": list(m), "kind": _meld_kind(list(m))} for m in sd["melds"]]
        rules = env.rules
        dig, melds_scoring = env.table.digs, env.table.melds_scoring
        result = None
        if hand_over:
            r = sd["result"]
            result = {"outcome": r["outcome"], "winner": self._who(r["winner"]), "rummy": bool(r["rummy"]),
                      "points": {"you": r["points"][me], "computer": r["points"][other]}}
            if melds_scoring:  # every seat: what it melded and laid off minus what it holds (§10.4)
                mp = sd["meld_points"]
                result["melded"] = {"you": mp[me], "computer": mp[other]}
                result["held"] = {"you": mp[me] - r["points"][me], "computer": mp[other] - r["points"][other]}
        winners = sd.get("match_winners")
        mine_to_move = not hand_over and sd["current_player"] == me
        return {
            "seat": me,
            "agent": self.agent_name,
            "agent_note": self.agent_note,
            "rules": sd["rules"],
            "target": rules.target,
            "cards_dealt": rules.cards_dealt,
            "title": self.title,
            "hand_number": sd["hand_number"] + 1,
            "turn": sd["turn"] + 1,
            "phase": sd["phase"],
            "to_move": None if hand_over else self._who(sd["current_player"]),
            "hand": sorted(sd["hands"][me], key=_hand_order),
            "melds": melds,
            "upcard": sd["discard"][-1] if sd["discard"] else None,
            "discard_size": len(sd["discard"]),
            "dig": dig,
            "pile": list(sd["discard"]) if dig else None,
            "meld_points": {"you": sd["meld_points"][me], "computer": sd["meld_points"][other]}
            if melds_scoring else None,
            "bound": sd.get("bound") if mine_to_move else None,
            "jokers_named": sd.get("jokers_named") or None if mine_to_move else None,
            "stock_size": len(sd["stock"]),
            "opponent_hand_size": len(sd["hands"][other]),
            "scores": {"you": sd["scores"][me], "computer": sd["scores"][other]},
            "drawn_from_discard": sd["drawn_from_discard"] if sd["current_player"] == me else None,
            "legal": legal,
            "log": self.log[-MAX_LOG:],
            "hand_over": hand_over,
            "result": result,
            "match_over": winners is not None,
            "match_winners": None if winners is None else [self._who(w) for w in winners],
        }

    # ------------------------------------------------------------------ moves
    def _over(self) -> bool:
        """The hand is over (every agent is terminated then, as in PettingZoo)."""
        return all(self.env.terminations.values())

    def _computer_turn(self) -> list[dict[str, Any]]:
        """The computer plays until the person is to move or the hand is over; each of its
        moves is returned with the view after it."""
        env = self.env
        frames: list[dict[str, Any]] = []
        for _ in range(MAX_COMPUTER_ACTIONS):
            if self._over() or env.agent_selection == self.me:
                return frames
            agent = env.agent_selection
            ob = env.observe(agent)  # the computer's own view: its hand, the table, public history
            a = int(self.opponent.act(ob["observation"], ob["action_mask"]))
            if not (0 <= a < len(ob["action_mask"])) or not ob["action_mask"][a]:
                raise RuntimeError(f"the opponent {self.agent_name!r} chose action {a}, which its mask forbids")
            if engine.is_joker_step(env.state, a):
                env.step(a)  # a joker named for the meld or lay-off that follows: logged with it
                continue
            text = engine.move_text(env.state, a)
            env.step(a)
            self.log.append({"who": "computer", "action": text})
            frames.append({"who": "computer", "action": text, "view": self.view()})
        raise RuntimeError(f"the opponent made {MAX_COMPUTER_ACTIONS} moves without ending its turn")

    def start(self) -> list[dict[str, Any]]:
        """The computer's moves if it is to move first (else ``[]``)."""
        with self.lock:
            return self._computer_turn()

    def move(self, body: Any) -> list[dict[str, Any]]:
        """Play the person's move (``{"action": text}`` or ``{"action_id": int}``), then the
        computer's answer; returns the frames: the person's move, then the computer's.

        Raises:
            Rejected: 400 a body of another form; 409 the hand is over, it is not the
                person's turn, the text names no action, or the action is illegal (the
                engine's reason). Nothing changes then.
        """
        if not isinstance(body, dict) or len(body) != 1 or not ({"action", "action_id"} & set(body)):
            raise Rejected(400, 'a move is {"action": "<action text>"} or {"action_id": <int>}, '
                                f"got {json.dumps(body)[:200]}")
        with self.lock:
            env = self.env
            if self._over():
                raise Rejected(409, "the hand is over: ask for the next hand (or start a new match)")
            if env.agent_selection != self.me:
                raise Rejected(409, "it is the computer's turn")
            if "action" in body:
                text = body["action"]
                if not isinstance(text, str) or not text.strip() or len(text) > 200:
                    raise Rejected(400, f"'action' must be an action text such as 'draw stock', got {text!r:.200}")
                try:  # a move with jokers is several decisions: all legal, or the move is refused whole
                    ids = engine.legal_action_ids(env.state, text)
                except ValueError as e:
                    raise Rejected(409, str(e)) from None
            else:
                a = body["action_id"]
                if not isinstance(a, int) or isinstance(a, bool) or not 0 <= a < env.action_space(self.me).n:
                    raise Rejected(400, f"'action_id' must be an int in 0..{env.action_space(self.me).n - 1}, "
                                        f"got {a!r:.200}")
                ids = [a]
            for a in ids[:-1]:
                env.step(a)
            try:  # an illegal action raises, naming why, and changes nothing (API.md)
                text = engine.move_text(env.state, ids[-1])  # the whole move: 'meld 4H JK=5H 6H'
                env.step(ids[-1])
            except ValueError as e:
                raise Rejected(409, str(e)) from None
            self.log.append({"who": "you", "action": text})
            mine = {"who": "you", "action": text, "view": self.view()}
            return [mine] + self._computer_turn()

    def next_hand(self) -> list[dict[str, Any]]:
        """Deal the next hand of the match (RULES.md §7: the deal passes to the left) and
        let the computer move if it leads; returns its frames.

        Raises:
            Rejected: 409 the hand is not over, or the match is over.
        """
        from rummy_env import state_json

        with self.lock:
            st = self.env.state
            if not st.hand_over:
                raise Rejected(409, "the hand is not over yet: finish it first")
            if st.match_over:
                raise Rejected(409, "the match is over: start a new match")
            st = st.copy()
            engine.next_hand(st, seed=self.rng.getrandbits(63))  # the deal passes to the left (§7)
            self.env.reset(seed=self.rng.getrandbits(63), options={"state": state_json.to_json(st)})
            self.log = []
            return self._computer_turn()


# ---------------------------------------------------------------------------- the server

class WebTable:
    """The sessions and the requests of the API, without HTTP (``create_app`` wraps it).

    Args:
        make_opponent: ``make(seed) -> agent`` (``opponent_factory``).
        agent_name: the opponent's name shown on the page.
        rules: the default rules of a new match (a preset name or a rules object).
        seed: seeds the first match; later matches use ``seed + k`` (``None``: every
            deal from the operating system's random source, ``secrets``).
        positions: the practice positions (``load_positions``).
        allow_seed: whether ``/api/new`` takes a ``seed`` from the client (``--allow-seed``).
            A client that chose the seed can work out the computer's hand and the order
            of the stock, so this is for practice and replays only; ``None`` (the default)
            allows it exactly when ``seed`` is given (a seeded server's deals are
            reproducible already: a small ``seed`` can be found from one's own hand).

    Raises:
        ValueError: rules that are unknown or not heads-up, or an opponent that cannot
            play them and has no fallback (``fit_opponent``).
    """

    def __init__(self, make_opponent: Callable[[int | None], Any], agent_name: str, rules: Any = "classic",
                 seed: int | None = None, positions: dict[str, dict[str, Any]] | None = None,
                 allow_seed: bool | None = None) -> None:
        self.rules = Rules.make(rules)
        if self.rules.num_players != 2:
            raise ValueError(f"the web table is heads-up: rules with num_players 2, got {self.rules.num_players}")
        self.make_opponent = make_opponent
        self.agent_name = agent_name
        # the opponent at the default table: one that does not fit it fails here (fit_opponent)
        _, self.table_agent, self.agent_note = fit_opponent(make_opponent, agent_name, self.rules, 0)
        self.seed = seed
        self.allow_seed = (seed is not None) if allow_seed is None else bool(allow_seed)
        self.matches = 0
        self.positions = load_positions() if positions is None else positions
        self.sessions: OrderedDict[str, TableGame] = OrderedDict()
        self.lock = threading.Lock()

    def config(self) -> dict[str, Any]:
        """``{"agent", "agent_note", "rules", "presets", "positions", "allow_seed"}``: ``agent`` the
        opponent at the default rules' table (``heuristic`` for the default opponent at a
        500 Rum table, with ``agent_note`` saying why; else ``agent_note`` is null);
        ``presets`` the presets the (heads-up) table can start, those whose player range
        holds 2 (``rules.preset_players``: not ``two_decks``, 5-7 players); ``allow_seed``
        whether ``/api/new`` takes a client's ``seed``. Reads no game: it is answered at
        once while games are being played."""
        return {"agent": self.table_agent, "agent_note": self.agent_note, "rules": self.rules.to_json(),
                "presets": [p for p in PRESETS if preset_players(p)[0] <= 2],
                "positions": [{"name": k, "title": v["title"], "teaches": v["teaches"]}
                              for k, v in self.positions.items()],
                "allow_seed": self.allow_seed}

    def _add(self, game: TableGame) -> dict[str, Any]:
        sid = secrets.token_urlsafe(16)
        with self.lock:
            self.sessions[sid] = game
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        return self.answer(sid, game, game.start())

    def game(self, sid: str) -> TableGame:
        """The game of session ``sid``. Raises ``Rejected`` (404) for an unknown id."""
        with self.lock:
            g = self.sessions.get(sid) if isinstance(sid, str) else None
            if g is None:
                raise Rejected(404, f"unknown session id {str(sid)[:64]!r}: start a new match (POST /api/new)")
            self.sessions.move_to_end(sid)
            return g

    def new_match(self, body: Any) -> dict[str, Any]:
        """``{"rules"?: ..., "seed"?: int}`` -> a new session.

        Raises:
            Rejected: 400 another form, a ``seed`` that is no int in 0..2**63-1, or a
                ``seed`` at a table that takes none from the client (``allow_seed``; the
                message names ``--allow-seed``); 422 rules the engine refuses or the
                opponent cannot play.
        """
        if body is None:
            body = {}
        if not isinstance(body, dict) or set(body) - {"rules", "seed"}:
            raise Rejected(400, 'a new match is {"rules"?: preset name or rules object, "seed"?: int}, '
                                f"got {json.dumps(body)[:200]}")
        rules = self.rules
        if body.get("rules") is not None:
            try:
                rules = Rules.make(body["rules"])
            except (ValueError, TypeError) as e:
                raise Rejected(422, f"rules: {e}") from None
        seed = body.get("seed")
        if seed is not None and not self.allow_seed:
            raise Rejected(400, "a seed is taken only by a practice table: start rummy web with --allow-seed "
                                "(or --seed S); whoever chose the seed can work out the computer's hand and the "
                                "stock, so a table for fair play deals from a random seed of its own")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63):
            raise Rejected(400, f"seed must be an int in 0..2**63-1, got {seed!r:.100}")
        if seed is None and self.seed is not None:
            with self.lock:
                seed = self.seed + self.matches
                self.matches += 1
        try:
            game = TableGame(rules, self.make_opponent, self.agent_name, seed=seed)
        except ValueError as e:
            raise Rejected(422, str(e)) from None
        return self._add(game)

    def load_position(self, body: Any) -> dict[str, Any]:
        """``{"name": practice position}`` or ``{"state": STATE, "seat"?: 0|1}`` -> a new session.

        Raises:
            Rejected: 400 another form, 404 an unknown position name, 422 a STATE the
                engine refuses (the engine's message).
        """
        if not isinstance(body, dict) or not (set(body) <= {"name", "state", "seat"}) \
                or ("name" in body) == ("state" in body):
            raise Rejected(400, 'a position is {"name": practice position} or {"state": STATE, "seat"?: 0|1}')
        seat = body.get("seat", 0)
        if not isinstance(seat, int) or isinstance(seat, bool) or seat not in (0, 1):
            raise Rejected(400, f"seat must be 0 or 1, got {seat!r:.100}")
        title = None
        if "name" in body:
            name = body["name"]
            if not isinstance(name, str) or name not in self.positions:
                raise Rejected(404, f"unknown practice position {str(name)[:64]!r}; "
                                    f"positions: {', '.join(self.positions)}")
            state, title = self.positions[name]["state"], self.positions[name]["title"]
        else:
            state = body["state"]
            if not isinstance(state, dict):
                raise Rejected(422, f"a STATE is a JSON object (API.md), got {type(state).__name__}")
        try:
            game = TableGame(self.rules, self.make_opponent, self.agent_name, seat=seat, seed=self.seed,
                             state=state, title=title)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
            raise Rejected(422, str(e) or type(e).__name__) from None
        except RecursionError:
            raise Rejected(422, "the position is nested too deeply") from None
        return self._add(game)

    def answer(self, sid: str, game: TableGame, frames: list[dict[str, Any]]) -> dict[str, Any]:
        """A game answer: ``{"session", "view", "frames"}`` (the view taken under the game's lock)."""
        with game.lock:
            return {"session": sid, "view": game.view(), "frames": frames}


def own_origins(port: int) -> tuple[set[str], set[str]]:
    """``(hosts, origins)``: the ``Host`` headers and the ``Origin`` headers of requests
    that this machine's browser sends to the table on 127.0.0.1:``port``
    (``127.0.0.1:PORT`` and ``localhost:PORT``; at port 80 the bare names too)."""
    hosts = {f"{HOST}:{port}", f"localhost:{port}"}
    if port == 80:
        hosts |= {HOST, "localhost"}
    return hosts, {f"http://{h}" for h in hosts}


def request_refusal(method: str, headers: dict[str, list[str]], server: Any) -> tuple[int, str] | None:
    """``(status, reason)`` for a request the table refuses before it is routed, or ``None``.

    The table is for the person at this machine, so a request must come from its own
    page: ``Host`` is ``127.0.0.1:PORT`` or ``localhost:PORT`` (``PORT`` the port the
    server listens on, ``server[1]``; another name is a DNS-rebinding page whose name
    was pointed at 127.0.0.1), an ``Origin``, when sent, is ``http://127.0.0.1:PORT`` or
    ``http://localhost:PORT`` (another site's page), and every request other than GET
    and HEAD is sent as ``application/json`` (a browser posts ``text/plain`` and forms
    to any site without asking; ``json_content_type_refusal`` of ``rummy serve``).

    Args:
        method: the HTTP method.
        headers: lower-case header names -> their values, in order.
        server: the ASGI scope's ``server``: ``(host, port)`` of the listening socket.

    Returns:
        400 a missing, repeated or foreign ``Host``; 403 a foreign ``Origin``; 415 a body
        that is not declared JSON; ``None`` for a request of the table's own page.
    """
    from .request_body import json_content_type_refusal

    if not server or len(server) < 2 or not isinstance(server[1], int):
        return 400, "the table answers requests on its TCP port only"
    port = server[1]
    hosts, origins = own_origins(port)
    shown = f"{HOST}:{port} or localhost:{port}"
    host = headers.get("host", [])
    if len(host) != 1 or host[0].lower() not in hosts:
        got = "none" if not host else repr(", ".join(host)[:100])
        return 400, (f"Host must be {shown} (this table serves this machine's browser only), got {got}")
    origin = headers.get("origin", [])
    if origin and (len(origin) != 1 or origin[0].lower() not in origins):
        return 403, (f"requests from another site's page are refused: Origin must be http://{HOST}:{port} or "
                     f"http://localhost:{port}, got {', '.join(origin)[:100]!r}")
    if method not in ("GET", "HEAD"):
        ctype = headers.get("content-type", [])
        why = json_content_type_refusal(ctype[0] if len(ctype) == 1 else None)
        if why is not None:
            return 415, f"{why}; every {method} of this API is sent as JSON"
    return None


class OwnPageOnly:
    """ASGI middleware: answers a request ``request_refusal`` refuses with its status and
    ``{"detail": reason}``, before any route sees it; passes every other one to ``app``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            headers: dict[str, list[str]] = {}
            for k, v in scope.get("headers", ()):
                headers.setdefault(k.decode("latin-1").lower(), []).append(v.decode("latin-1"))
            refused = request_refusal(scope.get("method", "GET"), headers, scope.get("server"))
            if refused is not None:
                status, reason = refused
                await JSONResponse({"detail": reason}, status_code=status)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(table: WebTable) -> Any:
    """The FastAPI app of ``table``: the page at ``/``, its files at ``/static``, the API at ``/api``.

    Every request passes ``request_refusal`` first (``OwnPageOnly``); a body is read
    only up to ``MAX_BODY_BYTES`` (``rummy_env.frontends.serve.read_json_body``: 413
    above it, 415 if not JSON). Games are played in worker threads (starlette's
    ``run_in_threadpool``): the computer's turn, a new game's first-use export of a
    shipped policy, a position's checks; so the event loop stays free and
    ``/api/config`` (answered on it) and other players' requests do not wait for them.

    Raises:
        ValueError: fastapi is not installed (the message says what to install).
    """
    if _FASTAPI_MISSING is not None:
        raise ValueError(f"rummy web needs fastapi and uvicorn (pip install 'rummy-env[web]'): {_FASTAPI_MISSING}")
    from starlette.concurrency import run_in_threadpool

    from .request_body import BodyRefused, read_json_body

    app = FastAPI(title="rummy web table", description="play Straight Rummy against the computer")
    app.state.table = table
    app.add_middleware(OwnPageOnly)
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")

    @app.exception_handler(Rejected)
    async def rejected(request: Request, e: Rejected) -> JSONResponse:  # every refusal: its status, the reason
        return JSONResponse({"detail": str(e)}, status_code=e.status)

    async def body_of(request: Request) -> Any:
        try:
            raw = await read_json_body(request, MAX_BODY_BYTES)
        except BodyRefused as e:
            raise Rejected(e.status, str(e)) from None
        if not raw:
            return None
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise Rejected(400, f"the body is not JSON: {e}") from None
        except (ValueError, RecursionError) as e:
            raise Rejected(400, f"the body is not usable JSON: {str(e)[:200]}") from None

    async def in_thread(work: Callable[[], dict[str, Any]]) -> JSONResponse:
        """``work()`` (a game's engine and opponent work) run in a worker thread, answered as JSON."""
        return await run_in_threadpool(lambda: JSONResponse(work()))

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @app.get("/api/config")
    async def config() -> JSONResponse:  # on the event loop: it reads no game, so it never waits for one
        return JSONResponse(table.config())

    @app.post("/api/new")
    async def new(request: Request) -> JSONResponse:
        body = await body_of(request)
        return await in_thread(lambda: table.new_match(body))

    @app.post("/api/position")
    async def position(request: Request) -> JSONResponse:
        body = await body_of(request)
        return await in_thread(lambda: table.load_position(body))

    @app.get("/api/game/{sid}")
    async def get_game(sid: str) -> JSONResponse:
        return await in_thread(lambda: table.answer(sid, table.game(sid), []))

    @app.post("/api/game/{sid}/move")
    async def move(sid: str, request: Request) -> JSONResponse:
        g = table.game(sid)
        body = await body_of(request)
        return await in_thread(lambda: table.answer(sid, g, g.move(body)))

    @app.post("/api/game/{sid}/next")
    async def next_hand(sid: str) -> JSONResponse:
        g = table.game(sid)
        return await in_thread(lambda: table.answer(sid, g, g.next_hand()))

    return app


def make_server(table: WebTable, port: int = DEFAULT_PORT, log_level: str = "info") -> Any:
    """A ``uvicorn.Server`` (not started) for ``table`` on 127.0.0.1:``port`` (``port`` 0
    lets the OS choose; read it from ``server.servers[0].sockets`` once ``server.started``).

    Raises:
        ValueError: a bad port.
    """
    try:
        import uvicorn
    except ImportError as e:
        raise ValueError(f"rummy web needs fastapi and uvicorn (pip install 'rummy-env[web]'): {e}") from None

    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise ValueError(f"port must be an int in 0..65535, got {port!r}")
    config = uvicorn.Config(create_app(table), host=HOST, port=port, log_level=log_level, workers=1,
                            access_log=log_level in ("info", "debug", "trace"))
    return uvicorn.Server(config)


# ---------------------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``rummy web`` (``--port``, ``--agent``, ``--rules``, ``--seed``,
    ``--allow-seed``, ``--cache``, ``--log-level``) on ``parser``."""
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="P",
                        help=f"TCP port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument("--agent", default=DEFAULT_AGENT, metavar="NAME",
                        help=f"the opponent: '{DEFAULT_AGENT}' (default: the shipped policy, exported to ONNX on "
                             "first use; needs torch and onnx once), or a make_agent name: heuristic, heuristic:cutting (the "
                             "strongest scripted player), heuristic:OPTIONS, greedy, random, pretrained, search, "
                             "search:OPTIONS, onnx:DIR, ppo:PATH; at each table the default is the policy "
                             "shipped for it (classic, rum500, jokers), heuristic where none is shipped")
    parser.add_argument("--rules", default="classic", metavar="RULES",
                        help="the rules of a new match: a preset name (classic, turnover, deadwood, stalemate, "
                             "practice, rum500, ...) or a JSON object such as '{\"preset\": \"classic\", \"hand_size\": 7}'; "
                             "heads-up only")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="seeds the deals and the opponent (match k uses S + k), for practice and replays: "
                             "whoever knows S can work out the computer's hand; default: a random seed per match")
    parser.add_argument("--allow-seed", action="store_true",
                        help="practice: let a client choose a match's seed (POST /api/new {\"seed\": N}); without "
                             "it (and without --seed) such a request is refused, as the seed tells the computer's "
                             "hand and the order of the stock")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help=f"where the exported policy is kept (default {default_cache_dir()})")
    parser.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])


def main(args: argparse.Namespace) -> int:
    """Run ``rummy web`` until interrupted; returns 0.

    The port is checked and bound before the opponent is built, so a bad or busy port is
    reported at once, not after a first-use export of the shipped policy.

    Raises:
        ValueError: bad rules, seed, agent, port (out of range or in use) or cache
            folder (the CLI prints them).
    """
    import socket

    rules: Any = args.rules
    if isinstance(rules, str) and rules.lstrip().startswith("{"):
        try:
            rules = json.loads(rules)
        except json.JSONDecodeError as e:
            raise ValueError(f"--rules is not valid JSON: {e}") from None
    if args.seed is not None and not 0 <= args.seed < 2**62:
        raise ValueError(f"--seed must be in 0..2**62-1, got {args.seed}")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in 0..65535, got {args.port}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        try:
            sock.bind((HOST, args.port))
        except OSError as e:
            raise ValueError(f"cannot listen on {HOST}:{args.port} ({e.strerror or e}); choose another --port") from None
        make_opponent, agent_name = opponent_factory(args.agent, args.cache)
        table = WebTable(make_opponent, agent_name, rules=rules, seed=args.seed,
                         allow_seed=True if getattr(args, "allow_seed", False) else None)
        server = make_server(table, sock.getsockname()[1], log_level=args.log_level)
    except BaseException:
        sock.close()
        raise
    port = sock.getsockname()[1]
    print(f"rummy web: the practice table is on http://{HOST}:{port}/ (opponent: {table.table_agent}); "
          "Ctrl-C stops it", file=sys.stderr, flush=True)
    if table.agent_note:
        print(f"rummy web: {table.agent_note}", file=sys.stderr, flush=True)
    if table.allow_seed:
        print("rummy web: a practice table: deals are reproducible from a seed (--seed or --allow-seed), so "
              "whoever knows the seed knows the computer's hand", file=sys.stderr, flush=True)
    server.run(sockets=[sock])
    return 0
