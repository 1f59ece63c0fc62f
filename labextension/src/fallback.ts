/**
 * Saved ipymemory widgets render without their kernel.
 *
 * An ipymemory widget output carries the widget view AND our static view
 * (`application/vnd.ipymemory.v1+json`, text/html, text/plain). JupyterLab renders the
 * highest-ranked type only: the widget view. When its model is gone (the notebook was
 * reopened with a new kernel, or no kernel), ipywidgets' renderer shows "Error
 * displaying widget: model not found" and never falls back.
 *
 * So the widget-view factory is wrapped: each renderer it makes shows our static view
 * while the widget manager is not ready (no kernel: for good) and again when the widget
 * could not be shown; a live widget replaces it as before. The renderer object is
 * ipywidgets' own (only its `renderModel` is wrapped), so the widget manager still
 * finds it when it hands renderers their manager.
 */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel } from '@lumino/widgets';

import { element, MIME_TYPE, renderView } from './views';

export const WIDGET_MIME_TYPE = 'application/vnd.jupyter.widget-view+json';

const WRAPPED = Symbol('ipymemory-static-fallback');

type Factory = IRenderMime.IRendererFactory & { [WRAPPED]?: true };

/** The note above a static view shown in place of a widget. */
export const FALLBACK_NOTE =
  'Saved view: the live widget is not available (its kernel stopped or is not ready).';

function showStatic(renderer: IRenderMime.IRenderer, data: unknown, note: string): void {
  const box = element('div', 'jp-ipymemory-fallback');
  box.appendChild(element('div', 'jp-ipymemory-note jp-ipymemory-fallback-note', note));
  box.appendChild(renderView(data));
  renderer.node.replaceChildren(box);
  renderer.node.dataset.ipymemoryFallback = 'true';
}

/** Whether ipywidgets' renderer ended without a widget (an error text, no child). */
function widgetMissing(renderer: IRenderMime.IRenderer): boolean {
  const children = renderer instanceof Panel ? renderer.widgets.length : 0;
  return children === 0 && !renderer.isHidden && renderer.hasClass('jupyter-widgets');
}

function wrapRenderer(renderer: IRenderMime.IRenderer): IRenderMime.IRenderer {
  const original = renderer.renderModel.bind(renderer);
  renderer.renderModel = (model: IRenderMime.IMimeModel): Promise<void> => {
    const data = model.data[MIME_TYPE];
    const done = original(model);
    if (data === undefined) {
      return done;
    }
    // Until the manager answers: the saved view (a live widget replaces it).
    showStatic(renderer, data, FALLBACK_NOTE);
    return done.then(() => {
      if (widgetMissing(renderer)) {
        showStatic(renderer, data, FALLBACK_NOTE);
      } else {
        delete renderer.node.dataset.ipymemoryFallback;
      }
    });
  };
  return renderer;
}

function wrapFactory(factory: Factory): Factory {
  if (factory[WRAPPED]) {
    return factory;
  }
  return {
    ...factory,
    [WRAPPED]: true,
    createRenderer: options => wrapRenderer(factory.createRenderer(options))
  };
}

/**
 * Wrap the widget-view factory of `registry` now and whenever one is added later
 * (ipywidgets adds one per notebook once its kernel is ready).
 */
export function installFallback(registry: IRenderMimeRegistry): void {
  const current = registry.getFactory(WIDGET_MIME_TYPE) as Factory | undefined;
  if (current && !current[WRAPPED]) {
    registry.addFactory(wrapFactory(current), registry.getRank(WIDGET_MIME_TYPE));
  }
  const marked = registry as IRenderMimeRegistry & { [WRAPPED]?: true };
  if (marked[WRAPPED]) {
    return;
  }
  marked[WRAPPED] = true;
  const addFactory = registry.addFactory.bind(registry);
  registry.addFactory = (factory: IRenderMime.IRendererFactory, rank?: number): void => {
    const wrap = factory.mimeTypes.includes(WIDGET_MIME_TYPE);
    addFactory(wrap ? wrapFactory(factory) : factory, rank);
  };
}
