"""A multi-node RLlib run (issue 26): a two-node Ray cluster on this machine's loopback,
``rummy train --backend rllib --address ...`` with one env runner placed on each node,
samples from both nodes, the result exported, both nodes stopped; every connection of
the training run on 127.0.0.0/8."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rllib  # the README's second venv (.venv-rllib) has Ray
pytest.importorskip("ray", reason="needs the rllib extra: pip install 'rummy-env[rllib]'")

HERE = Path(__file__).resolve().parent


@pytest.fixture
def two_nodes(tmp_path):
    """``tests/ray_cluster.py`` in a process of its own: (address, [head id, node 2 id])."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    err = tmp_path / "cluster.err"  # a file, not a pipe: Ray's node logs would fill a pipe and stall the nodes
    with open(err, "w") as ef:
        p = subprocess.Popen([sys.executable, str(HERE / "ray_cluster.py")], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=ef, text=True, env=env, cwd=tmp_path)
        line = p.stdout.readline()
        if not line:
            p.kill()
            pytest.skip(f"Ray could not start a two-node cluster here: {err.read_text().strip()[-400:]}")
        info = json.loads(line)
        try:
            yield info["address"], info["nodes"]
        finally:
            try:  # closing stdin makes the script shut its nodes down
                out, _ = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                raise
            assert "CLUSTER DOWN" in out, err.read_text()[-2000:]


def test_two_node_run_samples_on_both_nodes_exports_and_stays_on_loopback(two_nodes, tmp_path):
    from test_rllib import non_loopback_connects

    address, nodes = two_nodes
    assert address.startswith("127.0.0.1:") and len(set(nodes)) == 2
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "rummy_env.cli", "train", "--backend", "rllib", "--address", address,
           "--num-env-runners", "2", "--env-runner-resource", "rummy_runner=1", "--out", str(run),
           "--timesteps", "600", "--set", "n_steps=8", "--set", "n_envs=64", "--set", "batch_size=256",
           "--set", "n_epochs=1", "--set", "net_arch=[32]", "--set", "warmstart_decisions=0", "--eval-every", "0",
           "--final-eval-deals", "1", "--set", "eval_baselines=['random']", "--no-progress"]
    strace = shutil.which("strace")
    log = tmp_path / "connect.log"
    if strace:
        cmd = [strace, "-f", "-e", "trace=connect", "-o", str(log), *cmd]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    report = json.loads((run / "report.json").read_text())
    by_node = report["samples_by_node"]
    # one env runner on each node (each needs 1 of the node's single rummy_runner), both sampled
    assert set(by_node) == set(nodes), (by_node, nodes)
    assert all(steps > 0 for steps in by_node.values()), by_node
    assert "[nodes] env steps by Ray node" in p.stdout
    # the result exports as any RLlib checkpoint does
    out = tmp_path / "exported"
    e = subprocess.run([sys.executable, "-m", "rummy_env.cli", "export", report["checkpoint"], "--out", str(out)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert e.returncode == 0, e.stderr[-2000:]
    assert (out / "policy.onnx").is_file() and json.loads((out / "spec.json").read_text())["actions"]["num_actions"] == 579
    if strace:
        text = log.read_text()
        assert "connect(" in text and "127.0.0.1" in text
        bad = non_loopback_connects(text)
        assert not bad, "the training run connected outside loopback:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("items, needle", [
    (["rummy_runner"], "give NAME=AMOUNT"),
    (["=1"], "give NAME=AMOUNT"),
    (["CPU=1"], "CPU is not a custom resource"),
    (["rummy_runner=0"], "the amount must be a number > 0"),
    (["rummy_runner=nan"], "the amount must be a number > 0"),
    (["rummy_runner=x"], "the amount must be a number > 0"),
    (["a=1", "a=2"], "--env-runner-resource a is given twice"),
])
def test_env_runner_resources_are_checked(items, needle):
    from rummy_env.train.rllib import parse_resources

    with pytest.raises(ValueError, match=needle):
        parse_resources(items)
    assert parse_resources(["rummy_runner=1", "big_memory=0.5"]) == {"rummy_runner": 1.0, "big_memory": 0.5}


def test_loopback_addresses_are_told_apart():
    from rummy_env.train.rllib import loopback_address

    for a in ("127.0.0.1:6379", "127.1.2.3:1", "localhost:6379", "ray://127.0.0.1:10001", "[::1]:6379"):
        assert loopback_address(a), a
    for a in (None, "", "auto", "10.0.0.5:6379", "ray://head.example:10001", "192.0.2.2:6379"):
        assert not loopback_address(a), a
