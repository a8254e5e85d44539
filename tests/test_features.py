"""The network's meld-structure features (train/features.py) and the fast masked policy
(train/policy.py), checked against hands worked out by hand from RULES.md §4."""
from __future__ import annotations

import numpy as np
import pytest

from extras import needs

torch = needs("torch")
needs("sb3_contrib")

from rummy_env.cards import parse_card  # noqa: E402
from rummy_env.observation import obs_size, offsets, players_for  # noqa: E402
from rummy_env.train.features import EXTRA, CardFeatures, CardMeldFeatures  # noqa: E402

OFF = offsets(2)
NAMES = ["same", "m2", "m1", "p1", "p2", "in_set", "in_run"]


def _obs(hand: list[str], upcard: str | None, aces: str, table: list[str] = (),
         layoff: list[str] = (), layoffs: bool = True) -> np.ndarray:
    o = np.zeros(obs_size(2), dtype=np.float32)
    for c in layoff:  # cards a meld on the table takes (the set plane; the run planes count the same)
        o[OFF["layoff_set"].start + parse_card(c)] = 1
    o[OFF["rule_layoffs"].start] = float(layoffs)
    for c in hand:
        o[parse_card(c)] = 1
    if upcard:
        o[OFF["upcard"].start + parse_card(upcard)] = 1
    for c in table:
        o[OFF["table"].start + parse_card(c)] = 1
    o[OFF["rule_aces"].start + ("low", "high", "either").index(aces)] = 1
    return o


def _features(o: np.ndarray) -> dict[str, np.ndarray]:
    out = CardMeldFeatures(o.size)(torch.as_tensor(o[None]))[0].numpy()
    assert out.shape == (o.size + EXTRA,)
    np.testing.assert_array_equal(out[:o.size], o)  # the observation comes first, unchanged
    planes = out[o.size:o.size + 23 * 52].reshape(23, 52)
    d = {n: planes[i] for i, n in enumerate(NAMES)}
    d.update({"up_" + n: planes[7 + i] for i, n in enumerate(NAMES)})
    d["hand_up"] = planes[14]
    for i, n in enumerate(["unseen_rank", "unseen_m2", "unseen_m1", "unseen_p1", "unseen_p2", "unseen"]):
        d[n] = planes[15 + i]
    d["loose"], d["up_loose"] = planes[21], planes[22]
    d["loose_count"], d["up_loose_count"] = out[o.size + 23 * 52:].reshape(2, 6)
    return d


def _cards(plane: np.ndarray) -> set[str]:
    from rummy_env.cards import CARD_TEXT
    return {CARD_TEXT[c] for c in np.flatnonzero(plane)}


HAND = ["AC", "2C", "3C", "5D", "5H", "5S", "QS", "KS", "AH", "2H", "KH"]


@pytest.mark.parametrize("aces,runs,runs_up", [
    ("low", {"AC", "2C", "3C"}, {"AC", "2C", "3C", "4C"}),
    # aces high: A-2-3 is no run, and neither Q-K-A of spades (no AS) nor K-A-2 of hearts
    ("high", set(), {"2C", "3C", "4C"}),
    # either: A-2-3 of clubs; K-A-2 of hearts wraps, so the hearts are in no run
    ("either", {"AC", "2C", "3C"}, {"AC", "2C", "3C", "4C"}),
])
def test_sets_and_runs(aces, runs, runs_up):
    f = _features(_obs(HAND, "4C", aces))
    assert _cards(f["in_set"]) == {"5D", "5H", "5S"}
    assert _cards(f["in_run"]) == runs
    assert _cards(f["up_in_run"]) == runs_up
    assert _cards(f["hand_up"]) == set(HAND) | {"4C"}


