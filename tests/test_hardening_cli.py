"""Issue 18, the CLI, server and small things: each test fails on the code before the fix.

(The table-driven bad-input checks of every surface are in test_bad_input.py.)
"""
from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from extras import needs

from rummy_env.cli import main as rummy


def _err(capsys) -> str:
    return capsys.readouterr().err


# ------------------------------------------------------------------ rummy train


@pytest.mark.parametrize("setting, needle", [
    ("learning_rate=abc", "learning_rate must be a finite number, got 'abc'"),
    ("gamma=abc", "gamma must be a finite number, got 'abc'"),
    ("opponent_weights=5", "opponent_weights must be a table of finite numbers"),
    ("eval_baselines=5", "eval_baselines must be a list of strings, got 5"),
    ("learning_rate=inf", "learning_rate must be a finite number, got inf"),
    ("gamma=nan", "gamma must be a finite number, got nan"),
    ("progress=1", "progress must be true or false, got 1"),
    ("net_arch=[64,true]", "net_arch must be a list of ints"),
])
def test_train_set_bad_values_name_the_field(tmp_path, capsys, setting, needle):
    out = tmp_path / "run"
    assert rummy(["train", "--set", setting, "--out", str(out), "--timesteps", "64"]) == 2
    err = _err(capsys)
    assert needle in err and "Traceback" not in err
    assert not out.exists()


def test_train_out_under_a_file_or_unwritable(tmp_path, capsys):
    needs("torch")
    needs("sb3_contrib")
    f = tmp_path / "a_file"
    f.write_text("x")
    for out, needle in ((f / "sub", "is a file, so no run folder can be made under it"),
                        (f, "is a file, not a folder"),
                        (Path("/proc/rummy_no_such/run"), "cannot create a run folder in /proc"),
                        ("", "--out must name a run folder")):
        assert rummy(["train", "--out", str(out), "--timesteps", "64"]) == 2
        assert needle in _err(capsys)
    assert f.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


@pytest.mark.parametrize("flags, named", [
    (["--address", "127.0.0.1:6379"], "--address"),
    (["--num-env-runners", "1"], "--num-env-runners"),
    (["--envs-per-env-runner", "4", "--env-runner-resource", "rummy_runner=1"],
     "--envs-per-env-runner, --env-runner-resource"),
])
def test_rllib_only_flags_without_the_rllib_backend_are_refused(tmp_path, capsys, flags, named):
    # nothing silently ignored: the sb3 backend has no Ray, so these flags would do nothing
    out = tmp_path / "run"
    assert rummy(["train", "--out", str(out), "--timesteps", "64", *flags]) == 2
    assert f"{named}: RLlib-only flag(s); add --backend rllib" in _err(capsys)
    assert not out.exists()


def test_train_resume_given_a_file(tmp_path, capsys):
    needs("torch")
    needs("sb3_contrib")
    f = tmp_path / "notes.txt"
    f.write_text("x")
    out = tmp_path / "run"
    assert rummy(["train", "--resume", str(f), "--out", str(out), "--timesteps", "64", "--no-progress"]) == 2
    err = _err(capsys)
    assert "is not a checkpoint folder" in err and "does not exist" not in err
    assert not out.exists()


@pytest.mark.rllib
def test_rllib_resume_given_a_file(tmp_path):
    needs("ray")
    from rummy_env.train.rllib import check_checkpoint

    f = tmp_path / "notes.txt"
    f.write_text("x")
    with pytest.raises(ValueError, match="is not a checkpoint folder"):
        check_checkpoint(f)


@pytest.mark.rllib
def test_rllib_counts_read_nan_as_zero():
    needs("ray")
    # Ray reports NaN for a counter nothing reached in the window (no hand ended in a
    # 512-step iteration); CI once failed with "cannot convert float NaN to integer"
    from rummy_env.train.rllib import _count, learner_steps

    nan = float("nan")
    assert [_count(v) for v in (nan, None, "x", float("inf"), 3.0, 7)] == [0, 0, 0, 0, 3, 7]
    assert learner_steps({"env_runners": {"num_env_steps_sampled_lifetime": nan}}) == 0
    assert learner_steps({"env_runners": {"num_env_steps_sampled_lifetime": 512.0}}) == 512
    assert learner_steps({}) == 0


