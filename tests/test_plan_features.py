"""The meld-plan features (``features = "cards+plan"``, train/plan_features.py): the best
partition of a hand and its lay-offs computed by fixed tensor operations. Hands worked out by
hand (overlapping melds, lay-off chains at both ends of a run, the ace at either end by the
aces option, lay-offs switched off), then random hands against the rules engine's own
``best_partition`` and ``layoff_closure``; the network, its snapshot, its ONNX graph and the
config's errors."""
from __future__ import annotations

import random

import numpy as np
import pytest

from extras import needs

torch = needs("torch")
needs("sb3_contrib")

from rummy_env.cards import parse_card  # noqa: E402
from rummy_env.meld_analysis import best_partition, layoff_closure, meld_plan  # noqa: E402
from rummy_env.melds import MELD_MASK, layoff_masks_after  # noqa: E402
from rummy_env.observation import ACES_ORDER, offsets  # noqa: E402
from rummy_env.train.plan_features import PLAN_EXTRA, TOP, MeldPlanFeatures, plan_catalogue  # noqa: E402

F = MeldPlanFeatures(548, 2)
OFF = offsets(2)


def _mask(*texts: str) -> int:
    m = 0
    for t in texts:
        m |= 1 << parse_card(t)
    return m


def _plane(mask: int) -> list[float]:
    return [float(mask >> c & 1) for c in range(52)]


def _plan(hand: int, aces: str = "low", ace_points: int = 1, table=(0, 0, 0), layoffs: bool = True):
    """``(melded, placed, unplaced, count)`` of one hand: masks and the one-hot's index."""
    out = F.plan(torch.tensor([_plane(hand)]), torch.tensor([[float(a == aces) for a in ACES_ORDER]]),
                 torch.tensor([[float(ace_points == 11)]]), torch.tensor([[_plane(t) for t in table]]),
                 torch.tensor([[float(layoffs)]]))[0]
    masks = [sum(1 << c for c in range(52) if out[k * 52 + c] > 0.5) for k in range(3)]
    counts = out[156:162]
    assert float(counts.sum()) == 1.0
    return (*masks, int(counts.argmax()))


def test_overlapping_melds_give_the_card_to_one_meld_only():
    # 5S 6S 7S is a run (18 points), 7S 7H 7D a set (21): they share the 7S (RULES.md §3: a
    # card belongs to one meld), so the set goes down and 5S 6S KC stay: 3 unplaced, where
    # the loose-card count of CardMeldFeatures sees only KC loose
    hand = _mask("5S", "6S", "7S", "7H", "7D", "KC")
    melded, placed, rest, n = _plan(hand)
    assert melded == _mask("7S", "7H", "7D") and placed == 0
    assert rest == _mask("5S", "6S", "KC") and n == 3
    # with the 4S both go down: the run 4S 5S 6S (15) and the set (21) cover 36 points, more
    # than the run 4S-7S (22) alone; only KC stays
    melded, _, rest, n = _plan(hand | _mask("4S"))
    assert melded == hand & ~_mask("KC") | _mask("4S") and rest == _mask("KC") and n == 1


def test_three_melds_of_an_eleven_card_hand_and_the_count_caps_at_five():
    hand = _mask("AC", "2C", "3C", "4C", "9D", "9H", "9S", "JH", "QH", "KH", "5D")
    melded, _, rest, n = _plan(hand)
    assert melded == hand & ~_mask("5D") and rest == _mask("5D") and n == 1
    loose = _mask("2D", "5H", "8S", "TC", "KD", "4H")
    assert _plan(loose)[3] == 5  # six cards in no meld: the 5+ slot


def test_lay_offs_chain_along_both_ends_of_a_table_run():
    # the table holds 3H 4H 5H: it takes 2H at its low end and 6H at its high end (§3)
    table = (0, _mask("2H"), _mask("6H"))
    hand = _mask("9C", "9D", "9S", "6H", "7H", "2H", "AH")
    melded, placed, rest, n = _plan(hand, "low", table=table)
    assert melded == _mask("9C", "9D", "9S")
    assert placed == _mask("6H", "7H", "2H", "AH") and rest == 0 and n == 0  # 6H opens 7H, 2H opens AH
    melded, placed, rest, n = _plan(hand, "high", table=table)  # an ace is never below a 2 (§4)
    assert placed == _mask("6H", "7H", "2H") and rest == _mask("AH") and n == 1
    melded, placed, rest, n = _plan(hand, "low", table=table, layoffs=False)  # §8: no lay-offs
    assert placed == 0 and rest == _mask("6H", "7H", "2H", "AH") and n == 4


