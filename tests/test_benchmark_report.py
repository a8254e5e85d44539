"""The leaderboard against hostile inputs: rows and best-response files arrive by pull
request, so ``rummy benchmark report`` must render their text as text, refuse a row of
another task version, a copy of a seed, or numbers that do not agree with each other
(naming the file and the field), and never end in a traceback (docs/benchmark.md,
"What a row must satisfy")."""
from __future__ import annotations

import copy
import html.parser
import importlib.util
import json
import math
import re
from pathlib import Path

import pytest

from rummy_env.benchmark import protocol
from rummy_env.benchmark.tasks import TASKS
from rummy_env.cli import main as rummy
from rummy_env.eval import tournament

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "benchmark" / "rows" / "classic-2p-v1"

needs_rliable = pytest.mark.skipif(
    importlib.util.find_spec("rliable") is None or importlib.util.find_spec("arch") is None,
    reason="needs the benchmark extra (rliable, arch): pip install -e '.[benchmark]'")


def _row(name: str) -> dict:
    """A published row (or best response) of classic-2p-v1, as JSON reads it."""
    return json.loads((ROWS / f"{name}.json").read_text())


def _write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return path


def _report(capsys, *inputs, out: Path) -> tuple[int, str]:
    code = rummy(["benchmark", "report", *map(str, inputs), "--out", str(out), "--reps", "50"])
    return code, capsys.readouterr().err


def _refused(capsys, tmp_path, path: Path, needle: str) -> str:
    """Report ``path``; it must be refused in one line naming it and ``needle``, nothing written."""
    out = tmp_path / "lb"
    code, err = _report(capsys, path, out=out)
    assert code == 2, err
    assert "Traceback" not in err
    line = next((ln for ln in err.splitlines() if ln.startswith(str(path))), None)
    assert line is not None, err
    assert needle in line, line
    assert not (out / "leaderboard.md").exists()
    return line


# ---------------------------------------------------------------- hostile text is text

