"""The discard head (``discard_head = "cards"``, train/features.py ``CardDiscardHead``): one
scorer shared by the 52 cards whose scores are added to the ``discard <card>`` logits. Its
inputs checked against a hand worked out by hand; every place that computes a policy's
logits (the SB3 policy, its distribution, the snapshot net, the warm start's forward, the
incremental snapshots, the ONNX graph) computes the same ones; the config's errors; a dense
policy loaded into a network with the head plays as before."""
from __future__ import annotations

import re

import numpy as np
import pytest

from extras import needs

torch = needs("torch")
needs("sb3_contrib")

from rummy_env import Rules  # noqa: E402
from rummy_env.actions import DISCARD_BASE, MELD_BASE  # noqa: E402
from rummy_env.cards import CARD_TEXT, parse_card  # noqa: E402
from rummy_env.observation import obs_size, offsets  # noqa: E402
from rummy_env.table import Table  # noqa: E402
from rummy_env.train.config import TrainConfig  # noqa: E402
from rummy_env.train.features import (CardDiscardHead, CardFeatures, CardMeldFeatures,  # noqa: E402
                                      add_discard_scores, card_neighbours)
from rummy_env.train.pool import ActorNet  # noqa: E402

OFF = offsets(2)


def test_neighbours_are_the_rank_mates_and_the_suit_cards_two_either_side_around_the_corner():
    nb = card_neighbours()
    names = lambda c: [CARD_TEXT[int(x)] for x in nb[parse_card(c)]]  # noqa: E731
    assert names("2C") == ["2C", "2D", "2H", "2S", "KC", "AC", "3C", "4C"]
    assert names("KH") == ["KH", "KC", "KD", "KS", "JH", "QH", "AH", "2H"]
    assert names("7S") == ["7S", "7C", "7D", "7H", "5S", "6S", "8S", "9S"]


def test_a_cards_inputs_are_the_planes_at_it_and_its_neighbours():
    """Hand AC 2C 3C KC 2H, upcard 4C: card 2C's row holds the hand plane at 2C 2D 2H 2S KC
    AC 3C 4C = 1 0 1 0 1 1 1 0 and the upcard plane 0 0 0 0 0 0 0 1; its rank one-hot is 2;
    the rest of the observation (the scalars) and the two loose counts follow, the same
    for every card."""
    o = np.zeros(obs_size(2), dtype=np.float32)
    for c in ("AC", "2C", "3C", "KC", "2H"):
        o[parse_card(c)] = 1
    o[OFF["upcard"].start + parse_card("4C")] = 1
    o[OFF["rule_aces"].start] = 1  # aces low
    o[OFF["stock_size"].start] = 0.5
    core = CardMeldFeatures(o.size, 2, "standard")
    head = CardDiscardHead(core)
    full = core(torch.as_tensor(o[None]))
    x = head.inputs(full)[0]
    planes = head.planes + head.feature_planes
    assert head.planes == 10 and head.feature_planes == 23
    assert x.shape == (52, 8 * planes + (o.size - 52 * 10) + 12 + 13) == (52, 317)
    row = x[parse_card("2C")]
    near = row[: 8 * planes].reshape(planes, 8)
    assert near[0].tolist() == [1, 0, 1, 0, 1, 1, 1, 0]   # the hand plane
    assert near[1].tolist() == [0, 0, 0, 0, 0, 0, 0, 1]   # the upcard plane
    # feature plane 5 (in_set of the hand: none) and 6 (in_run: AC 2C 3C)
    assert near[10 + 6].tolist() == [1, 0, 0, 0, 0, 1, 1, 0]
    rest = row[8 * planes: 8 * planes + (o.size - 520)]
    assert rest[OFF["stock_size"].start - 520] == 0.5 and rest.tolist() == o[520:].tolist()
    assert row[-13:].tolist() == [0, 1] + [0] * 11
    assert torch.equal(x[:, 8 * planes:-13], x[:1, 8 * planes:-13].expand(52, -1))
    with torch.no_grad():  # forward computes the net of these inputs without building them
        for p in head.parameters():
            p.normal_(0, 0.2)
        torch.testing.assert_close(head(full), head.net(head.inputs(full)).squeeze(-1), atol=1e-5, rtol=0)


