#!/usr/bin/env python3
"""Independent numpy reference for headlab's causal tools (docs/causal.md).

Reads a TransformerLens export (`headlab export`, .safetensors or .npz) and
a dump (`headlab dump`: tokens and targets of the first held-out examples),
runs the model forward in float64 with numpy alone, with hooks where
docs/causal.md puts them, and recomputes what headlab reported:

  --heads FILE      `headlab heads --json`: every head's OV copying score,
                    top-1 copy accuracy and prefix-matching score, the
                    in-context learning score (first 256 examples of the
                    dump), and, when the dump holds all 1,000 held-out
                    examples, held-out accuracy with each head switched off
                    by the report's ablation method
  --patch FILE      `headlab patch --json`: activation patching
  --attribute FILE  `headlab attribute --json`: direct logit attribution
                    and the logit lens
  --circuit FILE    `headlab circuit --json`: every edge's effect by path
                    patching, the intact runs' logit difference and the
                    circuit's faithfulness (docs/circuits.md)
  --ablated-dump F  a dump written with --ablate/--ablation: its logits,
                    with those heads replaced as the method says, from the
                    dump's own examples

Prints one JSON line with the largest difference of each check and exits 1
when any is over --tol (1e-5) (--logits-tol, 1e-4, for logits). An
accuracy may differ by the answers whose two largest logits lie within
1e-4 of each other (float32 against float64).

    tools/causal_ref.py --weights tl.safetensors --dump d.safetensors --patch p.json

Nothing here comes from headlab's Go code: the file readers follow the
formats' specifications, the model follows TransformerLens's layout, the
measures docs/causal.md.
"""
import argparse
import json
import math
import sys

import numpy as np

from interop_ref import layer_norm, gelu, read  # the same directory

SCORED = 256  # inspect.ScoredExamples
HELD_BACK = {"induction-unseen": 8}  # tasks.go: ids the task never trains on
NEAR_TIE = 1e-4


def mix(k):
    """SplitMix64's output for counter k (docs/causal.md)."""
    m = (1 << 64) - 1
    z = ((k + 1) * 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


class Model:
    """A TransformerLens state dict run forward in float64."""

    def __init__(self, W, cfg):
        self.f = lambda k: W[k].astype(np.float64)
        self.keys = set(W.keys())
        self.cfg = cfg
        self.L, self.H, self.Dh = cfg["n_layers"], cfg["n_heads"], cfg["d_head"]
        self.D, self.V = cfg["d_model"], cfg["d_vocab"]
        self.eps, self.causal = cfg["eps"], cfg["attention_dir"] == "causal"

    def run(self, tokens, heads=None, resid=None):
        """Runs tokens [B, T]. heads[l] and resid[l], when given, are
        (gate, replacement) pairs, [B, T, H, Dh] and [B, T, D]: the head
        outputs z and the residual entering block l become x*gate + r.
        Returns the logits, and what was seen: resid_pre[l], z[l],
        mlp[l], the final residual, the attention patterns, the lens."""
        f, L = self.f, self.L
        B, T = tokens.shape
        x = f("embed.W_E")[tokens] + f("pos_embed.W_pos")[:T][None]
        seen = {"resid_pre": [], "z": [], "mlp": [], "pattern": [], "lens": []}
        mask = np.tril(np.ones((T, T), dtype=bool)) if self.causal else np.ones((T, T), dtype=bool)
        for l in range(L):
            p = f"blocks.{l}."
            if resid and l in resid:
                g, r = resid[l]
                x = x * g + r
            seen["resid_pre"].append(x)
            seen["lens"].append(self.unembed(x))
            h = layer_norm(x, f(p + "ln1.w"), f(p + "ln1.b"), self.eps)
            q = np.einsum("bpm,hmd->bphd", h, f(p + "attn.W_Q")) + f(p + "attn.b_Q")
            k = np.einsum("bpm,hmd->bphd", h, f(p + "attn.W_K")) + f(p + "attn.b_K")
            v = np.einsum("bpm,hmd->bphd", h, f(p + "attn.W_V")) + f(p + "attn.b_V")
            s = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.Dh)
            s = np.where(mask, s, -np.inf)
            s = s - s.max(-1, keepdims=True)
            a = np.exp(s)
            a = a / a.sum(-1, keepdims=True)
            seen["pattern"].append(a)
            z = np.einsum("bhqk,bkhd->bqhd", a, v)
            if heads and l in heads:
                g, r = heads[l]
                z = z * g + r
            seen["z"].append(z)
            x = x + np.einsum("bqhd,hdm->bqm", z, f(p + "attn.W_O")) + f(p + "attn.b_O")
            h = layer_norm(x, f(p + "ln2.w"), f(p + "ln2.b"), self.eps)
            mlp = gelu(h @ f(p + "mlp.W_in") + f(p + "mlp.b_in")) @ f(p + "mlp.W_out") + f(p + "mlp.b_out")
            seen["mlp"].append(mlp)
            x = x + mlp
        seen["final"] = x
        return self.unembed(x), seen

    def unembed(self, x):
        f = self.f
        return layer_norm(x, f("ln_final.w"), f("ln_final.b"), self.eps) @ f("unembed.W_U") + f("unembed.b_U")


