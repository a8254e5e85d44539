"""Issue 25, session 23: the search's candidate values as a policy-improvement target
(docs/training.md, "The search's values as the target"). Not part of the package: a record
of the experiment. From the repository's root:

    python experiments/issue25_value_targets.py --temperature 5 --positions 40000 --beta 1 \\
        --out runs/vt/t5.zip
    rummy eval --agents ppo:runs/vt/t5.zip search --rules classic --deals 100 --seed 7001 --workers 2

The shipped classic policy plays every seat of seeded hands (greedy,
``collect_on_policy``); the default ``search`` labels each position it reaches with its
mean payoff per searched candidate (``SearchAgent.last_values``, points); the policy is
fitted (Adam, 3 epochs, minibatches of 512) to the cross-entropy of
``softmax(values / temperature)`` over the candidates of each position with two or more,
plus ``beta`` times the KL divergence from its own old distribution on every position.
The result is saved as a MaskablePPO zip.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import time

import numpy as np
import torch

from rummy_env.agents.masking import mask_logits
from rummy_env.rules import Rules
from rummy_env.train.warmstart import MaskRows, collect_on_policy, greedy_student, part_seed, sb3_forward

CHUNK = 1000
SEED = 91


def label(args: tuple) -> list[tuple[int, dict[int, float]]]:
    """``(action, {candidate: mean payoff})`` of a seeded default search at each position of
    a chunk (``(seed, obs [k, obs_dim], packed masks, n_actions)``)."""
    seed, obs, packed, n_act = args
    from rummy_env.agents.search import SearchAgent

    agent = SearchAgent(seed)
    rows = MaskRows(0, n_act, packed)
    out = []
    for j in range(len(obs)):
        a = agent.act(obs[j], rows[j].astype(np.int8))
        out.append((a, dict(agent.last_values)))
    return out


def targets(res: list, n_rows: int, n_act: int, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """float32 ``[n_rows, n_act]`` target distributions (``softmax(values / temperature)`` on
    the searched candidates, 0 elsewhere) and bool ``[n_rows]``: the rows with two or more."""
    tgt = np.zeros((n_rows, n_act), np.float32)
    has = np.zeros(n_rows, bool)
    for i, (_, vals) in enumerate(res):
        if len(vals) >= 2:
            ks = list(vals)
            v = np.array([vals[k] for k in ks]) / temperature
            q = np.exp(v - v.max())
            tgt[i, ks] = q / q.sum()
            has[i] = True
    return tgt, has


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--temperature", type=float, default=5.0, help="points (softmax of the values over it)")
    p.add_argument("--positions", type=int, default=40000)
    p.add_argument("--beta", type=float, default=1.0, help="weight of the KL to the old policy")
    p.add_argument("--workers", type=int, default=2, help="labelling processes")
    p.add_argument("--policy", default="agents/pretrained/policy.zip")
    p.add_argument("--out", default="runs/vt/policy.zip")
    a = p.parse_args(argv)
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(2)
    t0 = time.time()
    model = MaskablePPO.load(a.policy, device="cpu")
    fwd = sb3_forward(model.policy)
    obs, masks, _, _ = collect_on_policy(Rules.preset("classic"), "heuristic", a.positions, SEED,
                                         greedy_student(fwd), packed=True)
    n_act = masks.n_actions
    jobs = [(part_seed(SEED, k), obs[s:s + CHUNK], masks.packed[s:s + CHUNK], n_act)
            for k, s in enumerate(range(0, len(obs), CHUNK))]
    res: list = []
    if a.workers <= 1:
        for j in jobs:
            res += label(j)
    else:
        with concurrent.futures.ProcessPoolExecutor(a.workers, mp_context=multiprocessing.get_context("spawn")) as ex:
            for part in ex.map(label, jobs):
                res += part
                print(f"labelled {len(res):,} of {len(obs):,} ({time.time() - t0:.0f} s)", flush=True)
    m = torch.as_tensor(masks[:])
    with torch.no_grad():
        old_logp = torch.cat([torch.log_softmax(mask_logits(fwd(torch.as_tensor(obs[s:s + 2048]))[0], m[s:s + 2048]), -1)
                              for s in range(0, len(obs), 2048)])
    tgt, has = targets(res, len(obs), n_act, a.temperature)
    differ = sum(1 for i, (_, vals) in enumerate(res)
                 if has[i] and int(old_logp[i].argmax()) != max(vals, key=vals.get))
    print(f"{has.sum():,} of {len(obs):,} positions searched; the highest value is not the policy's move on "
          f"{differ:,}", flush=True)
    opt = torch.optim.Adam([q for q in model.policy.parameters() if q.requires_grad], lr=1e-5)
    rng = np.random.default_rng(0)
    idx = np.arange(len(obs))
    tgt_t, has_t = torch.as_tensor(tgt), torch.as_tensor(has)
    for epoch in range(3):
        rng.shuffle(idx)
        for s in range(0, len(idx), 512):
            b = idx[s:s + 512]
            logp = torch.log_softmax(mask_logits(fwd(torch.as_tensor(obs[b]))[0], m[b]), -1)
            hb = has_t[b]
            t = tgt_t[b][hb]
            ce = -(t * torch.where(t > 0, logp[hb], torch.zeros_like(t))).sum(-1).mean() if hb.any() else logp.sum() * 0
            op = old_logp[b]
            kl = torch.where(m[b], op.exp() * (op - logp), torch.zeros_like(op)).sum(-1).mean()
            loss = ce + a.beta * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: cross-entropy {ce.item():.3f}, KL {kl.item():.4f} (last minibatch)", flush=True)
    with torch.no_grad():
        same = sum(int((mask_logits(fwd(torch.as_tensor(obs[s:s + 2048]))[0], m[s:s + 2048]).argmax(1)
                        == old_logp[s:s + 2048].argmax(1)).sum()) for s in range(0, len(obs), 2048))
    print(f"the policy keeps its move on {same / len(obs):.1%} of the positions", flush=True)
    model.save(a.out)
    print(f"wrote {a.out} ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