def test_the_stock_head_reads_the_stock_size_as_steps():
    """``"cards+stock"``: the rest of each card's row ends with 52 steps ``stock_size > k``;
    a stock of 23 cards (23/52 in the observation) sets steps 0..22 and no other, 0 cards
    none, a two-deck stock of 60 all 52; everything before them is the plain head's row."""
    o = np.zeros((4, obs_size(2)), dtype=np.float32)
    o[:, OFF["rule_aces"].start] = 1
    for i, n in enumerate((23, 22, 0, 60)):
        o[i, OFF["stock_size"].start] = n / 52
    core = CardMeldFeatures(o.shape[1], 2, "standard")
    plain, steps = CardDiscardHead(core), CardDiscardHead(core, stock_steps=True)
    full = core(torch.as_tensor(o))
    x, y = plain.inputs(full), steps.inputs(full)
    assert y.shape == (4, 52, x.shape[2] + 52)
    cut = x.shape[2] - 13                           # the rank one-hot comes last in both
    assert torch.equal(y[:, :, :cut], x[:, :, :cut]) and torch.equal(y[:, :, -13:], x[:, :, -13:])
    got = y[:, 0, cut:cut + 52]
    assert got[0].tolist() == [1.0] * 23 + [0.0] * 29
    assert got[1].tolist() == [1.0] * 22 + [0.0] * 30
    assert got[2].tolist() == [0.0] * 52 and got[3].tolist() == [1.0] * 52
    assert torch.equal(y[:, 1:, cut:cut + 52], got[:, None].expand(4, 51, 52))
    with torch.no_grad():
        for p in steps.parameters():
            p.normal_(0, 0.2)
        torch.testing.assert_close(steps(full), steps.net(steps.inputs(full)).squeeze(-1), atol=1e-5, rtol=0)


def test_scores_go_to_the_discard_ids_only():
    for n in (579, 631):
        logits = torch.arange(2 * n, dtype=torch.float32).reshape(2, n)
        scores = torch.arange(104, dtype=torch.float32).reshape(2, 52) + 1000
        out = add_discard_scores(logits, scores)
        assert torch.equal(out[:, :DISCARD_BASE], logits[:, :DISCARD_BASE])
        assert torch.equal(out[:, MELD_BASE:], logits[:, MELD_BASE:])
        assert torch.equal(out[:, DISCARD_BASE:MELD_BASE], logits[:, DISCARD_BASE:MELD_BASE] + scores)
    assert add_discard_scores(logits, None) is logits


def _policy(discard_head: bool | str, seed: int = 0):
    from sb3_contrib import MaskablePPO

    from rummy_env.single_agent import SingleAgentEnv
    from rummy_env.train.policy import FastMaskablePolicy

    pk = dict(net_arch=dict(pi=[32], vf=[32]), features_extractor_class=CardFeatures,
              features_extractor_kwargs=dict(trunk=16, num_players=2, kind="standard", discard_head=discard_head))
    return MaskablePPO(FastMaskablePolicy, SingleAgentEnv(seed=0), policy_kwargs=pk, seed=seed).policy


def _positions(n: int = 24, seed: int = 3):
    from rummy_env import rummy_v0
    from rummy_env.agents import make_agent

    env, agent = rummy_v0.env(rules="classic"), make_agent("heuristic", seed=0)
    env.reset(seed=seed)
    obs, masks = [], []
    for _ in env.agent_iter():
        o, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(agent.act(o["observation"], o["action_mask"]))
        if len(obs) == n:
            break
    return torch.as_tensor(np.stack(obs)), np.stack(masks)


def _randomize(policy) -> None:
    with torch.no_grad():
        for p in policy.features_extractor.discard_scorer.net[-1].parameters():
            p.normal_(0, 0.5)


