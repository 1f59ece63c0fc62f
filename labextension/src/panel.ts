/**
 * The "Memory" side panel: the `.memory/` set of the directory of the notebook in focus.
 */
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { IBatchReview, IDecision, IDecisionReply, IMemoryEntry, IMemoryListing } from './api';
import { historySection, IHistoryListing } from './history';
import { BatchReviewForm } from './review';
import { element, errorBox, recordsList } from './views';

export const PANEL_ID = 'ipymemory-panel';

/** How often the panel asks whether the manifest changed while it is visible. */
export const POLL_INTERVAL_MS = 3000;

export interface IMemoryPanelOptions {
  /** Directory (relative to the server root) whose memory to show; `null` if none. */
  currentDirectory: () => string | null;
  fetch: (directory: string) => Promise<IMemoryListing>;
  /** Open a record of the listing (the panel does not decide how); `user` for one of
   * the user scope. */
  openRecord: (entry: IMemoryEntry, listing: IMemoryListing, user: boolean) => void;
  /** The newest history entries of a directory (the read-only History section). */
  fetchHistory?: (directory: string) => Promise<IHistoryListing>;
  /** One pending batch of a directory, for its review. */
  fetchReview: (directory: string, batchId: string) => Promise<IBatchReview>;
  /** Commit (as `decision` says) or discard a pending batch of a directory. */
  decide: (
    directory: string,
    batchId: string,
    action: 'commit' | 'discard',
    decision: IDecision | null
  ) => Promise<IDecisionReply>;
}

export class MemoryPanel extends Widget {
  constructor(options: IMemoryPanelOptions) {
    super();
    this._options = options;
    this.id = PANEL_ID;
    this.addClass('jp-ipymemory-panel');

    const header = element('div', 'jp-ipymemory-panel-header');
    header.appendChild(element('span', 'jp-ipymemory-title', 'Memory'));
    const refresh = element('button', 'jp-ipymemory-refresh jp-mod-styled', 'Refresh');
    refresh.title = 'Reload the memory set now';
    refresh.addEventListener('click', () => void this.refresh());
    header.appendChild(refresh);
    this._directoryLine = element('div', 'jp-ipymemory-directory');
    // Filters the listed records by name and description as you type (client side).
    this._search = element('input', 'jp-ipymemory-search jp-mod-styled');
    this._search.type = 'search';
    this._search.placeholder = 'Search names and descriptions';
    this._search.setAttribute('aria-label', 'Search memories by name and description');
    this._search.addEventListener('input', () => this._applyFilter());
    this._content = element('div', 'jp-ipymemory-panel-content');
    this._userSection = element('div', 'jp-ipymemory-user-scope');
    this._pendingSection = element('div', 'jp-ipymemory-pending');
    this._history = element('div', 'jp-ipymemory-panel-history');
    this.node.append(
      header,
      this._directoryLine,
      this._search,
      this._content,
      this._userSection,
      this._pendingSection,
      this._history
    );
    this._showMessage('Open a notebook to see its memory.');
  }

  /** Reload now (also called on notebook focus change); stale answers are dropped. */
  async refresh(): Promise<void> {
    const directory = this._options.currentDirectory();
    const ticket = ++this._ticket;
    if (directory === null) {
      this._renderedKey = '';
      delete this.node.dataset.directory;
      this._directoryLine.textContent = '';
      this._showMessage('Open a notebook to see its memory.');
      this._userSection.replaceChildren();
      this._forgetReviews('');
      this._pendingSection.replaceChildren();
      this._history.replaceChildren();
      this._historyKey = '';
      return;
    }
    const fetchHistory = this._options.fetchHistory;
    const [listing, history] = await Promise.all([
      this._options.fetch(directory),
      fetchHistory ? fetchHistory(directory) : Promise.resolve(null)
    ]);
    if (ticket !== this._ticket || this.isDisposed) {
      return;
    }
    this._renderHistory(directory, history);
    // Re-render only on change so polling leaves focus and scroll position alone.
    const key = `${listing.directory}\u0000${listing.etag}\u0000${listing.error ?? ''}`;
    if (key !== this._renderedKey) {
      this._renderedKey = key;
      this._render(listing);
    }
  }

  dispose(): void {
    this._stopPolling();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.refresh();
    this._startPolling();
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._stopPolling();
  }

  private _startPolling(): void {
    if (this._timer === null) {
      this._timer = window.setInterval(() => {
        if (this.isVisible) {
          void this.refresh();
        }
      }, POLL_INTERVAL_MS);
    }
  }

