/**
 * The MIME renderer extension: renders ipymemory view outputs from the notebook
 * document itself, so saved notebooks show them without a kernel.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { MIME_TYPE, renderView } from './views';

export class RenderedMemoryView extends Widget implements IRenderMime.IRenderer {
  constructor() {
    super();
    this.addClass('jp-ipymemory-rendered');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.node.replaceChildren(renderView(model.data[MIME_TYPE]));
    return Promise.resolve();
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  // Safe: the renderer never interprets data as HTML, so untrusted notebooks render usefully.
  safe: true,
  mimeTypes: [MIME_TYPE],
  // Ahead of text/html (the views also ship an HTML fallback for other frontends).
  defaultRank: 10,
  createRenderer: () => new RenderedMemoryView()
};

const extension: IRenderMime.IExtension = {
  id: '@ipymemory/labextension:mime',
  description: 'Renders ipymemory memory views (manifest, selection, batch, record, status).',
  rendererFactory,
  rank: 10,
  dataType: 'json'
};

export default extension;