@pytest.mark.parametrize("aces,layoff,layoffs,loose,up_loose", [
    # sets 5D 5H 5S, run AC 2C 3C (AC-4C with the upcard): QS KS AH 2H KH are loose
    ("low", [], True, {"QS", "KS", "AH", "2H", "KH"}, {"QS", "KS", "AH", "2H", "KH"}),
    # the table takes QS and KH: they can be laid off, so they are not loose
    ("low", ["QS", "KH"], True, {"KS", "AH", "2H"}, {"KS", "AH", "2H"}),
    # ... unless the rules allow no lay-offs
    ("low", ["QS", "KH"], False, {"QS", "KS", "AH", "2H", "KH"}, {"QS", "KS", "AH", "2H", "KH"}),
    # aces high: A-2-3 of clubs is no run, 2C-3C-4C is one with the upcard
    ("high", ["QS", "KH"], True, {"AC", "2C", "3C", "KS", "AH", "2H"}, {"AC", "KS", "AH", "2H"}),
])
def test_loose_cards_and_their_count(aces, layoff, layoffs, loose, up_loose):
    f = _features(_obs(HAND, "4C", aces, layoff=layoff, layoffs=layoffs))
    assert _cards(f["loose"]) == loose
    assert _cards(f["up_loose"]) == up_loose
    onehot = [0.0] * 6
    onehot[min(len(loose), 5)] = 1.0
    assert f["loose_count"].tolist() == onehot
    onehot = [0.0] * 6
    onehot[min(len(up_loose), 5)] = 1.0
    assert f["up_loose_count"].tolist() == onehot


def test_same_rank_counts_other_cards_of_the_rank():
    f = _features(_obs(HAND, "4C", "low"))
    p = parse_card
    assert f["same"][p("5C")] == 3      # 5D 5H 5S held
    assert f["same"][p("5D")] == 2      # the other two
    assert f["same"][p("AS")] == 2      # AC AH
    assert f["same"][p("4D")] == 0 and f["up_same"][p("4D")] == 1  # the upcard 4C counts with it


def test_run_neighbours_follow_the_aces_option():
    p = parse_card
    low, high, either = (_features(_obs(HAND, "4C", a)) for a in ("low", "high", "either"))
    # the ace of hearts: 2H above it when aces are low, KH below it when aces are high
    assert (low["p1"][p("AH")], low["m1"][p("AH")]) == (1, 0)
    assert (high["p1"][p("AH")], high["m1"][p("AH")]) == (0, 1)
    assert (either["p1"][p("AH")], either["m1"][p("AH")]) == (1, 1)
    # the king of hearts has the ace above it only when aces may be high
    assert (low["p1"][p("KH")], high["p1"][p("KH")], either["p1"][p("KH")]) == (0, 1, 1)
    # QS: KS above; nothing two above unless the ace is high (AS is not held: 0 anyway)
    assert low["p1"][p("QS")] == 1 and low["p2"][p("QS")] == 0
    # 3C: 2C and AC below (AC only as a low ace), 4C (the upcard) only with it
    assert (low["m1"][p("3C")], low["m2"][p("3C")], high["m2"][p("3C")]) == (1, 1, 0)
    assert low["p1"][p("3C")] == 0 and low["up_p1"][p("3C")] == 1


def test_unseen_cards_exclude_hand_upcard_and_table():
    p = parse_card
    f = _features(_obs(HAND, "4C", "low", table=["7D", "7H", "7S"]))
    assert f["unseen"][p("4C")] == 0 and f["unseen"][p("7D")] == 0 and f["unseen"][p("AC")] == 0
    assert f["unseen"][p("7C")] == 1
    assert f["unseen_rank"][p("7C")] == 0     # the other three sevens are on the table
    assert f["unseen_rank"][p("4C")] == 3     # 4D 4H 4S
    assert f["unseen_p1"][p("4C")] == 1 and f["unseen_m1"][p("4C")] == 0  # 5C unseen, 3C held
    assert int(f["unseen"].sum()) == 52 - len(HAND) - 1 - 3


def test_players_for_and_bad_sizes():
    assert [players_for(obs_size(n)) for n in range(2, 7)] == [2, 3, 4, 5, 6]
    with pytest.raises(ValueError, match="not that of a standard or 500 Rum table"):
        players_for(100)