  private _stopPolling(): void {
    if (this._timer !== null) {
      window.clearInterval(this._timer);
      this._timer = null;
    }
  }

  private _showMessage(message: string): void {
    this._content.replaceChildren(element('div', 'jp-ipymemory-note', message));
  }

  private _render(listing: IMemoryListing): void {
    // The server root is '' (a bare "/" would read as the file system's root).
    const dir = listing.directory === '' ? 'the server root' : listing.directory;
    this.node.dataset.directory = listing.directory;
    this.node.dataset.etag = listing.etag;
    this._directoryLine.textContent = `${dir} · ${listing.records.length} record${listing.records.length === 1 ? '' : 's'}`;
    this._directoryLine.title =
      listing.directory === '' ? '.memory at the server root' : `${listing.directory}/.memory`;
    const children: HTMLElement[] = [];
    if (listing.error) {
      children.push(errorBox(listing.error));
    }
    if (listing.records.length) {
      children.push(
        recordsList(listing.records, (item, record) =>
          this._makeOpenable(item, record as unknown as IMemoryEntry, listing, false)
        )
      );
    } else if (!listing.error) {
      children.push(element('div', 'jp-ipymemory-note', 'No memories in this directory.'));
    }
    this._content.replaceChildren(...children);
    this._renderUser(listing);
    this._renderPending(listing);
    this._applyFilter();
  }

  /** The user scope's records, labelled, under the project's (SPEC §11). */
  private _renderUser(listing: IMemoryListing): void {
    const user = listing.user;
    if (!user) {
      this._userSection.replaceChildren();
      return;
    }
    const count = user.records.length;
    const title = element(
      'div',
      'jp-ipymemory-section-title',
      `User-wide · ${count} record${count === 1 ? '' : 's'}`
    );
    title.title = `${user.directory}: your own memory, shared by every project`;
    const children: HTMLElement[] = [title];
    if (user.error) {
      children.push(errorBox(user.error));
    }
    if (count) {
      children.push(
        recordsList(user.records, (item, record) => {
          item.classList.add('jp-ipymemory-user-row');
          this._makeOpenable(item, record as unknown as IMemoryEntry, listing, true);
        })
      );
    } else if (!user.error) {
      children.push(element('div', 'jp-ipymemory-note', 'No user-wide memories yet.'));
    }
    this._userSection.replaceChildren(...children);
  }

  /** Show only the records whose name or description holds every word typed. */
  private _applyFilter(): void {
    const words = this._search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = [this._content, this._userSection].flatMap(section =>
      Array.from(section.querySelectorAll<HTMLElement>('.jp-ipymemory-row'))
    );
    let shown = 0;
    for (const row of rows) {
      const text = row.textContent?.toLowerCase() ?? '';
      const match = words.every(word => text.includes(word));
      row.hidden = !match;
      shown += match ? 1 : 0;
    }
    this._content.querySelector('.jp-ipymemory-no-match')?.remove();
    if (words.length && rows.length && shown === 0) {
      this._content.appendChild(
        element('div', 'jp-ipymemory-note jp-ipymemory-no-match', 'No memory matches.')
      );
    }
  }

  /** Batches awaiting review, each decidable here (Review: a tick per item, then
   * Commit or Discard); a review open across re-renders keeps its ticks. */
  private _renderPending(listing: IMemoryListing): void {
    const pending = listing.pending;
    if (listing.directory !== this._reviewDirectory) {
      this._forgetReviews(listing.directory);
    }
    const listed = new Set(pending.map(batch => batch.id));
    for (const [id, form] of this._reviews) {
      if (!listed.has(id)) {
        this._reviews.delete(id);
        if (!form.decided) {
          this._say(`Batch ${id} is no longer pending: it was decided elsewhere, discarded or expired.`);
        }
      }
    }
    if (!pending.length && !this._notes.length) {
      this._pendingSection.replaceChildren();
      return;
    }
    const children: HTMLElement[] = [];
    if (pending.length) {
      children.push(
        element(
          'div',
          'jp-ipymemory-section-title',
          `Pending review: ${pending.length} batch${pending.length === 1 ? '' : 'es'}`
        )
      );
    }
    children.push(...this._notes);
    if (!pending.length) {
      this._pendingSection.replaceChildren(...children);
      return;
    }
    const list = element('ul', 'jp-ipymemory-list');
    for (const batch of pending) {
      const item = element('li', 'jp-ipymemory-pending-batch');
      item.dataset.batch = batch.id;
      const from = batch.agent
        ? `proposed by another agent (${batch.agent})`
        : batch.source
          ? `proposed ${batch.source}`
          : '';
      const what = [batch.names.join(', '), batch.plan ?? '', from].filter(Boolean).join('; ');
      if (batch.agent) {
        item.dataset.agent = batch.agent;
      }
      const head = element('div', 'jp-ipymemory-item-head');
      head.appendChild(element('span', 'jp-ipymemory-cell-name', batch.id));
      const toggle = element('button', 'jp-mod-styled jp-ipymemory-review-toggle');
      head.appendChild(toggle);
      item.appendChild(head);
      item.appendChild(element('div', 'jp-ipymemory-cell-description', what || 'nothing'));
      const open = this._reviews.get(batch.id);
      toggle.textContent = open ? 'Close' : 'Review';
      toggle.title = `Decide batch ${batch.id} here (in a notebook: %memory pending --open ${batch.id})`;
      toggle.addEventListener('click', () => this._toggleReview(listing.directory, batch.id, item, toggle));
      if (open) {
        item.appendChild(open.node);
      }
      list.appendChild(item);
    }
    const hint = element(
      'div',
      'jp-ipymemory-note',
      'Review: tick what to keep, then Commit or Discard (or in a notebook: %memory pending --open ID)'
    );
    children.push(list, hint);
    this._pendingSection.replaceChildren(...children);
  }

