"""A run resumed from a checkpoint written between two rollouts equals the run that was
not interrupted (same machine): the same weights to the last bit, the same pool; without
the checkpoint's games (``exact_resume.pkl``) it does not."""
from __future__ import annotations

import shutil

import pytest
import torch

from extras import needs

needs("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from rummy_env.train.config import TrainConfig  # noqa: E402
from rummy_env.train.trainer import EXACT_FILE, Trainer  # noqa: E402

ROLLOUT = 16 * 8  # n_envs x n_steps


def _config(out, workers: int) -> TrainConfig:
    return TrainConfig(rules="classic", warmstart_teacher="none", warmstart_decisions=0, timesteps=4 * ROLLOUT,
                       n_envs=16, n_steps=8, batch_size=64, workers=workers, torch_threads=1, eval_every=0,
                       final_eval_deals=1, eval_baselines=["random"], checkpoint_every=2 * ROLLOUT,
                       snapshot_every=ROLLOUT, deadwood_shaping=1.0, learning_rate=1e-3, ent_coef=0.01,
                       opponent_weights={"snapshot": 0.5, "greedy": 0.3, "random": 0.2}, trunk=32, net_arch=[32],
                       progress=False, out=str(out), precision="float32")


def _weights(run) -> dict[str, torch.Tensor]:
    return MaskablePPO.load(run / "final_model.zip", device="cpu").policy.state_dict()


def _pool_steps(ckpt) -> list[int]:
    return list(torch.load(ckpt / "pool.pt", weights_only=True)["steps"])


@pytest.mark.parametrize("workers", [1, 2])
def test_a_resumed_run_equals_the_uninterrupted_one(tmp_path, workers):
    whole = tmp_path / "whole"
    Trainer(_config(whole, workers), verbose=0).learn()
    mid = whole / "checkpoints" / f"step_{2 * ROLLOUT}"
    assert (mid / EXACT_FILE).is_file()
    assert (whole / "checkpoints" / f"step_{4 * ROLLOUT}" / EXACT_FILE).is_file()

    resumed = tmp_path / "resumed"
    Trainer(_config(resumed, workers), resume=str(mid), verbose=0).learn()
    a, b = _weights(whole), _weights(resumed)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    last = f"step_{4 * ROLLOUT}"
    assert _pool_steps(resumed / "checkpoints" / last) == _pool_steps(whole / "checkpoints" / last)
    assert len(_pool_steps(whole / "checkpoints" / last)) > len(_pool_steps(mid))  # the pool grew after the resume

    if workers == 1:  # without its games the checkpoint resumes with new deals: another run
        bare = tmp_path / "bare_ckpt"
        shutil.copytree(mid, bare)
        (bare / EXACT_FILE).unlink()
        fresh = tmp_path / "fresh"
        Trainer(_config(fresh, workers), resume=str(bare), verbose=0).learn()
        c = _weights(fresh)
        assert not all(torch.equal(a[k], c[k]) for k in a)


def test_a_checkpoints_games_need_the_same_workers(tmp_path, capsys):
    whole = tmp_path / "whole"
    cfg = _config(whole, 1)
    cfg.timesteps = 2 * ROLLOUT
    Trainer(cfg, verbose=0).learn()
    other = _config(tmp_path / "other", 2)
    other.timesteps = 3 * ROLLOUT
    Trainer(other, resume=str(whole / "checkpoints" / f"step_{2 * ROLLOUT}"), verbose=1).learn()
    out = capsys.readouterr().out
    assert "[resume] new deals" in out and "worker" in out
