/**
 * A read-only main-area view of one record, for servers that do not open hidden files
 * (".memory/" is hidden, and jupyter_server refuses hidden files by default).
 * Records are immutable once written, so read-only is also the right way to look at them.
 */
import { Widget } from '@lumino/widgets';

import { IRecordReply } from './api';
import { memoryIcon } from './icon';
import { errorBox, renderView } from './views';

export function viewerId(path: string): string {
  return `ipymemory-record-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export class RecordViewer extends Widget {
  constructor(path: string, name: string) {
    super();
    this.id = viewerId(path);
    this.addClass('jp-ipymemory-record-viewer');
    this.node.dataset.path = path;
    this.title.label = name;
    this.title.caption = `${path} (read-only)`;
    this.title.icon = memoryIcon;
    this.title.closable = true;
    this.node.appendChild(renderView({ view: 'record', file: path, record: { name } }));
  }

  showReply(reply: IRecordReply): void {
    this.node.replaceChildren(
      reply.record ? renderView({ view: 'record', file: this.node.dataset.path, record: reply.record }) : errorBox(reply.error ?? '')
    );
  }
}
