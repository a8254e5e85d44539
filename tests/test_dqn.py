"""The Tianshou DQN reference algorithm (rummy_env.train.dqn): a short run writes dqn.pt
and calls evaluate, the greedy agent never picks a masked action, the ONNX export
plays the same moves, bad hyper-parameters are refused, the mask holds in training,
and a seed fixes the run."""
from __future__ import annotations

import numpy as np
import pytest

import importlib.util  # noqa: E402

if importlib.util.find_spec("tianshou") is None:  # not importorskip: importing tianshou would import Ray
    pytest.skip("needs the benchmark extra (tianshou): pip install -e '.[benchmark]'", allow_module_level=True)
torch = pytest.importorskip("torch", reason="needs the train extra: pip install -e '.[train]'")

from rummy_env import Rules, SingleAgentEnv  # noqa: E402
from rummy_env.agents import make_agent, table_misfit  # noqa: E402
from rummy_env.train import dqn  # noqa: E402
from rummy_env.train.dqn import DEFAULT_HYPER, DQNAgent, export_onnx, train_dqn  # noqa: E402

CLASSIC = Rules.preset("classic")
# small and fast: 8 games, updates from step 256 on
FAST = dict(n_envs=8, collect_steps=64, learning_starts=256, batch_size=64, buffer_size=5_000)


@pytest.fixture(autouse=True)
def one_torch_thread():
    # small forward passes on 2 shared cores: one thread is many times faster (train_dqn sets its own)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("dqn")
    calls, ticks = [], []

    def evaluate(agent, t, wall):
        calls.append((agent, t, wall))

    res = train_dqn(CLASSIC, 2000, 3, out, eval_every=1024, evaluate=evaluate, progress=ticks.append, **FAST)
    return {"out": out, "res": res, "calls": calls, "ticks": ticks}


def test_short_run_writes_the_model_and_evaluates_at_the_end(trained):
    res, calls = trained["res"], trained["calls"]
    assert set(res) == {"timesteps", "wall_time_s", "hyper", "library", "library_version", "model_path"}
    assert res["timesteps"] == 2000 and res["library"] == "tianshou"
    import tianshou

    assert res["library_version"] == tianshou.__version__
    assert set(res["hyper"]) == set(DEFAULT_HYPER) and res["hyper"]["batch_size"] == 64
    assert res["model_path"] == str(trained["out"] / "dqn.pt") and (trained["out"] / "dqn.pt").is_file()
    # once past 1024 steps, once at the end
    assert [t for _, t, _ in calls] == [1024, 2000]
    assert all(isinstance(a, DQNAgent) for a, _, _ in calls)
    assert calls[0][2] <= calls[1][2] and res["wall_time_s"] >= calls[1][2] - 1e-6
    assert trained["ticks"][-1] == 2000
    # the final agent is the saved one; the mid-run one is a snapshot of its own
    final, loaded = calls[-1][0], DQNAgent.load(res["model_path"])
    obs = np.random.default_rng(0).random((5, final.obs_dim), dtype=np.float32)
    np.testing.assert_allclose(final.q_values(obs), loaded.q_values(obs), rtol=0, atol=1e-6)
    assert not np.allclose(calls[0][0].q_values(obs), final.q_values(obs))
    assert table_misfit(loaded, CLASSIC) is None and (loaded.obs_dim, loaded.num_actions) == (548, 579)
    assert DQNAgent.load(trained["out"]).config["rules"] == CLASSIC.to_json()  # the folder works too


def test_agent_never_picks_a_masked_action():
    torch.manual_seed(0)
    agent = DQNAgent(dqn.build_net(548, 579, [32, 32]), 548, 579)
    rng = np.random.default_rng(1)
    for i in range(300):
        obs = rng.random(548, dtype=np.float32)
        mask = (rng.random(579) < rng.choice([0.002, 0.02, 0.3, 0.9])).astype(np.int8)
        if not mask.any():
            mask[rng.integers(579)] = 1
        a = agent.act(obs, mask)
        assert mask[a] == 1
        q = agent.q_values(obs)
        assert q[a] == q[mask == 1].max()  # the best legal Q-value
    masks = (rng.random((20, 579)) < 0.05).astype(bool)
    masks[:, 7] = True
    acts = agent.act_batch(rng.random((20, 548), dtype=np.float32), masks)
    assert acts.dtype == np.int64 and masks[np.arange(20), acts].all()
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(np.zeros(548, np.float32), np.zeros(579, np.int8))
    with pytest.raises(ValueError, match="shape"):
        agent.act(np.zeros(100, np.float32), np.ones(579, np.int8))
    agent.seed(5)  # accepted


def _game_observations(agent, n=50, seed=11):
    env = SingleAgentEnv(CLASSIC, opponents=make_agent("heuristic", seed=seed), seed=seed)
    obs, _ = env.reset()
    out = []
    while len(out) < n:
        mask = env.action_masks().astype(np.int8)
        out.append((obs, mask))
        obs, _, done, trunc, _ = env.step(agent.act(obs, mask))
        if done or trunc:
            obs, _ = env.reset()
    return out


