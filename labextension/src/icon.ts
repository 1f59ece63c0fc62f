import { LabIcon } from '@jupyterlab/ui-components';

// A closed notebook with a bookmark: "what the agent remembers".
const svgstr = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M6 2h11a2 2 0 0 1 2 2v16a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm0 2v16h11V4h-3v7l-2.5-1.5L9 11V4H6z"/>
</svg>`;

export const memoryIcon = new LabIcon({ name: 'ipymemory:memory', svgstr });
