"""RLlib backend (issue 7): train a few iterations on a local Ray, checkpoint, restore,
export, and play the export in the tournament; and Ray stays on loopback.

Skipped when ray[rllib] is not installed. Ray reads its environment when it is imported
and started, so nothing here imports ray at collection time: the fixture sets the
loopback environment (``rummy_env.train.rllib.ray_environ``) first, and restores it afterwards.
"""
from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.rllib  # run in the README's second venv (.venv-rllib), which has Ray
rllib = pytest.importorskip("rummy_env.train.rllib", reason="ray[rllib] is not installed (the rllib extra)")
pytest.importorskip("ray.rllib", reason="needs the rllib extra (ray[rllib] is not installed): "
                                         "pip install 'rummy-env[rllib]'")
from rummy_env.rules import Rules  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def ray_local(tmp_path_factory):
    """A local Ray (1 env runner + the driver) on 127.0.0.1, shut down at the end."""
    saved = {k: os.environ.get(k) for k in ("HOME", "RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")}
    rllib.ray_environ(local=True)  # before ray is imported
    ray = rllib.init_ray(None, num_cpus=2, object_store_mb=256)
    try:
        yield ray
    finally:
        ray.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def small_config(out: Path, timesteps: int):
    from rummy_env.train.config import TrainConfig

    # a 512-step batch of learner decisions (64 games x 8 steps); a snapshot after the first iteration
    return TrainConfig(out=str(out), rules="classic", timesteps=timesteps, n_steps=8, n_envs=64, batch_size=256,
                       n_epochs=1, net_arch=[64, 64], snapshot_every=200, max_snapshots=2, eval_every=0,
                       eval_baselines=["random"], final_eval_deals=3, checkpoint_every=10**9, seed=0,
                       warmstart_decisions=2000, warmstart_epochs=1, warmstart_dagger_rounds=0)


class LegalOnly:
    """Wraps an agent; records every move and whether it was legal."""

    def __init__(self, agent):
        self.agent, self.moves, self.illegal = agent, 0, 0

    def act(self, observation, action_mask):
        a = self.agent.act(observation, action_mask)
        self.moves += 1
        self.illegal += int(not action_mask[a])
        return a

    def seed(self, seed):
        pass


def onnx_signature(path: Path) -> dict:
    """What an ONNX graph looks like from outside and its shape inside: inputs and outputs
    (name, element type, dims with the named batch axis), the count of every op type and
    the sorted shapes of its weights."""
    import collections

    import onnx

    g = onnx.load(str(path)).graph

    def io(vs):
        return [(v.name, v.type.tensor_type.elem_type,
                 [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]) for v in vs]
    return {"inputs": io(g.input), "outputs": io(g.output),
            "ops": dict(collections.Counter(n.op_type for n in g.node)),
            "weights": sorted(tuple(t.dims) for t in g.initializer)}


# ---------------------------------------------------------------------------- training

