#!/usr/bin/env python3
"""Reference scorer for attention heads, written from docs/head-patterns.md.

An independent, deliberately plain implementation (Python 3 standard library
only) used to cross-check headlab's Go package `analysis`.

Usage: headpatterns_ref.py FILE.json   (or - for standard input)

The input is {"causal": bool, "tokens": [N][T], "attention": [N][L][H][T][T]}.
The output is a JSON list, one object per head in layer-major order:
{"name", "layer", "head", "label", "score", "scores": {8 keys},
 "offset_d", "position_j", "mirror_c", "sink", "rest_mass", "runner_up",
 "runner_up_score"}: sink is the
attention-sink score; rest_mass the mean mass on key 0 over the queries
(seeing more than one key) for which the label's pattern has no eligible
cell, null for no clear pattern, uniform, or a pattern eligible everywhere;
runner_up the second-best cell pattern's label where it scores at least 0.4
and within 0.1 of the label's score, else null.
"""

import json
import math
import struct
import sys

PATTERNS = ["previous-token", "induction", "matching", "mirror",
            "attention-sink", "offset", "position", "uniform"]
THRESHOLD = 0.4          # a cell pattern names a head from this score up
UNIFORM_THRESHOLD = 0.9  # uniform names a head only from this score up ("near 1")
RUNNER_UP_MARGIN = 0.1   # a runner-up within this of the label's score is shown
CELL_PATTERNS = [p for p in PATTERNS if p != "uniform"]


def f32(x):
    # The Go side stores probabilities as float32; round the same way.
    return struct.unpack("<f", struct.pack("<f", x))[0]


def visible(causal, T, i, j):
    if j < 0 or j >= T:
        return False
    return j <= i if causal else True


def n_visible(causal, T, i):
    return i + 1 if causal else T


def cell_eligible(causal, T, i, j):
    """The contract's rule: the cell exists, is visible, and the query sees
    more than one key."""
    if j is None:
        return False
    return visible(causal, T, i, j) and n_visible(causal, T, i) > 1


def last_same(tok, i):
    """m: the last position < i with tok[m] == tok[i], or None."""
    for m in range(i - 1, -1, -1):
        if tok[m] == tok[i]:
            return m
    return None


def batch_mean(per_example):
    """per_example: list (over examples) of lists of per-query values of the
    eligible queries. Mean per example, then over examples that have any."""
    total = 0.0
    count = 0
    for values in per_example:
        if not values:
            continue
        s = 0.0
        for v in values:  # explicit loop: plain left-to-right addition
            s += v
        total += s / len(values)
        count += 1
    if count == 0:
        return 0.0
    return total / count


def score_cell_pattern(A, causal, T, tokens, cell_of):
    """cell_of(tok, i) -> j or None. A[n][i][j] for the head."""
    per_example = []
    for n in range(len(A)):
        tok = tokens[n]
        vals = []
        for i in range(T):
            j = cell_of(tok, i)
            if cell_eligible(causal, T, i, j):
                vals.append(A[n][i][j])
        per_example.append(vals)
    return batch_mean(per_example)


def is_candidate(causal, T, cell_of):
    count = 0
    for i in range(T):
        if cell_eligible(causal, T, i, cell_of(None, i)):
            count += 1
    return 2 * count >= T


