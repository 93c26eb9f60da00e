#!/usr/bin/env python3
"""PyTorch eager reference for `headlab bench vs-pytorch`.

The headlab model of docs/model.md (the default shape unless --layers,
--heads, --d-model, --d-ff, --seq-len, --vocab or --no-mlp say otherwise,
as bench vs-pytorch passes its own model flags), written out in plain PyTorch
eager on one thread: weights stored [in, out] (y = x W + b), pre-LN blocks
of causal multi-head attention and an exact-GELU MLP, LayerNorm eps 1e-5,
biases, headlab's initialisation (embeddings N(0,1), linear weights
U(-1/sqrt(in), 1/sqrt(in)), biases 0, LayerNorm gains 1), the mean
cross-entropy of --loss (next-token, the default: every position's target,
the answer where there is one, else the next token; answers: the answer
positions alone), and Adam (lr 3e-3, betas 0.9 and 0.999, eps 1e-8). Each
step draws a fresh induction batch (T/2 distinct tokens of the vocabulary,
then the same rotated by a random r; answers at the second half; the
default 8 of 16), with torch's RNG: the
same shape and distribution as headlab's data, not the same bits. With
--loss answers --answer-rows (which headlab's bench passes for that loss)
the last block's MLP, the final LayerNorm and the unembedding run on the
answer positions only, as headlab's training step computes them: the same
loss and gradients, less work. Under next-token every row has a target and
both sides compute every row.

Used only for comparison, never by the product. Prints one JSON object.
Exit status 3 when torch cannot be imported.
"""

import argparse
import json
import math
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001 - any import failure means "no torch"
    print(json.dumps({"error": "PyTorch is not installed: %s" % e}))
    sys.exit(3)


class Model(torch.nn.Module):
    def __init__(self, vocab=16, seq_len=16, layers=2, heads=2, d=32, dff=64, mlp=True, seed=1):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.heads, self.d, self.mlp = heads, d, mlp

        def emb(*shape):
            return torch.nn.Parameter(torch.randn(*shape, generator=g))

        def lin(i, o):
            lim = 1 / math.sqrt(i)
            w = (torch.rand(i, o, generator=g) * 2 - 1) * lim
            return torch.nn.Parameter(w), torch.nn.Parameter(torch.zeros(o))

        def ln():
            return torch.nn.Parameter(torch.ones(d)), torch.nn.Parameter(torch.zeros(d))

        self.tok_emb = emb(vocab, d)
        self.pos_emb = emb(seq_len, d)
        self.blocks = []
        params = []
        for _ in range(layers):
            b = {}
            b["ln1"] = ln()
            for name in ("q", "k", "v", "out"):
                b[name] = lin(d, d)
            if mlp:
                b["ln2"] = ln()
                b["fc1"] = lin(d, dff)
                b["fc2"] = lin(dff, d)
            self.blocks.append(b)
            for v in b.values():
                params.extend(v)
        self.ln_f = ln()
        self.unembed = lin(d, vocab)
        self.extra = torch.nn.ParameterList(params + list(self.ln_f) + list(self.unembed))
        mask = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, tok, first_answer=0):
        """Logits [B*(T-first_answer), V]: with first_answer > 0, the last
        block's MLP, the final LayerNorm and the unembedding run on
        positions first_answer.. only, as headlab's training step does."""
        B, T = tok.shape
        H, D = self.heads, self.d
        Dh = D // H
        x = F.embedding(tok, self.tok_emb) + self.pos_emb[:T]
        for i, b in enumerate(self.blocks):
            h = F.layer_norm(x, (D,), b["ln1"][0], b["ln1"][1], 1e-5)
            q = torch.addmm(b["q"][1], h.reshape(B * T, D), b["q"][0]).view(B, T, H, Dh).transpose(1, 2)
            k = torch.addmm(b["k"][1], h.reshape(B * T, D), b["k"][0]).view(B, T, H, Dh).transpose(1, 2)
            v = torch.addmm(b["v"][1], h.reshape(B * T, D), b["v"][0]).view(B, T, H, Dh).transpose(1, 2)
            s = (q @ k.transpose(-1, -2)) / math.sqrt(Dh)
            s = s.masked_fill(self.mask[:T, :T], float("-inf"))
            p = torch.softmax(s, dim=-1)
            o = (p @ v).transpose(1, 2).reshape(B * T, D)
            x = x + torch.addmm(b["out"][1], o, b["out"][0]).view(B, T, D)
            if i == len(self.blocks) - 1 and first_answer > 0:
                x = x[:, first_answer:]
            if not self.mlp:
                continue
            R = x.shape[0] * x.shape[1]
            h = F.layer_norm(x, (D,), b["ln2"][0], b["ln2"][1], 1e-5).reshape(R, D)
            h = F.gelu(torch.addmm(b["fc1"][1], h, b["fc1"][0]))  # exact (erf) GELU
            x = x + torch.addmm(b["fc2"][1], h, b["fc2"][0]).view(x.shape)
        x = F.layer_norm(x, (D,), self.ln_f[0], self.ln_f[1], 1e-5)
        return torch.addmm(self.unembed[1], x.reshape(-1, D), self.unembed[0])


