/**
 * The Memory panel's review of one pending batch: a tick per item and for the plan,
 * then Commit or Discard (the server runs `ipymemory commit|discard --batch ID`).
 *
 * SPEC §7: an item screening holds for a person (from tool output, instructing the
 * assistant, another agent's) or a redacted one starts unticked, and so does a held
 * plan: a tick is the explicit choice that commits it. Everything unticked is rejected.
 * All text comes from memory content, so it only reaches the page as text.
 */
import { IBatchReview, IDecision, IDecisionReply, IFinding, IReviewItem } from './api';
import { element, errorBox } from './views';

export interface IReviewOptions {
  load: () => Promise<IBatchReview>;
  decide: (action: 'commit' | 'discard', decision: IDecision | null) => Promise<IDecisionReply>;
  /** After a decision the server made: what to tell the person. */
  decided: (said: string) => void;
}

/** The plan in one line: what it replaces and what it adds. */
function planLine(review: IBatchReview): string {
  const plan = review.plan;
  if (!plan) {
    return '';
  }
  if (!plan.sourceNames.length && !plan.records.length) {
    return 'Apply the consolidation plan: nothing to merge (noted in the history only)';
  }
  const adds = plan.records.map(record => record.name).join(', ') || 'nothing';
  return `Apply the consolidation plan: replaces ${plan.sourceNames.join(', ') || 'nothing'} with ${adds}`;
}

function itemLabel(item: IReviewItem): string {
  const notes = [item.type];
  if (item.userWide) {
    notes.push('user-wide');
  }
  if (item.replaces) {
    notes.push(`updates ${item.replaces}`);
  }
  return `${item.name} (${notes.join(', ')})`;
}

export class BatchReviewForm {
  constructor(batchId: string, options: IReviewOptions) {
    this._options = options;
    this.node = element('div', 'jp-ipymemory-review');
    this.node.dataset.batch = batchId;
    this._setState('loading');
    this.node.appendChild(element('div', 'jp-ipymemory-note', 'Loading the batch…'));
  }

  readonly node: HTMLElement;

  /** Whether the server decided this batch from here (the panel then says what it did). */
  get decided(): boolean {
    return this._decided;
  }

  /** Fetch the batch and show its items and plan, each with its tick. */
  async load(): Promise<void> {
    const review = await this._options.load();
    this._review = review;
    if (review.error) {
      this.node.replaceChildren(errorBox(review.error));
      this._setState('error');
      return;
    }
    const children: HTMLElement[] = [];
    if (review.change) {
      children.push(element('div', 'jp-ipymemory-review-change', review.change));
    }
    if (review.note) {
      children.push(element('div', 'jp-ipymemory-note', review.note));
    }
    if (review.items.length) {
      const list = element('ul', 'jp-ipymemory-review-items');
      for (const item of review.items) {
        list.appendChild(this._itemRow(item));
      }
      children.push(list);
    }
    if (review.plan) {
      children.push(this._planRow(review));
    }
    this._summary = element('div', 'jp-ipymemory-review-summary');
    children.push(this._summary);
    const actions = element('div', 'jp-ipymemory-review-actions');
    const commit = element('button', 'jp-mod-styled jp-mod-accept jp-ipymemory-review-commit', 'Commit');
    commit.title = 'Commit the ticked items (and the plan if ticked); the rest is rejected';
    commit.addEventListener('click', () => void this._decide('commit'));
    const discard = element('button', 'jp-mod-styled jp-ipymemory-review-discard', 'Discard');
    discard.title = 'Drop the whole batch; nothing is written';
    discard.addEventListener('click', () => void this._decide('discard'));
    actions.append(commit, discard);
    children.push(actions);
    this._outcome = element('div', 'jp-ipymemory-review-outcome');
    children.push(this._outcome);
    this.node.replaceChildren(...children);
    this._setState('ready');
    this._updateSummary();
  }

  /** What the ticks say, as `commit --batch ID`'s options. */
  decision(): IDecision {
    const review = this._review;
    const items = review ? review.items : [];
    const ticked = (name: string): boolean => this._ticks.get(name)?.checked === true;
    const plan = review?.plan ?? null;
    const planTicked = this._planTick?.checked === true;
    return {
      reject: items.filter(item => !ticked(item.name)).map(item => item.name),
      redacted: items.filter(item => item.redacted && ticked(item.name)).map(item => item.name),
      accept: items.filter(item => item.held && ticked(item.name)).map(item => item.name),
      noPlan: plan !== null && !planTicked,
      acceptPlan: plan !== null && plan.held && planTicked
    };
  }