class _Tables(html.parser.HTMLParser):
    """The tables of an HTML page as rows of cell texts, and every tag with its attributes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.tables: list[list[list[str]]] = []
        self.tags: list[tuple[str, dict]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _renderers():
    from markdown_it import MarkdownIt

    out = {"markdown-it (GitHub-style tables)": MarkdownIt("commonmark").enable(["table", "strikethrough"]).render}
    if importlib.util.find_spec("markdown") is not None:  # the docs site's renderer (mkdocs)
        import markdown

        out["Python-Markdown (the docs site)"] = lambda text: markdown.markdown(text, extensions=["tables"])
    return out


H_TAG = "<img src=x onerror=alert(1)>"
H_PIPE = "a | b"
H_MARKS = r"`tick` *em* _u_ ~~s~~ [l](http://x) ![i](y) [r] [ref] \ & &amp; $x$ price $\undefined{x}$"
H_COMMAND = "rummy benchmark eval `rm -rf ~` | tee <b>x</b> --name 'a|b'"
H_ALGO = r"<i>al|go</i> $\undefined$"
H_LIBRARY = "lib|[x](y)"


@needs_rliable
def test_hostile_names_and_commands_render_as_text(tmp_path, capsys):
    rows = tmp_path / "rows"
    r = _row("pretrained")
    r["agent"]["name"], r["command"] = H_TAG, H_COMMAND
    _write(rows / "pretrained.json", r)
    r = _row("heuristic-cutting")
    r["agent"]["name"] = H_MARKS
    _write(rows / "cutting.json", r)
    for s in range(5):
        r = _row(f"ppo-{s}")
        r["algorithm"]["name"], r["algorithm"]["library"] = H_ALGO, H_LIBRARY
        _write(rows / f"ppo-{s}.json", r)
    r = _row("dqn-0")
    r["agent"]["name"] = H_PIPE
    r["protocol_complete"], r["deviations"] = False, ["<script>x</script> | y"]
    _write(rows / "dqn-0.json", r)
    out = tmp_path / "lb"
    code, err = _report(capsys, rows, out=out)
    assert code == 0, err
    page = (out / "leaderboard.md").read_text()
    assert (out / "img" / "leaderboard_classic-2p-v1_iqm.png").is_file()  # mathtext in a label did not break it
    assert (out / "img" / "leaderboard_classic-2p-v1_curves.png").is_file()
    for renderer, render in _renderers().items():
        doc = _Tables()
        doc.feed(render(page))
        # no markup of a row's: the page's own tags only, its images its plots
        assert {t for t, _ in doc.tags} <= {"h1", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td",
                                          "code", "strong", "img", "ol", "li", "pre"}, renderer
        assert all(a.get("src", "").startswith("img/leaderboard_") for t, a in doc.tags if t == "img"), renderer
        assert not any("onerror" in a for _, a in doc.tags), renderer
        # every row of a table has its header's cells (a | or a newline would add some)
        for table in doc.tables:
            assert all(len(row) == len(table[0]) for row in table), (renderer, table)
        cells = [c for table in doc.tables for row in table for c in row]
        for text in (H_TAG, H_PIPE, H_MARKS, H_COMMAND, H_ALGO):
            assert text in cells, (renderer, text)
        assert f"{H_LIBRARY} 2.9.2" in cells, renderer
        assert "smoke: <script>x</script> | y" in cells, renderer


@pytest.mark.parametrize("field, value, needle", [
    ("name", "mine\n| x | y |", "agent.name: must be one line of text without control characters (found U+000A)"),
    ("name", "mine\r", "agent.name: must be one line"),
    ("name", "mine\u2028more", "agent.name: must be one line"),
    ("name", "   ", "agent.name: must not be empty"),
    ("spec", "x\ty", "agent.spec: must be one line"),
])
def test_a_name_that_would_break_the_page_is_refused_by_name(tmp_path, capsys, field, value, needle):
    r = _row("pretrained")
    r["agent"][field] = value
    _refused(capsys, tmp_path, _write(tmp_path / "in" / "row.json", r), needle)


@pytest.mark.parametrize("edit, needle", [
    (lambda r: r.update(command="rummy eval\nrm -rf ~"), "command: must be one line"),
    (lambda r: r.update(protocol_complete=False, deviations=["a\nb"]), "deviations[0]: must be one line"),
    (lambda r: r["algorithm"].update(name="ppo\n| x |"), "algorithm.name: must be one line"),
])
def test_other_text_that_would_break_the_page_is_refused_by_name(tmp_path, capsys, edit, needle):
    r = _row("ppo-0")
    edit(r)
    _refused(capsys, tmp_path, _write(tmp_path / "in" / "row.json", r), needle)


def test_benchmark_eval_refuses_such_names_before_it_plays(tmp_path, capsys):
    for flag in ("--name", "--algorithm", "--library"):
        assert rummy(["benchmark", "eval", "--task", "classic-2p-v1", "--agent", "random", flag, "a\nb",
                      "--out", str(tmp_path / "X")]) == 2
        assert f"{flag} must be one line of text" in capsys.readouterr().err
    assert not (tmp_path / "X").exists()


# ---------------------------------------------------------------- another version, a copy

@pytest.mark.parametrize("edit, needle", [
    (lambda r: r["task"].update(fingerprint="0123456789abcdef"),
     "task.fingerprint: '0123456789abcdef' is not task classic-2p-v1's fingerprint '43ff279b4ebc19e9' (made for "
     "another version of the task)"),
    (lambda r: r["task"]["definition"]["protocol"].update(match_seeds=10),
     "task.definition['protocol']: differs from task classic-2p-v1's published definition"),
    (lambda r: r["task"]["definition"]["rules"].update(target=50),
     "task.definition['rules']: differs from task classic-2p-v1's published definition"),
    (lambda r: r["task"]["definition"].pop("budgets"), "task.definition['budgets']: differs"),
    (lambda r: r["task"].update(version=2), "task.version: 2, but task classic-2p-v1 is version 1"),
    (lambda r: r["task"].update(protocol="duplicate-matches/2"), "task.protocol: 'duplicate-matches/2'"),
    (lambda r: r["task"].update(id="classic-2p-v9"), "task.id: unknown task 'classic-2p-v9' (versions of classic-2p"),
])
def test_a_row_of_another_version_of_the_task_is_refused(tmp_path, capsys, edit, needle):
    r = _row("pretrained")
    edit(r)
    _refused(capsys, tmp_path, _write(tmp_path / "in" / "row.json", r), needle)


def test_copies_of_one_seed_are_refused_not_counted_as_seeds(tmp_path, capsys):
    rows = tmp_path / "rows"
    for k in range(5):
        _write(rows / f"copy-{k}.json", _row("ppo-0"))
    code, err = _report(capsys, rows, out=tmp_path / "lb")
    assert code == 2 and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0] == "rummy benchmark: error: 4 inputs refused, nothing written:"
    for k in range(1, 5):
        assert (f"{rows / f'copy-{k}.json'}: training.seed: ppo at 250,000 steps on classic-2p-v1 with seed 0 is also "
                f"in {rows / 'copy-0.json'} (one file each)") in lines
    assert not (tmp_path / "lb" / "leaderboard.md").exists()


def test_another_seed_relabelled_as_a_seed_already_there_is_refused(tmp_path, capsys):
    rows = tmp_path / "rows"
    _write(rows / "a.json", _row("ppo-0"))
    r = _row("ppo-1")
    r["training"]["seed"] = 0
    _write(rows / "b.json", r)
    code, err = _report(capsys, rows, out=tmp_path / "lb")
    assert code == 2
    assert f"{rows / 'b.json'}: training.seed: ppo at 250,000 steps on classic-2p-v1 with seed 0 is also in" in err


def test_two_rows_of_one_name_and_two_copies_of_a_best_response_are_refused(tmp_path, capsys):
    rows = tmp_path / "rows"
    _write(rows / "a.json", _row("pretrained"))
    _write(rows / "b.json", _row("pretrained"))
    _write(rows / "br-a.json", _row("br-pretrained"))
    _write(rows / "br-b.json", _row("br-pretrained"))
    code, err = _report(capsys, rows, out=tmp_path / "lb")
    assert code == 2
    assert (f"{rows / 'b.json'}: agent.name: 'pretrained (shipped)' on classic-2p-v1 is also the name of the row in "
            f"{rows / 'a.json'}") in err
    assert f"{rows / 'br-b.json'}: agent: the best response to 'pretrained' on classic-2p-v1" in err


@needs_rliable
def test_a_file_given_twice_is_read_once(tmp_path, capsys):
    f = _write(tmp_path / "rows" / "pretrained.json", _row("pretrained"))
    code, err = _report(capsys, f, tmp_path / "rows", out=tmp_path / "lb")
    assert code == 0, err


# ---------------------------------------------------------------- no traceback

DEEP = '{"format": "rummy-benchmark-row/1", "command": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _set(path, value):
    def edit(r):
        *head, last = path
        for k in head:
            r = r[k]
        if value is _DROP:
            del r[last]
        else:
            r[last] = value
    return edit


_DROP = object()


@pytest.mark.parametrize("base, edit, needle", [
    ("pretrained", _set(("results", "greedy", "hand_win_rate"), "0.5"),
     "results['greedy'].hand_win_rate: Input should be a valid number, got '0.5'"),
    ("pretrained", _set(("results", "greedy", "match_win_rate"), "0.5"),
     "results['greedy'].match_win_rate: Input should be a valid number"),
    ("pretrained", _set(("results", "heuristic", "points_ci"), 1.5),
     "results['heuristic'].points_ci: Input should be a valid list, got 1.5"),
    ("pretrained", _set(("results", "heuristic", "match_win_ci"), [0.1]),
     "results['heuristic'].match_win_ci: List should have at least 2 items"),
    ("pretrained", _set(("results", "heuristic", "match_win_ci"), [0.9, 0.1]),
     "results['heuristic'].match_win_ci: must be [low, high] with low <= high"),
    ("pretrained", _set(("hardware",), None), "hardware: Input should be a valid dictionary"),
    ("pretrained", _set(("hardware", "cores"), "2"), "hardware.cores: Input should be a valid integer"),
    ("pretrained", _set(("evaluation",), {}), "evaluation.match_seeds: missing"),
    ("pretrained", _set(("agent", "name"), 5), "agent.name: Input should be a valid string, got 5"),
    ("pretrained", _set(("results", "greedy"), []), "results['greedy']: Input should be a valid dictionary"),
    ("pretrained", _set(("results",), {}), "results: Dictionary should have at least 1 item"),
    ("pretrained", _set(("rating",), None), "rating: Input should be a valid dictionary"),
    ("pretrained", _set(("deviations",), [5]), "deviations[0]: Input should be a valid string"),
    ("pretrained", _set(("task",), "classic-2p-v1"), "task: Input should be a valid dictionary"),
    ("pretrained", _set(("task", "id"), 7), "task.id: Input should be a valid string"),
    ("pretrained", _set(("created",), _DROP), "created: missing"),
    ("ppo-0", _set(("training", "curve"), None), "training.curve: Input should be a valid list"),
    ("ppo-0", _set(("training", "curve", 0, "points_per_hand"), _DROP), "training.curve[0].points_per_hand: missing"),
    ("ppo-0", _set(("training", "seed"), 1.5), "training.seed: Input should be a valid integer"),
    ("ppo-0", _set(("training", "budget"), True), "training.budget: Input should be a valid integer, got True"),
    ("ppo-0", _set(("algorithm", "library"), 3), "algorithm.library: Input should be a valid string"),
    ("br-pretrained", _set(("task",), _DROP), "task: missing"),
    ("br-pretrained", _set(("result",), _DROP), "result: missing"),
    ("br-pretrained", _set(("task",), 5), "task: Input should be a valid string, got 5"),
    ("br-pretrained", _set(("task",), "classic-2p-v9"), "task: unknown task 'classic-2p-v9'"),
    ("br-pretrained", _set(("fingerprint",), "0123456789abcdef"), "fingerprint: '0123456789abcdef' is not task"),
    ("br-pretrained", _set(("result", "match_win_ci"), 0.2), "result.match_win_ci: Input should be a valid list"),
    ("br-pretrained", _set(("train_wall_s",), "long"), "train_wall_s: Input should be a valid number"),
    ("br-pretrained", _set(("agent_name",), None), "agent_name: Input should be a valid string"),
])
def test_malformed_files_are_refused_naming_file_and_field(tmp_path, capsys, base, edit, needle):
    r = _row(base)
    edit(r)
    _refused(capsys, tmp_path, _write(tmp_path / "in" / "x.json", r), needle)


@pytest.mark.parametrize("content, needle", [
    (DEEP, "is not a benchmark file: its JSON is nested too deeply"),
    ("{not json", "is not JSON: Expecting property name"),
    (b"\xff\xfe{}", "is not UTF-8 text"),
    ("[1, 2]", "not a benchmark row: expected a JSON object, got list"),
    ("{}", "not a benchmark row: format must be 'rummy-benchmark-row/1', got None"),
    ('"rummy-benchmark-row/1"', "not a benchmark row: expected a JSON object, got str"),
])
def test_files_that_are_not_rows_are_refused_naming_the_file(tmp_path, capsys, content, needle):
    d = tmp_path / "in"
    d.mkdir()
    f = d / "x.json"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    _refused(capsys, tmp_path, d, needle)  # found in a folder
    _refused(capsys, tmp_path, f, needle)  # given as a file


def test_every_refused_file_gets_its_line(tmp_path, capsys):
    d = tmp_path / "in"
    _write(d / "a.json", "{not json")
    _write(d / "b.json", "[]")
    _write(d / "c.json", _row("pretrained"))  # a good one: listed nowhere, nothing written
    code, err = _report(capsys, d, tmp_path / "nowhere", out=tmp_path / "lb")
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == "rummy benchmark: error: 3 inputs refused, nothing written:"
    assert lines[1] == f"{tmp_path / 'nowhere'}: no such file or folder"
    assert lines[2].startswith(f"{d / 'a.json'} is not JSON") and lines[3].startswith(f"{d / 'b.json'}: not a")
    assert len(lines) == 4 and not (tmp_path / "lb").exists()


def _leaves(x, loc=()):
    """Every path into ``x`` (containers too), not inside the task's definition or the
    training config (each replaced as a whole) and only into the curve's first point."""
    if isinstance(x, dict) and loc[-1:] not in (("definition",), ("config",)):
        for k, v in x.items():
            yield from _leaves(v, loc + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x[:1] if loc[-1:] == ("curve",) else x):
            yield from _leaves(v, loc + (i,))
    if loc:
        yield loc


