/**
 * History (SPEC §6) in JupyterLab: the timeline rows the server endpoint and the
 * notebook views share, the panel's read-only History section, and renderers for the
 * `history`, `history-diff` and `history-change` views. Every string is set as text.
 */
import { asList, asObject, asText, element, errorBox } from './views';

type JSONObject = Record<string, unknown>;

/** One timeline row (`ipymemory.views.history.entry_row`). */
export interface IHistoryRow {
  readonly seq: number;
  readonly at: string;
  readonly op: string;
  readonly added: ReadonlyArray<string>;
  readonly removed: ReadonlyArray<string>;
  readonly by: string;
  readonly query: string | null;
}

/** The history endpoint's answer; `error` instead of throwing. */
export interface IHistoryListing {
  readonly entries: ReadonlyArray<IHistoryRow>;
  readonly more: boolean;
  readonly etag: string;
  readonly error: string | null;
}

export function parseRow(value: unknown): IHistoryRow {
  const row = asObject(value);
  return {
    seq: typeof row.seq === 'number' ? row.seq : 0,
    at: asText(row.at),
    op: asText(row.op),
    added: asList(row.added).map(asText),
    removed: asList(row.removed).map(asText),
    by: asText(row.by),
    query: typeof row.query === 'string' ? row.query : null
  };
}

export function parseHistory(payload: unknown, status: number): IHistoryListing {
  const data = asObject(payload);
  let error = data.error ? asText(data.error) : null;
  if (status >= 400 && !error) {
    error = `The history endpoint answered HTTP ${status}.`;
  }
  return {
    entries: asList(data.entries).map(parseRow),
    more: data.more === true,
    etag: asText(data.etag),
    error
  };
}

/** `2026-12-01 05:07` from an ISO time (UTC, as written). */
function when(at: string): string {
  return at.slice(0, 16).replace('T', ' ');
}

function names(marks: string, className: string, list: ReadonlyArray<string>): HTMLElement[] {
  return list.map(name => element('span', className, `${marks}${name}`));
}

/** One timeline entry: `#3 05:07 consolidate`, the names added/removed, who, the turn. */
function historyItem(row: IHistoryRow): HTMLLIElement {
  const item = element('li', 'jp-ipymemory-history-entry');
  item.dataset.seq = String(row.seq);
  item.dataset.op = row.op;
  const head = element('div', 'jp-ipymemory-item-head');
  head.appendChild(element('span', 'jp-ipymemory-history-seq', `#${row.seq}`));
  head.appendChild(element('span', 'jp-ipymemory-history-op', row.op));
  head.appendChild(element('span', 'jp-ipymemory-history-when', when(row.at)));
  item.appendChild(head);
  const what = element('div', 'jp-ipymemory-history-names');
  what.append(
    ...names('+', 'jp-ipymemory-history-added', row.added),
    ...names('\u2212', 'jp-ipymemory-history-removed', row.removed)
  );
  if (!row.added.length && !row.removed.length) {
    what.appendChild(element('span', 'jp-ipymemory-note', 'no change'));
  }
  item.appendChild(what);
  const by = row.query ? `${row.by} \u00b7 \u201c${row.query}\u201d` : row.by;
  const line = element('div', 'jp-ipymemory-note jp-ipymemory-history-by', by);
  line.title = by;
  item.appendChild(line);
  return item;
}

/** The timeline as a list, newest first. */
export function historyList(rows: ReadonlyArray<IHistoryRow>): HTMLUListElement {
  const list = element('ul', 'jp-ipymemory-list jp-ipymemory-history');
  for (const row of rows) {
    list.appendChild(historyItem(row));
  }
  return list;
}

/**
 * The panel's History section: collapsible (open state kept by the caller), read-only;
 * undo and restore stay in the notebook, where they are reviewed like any commit.
 */
export function historySection(listing: IHistoryListing, open: boolean): HTMLDetailsElement {
  const section = element('details', 'jp-ipymemory-history-section');
  section.open = open;
  const n = listing.entries.length;
  const label = n ? `History \u00b7 ${n}${listing.more ? '+' : ''} change${n === 1 && !listing.more ? '' : 's'}` : 'History';
  section.appendChild(element('summary', 'jp-ipymemory-label', label));
  if (listing.error) {
    section.appendChild(errorBox(listing.error));
  }
  if (n) {
    section.appendChild(historyList(listing.entries));
    const hint = listing.more ? 'Older entries: %memory history. ' : '';
    section.appendChild(
      element('div', 'jp-ipymemory-note', `${hint}See one: %memory diff SEQ; reverse it: %memory undo SEQ.`)
    );
  } else if (!listing.error) {
    section.appendChild(element('div', 'jp-ipymemory-note', 'No changes recorded yet.'));
  }
  return section;
}

