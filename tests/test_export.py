"""Issue 6: `rummy export` (policy.onnx + spec.json), parity of onnxruntime with
torch on real observations, and the torch-free OnnxAgent."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from extras import needs

from policy_helpers import tiny_policy
from rummy_env import SingleAgentEnv, rummy_v0
from rummy_env.actions import ACTION_TEXTS, NUM_ACTIONS
from rummy_env.cli import main as rummy
from rummy_env.observation import layout, obs_size

REPO = Path(__file__).resolve().parent.parent
MASK_FILL = -1e9


@pytest.fixture(scope="module")
def pol():
    return tiny_policy()


def play_observations(model, n=1000, seed=1):
    """``n`` (observation, mask) pairs met by the model's sampled play in SingleAgentEnv games."""
    env = SingleAgentEnv(seed=seed)
    obs_l, mask_l = [], []
    ep = 0
    obs, _ = env.reset(seed=seed)
    while len(obs_l) < n:
        mask = env.action_masks()
        obs_l.append(obs)
        mask_l.append(mask.astype(np.int8))
        a, _ = model.predict(obs, action_masks=mask, deterministic=False)
        obs, _, done, _, _ = env.step(int(a))
        if done:
            ep += 1
            obs, _ = env.reset(seed=seed + ep)
    return np.stack(obs_l).astype(np.float32), np.stack(mask_l)


def torch_logits(model, obs):
    """SB3's own actor path (extract_features -> forward_actor -> action_net), unmasked; for a
    policy with a discard head (train/policy.py), the head's 52 scores (its ``discard_scorer``
    on the observation and its card features) added here to the ``discard <card>`` logits,
    ids ``DISCARD_BASE`` + card (SB3's path alone leaves them out). Not the policy's own
    ``_heads``: the export is checked against the rule, not against the code it exports."""
    import torch

    from rummy_env.actions import DISCARD_BASE

    p = model.policy
    with torch.no_grad():
        t = torch.as_tensor(obs)
        latent = p.mlp_extractor.forward_actor(p.extract_features(t, p.pi_features_extractor))
        logits = p.action_net(latent).numpy()
        scorer = getattr(p, "discard_scorer", None)
        if scorer is not None:
            assert not p.bf16, "a loaded policy runs in float32 (the export's precision)"
            full = p.features_extractor.core(t.float())  # the observation and its card features
            logits[:, DISCARD_BASE:DISCARD_BASE + 52] += scorer(full).numpy()
        return logits


def session(export_dir):
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    return ort.InferenceSession(str(export_dir / "policy.onnx"), sess_options=o, providers=["CPUExecutionProvider"])


def test_parity_on_1000_observations_from_play(pol):
    model = pol["model"]
    obs, masks = play_observations(model, 1000)
    assert len({o.tobytes() for o in obs}) > 500  # real, varied positions (both phases)
    assert masks[:, :2].any() and masks[:, 2:].any()
    sess = session(pol["export"])
    ml, act = sess.run(["masked_logits", "action"], {"observation": obs, "action_mask": masks})
    assert ml.dtype == np.float32 and ml.shape == (1000, NUM_ACTIONS)
    assert act.dtype == np.int64 and act.shape == (1000,)

    ref = np.where(masks != 0, torch_logits(model, obs), MASK_FILL)
    np.testing.assert_allclose(ml, ref, rtol=0, atol=1e-5)
    assert np.all(ml[masks == 0] == np.float32(MASK_FILL))
    # SB3's own masked greedy choice
    sb3_actions, _ = model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    np.testing.assert_array_equal(act, sb3_actions)
    assert np.all(masks[np.arange(1000), act] == 1)  # always legal
    # illegal actions get probability exactly 0 from the graph's output
    z = ml.astype(np.float64) - ml.max(axis=1, keepdims=True)
    prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    assert np.all(prob[masks == 0] == 0.0)
    # the batch axis is dynamic: one at a time gives the same answers
    for i in range(0, 1000, 97):
        l1, a1 = sess.run(None, {"observation": obs[i:i + 1], "action_mask": masks[i:i + 1]})
        assert a1.shape == (1,) and a1[0] == act[i]
        np.testing.assert_allclose(l1[0], ml[i], rtol=0, atol=1e-6)


