"""What a benchmark file must satisfy before the leaderboard reads it.

Rows (``ROW_FORMAT``, written by ``rummy benchmark eval``, ``train`` and ``anchors``)
and best-response files (``BR_FORMAT``, by ``rummy benchmark best-response``) arrive by
pull request, so each is checked in two steps before any of its numbers is used:

1. **Its shape** (the pydantic models below): every field the report reads is present
   with its JSON type; numbers are finite (no ``NaN`` or ``Infinity`` anywhere in the
   file), counts are integers and never booleans; the text the page shows (agent name
   and spec, algorithm, library, deviations, command) is one line without control
   characters.
2. **Its consistency** (``validate_row`` / ``validate_best_response``): the task is
   one this version knows, with its published fingerprint and, for a row, its exact
   definition (a row of another version of a task is refused, not reported as the
   published one); the row's evaluation is the task's (its rotations, at most its match
   seeds, matches = seeds x rotations); only the task's anchors, all of them (but the
   agent itself, for an anchor's row) when the row says it is the protocol's; and per
   anchor the numbers agree with each other: ``matches`` is the evaluation's count, the
   win rate is a whole number of wins (a split match counts ``1/k`` for each of its ``k``
   winners), each win interval is the 95% Wilson interval of those wins, each interval
   holds its estimate. The rating is re-fitted by the report
   (``protocol.check_rating``), which needs the task's anchor crosstable.

Every error is a ``ValueError`` whose message names the field as a path
(``results['greedy'].match_win_ci``); the loaders add the file.
"""
from __future__ import annotations

import json
import math
import os
import unicodedata
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from .tasks import PROTOCOL, get_task

ROW_FORMAT = "rummy-benchmark-row/1"
"""The row schema's name and version (docs/benchmark.md, "The row schema")."""

BR_FORMAT = "rummy-benchmark-best-response/1"
"""The best-response file's name and version (``best_response.py``)."""

WILSON_TOL = 1e-9
"""How far a stored Wilson bound may be from the one recomputed from the counts (the
same float arithmetic gives the same digits; this only absorbs a last-bit difference)."""


# ---------------------------------------------------------------------------- shapes

def _one_line(s: str) -> str:
    bad = next((c for c in s if unicodedata.category(c) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        raise ValueError(f"must be one line of text without control characters (found U+{ord(bad):04X})")
    return s


def _not_blank(s: str) -> str:
    if not s.strip():
        raise ValueError("must not be empty")
    return s


Text = Annotated[StrictStr, AfterValidator(_one_line)]
Name = Annotated[StrictStr, AfterValidator(_one_line), AfterValidator(_not_blank)]
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]
NonNeg = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
Rate = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0, le=1)]
Count = Annotated[StrictInt, Field(ge=0)]
Positive = Annotated[StrictInt, Field(ge=1)]


def _ordered(v: list[float]) -> list[float]:
    if v[0] > v[1]:
        raise ValueError(f"must be [low, high] with low <= high, got {v}")
    return v


Interval = Annotated[list[Finite], Field(min_length=2, max_length=2), AfterValidator(_ordered)]


class _Model(BaseModel):
    # strict: no "0.5" for 0.5 and no true for 1; other keys are kept, not checked
    model_config = ConfigDict(strict=True, extra="allow")


class Result(_Model):
    """One anchor's numbers (``eval.tournament.evaluate`` in match mode)."""
    matches: Positive
    match_win_rate: Rate
    match_win_ci: Interval
    points_per_hand: Finite
    points_ci: Interval
    hands: Positive
    hand_win_rate: Rate
    hand_win_ci: Interval


RESULT_KEYS = tuple(Result.model_fields)
"""The numbers a row keeps per anchor, in the order they matter."""


class TaskRef(_Model):
    id: Text
    version: StrictInt
    fingerprint: Text
    protocol: Text
    definition: dict[str, Any]


class Engine(_Model):
    package: Text
    version: Text
    env: Text


class Agent(_Model):
    spec: Name
    name: Name


class Algorithm(_Model):
    name: Optional[Name] = None
    library: Optional[Text] = None
    library_version: Optional[Text] = None


class CurvePoint(_Model):
    timesteps: Count
    wall_time_s: NonNeg
    match_win_rate: Rate
    points_per_hand: Finite
    match_win_ci: Optional[Interval] = None