@pytest.mark.parametrize("head", [True, "cards+stock"])
def test_a_new_head_starts_at_zero_and_then_adds_its_scores_to_the_discard_logits_everywhere(head):
    dense, scored = _policy(False), _policy(head)
    assert scored.features_extractor.discard_scorer.stock_steps == (head == "cards+stock")
    sd = scored.state_dict()
    assert torch.count_nonzero(scored.features_extractor.discard_scorer.net[-1].weight) == 0  # SB3's init undone
    scored.load_state_dict({**sd, **{k: v for k, v in dense.state_dict().items() if k in sd}})
    obs, masks = _positions()
    with torch.no_grad():
        np.testing.assert_array_equal(scored._heads(obs)[0].numpy(), dense._heads(obs)[0].numpy())
        _randomize(scored)
        logits, values = scored._heads(obs)
        base, base_values = dense._heads(obs)
        fx = scored.features_extractor
        scores = fx.discard_scorer(fx.core(obs))
        torch.testing.assert_close(logits[:, DISCARD_BASE:MELD_BASE], base[:, DISCARD_BASE:MELD_BASE] + scores)
        assert torch.equal(logits[:, MELD_BASE:], base[:, MELD_BASE:]) and torch.equal(values, base_values)
        assert float(scores.abs().max()) > 0.1
        norm = logits - torch.logsumexp(logits, 1, keepdim=True)
        dist = scored.get_distribution(obs).distribution.logits
        torch.testing.assert_close(dist, norm, atol=1e-5, rtol=0)
        torch.testing.assert_close(ActorNet.from_policy(scored)(obs), logits, atol=1e-5, rtol=0)
        from rummy_env.train.warmstart import sb3_forward

        f = sb3_forward(scored)
        torch.testing.assert_close(f(obs)[0], logits, atol=1e-5, rtol=0)
        torch.testing.assert_close(f.head(obs, f.fixed(obs))[0], logits, atol=1e-5, rtol=0)
        torch.testing.assert_close(scored._heads(scored.with_card_features(obs))[0], logits)  # the update's input
        half = ActorNet.from_policy(scored).use_bf16()(obs)
        assert float((half - logits).abs().max()) < 0.1  # bfloat16: about 3 significant digits
    # the masked policy's actions are the masked argmax
    acts, _, _ = scored(obs, deterministic=True, action_masks=masks)
    want = np.where(masks > 0, logits.numpy(), -np.inf).argmax(1)
    assert acts.numpy().tolist() == want.tolist()


def test_the_update_scores_only_the_rows_where_a_discard_is_legal_and_loses_nothing():
    """A row without a legal discard has its discard logits masked out: leaving them
    unscored changes no legal log-probability, entropy or gradient."""
    policy = _policy(True)
    _randomize(policy)
    obs, masks = _positions(40)
    has_discard = masks[:, DISCARD_BASE:DISCARD_BASE + 52].any(1)
    assert 0 < has_discard.sum() < len(has_discard)  # draws and discards both in the batch
    full = policy.with_card_features(obs)
    m = torch.as_tensor(masks, dtype=torch.bool)
    acts = torch.as_tensor([int(np.flatnonzero(r)[-1]) for r in masks])  # a legal action each
    fx = policy.features_extractor

    def every_row():  # the scores of every row, then masking: the reference
        latent_pi, latent_vf = policy.mlp_extractor(fx(full))
        logp, _ = policy._log_probs(fx.scored(policy.action_net(latent_pi), full), m)
        return policy.value_net(latent_vf), logp

    seen = []
    hook = fx.discard_scorer.register_forward_hook(lambda mod, args, out: seen.append(args[0].shape[0]))
    values, log_prob, entropy = policy.evaluate_actions(full, acts, m)
    hook.remove()
    assert seen == [int(has_discard.sum())]  # the head ran on the discard rows alone
    (log_prob.sum() + entropy.sum() + values.sum()).backward()
    grads = [p.grad.clone() for p in fx.discard_scorer.parameters()]
    policy.zero_grad()
    with torch.no_grad():
        ref_values, ref_all = every_row()
    torch.testing.assert_close(log_prob, ref_all.gather(-1, acts[:, None]).squeeze(-1))
    torch.testing.assert_close(values, ref_values)
    # the reference's entropy (over the legal actions) and the same total's gradient
    ref_values, ref_logp = every_row()
    ref_ent = -torch.where(m, ref_logp.exp() * ref_logp, torch.zeros_like(ref_logp)).sum(-1)
    torch.testing.assert_close(entropy, ref_ent)
    (ref_logp.gather(-1, acts[:, None]).sum() + ref_ent.sum() + ref_values.sum()).backward()
    for got, want in zip(grads, (p.grad for p in fx.discard_scorer.parameters())):
        torch.testing.assert_close(got, want)
    assert float(grads[-2].abs().max()) > 0  # the head is trained by the discard rows
    # the rollout's sampled actions come from the same distribution: argmax agrees
    acts_fast, _, _ = policy(full, deterministic=True, action_masks=masks)
    want = np.where(masks > 0, ref_logp.detach().numpy(), -np.inf).argmax(1)
    assert acts_fast.numpy().tolist() == want.tolist()


