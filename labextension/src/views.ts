/**
 * DOM rendering of the ipymemory views JSON (`application/vnd.ipymemory.v1+json`).
 *
 * Every string in the data is untrusted (memory content can come from a model or be
 * hand-edited on disk), so it only ever reaches the page through `textContent` or
 * attribute values, never through HTML parsing.
 */

import { renderHistory, renderHistoryChange, renderHistoryDiff } from './history';

export const MIME_TYPE = 'application/vnd.ipymemory.v1+json';

type JSONObject = Record<string, unknown>;

/** A column of a records table: header label and how to read the cell text. */
export interface IColumn {
  readonly key: string;
  readonly label: string;
}

export const RECORD_COLUMNS: ReadonlyArray<IColumn> = [
  { key: 'name', label: 'Name' },
  { key: 'type', label: 'Type' },
  { key: 'description', label: 'Description' }
];

export function asObject(value: unknown): JSONObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as JSONObject)
    : {};
}

export function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Text of a JSON value for display: strings as-is, other values as JSON. */
export function asText(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  if (typeof value === 'string') {
    return value;
  }
  return JSON.stringify(value) ?? String(value);
}

export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function heading(title: string, detail?: string): HTMLElement {
  const header = element('div', 'jp-ipymemory-header');
  header.appendChild(element('span', 'jp-ipymemory-title', title));
  if (detail) {
    header.appendChild(element('span', 'jp-ipymemory-detail', detail));
  }
  return header;
}

export function errorBox(message: string): HTMLElement {
  const box = element('div', 'jp-ipymemory-error', message);
  box.setAttribute('role', 'alert');
  return box;
}

function note(message: string): HTMLElement {
  return element('div', 'jp-ipymemory-note', message);
}

function bodyDetails(body: string): HTMLElement {
  const details = element('details', 'jp-ipymemory-body');
  details.appendChild(element('summary', undefined, 'body'));
  details.appendChild(element('pre', undefined, body));
  return details;
}

/**
 * A table of records, one row per record with `data-name` set.
 *
 * `decorate` may add cells or behaviour to each row (the side panel makes rows open files).
 */
export function recordsTable(
  records: ReadonlyArray<unknown>,
  columns: ReadonlyArray<IColumn> = RECORD_COLUMNS,
  decorate?: (row: HTMLTableRowElement, record: JSONObject) => void
): HTMLTableElement {
  const table = element('table', 'jp-ipymemory-table');
  const headRow = table.createTHead().insertRow();
  for (const column of columns) {
    headRow.appendChild(element('th', undefined, column.label));
  }
  const body = table.createTBody();
  for (const item of records) {
    const record = asObject(item);
    const row = body.insertRow();
    row.className = 'jp-ipymemory-row';
    if (record.name !== undefined) {
      row.dataset.name = asText(record.name);
    }
    for (const column of columns) {
      const cell = row.insertCell();
      cell.className = `jp-ipymemory-cell-${column.key}`;
      cell.textContent = asText(record[column.key]);
    }
    if (typeof record.body === 'string' && record.body !== '') {
      // The body belongs under the description it expands, not under the file name.
      const at = columns.findIndex(column => column.key === 'description');
      row.cells[at >= 0 ? at : row.cells.length - 1].appendChild(bodyDetails(record.body));
    }
    decorate?.(row, record);
  }
  return table;
}

/**
 * A compact list of records for narrow places (the side panel): name and type on one
 * line, the description below. Each item has `data-name`; `decorate` adds behaviour.
 */
export function recordsList(
  records: ReadonlyArray<unknown>,
  decorate?: (item: HTMLLIElement, record: JSONObject) => void
): HTMLUListElement {
  const list = element('ul', 'jp-ipymemory-list');
  for (const entry of records) {
    const record = asObject(entry);
    const item = element('li', 'jp-ipymemory-row');
    item.dataset.name = asText(record.name);
    const head = element('div', 'jp-ipymemory-item-head');
    head.appendChild(element('span', 'jp-ipymemory-cell-name', asText(record.name)));
    head.appendChild(element('span', 'jp-ipymemory-cell-type', asText(record.type)));
    item.appendChild(head);
    item.appendChild(element('div', 'jp-ipymemory-cell-description', asText(record.description)));
    decorate?.(item, record);
    list.appendChild(item);
  }
  return list;
}