def induction_batch(B, n=8, vocab=16, gen=None):
    """Tokens [B, 2n] and targets [B, 2n] (-100 off the answer positions)."""
    perm = torch.rand(B, vocab, generator=gen).argsort(dim=1)[:, :n]
    r = torch.randint(0, n, (B, 1), generator=gen)
    idx = (torch.arange(n).unsqueeze(0) + r) % n
    tok = torch.cat([perm, perm.gather(1, idx)], dim=1)
    tgt = torch.full((B, 2 * n), -100, dtype=torch.long)
    tgt[:, n:] = tok.gather(1, idx + 1)
    return tok, tgt


def next_token_targets(tok, tgt):
    """The next-token loss's targets: each answer, else the next token;
    the last position keeps only an answer."""
    out = tgt.clone()
    T = tok.shape[1]
    for i in range(T - 1):
        none = out[:, i] == -100
        out[none, i] = tok[none, i + 1]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=32)
    ap.add_argument("--d-ff", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=16)
    ap.add_argument("--vocab", type=int, default=16)
    ap.add_argument("--no-mlp", action="store_true", help="attention-only: no MLP (and no LayerNorm before it)")
    ap.add_argument("--start-at", type=float, default=0,
                    help="sweep mode: wait until this Unix time, then train for --seconds")
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--loss", choices=["next-token", "answers"], default="next-token")
    ap.add_argument("--answer-rows", action="store_true",
                    help="with --loss answers: compute the last block's MLP and the unembedding on the answer positions only")
    args = ap.parse_args()
    if args.answer_rows and args.loss != "answers":
        ap.error("--answer-rows needs --loss answers: under next-token every row has a target")
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    if args.seq_len % 2 or args.vocab < args.seq_len // 2 or args.d_model % args.heads:
        ap.error("induction needs an even --seq-len, --vocab >= seq-len/2, and --heads dividing --d-model")
    model = Model(vocab=args.vocab, seq_len=args.seq_len, layers=args.layers, heads=args.heads,
                  d=args.d_model, dff=args.d_ff, mlp=not args.no_mlp, seed=args.seed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.9, 0.999), eps=1e-8)
    gen = torch.Generator().manual_seed(args.seed)

    def step():
        tok, tgt = induction_batch(args.batch, n=args.seq_len // 2, vocab=args.vocab, gen=gen)
        if args.loss == "next-token":
            tgt = next_token_targets(tok, tgt)
        first = tok.shape[1] // 2 if args.answer_rows else 0
        logits = model(tok, first)
        loss = F.cross_entropy(logits, tgt[:, first:].reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for _ in range(args.warmup):
        loss = step()
    steps = args.steps
    if args.start_at > 0:
        # Sweep mode: every process trains in the same wall-clock window.
        time.sleep(max(0.0, args.start_at - time.time()))
        start, steps = time.perf_counter(), 0
        while time.perf_counter() - start < args.seconds:
            loss = step()
            steps += 1
    else:
        start = time.perf_counter()
        for _ in range(steps):
            loss = step()
    secs = time.perf_counter() - start
    print(json.dumps({
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "loss": args.loss,
        "batch": args.batch,
        "shape": {"layers": args.layers, "heads": args.heads, "d_model": args.d_model, "d_ff": args.d_ff,
                  "seq_len": args.seq_len, "vocab": args.vocab, "mlp": not args.no_mlp},
        "steps": steps,
        "ms_per_step": 1000 * secs / max(steps, 1),
        "steps_per_s": steps / secs if secs > 0 else 0.0,
        "final_loss": float(loss),
    }))


if __name__ == "__main__":
    main()
