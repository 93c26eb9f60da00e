#!/usr/bin/env python3
"""Golden values for graph's TestGolden, in the manner of llm.c's test_gpt2.

Builds a small headlab model (induction's vocabulary 16 and length 16,
2 layers, 2 heads, d-model 16, d-ff 32) with the architecture of
train_step.py's Model (docs/model.md), gives every parameter random values
(LayerNorm gains and every bias too, so that each one's gradient is
exercised), draws a batch of 4 induction sequences, and computes in float64
from the float32 weights, for each loss: the loss, the logits, and every
parameter's gradient. The answers loss is the mean cross-entropy over the
answer positions; the next-token loss the mean over every position with a
target: the answer where there is one, else the next token, and at the
last position only an answer (docs/model.md). Writes, into the directory
given (default graph/testdata/golden):

  model.safetensors     the weights, headlab's names and shapes (F32)
  batch.json            {"tokens": [B][T], "targets": [B][T] (-1 off the answers),
                         "next_token_targets": [B][T] (-1 where none)}
  expected.safetensors  answers: "loss" [1], "logits" [B*T, V], "grad.NAME" for every weight (F32)
  expected-next-token.safetensors   the same under the next-token loss

Run once (python3-torch); the outputs are checked in and the Go test needs
no Python.
"""

import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_step import Model, induction_batch, next_token_targets  # noqa: E402

V, T, L, H, D, FF, B = 16, 16, 2, 2, 16, 32, 4


def named_params(m):
    """headlab's names (graph.ParamShapes order) for the Model's tensors."""
    out = [("tok_emb", m.tok_emb), ("pos_emb", m.pos_emb)]
    for i, b in enumerate(m.blocks):
        p = "blocks.%d." % i
        out += [(p + "ln1.weight", b["ln1"][0]), (p + "ln1.bias", b["ln1"][1])]
        for n in ("q", "k", "v", "out"):
            out += [(p + "attn.%s.weight" % n, b[n][0]), (p + "attn.%s.bias" % n, b[n][1])]
        out += [(p + "ln2.weight", b["ln2"][0]), (p + "ln2.bias", b["ln2"][1])]
        out += [(p + "mlp.fc1.weight", b["fc1"][0]), (p + "mlp.fc1.bias", b["fc1"][1])]
        out += [(p + "mlp.fc2.weight", b["fc2"][0]), (p + "mlp.fc2.bias", b["fc2"][1])]
    out += [("ln_f.weight", m.ln_f[0]), ("ln_f.bias", m.ln_f[1])]
    out += [("unembed.weight", m.unembed[0]), ("unembed.bias", m.unembed[1])]
    return out


def write_safetensors(path, tensors):
    """The safetensors format: 8-byte header length, JSON header, data."""
    header, blobs, off = {}, [], 0
    for name, t in tensors:
        data = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "graph", "testdata", "golden")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    m = Model(vocab=V, seq_len=T, layers=L, heads=H, d=D, dff=FF, seed=1)
    g = torch.Generator().manual_seed(2)
    params = named_params(m)
    with torch.no_grad():
        for name, p in params:
            if name.endswith(".bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "ln" in name:
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
    tok, tgt = induction_batch(B, gen=torch.Generator().manual_seed(3))
    nt = next_token_targets(tok, tgt)
    # float64 from the float32 weights: the truth the Go float32 is held to.
    m = m.double()
    write_safetensors(os.path.join(out, "model.safetensors"), [(n, p.float()) for n, p in params])
    with open(os.path.join(out, "batch.json"), "w") as f:
        json.dump({"tokens": tok.tolist(), "targets": tgt.clamp(min=-1).tolist(),
                   "next_token_targets": nt.clamp(min=-1).tolist()}, f)
        f.write("\n")
    for name, targets in (("expected.safetensors", tgt), ("expected-next-token.safetensors", nt)):
        m.zero_grad(set_to_none=True)
        logits = m(tok)
        loss = F.cross_entropy(logits, targets.reshape(-1), ignore_index=-100)
        loss.backward()
        expected = [("loss", loss.reshape(1)), ("logits", logits)]
        expected += [("grad." + n, p.grad) for n, p in params]
        write_safetensors(os.path.join(out, name), expected)
        print("%s: loss %.6f, %d parameters, written to %s" % (name, loss.item(), sum(p.numel() for _, p in params), out))


if __name__ == "__main__":
    main()