def test_train_checkpoint_restore_export_and_play(ray_local, tmp_path, capsys):
    import torch

    from rummy_env.agents.onnx_agent import OnnxAgent
    from rummy_env.train.config import TrainConfig
    from rummy_env.eval.tournament import evaluate
    from rummy_env.cli import main as rummy

    run = tmp_path / "run"
    t = rllib.RLlibTrainer(small_config(run, timesteps=10**9), num_env_runners=1, verbose=0)
    try:
        ws = t.state["warm_start"]  # the heuristic was cloned into the learner before PPO
        assert ws["decisions"] == 2000 and 0 < ws["accuracy"] <= 1
        report = t.learn(max_iterations=3)
        assert t.state["iteration"] == 3 and t.state["num_timesteps"] >= 3 * 512
        # a snapshot before each iteration (every 200 steps; 2 kept, the one at 0 dropped):
        # in the driver's pool and in the env runner's env, where they play
        saved_steps = t.pool.snapshot_steps
        assert len(saved_steps) == 2 and 0 < saved_steps[0] < saved_steps[1] < t.state["num_timesteps"]
        in_runners = t.algo.env_runner_group.foreach_env_runner(
            lambda r: r.env.unwrapped.pool.snapshot_steps, local_env_runner=False)
        assert in_runners == [saved_steps]
        assert sum(t.samples_by_node().values()) == t.state["num_timesteps"]  # every step a learner decision
        ck = t.last_checkpoint
        steps = t.state["num_timesteps"]
        x = torch.rand(16, 548) * 2
        logits = t.actor()(x).detach()
    finally:
        t.stop()
    assert ck == run / "checkpoints" / "iter_3" and (ck / "rummy_state.json").is_file()
    assert report["results"]["random"]["games"] == 6
    # the report's times as the SB3 trainer's: the warm start's and the PPO phase's
    assert report["warm_start_s"] == pytest.approx(ws["collect_s"] + ws["fit_s"], abs=0.1) and report["warm_start_s"] > 0
    assert 0 < report["ppo_wall_time_s"] < report["wall_time_s"]
    # the rate is of the unrounded time; the time is written to 0.1 s (0.85 s is written 0.8, 6% off)
    wall = report["ppo_wall_time_s"]
    assert steps / (wall + 0.051) - 0.051 <= report["ppo_timesteps_per_s"] <= steps / max(wall - 0.051, 1e-9) + 0.051
    for f in ("config.toml", "rummy_config.json", "report.json", "report.md", "progress.jsonl"):
        assert (run / f).is_file(), f
    rows = [json.loads(x) for x in (run / "progress.jsonl").read_text().splitlines()]
    assert len(rows) == 3
    # the iteration's parts, as RLlib timed them: sampling and the learner's update
    assert all(r["sample_s"] > 0 and r["learn_s"] > 0 for r in rows), rows

    # restore: same weights and step count, and training continues from there
    t2 = rllib.RLlibTrainer(small_config(run, timesteps=steps + 1), resume=str(ck), num_env_runners=1, verbose=0)
    try:
        assert t2.state["num_timesteps"] == steps and t2.state["iteration"] == 3
        assert torch.allclose(t2.actor()(x), logits)
        assert t2.pool.snapshot_steps == saved_steps  # the pool came back, in the runners too
        assert t2.algo.env_runner_group.foreach_env_runner(
            lambda r: r.env.unwrapped.pool.snapshot_steps, local_env_runner=False) == [saved_steps]
        assert torch.allclose(t2.pool.snapshots[-1].net(x), t.pool.snapshots[-1].net(x))
        t2.learn(max_iterations=1)
        assert t2.state["iteration"] == 4 and t2.state["num_timesteps"] > steps
        ck2 = t2.last_checkpoint
    finally:
        t2.stop()

    # a checkpoint for other rules is refused
    with pytest.raises(ValueError, match="trained on rules"):
        rllib.check_checkpoint(ck2, Rules.make("turnover"))

    # export through the CLI: the same policy.onnx + spec.json format as an SB3 export
    out = tmp_path / "exported"
    assert rummy(["export", str(ck2), "--out", str(out)]) == 0
    spec = json.loads((out / "spec.json").read_text())
    assert spec["env"] == "rummy_v0" and spec["rules"]["preset"] == "classic"
    assert spec["rules"]["source"].endswith("rummy_config.json")
    assert [i["name"] for i in spec["inputs"]] == ["observation", "action_mask"]
    assert [o["name"] for o in spec["outputs"]] == ["masked_logits", "action"]
    agent = OnnxAgent(str(out))
    mask = np.zeros((16, 579), dtype=np.int8)
    mask[:, ::7] = 1
    ml, act = agent.evaluate(x.numpy(), mask)
    ref = rllib.load_actor(ck2)(x).detach().numpy()
    np.testing.assert_allclose(ml[mask == 1], ref[mask == 1], rtol=1e-4, atol=1e-4)
    assert (ml[mask == 0] == -1e9).all() and (mask[np.arange(16), act] == 1).all()

    # the same graph as an SB3 export of the same config given the same weights (the RLlib
    # learner's, copied into the SB3 policy): inputs, outputs, ops, weight shapes, outputs
    from ray.rllib.core.rl_module.rl_module import RLModule

    from rummy_env.train.export import export_policy
    from rummy_env.train.trainer import Trainer

    cfg = small_config(tmp_path / "sb3", timesteps=1)
    cfg.warmstart_decisions, cfg.n_envs, cfg.n_steps, cfg.progress = 0, 2, 128, False
    sb3 = Trainer(cfg, verbose=0)
    sb3.venv.close()
    module = RLModule.from_checkpoint(str(rllib.learner_module_dir(ck2).resolve()))
    sb3.model.policy.load_state_dict(module.sb3_state_dict())
    sb3_spec = export_policy(sb3.model, tmp_path / "sb3_export", rules="classic")
    sig = onnx_signature(out / "policy.onnx")
    assert sig == onnx_signature(tmp_path / "sb3_export" / "policy.onnx")
    assert [i[0] for i in sig["inputs"]] == ["observation", "action_mask"]
    assert [o[0] for o in sig["outputs"]] == ["masked_logits", "action"]
    assert sig["inputs"][0][2] == ["batch", 548] and sig["outputs"][0][2] == ["batch", 579]
    assert (1756, 256) in sig["weights"] or (256, 1756) in sig["weights"]  # card features -> trunk 256
    for key in ("inputs", "outputs", "observation", "actions", "mask_fill", "opset"):
        assert spec[key] == sb3_spec[key], key
    ml_sb3, act_sb3 = OnnxAgent(str(tmp_path / "sb3_export")).evaluate(x.numpy(), mask)
    np.testing.assert_allclose(ml_sb3, ml, rtol=1e-5, atol=1e-5)
    assert (act_sb3 == act).all()

    # the export plays only legal moves in the tournament
    player = LegalOnly(agent)
    res = evaluate(player, "random", deals=5)
    assert res["games"] == 10 and player.moves > 0 and player.illegal == 0