function keyValueTable(pairs: ReadonlyArray<[string, string, unknown]>): HTMLTableElement {
  const table = element('table', 'jp-ipymemory-table jp-ipymemory-kv');
  const body = table.createTBody();
  for (const [key, label, value] of pairs) {
    const row = body.insertRow();
    row.dataset.key = key;
    row.appendChild(element('th', undefined, label));
    const cell = row.insertCell();
    cell.textContent = value === null || value === undefined ? '—' : asText(value);
  }
  return table;
}

function renderManifest(root: HTMLElement, data: JSONObject): void {
  const records = asList(data.records);
  root.appendChild(
    heading(`Memory: ${records.length} record${records.length === 1 ? '' : 's'}`, asText(data.directory))
  );
  if (data.error) {
    root.appendChild(errorBox(asText(data.error)));
  }
  if (records.length === 0) {
    root.appendChild(note('No memories stored.'));
    return;
  }
  // A short id, not the 40-character file name that would eat the width; the full
  // name on hover (and in `%memory show`).
  root.appendChild(
    recordsTable(records, [...RECORD_COLUMNS, { key: 'id', label: 'Id' }], (row, record) => {
      const cell = row.querySelector('.jp-ipymemory-cell-id') as HTMLElement | null;
      if (cell) {
        cell.textContent = asText(record.id) || shortId(asText(record.file));
        cell.title = asText(record.file);
      }
    })
  );
}

/** The first 8 hex digits of a record file's id (`<name>-<32 hex>.md`). */
export function shortId(file: string): string {
  const match = /-([0-9a-f]{32})\.md$/.exec(file);
  return match ? match[1].slice(0, 8) : file;
}

function renderSelection(root: HTMLElement, data: JSONObject): void {
  const source = asText(data.source);
  root.dataset.source = source;
  root.appendChild(heading('Selected memories', `source: ${source || 'unknown'}`));
  const query = element('div', 'jp-ipymemory-query');
  query.appendChild(element('span', 'jp-ipymemory-label', 'Query: '));
  query.appendChild(element('span', undefined, asText(data.query)));
  root.appendChild(query);
  if (data.reason) {
    root.appendChild(note(asText(data.reason)));
  }
  const records = asList(data.records);
  root.appendChild(records.length ? recordsTable(records) : note('No memories selected.'));
}

function acceptedCell(row: HTMLTableRowElement, record: JSONObject): void {
  const accepted = record.accepted !== false;
  row.dataset.accepted = String(accepted);
  // What became of the item (written, merged, rejected, discarded) once decided;
  // older outputs only say accepted or not.
  const decision = typeof record.decision === 'string' ? record.decision : accepted ? 'accept' : 'reject';
  row.dataset.decision = decision;
  const cell = row.insertCell(0);
  cell.className = 'jp-ipymemory-cell-accepted';
  cell.textContent = decision;
}

function renderBatch(root: HTMLElement, data: JSONObject): void {
  const status = asText(data.status);
  root.dataset.status = status;
  const items = asList(data.items);
  const hasPlan = data.consolidation !== null && data.consolidation !== undefined;
  // A plan-only batch (`%memory consolidate`) leads with the plan, not "0 items".
  const title =
    items.length || !hasPlan
      ? `Extracted batch: ${items.length} item${items.length === 1 ? '' : 's'}`
      : 'Consolidation batch';
  root.appendChild(heading(title, status));
  if (data.error) {
    root.appendChild(errorBox(asText(data.error)));
  }
  if (items.length) {
    const table = recordsTable(items, RECORD_COLUMNS, acceptedCell);
    table.tHead?.rows[0].insertBefore(element('th', undefined, 'Decision'), table.tHead.rows[0].firstChild);
    root.appendChild(table);
  } else if (!hasPlan) {
    root.appendChild(note('Nothing extracted.'));
  }
  // What the text form says beside the table, in its words: updates, items kept
  // user-wide ("↑ user-wide …"), screening flags.
  for (const line of asList(data.notes)) {
    root.appendChild(note(asText(line)));
  }
  if (hasPlan) {
    const section = element('div', 'jp-ipymemory-consolidation');
    renderPlan(section, asObject(data.consolidation));
    root.appendChild(section);
  }
  const committed = asList(data.committed).map(asText);
  if (committed.length) {
    const line = element('div', 'jp-ipymemory-committed');
    line.appendChild(element('span', 'jp-ipymemory-label', 'Committed: '));
    line.appendChild(element('span', undefined, committed.join(', ')));
    root.appendChild(line);
  } else if (status === 'discarded') {
    root.appendChild(note('Discarded: nothing was written.'));
  } else if (asList(data.present).length && data.outcome) {
    // Nothing written: memory held these already, as proposed.
    root.appendChild(note(asText(data.outcome)));
  }
  const net = asObject(data.net);
  if (typeof net.before === 'number' && typeof net.after === 'number' && status === 'pending') {
    // What the plan does to the set, not just how many items there are (issue 14 #4).
    const records = `${net.after} record${net.after === 1 ? '' : 's'}`;
    root.appendChild(element('div', 'jp-ipymemory-net', `Commit as chosen: ${net.before} → ${records}`));
  }
  if (data.hint) {
    root.appendChild(element('div', 'jp-ipymemory-note jp-ipymemory-hint', asText(data.hint)));
  }
}