@pytest.mark.parametrize("head", [True, "cards+stock"])
def test_the_onnx_graph_has_the_heads_scores(tmp_path, head):
    needs("onnxruntime", "export")
    import onnxruntime as ort

    from rummy_env.train.export import _onnx_module, export_graph_onnx

    policy = _policy(head)
    _randomize(policy)
    obs, masks = _positions()
    path = tmp_path / "p.onnx"
    export_graph_onnx(_onnx_module(policy), obs.shape[1], path, masks.shape[1])
    out, act = ort.InferenceSession(str(path)).run(None, {"observation": obs.numpy(),
                                                           "action_mask": masks.astype(np.int8)})
    with torch.no_grad():
        want = policy._heads(obs)[0].numpy()
    legal = masks > 0
    np.testing.assert_allclose(out[legal], want[legal], atol=1e-4, rtol=0)
    assert act.tolist() == np.where(legal, want, -np.inf).argmax(1).tolist()


@pytest.mark.parametrize("head", [True, "cards+stock"])
def test_a_snapshot_with_a_discard_head_is_rebuilt_from_its_spec(head):
    """How worker processes get a snapshot: ``ActorNet(**spec)`` and its state dict give the
    same logits, the discard head included (the stacked snapshots' moves against the whole
    forward pass: tests/test_incremental.py); ``from_policy`` names the head's kind."""
    table = Table.of(Rules.preset("classic"))
    torch.manual_seed(0)
    net = ActorNet(table.obs_size, [16], table.num_actions, features="cards", trunk=24, num_players=2,
                   kind=table.kind, discard_head=head)
    with torch.no_grad():
        net.discard_scorer.net[-1].weight.normal_(0, 0.5)
    assert net.spec["discard_head"] == head
    assert ActorNet.from_policy(_policy(head)).spec["discard_head"] == head
    again = ActorNet(**net.spec)
    again.load_state_dict(net.state_dict())
    obs, _ = _positions(6)
    with torch.no_grad():
        assert torch.equal(again(obs), net(obs))
        plain = net.action_net(net.policy_net(net.features(obs)))
        assert float((net(obs) - plain)[:, DISCARD_BASE:MELD_BASE].abs().max()) > 0.1
    assert "discard_head" not in ActorNet(table.obs_size, [16], table.num_actions, features="cards", trunk=24,
                                          num_players=2, kind=table.kind).spec


def test_discard_head_errors():
    with pytest.raises(ValueError, match="discard_head must be one of 'dense', 'cards', 'cards\\+stock', got 'card'"):
        TrainConfig(discard_head="card").validate()
    for head in ("cards", "cards+stock"):
        with pytest.raises(ValueError, match=f"discard_head '{re.escape(head)}' .* needs features 'cards', 'cards\\+jokers' "
                                             "or 'cards\\+plan', not 'none'"):
            TrainConfig(discard_head=head, features="none").validate()
        TrainConfig(discard_head=head).validate()
    import gymnasium as gym

    space = gym.spaces.Box(-np.inf, np.inf, (obs_size(2),), np.float32)
    with pytest.raises(ValueError, match="discard_head=True .* needs cards=True"):
        CardFeatures(space, cards=False, trunk=8, discard_head=True)
    with pytest.raises(ValueError, match="discard_head must be False, True, 'cards' or 'cards\\+stock', got 'stock'"):
        CardFeatures(space, trunk=8, discard_head="stock")
    with pytest.raises(ValueError, match="discard_head=True .* needs features"):
        ActorNet(obs_size(2), [8], 579, features="none", discard_head=True)