def test_extractor_widths():
    import gymnasium as gym
    space = gym.spaces.Box(0, 1, (obs_size(3),), np.float32)
    assert CardFeatures(space).features_dim == obs_size(3) + EXTRA
    assert CardFeatures(space, trunk=32).features_dim == 32
    assert CardFeatures(space, cards=False).features_dim == obs_size(3)
    with pytest.raises(ValueError, match="trunk"):
        CardFeatures(space, trunk=-1)


def _policies():
    from sb3_contrib import MaskablePPO

    from rummy_env.single_agent import SingleAgentEnv
    from rummy_env.train.policy import FastMaskablePolicy

    env = SingleAgentEnv(seed=0)
    pk = dict(net_arch=dict(pi=[32], vf=[32]), features_extractor_class=CardFeatures,
              features_extractor_kwargs=dict(trunk=16))
    fast = MaskablePPO(FastMaskablePolicy, env, policy_kwargs=pk, seed=0).policy
    base = MaskablePPO("MlpPolicy", env, policy_kwargs=pk, seed=1).policy
    base.load_state_dict(fast.state_dict())
    return fast, base


def test_fast_policy_matches_sb3_contrib():
    fast, base = _policies()
    gen = torch.Generator().manual_seed(0)
    obs = (torch.rand(64, 548, generator=gen) < 0.2).float()
    masks = torch.rand(64, 579, generator=gen) < 0.1
    masks[:, 7] = True
    acts = torch.tensor([int(np.flatnonzero(m.numpy())[-1]) for m in masks])
    with torch.no_grad():
        v1, lp1, e1 = fast.evaluate_actions(obs, acts, masks.float())
        v2, lp2, e2 = base.evaluate_actions(obs, acts, masks.float())
        a, v3, lp3 = fast(obs, action_masks=masks.numpy())
        _, lp4, _ = base.evaluate_actions(obs, a, masks.float())
    torch.testing.assert_close(v1, v2)
    torch.testing.assert_close(lp1, lp2, atol=1e-5, rtol=0)
    torch.testing.assert_close(e1, e2, atol=1e-5, rtol=0)
    torch.testing.assert_close(v3, v2)
    torch.testing.assert_close(lp3, lp4, atol=1e-5, rtol=0)
    assert bool(masks[torch.arange(64), a].all())


def test_fast_policy_in_bfloat16_is_the_float32_policy_to_bfloat16s_precision():
    """``bf16 = True`` (``TrainConfig.precision``): the layers under autocast, the outputs
    float32 and within bfloat16's rounding (8 mantissa bits) of the float32 policy's; the
    log-probabilities are still a distribution over the legal actions; gradients reach
    the float32 weights; ``predict_values`` too."""
    from rummy_env.train.precision import PRECISIONS, cpu_has_bf16, use_bf16

    fast, _ = _policies()
    gen = torch.Generator().manual_seed(3)
    obs = (torch.rand(32, 548, generator=gen) < 0.2).float()
    masks = torch.rand(32, 579, generator=gen) < 0.1
    masks[:, 7] = True
    acts = torch.tensor([int(np.flatnonzero(m.numpy())[0]) for m in masks])
    with torch.no_grad():
        v32, lp32, e32 = fast.evaluate_actions(obs, acts, masks.float())
        pv32 = fast.predict_values(obs)
    fast.bf16 = True
    try:
        v16, lp16, e16 = fast.evaluate_actions(obs, acts, masks.float())
        assert v16.dtype == lp16.dtype == e16.dtype == torch.float32
        torch.testing.assert_close(v16, v32, atol=0.03, rtol=0.03)
        torch.testing.assert_close(lp16, lp32, atol=0.05, rtol=0.02)
        assert not torch.equal(lp16, lp32)  # the layers did run in bfloat16
        (lp16.sum() + v16.sum()).backward()
        assert all(p.grad is not None and p.grad.dtype == torch.float32 and p.dtype == torch.float32
                   for p in fast.parameters() if p.requires_grad)
        with torch.no_grad():
            _, _, lp = fast(obs, action_masks=masks.numpy())
            logits, _ = fast._heads(obs)
            logp = fast._log_probs(logits, masks.numpy())[0]
            pv16 = fast.predict_values(obs)
        assert lp.dtype == torch.float32 and pv16.dtype == torch.float32
        torch.testing.assert_close(logp.exp().sum(1), torch.ones(32))
        assert bool((logp.exp()[~masks] == 0).all())
        torch.testing.assert_close(pv16, pv32, atol=0.03, rtol=0.03)
    finally:
        fast.bf16 = False
    assert PRECISIONS == ("auto", "float32", "bfloat16")
    assert use_bf16("bfloat16") and not use_bf16("float32") and use_bf16("auto") == cpu_has_bf16()
    with pytest.raises(ValueError, match="precision must be one of auto, float32, bfloat16, got 'fp16'"):
        use_bf16("fp16")