def test_progress_bar_total_is_what_training_reaches(tmp_path, monkeypatch):
    needs("torch")
    needs("sb3_contrib")
    from rummy_env.train import trainer as tr
    from rummy_env.train.config import TrainConfig

    # by hand: 800,000 / (64 * 64) = 195.3 rollouts -> 196 whole rollouts = 802,816 steps
    assert tr.planned_timesteps(800_000, 64 * 64) == 802_816
    assert tr.planned_timesteps(8192, 4096) == 8192
    bars = []

    class Spy(tr.RolloutProgressBar):
        def _on_training_end(self):
            bars.append((self.pbar.total, self.pbar.n))
            super()._on_training_end()

    monkeypatch.setattr(tr, "RolloutProgressBar", Spy)
    cfg = TrainConfig(timesteps=100, out=str(tmp_path / "run"), n_envs=8, n_steps=16, batch_size=64, n_epochs=1,
                      workers=1, net_arch=[16], snapshot_every=128, eval_every=0, checkpoint_every=10_000,
                      final_eval_deals=2, eval_deals=2, eval_baselines=["random"], progress=True,
                      warmstart_decisions=0)
    tr.Trainer(cfg, verbose=0).learn()
    assert bars == [(128, 128)]  # 100 steps at 16 x 8 per rollout: one whole rollout of 128


# ------------------------------------------------------------------ rummy bench and export


@pytest.mark.parametrize("argv, needle", [
    (["bench", "env", "--cpu", "99"], "--cpu 99: this process may run on CPU(s)"),
    (["bench", "env", "--seconds", "nan"], "--seconds must be a finite number of seconds > 0, got nan"),
    (["bench", "env", "--seconds", "inf"], "--seconds must be a finite number"),
    (["bench", "env", "--json", ""], "--json must be a file path"),
    (["bench", "env", "--json", "/proc/rummy_x.json"], "--json /proc/rummy_x.json: not writable"),
    (["bench", "train", "--json", ""], "--json must be a file path"),
    (["bench", "train", "--json", "/proc/rummy_x.json"], "not writable"),
    (["bench", "train", "--backend", "sb3", "rllib", "--profile"], "--profile profiles the sb3 backend only"),
    (["bench", "train", "--workers", "1", "0"], "--workers must be >= 1, got [1, 0]"),
])
def test_bench_refuses_before_measuring(capsys, argv, needle):
    assert rummy(argv + ["--repeats", "1"] if argv[1] == "env" else argv) == 2
    cap = capsys.readouterr()
    assert needle in cap.err and "Traceback" not in cap.err
    assert "round 1/" not in cap.err + cap.out and "training " not in cap.out


def test_bench_train_rllib_without_ray_says_which_extra(capsys):
    import importlib.util

    if importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed here: tests/test_rllib.py measures the rllib backend")
    assert rummy(["bench", "train", "--backend", "sb3", "rllib"]) == 2
    cap = capsys.readouterr()
    assert "--backend rllib needs the rllib extra" in cap.err and "training " not in cap.out


