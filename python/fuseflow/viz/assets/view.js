// FuseFlow dataflow view: a collapsible, layered drawing of the model's kernels and each
// kernel's dataflow graph, with simulation statistics. Written for FuseFlow; no dependencies.
//
// Only open groups are laid out: a closed kernel is one box whatever its size, and opening it
// lays out its children once (their layer assignment and order are kept for later openings).
(function () {
  "use strict";
  const started = performance.now();
  const data = JSON.parse(document.getElementById("fuseflow-data").textContent);
  const parsed = performance.now();
  const SVG_NS = "http://www.w3.org/2000/svg";
  const svg = document.getElementById("canvas");
  const viewport = document.getElementById("viewport");
  const panel = document.getElementById("panel");
  const legend = document.getElementById("legend");
  const searchBox = document.getElementById("search");
  const resultsList = document.getElementById("results");
  const colourSelect = document.getElementById("colour");

  const PAD = 14, HEADER = 26, HGAP = 18, VGAP = 40, LINE = 14, CHAR = 6.4;
  const MAX_TEXT = 40;
  const timings = { parse_ms: parsed - started };
  const root = data.root;
  const byId = new Map();
  const locs = data.locs;

  // ---- the tree ---------------------------------------------------------------------------
  (function index(node, parent) {
    const stack = [[node, parent]];
    while (stack.length) {
      const [n, p] = stack.pop();
      n.parent = p;
      byId.set(n.id, n);
      if (n.children) for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i], n]);
    }
  })(root, null);
  root.open = true;
  const isGroup = (n) => !!(n.children && n.children.length);

  function invalidate(n) {
    for (let a = n; a; a = a.parent) a.valid = false;
  }

  function setOpen(n, open) {
    if (!isGroup(n) || n === root || !!n.open === open) return false;
    n.open = open;
    invalidate(n);
    return true;
  }

  // ---- text and colours -------------------------------------------------------------------
  const INTEGER = new Intl.NumberFormat("en-US");   // one formatter: toLocaleString makes one per call
  const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? INTEGER.format(v) : v.toPrecision(3)) : String(v));
  const pct = (v) => (100 * v).toFixed(1) + "%";
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const clip = (s) => (s.length > MAX_TEXT ? s.slice(0, MAX_TEXT - 1) + "…" : s);

  function statLine(n) {
    const s = n.stats;
    if (!s || s.cycles == null) return "";
    if (n.kind === "kernel") return `${fmt(s.total_cycles)} cyc · ${pct(s.share)} · ${fmt(s.ops)} ops`;
    if (n.kind === "model") return `${fmt(s.cycles)} cycles`;
    let line = `${fmt(s.cycles)} cyc · ${fmt(s.tokens_in)}→${fmt(s.tokens_out)} tok`;
    if (s.ops) line += ` · ${fmt(s.ops)} ops`;
    return line;
  }

  function lines(n) {
    const out = [n.name];
    if (isGroup(n) && !n.open) out[0] += `  (${n.children.length})`;
    if (n.label) out.push(n.label);
    const st = statLine(n);
    if (st) out.push(st);
    return out.map(clip);
  }

  const KIND_COLOURS = {
    kernel: "#dfe8f5", input: "#e6f2e1", output: "#f6e6d8", tensor: "#e6f2e1", result: "#f6e6d8",
    root: "#eeeeee", scan: "#cfe3f7", locate: "#cfe3f7", repsiggen: "#e8dcf3", repeat: "#e8dcf3",
    intersect: "#fbe3c6", union: "#fbe3c6", array: "#d5efe9", alu: "#fdd9d6", reduce: "#f9cfe0",
    spacc: "#f9cfe0", crddrop: "#eceac8", crdhold: "#eceac8", level_write: "#f6e6d8",
    value_write: "#f6e6d8", fork: "#e2e2e2", join: "#e2e2e2", broadcast: "#ededed",
  };
  const RAMP = [[247, 247, 242], [253, 212, 158], [252, 141, 89], [215, 48, 31]];

  function metric(n, key) {
    const s = n.stats;
    if (!s) return null;
    if (key === "bytes") return (s.bytes_read || 0) + (s.bytes_written || 0);
    if (key === "cycles" && n.kind === "kernel") return s.total_cycles;
    return s[key] == null ? null : s[key];
  }

  function ramp(t) {
    const x = Math.max(0, Math.min(1, t)) * (RAMP.length - 1);
    const i = Math.min(RAMP.length - 2, Math.floor(x));
    const f = x - i;
    const c = RAMP[i].map((v, k) => Math.round(v + f * (RAMP[i + 1][k] - v)));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  function colourOf(n, maxima) {
    const mode = colourSelect.value;
    if (mode === "kind") return KIND_COLOURS[n.kind] || "#f0f0f0";
    const v = metric(n, mode);
    const max = maxima.get(n.parent);
    if (v == null || !max) return "#f7f7f2";
    return ramp(Math.sqrt(v / max));
  }

  // ---- layout -------------------------------------------------------------------------------
  function leafSize(n) {
    const ls = lines(n);
    n.w = Math.max(84, Math.min(MAX_TEXT, Math.max(...ls.map((l) => l.length))) * CHAR + 20 + (isGroup(n) ? 22 : 0));
    n.h = 10 + LINE * ls.length;
  }

  function adjacency(g) {
    const k = g.children.length;
    const succ = Array.from({ length: k }, () => []);
    const pred = Array.from({ length: k }, () => []);
    for (const e of g.edges || []) {
      if (e[0] === e[1]) continue;
      succ[e[0]].push(e[1]);
      pred[e[1]].push(e[0]);
    }
    return { succ, pred };
  }

  // Layers by longest path from the sources (cycles, if any, are cut where Kahn's order
  // stops); sources sit just above their first consumer; order within a layer by a few
  // barycenter sweeps.
  function computeLayers(g) {
    const k = g.children.length;
    const { succ, pred } = adjacency(g);
    const indeg = pred.map((p) => p.length);
    const topo = [];
    for (let v = 0; v < k; v++) if (!indeg[v]) topo.push(v);
    for (let i = 0; i < topo.length; i++) for (const w of succ[topo[i]]) if (--indeg[w] === 0) topo.push(w);
    if (topo.length < k) { const seen = new Set(topo); for (let v = 0; v < k; v++) if (!seen.has(v)) topo.push(v); }
    const at = new Int32Array(k);
    topo.forEach((v, i) => { at[v] = i; });
    const rank = new Int32Array(k);
    for (const v of topo) for (const w of succ[v]) if (at[w] > at[v] && rank[w] < rank[v] + 1) rank[w] = rank[v] + 1;
    for (let v = 0; v < k; v++) {
      if (!pred[v].length && succ[v].length) rank[v] = Math.max(0, Math.min(...succ[v].map((w) => rank[w])) - 1);
    }
    const layers = [];
    for (const v of topo) (layers[rank[v]] || (layers[rank[v]] = [])).push(v);
    for (let i = 0; i < layers.length; i++) if (!layers[i]) layers[i] = [];
    const pos = new Float64Array(k);
    const renumber = (layer) => layer.forEach((v, i) => { pos[v] = i; });
    layers.forEach(renumber);
    const sweep = (layer, nbrs) => {
      const key = new Map();
      for (const v of layer) {
        const ns = nbrs[v];
        key.set(v, ns.length ? ns.reduce((a, w) => a + pos[w], 0) / ns.length : pos[v]);
      }
      layer.sort((a, b) => key.get(a) - key.get(b) || pos[a] - pos[b]);
      renumber(layer);
    };
    for (let it = 0; it < 4; it++) {
      for (let i = 1; i < layers.length; i++) sweep(layers[i], pred);
      for (let i = layers.length - 2; i >= 0; i--) sweep(layers[i], succ);
    }
    return { layers, pred };
  }

  function layoutGroup(g) {
    if (g.valid) return;
    const kids = g.children;
    for (const c of kids) {
      if (isGroup(c) && c.open) layoutGroup(c);
      else leafSize(c);
    }
    if (!g.layers) g.layers = computeLayers(g);
    const { layers, pred } = g.layers;
    const round = (g.layoutRound = (g.layoutRound || 0) + 1);
    const top = g === root ? PAD : HEADER + PAD;
    const cx = new Float64Array(kids.length);
    let y = top, minX = Infinity, maxX = -Infinity;
    for (const layer of layers) {
      if (!layer.length) continue;
      const want = layer.map((v) => {
        const ps = pred[v].filter((p) => kids[p].placed === round);
        return ps.length ? ps.reduce((a, p) => a + cx[p], 0) / ps.length : null;
      });
      let right = -Infinity, shift = 0, wanted = 0;
      const xs = layer.map((v, i) => {
        const w = kids[v].w;
        const free = right === -Infinity ? w / 2 : right + HGAP + w / 2;
        const x = want[i] == null ? free : Math.max(want[i], free);
        right = x + w / 2;
        if (want[i] != null) { shift += x - want[i]; wanted++; }
        return x;
      });
      const rowH = Math.max(...layer.map((v) => kids[v].h));
      layer.forEach((v, i) => {
        const c = kids[v];
        cx[v] = xs[i] - (wanted ? shift / wanted : 0);
        c.y = y + (rowH - c.h) / 2;
        c.placed = round;
        minX = Math.min(minX, cx[v] - c.w / 2);
        maxX = Math.max(maxX, cx[v] + c.w / 2);
      });
      y += rowH + VGAP;
    }
    for (let v = 0; v < kids.length; v++) kids[v].x = cx[v] - kids[v].w / 2 - minX + PAD;
    g.w = Math.max(maxX - minX + 2 * PAD, g.name.length * 7 + 60);
    g.h = y - VGAP + PAD;
    g.valid = true;
  }

  // ---- drawing ------------------------------------------------------------------------------
  // The scene is the open hierarchy flattened to absolute coordinates. Only what lies in (or
  // near) the window is turned into SVG; with many boxes in view they are drawn without text
  // and the edges as one path, so a 10,000-block kernel stays responsive.
  const DETAIL_LIMIT = 900;
  let selected = null;
  const hits = new Set();
  let scene = null;
  let drawn = null;

  function maximaOf(groups) {
    const mode = colourSelect.value;
    const maxima = new Map();
    if (mode === "kind") return maxima;
    for (const g of groups) {
      let m = 0;
      for (const c of g.children) { const v = metric(c, mode); if (v != null && v > m) m = v; }
      maxima.set(g, m);
    }
    return maxima;
  }

  function buildScene() {
    const groups = [], frames = [], nodes = [], edges = [];
    (function walk(g, ox, oy) {
      groups.push(g);
      if (g !== root) frames.push({ n: g, x: ox, y: oy });
      const kids = g.children;
      for (const e of g.edges || []) {
        const a = kids[e[0]], b = kids[e[1]];
        edges.push({ e, x1: ox + a.x + a.w / 2, y1: oy + a.y + a.h, x2: ox + b.x + b.w / 2, y2: oy + b.y });
      }
      for (const c of kids) {
        if (isGroup(c) && c.open) walk(c, ox + c.x, oy + c.y);
        else nodes.push({ n: c, x: ox + c.x, y: oy + c.y });
      }
    })(root, 0, 0);
    return { groups, frames, nodes, edges, maxima: maximaOf(groups) };
  }

  function relayout() {
    const t = performance.now();
    layoutGroup(root);
    scene = buildScene();
    timings.last_layout_ms = performance.now() - t;
    drawLegend();
  }

  // The window in graph coordinates, grown by ``margin`` of its size on every side.
  function windowRect(margin) {
    const r = svg.getBoundingClientRect();
    const w = r.width / view.k, h = r.height / view.k;
    const x0 = -view.x / view.k, y0 = -view.y / view.k;
    return { x0: x0 - margin * w, y0: y0 - margin * h, x1: x0 + w * (1 + margin), y1: y0 + h * (1 + margin) };
  }

  function draw() {
    const t = performance.now();
    const win = windowRect(0.5);
    const inside = (x, y, w, h) => x < win.x1 && x + w > win.x0 && y < win.y1 && y + h > win.y0;
    const nodes = scene.nodes.filter((o) => inside(o.x, o.y, o.n.w, o.n.h));
    const coarse = nodes.length > DETAIL_LIMIT;
    const out = [];
    for (const f of scene.frames) if (inside(f.x, f.y, f.n.w, f.n.h)) out.push(frameSvg(f));
    const plain = [], critical = [];
    for (const l of scene.edges) {
      if (!inside(Math.min(l.x1, l.x2), Math.min(l.y1, l.y2), Math.abs(l.x2 - l.x1) + 1, Math.abs(l.y2 - l.y1) + 1)) continue;
      const dy = Math.max(20, Math.abs(l.y2 - l.y1) / 2);
      const d = `M${l.x1},${l.y1}C${l.x1},${l.y1 + dy} ${l.x2},${l.y2 - dy} ${l.x2},${l.y2}`;
      if (coarse) { (l.e[4] ? critical : plain).push(d); continue; }
      const width = l.e[3] ? Math.min(5, 1 + Math.log10(1 + l.e[3]) * 0.6) : 1;
      out.push(`<path class="edge${l.e[4] ? " crit" : ""}" d="${d}" stroke-width="${width.toFixed(2)}"/>`);
      if (l.e[3] != null) out.push(`<text class="elabel" x="${(l.x1 + l.x2) / 2 + 3}" y="${(l.y1 + l.y2) / 2}">${fmt(l.e[3])}</text>`);
    }
    if (plain.length) out.push(`<path class="edge" d="${plain.join("")}"/>`);
    if (critical.length) out.push(`<path class="edge crit" d="${critical.join("")}" stroke-width="2"/>`);
    for (const o of nodes) out.push(nodeSvg(o, coarse));
    viewport.innerHTML = out.join("");
    svg.classList.toggle("coarse", coarse);
    drawn = { win, k: view.k, coarse, count: nodes.length };
    timings.last_draw_ms = performance.now() - t;
  }

  function frameSvg(f) {
    const g = f.n;
    return `<g class="frame${g === selected ? " sel" : ""}" data-id="${esc(g.id)}" transform="translate(${f.x},${f.y})">` +
      `<rect class="bg" width="${g.w}" height="${g.h}" rx="6"/>` +
      `<text class="hd" x="30" y="17">${esc(clip(g.name))}${g.stats ? "  ·  " + esc(statLine(g)) : ""}</text>` +
      toggle(g, 6, 5) + "</g>";
  }

  function nodeSvg(o, coarse) {
    const c = o.n;
    let cls = "node";
    if (isGroup(c)) cls += " group-closed";
    if (c.stats && c.stats.critical) cls += " crit";
    if (c === selected) cls += " sel";
    if (hits.has(c)) cls += " hit";
    const box = `<rect class="box" width="${c.w}" height="${c.h}" rx="4" fill="${colourOf(c, scene.maxima)}"/>`;
    const head = `<g class="${cls}" data-id="${esc(c.id)}" data-kind="${esc(c.kind)}" transform="translate(${o.x},${o.y})">`;
    if (coarse) return head + box + "</g>";
    const ls = lines(c);
    let text = `<text class="nm" x="8" y="${LINE}">${esc(ls[0])}</text>`;
    for (let i = 1; i < ls.length; i++) {
      const role = i === ls.length - 1 && statLine(c) ? "st" : "lb";
      text += `<text class="${role}" x="8" y="${LINE * (i + 1)}">${esc(ls[i])}</text>`;
    }
    return head + box + text + (isGroup(c) ? toggle(c, c.w - 22, 4) : "") + "</g>";
  }

  function toggle(n, x, y) {
    return `<g class="tog" data-toggle="${esc(n.id)}" transform="translate(${x},${y})"><rect width="16" height="16" rx="3"/>` +
      `<text x="8" y="13">${n.open ? "−" : "+"}</text></g>`;
  }

  function drawLegend() {
    const mode = colourSelect.value;
    if (mode === "kind") {
      const kinds = new Set(scene.nodes.map((o) => o.n.kind));
      legend.innerHTML = [...kinds].map((k) => `<span class="sw" style="background:${KIND_COLOURS[k] || "#f0f0f0"}"></span>${esc(k)}`).join(" ");
    } else {
      const label = colourSelect.options[colourSelect.selectedIndex].text;
      legend.innerHTML = `${esc(label)}: 0<span class="ramp"></span>largest among siblings (√ scale)` +
        ([...scene.maxima.values()].some((v) => v) ? "" : " — no simulation statistics");
    }
  }

  // ---- view transform -------------------------------------------------------------------
  const view = { x: 0, y: 0, k: 1 };
  let pending = false;
  // Moves the drawing at once; draws again (next frame) when the window leaves the drawn
  // region or the zoom changed enough to change what is legible.
  function applyView() {
    viewport.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`);
    svg.classList.toggle("far", view.k < 0.45);
    svg.classList.toggle("mid", view.k < 0.8);
    if (pending || !drawn) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      const w = windowRect(0);
      const d = drawn.win;
      const left = w.x0 < d.x0 || w.y0 < d.y0 || w.x1 > d.x1 || w.y1 > d.y1;
      const zoomed = view.k / drawn.k > 1.5 || drawn.k / view.k > 1.5;
      if (left || zoomed) draw();
    });
  }
  function fit() {
    const r = svg.getBoundingClientRect();
    const k = Math.min((r.width - 20) / root.w, (r.height - 20) / root.h, 1);
    view.k = k;
    view.x = (r.width - root.w * k) / 2;
    view.y = Math.max(10, (r.height - root.h * k) / 2);
    applyView();
    draw();
  }
  function absolute(n) {
    let x = 0, y = 0;
    for (let a = n; a && a !== root; a = a.parent) { x += a.x; y += a.y; }
    return { x, y };
  }
  function centreOn(n) {
    const r = svg.getBoundingClientRect();
    const p = absolute(n);
    view.k = Math.max(view.k, 0.9);
    view.x = r.width / 2 - (p.x + n.w / 2) * view.k;
    view.y = r.height / 3 - (p.y + n.h / 2) * view.k;
    applyView();
    draw();
  }
  // Keeps ``n`` where it was on screen across a relayout.
  function relayoutKeeping(n) {
    const before = absolute(n);
    relayout();
    const after = absolute(n);
    view.x += (before.x - after.x) * view.k;
    view.y += (before.y - after.y) * view.k;
    applyView();
    draw();
  }

  // ---- details panel ----------------------------------------------------------------------
  function row(k, v, num) { return `<tr><td>${esc(k)}</td><td${num ? ' class="num"' : ""}>${v}</td></tr>`; }

  function showDetails(n) {
    const s = n.stats;
    let h = `<h2>${esc(n.name)}</h2><div>${esc(n.kind)}${n.label ? " · " + esc(n.label) : ""}</div><div class="hint">${esc(n.id)}</div>`;
    if (isGroup(n) && n !== root) {
      h += `<p><button data-act="toggle">${n.open ? "collapse" : "expand"}</button> ${n.children.length} children</p>`;
    }
    if (s) {
      h += "<h3>Simulation</h3><table>";
      const keys = n.kind === "kernel"
        ? [["total cycles", s.total_cycles], ["share of model cycles", pct(s.share)], ["compute cycles", s.cycles], ["blocks", s.blocks], ["tokens", s.tokens], ["operations", s.ops], ["bytes read", s.bytes_read], ["bytes written", s.bytes_written]]
        : n.kind === "model" ? [["cycles", s.cycles]]
        : [["cycles (final clock)", s.cycles], ["steps", s.steps], ["tokens in", s.tokens_in], ["tokens out", s.tokens_out], ["operations", s.ops], ["bytes read", s.bytes_read], ["bytes written", s.bytes_written],
           ["critical path", s.critical ? `${fmt(s.critical)} cycles (${pct(s.share)} of the kernel)` : "off the path"]];
      for (const [k, v] of keys) if (v != null) h += row(k, typeof v === "number" ? fmt(v) : esc(v), typeof v === "number");
      h += "</table>";
      for (const [title, ch] of [["Tokens per input stream", s.channels_in], ["Tokens per output stream", s.channels_out]]) {
        if (ch && Object.keys(ch).length) {
          h += `<h3>${title}</h3><table>`;
          for (const [k, v] of Object.entries(ch)) h += row(k, fmt(v), true);
          h += "</table>";
        }
      }
    }
    if (n.attrs && Object.keys(n.attrs).length) {
      h += "<h3>Attributes</h3><table>";
      for (const [k, v] of Object.entries(n.attrs)) h += row(k, esc(typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)));
      h += "</table>";
    }
    if (n.loc != null) {
      const loc = locs[n.loc];
      h += "<h3>Source</h3>";
      if (loc.source) {
        const [file, line] = loc.source;
        h += `<div class="source"><a href="file://${encodeURI(file)}" title="${esc(file)}">${esc(file.split("/").pop())}:${line}</a></div>`;
        if (loc.code) h += `<pre class="code">${esc(loc.code)}</pre>`;
      }
      if (loc.names.length) h += `<div>op: ${loc.names.map(esc).join(" › ")}</div>`;
      h += `<details><summary>location</summary><pre>${esc(loc.text)}</pre></details>`;
    }
    if (n.op) h += `<h3>IR op</h3><pre class="ir">${esc(n.op)}</pre>`;
    panel.innerHTML = h;
    const b = panel.querySelector('[data-act="toggle"]');
    if (b) b.addEventListener("click", () => toggleNode(n));
  }

  // Updates the selection and search marks of the drawn boxes without drawing again.
  function refreshMarks() {
    for (const el of viewport.querySelectorAll(".sel, .hit")) el.classList.remove("sel", "hit");
    for (const el of viewport.querySelectorAll("[data-id]")) {
      const n = byId.get(el.dataset.id);
      if (n === selected) el.classList.add("sel");
      if (hits.has(n) && el.classList.contains("node")) el.classList.add("hit");
    }
  }

  function select(n, updateHash) {
    selected = n;
    refreshMarks();
    showDetails(n);
    if (updateHash !== false) history.replaceState(null, "", "#node=" + encodeURIComponent(n.id).replace(/%2F/g, "/").replace(/%3A/g, ":"));
  }

  function toggleNode(n) {
    const t = performance.now();
    if (!setOpen(n, !n.open)) return;
    relayoutKeeping(n);
    timings.last_toggle_ms = performance.now() - t;
    if (selected === n) showDetails(n);
  }

  function reveal(n) {
    for (let a = n.parent; a && a !== root; a = a.parent) setOpen(a, true);
    selected = n;
    relayout();
    centreOn(n);
    select(n);
  }

  function setAll(open) {
    const t = performance.now();
    let changed = false;
    for (const n of byId.values()) if (isGroup(n)) changed = setOpen(n, open) || changed;
    if (changed) { relayout(); fit(); }
    timings.last_toggle_ms = performance.now() - t;
  }

  // ---- search ---------------------------------------------------------------------------------
  const searchable = [];
  for (const n of byId.values()) {
    if (n === root) continue;
    const loc = n.loc != null ? locs[n.loc] : null;
    const extra = loc ? " " + loc.names.join(" ") + (loc.source ? " " + loc.source[0].split("/").pop() + ":" + loc.source[1] : "") : "";
    searchable.push([n, (n.name + " " + n.kind + " " + n.id + (n.label ? " " + n.label : "") + extra).toLowerCase()]);
  }

  function search(query) {
    const q = query.trim().toLowerCase();
    hits.clear();
    if (!q) return [];
    const terms = q.split(/\s+/);
    const found = [];
    for (const [n, text] of searchable) if (terms.every((t) => text.includes(t))) found.push(n);
    const exact = (n) => (n.name.toLowerCase() === q ? 0 : n.name.toLowerCase().startsWith(q) ? 1 : 2);
    found.sort((a, b) => exact(a) - exact(b));
    for (const n of found) hits.add(n);
    return found;
  }

  let active = -1;
  function showResults(found) {
    active = found.length ? 0 : -1;
    resultsList.hidden = !searchBox.value.trim();
    if (!found.length) { resultsList.innerHTML = searchBox.value.trim() ? "<li>no match</li>" : ""; return; }
    resultsList.innerHTML = found.slice(0, 200).map((n, i) =>
      `<li data-id="${esc(n.id)}"${i === 0 ? ' class="active"' : ""}>${esc(n.name)}<small>${esc(n.kind)} · ${esc(n.parent && n.parent !== root ? n.parent.name : "model")}</small></li>`).join("") +
      (found.length > 200 ? `<li>… ${found.length - 200} more</li>` : "");
  }

  searchBox.addEventListener("input", () => { showResults(search(searchBox.value)); refreshMarks(); });
  searchBox.addEventListener("keydown", (ev) => {
    const items = resultsList.querySelectorAll("li[data-id]");
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      if (!items.length) return;
      ev.preventDefault();
      if (active >= 0) items[active].classList.remove("active");
      active = (active + (ev.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      items[active].classList.add("active");
    } else if (ev.key === "Enter" && active >= 0 && items[active]) {
      reveal(byId.get(items[active].dataset.id));
      resultsList.hidden = true;
    } else if (ev.key === "Escape") {
      resultsList.hidden = true;
    }
  });
  resultsList.addEventListener("click", (ev) => {
    const li = ev.target.closest("li[data-id]");
    if (!li) return;
    reveal(byId.get(li.dataset.id));
    resultsList.hidden = true;
  });

  // ---- pointer --------------------------------------------------------------------------------
  let drag = null;
  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false };
  });
  window.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    drag.moved = true;
    svg.classList.add("panning");
    view.x = drag.vx + dx;
    view.y = drag.vy + dy;
    applyView();
  });
  window.addEventListener("pointerup", () => { svg.classList.remove("panning"); setTimeout(() => { drag = null; }, 0); });
  svg.addEventListener("click", (ev) => {
    if (drag && drag.moved) return;
    const tog = ev.target.closest("[data-toggle]");
    if (tog) { toggleNode(byId.get(tog.dataset.toggle)); return; }
    const el = ev.target.closest("[data-id]");
    if (el) select(byId.get(el.dataset.id));
  });
  svg.addEventListener("dblclick", (ev) => {
    const el = ev.target.closest("[data-id]");
    if (el && !ev.target.closest("[data-toggle]")) toggleNode(byId.get(el.dataset.id));
  });
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    const mx = ev.clientX - r.left, my = ev.clientY - r.top;
    const k = Math.max(0.02, Math.min(4, view.k * Math.exp(-ev.deltaY * 0.0015)));
    view.x = mx - ((mx - view.x) * k) / view.k;
    view.y = my - ((my - view.y) * k) / view.k;
    view.k = k;
    applyView();
  }, { passive: false });
  document.getElementById("fit").addEventListener("click", fit);
  document.getElementById("expand-all").addEventListener("click", () => setAll(true));
  document.getElementById("collapse-all").addEventListener("click", () => setAll(false));
  colourSelect.addEventListener("change", () => { scene.maxima = maximaOf(scene.groups); drawLegend(); draw(); });
  window.addEventListener("resize", applyView);

  // ---- start ------------------------------------------------------------------------------------
  document.getElementById("title").textContent = data.title;
  const kernels = root.children.filter((c) => c.kind === "kernel");
  const blocks = kernels.reduce((a, k) => a + k.children.length, 0);
  document.getElementById("summary").textContent =
    `${kernels.length} kernels · ${fmt(blocks)} nodes inside` +
    (root.stats ? ` · ${fmt(root.stats.cycles)} cycles` : " · not simulated");
  for (const id of data.open || []) if (byId.has(id)) setOpen(byId.get(id), true);
  relayout();
  fit();
  timings.first_render_ms = performance.now() - started;
  requestAnimationFrame(() => requestAnimationFrame(() => { timings.painted_ms = performance.now(); }));
  const wanted = new URLSearchParams(location.hash.slice(1)).get("node");
  if (wanted && byId.has(wanted)) reveal(byId.get(wanted));

  // For scripts and tests: the same actions as the toolbar and the mouse.
  window.fuseflowView = {
    timings,
    expand: (id) => { const n = byId.get(id); if (n && !n.open) toggleNode(n); return !!n; },
    collapse: (id) => { const n = byId.get(id); if (n && n.open) toggleNode(n); return !!n; },
    expandAll: () => setAll(true),
    collapseAll: () => setAll(false),
    reveal: (id) => { const n = byId.get(id); if (n) reveal(n); return !!n; },
    search: (q) => { searchBox.value = q; const f = search(q); showResults(f); refreshMarks(); return f.map((n) => n.id); },
    fit,
  };
})();