def test_fast_policy_samples_the_masked_softmax():
    """Gumbel-max draws follow softmax over the legal actions: logits (0, log 2, log 5) on
    three legal actions give probabilities 1/8, 2/8, 5/8."""
    from rummy_env.train.policy import FastMaskablePolicy

    fast, _ = _policies()
    n = 40_000
    logits = torch.full((n, 579), 3.0)
    logits[:, [10, 20, 30]] = torch.log(torch.tensor([1.0, 2.0, 5.0]))
    masks = torch.zeros(n, 579, dtype=torch.bool)
    masks[:, [10, 20, 30]] = True
    torch.manual_seed(0)
    fast.action_net.forward = lambda latent: logits  # the head's output, fixed
    with torch.no_grad():
        a, _, lp = FastMaskablePolicy.forward(fast, torch.zeros(n, 548), action_masks=masks.numpy())
    freq = np.bincount(a.numpy(), minlength=579)[[10, 20, 30]] / n
    np.testing.assert_allclose(freq, [1 / 8, 2 / 8, 5 / 8], atol=0.01)
    assert set(np.unique(a.numpy())) <= {10, 20, 30}
    np.testing.assert_allclose(lp.exp().numpy()[a.numpy() == 30], 5 / 8, rtol=1e-5)


def test_snapshot_net_matches_policy_logits():
    from rummy_env.train.pool import ActorNet

    fast, _ = _policies()
    net = ActorNet.from_policy(fast)
    assert net.spec["features"] == "cards" and net.spec["trunk"] == 16
    rebuilt = ActorNet(**net.spec)
    rebuilt.load_state_dict(net.state_dict())
    obs = (torch.rand(8, 548) < 0.2).float()
    with torch.no_grad():
        want = fast.action_net(fast.mlp_extractor.forward_actor(fast.extract_features(obs)))
        torch.testing.assert_close(net(obs), want)
        torch.testing.assert_close(rebuilt(obs), want)


def test_network_settings_reads_a_policys_kwargs_as_the_snapshot_copies_it():
    """One reading of a policy's network shape (``network_settings``) serves the trainer (a
    saved policy's ``policy_kwargs``) and ``ActorNet.from_policy`` (a live policy): the
    features name, the discard head, the trunk and the policy head's widths; ``CardFeatures``'
    own default ``cards=True`` holds when the kwargs leave ``cards`` out (``_policies``)."""
    from stable_baselines3.common.torch_layers import FlattenExtractor

    from rummy_env.train.features import network_settings
    from rummy_env.train.pool import ActorNet

    fast, _ = _policies()
    pk = {"features_extractor_class": CardFeatures, "features_extractor_kwargs": {"trunk": 16},
          "net_arch": {"pi": [32], "vf": [32]}}
    assert network_settings(pk) == {"features": "cards", "discard_head": "dense", "trunk": 16, "net_arch": [32]}
    spec = ActorNet.from_policy(fast).spec
    assert (spec["features"], spec["trunk"], spec["net_arch"]) == ("cards", 16, [32])
    assert network_settings({"features_extractor_class": CardFeatures,
                             "features_extractor_kwargs": {"cards": True, "plan": True, "discard_head": "cards+stock"},
                             "net_arch": [64, 64]}) == {
        "features": "cards+plan", "discard_head": "cards+stock", "trunk": 0, "net_arch": [64, 64]}
    assert network_settings({"features_extractor_class": CardFeatures,
                             "features_extractor_kwargs": {"cards": True, "jokers": True, "discard_head": True}}) == {
        "features": "cards+jokers", "discard_head": "cards", "trunk": 0, "net_arch": []}
    # a trunk without card features; a flat extractor (its kwargs are not CardFeatures')
    assert network_settings({"features_extractor_class": CardFeatures,
                             "features_extractor_kwargs": {"cards": False, "trunk": 8}})["features"] == "none"
    assert network_settings({"features_extractor_class": FlattenExtractor, "features_extractor_kwargs": {"trunk": 8},
                             "net_arch": {"pi": [16]}}) == {
        "features": "none", "discard_head": "dense", "trunk": 0, "net_arch": [16]}
    assert network_settings({}) == {"features": "none", "discard_head": "dense", "trunk": 0, "net_arch": []}


