/**
 * Client of the read-only server endpoint `GET /ipymemory/api/memory?path=<dir>`.
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

/** A batch awaiting review, kept in `.memory/pending/` (read-only here). */
export interface IPendingBatch {
  readonly id: string;
  readonly names: ReadonlyArray<string>;
  /** "a plan: N → M records", or null without a consolidation plan. */
  readonly plan: string | null;
  /** The agent that proposed it ("mcp", "memory-tool"), or null for a notebook turn's. */
  readonly agent: string | null;
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
      agent: batch.agent ? asText(batch.agent) : null
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