HOSTILE = (None, "x", True, -1, 1e300, [], {}, float("nan"))


@needs_rliable
@pytest.mark.parametrize("base", ["pretrained", "ppo-0", "br-pretrained"])
def test_any_one_field_replaced_is_refused_or_rendered_never_a_traceback(tmp_path, base):
    from rummy_env.benchmark import report

    good = _row(base)
    f = tmp_path / "x.json"
    inputs = [str(f)]
    if base.startswith("br-"):  # a best response is listed beside its agent's row
        inputs.append(str(_write(tmp_path / "rows" / "pretrained.json", _row("pretrained"))))
    rendered = 0
    for loc in _leaves(good):
        for value in HOSTILE:
            r = copy.deepcopy(good)
            _set(loc, value)(r)
            f.write_text(json.dumps(r))
            try:
                rows, brs = report.load_inputs(inputs)
            except ValueError as e:
                assert f"\n{f}" in str(e), (loc, value, str(e))  # its own line, starting with the file
                continue
            rendered += 1
            report.render(rows, brs, report.aggregate(rows, reps=20), {}, "test")
    assert rendered > 0  # some replacements are harmless (a command, a date) and render


# ---------------------------------------------------------------- numbers cross-checked

def _pt(r, anchor="greedy"):
    return r["results"][anchor]