function renderPending(root: HTMLElement, data: JSONObject): void {
  const batches = asList(data.batches).map(asObject);
  root.appendChild(
    heading(`Pending: ${batches.length} batch${batches.length === 1 ? '' : 'es'}`, asText(data.directory))
  );
  for (const problem of asList(data.problems)) {
    root.appendChild(note(asText(problem)));
  }
  const rows = batches.map(batch => ({
    name: batch.id,
    id: batch.id,
    where: batch.live === true ? 'this kernel' : 'saved',
    what: [asList(batch.names).map(asText).join(', '), asText(batch.plan)].filter(Boolean).join('; '),
    expires: batch.expires_at ?? '—'
  }));
  if (rows.length) {
    root.appendChild(
      recordsTable(rows, [
        { key: 'id', label: 'Batch' },
        { key: 'where', label: 'Where' },
        { key: 'what', label: 'Proposes' },
        { key: 'expires', label: 'Expires' }
      ])
    );
  } else {
    root.appendChild(note('No batch awaits review.'));
  }
  if (data.hint) {
    root.appendChild(note(asText(data.hint)));
  }
}

/**
 * A consolidation plan: the records it replaces (`source_names`, with their records when
 * `sources` has them) and the records it adds.
 */
function renderPlan(root: HTMLElement, plan: JSONObject): void {
  const accepted = plan.accepted !== false;
  root.dataset.accepted = String(accepted);
  const sourceNames = asList(plan.source_names).map(asText);
  root.appendChild(heading('Consolidation plan', accepted ? 'accepted' : 'rejected'));
  const known = new Map(asList(plan.sources).map(item => [asText(asObject(item).name), item]));
  const replaced = sourceNames.map(name => known.get(name) ?? { name });
  const removed = recordsTable(replaced, RECORD_COLUMNS, row => row.classList.add('jp-ipymemory-removed'));
  removed.dataset.role = 'replaces';
  root.appendChild(element('div', 'jp-ipymemory-label', `Replaces ${replaced.length}:`));
  root.appendChild(removed);
  const records = asList(plan.records);
  const added = recordsTable(records, RECORD_COLUMNS, row => row.classList.add('jp-ipymemory-added'));
  added.dataset.role = 'adds';
  root.appendChild(element('div', 'jp-ipymemory-label', `Adds ${records.length}:`));
  root.appendChild(added);
}

function renderError(root: HTMLElement, data: JSONObject): void {
  const where = asText(data.where);
  const outcome = asText(data.outcome);
  const message = asText(data.error);
  let headline = `Error: ${message}`;
  if (outcome) {
    // A whole sentence ("Memory could not be read"): said as it is.
    headline = `${outcome}: ${message}`;
  } else if (where) {
    headline = where.endsWith('failed') ? `${where}: ${message}` : `${where} failed: ${message}`;
  }
  root.appendChild(errorBox(headline));
  if (data.hint) {
    root.appendChild(note(asText(data.hint)));
  }
}

function renderMessage(root: HTMLElement, data: JSONObject): void {
  root.dataset.kind = asText(data.kind);
  root.appendChild(element('div', 'jp-ipymemory-message', asText(data.message)));
}

