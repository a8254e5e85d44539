"""README.md is one page for a newcomer, and its results table is generated, not typed.

The block between ``<!-- results -->`` and ``<!-- /results -->`` in README.md and in
docs/results.md is rendered from the shipped policies' ``evaluation.json`` files
(``agents/pretrained/**/evaluation.json``); the test fails when a page and the files
differ. To rewrite the blocks after an evaluation changed:

    python tests/test_readme.py
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RESULT_PAGES = [README, ROOT / "docs" / "results.md"]  # the pages that hold the generated block
PRETRAINED = ROOT / "agents" / "pretrained"
BEGIN, END = "<!-- results -->", "<!-- /results -->"
MAX_LINES, MAX_LINE_CHARS = 120, 200
# The two commands stay one line each: .ci/run holds the test command's line verbatim and
# tests/test_docs_examples.py reads each block as one line (readme_command). The only lines
# allowed past MAX_LINE_CHARS are these blocks' commands.
LONG_LINE_BLOCKS = ("<!-- command: main -->", "<!-- command: tests -->")

HEADER = ("| policy | table | opponent | seed | matches | match win rate | points per hand | hand win rate |\n"
          "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n")


def evaluation_files() -> list[Path]:
    """The shipped policies' evaluations: the classic policy's first, then one per sub-folder by name."""
    return sorted(PRETRAINED.glob("**/evaluation.json"), key=lambda p: (len(p.parts), p.parts))


def _rate(p: float, ci: list[float]) -> str:
    return f"{100 * p:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _points(p: float, ci: list[float]) -> str:
    return f"{p:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}]"


def render_results(files: list[Path] | None = None) -> str:
    """The results table (header and one row per policy and opponent), as the README holds it."""
    rows = []
    for path in evaluation_files() if files is None else files:
        ev = json.loads(path.read_text(encoding="utf-8"))
        for opponent, r in ev["results"].items():
            seed = ev.get("seeds", {}).get(opponent, ev.get("seed"))
            rows.append(f"| `{ev['agent']}` | {ev['rules']} | {opponent} | {seed} | {r['matches']} | "
                        f"{_rate(r['match_win_rate'], r['match_win_ci'])} | "
                        f"{_points(r['points_per_hand'], r['points_ci'])} | "
                        f"{_rate(r['hand_win_rate'], r['hand_win_ci'])} |\n")
    return HEADER + "".join(rows)


def results_block(text: str) -> str:
    """The text between the README's results markers (each on a line of its own)."""
    m = re.search(rf"^{re.escape(BEGIN)}\n(.*?)^{re.escape(END)}$", text, re.S | re.M)
    assert m, f"README.md has no '{BEGIN}' ... '{END}' block"
    return m.group(1)


def rewrite(text: str) -> str:
    """``text`` with its results block replaced by the rendered table."""
    old = results_block(text)
    return text.replace(f"{BEGIN}\n{old}{END}", f"{BEGIN}\n{render_results()}{END}", 1)


# ---------------------------------------------------------------- the tests

def test_results_block_is_the_shipped_evaluations():
    for page in RESULT_PAGES:
        text = page.read_text(encoding="utf-8")
        assert results_block(text) == render_results(), f"{page.name}'s results are stale: run python tests/test_readme.py"


def test_every_shipped_policy_and_opponent_has_a_row():
    table = render_results()
    files = evaluation_files()
    assert [f.parent.name for f in files][:1] == ["pretrained"] and len(files) >= 3
    for f in files:
        ev = json.loads(f.read_text(encoding="utf-8"))
        for opponent, r in ev["results"].items():
            # the points interval holds the estimate, and the row names it
            assert r["points_ci"][0] <= r["points_per_hand"] <= r["points_ci"][1]
            assert f"| `{ev['agent']}` | {ev['rules']} | {opponent} |" in table


def test_the_renderer_follows_the_json(tmp_path):
    ev = {"agent": "pretrained:x", "rules": "x", "seed": 7, "results": {"greedy": {
        "matches": 10, "match_win_rate": 0.6, "match_win_ci": [0.31, 0.83], "points_per_hand": -1.234,
        "points_ci": [-2.5, 0.004], "hand_win_rate": 0.5, "hand_win_ci": [0.25, 0.75]}}}
    f = tmp_path / "evaluation.json"
    f.write_text(json.dumps(ev), encoding="utf-8")
    assert render_results([f]) == HEADER + ("| `pretrained:x` | x | greedy | 7 | 10 | 60.0% [31.0, 83.0] | "
                                            "-1.23 [-2.50, +0.00] | 50.0% [25.0, 75.0] |\n")
    text = f"intro\n{BEGIN}\nold\n{END}\nend\n"
    assert results_block(text) == "old\n"


def test_readme_is_one_short_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES - 1})"
    # a named command block: its marker, the fence, then the command's one line
    commands = {i + 3 for i, ln in enumerate(lines) if ln in LONG_LINE_BLOCKS}
    assert len(commands) == len(LONG_LINE_BLOCKS)
    long = [(i, len(ln)) for i, ln in enumerate(lines, 1) if len(ln) > MAX_LINE_CHARS and i not in commands]
    assert not long, f"README.md lines over {MAX_LINE_CHARS} characters (line, length): {long}"


if __name__ == "__main__":
    for page in RESULT_PAGES:
        page.write_text(rewrite(page.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"{page.relative_to(ROOT)}: results block rewritten from {len(evaluation_files())} evaluation.json files",
              file=sys.stderr)