@pytest.fixture
def rllib_env():
    """The loopback environment set before ray is imported (no Ray is started), restored after."""
    saved = {k: os.environ.get(k) for k in ("HOME", "RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")}
    rllib.ray_environ(local=True)
    try:
        yield pytest.importorskip("rummy_env.train.rllib_modules")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def sb3_and_rllib_networks(tmp_path: Path, precision: str = "float32", **net):
    """The SB3 trainer's policy and the RLlib learner module ``build_config`` specifies,
    both built from one ``TrainConfig`` with the network keys ``net``, in float32 (the
    RLlib learner's precision; ``precision = "auto"`` would run the SB3 policy's layers
    in bfloat16 on a CPU that has it)."""
    from rummy_env import rummy_v0
    from rummy_env.train.config import TrainConfig
    from rummy_env.train.trainer import Trainer

    cfg = TrainConfig(out=str(tmp_path / "sb3"), rules="classic", n_envs=2, n_steps=64, batch_size=64, workers=1, warmstart_decisions=0,
                      eval_every=0, progress=False, seed=0, precision=precision, **net)
    t = Trainer(cfg, verbose=0)
    t.venv.close()
    env = rummy_v0.env(rules="classic")
    spec = rllib.build_config(cfg, t.rules).rl_module_spec
    spec.observation_space, spec.action_space = env.observation_space("player_0"), env.action_space("player_0")
    return t.model.policy, spec.build()


@pytest.fixture(scope="module")
def positions():
    """Real positions (observations, masks, the heuristic's actions, returns) of seeded hands."""
    from rummy_env.train.warmstart import collect

    return collect(Rules.make("classic"), "heuristic", 1500, seed=5)


@pytest.mark.parametrize("net", [dict(features="cards", trunk=64, net_arch=[64, 32]),
                                 dict(features="cards", trunk=0, net_arch=[32]),
                                 dict(features="none", trunk=0, net_arch=[32, 32])])