def test_onnx_export_plays_the_same_moves(trained, tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    agent = DQNAgent.load(trained["res"]["model_path"])
    spec = export_onnx(trained["res"]["model_path"], tmp_path / "onnx", CLASSIC)
    assert (tmp_path / "onnx" / "policy.onnx").is_file() and (tmp_path / "onnx" / "spec.json").is_file()
    assert spec["observation"]["size"] == 548 and spec["actions"]["num_actions"] == 579
    onnx_agent = make_agent("onnx:" + str(tmp_path / "onnx"))
    pairs = _game_observations(agent)
    for obs, mask in pairs:
        assert onnx_agent.act(obs, mask) == agent.act(obs, mask)
    obs = np.stack([o for o, _ in pairs])
    masks = np.stack([m for _, m in pairs])
    logits, _ = onnx_agent.evaluate(obs, masks)
    q = agent.q_values(obs)
    np.testing.assert_allclose(logits[masks == 1], q[masks == 1], rtol=1e-4, atol=1e-4)  # Q-values are the logits
    assert (logits[masks == 0] == -1e9).all()
    # rules taken from dqn.pt; rules of another table are refused
    assert export_onnx(trained["out"], tmp_path / "onnx2", None)["rules"]["json"] == CLASSIC.to_json()
    with pytest.raises(ValueError, match="do not match"):
        export_onnx(trained["res"]["model_path"], tmp_path / "onnx3", Rules.make("turnover", num_players=3))


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="'bogus_key'") as e:
        train_dqn(CLASSIC, 100, 0, tmp_path, bogus_key=1)
    assert "learning_rate" in str(e.value) and "allowed keys" in str(e.value)
    for bad in (dict(timesteps=0), dict(timesteps=1.5), dict(timesteps=True), dict(seed=-1), dict(seed="0")):
        kw = {"timesteps": 100, "seed": 0, **bad}
        with pytest.raises(ValueError, match=next(iter(bad))):
            train_dqn(CLASSIC, kw["timesteps"], kw["seed"], tmp_path)
    for key, value in (("batch_size", 0), ("gamma", 1.5), ("learning_rate", -1e-4), ("collect_steps", 60),
                       ("hidden_sizes", []), ("opponents", {"search": 1.0}), ("huber_delta", 0)):
        with pytest.raises(ValueError, match=key):
            train_dqn(CLASSIC, 100, 0, tmp_path, **{key: value})
    with pytest.raises(ValueError, match="does not exist"):
        DQNAgent.load(tmp_path / "missing.pt")
    assert not (tmp_path / "dqn.pt").exists()


def test_the_mask_holds_during_training():
    h = dqn.resolve_hyper(dict(FAST, n_envs=4, collect_steps=32))
    run = dqn.build_training(CLASSIC, 0, h)
    from tianshou.utils.torch_utils import policy_within_training_step

    with policy_within_training_step(run["policy"]):
        for eps in (1.0, 0.3, 0.0):  # random legal moves, a mix, the untrained net's greedy moves
            run["policy"].set_eps_training(eps)
            run["collector"].collect(n_step=600)
        for _ in range(5):
            run["algorithm"].update(buffer=run["buffer"], sample_size=64)
    buf = run["buffer"]
    idx = buf.sample_indices(0)
    assert len(idx) == 1800
    mask, act = buf.obs.mask[idx], buf.act[idx]
    assert mask.dtype == np.int8 and (mask[np.arange(len(idx)), act] == 1).all()
    assert not buf.info.illegal_action[idx].any()
    assert sum(e.illegal_actions for e in run["envs"]) == 0
    assert (buf.obs_next.mask[idx][buf.terminated[idx]] == 0).all()  # no move after the hand
    # the wrapper's mask is the env's own
    e = run["envs"][0]
    o, _ = e.reset()
    np.testing.assert_array_equal(o["mask"], e.env.action_masks().astype(np.int8))
    assert run["venv"].close() is None


def test_opponents_follow_the_mixture():
    kinds = dqn.opponent_kinds(10, {"random": 0.1, "greedy": 0.4, "heuristic": 0.5}, seed=0)
    flat = [k for ks in kinds for k in ks]
    assert sorted(flat) == sorted(["random"] + ["greedy"] * 4 + ["heuristic"] * 5)
    assert kinds == dqn.opponent_kinds(10, {"random": 0.1, "greedy": 0.4, "heuristic": 0.5}, seed=0)
    assert len(dqn.opponent_kinds(3, {"greedy": 1.0}, seed=1, seats=2)[2]) == 2


def test_a_seed_fixes_the_run(tmp_path):
    kw = dict(FAST, learning_starts=128)
    a = train_dqn(CLASSIC, 640, 7, tmp_path / "a", **kw)
    b = train_dqn(CLASSIC, 640, 7, tmp_path / "b", evaluate=lambda *_: np.random.random(10), eval_every=64, **kw)
    c = train_dqn(CLASSIC, 640, 8, tmp_path / "c", **kw)
    sd = [torch.load(r["model_path"], weights_only=True)["state_dict"] for r in (a, b, c)]
    assert all(torch.equal(sd[0][k], sd[1][k]) for k in sd[0])  # evaluating changes nothing
    assert not all(torch.equal(sd[0][k], sd[2][k]) for k in sd[0])