  private _itemRow(item: IReviewItem): HTMLLIElement {
    const row = element('li', 'jp-ipymemory-review-item');
    row.dataset.name = item.name;
    row.dataset.held = String(item.held);
    row.dataset.redacted = String(item.redacted);
    const label = element('label', 'jp-ipymemory-review-label');
    const tick = element('input', 'jp-ipymemory-review-tick');
    tick.type = 'checkbox';
    // Held and redacted items are committed only on an explicit choice (SPEC §7).
    tick.checked = !item.held && !item.redacted;
    tick.setAttribute('aria-label', `Commit ${item.name}`);
    tick.addEventListener('change', () => this._updateSummary());
    this._ticks.set(item.name, tick);
    label.append(tick, element('span', 'jp-ipymemory-cell-name', itemLabel(item)));
    row.appendChild(label);
    row.appendChild(element('div', 'jp-ipymemory-cell-description', item.description));
    if (item.body) {
      const body = element('details', 'jp-ipymemory-body');
      body.appendChild(element('summary', undefined, 'body'));
      body.appendChild(element('pre', undefined, item.body));
      row.appendChild(body);
    }
    if (item.held || item.redacted) {
      const kind = item.redacted ? 'redacted, commit only by choice' : 'held for review';
      const why = item.reasons.length ? `: ${item.reasons.join('; ')}` : '';
      row.appendChild(element('div', 'jp-ipymemory-review-reasons', `\u26a0 ${kind}${why}`));
      row.appendChild(findingsList(item.findings));
    } else if (item.findings.length) {
      // Issue 39 item 3: the rule an item was let through by.
      row.appendChild(element('div', 'jp-ipymemory-review-allowed', '\u2713 let through by a rule'));
      row.appendChild(findingsList(item.findings));
    }
    return row;
  }

  private _planRow(review: IBatchReview): HTMLElement {
    const plan = review.plan!;
    const row = element('div', 'jp-ipymemory-review-plan');
    row.dataset.held = String(plan.held);
    const label = element('label', 'jp-ipymemory-review-label');
    const tick = element('input', 'jp-ipymemory-review-plan-tick');
    tick.type = 'checkbox';
    tick.checked = !plan.held;
    tick.setAttribute('aria-label', 'Apply the consolidation plan');
    tick.addEventListener('change', () => this._updateSummary());
    this._planTick = tick;
    label.append(tick, element('span', undefined, planLine(review)));
    row.appendChild(label);
    if (plan.held) {
      const why = plan.reasons.length ? `: ${plan.reasons.join('; ')}` : '';
      row.appendChild(element('div', 'jp-ipymemory-review-reasons', `\u26a0 held for review${why}`));
      row.appendChild(findingsList(plan.findings));
    }
    return row;
  }

  private _updateSummary(): void {
    const review = this._review;
    if (!review || !this._summary) {
      return;
    }
    const chosen = this.decision();
    const kept = review.items.length - chosen.reject.length;
    const parts = [];
    if (review.items.length) {
      parts.push(`${kept} of ${review.items.length} item${review.items.length === 1 ? '' : 's'}`);
    }
    if (review.plan) {
      parts.push(chosen.noPlan ? 'without the plan' : 'with the plan');
    }
    this._summary.textContent = parts.length ? `Commit: ${parts.join(', ')}` : '';
  }

  private async _decide(action: 'commit' | 'discard'): Promise<void> {
    this._setState('busy');
    const reply = await this._options.decide(action, action === 'commit' ? this.decision() : null);
    if (reply.error) {
      this._outcome?.replaceChildren(errorBox(reply.error));
      this._setState('ready');
      return;
    }
    this._decided = true;
    this._setState('decided');
    const id = this.node.dataset.batch ?? '';
    let said = `Discarded batch ${id}: nothing was written.`;
    if (reply.outcome === 'committed') {
      const names = reply.committed.join(', ');
      said = `Committed from batch ${id}: ${names || 'the change'}.`;
    } else if (action === 'commit') {
      said = `Nothing to commit from batch ${id}: every item was rejected.`;
    }
    this._options.decided(said);
  }

  private _setState(state: 'loading' | 'ready' | 'busy' | 'decided' | 'error'): void {
    this.node.dataset.state = state;
    const off = state !== 'ready';
    for (const control of this.node.querySelectorAll<HTMLInputElement | HTMLButtonElement>(
      'input, button'
    )) {
      control.disabled = off;
    }
  }

  private readonly _options: IReviewOptions;
  private readonly _ticks = new Map<string, HTMLInputElement>();
  private _planTick: HTMLInputElement | null = null;
  private _review: IBatchReview | null = null;
  private _summary: HTMLElement | null = null;
  private _outcome: HTMLElement | null = null;
  private _decided = false;
}

/** The screening rules that fired on an item, each with its evidence (issue 39). */
function findingsList(findings: ReadonlyArray<IFinding>): HTMLElement {
  const list = element('ul', 'jp-ipymemory-review-rules');
  for (const finding of findings) {
    const row = element('li', 'jp-ipymemory-review-rule');
    row.appendChild(element('code', undefined, finding.rule));
    if (finding.evidence) {
      row.appendChild(document.createTextNode(`: ${finding.evidence}`));
    }
    list.appendChild(row);
  }
  return list;
}