def test_rllib_module_is_the_sb3_network(rllib_env, tmp_path, positions, net):
    """Same layers, names and shapes; same weights give the same logits, log-probabilities
    and values on real observations, copied either way; the exported actor is SB3's."""
    import torch
    from ray.rllib.core.columns import Columns

    from rummy_env.agents.masking import MASK_FILL
    from rummy_env.train.pool import ActorNet
    from rummy_env.train.warmstart import sb3_forward

    m = rllib_env
    policy, module = sb3_and_rllib_networks(tmp_path, **net)
    assert isinstance(module, m.CardPPOTorchRLModule)
    theirs = {k: tuple(v.shape) for k, v in policy.state_dict().items()
              if not k.startswith(("pi_features_extractor.", "vf_features_extractor."))}
    assert {k: tuple(v.shape) for k, v in module.state_dict().items()} == theirs
    assert any(k.startswith("features_extractor.trunk.") for k in theirs) == (net["trunk"] > 0)
    obs_np, masks_np, actions_np, _ = positions
    obs, masks, actions = torch.as_tensor(obs_np), torch.as_tensor(masks_np), torch.as_tensor(actions_np)

    def same_outputs():
        with torch.no_grad():
            ref_logits, ref_values = sb3_forward(policy)(obs)
            logits, values = module.logits_and_values(obs)
            torch.testing.assert_close(logits, ref_logits, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(values, ref_values, rtol=1e-5, atol=1e-5)
            batch = {Columns.OBS: {"observation": obs, "action_mask": torch.as_tensor(masks_np.astype(np.int8))}}
            out = module.forward_train(batch)
            ref_v, ref_logp, _ = policy.evaluate_actions(obs, actions, masks)
            logp = torch.log_softmax(out[Columns.ACTION_DIST_INPUTS], dim=-1).gather(1, actions[:, None])[:, 0]
            torch.testing.assert_close(logp, ref_logp, rtol=1e-5, atol=1e-5)
            assert (out[Columns.ACTION_DIST_INPUTS][~masks] == MASK_FILL).all()
            torch.testing.assert_close(module.compute_values(batch, out[Columns.EMBEDDINGS]), ref_v[:, 0])
            torch.testing.assert_close(module.compute_values(batch), ref_v[:, 0])
            inf = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
            torch.testing.assert_close(inf, out[Columns.ACTION_DIST_INPUTS])
            assert isinstance(batch[Columns.OBS], dict) and batch[Columns.OBS]["observation"] is obs
            torch.testing.assert_close(module.actor_net()(obs), ActorNet.from_policy(policy)(obs))
        return logits

    before = module.logits(obs).detach()
    module.load_sb3_policy(policy)  # SB3 -> RLlib
    first = same_outputs()
    assert not torch.allclose(before, first)  # the copy did change the module
    with torch.no_grad():  # RLlib -> SB3: new weights in the module, copied back
        for p in module.parameters():
            p.add_(0.05 * torch.randn_like(p))
    policy.load_state_dict(module.sb3_state_dict())
    assert not torch.allclose(same_outputs(), first)


def test_rllib_module_in_bfloat16_computes_what_the_sb3_policy_does(rllib_env, tmp_path, positions):
    """``precision = "bfloat16"``: the RLlib module's sampling, training and value passes
    run under the same autocast as SB3's ``FastMaskablePolicy`` (its log-probabilities and
    values, from the same weights), and differ from the float32 ones; the warm start's and
    the export's float32 paths are left alone."""
    import torch
    from ray.rllib.core.columns import Columns

    policy, module = sb3_and_rllib_networks(tmp_path, precision="bfloat16")
    assert module.bf16 and policy.bf16
    module.load_sb3_policy(policy)
    obs_np, masks_np, actions_np, _ = positions
    obs, masks, actions = torch.as_tensor(obs_np), torch.as_tensor(masks_np), torch.as_tensor(actions_np)
    batch = {Columns.OBS: {"observation": obs, "action_mask": torch.as_tensor(masks_np.astype(np.int8))}}
    with torch.no_grad():
        out = module.forward_train(batch)
        ref_v, ref_logp, _ = policy.evaluate_actions(obs, actions, masks)
        logits = out[Columns.ACTION_DIST_INPUTS]
        assert logits.dtype == torch.float32
        logp = torch.log_softmax(logits, dim=-1).gather(1, actions[:, None])[:, 0]
        torch.testing.assert_close(logp, ref_logp, rtol=0, atol=0)
        values = module.compute_values(batch, out[Columns.EMBEDDINGS])
        assert values.dtype == torch.float32
        torch.testing.assert_close(values, ref_v[:, 0], rtol=0, atol=0)
        torch.testing.assert_close(module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS], logits, rtol=0, atol=0)
        f32 = torch.log_softmax(module.logits(obs).masked_fill(~masks, -1e9), dim=-1).gather(1, actions[:, None])[:, 0]
        assert not torch.equal(f32, logp)  # the float32 path (warm start, export) is another arithmetic
        torch.testing.assert_close(f32, logp, rtol=0.05, atol=0.05)