class Training(_Model):
    budget_name: Optional[Text] = None
    budget: Positive
    timesteps: Count
    seed: Optional[Count]
    wall_time_s: Optional[NonNeg]
    curve: list[CurvePoint]
    extra_env_steps: Count = 0
    command: Optional[Text] = None


class Evaluation(_Model):
    match_seeds: Positive
    rotations: Positive
    matches_per_anchor: Positive
    wall_time_s: NonNeg
    anchor_crosstable: StrictBool


class Hardware(_Model):
    cpu: Optional[StrictStr] = None
    cores: Optional[Positive] = None
    workers: Positive
    os: Optional[StrictStr] = None
    python: Optional[StrictStr] = None
    torch: Optional[StrictStr] = None


class Rating(_Model):
    kind: Literal["elo"]
    zero: Text
    value: Finite
    anchors: dict[Text, Finite]


class Row(_Model):
    """A benchmark row (``ROW_FORMAT``)."""
    format: Literal["rummy-benchmark-row/1"]
    task: TaskRef
    protocol_complete: StrictBool
    deviations: list[Text]
    engine: Engine
    agent: Agent
    algorithm: Optional[Algorithm]
    training: Optional[Training]
    evaluation: Evaluation
    hardware: Hardware
    results: Annotated[dict[Text, Result], Field(min_length=1)]
    rating: Rating
    command: Text
    created: Text


class BestResponse(_Model):
    """A best-response file (``BR_FORMAT``)."""
    format: Literal["rummy-benchmark-best-response/1"]
    task: Text
    fingerprint: Text
    agent: Name
    agent_name: Name
    budget: Positive
    seed: Count
    procedure: Text
    timesteps: Count
    best_response: Text
    match_seeds: Positive
    protocol_complete: StrictBool
    result: Result
    train_wall_s: NonNeg
    eval_wall_s: NonNeg
    engine: Engine
    hardware: Hardware
    command: Text
    created: Text


# ---------------------------------------------------------------------------- messages

_KEYED = {"results", "anchors", "definition", "config"}  # the next part of a path is a key, not a field


def _path(loc: tuple) -> str:
    out, prev = "", None
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part == "[key]":
            out += " (a key)"
        elif prev in _KEYED or not str(part).isidentifier():
            out += f"[{part!r}]"
        else:
            out += f".{part}" if out else str(part)
        prev = part
    return out


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    msg = err["msg"].removeprefix("Value error, ")
    where = _path(err["loc"])
    if err["type"] == "missing":
        return f"{where}: missing"
    got = repr(err.get("input"))
    got = got if len(got) <= 60 else got[:57] + "..."
    return f"{where}: {msg}, got {got}"


def _non_finite(data: Any) -> str | None:
    """The path of the first NaN or infinite float anywhere in ``data`` (json reads
    ``NaN`` and ``Infinity``, which JSON does not allow), or None."""
    stack: list[tuple[tuple, Any, Any]] = [((), data, None)]
    while stack:
        loc, x, parent = stack.pop()
        if isinstance(x, float) and not math.isfinite(x):
            return _path(loc)
        if isinstance(x, dict):
            stack.extend((loc + (k,), v, x) for k, v in reversed(list(x.items())))
        elif isinstance(x, list):
            stack.extend((loc + (i,), v, x) for i, v in reversed(list(enumerate(x))))
    return None