function renderCheck(root: HTMLElement, data: JSONObject): void {
  const problems = asList(data.problems).map(asObject);
  const errors = problems.filter(p => p.severity === 'error').length;
  const ok = data.ok === true;
  root.dataset.ok = String(ok);
  const directory = asText(data.directory);
  let headline = `OK: ${directory} is consistent.`;
  if (problems.length) {
    const verdict = ok ? 'OK (warnings only)' : 'PROBLEMS';
    headline = `${verdict}: ${errors} error(s), ${problems.length - errors} warning(s) in ${directory}`;
  }
  root.appendChild(ok ? heading(headline) : errorBox(headline));
  if (problems.length) {
    const columns = [
      { key: 'severity', label: 'Severity' },
      { key: 'file', label: 'File' },
      { key: 'reason', label: 'Reason' }
    ];
    root.appendChild(
      recordsTable(problems, columns, (row, problem) => {
        row.dataset.severity = asText(problem.severity);
      })
    );
  }
  if (problems.some(p => p.leftover)) {
    root.appendChild(note('Leftover files are ignored by readers; `ipymemory gc` removes them.'));
  }
}

function renderRecord(root: HTMLElement, data: JSONObject): void {
  const record = asObject(data.record);
  root.dataset.name = asText(record.name);
  root.appendChild(heading(`Memory: ${asText(record.name)}`, asText(data.file)));
  root.appendChild(
    keyValueTable([
      ['type', 'Type', record.type],
      ['description', 'Description', record.description]
    ])
  );
  if (data.history !== undefined) {
    const origin = data.history ? asText(asObject(data.history).text) : 'no history entry added it';
    root.appendChild(element('div', 'jp-ipymemory-note jp-ipymemory-record-origin', origin));
  }
  root.appendChild(element('pre', 'jp-ipymemory-record-body', asText(record.body)));
}

function renderStatus(root: HTMLElement, data: JSONObject): void {
  root.appendChild(heading('Memory status', asText(data.directory)));
  if (data.last_error) {
    root.appendChild(errorBox(asText(data.last_error)));
  }
  root.appendChild(
    keyValueTable([
      ['records', 'Records', data.records ?? 'unreadable'],
      ['pending', 'Pending batches', data.pending],
      ['model', 'Model', data.model ?? 'not configured (set ANTHROPIC_API_KEY)'],
      ['last_error', 'Last error', data.last_error]
    ])
  );
  const settings = asList(data.settings);
  if (settings.length) {
    root.appendChild(element('div', 'jp-ipymemory-label', 'Settings'));
    const table = recordsTable(
      settings,
      [
        { key: 'name', label: 'Setting' },
        { key: 'value', label: 'Value' },
        { key: 'origin', label: 'From' }
      ],
      (row, setting) => {
        row.dataset.origin = asText(setting.origin);
      }
    );
    table.dataset.role = 'settings';
    root.appendChild(table);
  }
}

/** `sync push|pull|status` (SPEC §14): the words the kernel chose, conflicts side by side. */
function renderSync(root: HTMLElement, data: JSONObject): void {
  const shown = asObject(data.shown);
  root.dataset.action = asText(data.action);
  root.appendChild(heading(asText(shown.headline)));
  const lines = asList(shown.lines).map(asText);
  if (lines.length) {
    root.appendChild(element('pre', 'jp-ipymemory-sync-lines', lines.join('\n')));
  }
  for (const conflict of asList(shown.conflicts).map(asObject)) {
    root.appendChild(element('div', 'jp-ipymemory-label', asText(conflict.title)));
    const table = element('table', 'jp-ipymemory-table jp-ipymemory-conflict');
    table.dataset.conflict = asText(conflict.name);
    const head = table.createTHead().insertRow();
    for (const title of ['here', asText(conflict.there_title)]) {
      head.appendChild(element('th', undefined, title));
    }
    const row = table.createTBody().insertRow();
    for (const side of [conflict.here, conflict.there]) {
      const cell = row.insertCell();
      cell.appendChild(element('pre', undefined, asList(side).map(asText).join('\n')));
    }
    root.appendChild(table);
  }
  if (data.stopped) {
    root.appendChild(errorBox(`Stopped: ${asText(data.stopped)}`));
  }
  if (shown.hint) {
    root.appendChild(note(asText(shown.hint)));
  }
}

function tokens(usage: unknown): string {
  const u = asObject(usage);
  const cached = Number(u.cache_read_input_tokens ?? 0) + Number(u.cache_creation_input_tokens ?? 0);
  const cache = cached
    ? ` (cache: ${asText(u.cache_read_input_tokens)} read, ${asText(u.cache_creation_input_tokens)} written)`
    : '';
  return `${asText(u.input_tokens)} in / ${asText(u.output_tokens)} out${cache}`;
}