def test_rllib_module_starts_as_sb3_does_and_refuses_another_network(rllib_env, tmp_path):
    """With the same torch seed a fresh module has the SB3 policy's initial weights (SB3's
    construction order and orthogonal init); a policy of another shape is refused."""
    import torch

    from rummy_env import rummy_v0
    from rummy_env.train.features import CardFeatures
    from rummy_env.train.policy import FastMaskablePolicy
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    m = rllib_env
    env = rummy_v0.env(rules="classic")
    spaces = dict(observation_space=env.observation_space("player_0"), action_space=env.action_space("player_0"))
    torch.manual_seed(3)
    table = {"num_players": 2, "kind": "standard"}
    module = RLModuleSpec(module_class=m.CardPPOTorchRLModule, model_config={"features": "cards", "trunk": 32,
                                                                             "net_arch": [16], **table}, **spaces).build()
    torch.manual_seed(3)
    policy = FastMaskablePolicy(spaces["observation_space"]["observation"], spaces["action_space"], lambda _: 1e-3,
                                net_arch=dict(pi=[16], vf=[16]), features_extractor_class=CardFeatures,
                                features_extractor_kwargs=dict(cards=True, trunk=32))
    sd = module.state_dict()
    for k, v in sd.items():
        assert torch.equal(v, policy.state_dict()[k]), k
    # orthogonal rows of the action head, scaled by 0.01 (SB3's gain)
    w = sd["action_net.weight"]
    torch.testing.assert_close(w.T @ w, 1e-4 * torch.eye(16), rtol=0, atol=1e-6)
    other = FastMaskablePolicy(spaces["observation_space"]["observation"], spaces["action_space"], lambda _: 1e-3,
                               net_arch=dict(pi=[8], vf=[8]), features_extractor_class=CardFeatures,
                               features_extractor_kwargs=dict(cards=True, trunk=32))
    with pytest.raises(ValueError, match="network differs"):
        module.load_sb3_policy(other)
    for bad, match in (({"features": "meld"}, "features must be"), ({"trunk": -1}, "trunk must be"),
                       ({"net_arch": []}, "net_arch must be"), ({"trunk": 32}, "needs the table")):
        with pytest.raises(ValueError, match=match):
            RLModuleSpec(module_class=m.CardPPOTorchRLModule, model_config=bad, **spaces).build()


def test_warm_start_clones_the_same_on_both_backends(rllib_env, tmp_path, positions):
    """``warmstart.fit`` from the same weights on the same positions: the same losses,
    accuracy and final weights for the SB3 policy and the RLlib module."""
    import torch

    from rummy_env.train.warmstart import agreement, clone, fit

    policy, module = sb3_and_rllib_networks(tmp_path, features="cards", trunk=64, net_arch=[64])
    module.load_sb3_policy(policy)
    obs, masks, actions, returns = positions
    acc0 = agreement(module.logits_and_values, obs, masks, actions)
    ref = clone(policy, obs, masks, actions, returns, epochs=2, batch_size=256, seed=1)
    module.train()
    got = fit(list(module.parameters()), module.logits_and_values, obs, masks, actions, returns, epochs=2,
              batch_size=256, seed=1)
    module.eval()
    for k in ("policy_loss", "value_loss", "accuracy"):
        assert got[k] == pytest.approx(ref[k], rel=1e-4, abs=1e-5), k
    assert got["accuracy"] > acc0 + 0.2  # it did learn the teacher
    theirs = policy.state_dict()
    for k, v in module.state_dict().items():
        torch.testing.assert_close(v, theirs[k], rtol=1e-4, atol=1e-5)