@pytest.mark.parametrize("edit, needle", [
    # 99% of 3 matches, rated 9999, under the published fingerprint
    (lambda r: [_pt(r, a).update(matches=3, match_win_rate=0.99) for a in r["results"]]
     + [r["rating"].update(value=9999.0)],
     "results['random'].matches: 3, but the evaluation played 200 matches per anchor"),
    (lambda r: r["rating"].update(value=9999.0),
     "rating.value: +9999.0, but the fit to the row's results and the task's anchor crosstable gives +76.7"),
    (lambda r: r["rating"]["anchors"].update(greedy=0.0), "rating.anchors['greedy']: +0.0, but the fit"),
    (lambda r: r["rating"]["anchors"].update(pretrained=0.0), "rating.anchors: rates greedy, heuristic, pretrained"),
    (lambda r: r["rating"].update(zero="random"), "rating.zero: 'random', but the fit"),
    (lambda r: r["rating"].update(value=True), "rating.value: Input should be a valid number, got True"),
    (lambda r: r["results"].update(pretrained=dict(_pt(r))),
     "results['pretrained']: not an anchor of task classic-2p-v1 (random, greedy, heuristic, search:samples=16)"),
    (lambda r: r["results"].pop("greedy"),
     "results: anchors not played (greedy) in a row that says it is the protocol's"),
    (lambda r: _pt(r).update(match_win_rate=float("nan")), "results['greedy'].match_win_rate: must be a finite number"),
    (lambda r: _pt(r).update(points_per_hand=float("inf")), "results['greedy'].points_per_hand: must be a finite"),
    (lambda r: r["hardware"].update(extra=float("-inf")), "hardware.extra: must be a finite number"),
    (lambda r: _pt(r).update(match_win_rate=0.503),
     "results['greedy'].match_win_rate: 0.503 of 200 matches is 100.6 wins, not a whole number of matches"),
    (lambda r: _pt(r).update(match_win_ci=[0.0, 0.01]),
     "results['greedy'].match_win_ci: [0, 0.01] does not hold match_win_rate 0.72"),
    (lambda r: _pt(r).update(match_win_ci=[0.6, 0.8]),
     "results['greedy'].match_win_ci: [0.6, 0.8] is not the 95% Wilson interval of 144 wins in 200 matches"),
    (lambda r: _pt(r).update(matches=100), "results['greedy'].matches: 100, but the evaluation played 200"),
    (lambda r: _pt(r).update(hands=150), "results['greedy'].hands: 150 hands in 200 matches"),
    (lambda r: _pt(r).update(hand_win_rate=0.5001), "results['greedy'].hand_win_rate: 0.5001 of"),
    (lambda r: _pt(r).update(hand_win_ci=[0.0, 1.0]),
     "results['greedy'].hand_win_ci: [0.0, 1.0] is not the 95% Wilson interval of 905 wins in 1501 hands"),
    (lambda r: _pt(r).update(points_ci=[50.0, 60.0]),
     "results['greedy'].points_ci: [50, 60] does not hold points_per_hand 5.74617"),
    (lambda r: r["evaluation"].update(match_seeds=50, matches_per_anchor=100),
     "evaluation.match_seeds: 50 of task classic-2p-v1's 100 in a row that says it is the protocol's"),
    (lambda r: r["evaluation"].update(matches_per_anchor=100),
     "evaluation.matches_per_anchor: 100, but 100 match seeds x 2 rotations = 200"),
    (lambda r: r["evaluation"].update(rotations=1), "evaluation.rotations: 1, but task classic-2p-v1 plays"),
    (lambda r: r["evaluation"].update(anchor_crosstable=False),
     "evaluation.anchor_crosstable: false, but task classic-2p-v1's ratings are fitted with its anchors' crosstable"),
    (lambda r: r.update(protocol_complete=False),
     "protocol_complete must be true exactly when there are no deviations"),
])
def test_numbers_that_do_not_agree_are_refused(tmp_path, capsys, edit, needle):
    r = _row("pretrained")
    assert _pt(r)["match_win_rate"] == 0.72  # the numbers the messages quote
    edit(r)
    _refused(capsys, tmp_path, _write(tmp_path / "in" / "row.json", r), needle)