// --- renderers of the notebook views ------------------------------------------------

export function renderHistory(root: HTMLElement, data: JSONObject): void {
  const rows = asList(data.entries).map(parseRow);
  const n = rows.length;
  const title = element('div', 'jp-ipymemory-header');
  const count = data.more === true ? `the newest ${n}` : `${n} entr${n === 1 ? 'y' : 'ies'}`;
  title.appendChild(element('span', 'jp-ipymemory-title', `History: ${count}`));
  title.appendChild(element('span', 'jp-ipymemory-detail', asText(data.directory)));
  root.appendChild(title);
  if (data.error) {
    root.appendChild(errorBox(asText(data.error)));
  }
  root.appendChild(historyList(rows));
  if (data.more === true) {
    root.appendChild(element('div', 'jp-ipymemory-note', `Older entries: %memory history --limit ${2 * n}`));
  }
}

export function renderHistoryDiff(root: HTMLElement, data: JSONObject): void {
  const row = parseRow(data.row);
  root.dataset.seq = String(row.seq);
  const title = element('div', 'jp-ipymemory-header');
  title.appendChild(element('span', 'jp-ipymemory-title', `#${row.seq} ${row.op}`));
  title.appendChild(element('span', 'jp-ipymemory-detail', `${when(row.at)} UTC \u00b7 ${row.by}`));
  root.appendChild(title);
  for (const [mark, className, key] of [
    ['+', 'jp-ipymemory-history-added', 'added'],
    ['\u2212', 'jp-ipymemory-history-removed', 'removed']
  ] as const) {
    for (const item of asList(data[key])) {
      const side = asObject(item);
      const record = side.record ? asObject(side.record) : null;
      const line = element('div', className, `${mark} ${asText(side.name)}`);
      line.dataset.name = asText(side.name);
      if (record) {
        line.appendChild(element('span', 'jp-ipymemory-note', ` \u2014 ${asText(record.description)}`));
      }
      root.appendChild(line);
    }
  }
  for (const item of asList(data.diffs)) {
    const diff = asObject(item);
    root.appendChild(element('div', 'jp-ipymemory-label', `body diff (${asText(diff.label)})`));
    const pre = element('pre', 'jp-ipymemory-json');
    for (const line of asList(diff.lines).map(asText)) {
      const className = line.startsWith('+') && !line.startsWith('+++')
        ? 'jp-ipymemory-history-added'
        : line.startsWith('-') && !line.startsWith('---')
          ? 'jp-ipymemory-history-removed'
          : undefined;
      pre.appendChild(element('span', className, `${line}\n`));
    }
    root.appendChild(pre);
  }
}

export function renderHistoryChange(root: HTMLElement, data: JSONObject): void {
  const op = asText(data.op);
  const seq = asText(data.seq);
  root.dataset.status = asText(data.status);
  const title = element('div', 'jp-ipymemory-header');
  title.appendChild(
    element('span', 'jp-ipymemory-title', op === 'undo' ? `Undo #${seq}` : `Restore the set after #${seq}`)
  );
  title.appendChild(element('span', 'jp-ipymemory-detail', asText(data.status)));
  root.appendChild(title);
  const returning = asList(data.returning).map(asText);
  const leaving = asList(data.leaving).map(asText);
  if (returning.length) {
    root.appendChild(element('div', 'jp-ipymemory-history-added', `brings back: ${returning.join(', ')}`));
  }
  if (leaving.length) {
    root.appendChild(element('div', 'jp-ipymemory-history-removed', `removes: ${leaving.join(', ')}`));
  }
  if (data.error) {
    root.appendChild(errorBox(asText(data.error)));
  } else if (data.status === 'pending') {
    root.appendChild(
      element(
        'div',
        'jp-ipymemory-note',
        `Pending in the kernel that proposed it: %memory commit there, or run %memory ${op} ${seq} again.`
      )
    );
  }
}