def test_projected_rate_by_hand():
    # 4,096 learner steps an iteration, 500 a second per runner, a 2 s update: one runner
    # samples for 8.192 s, so 4096 / 10.192 = 401.9/s; four runners 4096 / (2.048 + 2) =
    # 1011.9/s; the learner's bound is 4096 / 2 = 2048/s
    assert rllib.projected_rate(4096, 500, 1, 2.0) == pytest.approx(4096 / 10.192)
    assert rllib.projected_rate(4096, 500, 4, 2.0) == pytest.approx(4096 / 4.048)
    assert rllib.projected_rate(4096, 500, 10**6, 2.0) == pytest.approx(2048, rel=1e-3)
    assert rllib.projected_rate(4096, 500, 2, 1.5, 0.5) == pytest.approx(4096 / (4.096 + 2.0))
    for bad in ((0, 500, 1, 2.0), (4096, 0, 1, 2.0), (4096, 500, 0, 2.0), (4096, 500, 1, -1.0)):
        with pytest.raises(ValueError):
            rllib.projected_rate(*bad)
    assert rllib.iteration_parts({"timers": {"env_runner_sampling_timer": 3.25, "learner_update_timer": 1.5,
                                             "synch_weights": float("nan")}}) == {"sample_s": 3.25, "learn_s": 1.5}