def test_spec_json_describes_the_graph_layout_rules_and_actions(pol):
    import onnx

    spec = json.loads((pol["export"] / "spec.json").read_text())
    assert spec["env"] == "rummy_v0"
    # no rummy_config.json beside the zip: classic, and it says so
    assert spec["rules"]["json"] == "classic" and spec["rules"]["preset"] == "classic"
    assert "no rummy_config.json" in spec["rules"]["source"]
    assert spec["rules"]["options"]["num_players"] == 2 and spec["rules"]["options"]["target"] == 100
    n = obs_size(2)
    assert spec["observation"]["size"] == n == pol["model"].observation_space.shape[0]
    pieces = spec["observation"]["pieces"]
    assert [(p["name"], p["offset"], p["shape"][0], p["meaning"]) for p in pieces] == list(layout(2))
    off = 0
    for p in pieces:  # contiguous, covering the whole vector
        assert p["offset"] == off and p["meaning"]
        off += p["shape"][0]
    assert off == n
    # the layout decodes a real observation: the hand plane is the seat's hand
    e = rummy_v0.raw_env()
    e.reset(seed=4)
    ob = e.observe(e.agent_selection)["observation"]
    hand = next(p for p in pieces if p["name"] == "hand")
    cards = [spec["cards"]["texts"][c] for c in np.flatnonzero(ob[hand["offset"]:hand["offset"] + 52])]
    assert sorted(cards) == sorted(e.state_dict()["hands"][e.agent_name_mapping[e.agent_selection]])
    # the action table
    table = spec["actions"]["table"]
    assert spec["actions"]["num_actions"] == NUM_ACTIONS == len(table)
    assert [t["id"] for t in table] == list(range(NUM_ACTIONS))
    assert [t["text"] for t in table] == list(ACTION_TEXTS[:NUM_ACTIONS])  # a standard table: ids 0..578
    for t in table[::37]:
        assert e.action_id(t["text"]) == t["id"]
    # inputs and outputs agree with the graph itself
    m = onnx.load(str(pol["export"] / "policy.onnx"))
    elem = {1: "float32", 3: "int8", 7: "int64"}

    def io(vs):
        return [{"name": v.name, "dtype": elem[v.type.tensor_type.elem_type],
                 "shape": [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]} for v in vs]

    strip = lambda lst: [{k: d[k] for k in ("name", "dtype", "shape")} for d in lst]  # noqa: E731
    assert io(m.graph.input) == strip(spec["inputs"]) == [
        {"name": "observation", "dtype": "float32", "shape": ["batch", n]},
        {"name": "action_mask", "dtype": "int8", "shape": ["batch", NUM_ACTIONS]},
    ]
    assert io(m.graph.output) == strip(spec["outputs"]) == [
        {"name": "masked_logits", "dtype": "float32", "shape": ["batch", NUM_ACTIONS]},
        {"name": "action", "dtype": "int64", "shape": ["batch"]},
    ]
    assert spec["mask_fill"] == MASK_FILL