@pytest.mark.parametrize("edit, needle", [
    (lambda r: r["training"].update(budget=123_456),
     "training.budget: 123,456, but task classic-2p-v1's budget '250k' is 250,000"),
    (lambda r: r["training"].update(budget=123_456, budget_name=None),
     "training.budget: 123,456 learner steps is not a budget of task classic-2p-v1 (250k = 250,000, 2M = 2,000,000) "
     "in a row that says it is the protocol's"),
    (lambda r: r["training"].update(timesteps=1000),
     "training.timesteps: 1,000, fewer than the budget's 250,000 in a row that says it is the protocol's"),
    (lambda r: r["training"].update(wall_time_s=-1.0), "training.wall_time_s: Input should be greater than or equal"),
    (lambda r: r["training"]["curve"][0].update(match_win_rate=2.0), "training.curve[0].match_win_rate"),
])
def test_training_numbers_that_do_not_agree_are_refused(tmp_path, capsys, edit, needle):
    r = _row("ppo-0")
    edit(r)
    _refused(capsys, tmp_path, _write(tmp_path / "in" / "row.json", r), needle)


@pytest.mark.parametrize("edit, needle", [
    (lambda b: b["result"].update(matches=3), "result.matches: 3, but the evaluation played 200 matches per anchor"),
    (lambda b: b.update(match_seeds=2), "protocol_complete must be true exactly when all of task classic-2p-v1's"),
    (lambda b: b.update(match_seeds=200), "match_seeds: 200, but task classic-2p-v1 has 100"),
    (lambda b: b["result"].update(match_win_rate=0.2), "result.match_win_ci: [0.11996"),
    (lambda b: b.update(train_wall_s=float("inf")), "train_wall_s: must be a finite number"),
])
def test_best_response_numbers_that_do_not_agree_are_refused(tmp_path, capsys, edit, needle):
    b = _row("br-pretrained")
    edit(b)
    _refused(capsys, tmp_path, _write(tmp_path / "in" / "br.json", b), needle)


