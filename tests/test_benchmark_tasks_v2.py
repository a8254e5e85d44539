"""The second task versions (classic-2p-v2, rum500-2p-v2) and the easy rung (short-2p-v1):
their budgets and anchors, ``rummy benchmark list`` and ``eval --quick``, and rows of one
version refused, by name, as another's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rummy_env.benchmark import protocol
from rummy_env.benchmark.report import load_inputs
from rummy_env.benchmark.schema import validate_row
from rummy_env.benchmark.tasks import FINGERPRINTS, LADDER, TASKS, get_task
from rummy_env.cli import main as rummy
from rummy_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]
V1_ROW = ROOT / "benchmark" / "rows" / "classic-2p-v1" / "anchor-greedy.json"


def test_new_tasks_budgets_anchors_and_tables():
    c1, c2 = get_task("classic-2p-v1"), get_task("classic-2p-v2")
    assert c2.budgets == {"1M": 1_000_000, "10M": 10_000_000, "30M": 30_000_000} and c2.budget() == 10_000_000
    assert c2.rules == c1.rules and c2.seeds() == c1.seeds()  # the same table and match seeds as v1
    assert LADDER == ("random", "greedy:eps=0.75", "greedy:eps=0.5", "greedy:eps=0.25", "greedy", "heuristic",
                      "search:samples=16")
    r2 = get_task("rum500-2p-v2")
    assert r2.rules == get_task("rum500-2p-v1").rules and r2.budgets == c2.budgets and r2.anchors == LADDER
    s = get_task("short-2p-v1")
    assert s.make_rules() == Rules.preset("classic", hand_size=7, target=50) and s.players == 2
    assert s.budgets == {"250k": 250_000, "1M": 1_000_000, "3M": 3_000_000} and s.reference_budget == "1M"
    assert s.anchors == LADDER and s.match_seeds == 100 and not set(s.seeds()) & set(c2.seeds())
    for tid in ("classic-2p-v2", "short-2p-v1", "rum500-2p-v2"):
        assert TASKS[tid].fingerprint() == FINGERPRINTS[tid]
    assert {t: FINGERPRINTS[t] for t in ("classic-2p-v1", "rum500-2p-v1", "turnover-4p-v1")} == {
        "classic-2p-v1": "43ff279b4ebc19e9", "rum500-2p-v1": "8aa9cf98177b9ff7", "turnover-4p-v1": "7a75e4a889993102"}


def test_list_shows_the_new_tasks_budgets_and_anchors(capsys):
    assert rummy(["benchmark", "list"]) == 0
    out = capsys.readouterr().out
    for needle in ("classic-2p-v2", "short-2p-v1", "rum500-2p-v2", "10M=10,000,000", "30M=30,000,000",
                   "greedy:eps=0.75", "hand_size 7", "(play"):
        assert needle in out, needle
    assert rummy(["benchmark", "list", "--json"]) == 0
    data = {d["id"]: d for d in json.loads(capsys.readouterr().out)}
    assert data["classic-2p-v2"]["anchor_play"]["anchors"]["greedy:eps=0.5"]["version"] == 1
    assert "anchor_play" not in data["classic-2p-v1"]


@pytest.fixture(scope="module")
def quick_row(tmp_path_factory):
    out = tmp_path_factory.mktemp("quick")
    assert rummy(["benchmark", "eval", "--task", "short-2p-v1", "--agent", "greedy:eps=0.25", "--quick",
                  "--match-seeds", "1", "--workers", "1", "--quiet", "--out", str(out)]) == 0
    return out / "row.json"


def test_quick_eval_plays_every_anchor_but_the_search(quick_row):
    row = protocol.load_row(quick_row)
    assert list(row["results"]) == [a for a in LADDER if not a.startswith("search")]
    assert not row["protocol_complete"] and "anchors not played: search:samples=16" in row["deviations"]
    assert "--quick" not in row["command"] and "--anchors random greedy:eps=0.75" in row["command"]
    assert row["task"]["definition"]["anchor_play"] == TASKS["short-2p-v1"].anchor_play  # the anchors' play, pinned
    assert load_inputs([str(quick_row)])[0][0]["task"]["id"] == "short-2p-v1"


def test_quick_and_anchors_together_are_refused(tmp_path, capsys):
    assert rummy(["benchmark", "eval", "--task", "classic-2p-v2", "--agent", "greedy", "--quick", "--anchors",
                  "random", "--out", str(tmp_path / "X")]) == 2
    assert "give --quick or --anchors, not both" in capsys.readouterr().err
    assert not (tmp_path / "X").exists()


def _relabel(row: dict, tid: str, fingerprint: bool = False, version: bool = False) -> dict:
    row = json.loads(json.dumps(row))
    t = TASKS[tid]
    row["task"]["id"] = tid
    if fingerprint:
        row["task"]["fingerprint"] = t.fingerprint()
    if version:
        row["task"]["version"] = t.version
    return row


@pytest.mark.parametrize("edit, needle", [
    (dict(), "task.fingerprint: '43ff279b4ebc19e9' is not task classic-2p-v2's fingerprint '700a414081de724e': it is "
             "task classic-2p-v1's fingerprint, and a result of classic-2p-v1 is not one of classic-2p-v2"),
    (dict(fingerprint=True), "task.version: 1, but task classic-2p-v2 is version 2"),
    (dict(fingerprint=True, version=True), "task.definition['anchor_play']: differs from task classic-2p-v2's "
     "published definition: it is task classic-2p-v1's definition, and a result of classic-2p-v1 is not one of "
     "classic-2p-v2"),
])
def test_a_v1_row_sent_as_v2_is_refused_by_name(edit, needle):
    v1 = json.loads(V1_ROW.read_text())
    validate_row(v1)
    with pytest.raises(ValueError) as e:
        validate_row(_relabel(v1, "classic-2p-v2", **edit))
    assert needle in str(e.value)


def test_a_v2_row_sent_as_v1_is_refused_by_name(quick_row, tmp_path):
    row = json.loads(quick_row.read_text())
    with pytest.raises(ValueError, match="it is task short-2p-v1's fingerprint, and a result of short-2p-v1 is not "
                                         "one of classic-2p-v1"):
        validate_row(_relabel(row, "classic-2p-v1"))
    p = tmp_path / "row.json"
    p.write_text(json.dumps(_relabel(row, "classic-2p-v2", fingerprint=True, version=True)))
    with pytest.raises(ValueError, match=r"(?s)1 input refused.*it is task short-2p-v1's definition"):
        load_inputs([str(p)])
