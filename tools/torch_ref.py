#!/usr/bin/env python3
"""headlab's transformer in PyTorch, written from docs/model.md and
docs/interop.md (not from headlab's Go code), for the checks that need a
model made elsewhere. Debian's python3-torch (1.13) is enough.

    torch_ref.py golden --no-mlp graph/testdata/golden/no-mlp
        graph's golden values for an attention-only model: random weights
        (headlab's names), and on graph/testdata/golden/batch.json, under
        both losses, the loss, logits and every gradient, in float64 from
        the float32 weights (as bench/pytorch/golden.py does for the
        default model).
    torch_ref.py train --out PREFIX [--no-mlp] [--steps N] [--until ACC] [--seed S]
        trains a model on the induction task in PyTorch (float32, AdamW
        with weight decay 0.1) until its accuracy reaches --until (0.95),
        and writes it as a TransformerLens state dict, PREFIX.safetensors,
        with its HookedTransformerConfig in PREFIX.json: a model trained
        elsewhere, for `headlab import`.
    torch_ref.py check --weights PREFIX.safetensors --config PREFIX.json
                       --dump DUMP.safetensors --attention-out ATT.json
        runs that state dict forward in TransformerLens's conventions, in
        float64, on the tokens of a `headlab dump`; prints the largest
        differences from the dump's logits and attention as JSON, writes
        its own attention as the file tools/headpatterns_ref.py reads, and
        exits 1 when the logits differ by more than --logits-tol (1e-5).
"""