@needs_rliable
def test_a_best_response_over_fewer_seeds_is_not_listed(tmp_path, capsys):
    b = _row("br-pretrained")
    n = 2
    wins = 3
    r = b["result"]
    r.update(matches=2 * n, match_win_rate=wins / (2 * n), match_win_ci=list(tournament.wilson_interval(wins, 2 * n)))
    b.update(match_seeds=n, protocol_complete=False)
    rows = tmp_path / "rows"
    _write(rows / "br.json", b)
    _write(rows / "pretrained.json", _row("pretrained"))
    code, err = _report(capsys, rows, out=tmp_path / "lb")
    assert code == 0, err
    assert "Exploitability proxy" not in (tmp_path / "lb" / "leaderboard.md").read_text()


def test_train_wall_s_must_be_finite_before_anything_is_played(tmp_path, capsys):
    for bad in ("inf", "-inf", "nan", "-1"):
        assert rummy(["benchmark", "eval", "--task", "classic-2p-v1", "--agent", "random", "--match-seeds", "1",
                      "--anchors", "random", "--workers", "1", "--budget-steps", "250000", f"--train-wall-s={bad}",
                      "--out", str(tmp_path / "X")]) == 2
        assert "--train-wall-s must be a finite number of seconds >= 0" in capsys.readouterr().err
    assert not (tmp_path / "X").exists()