def test_bench_json_under_a_file(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("x")
    assert rummy(["bench", "train", "--json", str(f / "b.json")]) == 2
    assert f"{f} is a file, not a folder" in _err(capsys)
    ok = tmp_path / "b.json"  # a usable path: checked, and no file left behind
    from rummy_env.benchmark.speed import check_json_path

    check_json_path(str(ok))
    assert not ok.exists()


def test_export_out_empty(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert rummy(["export", "pretrained", "--out", ""]) == 2
    assert "--out must name a folder" in _err(capsys)
    assert list(tmp_path.iterdir()) == []


def test_exported_folder_is_git_ignored():
    root = Path(__file__).resolve().parents[1]
    lines = (root / ".gitignore").read_text().split()
    assert "exported/" in lines


# ------------------------------------------------------------------ rummy play


def test_play_names_the_stock_card_and_counts_whole_turns():
    from rich.console import Console

    from rummy_env import rummy_v0
    from rummy_env.frontends import play

    # by hand from the engine: the stock's top card is the last of state.stock
    e = rummy_v0.raw_env()
    e.reset(seed=3)
    first = e.state.stock[-1]
    from rummy_env.cards import CARD_TEXT

    out = io.StringIO()
    con = Console(file=out, width=200, highlight=False, color_system=None)
    args = type("A", (), dict(rules="classic", opponent="random", seat=0, seed=3, episode="hand"))
    # draw stock, discard the first listed, draw stock, discard, quit
    assert play.main(args, stdin=io.StringIO("draw stock\n1\ndraw stock\n1\nq\n"), console=con) == 0
    text = out.getvalue()
    assert f"you drew {CARD_TEXT[first]} from the stock" in text
    heads = [ln for ln in text.splitlines() if "your move (player_0)" in ln]
    # two whole turns of the table (each player moves once in each; draw and play
    # phases shown), then the third turn's draw, where the person quits
    assert [h.split("turn ")[1].split(":")[0] for h in heads] == ["1", "1", "2", "2", "3"]


# ------------------------------------------------------------------ win_rates.png


def _res(n_tables: int) -> dict:
    names = ["heuristic", "greedy", "random", "pretrained"]
    tabs = []
    for t in range(n_tables):
        a, b = names[t % 4], names[(t + 1) % 4]
        tabs.append({"table": [a, b], "results": [
            {"agent": x, "win_rate": 0.5, "win_ci": [0.4, 0.6], "mean_points": 3.0 * (k - 0.5),
             "points_ci": [-1.0, 2.0]} for k, x in enumerate((a, b))]})
    return {"settings": {"players": 2, "rules": "classic", "deals": 10, "matches": False}, "tables": tabs}


def test_win_rates_png_labels_do_not_overlap_and_points_are_plotted(tmp_path, monkeypatch):
    needs("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from rummy_env.eval import cli as eval_cli

    figs = []
    real = Figure.savefig

    def spy(self, *a, **k):
        out = real(self, *a, **k)
        figs.append((self, self.canvas.get_renderer()))  # before plt.close detaches the canvas
        return out

    monkeypatch.setattr(Figure, "savefig", spy)
    eval_cli.plot_win_rates(_res(6), str(tmp_path / "w.png"))
    assert (tmp_path / "w.png").stat().st_size > 0
    fig, r = figs[0]
    def drawn(ax, axis):  # labels of the ticks inside the view (matplotlib keeps some outside, undrawn)
        lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
        labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
        locs = ax.get_xticks() if axis == "x" else ax.get_yticks()
        return [t for t, v in zip(labels, locs) if lo <= v <= hi and t.get_text() and t.get_visible()]

    boxes = [t.get_window_extent(r) for ax in fig.axes for axis in "xy" for t in drawn(ax, axis)]
    assert len(boxes) >= 12
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not boxes[i].overlaps(boxes[j]), "tick labels overlap"
    labels = [ax.get_xlabel() + ax.get_ylabel() for ax in fig.axes]
    assert any("points per hand" in x for x in labels), labels
    # the points panel shows each row's mean points: 12 bars, -1.5 and +1.5 alternating
    pts_ax = next(ax for ax in fig.axes if "points" in ax.get_xlabel())
    widths = sorted(p.get_width() for p in pts_ax.patches)
    assert widths == [-1.5] * 6 + [1.5] * 6


# ------------------------------------------------------------------ rummy serve /act


@pytest.fixture(scope="module")
def export_dirs(tmp_path_factory):
    import shutil

    from policy_helpers import tiny_policy

    pol = tiny_policy()
    gen = tmp_path_factory.mktemp("gen") / "export"
    shutil.copytree(pol["export"], gen)
    spec = json.loads((gen / "spec.json").read_text())
    spec["rules"]["generalises"] = True
    (gen / "spec.json").write_text(json.dumps(spec))
    return pol["export"], gen


def _position(rules):
    from rummy_env import rummy_v0

    e = rummy_v0.raw_env(rules=rules)
    e.reset(seed=5)
    return e.state_dict()


def test_act_refuses_other_rules_unless_the_spec_generalises(export_dirs):
    needs("fastapi")
    needs("torch")
    needs("sb3_contrib")
    needs("onnx")
    needs("onnxruntime")
    from fastapi.testclient import TestClient

    from rummy_env.frontends.serve import create_app

    plain, gen = export_dirs
    assert json.loads((plain / "spec.json").read_text())["rules"]["generalises"] is False
    other = {"preset": "classic", "ace_points": 11}
    pos = _position(other)
    with TestClient(create_app(plain)) as c:
        r = c.post("/act", json=pos)
        assert r.status_code == 422 and "not the rules this policy was trained on" in r.json()["detail"]
        r = c.post("/act", json=_position("classic"))
        assert r.status_code == 200 and "off_training_rules" not in r.json()
    with TestClient(create_app(gen)) as c:
        r = c.post("/act", json=pos)
        assert r.status_code == 200, r.text
        assert r.json()["off_training_rules"] is True and "trained on" in r.json()["note"]


def test_act_checks_content_type_and_size(export_dirs):
    needs("fastapi")
    needs("torch")
    needs("sb3_contrib")
    needs("onnx")
    needs("onnxruntime")
    from fastapi.testclient import TestClient

    from rummy_env.frontends.serve import MAX_BODY_BYTES, create_app

    body = json.dumps(_position("classic")).encode()
    with TestClient(create_app(export_dirs[0])) as c:
        for ct in ("text/plain", "application/x-www-form-urlencoded"):
            r = c.post("/act", content=body, headers={"content-type": ct})
            assert r.status_code == 415 and "Content-Type must be application/json" in r.json()["detail"]
        r = c.post("/act", content=body, headers={"content-type": "application/json; charset=utf-8"})
        assert r.status_code == 200
        big = b" " * (MAX_BODY_BYTES + 1)
        r = c.post("/act", content=big, headers={"content-type": "application/json"})
        assert r.status_code == 413 and str(MAX_BODY_BYTES) in r.json()["detail"]


@pytest.mark.parametrize("declare_length", [True, False])
def test_act_refuses_an_oversized_body_before_reading_it_all(export_dirs, declare_length):
    needs("fastapi")
    needs("torch")
    needs("sb3_contrib")
    needs("onnx")
    needs("onnxruntime")
    from rummy_env.frontends.serve import MAX_BODY_BYTES, create_app

    app = create_app(export_dirs[0])
    chunk, n_chunks = b" " * 4096, 1000  # 4 MB offered, 64 KiB allowed
    reads, sent = [0], []
    headers = [(b"content-type", b"application/json")]
    if declare_length:
        headers.append((b"content-length", str(len(chunk) * n_chunks).encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/act", "raw_path": b"/act", "query_string": b"", "root_path": "",
             "headers": headers, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}

    async def receive():
        reads[0] += 1
        return {"type": "http.request", "body": chunk, "more_body": reads[0] < n_chunks}

    async def send(msg):
        sent.append(msg)

    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    limit_chunks = MAX_BODY_BYTES // len(chunk) + 1
    assert reads[0] <= (0 if declare_length else limit_chunks), reads[0]


# ------------------------------------------------------------------ rummy eval

def test_eval_out_empty_is_refused_and_writes_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert rummy(["eval", "--agents", "random", "greedy", "--deals", "1", "--out", ""]) == 2
    assert "--out must name an output folder, got an empty path" in _err(capsys)
    assert list(tmp_path.iterdir()) == []


def test_eval_workers_are_capped_at_the_pieces_of_work(capsys, monkeypatch):
    # one deal is one piece of work: --workers 12 plays it in this process, as --workers 1
    # does, and says how many processes played
    from rummy_env.eval import tournament

    started = []
    real = tournament.play_in_workers
    monkeypatch.setattr(tournament, "play_in_workers", lambda run, jobs, workers, *a, **k: (
        started.append((workers, len(jobs))), real(run, jobs, workers, *a, **k))[1])
    assert rummy(["eval", "--agents", "random", "greedy", "--deals", "1", "--workers", "12", "--quiet"]) == 0
    assert started == [] and "(1 worker process: --workers 12 capped at the 1 piece of work)" in capsys.readouterr().out
    assert rummy(["eval", "--agents", "random", "greedy", "--hands", "--deals", "3", "--workers", "12",
                  "--quiet"]) == 0
    assert started == [(3, 3)] and "(3 worker processes: --workers 12 capped at the 3 pieces of work)" in capsys.readouterr().out
    assert tournament.worker_processes(1, 12) == 1 and tournament.worker_processes(200, 12) == 12
    assert tournament.worker_processes(3, 2) == 2


def test_eval_help_says_workers_are_capped(capsys):
    with pytest.raises(SystemExit):
        rummy(["eval", "--help"])
    assert "worker processes, capped at the pieces of work (chunks of deals, so never more than --deals)" in \
        " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("workers", ["0", "-3"])
def test_eval_workers_below_one_are_refused_by_name_before_any_agent_is_made(capsys, monkeypatch, workers):
    import rummy_env.agents as agents

    monkeypatch.setattr(agents, "make_agent", lambda *a, **k: pytest.fail("an agent was made"))
    assert rummy(["eval", "--agents", "random", "greedy", "--deals", "1", "--workers", workers]) == 2
    err = _err(capsys)
    assert f"--workers must be an int >= 1 (worker processes), got {workers}" in err and "Traceback" not in err


def test_eval_deals_below_one_are_refused_by_name(capsys):
    assert rummy(["eval", "--agents", "random", "greedy", "--deals", "0"]) == 2
    assert "--deals must be an int >= 1, got 0" in _err(capsys)