def test_the_ace_above_a_king_by_the_aces_option_and_a_sets_fourth_card():
    table = (_mask("5C"), 0, _mask("KD"))  # a set 5D 5H 5S and a run TD JD QD on the table
    hand = _mask("KD", "AD", "5C", "8S", "9S", "TS")
    melded, placed, rest, n = _plan(hand, "either", table=table)
    assert melded == _mask("8S", "9S", "TS") and placed == _mask("KD", "AD", "5C") and n == 0
    assert _plan(hand, "low", table=table)[2] == _mask("AD")  # the ace is low only: not above the king


def test_the_ace_counts_by_the_ace_points_option():
    # AS 2S 3S (1 + 2 + 3 = 6, or 16 with the ace at 11) and 3S 3C 3D (9) share the 3S:
    # the run and the set share the 3S; aces at 1 the set wins (9 > 6), at 11 the run (16 > 9)
    hand = _mask("AS", "2S", "3S", "3C", "3D")
    assert _plan(hand, ace_points=1)[0] == _mask("3S", "3C", "3D")
    assert _plan(hand, ace_points=11)[0] == _mask("AS", "2S", "3S")


def _random_hands(n: int, seed: int):
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        size = rng.choice([7, 8, 10, 11])
        cards: set[int] = set()
        while len(cards) < size:  # hands that hold melds: cards near the ones held
            if cards and rng.random() < 0.6:
                cards.add((rng.choice(sorted(cards)) + rng.choice([-1, 1, 2, 13, -13, 26])) % 52)
            else:
                cards.add(rng.randrange(52))
        hand = sum(1 << c for c in cards)
        table = tuple(sum(1 << c for c in rng.sample(range(52), rng.randint(0, 3))) & ~hand for _ in range(3))
        rows.append((hand, rng.randrange(3), rng.choice([1, 11]), table, rng.random() < 0.8))
    return rows


def test_random_hands_agree_with_the_engines_best_partition_and_lay_offs():
    rows = _random_hands(600, seed=11)
    x = torch.tensor([_plane(h) for h, *_ in rows])
    aces = torch.nn.functional.one_hot(torch.tensor([a for _, a, *_ in rows]), 3).float()
    ap11 = torch.tensor([[float(ap == 11)] for _, _, ap, _, _ in rows])
    table = torch.tensor([[_plane(t) for t in tab] for *_, tab, _ in rows])
    lay = torch.tensor([[float(on)] for *_, on in rows])
    ids, points = F.partition(x, aces, ap11)
    out = F.plan(x, aces, ap11, table, lay)
    cat = plan_catalogue() + [None]
    held = ((x @ F.masks[:-1].t() == F.sizes) & ((aces @ F.legal) > 0.5)).sum(1)
    assert int(held.max()) <= TOP  # the test's hands are within the exact range
    ties = 0
    for b, (hand, a, ap, tab, on) in enumerate(rows):
        aces_opt = ACES_ORDER[a]
        assert int(points[b]) == best_partition(hand, aces_opt, ap)[0]
        melds = [cat[i] for i in ids[b].tolist() if cat[i] is not None]
        melded = 0
        for m in melds:
            assert MELD_MASK[m] & melded == 0 and MELD_MASK[m] & ~hand == 0  # disjoint melds of the hand
            melded |= MELD_MASK[m]
        placed = layoff_closure(hand & ~melded, *layoff_masks_after(melds, *tab, aces_opt), aces_opt) if on else 0
        got = [sum(1 << c for c in range(52) if out[b, k * 52 + c] > 0.5) for k in range(3)]
        assert got == [melded, placed, hand & ~melded & ~placed]
        _, pm, pl = meld_plan(hand, aces_opt, ap, tab if on else None)
        ties += (hand & ~pm & ~pl).bit_count() != got[2].bit_count()
    assert ties <= 3  # partitions of equal points may differ from best_partition's pick (none of these 600)


