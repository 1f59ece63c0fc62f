/**
 * Client of the server endpoint `/ipymemory/api/memory`: the listing, records and
 * history (read-only), one pending batch's review, and deciding it (commit, discard).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IHistoryListing, parseHistory } from './history';
import { asList, asObject, asText } from './views';

/** One record of the set, as listed by the endpoint. */
export interface IMemoryEntry {
  readonly name: string;
  readonly type: string;
  readonly description: string;
  /** File name inside `.memory/`. */
  readonly file: string;
  /** Path of the record file relative to the server root (for `docmanager:open`). */
  readonly path: string;
}

/** A batch awaiting review, kept in `.memory/pending/` (decided with {@link decideBatch}). */
export interface IPendingBatch {
  readonly id: string;
  readonly names: ReadonlyArray<string>;
  /** "a plan: N → M records", or null without a consolidation plan. */
  readonly plan: string | null;
  /** The agent that proposed it ("mcp", "memory-tool"), or null for a notebook turn's. */
  readonly agent: string | null;
  /** Where it came from in words ("from the chat ideas.chat"), or null for a notebook's. */
  readonly source: string | null;
}

/** The user scope (SPEC §11: the user's own memory, shared across projects). */
export interface IUserScope {
  /** Its `.memory` directory as the server shows it (`~/…` under the home directory). */
  readonly directory: string;
  /** Its records (`path` is empty: they live outside the server root). */
  readonly records: ReadonlyArray<IMemoryEntry>;
  readonly error: string | null;
}

/** The endpoint's answer; `error` is set instead of throwing, so the panel can show it. */
export interface IMemoryListing {
  readonly directory: string;
  readonly records: ReadonlyArray<IMemoryEntry>;
  readonly pending: ReadonlyArray<IPendingBatch>;
  readonly mtime: number | null;
  readonly etag: string;
  readonly error: string | null;
  /** Whether the server opens hidden files (".memory/…") in JupyterLab. */
  readonly allowHidden: boolean;
  /** The user scope, or null when the server has it off. */
  readonly user: IUserScope | null;
}

/** One record with its body, from the record endpoint. */
export interface IRecordReply {
  readonly file: string;
  readonly record: Record<string, unknown> | null;
  readonly error: string | null;
}

export const ENDPOINT = 'ipymemory/api/memory';

function parseEntries(value: unknown): IMemoryEntry[] {
  return asList(value).map(item => {
    const record = asObject(item);
    return {
      name: asText(record.name),
      type: asText(record.type),
      description: asText(record.description),
      file: asText(record.file),
      path: record.path ? asText(record.path) : ''
    };
  });
}

function parseUser(value: unknown): IUserScope | null {
  if (value === null || typeof value !== 'object') {
    return null;
  }
  const data = asObject(value);
  return {
    directory: asText(data.directory),
    records: parseEntries(data.records),
    error: data.error ? asText(data.error) : null
  };
}

function parseListing(directory: string, payload: unknown, status: number): IMemoryListing {
  const data = asObject(payload);
  const records = parseEntries(data.records);
  let error = data.error ? asText(data.error) : null;
  if (status >= 400 && !error) {
    error = `The memory endpoint answered HTTP ${status}.`;
  }
  const pending = asList(data.pending).map(item => {
    const batch = asObject(item);
    return {
      id: asText(batch.id),
      names: asList(batch.names).map(asText),
      plan: batch.plan ? asText(batch.plan) : null,
      agent: batch.agent ? asText(batch.agent) : null,
      source: batch.source ? asText(batch.source) : null
    };
  });
  return {
    directory: typeof data.directory === 'string' ? data.directory : directory,
    records,
    pending,
    mtime: typeof data.mtime === 'number' ? data.mtime : null,
    etag: asText(data.etag),
    error,
    allowHidden: data.allow_hidden === true,
    user: parseUser(data.user)
  };
}