def test_a_dense_policy_gets_a_head_at_zero_and_a_headed_one_is_refused_by_a_dense_config(tmp_path):
    from rummy_env.agents import make_agent
    from rummy_env.train.trainer import Trainer

    base = dict(timesteps=64, n_envs=4, n_steps=16, batch_size=64, n_epochs=1, workers=1, snapshot_every=64,
                eval_every=0, checkpoint_every=10_000, final_eval_deals=1, eval_deals=1, eval_baselines=["random"],
                progress=False, warmstart_decisions=0, warmstart_teacher="none")
    dense = Trainer(TrainConfig(**base, out=str(tmp_path / "d"), trunk=32, net_arch=[16]), verbose=0)
    try:  # a dense policy (the default discard_head): its fresh weights, saved as a zip
        dense.model.save(str(tmp_path / "dense.zip"))
    finally:
        dense.venv.close()
    dense_policy = make_agent(f"ppo:{tmp_path / 'dense.zip'}").policy
    tr = Trainer(TrainConfig(**base, out=str(tmp_path / "a"), init_policy=str(tmp_path / "dense.zip"),
                             discard_head="cards", trunk=32, net_arch=[16]), verbose=0)
    try:
        mine, theirs = tr.model.policy.state_dict(), dense_policy.state_dict()
        assert {k for k in mine if k not in theirs} == {k for k in mine if "discard_scorer." in k} != set()
        assert all(torch.equal(mine[k], theirs[k]) for k in theirs)
        obs, _ = _positions(8)
        tr.model.policy.bf16 = False  # the run's precision "auto" may be bfloat16; the loaded zip runs in float32
        with torch.no_grad():
            torch.testing.assert_close(tr.model.policy._heads(obs)[0], dense_policy._heads(obs)[0])
        path = tmp_path / "headed.zip"
        tr.model.save(str(path))
    finally:
        tr.venv.close()
    with pytest.raises(ValueError, match="has a discard head .* set discard_head as it was trained"):
        Trainer(TrainConfig(**base, out=str(tmp_path / "b"), init_policy=str(path)), verbose=0)
    assert not (tmp_path / "b").exists()
    # refused into a run folder that exists: its config files are left as they were
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "config.toml").write_text("# the run's own config\n")
    with pytest.raises(ValueError, match="has a discard head"):
        Trainer(TrainConfig(**base, out=str(kept), init_policy=str(path)), verbose=0)
    assert (kept / "config.toml").read_text() == "# the run's own config\n"
    assert not (kept / "rummy_config.json").exists()


def test_a_checkpoint_of_another_network_is_not_resumed(tmp_path):
    """``--resume`` trains the checkpoint's model: a config naming another network (which
    would be written to the run's config.toml but not trained) is refused, naming the keys."""
    from rummy_env.train.trainer import CheckpointError, Trainer, load_checkpoint

    cfg = dict(timesteps=128, n_envs=8, n_steps=16, batch_size=64, n_epochs=1, workers=1, net_arch=[32],
               trunk=16, snapshot_every=128, eval_every=0, checkpoint_every=10_000, final_eval_deals=1,
               eval_deals=1, eval_baselines=["random"], progress=False, warmstart_decisions=0,
               eval_mode="hands")  # the final evaluation: one hand, not an untrained policy's long match
    rep = Trainer(TrainConfig(**cfg, out=str(tmp_path / "run"), discard_head="cards"), verbose=0).learn()
    ck = tmp_path / "run" / "checkpoints" / f"step_{rep['timesteps']}"
    rules = Rules.preset("classic")
    load_checkpoint(ck, TrainConfig(**cfg, out=str(tmp_path / "run"), discard_head="cards"), rules)  # the same: fine
    with pytest.raises(CheckpointError, match=r"another network: discard_head 'cards' \(this config: 'dense'\); "
                                              r"resume with the run's own config"):
        load_checkpoint(ck, TrainConfig(**cfg, out=str(tmp_path / "run")), rules)
    with pytest.raises(CheckpointError, match=r"net_arch \[32\] \(this config: \[64\]\)"):
        load_checkpoint(ck, TrainConfig(**{**cfg, "net_arch": [64]}, out=str(tmp_path / "run"), discard_head="cards"),
                        rules)


def test_rummy_train_with_the_rllib_backend_refuses_a_discard_head_before_anything_else(tmp_path, capsys):
    """Refused before Ray is imported or its extra asked for (with or without the extra)."""
    from rummy_env.cli import main as rummy

    out = tmp_path / "rl"
    assert rummy(["train", "--backend", "rllib", "--set", 'discard_head="cards"', "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "discard_head 'cards' is a network of the SB3 backend only" in err
    assert "needs the rllib extra" not in err and "Traceback" not in err
    assert not out.exists()
