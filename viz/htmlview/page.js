"use strict";
// Draws DATA (see htmlview.go): one canvas per head, redrawn when the
// example changes or a cell is hovered or locked.
(function () {
  const D = DATA, T = D.seq_len;
  // A cell's side in pixels: a head about 192 pixels wide at first, at
  // least 4 a cell; the zoom control sets it (minCell to maxCell).
  const minCell = 2, maxCell = 32;
  let cell = Math.max(4, Math.floor(192 / T));
  const grid = document.getElementById("grid");
  const readout = document.getElementById("readout");
  const tokensEl = document.getElementById("tokens");
  const picker = document.getElementById("example");
  let ex = 0, hover = null, locked = null;
  // Token labels on both axes of every head, as the viewer's: every
  // step-th one where a cell is narrower than a line of label text
  // (viz.PanelGrid.LabelStep's rule).
  const labelLine = 12;
  let step = Math.max(1, Math.ceil(labelLine / cell));
  // The palette (viz.CellPalette): the viridis steps, then the masked
  // cells' colour, then a weight that is not a number's.
  const steps = D.colors.length - 2, maskedColor = steps, badColor = steps + 1;

  D.examples.forEach((e, n) => {
    const o = document.createElement("option");
    o.value = String(n);
    o.textContent = n + ": " + e.tokens.join(" ");
    picker.appendChild(o);
  });

  const canvases = [], axes = [];
  for (let l = 0; l < D.layers; l++) {
    const row = document.createElement("div");
    row.className = "layer";
    for (let h = 0; h < D.heads; h++) {
      const k = l * D.heads + h, info = D.head_labels[k];
      const box = document.createElement("div");
      box.className = "head";
      const label = document.createElement("div");
      label.className = "label";
      const b = document.createElement("b");
      b.textContent = info.name;
      label.appendChild(b);
      label.appendChild(document.createTextNode(info.title));
      const c = document.createElement("canvas");
      c.className = "pattern";
      c.id = "head-" + info.name;
      c.width = c.height = T * cell;
      c.dataset.index = String(k);
      c.addEventListener("mousemove", (ev) => { if (!locked) { hover = at(k, c, ev); show(); } });
      c.addEventListener("mouseleave", () => { if (!locked) { hover = null; show(); } });
      c.addEventListener("click", (ev) => {
        const p = at(k, c, ev);
        locked = locked && same(locked, p) ? null : p;
        hover = p;
        show();
      });
      // Query labels left of the canvas, key labels under it.
      const panel = document.createElement("div");
      panel.className = "panel";
      const qs = document.createElement("div");
      qs.className = "axis q";
      qs.id = "queries-" + info.name;
      const ks = document.createElement("div");
      ks.className = "axis k";
      ks.id = "keys-" + info.name;
      panel.append(qs, c, document.createElement("div"), ks);
      box.appendChild(label);
      box.appendChild(panel);
      row.appendChild(box);
      canvases.push(c);
      axes.push([qs, ks]);
    }
    grid.appendChild(row);
  }
  picker.addEventListener("change", () => { ex = Number(picker.value); labelAxes(); show(); showCausal(); });

  // Zoom: every head's cells at the chosen side (the page scrolls when
  // they no longer fit), the labels thinned again for it; and the head
  // picker shows one head alone, or all.
  const zoom = document.getElementById("zoom"), focus = document.getElementById("focus");
  zoom.min = String(minCell);
  zoom.max = String(maxCell);
  zoom.value = String(cell);
  function setCell(c) {
    cell = Math.min(maxCell, Math.max(minCell, c));
    step = Math.max(1, Math.ceil(labelLine / cell));
    zoom.value = String(cell);
    document.getElementById("zoom-value").textContent = cell + " px";
    canvases.forEach((c) => { c.width = c.height = T * cell; });
    labelAxes();
    show();
  }
  zoom.addEventListener("input", () => setCell(Number(zoom.value)));
  D.head_labels.forEach((info, k) => {
    const o = document.createElement("option");
    o.value = String(k);
    o.textContent = info.name;
    focus.appendChild(o);
  });
  focus.addEventListener("change", () => {
    const k = focus.value === "" ? -1 : Number(focus.value);
    canvases.forEach((c, n) => { c.closest(".head").hidden = k >= 0 && n !== k; });
    grid.querySelectorAll(".layer").forEach((row) => { row.hidden = ![...row.children].some((b) => !b.hidden); });
    // One head alone is drawn as large as the window allows.
    if (k >= 0) setCell(Math.floor((Math.min(innerWidth, 1200) - 160) / T));
  });
  document.getElementById("zoom-value").textContent = cell + " px";

  // Each label is the token's name cut to htmlview.LabelChars; its
  // tooltip the whole name.
  function labelAxes() {
    const E = D.examples[ex];
    const spans = (across) => E.labels.map((t, n) => {
      const s = document.createElement("span");
      s.textContent = n % step === 0 ? t : "";
      if (n % step === 0) s.title = E.tokens[n];
      s.style[across ? "width" : "height"] = cell + "px";
      s.style.lineHeight = cell + "px";
      return s;
    });
    axes.forEach(([qs, ks]) => { qs.replaceChildren(...spans(false)); ks.replaceChildren(...spans(true)); });
  }

  // The caption's colours are the cells' own palette.
  function legend() {
    const ramp = document.createElement("span");
    ramp.className = "ramp";
    ramp.style.background = "linear-gradient(to right, " + D.colors.slice(0, steps).join(", ") + ")";
    const parts = [document.createTextNode("0"), ramp, document.createTextNode("1")];
    const swatch = (id, color, text) => {
      const s = document.createElement("span");
      s.className = "swatch";
      s.id = id;
      s.style.background = D.colors[color];
      parts.push(document.createTextNode("; "), s, document.createTextNode(text));
    };
    if (D.causal) swatch("swatch-masked", maskedColor, "masked (a key after its query)");
    if (D.examples.some((e) => e.cells.some((m) => m.includes(badColor)))) swatch("swatch-bad", badColor, "not a number");
    document.getElementById("scale").replaceChildren(...parts);
  }

  function at(k, c, ev) {
    const r = c.getBoundingClientRect();
    const j = Math.min(T - 1, Math.max(0, Math.floor((ev.clientX - r.left - c.clientLeft) / cell)));
    const i = Math.min(T - 1, Math.max(0, Math.floor((ev.clientY - r.top - c.clientTop) / cell)));
    return { k, i, j };
  }
  function same(a, b) { return a.k === b.k && a.i === b.i && a.j === b.j; }
  function masked(i, j) { return D.causal && j > i; }

  function draw(k) {
    const c = canvases[k], g = c.getContext("2d"), m = D.examples[ex].cells[k];
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        g.fillStyle = D.colors[m[i * T + j]];
        g.fillRect(j * cell, i * cell, cell, cell);
      }
    }
    const p = locked || hover;
    if (p && p.k === k && cell >= 6) {
      g.strokeStyle = "#d62728";
      g.lineWidth = 2;
      g.strokeRect(p.j * cell + 1, p.i * cell + 1, cell - 2, cell - 2);
    }
  }

  // The example's patching heatmap and attribution bars, when the page has them.
  const causal = document.getElementById("causal");
  function showCausal() {
    const C = D.tools, E = D.examples[ex];
    if (!C) return;
    causal.hidden = false;
    document.getElementById("patch-note").textContent = "Share of this example's answer logit difference restored by writing the clean activation into its " +
      C.corruption + "-corrupted run at one position (rows: what is patched; columns: position and clean token; colour scaled to the example's largest value).";
    const table = document.getElementById("patch");
    const head = document.createElement("tr");
    head.appendChild(document.createElement("th"));
    C.positions.forEach((p) => {
      const th = document.createElement("th");
      th.textContent = p + " " + E.labels[p];
      th.title = E.tokens[p];
      head.appendChild(th);
    });
    const rows = [head];
    C.rows.forEach((name, r) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.className = "row";
      th.textContent = name;
      tr.appendChild(th);
      C.positions.forEach((p, k) => {
        const td = document.createElement("td");
        const v = E.patch[r][k];
        td.textContent = (Math.abs(v) < 0.005 ? 0 : v).toFixed(2);
        td.style.background = E.patch_colors[r][k];
        td.title = name + " at position " + p + ": " + E.patch[r][k].toFixed(3);
        tr.appendChild(td);
      });
      rows.push(tr);
    });
    table.replaceChildren(...rows);
    document.getElementById("attr-note").textContent = "Mean over this example's answers of each part of the answer's logit (the parts sum to its mean logit, " +
      E.logit.toFixed(3) + ").";
    const most = Math.max(1e-9, ...E.parts.map(Math.abs));
    const lo = Math.min(0, ...E.parts) / most, span = (Math.max(0, ...E.parts) / most) - lo || 1;
    document.getElementById("attr").replaceChildren(...C.parts.map((name, k) => {
      const v = E.parts[k], bar = document.createElement("div");
      bar.className = "bar";
      const label = document.createElement("span");
      label.className = "name";
      label.textContent = name;
      const track = document.createElement("span");
      track.className = "track";
      const fill = document.createElement("span");
      fill.className = "fill";
      const zero = (-lo / span) * 100, x = ((v / most - lo) / span) * 100;
      fill.style.left = Math.min(zero, x) + "%";
      fill.style.width = Math.abs(x - zero) + "%";
      fill.style.background = v < 0 ? "#2166ac" : "#b2182b";
      const z = document.createElement("span");
      z.className = "zero";
      z.style.left = zero + "%";
      track.append(fill, z);
      const val = document.createElement("span");
      val.className = "value";
      val.textContent = v.toFixed(3);
      bar.append(label, track, val);
      return bar;
    }));
  }

  function show() {
    const toks = D.examples[ex].tokens, p = locked || hover;
    tokensEl.replaceChildren(...toks.map((t, n) => {
      const s = document.createElement("span");
      s.className = "tok" + (p && p.i === n ? " q" : "") + (p && p.j === n ? " k" : "");
      s.textContent = t;
      s.title = "position " + n;
      return s;
    }));
    canvases.forEach((_, k) => draw(k));
    readout.classList.toggle("locked", !!locked);
    if (!p) {
      readout.textContent = "Hover over a cell; click to lock it.";
      return;
    }
    const w = D.examples[ex].att[p.k][p.i * T + p.j];
    readout.textContent = D.head_labels[p.k].name + " · query " + p.i + " " + JSON.stringify(toks[p.i]) +
      " → key " + p.j + " " + JSON.stringify(toks[p.j]) + ": " + (masked(p.i, p.j) ? "masked" : w.toFixed(3));
  }
  // The model's circuit (not the example's): its edges drawn by layer,
  // the embeddings at the bottom and the logits at the top, as the
  // circuit command's figure (viz.CircuitGraph), and listed with their effects.
  function showCircuit() {
    const C = D.circuit;
    if (!C) return;
    document.getElementById("circuit").hidden = false;
    document.getElementById("circuit-note").textContent = "Path patching (" + C.direction + ", " + C.corruption + " corruption, " + C.examples +
      " held-out examples): the circuit's " + C.edges.filter((e) => e.in).length + " of " + C.total + " edges keep " + (100 * C.faithfulness).toFixed(1) +
      "% of the logit difference (threshold " + (100 * C.threshold).toFixed(0) + "%) with every other edge patched. Effect: the share of the logit difference " +
      "patching that edge alone removes; grey rows are edges outside the circuit" + (C.hidden ? " (" + C.hidden + " smaller ones not listed)" : "") + ".";
    const node = (name) => name.replace(/\.[qkv]$/, "");
    const level = (n) => {
      if (n === "embed" || n === "pos_embed") return 0;
      if (n === "logits") return 2 * D.layers + 1;
      const m = /^mlp(\d+)$/.exec(n);
      if (m) return 2 * Number(m[1]) + 2;
      return 2 * Number(/^L(\d+)/.exec(n)[1]) + 1;
    };
    const levels = [];
    const inCircuit = new Set();
    C.edges.forEach((e) => [node(e.from), node(e.to)].forEach((n) => {
      const l = level(n);
      levels[l] = levels[l] || [];
      if (!levels[l].includes(n)) levels[l].push(n);
      if (e.in) inCircuit.add(n);
    }));
    // At least 64 pixels a node across the widest level, so that boxes never touch.
    const bw = 54, bh = 16, pitch = 44, top = 2 * D.layers + 1;
    const W = Math.max(640, 64 * (Math.max(0, ...Array.from(levels, (l) => (l || []).length)) + 1));
    const svg = document.getElementById("circuit-graph"), ns = "http://www.w3.org/2000/svg";
    svg.setAttribute("width", W);
    svg.setAttribute("height", (top + 1) * pitch);
    const at = {};
    levels.forEach((names, l) => (names || []).forEach((n, k) => { at[n] = [(W * (k + 1)) / (names.length + 1), (top - l) * pitch + pitch / 2]; }));
    const el = (tag, attrs) => { const x = document.createElementNS(ns, tag); for (const a in attrs) x.setAttribute(a, attrs[a]); return x; };
    const most = Math.max(1e-9, ...C.edges.map((e) => Math.abs(e.effect)));
    const parts = [];
    C.edges.slice().reverse().forEach((e) => { // the circuit's edges drawn last, over the others
      const [x1, y1] = at[node(e.from)], [x2, y2] = at[node(e.to)];
      const line = el("line", { x1, y1: y1 - bh / 2, x2, y2: y2 + bh / 2, stroke: e.effect < 0 ? "#2166ac" : "#b2182b",
        "stroke-width": e.in ? 1 + 4 * Math.abs(e.effect) / most : 1, "stroke-opacity": e.in ? 0.9 : 0.25, class: e.in ? "edge in" : "edge" });
      const t = el("title", {});
      t.textContent = e.name + ": " + e.effect.toFixed(3);
      line.appendChild(t);
      parts.push(line);
    });
    Object.keys(at).forEach((n) => {
      const g = el("g", { class: inCircuit.has(n) ? "node in" : "node" });
      const [x, y] = at[n];
      g.append(el("rect", { x: x - bw / 2, y: y - bh / 2, width: bw, height: bh, rx: 3 }));
      const t = el("text", { x, y: y + 3.5, "text-anchor": "middle" });
      t.textContent = n;
      g.appendChild(t);
      parts.push(g);
    });
    svg.replaceChildren(...parts);
    const row = (cells, cls, tag) => {
      const tr = document.createElement("tr");
      if (cls) tr.className = cls;
      cells.forEach((c, k) => { const td = document.createElement(tag); td.textContent = c; if (k > 0 && tag === "td") td.className = "num"; tr.appendChild(td); });
      return tr;
    };
    document.getElementById("circuit-edges").replaceChildren(row(["edge", "effect", "attribution", "in circuit"], "", "th"),
      ...C.edges.map((e) => row([e.name, e.effect.toFixed(3), e.attribution.toFixed(3), e.in ? "yes" : "no"], e.in ? "in" : "out", "td")));
  }

  legend();
  labelAxes();
  show();
  showCausal();
  showCircuit();
})();