def edge_run(model, tokens, patched, other):
    """Runs tokens [B, T] with edges patched (docs/circuits.md): patched
    maps a receiver's name (L1H0.q, mlp0, logits) to the senders (embed,
    pos_embed, L0H1, mlp0) whose output it reads from other[sender]
    instead of from this run; every other receiver reads this run's
    residual stream. Each receiver's input is the residual plus, for each
    patched sender, other less this run's output of it. Returns the
    logits and every sender's output in this run."""
    f, L, H = model.f, model.L, model.H
    B, T = tokens.shape
    sent = {"embed": f("embed.W_E")[tokens], "pos_embed": np.broadcast_to(f("pos_embed.W_pos")[:T][None], (B, T, model.D))}
    x = sent["embed"] + sent["pos_embed"]
    mask = np.tril(np.ones((T, T), dtype=bool)) if model.causal else np.ones((T, T), dtype=bool)

    def read(name, x):
        return x + sum((other[s] - sent[s] for s in patched.get(name, [])), np.zeros_like(x))

    for l in range(L):
        p = f"blocks.{l}."
        qkv = {}
        for c in "QKV":
            xs = np.stack([read(f"L{l}H{h}.{c.lower()}", x) for h in range(H)], 2)  # [B, T, H, D]
            hn = layer_norm(xs, f(p + "ln1.w"), f(p + "ln1.b"), model.eps)
            qkv[c] = np.einsum("bphm,hmd->bphd", hn, f(p + f"attn.W_{c}")) + f(p + f"attn.b_{c}")
        sc = np.einsum("bqhd,bkhd->bhqk", qkv["Q"], qkv["K"]) / math.sqrt(model.Dh)
        sc = np.where(mask, sc, -np.inf)
        a = np.exp(sc - sc.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        z = np.einsum("bhqk,bkhd->bqhd", a, qkv["V"])
        for h in range(H):
            sent[f"L{l}H{h}"] = z[:, :, h] @ f(p + "attn.W_O")[h]
        x = x + sum(sent[f"L{l}H{h}"] for h in range(H)) + f(p + "attn.b_O")
        if p + "ln2.w" not in model.keys:
            continue
        hn = layer_norm(read(f"mlp{l}", x), f(p + "ln2.w"), f(p + "ln2.b"), model.eps)
        sent[f"mlp{l}"] = gelu(hn @ f(p + "mlp.W_in") + f(p + "mlp.b_in")) @ f(p + "mlp.W_out") + f(p + "mlp.b_out")
        x = x + sent[f"mlp{l}"]
    return model.unembed(read("logits", x)), sent


def check_circuit(model, rep, tokens, targets, task, ck):
    N = rep["examples"]
    X, Y = tokens[:N], targets[:N]
    Xc = corrupt(X, rep["corruption"], task, model.V)
    M = lambda lg: float(logit_diff(lg, Y).mean())
    clean, sent_clean = edge_run(model, X, {}, {})
    bad, sent_bad = edge_run(model, Xc, {}, {})
    mc, mb = M(clean), M(bad)
    ck.close("circuit clean logit_diff", rep["clean_logit_diff"], mc)
    ck.close("circuit corrupted logit_diff", rep["corrupted_logit_diff"], mb)
    noising = rep["direction"] == "noising"
    base, other = (X, sent_bad) if noising else (Xc, sent_clean)
    m_base = mc if noising else mb
    for e in rep["edges"]:
        lg, _ = edge_run(model, base, {e["to"]: [e["from"]]}, other)
        # (M - M_base) / (M_other - M_base): the share of the way to the other run.
        ck.close("circuit edge effect", e["effect"], normalise(M(lg), m_base, mc + mb - m_base))
    # The circuit: every edge outside it patched (noising), or every edge
    # in it (denoising).
    patched = {}
    for e in rep["edges"]:
        if e["in_circuit"] != noising:
            patched.setdefault(e["to"], []).append(e["from"])
    lg, _ = edge_run(model, base, patched, other)
    ck.close("circuit faithfulness", rep["faithfulness"], normalise(M(lg), mb, mc))


def answers(targets):
    return targets >= 0


def logit_diff(logits, targets):
    """Per answer: the answer's logit minus the mean logit."""
    m = answers(targets)
    t = np.where(m, targets, 0)
    picked = np.take_along_axis(logits, t[..., None], -1)[..., 0]
    return (picked - logits.mean(-1))[m]


def accuracy(logits, targets):
    """Accuracy on the answers, and the answers whose two largest logits
    are within NEAR_TIE (where float32 may break the tie otherwise)."""
    m = answers(targets)
    lg = logits[m]
    hits = lg.argmax(-1) == targets[m]
    top2 = np.sort(lg, -1)[:, -2:]
    return hits.mean() if len(hits) else 0.0, int((top2[:, 1] - top2[:, 0] < NEAR_TIE).sum()), len(hits)


class Checker:
    def __init__(self, tol):
        self.tol, self.worst, self.bad = tol, {}, []

    def close(self, name, got, want, tol=None, slack=0.0):
        tol = self.tol if tol is None else tol
        d = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - np.asarray(want, dtype=np.float64)))) if np.size(want) else 0.0
        self.worst[name] = max(self.worst.get(name, 0.0), d)
        if not d <= tol + slack:
            self.bad.append(f"{name}: differs by {d:.3g} (tolerance {tol + slack:.3g})")