def test_a_bfloat16_snapshot_plays_the_logits_of_the_policy_it_froze_in_bfloat16():
    """``ActorNet.use_bf16`` (a run that trains in bfloat16, ``OpponentPool(bf16=True)``):
    the snapshot's logits are exactly the policy's own bfloat16 rollout logits
    (``FastMaskablePolicy._heads`` under autocast), float32; its ``state_dict`` stays the
    float32 weights (a checkpoint's snapshots), and ``use_bf16(False)`` gives the float32
    logits back."""
    from rummy_env.train.pool import ActorNet, OpponentPool

    fast, _ = _policies()
    obs = (torch.rand(16, 548, generator=torch.Generator().manual_seed(5)) < 0.2).float()
    net = ActorNet.from_policy(fast)
    with torch.no_grad():
        f32 = net(obs)
        fast.bf16 = True
        try:
            want, _ = fast._heads(obs)
        finally:
            fast.bf16 = False
        assert net.use_bf16() is net
        got = net(obs)
        assert got.dtype == torch.float32 and torch.equal(got, want)
        assert torch.equal(net.head(net.core(obs)), want)
        assert not torch.equal(got, f32)  # it did run in bfloat16
        assert all(v.dtype == torch.float32 for v in net.state_dict().values())
        assert set(net.state_dict()) == set(ActorNet.from_policy(fast).state_dict())
        net.use_bf16(False)
        assert torch.equal(net(obs), f32)
        pool = OpponentPool({"snapshot": 1.0}, 2, 0.5, {}, bf16=True)
        pool.add_net(ActorNet.from_policy(fast), 10)
        assert torch.equal(pool.snapshots[0].net(obs), want)
        plain = OpponentPool({"snapshot": 1.0}, 2, 0.5, {})
        plain.add_net(ActorNet.from_policy(fast), 10)
        assert torch.equal(plain.snapshots[0].net(obs), f32)


def test_snapshot_sampling_draws_the_generators_gumbel_noise():
    """``SnapshotAgent.sample`` with one generator per row adds to each row the noise that
    row's ``Generator.gumbel`` would draw (``gumbel_from_uniform`` of its uniforms: the
    same stream), so a game's opponent moves follow its own seed; a uniform draw of 0
    gives a large finite noise, which never lifts a masked logit (-1e9) over a legal one."""
    from rummy_env.agents.masking import mask_logits
    from rummy_env.train.pool import ActorNet, SnapshotAgent, gumbel_from_uniform

    gen = np.random.default_rng(1)
    logits = gen.standard_normal((6, 579)).astype(np.float32)
    masks = gen.random((6, 579)) < 0.02
    masks[:, 3] = True
    logits = mask_logits(logits, masks)
    agent = SnapshotAgent(ActorNet(548, [4], 579))
    got = agent.sample(logits, rngs=[np.random.default_rng(50 + i) for i in range(6)])
    want = np.array([int(np.argmax(row + np.random.default_rng(50 + i).gumbel(size=579)))
                     for i, row in enumerate(logits)])
    np.testing.assert_array_equal(got, want)
    assert all(masks[i, a] for i, a in enumerate(got))
    u = np.array([0.0, 0.5, 1 - 2.0 ** -53])
    g = gumbel_from_uniform(u.copy())
    assert np.isfinite(g).all() and 700 < g[0] < 710
    np.testing.assert_allclose(g[1:], [-np.log(-np.log(0.5)), -np.log(-np.log(2.0 ** -53))])
    row = np.full(579, -1e9, dtype=np.float32)
    row[[4, 9]] = [0.0, -3.0]
    u = np.full((1, 579), 0.5)
    u[0, 100] = 0.0  # the largest noise on an illegal action
    assert int(np.argmax(row + gumbel_from_uniform(u)[0])) in (4, 9)


