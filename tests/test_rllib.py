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

rllib = pytest.importorskip("rummy_env.train.rllib", reason="ray[rllib] is not installed (the rllib extra)")
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

    # a 512-step batch (256 learner decisions); a snapshot after the first iteration
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
        assert t.state["iteration"] == 3 and t.state["num_timesteps"] > 0
        assert len(t.state["slots"]) >= 1  # a snapshot was taken (and played against)
        ck = t.last_checkpoint
        steps = t.state["num_timesteps"]
        x = torch.rand(16, 548) * 2
        logits = t.actor()(x).detach()
    finally:
        t.stop()
    assert ck == run / "checkpoints" / "iter_3" and (ck / "rummy_state.json").is_file()
    assert report["results"]["random"]["games"] == 6
    for f in ("config.toml", "rummy_config.json", "report.json", "report.md", "progress.jsonl"):
        assert (run / f).is_file(), f
    assert len((run / "progress.jsonl").read_text().splitlines()) == 3

    # restore: same weights and step count, and training continues from there
    t2 = rllib.RLlibTrainer(small_config(run, timesteps=steps + 1), resume=str(ck), num_env_runners=1, verbose=0)
    try:
        assert t2.state["num_timesteps"] == steps and t2.state["iteration"] == 3
        assert torch.allclose(t2.actor()(x), logits)
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

    # the export plays only legal moves in the tournament
    player = LegalOnly(agent)
    res = evaluate(player, "random", deals=5)
    assert res["games"] == 10 and player.moves > 0 and player.illegal == 0


def test_rummy_export_of_a_folder_that_is_no_rllib_checkpoint(tmp_path, capsys):
    from rummy_env.cli import main as rummy

    (tmp_path / "ck").mkdir()
    assert rummy(["export", str(tmp_path / "ck"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "not an RLlib checkpoint" in err and "Traceback" not in err


def test_policy_mapping_follows_the_pool_semantics():
    """Per hand: one learner seat, the same table for every seat of a hand, opponent kinds
    in proportion to the weights, snapshots only once one exists, the newest favoured."""
    m = pytest.importorskip("rummy_env.train.rllib_modules")
    w = {"snapshot": 0.5, "random": 0.05, "greedy": 0.2, "heuristic": 0.25}
    rng = np.random.default_rng(0)
    kinds = {}
    for _ in range(4000):
        table = m.table_for(rng, 2, w, 0.5, [])
        assert table.count("learner") == 1
        for mid in table:
            kinds[mid] = kinds.get(mid, 0) + 1
    assert not any(k.startswith("snapshot") for k in kinds)  # none stored yet
    counts = {}
    for _ in range(4000):
        for mid in m.table_for(rng, 3, w, 0.5, [1, 0]):  # slot 0 is the newest
            counts[mid] = counts.get(mid, 0) + 1
    assert counts["learner"] == 4000
    assert counts["snapshot_0"] > counts["snapshot_1"] * 2  # 0.5 + 0.25 vs 0.25
    assert abs(counts["snapshot_0"] + counts["snapshot_1"] - 4000) < 200  # half of 8000 seats
    assert abs(counts["random"] - 400) < 100

    class Ep:
        id_ = "abc123"

    seats = [m.agent_to_module(f"player_{i}", Ep(), num_players=4, weights=w) for i in range(4)]
    assert seats == [m.agent_to_module(f"player_{i}", Ep(), num_players=4, weights=w) for i in range(4)]
    assert seats.count("learner") == 1


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


@pytest.mark.parametrize("reward", ["points", "win"])
def test_rllib_env_pays_points_or_the_sign_of_them(reward):
    m = pytest.importorskip("rummy_env.train.rllib_modules")
    env = m.RummyMultiAgentEnv({"rules": "classic", "reward_scale": 1.0, "reward": reward})
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    total = {}
    for _ in range(5000):
        (agent, o), = obs.items()
        legal = np.flatnonzero(o["action_mask"])
        obs, rew, term, trunc, _ = env.step({agent: int(rng.choice(legal))})
        for k, v in rew.items():
            total[k] = total.get(k, 0.0) + v
        if term.get("__all__") or trunc.get("__all__"):
            break
    assert term.get("__all__") or trunc.get("__all__")
    vals = sorted(total.values())
    if reward == "win":
        assert vals in ([-1.0, 1.0], [0.0, 0.0])  # one seat went out, or a void hand
    else:
        assert vals[0] == -vals[1]  # zero-sum points
    with pytest.raises(ValueError, match="reward must be points or win"):
        m.RummyMultiAgentEnv({"reward": "score"})


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
