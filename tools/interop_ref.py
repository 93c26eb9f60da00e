#!/usr/bin/env python3
"""Independent numpy check of headlab's exports (docs/interop.md).

Reads a weights file written by `headlab export` (TransformerLens or hf
layout, .safetensors or .npz) and a dump written by `headlab dump`, runs the
model forward in float64 with numpy alone, in the conventions of the layout
(TransformerLens's einsums, or PyTorch's nn.Linear), and compares its
attention and logits with the dump's. Prints one JSON line with the largest
differences and exits 1 when either is over its tolerance.

    tools/interop_ref.py --weights tl.safetensors --layout transformerlens --dump d.safetensors

Nothing here comes from headlab's Go code: the safetensors reader follows
the file format's specification, the model follows the layout's.
"""
import argparse
import json
import math
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path):
    """Returns (tensors, metadata) of a safetensors file: an 8-byte
    little-endian header length, a JSON header, then the raw data."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, info in header.items():
        lo, hi = info["data_offsets"]
        arr = np.frombuffer(blob[base + lo : base + hi], dtype=DTYPES[info["dtype"]])
        out[name] = arr.reshape(info["shape"])
    return out, meta


def read_npz(path):
    z = np.load(path, allow_pickle=False)
    meta = json.loads(z["__metadata__"].item()) if "__metadata__" in z.files else {}
    return {k: z[k] for k in z.files if k != "__metadata__"}, meta


def read(path):
    return read_npz(path) if path.endswith(".npz") else read_safetensors(path)


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu(x):
    """The exact GELU, torch's F.gelu: x Phi(x)."""
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def softmax_masked(scores, causal):
    T = scores.shape[-1]
    if causal:
        scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    scores = scores - scores.max(-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(-1, keepdims=True)


def forward_transformerlens(W, cfg, tokens):
    """HookedTransformer's forward pass, in its own einsum conventions."""
    f = lambda k: W[k].astype(np.float64)
    eps, causal = cfg["eps"], cfg["attention_dir"] == "causal"
    T = tokens.shape[1]
    resid = f("embed.W_E")[tokens] + f("pos_embed.W_pos")[:T][None]
    patterns = []
    for l in range(cfg["n_layers"]):
        p = f"blocks.{l}."
        x = layer_norm(resid, f(p + "ln1.w"), f(p + "ln1.b"), eps)
        q = np.einsum("bpm,hmd->bphd", x, f(p + "attn.W_Q")) + f(p + "attn.b_Q")
        k = np.einsum("bpm,hmd->bphd", x, f(p + "attn.W_K")) + f(p + "attn.b_K")
        v = np.einsum("bpm,hmd->bphd", x, f(p + "attn.W_V")) + f(p + "attn.b_V")
        scores = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(cfg["d_head"])
        pattern = softmax_masked(scores, causal)
        patterns.append(pattern)
        z = np.einsum("bhqk,bkhd->bqhd", pattern, v)
        resid = resid + np.einsum("bqhd,hdm->bqm", z, f(p + "attn.W_O")) + f(p + "attn.b_O")
        if cfg.get("attn_only"):
            continue
        x = layer_norm(resid, f(p + "ln2.w"), f(p + "ln2.b"), eps)
        resid = resid + gelu(x @ f(p + "mlp.W_in") + f(p + "mlp.b_in")) @ f(p + "mlp.W_out") + f(p + "mlp.b_out")
    x = layer_norm(resid, f("ln_final.w"), f("ln_final.b"), eps)
    logits = x @ f("unembed.W_U") + f("unembed.b_U")
    return np.stack(patterns, 1), logits


def forward_hf(W, model, tokens):
    """The PyTorch module of docs/interop.md: nn.Linear is x W^T + b."""
    f = lambda k: W[k].astype(np.float64)
    lin = lambda x, name: x @ f(name + ".weight").T + f(name + ".bias")
    H, L, causal = model["heads"], model["layers"], model["causal"]
    B, T = tokens.shape
    resid = f("tok_emb.weight")[tokens] + f("pos_emb.weight")[:T][None]
    D = resid.shape[-1]
    Dh = D // H
    patterns = []
    for l in range(L):
        p = f"blocks.{l}."
        x = layer_norm(resid, f(p + "ln1.weight"), f(p + "ln1.bias"), 1e-5)
        split = lambda y: y.reshape(B, T, H, Dh).transpose(0, 2, 1, 3)  # [B, H, T, Dh]
        q, k, v = (split(lin(x, p + "attn." + n + "_proj")) for n in "qkv")
        pattern = softmax_masked(q @ k.transpose(0, 1, 3, 2) / math.sqrt(Dh), causal)
        patterns.append(pattern)
        o = (pattern @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
        resid = resid + lin(o, p + "attn.out_proj")
        if model.get("no_mlp"):
            continue
        x = layer_norm(resid, f(p + "ln2.weight"), f(p + "ln2.bias"), 1e-5)
        resid = resid + lin(gelu(lin(x, p + "mlp.fc1")), p + "mlp.fc2")
    x = layer_norm(resid, f("ln_f.weight"), f("ln_f.bias"), 1e-5)
    return np.stack(patterns, 1), lin(x, "unembed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--layout", required=True, choices=["transformerlens", "hf"])
    ap.add_argument("--dump", required=True)
    ap.add_argument("--attention-tol", type=float, default=1e-5)
    ap.add_argument("--logits-tol", type=float, default=1e-4)
    args = ap.parse_args()

    W, wmeta = read(args.weights)
    D, dmeta = read(args.dump)
    tokens = D["tokens"].astype(np.int64)
    if args.layout == "transformerlens":
        att, logits = forward_transformerlens(W, json.loads(wmeta["hooked_transformer_config"]), tokens)
    else:
        att, logits = forward_hf(W, json.loads(wmeta["headlab_config"])["model"], tokens)
    strings = json.loads(dmeta["token_strings"])
    vocab = json.loads(wmeta["headlab_vocab"])
    if strings != [[vocab[t] for t in row] for row in tokens.tolist()]:
        print("token strings do not match the tokens", file=sys.stderr)
        return 1
    if att.shape != D["attention"].shape or logits.shape != D["logits"].shape:
        print(f"shapes: attention {att.shape} vs {D['attention'].shape}, logits {logits.shape} vs {D['logits'].shape}", file=sys.stderr)
        return 1
    da = float(np.abs(att - D["attention"]).max())
    dl = float(np.abs(logits - D["logits"]).max())
    print(json.dumps({"examples": int(tokens.shape[0]), "attention_max_abs_diff": da, "logits_max_abs_diff": dl}))
    return 0 if da <= args.attention_tol and dl <= args.logits_tol else 1


if __name__ == "__main__":
    sys.exit(main())