def test_a_set_and_a_run_of_equal_points_the_set_goes_down_by_the_catalogues_order():
    # 6H 7H 8H (a run, 21 points) and 7C 7D 7H (a set, 21) share the 7H: two best partitions.
    # The plan takes the first held meld in its candidates' order (points, then the lower
    # catalogue index: the sets come before the runs, rummy_env.melds), so the set goes down
    # and 6H 8H KS stay, whatever else the batch holds (torch.topk alone orders ties arbitrarily)
    hand = _mask("6H", "7H", "8H", "7C", "7D", "KS")
    melded, placed, rest, n = _plan(hand)
    assert melded == _mask("7C", "7D", "7H") and placed == 0 and rest == _mask("6H", "8H", "KS") and n == 3
    many = _mask("2C", "3C", "4C", "2D", "3D", "4D", "2H", "3H", "4H")  # 3 runs and 3 sets of 9 points each
    x = torch.tensor([_plane(many), _plane(hand), _plane(many | _mask("5C"))])
    ids, points = F.partition(x, torch.tensor([[1.0, 0.0, 0.0]] * 3), torch.zeros(3, 1))
    cat = plan_catalogue()

    def melds(row):
        return [MELD_MASK[cat[i]] if i < len(cat) else 0 for i in ids[row].tolist()]

    # nine cards, 27 points in three sets or in three runs: the candidates by points are the
    # set of 4s (12), the set of 3s (9, before the runs of 9 in the catalogue), ...; the first
    # triple of 27 is the three sets, the 4s first
    assert melds(0) == [_mask("4C", "4D", "4H"), _mask("3C", "3D", "3H"), _mask("2C", "2D", "2H")]
    assert float(points[0]) == 27.0
    assert melds(1) == [_mask("7C", "7D", "7H"), 0, 0] and float(points[1]) == 21.0
    # with the 5C: the run 2C-5C (14) and the runs 2D-4D and 2H-4H (9 each) put all ten cards
    # down (32 points); the three sets would leave the 5C (27)
    assert melds(2) == [_mask("2C", "3C", "4C", "5C"), _mask("2D", "3D", "4D"), _mask("2H", "3H", "4H")]
    assert float(points[2]) == 32.0


def test_the_partition_is_the_first_best_triple_in_the_candidates_order_on_random_hands():
    """An independent reading of the documented rule: the held melds ordered by points, then
    by catalogue index, the first 14; every triple of them (or no meld) in that order, pairwise
    disjoint; the first of most points wins."""
    rows = _random_hands(300, seed=12)
    x = torch.tensor([_plane(h) for h, *_ in rows])
    aces = torch.nn.functional.one_hot(torch.tensor([a for _, a, *_ in rows]), 3).float()
    ap11 = torch.tensor([[float(ap == 11)] for _, _, ap, _, _ in rows])
    ids, points = F.partition(x, aces, ap11)
    cat = plan_catalogue()
    from rummy_env.cards import mask_points
    from rummy_env.melds import meld_allowed

    for b, (hand, a, ap, _, _) in enumerate(rows):
        held = [(mask_points(MELD_MASK[m], ap), i) for i, m in enumerate(cat)
                if MELD_MASK[m] & ~hand == 0 and meld_allowed(m, ACES_ORDER[a])]
        cands = [i for _, i in sorted(held, key=lambda t: (-t[0], t[1]))][:TOP] + [len(cat)]
        mask = {i: (MELD_MASK[cat[i]] if i < len(cat) else 0) for i in cands}
        pts = {i: (mask_points(mask[i], ap) if i < len(cat) else 0) for i in cands}
        best, pick = -1, None
        for i in cands:
            for j in cands:
                for k in cands:
                    if mask[i] & mask[j] or mask[i] & mask[k] or mask[j] & mask[k]:
                        continue
                    if pts[i] + pts[j] + pts[k] > best:
                        best, pick = pts[i] + pts[j] + pts[k], [i, j, k]
        assert ids[b].tolist() == pick and int(points[b]) == best


def test_the_forward_pass_reads_the_observation_and_plans_the_hand_and_the_hand_plus_upcard():
    obs = np.zeros((1, 548), dtype=np.float32)
    hand, up = _mask("5S", "6S", "7S", "7H", "7D", "KC"), _mask("4S")
    obs[0, OFF["hand"]] = _plane(hand)
    obs[0, OFF["upcard"]] = _plane(up)
    obs[0, OFF["rule_aces"].start] = 1.0  # low
    obs[0, OFF["rule_layoffs"]] = 1.0
    obs[0, OFF["layoff_high"]] = _plane(_mask("KC"))  # a run JC QC... takes the KC
    out = F(torch.as_tensor(obs))[0]
    assert out.shape == (PLAN_EXTRA,)
    assert [sum(1 << c for c in range(52) if out[k * 52 + c] > 0.5) for k in range(3)] == [
        _mask("7S", "7H", "7D"), _mask("KC"), _mask("5S", "6S")]
    assert int(out[156:162].argmax()) == 2
    second = out[162:]
    assert sum(1 << c for c in range(52) if second[c] > 0.5) == hand & ~_mask("KC") | up  # 4S 5S 6S and the 7s
    assert int(second[156:162].argmax()) == 0  # and the KC laid off


