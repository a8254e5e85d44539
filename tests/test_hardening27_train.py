"""Issue 27, defects 3, 4 and 7 (training, checkpoints, the command line): each test
fails on the code before the fix."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the train extra: pip install 'rummy-env[train]'")
pytest.importorskip("sb3_contrib", reason="needs the train extra: pip install 'rummy-env[train]'")

from rummy_env.cli import main as rummy  # noqa: E402
from rummy_env.train.config import TrainConfig  # noqa: E402
from rummy_env.train.trainer import CheckpointError, Trainer, load_checkpoint  # noqa: E402
from rummy_env.rules import Rules  # noqa: E402
import torch  # noqa: E402


def tiny_config(out: Path, **kw) -> TrainConfig:
    base = dict(timesteps=128, out=str(out), n_envs=8, n_steps=16, batch_size=64, n_epochs=1, workers=1,
                net_arch=[32, 32], snapshot_every=128, eval_every=0, checkpoint_every=10_000,
                final_eval_deals=2, eval_deals=2, eval_baselines=["random"], progress=False,
                warmstart_decisions=0)
    base.update(kw)
    return TrainConfig(**base)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A 128-step run and its last checkpoint (``checkpoints/step_128``)."""
    run = tmp_path_factory.mktemp("run")
    rep = Trainer(tiny_config(run), verbose=0).learn()
    assert rep["timesteps"] == 128  # 8 games x 16 steps: one rollout
    return run, run / "checkpoints" / "step_128"


# ------------------------------------------------------------------ 3. resume past --timesteps

def test_resume_of_a_checkpoint_that_reaches_timesteps_reports_without_training(trained, tmp_path, capsys):
    _, ck = trained
    src = tmp_path / "ck"
    shutil.copytree(ck, src)
    before = {f.name: f.read_bytes() for f in src.iterdir()}
    out = tmp_path / "resumed"
    for timesteps in (128, 64):  # exactly reached, and passed
        rep = Trainer(tiny_config(out, timesteps=timesteps), resume=str(src), verbose=1).learn()
        assert rep["timesteps"] == 128 and set(rep["results"]) == {"random"}
        said = capsys.readouterr().out
        assert (f"[resume] the checkpoint has 128 timesteps, already --timesteps {timesteps}: nothing to train; "
                "writing final_model.zip and the report") in said
        assert (out / "final_model.zip").is_file() and (out / "report.md").is_file()
        assert json.loads((out / "report.json").read_text())["timesteps"] == 128
    assert {f.name: f.read_bytes() for f in src.iterdir()} == before  # the checkpoint is left as it was
    assert not (out / "checkpoints").exists()  # and no new one written


# ------------------------------------------------------------------ 4. a corrupted trainer_state.json

@pytest.mark.parametrize("field,value,reason", [
    ("num_timesteps", -100, "num_timesteps must be an int >= 0 (learner timesteps trained), got -100"),
    ("num_timesteps", 1.5, "num_timesteps must be an int >= 0 (learner timesteps trained), got 1.5"),
    ("next_checkpoint", -1, "next_checkpoint must be a number >= 0 (a learner timestep), got -1"),
    ("wall_time_s", -3, "wall_time_s must be a finite number of seconds >= 0, got -3"),
    ("eval_history", {}, "eval_history must be a list of evaluations, got {}"),
])
def test_a_corrupted_trainer_state_is_refused(trained, tmp_path, field, value, reason):
    _, ck = trained
    bad = tmp_path / "ck"
    shutil.copytree(ck, bad)
    st = json.loads((bad / "trainer_state.json").read_text())
    st[field] = value
    (bad / "trainer_state.json").write_text(json.dumps(st))
    with pytest.raises(CheckpointError) as e:
        load_checkpoint(bad, tiny_config(tmp_path / "x"), Rules.preset("classic"))
    assert str(e.value) == (f"checkpoint {bad} is corrupt or not a rummy-env checkpoint: trainer_state.json cannot "
                            f"be read ({reason})")


def test_trainer_state_steps_must_be_the_models(trained, tmp_path):
    _, ck = trained
    bad = tmp_path / "ck"
    shutil.copytree(ck, bad)
    st = json.loads((bad / "trainer_state.json").read_text())
    st["num_timesteps"] = 64
    (bad / "trainer_state.json").write_text(json.dumps(st))
    with pytest.raises(CheckpointError) as e:
        load_checkpoint(bad, tiny_config(tmp_path / "x"), Rules.preset("classic"))
    assert str(e.value) == (f"checkpoint {bad} is corrupt: trainer_state.json says num_timesteps 64, its model.zip "
                            "128 (a checkpoint writes both at the same step)")