def test_rules_read_from_rummy_config_json(pol, tmp_path):
    from rummy_env.train.export import export_policy

    run = tmp_path / "run"
    run.mkdir()
    z = run / "policy.zip"
    z.write_bytes(pol["zip"].read_bytes())
    (run / "rummy_config.json").write_text(json.dumps({"rules": {"preset": "turnover", "aces": "either"}}))
    spec = export_policy(z, tmp_path / "out")
    assert spec["rules"]["json"] == {"preset": "turnover", "aces": "either"}
    assert spec["rules"]["options"]["recycle"] == "turn_over" and spec["rules"]["options"]["aces"] == "either"
    assert spec["rules"]["source"].endswith("rummy_config.json")
    assert json.loads((tmp_path / "out" / "spec.json").read_text())["rules"] == spec["rules"]
    # rules for 3 players do not fit a 2-player policy; bad config files are named
    for cfg, needle in (({"rules": {"preset": "turnover", "num_players": 3}}, "observation shape"),
                        ({"rules": "nope"}, "unknown rules preset"), ({"x": 1}, "no 'rules' key")):
        (run / "rummy_config.json").write_text(json.dumps(cfg))
        with pytest.raises(ValueError, match=needle):
            export_policy(z, tmp_path / "out2")
    (run / "rummy_config.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        export_policy(z, tmp_path / "out2")


def test_rummy_export_missing_or_corrupt_source_is_a_clear_error(tmp_path, capsys, monkeypatch):
    needs("sb3_contrib")
    import rummy_env.train.export as export

    cases = []
    cases.append((str(tmp_path / "nothere.zip"), "does not exist"))
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"this is not a zip file at all")
    cases.append((str(junk), "not an SB3 zip"))
    notsb3 = tmp_path / "notsb3.zip"
    with zipfile.ZipFile(notsb3, "w") as zf:
        zf.writestr("readme.txt", "hello")
    cases.append((str(notsb3), "cannot load"))
    from rummy_env.agents import shipped

    monkeypatch.setattr(shipped, "FOLDER", str(tmp_path / "agents" / "pretrained"))  # a broken install
    cases.append(("pretrained", "no pretrained policy is shipped"))
    for source, needle in cases:
        assert rummy(["export", source, "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rummy export: error:") and needle in err, (source, err)
        assert "Traceback" not in err
    assert not (tmp_path / "o" / "policy.onnx").exists()


# ---------------------------------------------------------------------------- OnnxAgent

def test_onnx_agent_matches_the_policy_in_a_torchless_process(pol, tmp_path):
    model = pol["model"]
    obs, masks = play_observations(model, 40, seed=7)
    np.save(tmp_path / "obs.npy", obs)
    np.save(tmp_path / "masks.npy", masks)
    code = f"""
import sys
sys.modules["torch"] = None          # any `import torch` now fails
sys.modules["stable_baselines3"] = None
sys.modules["sb3_contrib"] = None
import numpy as np
from rummy_env.agents.onnx_agent import OnnxAgent
a = OnnxAgent({str(pol["export"])!r}, seed=3)
obs = np.load({str(tmp_path / "obs.npy")!r}); masks = np.load({str(tmp_path / "masks.npy")!r})
acts = [a.act(o, m) for o, m in zip(obs, masks)]
# a whole hand against random moves, from the env's own observations
from rummy_env import rummy_v0
e = rummy_v0.env(); e.reset(seed=5)
rng = np.random.default_rng(0)
steps = 0
for agent in e.agent_iter():
    ob, r, term, trunc, info = e.last()
    if term or trunc:
        e.step(None); continue
    if agent == "player_0":
        act = a.act(ob["observation"], ob["action_mask"])
        assert ob["action_mask"][act] == 1
    else:
        act = int(rng.choice(np.flatnonzero(ob["action_mask"])))
    e.step(act); steps += 1
print(acts)
print(steps)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    expect, _ = model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    assert json.loads(lines[0]) == [int(x) for x in expect]
    assert int(lines[1]) > 10


def test_importing_onnx_agent_and_serve_does_not_import_torch():
    needs("fastapi")
    needs("onnxruntime")
    code = ("import sys, rummy_env.agents.onnx_agent, rummy_env.frontends.serve; "
            "bad = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]; "
            "print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_onnx_agent_errors_name_what_is_missing_or_corrupt(pol, tmp_path):
    from rummy_env.agents.onnx_agent import OnnxAgent

    with pytest.raises(ValueError, match="does not exist"):
        OnnxAgent(str(tmp_path / "nowhere"))
    d = tmp_path / "p"
    d.mkdir()
    (d / "spec.json").write_bytes((pol["export"] / "spec.json").read_bytes())
    with pytest.raises(ValueError, match="policy.onnx is missing"):
        OnnxAgent(str(d))
    (d / "policy.onnx").write_bytes(b"\x08\x01garbage, not a model")
    with pytest.raises(ValueError, match="policy.onnx is corrupt"):
        OnnxAgent(str(d))
    (d / "policy.onnx").write_bytes((pol["export"] / "policy.onnx").read_bytes())
    OnnxAgent(str(d))  # whole again
    (d / "spec.json").unlink()
    with pytest.raises(ValueError, match="spec.json is missing"):
        OnnxAgent(str(d))
    (d / "spec.json").write_text("{ truncated")
    with pytest.raises(ValueError, match="spec.json is corrupt"):
        OnnxAgent(str(d))
    (d / "spec.json").write_text(json.dumps({"env": "rummy_v0"}))
    with pytest.raises(ValueError, match="spec.json is corrupt"):
        OnnxAgent(str(d))
    # a good agent rejects wrong shapes and an empty mask
    a = OnnxAgent(str(pol["export"]))
    with pytest.raises(ValueError, match="observation must have shape"):
        a.act(np.zeros(10, np.float32), np.ones(NUM_ACTIONS, np.int8))
    from rummy_env.observation import obs_size
    with pytest.raises(ValueError, match="trained for a 2-player standard table, and this observation is from a 3-player standard table"):
        a.act(np.zeros(obs_size(3), np.float32), np.ones(NUM_ACTIONS, np.int8))
    with pytest.raises(ValueError, match="no legal action"):
        a.act(np.zeros(a.obs_dim, np.float32), np.zeros(NUM_ACTIONS, np.int8))


def test_make_agent_loads_the_export(pol):
    from rummy_env.agents import make_agent

    e = rummy_v0.raw_env()
    e.reset(seed=2)
    ob = e.observe(e.agent_selection)
    a = make_agent(f"onnx:{pol['export']}", seed=0)
    expect, _ = pol["model"].predict(ob["observation"], action_masks=ob["action_mask"].astype(bool), deterministic=True)
    assert a.act(ob["observation"], ob["action_mask"]) == int(expect)


def test_save_slim_keeps_the_weights_and_drops_the_optimizer_and_rollout_state(pol, tmp_path):
    """A shipped policy is a run's zip without the Adam moments and the last rollout's
    observations: the same weights (so the same moves), a fresh optimizer, no `_last_obs`."""
    import torch

    from rummy_env.train.export import load_model, save_slim

    src = load_model(pol["zip"])
    assert src._last_obs is not None and src.policy.optimizer.state_dict()["state"]  # a trained run's zip
    dest = tmp_path / "slim" / "policy.zip"
    size = save_slim(pol["zip"], dest)
    assert size == dest.stat().st_size < Path(pol["zip"]).stat().st_size
    with zipfile.ZipFile(dest) as z:
        data = json.loads(z.read("data"))
    assert "_last_obs" not in data and "ep_info_buffer" not in data and "policy_class" in data
    slim = load_model(dest)
    assert slim._last_obs is None and not slim.policy.optimizer.state_dict()["state"]
    a, b = src.policy.state_dict(), slim.policy.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    obs, masks = play_observations(src, n=200)
    for o, m in zip(obs, masks):
        m = m.astype(bool)
        assert slim.predict(o, action_masks=m, deterministic=True)[0] == src.predict(o, action_masks=m, deterministic=True)[0]
    # and it trains on: learn() deals afresh where the slim zip has no last observations
    slim.set_env(SingleAgentEnv(seed=0))
    slim.learn(64, reset_num_timesteps=False)
    assert slim.num_timesteps == src.num_timesteps + 64 and slim._last_obs is not None
    with pytest.raises(ValueError, match="does not exist"):
        save_slim(tmp_path / "missing.zip", tmp_path / "out.zip")
    assert not (tmp_path / "out.zip").exists()
