// Flame graph as an icicle (root on top): DOM boxes, click to zoom, regex
// search with the matched share, tooltips.  The tree comes pruned from
// /api/flamegraph; the page only lays it out.
import { Flame, FlameNode, Params, fmtWeight, get, pct } from './api';
import { State, filters, writeState } from './state';
import { showTip, hideTip } from './tooltip';

const ROW = 18;
const MIN_PX = 2;

interface Laid { n: FlameNode; depth: number; children: Laid[]; parent?: Laid; }

function build(f: Flame): Map<number, Laid> {
  const byId = new Map<number, Laid>();
  for (const n of f.nodes) {
    const parent = byId.get(n.parent);
    const l: Laid = { n, depth: parent ? parent.depth + 1 : 0, children: [], parent };
    byId.set(n.id, l);
    if (parent) parent.children.push(l);
  }
  for (const l of byId.values())
    l.children.sort((a, b) => b.n.total - a.n.total || (a.n.name < b.n.name ? -1 : a.n.name > b.n.name ? 1 : 0));
  return byId;
}

// The flame graph query of s for a graph px wide.  Unzoomed, ask only for
// the nodes drawn, MIN_PX or wider (fewer to send, parse and lay out: the
// first paint's answer); with a search, a pixel or more (those under
// MIN_PX count in the search's share); zoomed, the default share.
export function flameParams(s: State, width: number): Params {
  const px = Math.max(width, 600);
  const minPx = s.search ? 1 : MIN_PX;
  const minShare = s.zoom ? undefined : Math.max(0.05, Math.floor(100000 * minPx / px) / 1000);
  return { ...filters(s), min_share: minShare };
}

export async function renderFlame(root: HTMLElement, s: State): Promise<void> {
  const f = await get<Flame>('flamegraph', flameParams(s, root.clientWidth));
  performance.mark('flame-fetched');
  const byId = build(f);
  const top = f.nodes.length ? byId.get(f.nodes[0].id)! : undefined;
  root.innerHTML = '';
  const head = document.createElement('div');
  head.id = 'flame-head';
  head.dataset.total = String(f.total);
  head.textContent = `${f.event}: ${fmtWeight(f.total, f.unit)}` + (f.pruned ? ` (${f.pruned} nodes under ${f.min_share}% hidden)` : '');
  root.appendChild(head);
  if (!top) return;
  const zoom = (s.zoom && byId.get(Number(s.zoom))) || top;
  const box = document.createElement('div');
  box.className = 'flame';
  root.appendChild(box);
  const width = Math.max(box.clientWidth, 600);
  let maxDepth = 0;
  const re = compileSearch(s.search);
  let matched = 0;
  const frag = document.createDocumentFragment();
  // One set of listeners for all frames (thousands of them).
  const frameOf = (e: Event) => (e.target as HTMLElement).closest<HTMLElement>('.frame');
  box.addEventListener('mousemove', (e) => {
    const d = frameOf(e);
    if (d) showTip(e, d.title); else hideTip();
  });
  box.addEventListener('mouseleave', hideTip);
  box.addEventListener('click', (e) => {
    const d = frameOf(e);
    if (d) writeState({ ...s, zoom: Number(d.dataset.id) === top.n.id ? undefined : d.dataset.id });
  });

  // The matched share counts every node the answer holds, drawn or not.
  const count = (l: Laid, inMatch: boolean) => {
    const isMatch = !!re && re.test(l.n.name);
    if (isMatch && !inMatch) matched += l.n.total;
    for (const c of l.children) count(c, inMatch || isMatch);
  };
  const place = (l: Laid, x: number, w: number, ancestor: boolean) => {
    // Narrower than MIN_PX a box is all border: not drawn (its weight is in its parent's width).
    if (w < MIN_PX) return;
    maxDepth = Math.max(maxDepth, l.depth);
    const d = document.createElement('div');
    d.className = 'frame ' + l.n.kind + (ancestor ? ' ancestor' : '');
    if (re && re.test(l.n.name)) d.classList.add('match');
    d.style.left = x + 'px';
    d.style.top = l.depth * ROW + 'px';
    d.style.width = w + 'px';
    d.textContent = w > 30 ? l.n.name : '';
    const share = pct(l.n.total, f.total);
    d.dataset.id = String(l.n.id);
    d.dataset.name = l.n.name;
    d.dataset.share = share;
    d.title = `${l.n.name}\n${share} of all, total ${fmtWeight(l.n.total, f.unit)}, self ${fmtWeight(l.n.self, f.unit)}`;
    frag.appendChild(d);
    if (ancestor) return;
    let cx = x;
    for (const c of l.children) {
      const cw = l.n.total ? w * c.n.total / l.n.total : 0;
      place(c, cx, cw, false);
      cx += cw;
    }
  };
  // Ancestors of the zoomed node span the width; it and its subtree fill it.
  const chain: Laid[] = [];
  for (let a = zoom.parent; a; a = a.parent) chain.unshift(a);
  let underMatch = false;
  for (const a of chain) {
    place(a, 0, width, true);
    if (re && re.test(a.n.name)) underMatch = true;
  }
  place(zoom, 0, width, false);
  if (re) count(zoom, underMatch);
  performance.mark('flame-placed');
  box.appendChild(frag);
  box.style.height = (maxDepth + 1) * ROW + 'px';
  const res = document.getElementById('search-result')!;
  res.textContent = re ? `matched ${pct(matched, f.total)}` : '';
  res.dataset.share = re ? pct(matched, f.total) : '';
}

export function compileSearch(q?: string): RegExp | undefined {
  if (!q) return undefined;
  try {
    return new RegExp(q, 'i');
  } catch {
    return new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  }
}