async function getJSON(
  path: string,
  query: Record<string, string>,
  settings: ServerConnection.ISettings
): Promise<{ status: number; payload: unknown }> {
  const url = URLExt.join(settings.baseUrl, path) + URLExt.objectToQueryString(query);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, { method: 'GET', cache: 'no-store' }, settings);
  } catch (reason) {
    return { status: 0, payload: { error: `Cannot reach the Jupyter server: ${String(reason)}` } };
  }
  try {
    return { status: response.status, payload: await response.json() };
  } catch {
    const error =
      response.status === 404
        ? 'The ipymemory server extension is not enabled (HTTP 404).'
        : `The memory endpoint answered HTTP ${response.status} without a JSON body.`;
    return { status: response.status, payload: { error } };
  }
}

/** Fetch the memory set of `directory` (relative to the server root). Never rejects. */
export async function fetchMemory(
  directory: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<IMemoryListing> {
  const { status, payload } = await getJSON(ENDPOINT, { path: directory }, settings);
  return parseListing(directory, payload, status);
}

/** Fetch one record (body included) of the set of `directory`, or of the user scope
 * (`scope` "user"). Never rejects. */
export async function fetchRecord(
  directory: string,
  file: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings(),
  scope: 'project' | 'user' = 'project'
): Promise<IRecordReply> {
  const query: Record<string, string> = { path: directory, file };
  if (scope === 'user') {
    query.scope = 'user';
  }
  const { status, payload } = await getJSON(`${ENDPOINT}/record`, query, settings);
  const data = asObject(payload);
  const record = data.record !== null && typeof data.record === 'object' ? asObject(data.record) : null;
  let error = data.error ? asText(data.error) : null;
  if (!record && !error) {
    error = `The memory endpoint answered HTTP ${status} without a record.`;
  }
  return { file, record, error };
}

/** Fetch the newest history entries of `directory` (read-only). Never rejects. */
export async function fetchHistory(
  directory: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<IHistoryListing> {
  const { status, payload } = await getJSON(`${ENDPOINT}/history`, { path: directory }, settings);
  return parseHistory(payload, status);
}

/** One item of a batch under review. */
export interface IReviewItem {
  readonly name: string;
  readonly type: string;
  readonly description: string;
  readonly body: string;
  /** Held by screening (tool output, an instruction, another agent's): committed only
   * when ticked. */
  readonly held: boolean;
  /** The redacted form of an item that held a credential: committed only when ticked. */
  readonly redacted: boolean;
  /** Why screening wants a person for it (empty when it does not). */
  readonly reasons: ReadonlyArray<string>;
  /** Which screening rules fired, each with its evidence (issue 39). */
  readonly findings: ReadonlyArray<IFinding>;
  /** The current record it updates (SPEC §9), or null. */
  readonly replaces: string | null;
  /** Committed to the user scope (SPEC §11) rather than the project. */
  readonly userWide: boolean;
}

/** A screening rule that fired on an item: its id and what it fired on. */
export interface IFinding {
  readonly rule: string;
  readonly evidence: string;
}

function parseFindings(value: unknown): ReadonlyArray<IFinding> {
  return asList(value).map(entry => {
    const finding = asObject(entry);
    return { rule: asText(finding.rule), evidence: asText(finding.evidence ?? '') };
  });
}

/** A batch's consolidation plan under review. */
export interface IReviewPlan {
  readonly sourceNames: ReadonlyArray<string>;
  readonly records: ReadonlyArray<{ readonly name: string; readonly description: string }>;
  /** Held by screening: applied only when ticked. */
  readonly held: boolean;
  readonly reasons: ReadonlyArray<string>;
  readonly findings: ReadonlyArray<IFinding>;
}

/** One pending batch for review (`GET …/pending?path=<dir>&batch=<id>`); `error` is set
 * instead of throwing. */
export interface IBatchReview {
  readonly id: string;
  readonly items: ReadonlyArray<IReviewItem>;
  readonly plan: IReviewPlan | null;
  /** An undo or restore proposal's title (it has no items), or null. */
  readonly change: string | null;
  /** Why the plan was dropped, or the last commit failure, to show; or null. */
  readonly note: string | null;
  readonly agent: string | null;
  readonly error: string | null;
}

/** What the person chose: the options of `ipymemory commit --batch ID`. */
export interface IDecision {
  /** The items left unticked. */
  readonly reject: ReadonlyArray<string>;
  /** Redacted items ticked: their redacted text is committed. */
  readonly redacted: ReadonlyArray<string>;
  /** Held items ticked: committed by this explicit choice. */
  readonly accept: ReadonlyArray<string>;
  /** The plan left unticked. */
  readonly noPlan: boolean;
  /** A held plan ticked. */
  readonly acceptPlan: boolean;
}

/** The outcome of a commit or discard; `error` (the store unchanged) instead of throwing. */
export interface IDecisionReply {
  readonly status: number;
  readonly error: string | null;
  /** The names the commit wrote (empty for a discard). */
  readonly committed: ReadonlyArray<string>;
  /** `committed` or `discarded` once decided. */
  readonly outcome: string;
}

function parseReview(batchId: string, payload: unknown, status: number): IBatchReview {
  const data = asObject(payload);
  const view = asObject(data.batch);
  const flags = asObject(view.flags);
  const findings = asObject(view.findings);
  const redacted = new Set(asList(view.redacted).map(asText));
  const held = new Set(asList(data.held).map(asText));
  const items = asList(view.items).map(entry => {
    const item = asObject(entry);
    const name = asText(item.name);
    return {
      name,
      type: asText(item.type),
      description: asText(item.description),
      body: asText(item.body),
      held: held.has(name),
      redacted: redacted.has(name),
      reasons: asList(flags[name]).map(asText),
      findings: parseFindings(findings[name]),
      replaces: item.replaces ? asText(item.replaces) : null,
      userWide: item.scope === 'user'
    };
  });
  const consolidation = view.consolidation ? asObject(view.consolidation) : null;
  const plan = consolidation
    ? {
        sourceNames: asList(consolidation.source_names).map(asText),
        records: asList(consolidation.records).map(entry => {
          const record = asObject(entry);
          return { name: asText(record.name), description: asText(record.description) };
        }),
        held: data.plan_held === true,
        reasons: asList(data.plan_reasons).map(asText),
        findings: parseFindings(findings['(consolidation plan)'])
      }
    : null;
  let error = data.error ? asText(data.error) : null;
  if (!error && (status >= 400 || !data.batch)) {
    error = `The memory endpoint answered HTTP ${status} without the batch.`;
  }
  return {
    id: view.id ? asText(view.id) : batchId,
    items,
    plan,
    change: data.change ? asText(data.change) : null,
    note: view.error ? asText(view.error) : null,
    agent: data.agent ? asText(data.agent) : null,
    error
  };
}

/** Fetch pending batch `batchId` of `directory` for review (read-only). Never rejects. */
export async function fetchReview(
  directory: string,
  batchId: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<IBatchReview> {
  const query = { path: directory, batch: batchId };
  const { status, payload } = await getJSON(`${ENDPOINT}/pending`, query, settings);
  return parseReview(batchId, payload, status);
}

/** Commit (with `decision`) or discard pending batch `batchId` of `directory`: the
 * server runs `ipymemory commit|discard --batch ID` for it. Never rejects. */
export async function decideBatch(
  directory: string,
  batchId: string,
  action: 'commit' | 'discard',
  decision: IDecision | null,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<IDecisionReply> {
  const body: Record<string, unknown> = { path: directory, batch: batchId };
  if (action === 'commit' && decision) {
    Object.assign(body, {
      reject: decision.reject,
      redacted: decision.redacted,
      accept: decision.accept,
      no_plan: decision.noPlan,
      accept_plan: decision.acceptPlan
    });
  }
  const url = URLExt.join(settings.baseUrl, ENDPOINT, 'pending', action);
  let response: Response;
  try {
    const init = { method: 'POST', body: JSON.stringify(body), cache: 'no-store' as const };
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (reason) {
    const error = `Cannot reach the Jupyter server: ${String(reason)}`;
    return { status: 0, error, committed: [], outcome: '' };
  }
  let data: Record<string, unknown> = {};
  try {
    data = asObject(await response.json());
  } catch {
    // Answered without JSON: the status says what happened.
  }
  const view = asObject(data.view);
  let error = data.error ? asText(data.error) : null;
  if (!error && data.message) {
    error = asText(data.message); // jupyter_server's own refusals (403: XSRF, permission)
  }
  if (!error && !response.ok) {
    error = `The memory endpoint answered HTTP ${response.status}.`;
  }
  return {
    status: response.status,
    error,
    committed: asList(view.committed).map(asText),
    outcome: asText(view.status)
  };
}