def _fake_protocol(task, agent, match_seeds=None, workers=2, anchors=None, progress=None, opponent_stats=False):
    n = match_seeds * task.rotations
    out = {}
    for a in anchors or task.anchors:
        out[a] = {"matches": n, "match_win_rate": 0.5, "match_win_ci": list(tournament.wilson_interval(n / 2, n)),
                  "points_per_hand": 0.0, "points_ci": [-1.0, 1.0], "hands": 4 * n, "hand_win_rate": 0.5,
                  "hand_win_ci": list(tournament.wilson_interval(2 * n, 4 * n)), "wins": n / 2, "games": n}
    return out


def test_a_budget_that_is_not_the_tasks_makes_a_smoke_row(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(protocol, "play_protocol", _fake_protocol)
    out = tmp_path / "row"
    assert rummy(["benchmark", "eval", "--task", "classic-2p-v1", "--agent", "random", "--budget-steps", "123456",
                  "--train-seed", "0", "--algorithm", "mine", "--quiet", "--out", str(out)]) == 0
    row = protocol.load_row(out)
    assert not row["protocol_complete"]
    assert row["deviations"] == ["trained for 123,456 learner steps, not a budget of the task (250k = 250,000, "
                                 "2M = 2,000,000)"]


def test_save_row_refuses_non_finite_numbers_and_writes_nothing(tmp_path):
    r = _row("ppo-0")
    r["training"]["wall_time_s"] = math.inf
    with pytest.raises(ValueError, match=re.escape("not a benchmark row: training.wall_time_s: must be a finite")):
        protocol.save_row(r, tmp_path / "r")
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- the published rows

def test_published_rows_and_best_responses_pass_every_check():
    from rummy_env.benchmark import schema

    files = sorted((ROOT / "benchmark" / "rows").rglob("*.json"))
    assert len(files) > 30
    for p in files:
        data = schema.read_json(p)
        if data.get("format") == schema.BR_FORMAT:
            schema.validate_best_response(data)
        else:
            protocol.check_rating(protocol.load_row(p))


def test_result_keys_are_the_schemas():
    assert protocol.RESULT_KEYS == ("matches", "match_win_rate", "match_win_ci", "points_per_hand", "points_ci",
                                    "hands", "hand_win_rate", "hand_win_ci")