def test_plan_feature_errors():
    from rummy_env import Rules
    from rummy_env.table import Table
    from rummy_env.train.config import TrainConfig, check_features

    with pytest.raises(ValueError, match="meld-plan features need a standard table's observation"):
        MeldPlanFeatures(549, 2)
    with pytest.raises(ValueError, match="'cards\\+plan' adds the meld plan of a standard table's hand"):
        check_features("cards+plan", Table.of(Rules.preset("jokers")))
    check_features("cards+plan", Table.of(Rules.preset("classic")))
    assert TrainConfig.from_dict({"features": "cards+plan"}).features == "cards+plan"
    import gymnasium as gym

    from rummy_env.train.features import CardFeatures

    box = gym.spaces.Box(-np.inf, np.inf, (548,), np.float32)
    with pytest.raises(ValueError, match="plan=True adds the meld plan to the card features: it needs cards=True"):
        CardFeatures(box, cards=False, plan=True, num_players=2, kind="standard")
    with pytest.raises(ValueError, match="plan=True is for standard tables, jokers=True for tables with jokers: not both"):
        CardFeatures(box, plan=True, jokers=True, num_players=2, kind="standard")
    from rummy_env.observation import obs_size
    from rummy_env.train.features import CardMeldFeatures

    with pytest.raises(ValueError, match="meld-plan features need a standard table; a rum500 table is not one"):
        CardMeldFeatures(obs_size(2, "rum500"), 2, "rum500", plan=True)


def _policy(seed: int = 0):
    from sb3_contrib import MaskablePPO

    from rummy_env.single_agent import SingleAgentEnv
    from rummy_env.train.features import CardFeatures
    from rummy_env.train.policy import FastMaskablePolicy

    pk = dict(net_arch=dict(pi=[32], vf=[32]), features_extractor_class=CardFeatures,
              features_extractor_kwargs=dict(trunk=16, num_players=2, kind="standard", plan=True,
                                             discard_head="cards+stock"))
    policy = MaskablePPO(FastMaskablePolicy, SingleAgentEnv(seed=0), policy_kwargs=pk, seed=seed).policy
    with torch.no_grad():
        for p in policy.features_extractor.discard_scorer.net[-1].parameters():
            p.normal_(0, 0.5)
    return policy


def _positions(n: int = 24):
    from test_discard_head import _positions as positions  # a heuristic's game: observations and masks

    return positions(n, seed=5)


def test_the_policy_its_snapshot_and_the_warm_starts_cache_give_the_same_logits():
    from rummy_env.train.pool import ActorNet
    from rummy_env.train.warmstart import fixed_features, sb3_forward

    policy = _policy()
    obs, masks = _positions()
    fx = policy.features_extractor
    with torch.no_grad():
        logits = policy._heads(obs)[0]
        full = fx.core(obs)
        assert full.shape[1] == 548 + 1208 + PLAN_EXTRA
        net = ActorNet.from_policy(policy)
        assert net.spec["features"] == "cards+plan"
        again = ActorNet(**net.spec)
        again.load_state_dict(net.state_dict())
        torch.testing.assert_close(again(obs), logits, atol=1e-5, rtol=0)
        f = sb3_forward(policy)
        cache = fixed_features(f, obs.numpy())
        assert cache is not None and cache.dtype == torch.uint8  # 0/1 and small counts: exact in uint8
        torch.testing.assert_close(f.head(obs, cache)[0], logits, atol=1e-5, rtol=0)


@pytest.mark.slow  # the ONNX exporter takes about 35 s over the plan's graph; the torch paths are checked above
def test_the_onnx_graph_of_a_plan_network_gives_the_policys_logits(tmp_path):
    policy = _policy()
    obs, masks = _positions()
    with torch.no_grad():
        logits = policy._heads(obs)[0]
    needs("onnxruntime", "export")
    import onnxruntime as ort

    from rummy_env.train.export import _onnx_module, export_graph_onnx

    path = tmp_path / "p.onnx"
    export_graph_onnx(_onnx_module(policy), obs.shape[1], path, masks.shape[1])
    out, act = ort.InferenceSession(str(path)).run(None, {"observation": obs.numpy(),
                                                           "action_mask": masks.astype(np.int8)})
    legal = masks > 0
    np.testing.assert_allclose(out[legal], logits.numpy()[legal], atol=1e-4, rtol=0)
    assert act.tolist() == np.where(legal, logits.numpy(), -np.inf).argmax(1).tolist()


def test_rummy_train_with_the_rllib_backend_refuses_the_plan_features_before_anything_else(tmp_path, capsys):
    from rummy_env.cli import main as rummy

    out = tmp_path / "rl"
    assert rummy(["train", "--backend", "rllib", "--set", 'features="cards+plan"', "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "features 'cards+plan' is a network of the SB3 backend only" in err
    assert "Traceback" not in err and not out.exists()
