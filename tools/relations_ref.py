#!/usr/bin/env python3
"""Reference relation scorer, written from docs/head-patterns.md ("Relations").

An independent, deliberately plain implementation (Python 3 standard library
only) used to cross-check the relation scores of headlab's Go package
`analysis`.

Usage: relations_ref.py FILE.json   (or - for standard input)

The input is an attention file with relations:
{"causal": bool, "tokens": [N][T], "attention": [N][L][H][T][T],
 "relations": [{"name": str, "keys": [N][T]}]}, keys -1 for no query.
The output is a JSON list, one object per head in layer-major order:
{"name", "relations": [{"relation", "mass", "argmax", "baseline",
 "baseline_by"}], "syntax"}.
"""

import json
import struct
import sys

MARGIN = 0.2


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def visible(causal, T, i, j):
    if j < 0 or j >= T:
        return False
    return j <= i if causal else True


def n_visible(causal, T, i):
    return i + 1 if causal else T


def queries(causal, T, keys_n):
    """The eligible queries of one example: (i, key) pairs."""
    out = []
    for i in range(T):
        key = keys_n[i]
        if key >= 0 and visible(causal, T, i, key) and n_visible(causal, T, i) > 1:
            out.append((i, key))
    return out


def batch_mean(per_example):
    total, count = 0.0, 0
    for values in per_example:
        if not values:
            continue
        s = 0.0
        for v in values:
            s += v
        total += s / len(values)
        count += 1
    return total / count if count else 0.0


def baseline(causal, T, keys):
    candidates = []
    for d in range(1, T):
        candidates.append(("offset -%d" % d, lambda i, key, d=d: key == i - d))
    for j in range(1, T):
        candidates.append(("position-%d" % j, lambda i, key, j=j: key == j))
    candidates.append(("attention-sink", lambda i, key: key == 0))
    best, by = None, ""
    for name, finds in candidates:
        s = batch_mean([[1.0 if finds(i, key) else 0.0 for i, key in queries(causal, T, k)]
                        for k in keys])
        if best is None or s > best:
            best, by = s, name
    return best, by


def argmax(causal, T, row, i):
    best = None
    for j in range(T):
        if visible(causal, T, i, j) and (best is None or row[j] > row[best]):
            best = j
    return best


def score(A, causal, T, keys):
    mass = batch_mean([[A[n][i][key] for i, key in queries(causal, T, keys[n])]
                       for n in range(len(A))])
    arg = batch_mean([[1.0 if argmax(causal, T, A[n][i], i) == key else 0.0
                       for i, key in queries(causal, T, keys[n])]
                      for n in range(len(A))])
    return mass, arg


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: relations_ref.py FILE.json\n")
        return 2
    if argv[1] == "-":
        data = json.load(sys.stdin)
    else:
        with open(argv[1]) as f:
            data = json.load(f)
    causal = bool(data["causal"])
    att = data["attention"]
    rels = data.get("relations", [])
    N, L, H = len(att), len(att[0]), len(att[0][0])
    T = len(data["tokens"][0])
    bases = [baseline(causal, T, r["keys"]) for r in rels]
    out = []
    for l in range(L):
        for h in range(H):
            A = [[[f32(float(x)) for x in att[n][l][h][i]] for i in range(T)]
                 for n in range(N)]
            scores = []
            for r, (base, by) in zip(rels, bases):
                mass, arg = score(A, causal, T, r["keys"])
                scores.append({"relation": r["name"], "mass": mass, "argmax": arg,
                               "baseline": base, "baseline_by": by})
            best = None
            for s in scores:
                if s["argmax"] - s["baseline"] >= MARGIN and (best is None or s["argmax"] > best["argmax"]):
                    best = s
            syntax = "" if best is None else "syntax %s %.2f" % (best["relation"], best["argmax"])
            out.append({"name": "L%dH%d" % (l, h), "relations": scores, "syntax": syntax})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
