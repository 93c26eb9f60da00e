"use strict";
// Draws DATA (see htmlview.go): one canvas per head, redrawn when the
// example changes or a cell is hovered or locked.
(function () {
  const D = DATA, T = D.seq_len;
  const cell = Math.max(4, Math.floor(192 / T));
  const grid = document.getElementById("grid");
  const readout = document.getElementById("readout");
  const tokensEl = document.getElementById("tokens");
  const picker = document.getElementById("example");
  let ex = 0, hover = null, locked = null;
  // Token labels on both axes of every head, as the viewer's: every
  // step-th one where a cell is narrower than a line of label text
  // (viz.PanelGrid.LabelStep's rule).
  const labelLine = 12, step = Math.max(1, Math.ceil(labelLine / cell));
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
  legend();
  labelAxes();
  show();
  showCausal();
})();