def test_a_snapshot_carries_its_table_not_its_sizes():
    """A jokers policy's snapshot spec names its table (2 players, jokers: 814 entries,
    632 ids), rebuilds from it, and a checkpoint spec written before specs held their
    table still loads (its sizes are one table's)."""
    import gymnasium as gym

    from rummy_env.train.features import CardFeatures
    from rummy_env.train.policy import FastMaskablePolicy
    from rummy_env.train.pool import ActorNet, OpponentPool

    box = gym.spaces.Box(-np.inf, np.inf, (814,), np.float32)
    policy = FastMaskablePolicy(box, gym.spaces.Discrete(632), lambda _: 1e-3, net_arch=dict(pi=[8], vf=[8]),
                                features_extractor_class=CardFeatures,
                                features_extractor_kwargs=dict(cards=True, trunk=16, num_players=2, kind="jokers"))
    net = ActorNet.from_policy(policy)
    assert (net.spec["num_players"], net.spec["kind"]) == (2, "jokers")
    rebuilt = ActorNet(**net.spec)
    assert (rebuilt.features.num_players, rebuilt.features.kind) == (2, "jokers")
    old = {k: v for k, v in net.spec.items() if k not in ("num_players", "kind")}
    with pytest.raises(ValueError, match="not that of a standard or 500 Rum table"):
        ActorNet(**old)  # release 0.1's reading cannot know a jokers table by its size
    pool = OpponentPool({"snapshot": 1.0}, 4, 0.5, {})
    pool.load_state({"steps": [100], "specs": [old], "nets": [net.state_dict()]})
    assert pool.snapshots[0].net.spec["kind"] == "jokers"
    obs = (torch.rand(3, 814) < 0.2).float()
    with torch.no_grad():
        torch.testing.assert_close(pool.snapshots[0].net(obs), net(obs))


def test_action_text_reads_a_deck_variant_by_its_kind():
    from rummy_env.actions import action_text

    assert action_text(580, "jokers") == "joker as AC"  # joker_as starts at 579 + 1 (discard JK)
    assert action_text(600, 631) == "draw discard 9D"  # dig id 579 + card 21 (13 * D + rank 9 - 1)
    assert action_text(600, "rum500") == "draw discard 9D"
    for n in (632, 600, 579.0, True):
        with pytest.raises(ValueError, match="by its kind"):
            action_text(10, n)


def _jokers_obs(hand, upcard):
    from rummy_env import rummy_v0

    other = ["KD", "QH", "8S", "TS", "TC", "3H", "AC", "5D", "7D", "JC"]
    used = set(hand) | set(other) | {upcard}
    stock = [r + s for s in "CDHS" for r in "A23456789TJQK" if r + s not in used] + ["JK"] * (2 - [*hand, upcard].count("JK"))
    env = rummy_v0.env(rules="jokers")
    env.reset(options={"state": {"rules": "jokers", "hands": [hand, other], "discard": [upcard], "melds": [],
                                 "stock": stock, "current_player": 0, "phase": "draw"}})
    return env.observe("player_0")["observation"]


