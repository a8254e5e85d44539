"""Issue 25: learning from the search (expert iteration: ``init_policy`` + a search teacher's
DAgger labels), the policy-guided search (``search:guide=...``) and ``heuristic:OPTIONS``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rummy_env import engine, rummy_v0
from rummy_env.agents import HOLDING, make_agent
from rummy_env.agents.scripted import HeuristicAgent

torch = pytest.importorskip("torch", reason="needs the train extra: pip install 'rummy-env[train]'")
pytest.importorskip("sb3_contrib", reason="needs the train extra: pip install 'rummy-env[train]'")

from rummy_env.agents.search import SearchAgent  # noqa: E402
from rummy_env.rules import Rules  # noqa: E402
from rummy_env.train import warmstart  # noqa: E402
from rummy_env.train.config import TrainConfig  # noqa: E402
from rummy_env.train.trainer import Trainer  # noqa: E402

CLASSIC = Rules.preset("classic")


# ------------------------------------------------------------------ heuristic:OPTIONS

def test_heuristic_options_build_the_named_weights():
    a = make_agent("heuristic:holding", seed=3)
    assert type(a) is HeuristicAgent and a.HOLD_MELDS == 1 and a.W_OUT == 24.0 and a.W_WEAK == 6.0
    assert HOLDING == {"HOLD_MELDS": 1, "W_OUT": 24.0, "W_WEAK": 6.0}
    b = make_agent("heuristic:w_out=30, LATE_STOCK=5")
    assert b.W_OUT == 30.0 and b.LATE_STOCK == 5 and type(b.LATE_STOCK) is int
    assert b.HOLD_MELDS == HeuristicAgent.HOLD_MELDS  # the others keep the baseline's values
    c = make_agent("heuristic:holding,W_OUT=30")
    assert c.HOLD_MELDS == 1 and c.W_OUT == 30.0 and c.W_WEAK == 6.0  # holding, then the pair changes it


@pytest.mark.parametrize("spec, words", [
    ("heuristic:", "needs options"),
    ("heuristic:FOO=1", "unknown heuristic option 'FOO'"),
    ("heuristic:W_OUT", "is not NAME=VALUE"),
    ("heuristic:W_OUT=x", "W_OUT must be a number"),
    ("heuristic:W_OUT=1,W_OUT=2", "given twice"),
    ("heuristic:HOLD_MELDS=2", "agent 'heuristic:HOLD_MELDS=2': heuristic option HOLD_MELDS is 0"),
    ("heuristic:W_OUT=1,holding", "the named set 'holding' comes first and once"),
    ("heuristic:LATE_STOCK=2.5", "whole number"),
])
def test_heuristic_options_refuse_bad_ones(spec, words):
    with pytest.raises(ValueError, match=words):
        make_agent(spec)


# ------------------------------------------------------------------ labels of a slow teacher

def _positions(count: int, seed: int):
    """Observations and packed masks of positions of random play (both seats, all phases)."""
    from rummy_env.actions import num_actions
    from rummy_env.observation import Encoder

    enc = Encoder.for_rules(CLASSIC)
    rows = warmstart.MaskRows(count, num_actions(CLASSIC))
    obs = np.empty((count, enc.size), dtype=np.float32)
    rng = np.random.default_rng(seed)
    i = g = 0
    while i < count:
        st = engine.new_game(CLASSIC, seed=seed * 100 + g)
        g += 1
        while not st.hand_over and i < count:
            legal = engine.legal_actions(st)
            obs[i] = enc.encode(st, st.current)
            rows.set_row(i, legal)
            i += 1
            engine.apply(st, int(rng.choice(legal)))
    return obs, rows


def test_label_positions_are_the_teachers_and_do_not_depend_on_workers(monkeypatch):
    monkeypatch.setattr(warmstart, "LABEL_CHUNK", 10)  # chunking happens in this process
    obs, rows = _positions(25, seed=4)
    one = warmstart.label_positions(CLASSIC, "search:3", obs, rows, seed=9, workers=1)
    two = warmstart.label_positions(CLASSIC, "search:3", obs, rows, seed=9, workers=2)
    np.testing.assert_array_equal(one, two)
    # chunk k (10 positions each) is labelled by a search seeded part_seed(9, k), in order
    want = []
    for k in range(3):
        agent = make_agent("search:3", seed=warmstart.part_seed(9, k))
        want += [agent.act(obs[j], rows[j].astype(np.int8)) for j in range(10 * k, min(25, 10 * k + 10))]
    assert one.tolist() == want
    assert all(rows[j][a] for j, a in enumerate(one))
    assert warmstart.slow_teacher("search:samples=4") and not warmstart.slow_teacher("heuristic:holding")


# ------------------------------------------------------------------ init_policy

def _cfg(out: Path, **kw) -> TrainConfig:
    base = dict(timesteps=64, out=str(out), n_envs=4, n_steps=16, batch_size=64, n_epochs=1, workers=1,
                snapshot_every=64, eval_every=0, checkpoint_every=10_000, final_eval_deals=1, eval_deals=1,
                eval_baselines=["random"], progress=False, warmstart_decisions=0, init_policy="pretrained",
                warmstart_teacher="none")
    base.update(kw)
    return TrainConfig(**base)


def test_init_policy_starts_from_the_shipped_weights(tmp_path):
    shipped = make_agent("pretrained").policy.state_dict()
    tr = Trainer(_cfg(tmp_path / "a", features="cards+plan", discard_head="cards+stock"), verbose=0)
    try:
        mine = tr.model.policy.state_dict()
        assert mine.keys() == shipped.keys()
        for k in shipped:
            assert torch.equal(mine[k], shipped[k]), k
    finally:
        tr.venv.close()


def test_init_policy_of_another_network_is_refused(tmp_path):
    shipped = dict(features="cards+plan", discard_head="cards+stock")
    with pytest.raises(ValueError, match=r"does not fit this run: its parameter .* is \(256, 2080\), this config's "
                                         r"network at the classic table has \(128, 2080\).*same features, trunk.*"
                                         r"it was trained with features = 'cards\+plan', discard_head = 'cards\+stock', "
                                         r"trunk = 256, net_arch = \[128\]; this config has .* trunk = 128"):
        Trainer(_cfg(tmp_path / "b", trunk=128, **shipped), verbose=0)
    assert not (tmp_path / "b").exists()  # the run folder it made is removed
    # the default network (no plan, no discard head): the message names what to set
    with pytest.raises(ValueError, match=r"has a discard head .* set discard_head as it was trained \(it was trained "
                                         r"with features = 'cards\+plan', discard_head = 'cards\+stock', trunk = 256, "
                                         r"net_arch = \[128\]; this config has features = 'cards', discard_head = "
                                         r"'dense', trunk = 256, net_arch = \[128\]\)"):
        Trainer(_cfg(tmp_path / "c"), verbose=0)
    assert not (tmp_path / "c").exists()
    with pytest.raises(ValueError, match="'pretrained' is the classic policy, the one shipped for this table is "
                                         "'pretrained:rum500'"):
        Trainer(_cfg(tmp_path / "r", rules="rum500"), verbose=0)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("kw, words", [
    (dict(init_policy="/no/such.zip"), "is not a file"),
    (dict(init_policy="pretrained:two_decks"), "no policy is shipped for the two_decks table"),
    (dict(warmstart_teacher="search", warmstart_dagger_rounds=0), "DAgger rounds"),
    (dict(warmstart_teacher="search:samples=0"), "samples must be an int from 1 to 4096"),
    (dict(warmstart_teacher="mcts"), "warmstart_teacher must be none"),
    (dict(warmstart_teacher="pretrainedx"), "warmstart_teacher must be none.*pretrained:PRESET or ppo:PATH"),
    (dict(warmstart_teacher="ppo:/no/such.zip"), "policy file not found"),
    (dict(warmstart_teacher="pretrained:two_decks"), "no policy is shipped for the two_decks table"),
    (dict(init_policy=3), "init_policy must be"),
])
def test_init_policy_and_teacher_errors(tmp_path, kw, words):
    with pytest.raises(ValueError, match=words):
        _cfg(tmp_path / "c", **kw).validate()


@pytest.mark.slow  # a Trainer with a search-labelled DAgger round (about 10 s); -m slow
def test_expert_iteration_skips_the_cloning_and_fits_search_labels(tmp_path):
    cfg = _cfg(tmp_path / "d", warmstart_teacher="search:2", warmstart_dagger_rounds=1,
               warmstart_dagger_decisions=1000, warmstart_dagger_epochs=1)
    assert warmstart.num_fits(cfg) == 1 and not warmstart.clones_first(cfg)
    tr = Trainer(cfg, verbose=0)
    try:
        ws = tr.state["warm_start"]
        assert ws["decisions"] == 0 and set(ws["parts_s"]) == {"dagger_1_play", "dagger_1_fit"}
        assert 0 < ws["samples"] <= 1000 and 0 <= ws["dagger_1_agreement_before"] <= 1
        shipped = make_agent("pretrained").policy.state_dict()
        moved = tr.model.policy.state_dict()
        assert any(not torch.equal(moved[k], shipped[k]) for k in shipped)  # the labels were fitted
    finally:
        tr.venv.close()


# ------------------------------------------------------------------ the policy-guided search

def _play_guided_search(gs, expected) -> int:
    """Play two classic hands (seeds 1, 2) with the guided search ``gs`` at every seat, its
    ``search`` replaced by one that keeps the prior, and check each decision: the move is
    ``expected``'s (an agent), a searched draw is between the stock and the upcard, and a
    searched discard's candidates are the guide's two most probable legal discards then the
    base's if another (RULES.md §3). Returns how many moves differed from the guide's own."""
    from rummy_env.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, MELD_BASE

    guide = make_agent("pretrained")
    calls = []

    def search(v, cands, prior):  # the search keeps its prior
        calls.append((v.phase, list(cands), prior))
        return prior

    gs.search = search
    env = rummy_v0.raw_env(rules="classic")
    differ = 0
    for seed in (1, 2):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            ob = env.observe(env.agent_selection)
            n = len(calls)
            a = gs.act(ob["observation"], ob["action_mask"])
            assert a == expected.act(ob["observation"], ob["action_mask"])
            differ += a != guide.act(ob["observation"], ob["action_mask"])
            if len(calls) > n:
                phase, cands, prior = calls[-1]
                assert prior == a and prior in cands
                if phase == engine.DRAW:
                    assert cands == [DRAW_STOCK, DRAW_DISCARD]
                else:
                    lg = guide.logits(ob["observation"])
                    legal = np.flatnonzero(ob["action_mask"])
                    disc = sorted((x for x in legal if DISCARD_BASE <= x < MELD_BASE), key=lambda x: (-lg[x], x))
                    assert cands[:2] == disc[:2] and len(cands) <= 3
                    assert all(DISCARD_BASE <= c < MELD_BASE for c in cands)
            env.step(a)
    assert sum(p == engine.DRAW for p, _, _ in calls) >= 5 and sum(p != engine.DRAW for p, _, _ in calls) >= 5
    return differ


def test_guided_search_keeps_the_guides_move_as_prior_and_searches_its_top_discards():
    gs = make_agent("search:guide=pretrained,samples=2,top=2", seed=0)
    assert isinstance(gs, SearchAgent) and gs.guide == "pretrained" and gs.top == 2
    assert _play_guided_search(gs, make_agent("pretrained")) == 0  # the guided agent plays the guide's game


def test_guided_search_is_blind_to_hidden_cards_and_stock_order():
    from test_search import check_blind

    check_blind(lambda: make_agent("search:guide=pretrained,samples=6,margin=0", seed=7))


def test_guide_rollouts_in_lockstep_play_the_moves_the_guide_plays_one_position_at_a_time():
    """``guide_rollouts`` (``policy=guide``) steps many positions at once; each must end as
    the same hand played one decision at a time with the guide's most probable legal move
    (``PPOAgent.logits`` of the seat's own observation), with that seat's payoff; a
    2-player hand is zero-sum (RULES.md §5)."""
    from rummy_env.agents.search import guide_rollouts

    guide = make_agent("pretrained")
    rules = Rules.preset("classic")
    states = []
    for seed in range(4):
        s = engine.new_game(rules, seed=seed)
        for _ in range(3 + seed):  # positions a few decisions in, each seat to move in some
            engine.apply(s, engine.legal_actions(s)[0])
        states.append(s)
    alone = _played_alone(states, guide)
    assert all(s.hand_over and s.payoffs[0] == -s.payoffs[1] for s in alone)
    for seat in (0, 1):
        ends = [s.copy() for s in states]
        pays = guide_rollouts(ends, guide.logits_batch, seat=seat)
        assert pays == [float(s.payoffs[seat]) for s in alone]
        assert [s.hands for s in ends] == [s.hands for s in alone]  # the very hands, card for card
    assert guide_rollouts([], guide.logits_batch) == []


def _played_alone(states, guide):
    """Copies of ``states`` played out one decision at a time by ``guide``'s arg-max."""
    from rummy_env.agents.search import _encoder

    out = []
    for s in states:
        s = s.copy()
        enc = _encoder(s.table)
        while not s.hand_over:
            legal = engine.legal_actions(s)
            lg = guide.logits(enc.encode(s, s.current))
            engine.apply(s, max(legal, key=lambda a: (lg[a], -a)))
        out.append(s)
    return out


def test_a_search_with_the_guide_as_its_rollout_policy_plays_legal_moves_and_says_what_it_needs():
    gs = make_agent("search:guide=pretrained,policy=guide,samples=2", seed=0)
    assert gs.policy == "guide"
    assert _searched_moves(gs, "classic", seed=1, steps=10) >= 2
    with pytest.raises(ValueError, match=r"policy=guide plays the rollouts with the guide's moves: it needs guide=POLICY"):
        make_agent("search:policy=guide")
    with pytest.raises(ValueError, match="policy=guide plays every rollout to the end of the hand: depth must be 0"):
        make_agent("search:guide=pretrained,policy=guide,depth=3")


@pytest.mark.parametrize("rules", ["jokers", "rum500"])
def test_a_search_with_the_guide_as_its_rollout_policy_plays_the_other_tables(rules):
    """policy=guide at a deck-variant table (jokers: joker steps in the rollouts) and at 500
    Rum, with that table's shipped policy as the guide: legal moves, searched decisions."""
    gs = make_agent(f"search:guide=pretrained:{rules},policy=guide,samples=1", seed=1)
    assert _searched_moves(gs, rules, seed=2, steps=8) >= 2


def _searched_moves(gs, rules: str, seed: int, steps: int) -> int:
    """Play ``steps`` decisions of a hand (``seed``) at ``rules`` with the search ``gs`` at
    every seat, each checked legal; returns how many were searched (the move among the
    values of its candidates)."""
    env = rummy_v0.raw_env(rules=rules)  # raw_env raises on an illegal action
    env.reset(seed=seed)
    searched = 0
    for _ in range(steps):
        ob = env.observe(env.agent_selection)
        a = gs.act(ob["observation"], ob["action_mask"])
        assert ob["action_mask"][a] == 1
        searched += bool(gs.last_values) and a in gs.last_values
        env.step(a)
    return searched


def test_a_search_with_the_guide_as_its_rollout_policy_is_blind_to_hidden_cards_and_stock_order():
    from test_search import check_blind

    check_blind(lambda: make_agent("search:guide=pretrained,policy=guide,samples=2,margin=0", seed=7), stop=25)


def test_guided_search_led_by_the_base_keeps_the_bases_move_and_searches_the_guides_discards():
    """lead=base: the base agent's move (here the heuristic's, which melds at once where the
    shipped policy, a clone of the cutting heuristic, holds) is the prior and plays the melds
    and lay-offs; the discards searched are the guide's top 2 plus the base's."""
    gs = make_agent("search:guide=pretrained,lead=base,base=heuristic,samples=2,top=2", seed=0)
    assert (gs.lead, gs.base) == ("base", "heuristic")
    assert _play_guided_search(gs, make_agent("heuristic")) >= 3  # the base's game, not the guide's


def test_guided_search_led_by_the_base_is_blind_to_hidden_cards_and_stock_order():
    from test_search import check_blind

    check_blind(lambda: make_agent("search:guide=pretrained,lead=base,base=cutting,samples=6,margin=0", seed=7))


def test_guide_probability_is_the_softmax_of_the_best_legal_logit_over_the_legal_ones():
    from rummy_env.agents.search import guide_probability

    logits = np.array([0.0, np.log(3.0), 50.0, 0.0])  # id 2 illegal: it must not count
    assert guide_probability(logits, [0, 1, 3]) == pytest.approx(3 / 5)  # e^ln3 / (1 + 3 + 1)
    assert guide_probability(logits, [1]) == 1.0
    assert guide_probability(np.array([1000.0, 0.0]), [0, 1]) == 1.0  # stable: no overflow


@pytest.fixture(scope="module")
def shipped_guide():
    return make_agent("pretrained")


def test_a_sure_guide_plays_its_move_unsearched_and_an_unsure_one_is_searched(shipped_guide):
    """``sure``: a decision whose guide's best legal move has at least that probability is
    the guide's move without a search; below it the guided search goes on as without
    ``sure``. A hand with every seat the guided search: at ``sure=1.0`` only the moves
    the guide is certain of (probability 1.0 in float64) go unsearched, so some decisions
    are searched; at ``sure=1e-9``, below every probability, none is."""
    from rummy_env.agents.search import guide_probability

    guide = shipped_guide
    for sure, searched_any in ((1.0, True), (1e-9, False)):
        gs = make_agent(f"search:guide=pretrained,samples=2,sure={sure}", seed=0)
        plain = make_agent("search:guide=pretrained,samples=2", seed=0)
        seen: list[bool] = []
        env = rummy_v0.raw_env(rules="classic")
        env.reset(seed=1)
        while not all(env.terminations.values()):
            ob = env.observe(env.agent_selection)
            o, m = ob["observation"], ob["action_mask"]
            calls = []
            gs.search = lambda v, cands, prior, calls=calls: calls.append(prior) or prior
            plain.search = lambda v, cands, prior, calls=calls: calls.append(-1) or prior
            plain_move = plain.act(o, m)
            wanted = len(calls)  # the guided search without sure searched this decision
            a = gs.act(o, m)
            p = guide_probability(guide.logits(o), list(np.flatnonzero(m)))
            if wanted and p >= sure:
                assert len(calls) == 1 and a == guide.act(o, m)  # unsearched: the guide's move
            elif wanted:
                assert calls[-1] == a == plain_move  # searched as without sure
                seen.append(True)
            env.step(a)
        assert any(seen) == searched_any


def test_led_by_the_base_a_sure_guide_replaces_the_bases_move_only_where_it_is_a_candidate(shipped_guide):
    """``lead=base`` with ``sure``: at a decision the base-led search would search, the guide's
    move (the guide sure of it) is played unsearched when it is one of the candidates; when
    it is not (the guide would meld where the base discards), the search goes on."""
    guide = shipped_guide
    gs = make_agent("search:guide=pretrained,lead=base,base=heuristic,samples=2,sure=0.000001", seed=0)
    plain = make_agent("search:guide=pretrained,lead=base,base=heuristic,samples=2", seed=0)
    kinds = set()
    env = rummy_v0.raw_env(rules="classic")
    for seed in (1, 2):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            ob = env.observe(env.agent_selection)
            o, m = ob["observation"], ob["action_mask"]
            cands, calls = [], []
            plain.search = lambda v, c, prior: cands.append(list(c)) or prior
            gs.search = lambda v, c, prior: calls.append(prior) or prior
            plain_move = plain.act(o, m)
            a = gs.act(o, m)
            if cands:
                mine = guide.act(o, m)
                if mine in cands[0]:
                    assert a == mine and not calls
                    kinds.add("guide's")
                else:
                    assert a == plain_move and calls
                    kinds.add("searched")
            else:
                assert a == plain_move and not calls
            env.step(a)
    assert "guide's" in kinds


@pytest.mark.parametrize("spec, words", [
    ("search:sure=0.9", "sure is the guide's probability above which its move is played without a search: it "
                        "needs guide=POLICY"),
    ("search:guide=pretrained,sure=0", r"sure must be a probability in \(0, 1\], got 0.0"),
    ("search:guide=pretrained,sure=1.01", r"sure must be a probability in \(0, 1\], got 1.01"),
    ("search:guide=pretrained,sure=high", r"sure must be a probability in \(0, 1\], got 'high'"),
    ("search:guide=pretrained:", "'pretrained:' names no table after the colon: give pretrained"),
    ("search:guide=ppo:/tmp", "'/tmp' is a folder; give the policy's file"),
    ("pretrained:", "agent 'pretrained:': 'pretrained:' names no table after the colon"),
    ("ppo:/tmp", "'/tmp' is a folder; give the policy's file"),
    ("search:guide=heuristic", "guide must be a trained policy"),
    ("search:guide=search", "guide must be a trained policy"),
    ("search:guide=ppo:/no/such.zip", "policy file not found"),
    ("search:guide=pretrained:two_decks", "no policy is shipped for the two_decks table"),
    ("search:guide=pretrained,top=0", "top must be an int >= 1"),
    ("search:guide=", "guide needs a trained policy"),
    ("search:top=2", "top counts the guide's discards: it needs guide=POLICY"),
    ("search:lead=base", "lead names whose move a guided search keeps: it needs guide=POLICY"),
    ("search:lead=guide", "lead names whose move a guided search keeps: it needs guide=POLICY"),
    ("search:base", r"search option 'base' needs a value: base=VALUE"),
    ("search:guide=pretrained,lead=policy", "lead must be one of guide, base, got 'policy'"),
])
def test_guided_search_options_refused(spec, words):
    with pytest.raises(ValueError, match=words):
        make_agent(spec)


def test_a_guide_of_another_table_is_told_before_and_when_it_acts():
    from rummy_env.agents import table_misfit

    gs = make_agent("search:guide=pretrained:rum500")
    assert table_misfit(gs, Rules.preset("rum500")) is None
    assert table_misfit(gs, CLASSIC).startswith("its guide 'pretrained:rum500' was trained for a 2-player rum500 "
                                                "table, this is a 2-player standard table")
    env = rummy_v0.raw_env(rules="classic")
    env.reset(seed=1)
    ob = env.observe(env.agent_selection)
    with pytest.raises(ValueError, match="the search's guide 'pretrained:rum500' was trained for a 2-player rum500 "
                                         "table, this observation is from a 2-player standard table"):
        gs.act(ob["observation"], ob["action_mask"])


def test_warm_start_from_a_loaded_policy_is_dagger_only():
    """``clones_first`` false (init_policy): no teacher games are cloned; the network's own
    play is labelled and fitted (a tiny network and the heuristic teacher, fast)."""
    from rummy_env.actions import num_actions
    from rummy_env.observation import Encoder

    cfg = TrainConfig(init_policy="pretrained", warmstart_teacher="heuristic", warmstart_dagger_rounds=1,
                      warmstart_dagger_decisions=1000, warmstart_dagger_epochs=1, workers=1, seed=3)
    cfg.validate()
    torch.manual_seed(0)
    body = torch.nn.Linear(Encoder.for_rules(CLASSIC).size, num_actions(CLASSIC) + 1)

    def forward(o):
        out = body(o)
        return out[:, :-1], out[:, -1]

    before = [p.detach().clone() for p in body.parameters()]
    prog: dict = {}
    res = warmstart.warm_start(cfg, CLASSIC, list(body.parameters()), forward, verbose=0, progress=prog)
    assert res["decisions"] == 0 and set(res["parts_s"]) == {"dagger_1_play", "dagger_1_fit"}
    assert 0 < res["samples"] <= 1000 and prog["fits_done"] == 1 and len(prog["weights"]) == 2
    assert any(not torch.equal(a, b) for a, b in zip(before, body.parameters()))


# ------------------------------------------------------------------ a policy as the teacher

def test_a_policy_teacher_labels_every_position_with_its_greedy_move():
    """Distillation: ``warmstart_teacher = "pretrained"`` labels each position with the
    shipped policy's most probable legal action, as the agent itself plays it."""
    obs, masks, actions, returns = warmstart.collect(Rules.preset("classic"), "pretrained", 300, seed=4)
    assert 200 <= len(actions) <= 300 and returns.shape == actions.shape
    teacher = make_agent("pretrained")
    assert [teacher.act(o, m.astype(np.int8)) for o, m in zip(obs, masks)] == actions.tolist()
    assert all(masks[j][a] for j, a in enumerate(actions))


def test_distilling_the_shipped_policy_into_another_network(tmp_path, monkeypatch):
    """A run whose network is not the teacher's shape (trunk 64, not 256) learns the
    shipped policy's moves: after the fit it agrees with them far more often than a
    uniform pick among the legal actions would (1 / legal actions, averaged over the
    positions the run cloned: about 1/3, most positions being a draw between two), then
    trains on."""
    cfg = _cfg(tmp_path / "w", init_policy="", trunk=64, warmstart_teacher="pretrained",
               warmstart_decisions=1000, warmstart_dagger_rounds=0, warmstart_epochs=2)
    cfg.validate()
    collected = []  # the warm start's own positions: each label is a pass of the shipped plan network
    real_collect = warmstart.collect

    def spy(*a, **k):
        collected.append(real_collect(*a, **k))
        return collected[-1]

    monkeypatch.setattr(warmstart, "collect", spy)
    tr = Trainer(cfg, verbose=0)
    try:
        masks = collected[0][1]
        assert len(collected) == 1  # one collect: the 1,000 decisions (forced moves are not kept)
        chance = float(np.mean([1.0 / masks[j].sum() for j in range(len(masks))]))
        ws = tr.state["warm_start"]
        assert ws["decisions"] == 1000 and ws["accuracy"] > 1.8 * chance
        assert tr.model.policy.state_dict()["features_extractor.trunk.0.weight"].shape[0] == 64
    finally:
        tr.venv.close()