import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    """(tensors, metadata): an 8-byte little-endian header length, a JSON
    header, then the data."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        lo, hi = info["data_offsets"]
        arr = np.frombuffer(blob[8 + n + lo : 8 + n + hi], dtype=DTYPES[info["dtype"]])
        out[name] = torch.from_numpy(arr.reshape(info["shape"]).copy())
    return out, meta


def write_safetensors(path, tensors, meta=None):
    """tensors: (name, tensor) pairs, written as F32."""
    header, blobs, off = {}, [], 0
    for name, t in tensors:
        data = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    if meta:
        header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


class Model:
    """docs/model.md's table and forward pass: every linear weight [in, out]
    (y = x W + b), pre-LN blocks, exact GELU, LayerNorm eps 1e-5; with
    mlp=False no ln2 and no MLP (an attention-only model)."""

    def __init__(self, vocab, seq_len, layers, heads, d, dff, mlp=True, causal=True, seed=1, dtype=torch.float32):
        g = torch.Generator().manual_seed(seed)
        self.V, self.T, self.L, self.H, self.D, self.mlp, self.causal = vocab, seq_len, layers, heads, d, mlp, causal
        self.params = []  # (name, tensor) in the order of docs/model.md's table

        def add(name, t):
            t = t.to(dtype).requires_grad_(True)
            self.params.append((name, t))

        def linear(name, i, o):
            lim = 1 / math.sqrt(i)
            add(name + ".weight", (torch.rand(i, o, generator=g, dtype=torch.float64) * 2 - 1) * lim)
            add(name + ".bias", torch.zeros(o))

        add("tok_emb", torch.randn(vocab, d, generator=g, dtype=torch.float64))
        add("pos_emb", torch.randn(seq_len, d, generator=g, dtype=torch.float64))
        for l in range(layers):
            p = "blocks.%d." % l
            add(p + "ln1.weight", torch.ones(d))
            add(p + "ln1.bias", torch.zeros(d))
            for n in ("q", "k", "v", "out"):
                linear(p + "attn." + n, d, d)
            if mlp:
                add(p + "ln2.weight", torch.ones(d))
                add(p + "ln2.bias", torch.zeros(d))
                linear(p + "mlp.fc1", d, dff)
                linear(p + "mlp.fc2", dff, d)
        add("ln_f.weight", torch.ones(d))
        add("ln_f.bias", torch.zeros(d))
        linear("unembed", d, vocab)
        self.w = dict(self.params)

    def forward(self, tok):
        """Logits [B*T, V] and attention [B, L, H, T, T]."""
        w, (B, T), H, D = self.w, tok.shape, self.H, self.D
        Dh = D // H
        ln = lambda x, n: F.layer_norm(x, (D,), w[n + ".weight"], w[n + ".bias"], 1e-5)
        lin = lambda x, n: x @ w[n + ".weight"] + w[n + ".bias"]
        x = w["tok_emb"][tok] + w["pos_emb"][:T]
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        patterns = []
        for l in range(self.L):
            p = "blocks.%d." % l
            h = ln(x, p + "ln1")
            q, k, v = (lin(h, p + "attn." + n).view(B, T, H, Dh).transpose(1, 2) for n in "qkv")
            s = q @ k.transpose(-1, -2) / math.sqrt(Dh)
            if self.causal:
                s = s.masked_fill(mask, float("-inf"))
            a = s.softmax(-1)
            patterns.append(a)
            x = x + lin((a @ v).transpose(1, 2).reshape(B, T, D), p + "attn.out")
            if self.mlp:
                x = x + lin(F.gelu(lin(ln(x, p + "ln2"), p + "mlp.fc1")), p + "mlp.fc2")
        return lin(ln(x, "ln_f"), "unembed").reshape(B * T, self.V), torch.stack(patterns, 1)

    def transformerlens(self):
        """The state dict in HookedTransformer's names and shapes
        (docs/interop.md's table)."""
        w, H, D = self.w, self.H, self.D
        Dh = D // H
        out = [("embed.W_E", w["tok_emb"]), ("pos_embed.W_pos", w["pos_emb"])]
        for l in range(self.L):
            p = "blocks.%d." % l
            out += [(p + "ln1.w", w[p + "ln1.weight"]), (p + "ln1.b", w[p + "ln1.bias"])]
            for n in "qkv":
                # [D, H*Dh] -> [H, D, Dh]: head h owns columns h*Dh..
                W = w[p + "attn." + n + ".weight"].reshape(D, H, Dh).permute(1, 0, 2)
                out += [(p + "attn.W_" + n.upper(), W), (p + "attn.b_" + n.upper(), w[p + "attn." + n + ".bias"].reshape(H, Dh))]
            out += [(p + "attn.W_O", w[p + "attn.out.weight"].reshape(H, Dh, D)), (p + "attn.b_O", w[p + "attn.out.bias"])]
            if self.mlp:
                out += [(p + "ln2.w", w[p + "ln2.weight"]), (p + "ln2.b", w[p + "ln2.bias"]),
                        (p + "mlp.W_in", w[p + "mlp.fc1.weight"]), (p + "mlp.b_in", w[p + "mlp.fc1.bias"]),
                        (p + "mlp.W_out", w[p + "mlp.fc2.weight"]), (p + "mlp.b_out", w[p + "mlp.fc2.bias"])]
        out += [("ln_final.w", w["ln_f.weight"]), ("ln_final.b", w["ln_f.bias"])]
        return out + [("unembed.W_U", w["unembed.weight"]), ("unembed.b_U", w["unembed.bias"])]

    def tl_config(self, dff):
        cfg = {"d_model": self.D, "d_head": self.D // self.H, "n_heads": self.H, "n_layers": self.L,
               "n_ctx": self.T, "d_vocab": self.V, "act_fn": "gelu", "normalization_type": "LN", "eps": 1e-5,
               "positional_embedding_type": "standard",
               "attention_dir": "causal" if self.causal else "bidirectional"}
        if self.mlp:
            cfg["d_mlp"] = dff
        else:
            cfg["attn_only"] = True
        return cfg


def induction_batch(B, gen, n=8, vocab=16):
    """docs/tasks.md's induction: n distinct tokens of the vocabulary, then
    the same rotated by a random r; the answers are the second half's next
    tokens. Tokens [B, 2n], targets [B, 2n] (-100 off the answers)."""
    first = torch.rand(B, vocab, generator=gen).argsort(dim=1)[:, :n]
    r = torch.randint(0, n, (B, 1), generator=gen)
    idx = (torch.arange(n).unsqueeze(0) + r) % n
    tok = torch.cat([first, first.gather(1, idx)], dim=1)
    tgt = torch.full((B, 2 * n), -100, dtype=torch.long)
    tgt[:, n:] = tok.gather(1, idx + 1)  # what followed the token's first occurrence
    return tok, tgt


def next_token(tok, tgt):
    """The next-token loss's targets: the answer where there is one, else
    the next token; the last position only an answer."""
    out = tgt.clone()
    nxt = out[:, :-1]
    nxt[nxt == -100] = tok[:, 1:][nxt == -100]
    return out


def golden(args):
    with open(args.batch) as f:
        batch = json.load(f)
    tok = torch.tensor(batch["tokens"])
    m = Model(vocab=16, seq_len=16, layers=2, heads=2, d=16, dff=32, mlp=not args.no_mlp, seed=1)
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for name, p in m.params:
            if name.endswith(".bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "ln" in name:
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
    os.makedirs(args.out, exist_ok=True)
    write_safetensors(os.path.join(args.out, "model.safetensors"), m.params)
    # float64 from the float32 weights: the truth the Go float32 is held to.
    m64 = Model(16, 16, 2, 2, 16, 32, mlp=not args.no_mlp, dtype=torch.float64)
    with torch.no_grad():
        for (_, p), (_, q) in zip(m64.params, m.params):
            p.copy_(q)
    for name, key in (("expected.safetensors", "targets"), ("expected-next-token.safetensors", "next_token_targets")):
        targets = torch.tensor(batch[key]).clamp(min=-1)
        targets[targets < 0] = -100
        for _, p in m64.params:
            p.grad = None
        logits, _ = m64.forward(tok)
        loss = F.cross_entropy(logits, targets.reshape(-1), ignore_index=-100)
        loss.backward()
        out = [("loss", loss.reshape(1)), ("logits", logits)] + [("grad." + n, p.grad) for n, p in m64.params]
        write_safetensors(os.path.join(args.out, name), out)
        print("%s: loss %.6f" % (name, loss.item()))


def train(args):
    torch.manual_seed(args.seed)
    m = Model(vocab=16, seq_len=16, layers=args.layers, heads=args.heads, d=args.d_model, dff=args.d_ff,
              mlp=not args.no_mlp, seed=args.seed)
    opt = torch.optim.AdamW([p for _, p in m.params], lr=args.lr, weight_decay=args.weight_decay)
    gen = torch.Generator().manual_seed(args.seed)
    held = torch.Generator().manual_seed(args.seed + 1)
    for step in range(1, args.steps + 1):
        tok, tgt = induction_batch(args.batch, gen)
        logits, _ = m.forward(tok)
        loss = F.cross_entropy(logits, next_token(tok, tgt).reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 and step < args.steps:
            continue
        with torch.no_grad():
            tok, tgt = induction_batch(256, held)
            logits, _ = m.forward(tok)
            hit = (logits.argmax(-1) == tgt.reshape(-1))[tgt.reshape(-1) >= 0].float().mean().item()
        if hit >= args.until:
            break  # the circuit has formed: stop before the logits grow
    cfg = m.tl_config(args.d_ff)
    write_safetensors(args.out + ".safetensors", m.transformerlens(), {"format": "pt"})
    with open(args.out + ".json", "w") as f:
        json.dump(cfg, f, indent=2)
    print(json.dumps({"steps": step, "final_loss": loss.item(), "accuracy": hit}))


def tl_forward(W, cfg, tokens):
    """HookedTransformer's forward pass in its own einsum conventions, in
    float64: logits [N, T, V] and attention [N, L, H, T, T]."""
    f = lambda k: W[k].to(torch.float64)
    eps, T = cfg["eps"], tokens.shape[1]
    ln = lambda x, n: F.layer_norm(x, (x.shape[-1],), f(n + ".w"), f(n + ".b"), eps)
    resid = f("embed.W_E")[tokens] + f("pos_embed.W_pos")[:T]
    patterns = []
    for l in range(cfg["n_layers"]):
        p = "blocks.%d." % l
        x = ln(resid, p + "ln1")
        q, k, v = (torch.einsum("bpm,hmd->bphd", x, f(p + "attn.W_" + n)) + f(p + "attn.b_" + n) for n in "QKV")
        s = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(cfg["d_head"])
        if cfg["attention_dir"] == "causal":
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        a = s.softmax(-1)
        patterns.append(a)
        z = torch.einsum("bhqk,bkhd->bqhd", a, v)
        resid = resid + torch.einsum("bqhd,hdm->bqm", z, f(p + "attn.W_O")) + f(p + "attn.b_O")
        if not cfg.get("attn_only"):
            x = ln(resid, p + "ln2")
            resid = resid + F.gelu(x @ f(p + "mlp.W_in") + f(p + "mlp.b_in")) @ f(p + "mlp.W_out") + f(p + "mlp.b_out")
    x = ln(resid, "ln_final")
    return x @ f("unembed.W_U") + f("unembed.b_U"), torch.stack(patterns, 1)


def check(args):
    W, _ = read_safetensors(args.weights)
    with open(args.config) as f:
        cfg = json.load(f)
    D, meta = read_safetensors(args.dump)
    tokens = D["tokens"].long()
    with torch.no_grad():
        logits, att = tl_forward(W, cfg, tokens)
    dl = (logits - D["logits"].double()).abs().max().item()
    da = (att - D["attention"].double()).abs().max().item()
    causal = cfg["attention_dir"] == "causal"
    with open(args.attention_out, "w") as f:
        json.dump({"causal": causal, "tokens": tokens.tolist(), "attention": att.tolist()}, f)
    print(json.dumps({"examples": int(tokens.shape[0]), "logits_max_abs_diff": dl, "attention_max_abs_diff": da}))
    return 0 if dl <= args.logits_tol else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("golden")
    g.add_argument("out")
    g.add_argument("--no-mlp", action="store_true")
    g.add_argument("--batch", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "graph", "testdata", "golden", "batch.json"))
    t = sub.add_parser("train")
    t.add_argument("--out", required=True)
    t.add_argument("--no-mlp", action="store_true")
    t.add_argument("--steps", type=int, default=3000, help="at most")
    t.add_argument("--until", type=float, default=0.95, help="stop once accuracy on 256 fresh sequences reaches this (checked every 100 steps)")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--layers", type=int, default=2)
    t.add_argument("--heads", type=int, default=2)
    t.add_argument("--d-model", type=int, default=32)
    t.add_argument("--d-ff", type=int, default=64)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--weight-decay", type=float, default=0.1,
                   help="AdamW's; it keeps the logits small enough (about 11) for float32 to hold them to 1e-5")
    c = sub.add_parser("check")
    c.add_argument("--weights", required=True)
    c.add_argument("--config", required=True)
    c.add_argument("--dump", required=True)
    c.add_argument("--attention-out", required=True)
    c.add_argument("--logits-tol", type=float, default=1e-5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    return {"golden": golden, "train": train, "check": check}[args.cmd](args) or 0


if __name__ == "__main__":
    sys.exit(main())