def test_joker_planes_counted_by_hand():
    """RULES.md §10.2, ``features="cards+jokers"``: with a joker in hand, 5H and 7H make a
    run with it (7H is 2 above 5H), 9C and 9D a set; 2C, 4S, QD, KS and AH have no partner
    within reach (aces low); the upcard 6S gives 4S and itself a run partner in the hand
    plus upcard. Without a joker the planes are empty, unless the upcard is the joker
    (then the hand plus upcard has one: 2C-3C, 5H-7H runs, the 9s' set)."""
    from rummy_env.cards import parse_card
    from rummy_env.train.features import JOKER_EXTRA

    obs = _jokers_obs(["JK", "5H", "7H", "9C", "9D", "KS", "2C", "QD", "4S", "AH"], "6S")
    f = CardMeldFeatures(obs.size, 2, "jokers", jokers=True)
    plain = CardMeldFeatures(obs.size, 2, "jokers")
    out = f(torch.as_tensor(obs[None]))[0]
    torch.testing.assert_close(out[:plain.out_dim], plain(torch.as_tensor(obs[None]))[0])  # the cards' features unchanged
    planes = out[plain.out_dim:].reshape(4, 52).numpy()
    assert JOKER_EXTRA == 208 and f.out_dim == plain.out_dim + 208

    def cards(plane):
        return {c for c in range(52) if plane[c]}

    want = lambda *t: {parse_card(x) for x in t}  # noqa: E731
    assert cards(planes[0]) == want("9C", "9D")              # set_joker, hand
    assert cards(planes[1]) == want("9C", "9D")              # set_joker, hand + upcard
    assert cards(planes[2]) == want("5H", "7H")              # run_joker, hand
    assert cards(planes[3]) == want("5H", "7H", "4S", "6S")  # run_joker, hand + upcard
    no_joker = _jokers_obs(["3C", "5H", "7H", "9C", "9D", "KS", "2C", "QD", "4S", "AH"], "6S")
    assert not f(torch.as_tensor(no_joker[None]))[0, plain.out_dim:].any()
    up_joker = _jokers_obs(["3C", "5H", "7H", "9C", "9D", "KS", "2C", "QD", "4S", "AH"], "JK")
    planes = f(torch.as_tensor(up_joker[None]))[0, plain.out_dim:].reshape(4, 52).numpy()
    assert not planes[0].any() and not planes[2].any()
    assert cards(planes[1]) == want("9C", "9D")
    assert cards(planes[3]) == want("2C", "3C", "5H", "7H")  # 2C and 3C are 1 apart; 4S has no partner here


def test_joker_features_round_trip_and_are_refused_without_jokers(tmp_path):
    import gymnasium as gym

    from rummy_env.train.config import TrainConfig
    from rummy_env.train.policy import FastMaskablePolicy
    from rummy_env.train.pool import ActorNet
    from rummy_env.train.trainer import Trainer

    box = gym.spaces.Box(-np.inf, np.inf, (814,), np.float32)
    policy = FastMaskablePolicy(box, gym.spaces.Discrete(632), lambda _: 1e-3, net_arch=dict(pi=[8], vf=[8]),
                                features_extractor_class=CardFeatures,
                                features_extractor_kwargs=dict(cards=True, trunk=16, num_players=2, kind="jokers",
                                                               jokers=True))
    assert policy.features_extractor.core.out_dim == 814 + EXTRA + 208
    net = ActorNet.from_policy(policy)
    assert net.spec["features"] == "cards+jokers"
    rebuilt = ActorNet(**net.spec)
    rebuilt.load_state_dict(net.state_dict())
    obs = (torch.rand(4, 814) < 0.2).float()
    with torch.no_grad():
        torch.testing.assert_close(rebuilt(obs), policy.action_net(policy.mlp_extractor.forward_actor(
            policy.extract_features(obs))))
    with pytest.raises(ValueError, match="features must be one of 'cards', 'cards\\+jokers', 'cards\\+plan', 'none', got 'joker'"):
        TrainConfig(features="joker").validate()
    with pytest.raises(ValueError, match="a 2-player standard table has no jokers"):
        Trainer(TrainConfig(rules="classic", features="cards+jokers", out=str(tmp_path / "run")))
    assert not (tmp_path / "run").exists()  # refused before anything is written
    with pytest.raises(ValueError, match="jokers=True adds planes to the card features"):
        CardFeatures(box, cards=False, jokers=True, num_players=2, kind="jokers")