/** `%memory session`: this conversation's turns, tokens and cost. */
function renderSession(root: HTMLElement, data: JSONObject): void {
  root.appendChild(heading(`Session ${asText(data.session)}`, asText(data.directory)));
  const cost = data.estimated_cost_usd;
  root.appendChild(
    keyValueTable([
      ['turns', 'Turns', data.turns],
      ['messages', 'Messages in the conversation', data.messages],
      ['main', 'Agent tokens', tokens(data.main)],
      ['memory', 'Memory tokens', tokens(data.memory)],
      ['cost', 'Estimated cost', typeof cost === 'number' ? `$${cost.toFixed(4)}` : 'unknown']
    ])
  );
  // SPEC §14: per injected feedback/user memory, how the answers followed it.
  const followed = Object.entries(asObject(data.followed));
  if (followed.length) {
    const title = 'Memories and the answers that followed them';
    root.appendChild(element('div', 'jp-ipymemory-section-title', title));
    root.appendChild(
      keyValueTable(
        followed.map(([name, value]): [string, string, unknown] => {
          const t = asObject(value);
          let said = `followed ${asText(t.follows)}, not followed ${asText(t.contradicts)}`;
          said += `, untouched ${asText(t.untouched)}`;
          if (Number(t.unjudged) > 0) {
            said += `, not judged ${asText(t.unjudged)}`;
          }
          if (typeof t.last_miss === 'string' && t.last_miss) {
            said += ` (last miss: it ${t.last_miss})`;
          }
          return [name, name, said];
        })
      )
    );
  }
  root.appendChild(note('%%agent --new starts a fresh conversation (memory stays).'));
}

/** `followed` (SPEC §14): per memory, how the answers of every session followed it. */
function renderFollowed(root: HTMLElement, data: JSONObject): void {
  const turns = Object.entries(asObject(data.turns))
    .map(([scope, n]) => `${asText(n)} in the ${scope} scope`)
    .join(', ');
  root.appendChild(heading('Answers judged against their memories', turns || 'none yet'));
  const columns = [
    { key: 'name', label: 'Memory' },
    { key: 'scope', label: 'Scope' },
    { key: 'follows', label: 'Followed' },
    { key: 'contradicts', label: 'Not followed' },
    { key: 'untouched', label: 'Untouched' },
    { key: 'unjudged', label: 'Not judged' },
    { key: 'last_miss', label: 'Last miss' }
  ];
  root.appendChild(
    recordsTable(asList(data.memories), columns, (row, memory) => {
      row.dataset.reword = String(memory.reword === true);
      row.dataset.current = String(memory.current === true);
    })
  );
}

/** `--scope all` over both scopes (SPEC §11): each scope's own view, labelled. */
function renderScoped(root: HTMLElement, data: JSONObject): void {
  const scopes = asObject(data.scopes);
  for (const [scope, part] of Object.entries(scopes)) {
    const label = scope === 'user' ? 'User-wide (your own memory, every project)' : 'This project';
    const section = element('div', 'jp-ipymemory-scope');
    section.dataset.scope = scope;
    section.appendChild(element('div', 'jp-ipymemory-section-title', label));
    section.appendChild(renderView(part));
    root.appendChild(section);
  }
}

function renderJSON(root: HTMLElement, data: unknown): void {
  root.appendChild(element('pre', 'jp-ipymemory-json', JSON.stringify(data, null, 2) ?? String(data)));
}

const RENDERERS: Readonly<Record<string, (root: HTMLElement, data: JSONObject) => void>> = {
  manifest: renderManifest,
  selection: renderSelection,
  batch: renderBatch,
  pending: renderPending,
  session: renderSession,
  followed: renderFollowed,
  record: renderRecord,
  status: renderStatus,
  consolidation: renderPlan,
  check: renderCheck,
  error: renderError,
  message: renderMessage,
  history: renderHistory,
  'history-diff': renderHistoryDiff,
  'history-change': renderHistoryChange,
  scoped: renderScoped,
  sync: renderSync
};

/** Render one view payload; unknown views fall back to pretty JSON (forward compatibility). */
export function renderView(data: unknown): HTMLElement {
  const root = element('div', 'jp-ipymemory-view');
  const view = asObject(data).view;
  const render = typeof view === 'string' && Object.prototype.hasOwnProperty.call(RENDERERS, view)
    ? RENDERERS[view]
    : undefined;
  if (render) {
    root.dataset.ipymemoryView = view as string;
    render(root, asObject(data));
  } else {
    root.dataset.ipymemoryView = 'json';
    renderJSON(root, data);
  }
  return root;
}
