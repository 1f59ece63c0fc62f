/**
 * The "Memory" side panel plugin (the MIME renderer lives in ./mime, a separate
 * `mimeExtension` entry point of the same package).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { PathExt } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { installFallback } from './fallback';
import {
  decideBatch,
  fetchHistory,
  fetchMemory,
  fetchRecord,
  fetchReview,
  IMemoryEntry,
  IMemoryListing
} from './api';
import { memoryIcon } from './icon';
import { MemoryPanel, PANEL_ID } from './panel';
import { RecordViewer, viewerId } from './viewer';

export const COMMAND_SHOW = 'ipymemory:show-panel';

const panelPlugin: JupyterFrontEndPlugin<void> = {
  id: '@ipymemory/labextension:panel',
  description: 'A side panel listing the .memory/ set of the notebook in focus and deciding its pending batches.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    const panel = new MemoryPanel({
      currentDirectory: () => {
        const notebook = tracker.currentWidget;
        return notebook ? PathExt.dirname(notebook.context.localPath) : null;
      },
      fetch: directory => fetchMemory(directory, app.serviceManager.serverSettings),
      openRecord: (entry, listing, user) => void openRecord(app, entry, listing, user),
      fetchHistory: directory => fetchHistory(directory, app.serviceManager.serverSettings),
      fetchReview: (directory, batchId) =>
        fetchReview(directory, batchId, app.serviceManager.serverSettings),
      decide: (directory, batchId, action, decision) =>
        decideBatch(directory, batchId, action, decision, app.serviceManager.serverSettings)
    });
    panel.title.icon = memoryIcon;
    // Labelled, not a bare icon (the sidebar shows the label next to the icon).
    panel.title.caption = 'Memory: the .memory/ set of the notebook in focus';
    panel.title.label = 'Memory';
    app.shell.add(panel, 'right', { rank: 900 });

    // The notebook in focus decides the directory; renames are picked up by the next poll.
    tracker.currentChanged.connect(() => {
      if (panel.isVisible) {
        void panel.refresh();
      }
    });

    app.commands.addCommand(COMMAND_SHOW, {
      label: 'Show Memory Panel',
      caption: 'Show the .memory/ set of the notebook in focus',
      icon: memoryIcon,
      execute: () => {
        app.shell.activateById(PANEL_ID);
      }
    });
  }
};

/**
 * Open a record: as a file when the server serves hidden files (".memory/" is hidden),
 * otherwise (and always for the user scope's) in a read-only view fed by the endpoint.
 */
async function openRecord(
  app: JupyterFrontEnd,
  entry: IMemoryEntry,
  listing: IMemoryListing,
  user: boolean
): Promise<void> {
  // A user-scope record lives outside the server root: always the read-only view.
  if (listing.allowHidden && !user) {
    await app.commands.execute('docmanager:open', { path: entry.path });
    return;
  }
  const path = user ? `${listing.user?.directory ?? '~'}/${entry.file}` : entry.path;
  const id = viewerId(path);
  let viewer: RecordViewer | undefined;
  for (const widget of app.shell.widgets('main')) {
    if (widget.id === id && widget instanceof RecordViewer) {
      viewer = widget;
    }
  }
  if (!viewer) {
    viewer = new RecordViewer(path, entry.name);
    app.shell.add(viewer, 'main');
  }
  app.shell.activateById(id);
  viewer.showReply(
    await fetchRecord(
      listing.directory,
      entry.file,
      app.serviceManager.serverSettings,
      user ? 'user' : 'project'
    )
  );
}

/**
 * Saved ipymemory widgets show their static view when the widget model is gone
 * (see ./fallback): the global registry and each notebook's own copy of it.
 */
const fallbackPlugin: JupyterFrontEndPlugin<void> = {
  id: '@ipymemory/labextension:widget-fallback',
  description: 'Shows the saved static view of an ipymemory widget whose model is gone.',
  autoStart: true,
  requires: [IRenderMimeRegistry, INotebookTracker],
  activate: (app: JupyterFrontEnd, registry: IRenderMimeRegistry, tracker: INotebookTracker): void => {
    installFallback(registry);
    // ipywidgets may register its factory after this plugin activates.
    void app.restored.then(() => installFallback(registry));
    tracker.forEach(panel => installFallback(panel.content.rendermime));
    tracker.widgetAdded.connect((_sender, panel) => installFallback(panel.content.rendermime));
  }
};

export default [panelPlugin, fallbackPlugin];
