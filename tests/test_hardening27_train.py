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