def test_rummy_train_resume_of_a_negative_step_count_exits_2(trained, tmp_path, capsys):
    _, ck = trained
    bad = tmp_path / "ck"
    shutil.copytree(ck, bad)
    st = json.loads((bad / "trainer_state.json").read_text())
    st["num_timesteps"] = -100
    (bad / "trainer_state.json").write_text(json.dumps(st))
    assert rummy(["train", "--resume", str(bad), "--out", str(tmp_path / "out"), "--timesteps", "256",
                  "--no-progress", "--set", "workers=1", "--set", "n_envs=8", "--set", "batch_size=64"]) == 2
    err = capsys.readouterr().err
    assert "num_timesteps must be an int >= 0 (learner timesteps trained), got -100" in err
    assert "Traceback" not in err


# ------------------------------------------------------------------ 7. the command line

def test_rummy_train_seed_minus_1_names_the_flag(tmp_path, capsys):
    assert rummy(["train", "--seed", "-1", "--out", str(tmp_path / "run"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "rummy train: error: --seed must be an int in 0..4294967295 (numpy's seed range, 2**32 - 1), got -1" in err
    assert not (tmp_path / "run").exists()  # refused before anything is written


def test_train_config_seed_out_of_range_is_refused():
    with pytest.raises(ValueError) as e:
        TrainConfig(seed=2**32).validate()
    assert str(e.value) == "seed must be an int in 0..4294967295 (numpy's seed range, 2**32 - 1), got 4294967296"


def test_rummy_eval_seed_minus_1_is_refused(capsys):
    assert rummy(["eval", "--agents", "random", "random", "--deals", "1", "--seed", "-1", "--hands", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "rummy eval: error: --seed must be an int in 0..4611686018427387903 (2**62 - 1), got -1" in err


def _serve(args: list[str]):
    import os
    import subprocess
    import sys

    pytest.importorskip("onnxruntime", reason="needs the serve extra: pip install 'rummy-env[serve]'")
    pytest.importorskip("uvicorn", reason="needs the serve extra: pip install 'rummy-env[serve]'")
    from policy_helpers import tiny_policy

    return subprocess.run([sys.executable, "-m", "rummy_env.cli", "serve", "--policy", str(tiny_policy()["export"]),
                           *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))


def test_rummy_serve_on_a_port_in_use_says_it_in_one_line():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = _serve(["--port", str(port)])
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines == [f"rummy serve: error: cannot listen on 127.0.0.1:{port} (Address already in use); "
                     "choose another --port"], r.stderr


def test_rummy_serve_with_a_host_that_is_no_address_refuses_before_warning():
    r = _serve(["--port", "0", "--host", "999.1.1.1"])
    assert r.returncode == 2
    assert "reachable from other machines" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "rummy serve: error: --host 999.1.1.1: not an IP address or a host name this machine resolves ("), r.stderr
    assert lines[0].endswith("); give e.g. 127.0.0.1 (this machine only, the default) or 0.0.0.0 (every interface)")


# ------------------------------------------------------------------ 9-12. what a run prints and writes

@pytest.fixture(scope="module")
def verbose_run(tmp_path_factory):
    """A tiny run with a warm start and evaluations, its printed log and its folder."""
    import contextlib
    import io

    run = tmp_path_factory.mktemp("verbose") / "run"
    cfg = tiny_config(run, timesteps=256, eval_every=128, eval_baselines=["random", "greedy"],
                      warmstart_decisions=300, warmstart_epochs=1, warmstart_dagger_rounds=0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rep = Trainer(cfg, verbose=1).learn()
    return run, out.getvalue(), rep


def test_a_run_says_its_warm_start_up_front_and_where_it_wrote_its_files(verbose_run):
    run, log, _ = verbose_run
    lines = log.splitlines()
    assert lines[0] == ("[plan] first a warm start: clone 300 heuristic decisions (+0 DAgger round(s); the default "
                        "800,000 take over 5 minutes on 2 cores, whatever --timesteps is; --set "
                        f"warmstart_decisions=0 skips it), then PPO to 256 learner timesteps; the run writes to {run}/")
    assert lines[1].startswith("[warm start] cloned 300 heuristic decisions")
    assert lines[-1] == (f"[done] wrote final_model.zip, best_model.zip, report.md, report.json, eval_history.json, "
                         f"learning_curve.png in {run}/ (checkpoints in {run}/checkpoints/, TensorBoard logs in "
                         f"{run}/tb/)")


def test_the_final_evaluation_says_it_starts_and_reports_each_baseline(verbose_run):
    _, log, _ = verbose_run
    start = log.index("[final evaluation] 2 duplicate match seeds against each of random, greedy (both seat "
                      "rotations, 2 worker(s)); a line per baseline")
    assert log.index("[final evaluation] vs random (") > start
    assert log.index("[final evaluation] vs greedy (") > log.index("[final evaluation] vs random (")


def test_the_learning_curve_starts_at_the_warm_started_policy(verbose_run):
    run, log, _ = verbose_run
    hist = json.loads((run / "eval_history.json").read_text())
    assert [h["timesteps"] for h in hist] == [0, 128, 256, 256]  # step 0, two in-run, the final one
    assert [bool(h.get("final")) for h in hist] == [False, False, False, True]
    assert "[eval @ 0 steps] the warm-started policy before PPO: 2 duplicate deals per baseline" in log


def test_the_report_names_both_speeds_and_prints_percentages(verbose_run):
    run, _, rep = verbose_run
    j = json.loads((run / "report.json").read_text())
    # the rates are of the unrounded times; times and rates are written to 0.1
    for rate, wall in (("timesteps_per_s", "wall_time_s"), ("ppo_timesteps_per_s", "ppo_wall_time_s")):
        assert 256 / (j[wall] + 0.051) - 0.051 <= j[rate] <= 256 / max(j[wall] - 0.051, 1e-9) + 0.051, (rate, j)
    assert j["ppo_wall_time_s"] < j["wall_time_s"] and j["ppo_timesteps_per_s"] > j["timesteps_per_s"]
    # the warm start of 300 decisions may take under 0.05 s (written 0.0) on a fast machine
    assert 0 <= j["warm_start_s"] <= j["wall_time_s"] - j["ppo_wall_time_s"] + 0.1
    md = (run / "report.md").read_text()
    r = rep["results"]["random"]
    lo, hi = r["match_win_ci"]
    assert f"| random | 4 | {100 * r['match_win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] |" in md
    assert (f"Throughput: {j['timesteps_per_s']:,.0f} learner timesteps/s over the whole run "
            f"({j['wall_time_s'] / 60:.1f} min, the warm start's ") in md
    assert f"; {j['ppo_timesteps_per_s']:,.0f}/s in the PPO phase alone ({j['ppo_wall_time_s'] / 60:.1f} min)." in md


def _ws_config(run, **kw):
    # two DAgger rounds: three fits (the cloning, then one refit per round)
    return tiny_config(run, warmstart_decisions=1200, warmstart_epochs=1, warmstart_dagger_rounds=2,
                       warmstart_dagger_decisions=1000, warmstart_dagger_epochs=1, **kw)


def _weights(trainer):
    return [p.detach().clone() for p in trainer.model.policy.parameters()]


def _interrupt_fit(monkeypatch, call: int):
    """Ctrl-C in the warm start's ``call``-th fit (1: the cloning, 2, 3: the DAgger refits),
    after its first minibatch (so the network has moved when the interrupt comes)."""
    from rummy_env.train import warmstart

    real, calls = warmstart.fit, []

    def fit(*a, **k):
        calls.append(1)
        if len(calls) == call:
            def boom(done):
                raise KeyboardInterrupt
            k["progress"] = boom
        return real(*a, **k)

    monkeypatch.setattr(warmstart, "fit", fit)
    return calls


@pytest.fixture(scope="module")
def whole_warm_start(tmp_path_factory):
    """The weights an uninterrupted warm start of ``_ws_config`` ends with."""
    t = Trainer(_ws_config(tmp_path_factory.mktemp("whole") / "run"), verbose=0)
    t.venv.close()
    return _weights(t)


# 2 (a middle fit) under -m slow: 1 and 3 are its edges (no fit done; all but the last), both resumed
@pytest.mark.parametrize("call", [1, pytest.param(2, marks=pytest.mark.slow), 3])
def test_ctrl_c_during_the_warm_start_saves_a_checkpoint_that_resumes_to_the_same_weights(tmp_path, monkeypatch,
                                                                                          capsys, call,
                                                                                          whole_warm_start):
    """Issue 27 item 10: the weights at the last completed fit are saved; --resume rebuilds the
    completed fits' samples by replaying their seeded hands and ends with exactly the weights
    of an uninterrupted warm start (same machine)."""
    whole = whole_warm_start
    run = tmp_path / "run"
    _interrupt_fit(monkeypatch, call)
    with pytest.raises(KeyboardInterrupt):
        Trainer(_ws_config(run), verbose=1)
    out = capsys.readouterr().out
    ck = run / "checkpoints" / "warm_start"
    assert (f"interrupted during the warm start, after {call - 1} of 3 fits: checkpoint saved to {ck}; resume with "
            f"--resume {ck}") in out
    state = json.loads((ck / "trainer_state.json").read_text())
    assert state["num_timesteps"] == 0 and state["warm_start_progress"]["fits_done"] == call - 1
    monkeypatch.undo()
    resumed = Trainer(_ws_config(tmp_path / "again"), resume=str(ck), verbose=1)
    out = capsys.readouterr().out
    if call > 1:
        assert f"[warm start] resuming after {call - 1} of 3 fits" in out
    got = _weights(resumed)
    assert len(got) == len(whole) and all(torch.equal(a, b) for a, b in zip(got, whole))
    assert resumed.state["warm_start"]["samples"] > 1200 and resumed.state["num_timesteps"] == 0
    assert "warm_start_progress" not in resumed.state
    if call == 2:  # and PPO goes on from there
        rep = resumed.learn()
        assert rep["timesteps"] > 0 and (tmp_path / "again" / "checkpoints" / f"step_{rep['timesteps']}").is_dir()
    else:
        resumed.venv.close()


def test_a_warm_start_checkpoint_refuses_other_warm_start_settings_and_corrupt_progress(tmp_path, monkeypatch):
    run = tmp_path / "run"
    _interrupt_fit(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        Trainer(_ws_config(run), verbose=0)
    monkeypatch.undo()
    ck = run / "checkpoints" / "warm_start"
    with pytest.raises(CheckpointError, match=r"taken during a warm start with other settings: warmstart_epochs 1 "
                                              r"\(this run: 2\); resume with the same config"):
        Trainer(tiny_config(tmp_path / "b", warmstart_decisions=1200, warmstart_epochs=2, warmstart_dagger_rounds=2,
                            warmstart_dagger_decisions=1000, warmstart_dagger_epochs=1), resume=str(ck), verbose=0)
    # a checkpoint saved before warmstart_meld_weight existed weighed every position the same
    meta = json.loads((ck / "rummy_config.json").read_text())
    del meta["config"]["warmstart_meld_weight"]
    (ck / "rummy_config.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"other settings: warmstart_meld_weight 1.0 \(this run: 4.0\)"):
        Trainer(_ws_config(tmp_path / "w", warmstart_meld_weight=4.0), resume=str(ck), verbose=0)
    state = json.loads((ck / "trainer_state.json").read_text())
    for bad, msg in ((-1, r"warm_start_progress.fits_done must be an int >= 0"),
                     (5, r"warm_start_progress.fits_done is 5, but this config's warm start has 3 fits")):
        state["warm_start_progress"]["fits_done"] = bad
        (ck / "trainer_state.json").write_text(json.dumps(state))
        with pytest.raises(CheckpointError, match=msg):
            Trainer(_ws_config(tmp_path / "c"), resume=str(ck), verbose=0)
    state["warm_start_progress"]["fits_done"] = 1
    (ck / "trainer_state.json").write_text(json.dumps(state))
    (ck / "warm_start.pt").unlink()
    with pytest.raises(CheckpointError, match=r"warm_start.pt \(the warm start's weights\) cannot be read"):
        Trainer(_ws_config(tmp_path / "d"), resume=str(ck), verbose=0)


def test_log_lines_start_a_line_of_their_own_after_a_log_files_progress_bar(tmp_path, capsys):
    import io
    import types

    t = Trainer.__new__(Trainer)
    t.verbose = 1
    fp = io.StringIO()
    fp.write("timesteps:  47%|####6     | 120/256")
    t.progress_bar = types.SimpleNamespace(pbar=types.SimpleNamespace(fp=fp))
    t.say("[checkpoint] x")  # pytest's stderr is no terminal, as a log file
    assert fp.getvalue().endswith("120/256\n")
    assert capsys.readouterr().out == "[checkpoint] x\n"


def test_points_panel_is_scaled_without_random_and_the_final_point_moves_right(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="needs the eval extra: pip install 'rummy-env[eval]'")
    import matplotlib.pyplot as plt

    from rummy_env.train.report import plot_learning_curve

    def row(rate, pts):
        return {"mode": "matches", "win_rate": rate, "win_ci": [rate - 0.1, rate + 0.1], "points_per_hand": pts,
                "points_ci": [pts - 1, pts + 1]}

    hist = [{"timesteps": t, "random": row(1.0, 48.0), "greedy": row(0.5, g), **({"final": True} if f else {})}
            for t, g, f in ((0, -2.0, False), (1000, 1.0, False), (1000, 1.5, True))]
    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    plot_learning_curve(hist, ["random", "greedy"], tmp_path / "c.png", "t")
    ax, bx = figs[-1].axes
    lo, hi = bx.get_ylim()
    assert -3.0 - 1 < lo < -3.0 and 2.5 < hi < 2.5 + 1  # greedy's intervals -3..2.5 and 0, padded 10%
    labels = [t.get_text() for t in bx.get_legend().get_texts()]
    assert labels == ["vs random (+48.0 at the end, off this scale)", "vs greedy"]
    stars = [ln for ln in ax.lines if ln.get_marker() == "*" and len(ln.get_xdata())]
    assert stars and all(ln.get_xdata()[0] == pytest.approx(1015.0) for ln in stars)  # 1.5% of 0..1000
    assert "final evaluation" in [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close("all")


def test_the_ratings_title_is_short_and_its_meaning_a_line_below():
    from rummy_env.eval.cli import render
    from rummy_env.eval.tournament import run_tournament

    res = run_tournament(["random", "greedy"], rules="classic", deals=1, seed=0, matches=False)
    text = render(res)
    lines = [ln.strip() for ln in text.splitlines()]
    assert "ratings (Elo)" in lines or "ratings (OpenSkill)" in lines
    assert ("Elo: a Bradley-Terry fit of the results, mean 1500" in lines
            or "OpenSkill: Plackett-Luce; ordinal = mu - 3 sigma, the ranking's key" in lines)
    assert not any(ln.startswith("ratings (") and not ln.endswith(")") for ln in lines)  # not wrapped


# ------------------------------------------------------------------ 16. a missing extra

@pytest.mark.parametrize("command,module,extra", [(["serve", "--help"], "fastapi", "serve"),
                                                  (["train", "--out", "x"], "torch", "train")])
def test_a_command_whose_extra_is_missing_says_which_to_install(command, module, extra):
    import subprocess
    import sys

    code = (f"import sys; sys.modules[{module!r}] = None\n"  # as if not installed
            f"from rummy_env.cli import main; sys.exit(main({command!r}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == (f"rummy {command[0]}: error: needs the {extra} extra ({module} is "
                                                 f"not installed): pip install 'rummy-env[{extra}]'"), r.stderr


def test_ctrl_c_of_rummy_train_during_the_warm_start_and_resume_from_the_command_line(tmp_path):
    """As a user meets it: SIGINT to ``rummy train`` while the warm start fits (its fit
    made long on purpose), exit 130 with the checkpoint named; ``--resume`` on it finishes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    run = tmp_path / "run"
    ws = ["--set", "warmstart_decisions=1500", "--set", "warmstart_epochs=200", "--set", "warmstart_dagger_rounds=1",
          "--set", "warmstart_dagger_decisions=1000", "--set", "warmstart_dagger_epochs=1"]
    common = ["--timesteps", "128", "--workers", "1", "--set", "n_envs=8", "--set", "n_steps=16", "--set",
              "batch_size=64", "--set", "net_arch=[16]", "--eval-every", "0", "--set", "final_eval_deals=2",
              "--set", "eval_baselines=['random']", *ws]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "rummy_env.cli", "train", "--out", str(run), *common]
    # SIGINT's default action in the child: a pytest-xdist worker ignores SIGINT, a child
    # inherits that, and Python then installs no KeyboardInterrupt handler
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    for line in p.stdout:  # the plan line comes before the warm start; the fit of 200 epochs takes several seconds
        lines.append(line)
        if line.startswith("[plan] first a warm start"):
            time.sleep(3)
            p.send_signal(signal.SIGINT)
            break
    out = "".join(lines) + p.stdout.read()
    assert p.wait(timeout=120) == 130, out
    ck = run / "checkpoints" / "warm_start"
    assert f"checkpoint saved to {ck}; resume with --resume {ck}" in out, out
    assert (ck / "warm_start.pt").is_file()
    done = subprocess.run([sys.executable, "-m", "rummy_env.cli", "train", "--out", str(tmp_path / "again"),
                           "--resume", str(ck), *common], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[done] wrote final_model.zip" in done.stdout
    assert (tmp_path / "again" / "final_model.zip").is_file()
