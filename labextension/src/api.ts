/**
 * Client of the read-only server endpoint `GET /ipymemory/api/memory?path=<dir>`.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

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

/** The endpoint's answer; `error` is set instead of throwing, so the panel can show it. */
export interface IMemoryListing {
  readonly directory: string;
  readonly records: ReadonlyArray<IMemoryEntry>;
  readonly mtime: number | null;
  readonly etag: string;
  readonly error: string | null;
}

export const ENDPOINT = 'ipymemory/api/memory';

function parseListing(directory: string, payload: unknown, status: number): IMemoryListing {
  const data = asObject(payload);
  const records = asList(data.records).map(item => {
    const record = asObject(item);
    return {
      name: asText(record.name),
      type: asText(record.type),
      description: asText(record.description),
      file: asText(record.file),
      path: asText(record.path)
    };
  });
  let error = data.error ? asText(data.error) : null;
  if (status >= 400 && !error) {
    error = `The memory endpoint answered HTTP ${status}.`;
  }
  return {
    directory: typeof data.directory === 'string' ? data.directory : directory,
    records,
    mtime: typeof data.mtime === 'number' ? data.mtime : null,
    etag: asText(data.etag),
    error
  };
}

/** Fetch the memory set of `directory` (relative to the server root). Never rejects. */
export async function fetchMemory(
  directory: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<IMemoryListing> {
  const url = URLExt.join(settings.baseUrl, ENDPOINT) + URLExt.objectToQueryString({ path: directory });
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, { method: 'GET', cache: 'no-store' }, settings);
  } catch (reason) {
    return parseListing(directory, { error: `Cannot reach the Jupyter server: ${String(reason)}` }, 0);
  }
  let payload: unknown;
  try {
    payload = await response.json();
  } catch {
    payload = {
      error:
        response.status === 404
          ? 'The ipymemory server extension is not enabled (HTTP 404).'
          : `The memory endpoint answered HTTP ${response.status} without a JSON body.`
    };
  }
  return parseListing(directory, payload, response.status);
}