def corrupt(tokens, kind, task, vocab):
    """docs/causal.md's corruptions of clean examples tokens [N, T]."""
    N, T = tokens.shape
    if kind == "other":
        return tokens[(np.arange(N) + 1) % N]
    if kind == "first-half":
        trained = vocab - HELD_BACK.get(task, 0)
        out = tokens.copy()
        for n in range(N):
            unused = [v for v in range(trained) if v not in set(tokens[n].tolist())]
            for i in range(T // 2):
                out[n, i] = unused[(i + n) % len(unused)]
        return out
    raise ValueError(f"no corruption {kind}")


def normalise(x, lo, hi):
    return 0.0 if hi == lo else (x - lo) / (hi - lo)


def check_patch(model, rep, tokens, targets, task, ck):
    N = rep["examples"]
    X, Y = tokens[:N], targets[:N]
    Xc = corrupt(X, rep["corruption"], task, model.V)
    clean, seen = model.run(X)
    bad, _ = model.run(Xc)
    M = lambda lg: float(logit_diff(lg, Y).mean())
    A = lambda lg: accuracy(lg, Y)
    mc, mb = M(clean), M(bad)
    (ac, tc, n), (ab, tb, _) = A(clean), A(bad)
    ck.close("patch clean logit_diff", rep["clean"]["logit_diff"], mc)
    ck.close("patch corrupted logit_diff", rep["corrupted"]["logit_diff"], mb)
    ck.close("patch clean accuracy", rep["clean"]["accuracy"], ac, slack=tc / n)
    ck.close("patch corrupted accuracy", rep["corrupted"]["accuracy"], ab, slack=tb / n)
    H, Dh, D, T = model.H, model.Dh, model.D, X.shape[1]
    for p_rep in rep["heads"] + rep["resid_pre"]:
        l, h = p_rep["layer"], p_rep["head"]
        for i, pos in enumerate(rep["positions"]):
            if h >= 0:
                g, r = np.ones((N, T, H, Dh)), np.zeros((N, T, H, Dh))
                g[:, pos, h], r[:, pos, h] = 0, seen["z"][l][:, pos, h]
                lg, _ = model.run(Xc, heads={l: (g, r)})
            else:
                g, r = np.ones((N, T, D)), np.zeros((N, T, D))
                g[:, pos], r[:, pos] = 0, seen["resid_pre"][l][:, pos]
                lg, _ = model.run(Xc, resid={l: (g, r)})
            ck.close("patch logit_diff", p_rep["logit_diff"][i], normalise(M(lg), mb, mc))
            a, ties, _ = A(lg)
            den = abs(ac - ab) or 1.0
            ck.close("patch accuracy", p_rep["accuracy"][i], normalise(a, ab, ac), slack=(ties + tc + tb) / n / den)


def directions(model):
    """u_a = gf * W_U[:, a] less its mean over d-model, [V, D]; the
    constant part; both again less their means over the vocabulary."""
    f = model.f
    u = (f("ln_final.w")[:, None] * f("unembed.W_U")).T
    u = u - u.mean(1, keepdims=True)
    c = f("ln_final.b") @ f("unembed.W_U") + f("unembed.b_U")
    return u, c, u - u.mean(0, keepdims=True), c - c.mean()


def check_attribute(model, rep, tokens, targets, ck):
    f = model.f
    N = rep["examples"]
    X, Y = tokens[:N], targets[:N]
    logits, seen = model.run(X)
    T = X.shape[1]
    x = seen["final"]
    inv = 1 / np.sqrt(((x - x.mean(-1, keepdims=True)) ** 2).mean(-1) + model.eps)  # [N, T]
    u, c, ud, cd = directions(model)
    m = answers(Y)
    a = np.where(m, Y, 0)
    U, Ud = u[a], ud[a]  # [N, T, D]
    parts = {"embed": f("embed.W_E")[X], "pos_embed": np.broadcast_to(f("pos_embed.W_pos")[:T][None], x.shape)}
    for l in range(model.L):
        for h in range(model.H):
            parts[f"L{l}H{h}"] = seen["z"][l][:, :, h] @ f(f"blocks.{l}.attn.W_O")[h]
        parts[f"L{l} attn bias"] = np.broadcast_to(f(f"blocks.{l}.attn.b_O"), x.shape)
        parts[f"L{l} mlp"] = seen["mlp"][l]
    total = np.zeros(m.sum())
    for p in rep["parts"]:
        name = p["name"]
        if name == "bias":
            lv, dv = c[a], cd[a]
        else:
            lv = inv * (parts[name] * U).sum(-1)
            dv = inv * (parts[name] * Ud).sum(-1)
        total += lv[m]
        ck.close("attribute logit", p["logit"], lv[m].mean())
        ck.close("attribute logit_diff", p["logit_diff"], dv[m].mean())
        by = [lv[:, t][m[:, t]].mean() for t in rep["positions"]]
        ck.close("attribute by_position", p["by_position"], by)
    picked = np.take_along_axis(logits, a[..., None], -1)[..., 0][m]
    ck.close("attribute parts sum to the logit", total, picked, tol=1e-9)
    ck.close("attribute mean logit", rep["logit"], picked.mean())
    ck.close("attribute mean logit_diff", rep["logit_diff"], logit_diff(logits, Y).mean())
    lens = seen["lens"] + [logits]
    for lr, lg in zip(rep["logit_lens"], lens):
        acc, ties, n = accuracy(lg, Y)
        ck.close("lens accuracy", lr["accuracy"], acc, slack=ties / n)
        z = lg - lg.max(-1, keepdims=True)
        prob = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
        ck.close("lens answer probability", lr["answer_probability"], np.take_along_axis(prob, a[..., None], -1)[..., 0][m].mean())


def ov_circuits(model):
    """docs/causal.md: E_c diag(g1) W_V W_O_c diag(gf) U_c per head."""
    f = model.f
    E = f("embed.W_E")
    E = E - E.mean(1, keepdims=True)
    U = f("ln_final.w")[:, None] * f("unembed.W_U")
    U = U - U.mean(1, keepdims=True)
    out = []
    for l in range(model.L):
        g1 = f(f"blocks.{l}.ln1.w")
        for h in range(model.H):
            Wv = g1[:, None] * f(f"blocks.{l}.attn.W_V")[h]
            Wo = f(f"blocks.{l}.attn.W_O")[h]
            Wo = Wo - Wo.mean(1, keepdims=True)
            out.append(E @ Wv @ Wo @ U)
    return out


def next_token_loss(logits, tokens, ts):
    lg = logits[:, ts]
    z = lg - lg.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    nxt = tokens[:, [t + 1 for t in ts]]
    return -np.take_along_axis(logp, nxt[..., None], -1)[..., 0].mean()


def ablated(model, X, heads_off, method):
    """The runs of X with heads_off ((l, h) pairs) replaced as method
    says, from X's own intact runs."""
    if not heads_off:
        return model.run(X)[0]
    N, T = X.shape
    _, seen = model.run(X)
    hooks = {}
    for l, h in heads_off:
        g, r = hooks.get(l, (np.ones((N, T, model.H, model.Dh)), np.zeros((N, T, model.H, model.Dh))))
        g[:, :, h] = 0
        z = seen["z"][l][:, :, h]
        if method == "mean":
            r[:, :, h] = z.mean(0)[None]
        elif method == "resample":
            r[:, :, h] = z[(np.arange(N) + 1) % N]
        hooks[l] = (g, r)
    return model.run(X, heads=hooks)[0]


def check_heads(model, rep, tokens, targets, task, ck):
    ov = ov_circuits(model)
    T = tokens.shape[1]
    half = T // 2
    vocab = model.V - HELD_BACK.get(task, 0)
    rep_tok = np.array([[mix(k * half + i % half) % vocab for i in range(T)] for k in range(SCORED)])
    _, seen = model.run(rep_tok)
    for hr in rep["heads"]:
        l, h = hr["layer"], hr["head"]
        k = l * model.H + h
        ev = np.linalg.eigvals(ov[k])
        ck.close("ov_copying", hr["circuit"]["ov_copying"], ev.real.sum() / np.abs(ev).sum())
        ck.close("ov_copy_accuracy", hr["circuit"]["ov_copy_accuracy"], (ov[k].argmax(1) == np.arange(model.V)).mean())
        pat = seen["pattern"][l][:, h]
        pm = np.mean([pat[:, t, t - half + 1] for t in range(half, 2 * half)])
        ck.close("prefix_matching", hr["circuit"]["prefix_matching"], pm)
    X = tokens[:SCORED]
    logits, _ = model.run(X)
    early = list(range(0, half - 1))
    late = list(range(half, T - 1))
    ck.close("icl_score", rep["icl_score"], next_token_loss(logits, X, late) - next_token_loss(logits, X, early))
    if len(tokens) < 1000:
        return
    method = rep["ablation"]
    base = []
    for name in rep["ablated"]:
        base.append((int(name[1:name.index("H")]), int(name[name.index("H") + 1:])))
    for hr in rep["heads"] + [None]:
        off = base + ([(hr["layer"], hr["head"])] if hr else [])
        acc, ties, n = accuracy(ablated(model, tokens, off, method), targets)
        got = hr["ablated_accuracy"] if hr else rep["accuracy"]
        ck.close(f"{method}-ablated accuracy", got, acc, slack=ties / n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--heads")
    ap.add_argument("--patch")
    ap.add_argument("--attribute")
    ap.add_argument("--circuit")
    ap.add_argument("--ablated-dump")
    ap.add_argument("--ablate", default="", help="the --ablate of --ablated-dump")
    ap.add_argument("--ablation", default="zero", help="the --ablation of --ablated-dump")
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--logits-tol", type=float, default=1e-4)
    args = ap.parse_args()

    W, wmeta = read(args.weights)
    model = Model(W, json.loads(wmeta["hooked_transformer_config"]))
    task = json.loads(wmeta["headlab_config"])["train"]["task"]
    D, _ = read(args.dump)
    tokens, targets = D["tokens"].astype(np.int64), D["targets"].astype(np.int64)
    ck = Checker(args.tol)
    load = lambda p: json.load(open(p))
    if args.patch:
        check_patch(model, load(args.patch), tokens, targets, task, ck)
    if args.circuit:
        check_circuit(model, load(args.circuit), tokens, targets, task, ck)
    if args.attribute:
        check_attribute(model, load(args.attribute), tokens, targets, ck)
    if args.heads:
        check_heads(model, load(args.heads), tokens, targets, task, ck)
    if args.ablated_dump:
        A, _ = read(args.ablated_dump)
        X = A["tokens"].astype(np.int64)
        off = [(int(n[1:n.index("H")]), int(n[n.index("H") + 1:])) for n in args.ablate.split(",") if n]
        ck.close("ablated logits", A["logits"], ablated(model, X, off, args.ablation), tol=args.logits_tol)
    print(json.dumps({"max_abs_diff": ck.worst, "failures": ck.bad}))
    return 1 if ck.bad else 0


if __name__ == "__main__":
    sys.exit(main())