def score_head(A, causal, T, tokens):
    scores = {}

    def prev(tok, i):
        return i - 1 if i >= 1 else None

    def induction(tok, i):
        m = last_same(tok, i)
        return None if m is None else m + 1

    def matching(tok, i):
        return last_same(tok, i)

    def mirror_at(c):
        def mirror(tok, i):
            k = c - i
            return None if k < 0 or k == i else k
        return mirror

    def sink(tok, i):
        return 0 if i >= 1 else None

    scores["previous-token"] = score_cell_pattern(A, causal, T, tokens, prev)
    scores["induction"] = score_cell_pattern(A, causal, T, tokens, induction)
    scores["matching"] = score_cell_pattern(A, causal, T, tokens, matching)
    # Both anti-diagonals are candidates; the better one, ties to T-1.
    best_c = T - 1
    best_mirror = score_cell_pattern(A, causal, T, tokens, mirror_at(T - 1))
    shifted = score_cell_pattern(A, causal, T, tokens, mirror_at(T - 2))
    if shifted > best_mirror:
        best_c, best_mirror = T - 2, shifted
    scores["mirror"] = best_mirror
    scores["attention-sink"] = score_cell_pattern(A, causal, T, tokens, sink)

    best_d, best_off = 0, 0.0
    found = False
    for d in range(2, T):
        def off(tok, i, d=d):
            return i - d if i >= d else None
        if not is_candidate(causal, T, off):
            continue
        s = score_cell_pattern(A, causal, T, tokens, off)
        if not found or s > best_off:
            best_d, best_off, found = d, s, True
    scores["offset"] = best_off

    best_j, best_pos = 0, 0.0
    found = False
    for jj in range(1, T):
        def pos(tok, i, jj=jj):
            return jj if jj != i else None
        if not is_candidate(causal, T, pos):
            continue
        s = score_cell_pattern(A, causal, T, tokens, pos)
        if not found or s > best_pos:
            best_j, best_pos, found = jj, s, True
    scores["position"] = best_pos

    per_example = []
    for n in range(len(A)):
        vals = []
        for i in range(T):
            ni = n_visible(causal, T, i)
            if ni < 2:
                continue
            h = 0.0
            for j in range(T):
                p = A[n][i][j]
                if visible(causal, T, i, j) and p > 0:
                    h -= p * math.log(p)
            vals.append(h / math.log(ni))
        per_example.append(vals)
    scores["uniform"] = batch_mean(per_example)

    # The label (revised rule): the best cell pattern (ties to the earlier
    # row) if it reaches THRESHOLD; else uniform if it reaches
    # UNIFORM_THRESHOLD; else no clear pattern, scored by the best cell
    # pattern.
    best = CELL_PATTERNS[0]
    for p in CELL_PATTERNS[1:]:
        if scores[p] > scores[best]:
            best = p
    score = scores[best]
    labelled = score >= THRESHOLD
    if not labelled and scores["uniform"] >= UNIFORM_THRESHOLD:
        best, score, labelled = "uniform", scores["uniform"], True
    runner_up, runner_up_score = None, None
    if labelled and best != "uniform":
        others = [p for p in CELL_PATTERNS if p != best]
        ru = others[0]
        for p in others[1:]:
            if scores[p] > scores[ru]:
                ru = p
        if scores[ru] >= THRESHOLD and scores[ru] >= score - RUNNER_UP_MARGIN - 1e-9:
            runner_up, runner_up_score = ru, scores[ru]
    cell_of = {"previous-token": prev, "induction": induction, "matching": matching,
               "mirror": mirror_at(best_c), "attention-sink": sink}
    if best_d:
        cell_of["offset"] = lambda tok, i: i - best_d if i >= best_d else None
    if best_j:
        cell_of["position"] = lambda tok, i: best_j if best_j != i else None
    rest = None
    if labelled and best in cell_of:
        per_example = []
        for n in range(len(A)):
            per_example.append([A[n][i][0] for i in range(T)
                                if n_visible(causal, T, i) > 1
                                and not cell_eligible(causal, T, i, cell_of[best](tokens[n], i))])
        if any(per_example):
            rest = batch_mean(per_example)
    def name(p):
        if p == "offset":
            return "offset -%d" % best_d
        if p == "position":
            return "position-%d" % best_j
        if p == "mirror" and best_c == T - 2:
            return "mirror shifted"
        return p
    label = name(best) if labelled else "no clear pattern"
    runner = (name(runner_up), runner_up_score) if runner_up else (None, None)
    return label, score, scores, best_d, best_j, best_c, rest, runner


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: headpatterns_ref.py FILE.json\n")
        return 2
    if argv[1] == "-":
        data = json.load(sys.stdin)
    else:
        with open(argv[1]) as f:
            data = json.load(f)
    causal = bool(data["causal"])
    tokens = data["tokens"]
    att = data["attention"]
    N = len(att)
    L = len(att[0])
    H = len(att[0][0])
    T = len(tokens[0])
    out = []
    for l in range(L):
        for h in range(H):
            A = [[[f32(float(x)) for x in att[n][l][h][i]] for i in range(T)]
                 for n in range(N)]
            label, score, scores, d, j, c, rest, runner = score_head(A, causal, T, tokens)
            out.append({"name": "L%dH%d" % (l, h), "layer": l, "head": h,
                        "label": label, "score": score, "scores": scores,
                        "offset_d": d, "position_j": j, "mirror_c": c,
                        "sink": scores["attention-sink"], "rest_mass": rest,
                        "runner_up": runner[0], "runner_up_score": runner[1]})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