  private _toggleReview(
    directory: string,
    batchId: string,
    item: HTMLElement,
    toggle: HTMLButtonElement
  ): void {
    const open = this._reviews.get(batchId);
    if (open) {
      this._reviews.delete(batchId);
      open.node.remove();
      toggle.textContent = 'Review';
      return;
    }
    const form = new BatchReviewForm(batchId, {
      load: () => this._options.fetchReview(directory, batchId),
      decide: (action, decision) => this._options.decide(directory, batchId, action, decision),
      decided: said => {
        this._reviews.delete(batchId);
        this._notes = [];
        this._say(said);
        this._renderedKey = ''; // re-render even if the listing were unchanged
        void this.refresh();
      }
    });
    this._reviews.set(batchId, form);
    item.appendChild(form.node);
    toggle.textContent = 'Close';
    void form.load();
  }

  /** A line about a decision at the top of the pending section (until the next one). */
  private _say(message: string): void {
    const line = element('div', 'jp-ipymemory-note jp-ipymemory-decision-note', message);
    line.setAttribute('role', 'status');
    this._notes = [...this._notes.slice(-2), line];
  }

  /** Drop the reviews and notes of the previous directory. */
  private _forgetReviews(directory: string): void {
    this._reviews.clear();
    this._notes = [];
    this._reviewDirectory = directory;
  }

  /** The History section, re-rendered only on change; its open state is kept. */
  private _renderHistory(directory: string, history: IHistoryListing | null): void {
    const key = history ? `${directory}\u0000${history.etag}\u0000${history.error ?? ''}` : '';
    if (key === this._historyKey) {
      return;
    }
    this._historyKey = key;
    const previous = this._history.querySelector('details');
    const open = previous ? previous.open : false;
    this._history.replaceChildren(...(history ? [historySection(history, open)] : []));
  }

  private _makeOpenable(
    row: HTMLElement,
    record: IMemoryEntry,
    listing: IMemoryListing,
    user: boolean
  ): void {
    const shown = user ? `${listing.user?.directory ?? '~'}/${record.file}` : record.path;
    row.dataset.path = shown;
    row.dataset.scope = user ? 'user' : 'project';
    row.tabIndex = 0;
    row.setAttribute('role', 'button');
    row.title = `Open ${shown}`;
    row.classList.add('jp-ipymemory-openable');
    const open = (): void => this._options.openRecord(record, listing, user);
    row.addEventListener('click', open);
    row.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        open();
      }
    });
  }

  private readonly _options: IMemoryPanelOptions;
  private readonly _directoryLine: HTMLElement;
  private readonly _content: HTMLElement;
  private readonly _userSection: HTMLElement;
  private readonly _search: HTMLInputElement;
  private readonly _pendingSection: HTMLElement;
  private readonly _history: HTMLElement;
  private _historyKey = '';
  // Open reviews (batch id -> form) of `_reviewDirectory`, and what the last decisions did.
  private readonly _reviews = new Map<string, BatchReviewForm>();
  private _reviewDirectory = '';
  private _notes: HTMLElement[] = [];
  private _ticket = 0;
  private _renderedKey = '';
  private _timer: number | null = null;
}