def _shape(model: type[_Model], data: Any, what: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected a JSON object, got {type(data).__name__}")
    bad = _non_finite(data)
    if bad is not None:
        raise ValueError(f"{what}: {bad}: must be a finite number (NaN and Infinity are not JSON)")
    try:
        model.model_validate(data)
    except ValidationError as e:
        raise ValueError(f"{what}: {_first_error(e)}") from None


def _need(cond: bool, what: str, msg: str) -> None:
    if not cond:
        raise ValueError(f"{what}: {msg}")


# ---------------------------------------------------------------------------- consistency

def _task(task_id: str, field: str, what: str):
    try:
        return get_task(task_id)
    except ValueError as e:
        raise ValueError(f"{what}: {field}: {e}") from None


def _other_task(t, fingerprint: str | None = None, definition: Any = None) -> str:
    """``" (it is task X's ...)"`` when ``fingerprint`` or ``definition`` is another
    published task's (a row of one version sent as another), else ``""``."""
    from .tasks import TASKS

    for o in TASKS.values():
        if o.id == t.id:
            continue
        if fingerprint is not None and fingerprint == o.fingerprint():
            return f": it is task {o.id}'s fingerprint, and a result of {o.id} is not one of {t.id}"
        if definition is not None and definition == json.loads(json.dumps(o.to_json())):
            return f": it is task {o.id}'s definition, and a result of {o.id} is not one of {t.id}"
    return ""


def _check_fingerprint(t, got: str, field: str, what: str) -> None:
    if got == t.fingerprint():
        return
    other = _other_task(t, fingerprint=got)
    raise ValueError(f"{what}: {field}: {got!r} is not task {t.id}'s fingerprint {t.fingerprint()!r}"
                     + (other or " (made for another version of the task)"))


def _check_result(r: dict[str, Any], where: str, matches: int, players: int, what: str) -> None:
    """Cross-check one anchor's numbers (module docstring, step 2)."""
    m = r["matches"]
    _need(m == matches, what, f"{where}.matches: {m}, but the evaluation played {matches} matches per anchor")
    split = math.lcm(*range(1, players + 1))  # a match split k ways counts 1/k, k <= players
    wins = r["match_win_rate"] * m
    _need(abs(wins * split - round(wins * split)) < 1e-6, what,
          f"{where}.match_win_rate: {r['match_win_rate']!r} of {m} matches is {wins:g} wins, not a whole number "
          f"of matches (a split counts 1/k for each of its k winners)")
    _check_wilson(r["match_win_rate"], r["match_win_ci"], round(wins * split) / split, m,
                  f"{where}.match_win_ci", "match_win_rate", "matches", what)
    hands = r["hands"]
    _need(hands >= m, what, f"{where}.hands: {hands} hands in {m} matches (every match has at least one hand)")
    hw = r["hand_win_rate"] * hands
    _need(abs(hw - round(hw)) < 1e-6, what,
          f"{where}.hand_win_rate: {r['hand_win_rate']!r} of {hands} hands is {hw:g} wins, not a whole number")
    _check_wilson(r["hand_win_rate"], r["hand_win_ci"], round(hw), hands, f"{where}.hand_win_ci", "hand_win_rate",
                  "hands", what)
    lo, hi = r["points_ci"]
    _need(lo <= r["points_per_hand"] <= hi, what,
          f"{where}.points_ci: [{lo:g}, {hi:g}] does not hold points_per_hand {r['points_per_hand']:g}")


def _check_wilson(rate: float, ci: list[float], wins: float, n: int, field: str, rate_name: str, n_name: str,
                  what: str) -> None:
    from rummy_env.eval.tournament import wilson_interval

    lo, hi = ci
    _need(lo <= rate <= hi, what, f"{field}: [{lo:g}, {hi:g}] does not hold {rate_name} {rate:g}")
    wlo, whi = wilson_interval(wins, n)
    _need(abs(lo - wlo) <= WILSON_TOL and abs(hi - whi) <= WILSON_TOL, what,
          f"{field}: [{lo!r}, {hi!r}] is not the 95% Wilson interval of {wins:g} wins in {n} {n_name} "
          f"([{wlo!r}, {whi!r}])")


def _first_difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    return next(k for k in sorted(set(a) | set(b), key=str) if a.get(k, ...) != b.get(k, ...))


def validate_row(row: Any) -> dict[str, Any]:
    """Check ``row`` (a row as JSON reads it) and return it unchanged.

    Checks its shape and its consistency with its task and with itself (the module
    docstring lists both), so that a row that passes can be rendered, aggregated and
    plotted; the rating is checked apart (``protocol.check_rating``).

    Raises:
        ValueError: ``not a benchmark row: FIELD: what is wrong`` for the first bad field.
    """
    what = "not a benchmark row"
    if isinstance(row, dict) and row.get("format") != ROW_FORMAT:
        raise ValueError(f"{what}: format must be {ROW_FORMAT!r}, got {row.get('format')!r}")
    _shape(Row, row, what)
    ref = row["task"]
    t = _task(ref["id"], "task.id", what)
    _check_fingerprint(t, ref["fingerprint"], "task.fingerprint", what)
    _need(ref["version"] == t.version, what, f"task.version: {ref['version']}, but task {t.id} is version {t.version}")
    _need(ref["protocol"] == PROTOCOL, what, f"task.protocol: {ref['protocol']!r}, not {PROTOCOL!r}")
    published = json.loads(json.dumps(t.to_json()))
    try:
        given = json.loads(json.dumps(ref["definition"], allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        raise ValueError(f"{what}: task.definition: not JSON") from None
    if given != published:
        k = _first_difference(given, published)
        other = _other_task(t, definition=given)
        raise ValueError(f"{what}: task.definition[{k!r}]: differs from task {t.id}'s published definition"
                         + (other or " (made for another version of the task)"))
    complete = row["protocol_complete"]
    _need(complete == (not row["deviations"]), what,
          "protocol_complete must be true exactly when there are no deviations")
    ev = row["evaluation"]
    _need(ev["rotations"] == t.rotations, what,
          f"evaluation.rotations: {ev['rotations']}, but task {t.id} plays every match seed in {t.rotations}")
    _need(ev["match_seeds"] <= t.match_seeds, what,
          f"evaluation.match_seeds: {ev['match_seeds']}, but task {t.id} has {t.match_seeds}")
    _need(not complete or ev["match_seeds"] == t.match_seeds, what,
          f"evaluation.match_seeds: {ev['match_seeds']} of task {t.id}'s {t.match_seeds} in a row that says it is "
          f"the protocol's")
    n = ev["match_seeds"] * ev["rotations"]
    _need(ev["matches_per_anchor"] == n, what,
          f"evaluation.matches_per_anchor: {ev['matches_per_anchor']}, but {ev['match_seeds']} match seeds x "
          f"{ev['rotations']} rotations = {n}")
    for a in row["results"]:
        _need(a in t.anchors, what, f"results[{a!r}]: not an anchor of task {t.id} ({', '.join(t.anchors)})")
    missing = [a for a in t.anchors if a not in row["results"] and a != row["agent"]["spec"]]
    _need(not complete or not missing, what,
          f"results: anchors not played ({', '.join(missing)}) in a row that says it is the protocol's")
    for a, r in row["results"].items():
        _check_result(r, f"results[{a!r}]", n, t.players, what)
    tr = row["training"]
    if tr is not None:
        name = tr.get("budget_name")
        _need(name not in t.budgets or t.budgets[name] == tr["budget"], what,
              f"training.budget: {tr['budget']:,}, but task {t.id}'s budget {name!r} is {t.budgets.get(name, 0):,}")
        _need(not complete or tr["budget"] in t.budgets.values(), what,
              f"training.budget: {tr['budget']:,} learner steps is not a budget of task {t.id} "
              f"({', '.join(f'{k} = {v:,}' for k, v in t.budgets.items())}) in a row that says it is the protocol's")
        _need(not complete or tr["timesteps"] >= tr["budget"], what,
              f"training.timesteps: {tr['timesteps']:,}, fewer than the budget's {tr['budget']:,} in a row that "
              f"says it is the protocol's")
    return row


def validate_best_response(data: Any) -> dict[str, Any]:
    """Check a best-response file (``BR_FORMAT``) and return it unchanged: its shape, its
    task and fingerprint, and its result's numbers (as a row's, over ``match_seeds`` x
    the task's rotations matches; ``protocol_complete`` exactly when every match seed
    was played).

    Raises:
        ValueError: ``not a best-response file: FIELD: what is wrong`` for the first bad field.
    """
    what = "not a best-response file"
    _shape(BestResponse, data, what)
    t = _task(data["task"], "task", what)
    _check_fingerprint(t, data["fingerprint"], "fingerprint", what)
    n = data["match_seeds"]
    _need(n <= t.match_seeds, what, f"match_seeds: {n}, but task {t.id} has {t.match_seeds}")
    _need(data["protocol_complete"] == (n == t.match_seeds), what,
          f"protocol_complete must be true exactly when all of task {t.id}'s {t.match_seeds} match seeds were played")
    _check_result(data["result"], "result", n * t.rotations, t.players, what)
    return data


def read_json(path: str | os.PathLike) -> Any:
    """The JSON in the file ``path``.

    Raises:
        ValueError: naming the file: it cannot be read, is not UTF-8, is not JSON, or is
            nested too deeply for a row.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{p} is not UTF-8 text: {e}") from None
    except OSError as e:
        raise ValueError(f"{p} cannot be read: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{p} is not JSON: {e}") from None
    except RecursionError:
        raise ValueError(f"{p} is not a benchmark file: its JSON is nested too deeply") from None
