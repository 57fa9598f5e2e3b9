// View state lives in the URL's fragment, so a view can be shared.
export interface State {
  view: string; event?: string; thread?: string; look?: string; focus?: string; ignore?: string;
  module?: string; search?: string; zoom?: string; sort?: string; by?: string;
  gran?: string; label?: string; group?: string;
  // The source view's function: its identity as /api/flat's rows give it
  // (recorded name, and file for an interpreted function), not its label.
  fn?: string; fnfile?: string;
  // The zone site the timeline highlights (/api/zones site id).
  site?: string;
  // The time selection (a zone of the timeline): ns from the capture's origin.
  start?: string; end?: string;
  // The diff view's part of the base (--diff) recording: ns from the base's
  // own origin (the API's base_start, base_end).
  base_start?: string; base_end?: string;
}

const KEYS: (keyof State)[] = ['view', 'event', 'thread', 'look', 'gran', 'focus', 'ignore', 'module', 'label', 'start', 'end', 'base_start', 'base_end', 'group', 'fn', 'fnfile', 'site', 'search', 'zoom', 'sort', 'by'];

export function readState(): State {
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  const s: State = { view: p.get('view') || 'flame' };
  for (const k of KEYS) {
    const v = p.get(k);
    if (v !== null && v !== '') (s as unknown as Record<string, string>)[k] = v;
  }
  return s;
}

export function writeState(s: State, replace = false): void {
  const p = new URLSearchParams();
  for (const k of KEYS) {
    const v = s[k];
    if (v !== undefined && v !== '') p.set(k, v);
  }
  const h = '#' + p.toString();
  if (h === location.hash) return;
  if (replace) history.replaceState(null, '', h);
  else location.hash = h;
}

// The filters every aggregating query takes, from the state.
export function filters(s: State): Record<string, string | undefined> {
  return {
    event: s.event, thread: s.thread, look: s.look, granularity: s.gran, focus: s.focus, ignore: s.ignore,
    module: s.module, label: s.label, start: s.start, end: s.end,
  };
}