def test_rummy_export_of_a_folder_that_is_no_rllib_checkpoint(tmp_path, capsys):
    from rummy_env.cli import main as rummy

    (tmp_path / "ck").mkdir()
    assert rummy(["export", str(tmp_path / "ck"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "not an RLlib checkpoint" in err and "Traceback" not in err


def test_a_checkpoint_of_the_multi_agent_runners_is_not_resumed_but_its_module_is_found(tmp_path):
    """rummy-env 0.1.0's RLlib checkpoints hold the learner as module "learner" beside the
    snapshot modules; this version's runners have one module ("default_policy") and keep
    the snapshots in the env: resuming one is refused with the reason, its module is still
    found for export."""
    ck = tmp_path / "iter_3"
    (ck / "learner_group" / "learner" / "rl_module" / "learner").mkdir(parents=True)
    (ck / "rummy_state.json").write_text(json.dumps({"num_timesteps": 10}))
    (ck / "rummy_config.json").write_text(json.dumps({"rules": Rules.make("classic").to_json()}))
    with pytest.raises(ValueError, match="multi-agent env runners of rummy-env 0.1.0.*cannot resume"):
        rllib.check_checkpoint(ck)
    assert rllib.learner_module_dir(ck).name == "learner"
    assert rllib.check_checkpoint(ck, resume=False) == {"num_timesteps": 10}  # what `rummy export` checks
    (ck / "learner_group" / "learner" / "rl_module" / "default_policy").mkdir()
    with pytest.raises(ValueError, match="missing rummy_pool.pt"):
        rllib.check_checkpoint(ck)
    (ck / "rummy_pool.pt").write_bytes(b"")
    assert rllib.check_checkpoint(ck) == {"num_timesteps": 10}
    assert rllib.learner_module_dir(ck).name == "default_policy"


def test_the_runners_share_the_configs_games_and_the_batch_is_whole_fragments():
    from rummy_env.train.config import TrainConfig

    cfg = TrainConfig(n_envs=256, n_steps=16)
    assert [rllib.runner_games(cfg, r) for r in (1, 2, 3, 300)] == [256, 128, 86, 1]
    # 4,096 learner steps: 16 steps of 256 games; 8 games: 512 steps each, in 6 fragments of 86
    assert rllib.fragment_length(4096, 256) == 16
    assert rllib.fragment_length(4096, 8) == 86 and 86 * 6 * 8 >= 4096
    assert rllib.fragment_length(4096, 2 * 128) == 16


# ---------------------------------------------------------------------------- loopback

_AF_INET = re.compile(r'sa_family=AF_INET,.*?sin_addr=inet_addr\("([^"]+)"\)')
_AF_INET6 = re.compile(r'sa_family=AF_INET6,.*?inet_pton\(AF_INET6, "([^"]+)"')


def non_loopback_connects(strace_text: str) -> list[str]:
    """The ``connect`` lines of an ``strace -f -e trace=connect`` log that go to an
    address outside 127.0.0.0/8 and ::1 (an IPv4-mapped ::ffff:127.x counts as
    loopback). AF_UNIX, AF_NETLINK and AF_UNSPEC are local."""
    bad = []
    for line in strace_text.splitlines():
        if "connect(" not in line or "AF_INET" not in line:
            continue
        m4, m6 = _AF_INET.search(line), _AF_INET6.search(line)
        if m4:
            ok = ipaddress.IPv4Address(m4.group(1)).is_loopback
        elif m6:
            ip = ipaddress.IPv6Address(m6.group(1))
            ok = ip.is_loopback or (ip.ipv4_mapped is not None and ip.ipv4_mapped.is_loopback)
        else:
            ok = False  # an AF_INET line we cannot read: count it
        if not ok:
            bad.append(line.strip())
    return bad


def test_loopback_checker_flags_outside_addresses():
    lines = [
        '12 connect(5, {sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
        '12 connect(6, {sa_family=AF_INET6, sin6_port=htons(1), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
        '12 connect(7, {sa_family=AF_UNIX, sun_path="/tmp/ray/session/sockets/raylet"}, 110) = 0',
        '13 connect(8, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("8.8.8.8")}, 16) = 0',
        '13 connect(9, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("169.254.169.254")}, 16) = -1',
        '13 connect(9, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = -1',
        '13 connect(9, {sa_family=AF_INET, sin_port=htons(42073), sin_addr=inet_addr("192.0.2.2")}, 16) = 0',
    ]
    bad = non_loopback_connects("\n".join(lines))
    assert [b.split("(", 1)[1][:2] for b in bad] == ["8,", "9,", "9,", "9,"]


def test_ray_started_by_the_trainer_connects_only_to_loopback(tmp_path):
    """A tiny Ray start through ``rummy_env.train.rllib.init_ray`` (the trainer's own path) under
    ``strace -f -e trace=connect``: every connection of every process goes to
    127.0.0.1 / ::1 or a Unix socket."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed (apt-get install -y strace)")
    script = tmp_path / "tiny_ray.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from rummy_env.train.rllib import init_ray
        ray = init_ray(None, num_cpus=1, object_store_mb=96)

        @ray.remote
        def plus_one(x):
            return x + 1

        @ray.remote
        class Counter:
            def __init__(self):
                self.n = 0

            def add(self):
                self.n += 1
                return self.n

        assert ray.get(plus_one.remote(1)) == 2
        c = Counter.remote()
        assert ray.get([c.add.remote() for _ in range(3)])[-1] == 3
        ray.shutdown()
        print("TINY RAY OK")
    """))
    log = tmp_path / "connect.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "HOME"}
    env["HOME"] = str(tmp_path / "home")  # a HOME without ray_bootstrap_config.yaml
    (tmp_path / "home").mkdir()
    p = subprocess.run([strace, "-f", "-e", "trace=connect", "-o", str(log), sys.executable, str(script)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    if p.returncode != 0 and "ptrace" in (p.stderr or "") and not log.exists():
        pytest.skip(f"strace cannot trace here: {p.stderr.strip()[:200]}")
    assert p.returncode == 0 and "TINY RAY OK" in p.stdout, p.stderr[-3000:]
    text = log.read_text()
    assert "connect(" in text and "127.0.0.1" in text  # the trace did see Ray's own connections
    bad = non_loopback_connects(text)
    assert not bad, "Ray connected outside loopback:\n" + "\n".join(bad[:20])


def test_benchmark_train_rllib_smoke(ray_local, tmp_path):
    # rummy benchmark train --algo rllib-ppo at one 512-step iteration, inside this module's Ray
    from test_benchmark_train import check_smoke_run

    check_smoke_run(tmp_path, "rllib-ppo")


def test_bench_train_measures_both_backends_the_same_way(ray_local, tmp_path, capsys):
    """Issue 26 item 3: ``rummy bench train --backend sb3 rllib`` trains the same config on
    both backends (here a tiny one, the pool full from the start) and prints RLlib's rate as
    a share of SB3's; the RLlib row's env runner holds every snapshot."""
    from rummy_env.cli import main as rummy

    out = tmp_path / "both.json"
    code = rummy(["bench", "train", "--backend", "sb3", "rllib", "--workers", "1", "--full-pool", "--timesteps",
                  "1024", "--n-envs", "32", "--set", "n_steps=16", "--set", "batch_size=256", "--set",
                  "max_snapshots=3", "--set", "net_arch=[32]", "--set", "trunk=32", "--json", str(out)])
    assert code == 0
    rows = json.loads(out.read_text())
    assert [(r["backend"], r["workers"]) for r in rows] == [("sb3", 1), ("rllib", 1)]
    sb3, rl = rows
    assert sb3["timesteps"] == 1024 and rl["timesteps"] >= 1024  # RLlib ends on a whole iteration
    assert rl["pool_size"] == 3 and rl["games_per_runner"] == 32
    assert 0 < rl["update_share"] < 1 and 0 < rl["rollout_share"] < 1
    assert rl["config"] == sb3["config"]  # the same network and PPO settings
    text = capsys.readouterr().out
    ratio = rl["timesteps_per_s"] / sb3["timesteps_per_s"]
    assert f"rllib / sb3 (best of each): {ratio:.0%}" in text


def test_build_config_maps_the_train_config_as_sb3_reads_it(rllib_env):
    """The train batch is SB3's rollout in learner decisions, the games are shared among
    the runners, no KL penalty (SB3's PPO has none), the pool's keys reach the runners'
    env and the precision both the module and the env."""
    from rummy_env.train.config import TrainConfig

    rules = Rules.make("classic")
    cfg = TrainConfig(n_envs=256, n_steps=16, batch_size=2048, n_epochs=2, snapshot_rotation=1000,
                      precision="bfloat16", max_snapshots=5, latest_prob=0.4)
    c = rllib.build_config(cfg, rules, num_env_runners=2)
    assert (c.train_batch_size_per_learner, c.minibatch_size, c.num_epochs) == (4096, 2048, 2)
    assert c.use_kl_loss is False
    assert (c.num_env_runners, c.num_envs_per_env_runner, c.rollout_fragment_length) == (2, 128, 16)
    assert c.gym_env_vectorize_mode == "vector_entry_point"
    env = c.env_config
    assert (env["max_snapshots"], env["latest_prob"]) == (5, 0.4) and "precision" not in env  # snapshots: float32
    assert env["rotate_steps"] == 8  # 1,000 learner steps over 128 games a vector step, rounded up
    assert env["opponent_weights"] == cfg.opponent_weights
    assert c.rl_module_spec.model_config["precision"] == "bfloat16"
    c1 = rllib.build_config(cfg, rules, num_env_runners=1, envs_per_env_runner=8)
    assert (c1.num_envs_per_env_runner, c1.rollout_fragment_length) == (8, 86)


def test_the_rllib_backend_refuses_a_discard_head(rllib_env, tmp_path):
    """``discard_head = "cards"`` is a network of the SB3 backend only: refused before any work."""
    from rummy_env.train.config import TrainConfig

    cfg = TrainConfig(out=str(tmp_path / "r"), discard_head="cards", warmstart_decisions=0, progress=False)
    with pytest.raises(ValueError, match="discard_head 'cards' is a network of the SB3 backend only"):
        rllib.RLlibTrainer(cfg, verbose=0)
    assert not (tmp_path / "r").exists()
