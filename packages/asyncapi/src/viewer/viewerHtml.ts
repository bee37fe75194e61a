import type { AsyncApiDocument } from "../document.js";
import { htmlText, jsonForScript, scriptText, styleText } from "./escape.js";
import { viewerAssets } from "./viewerAssets.js";

export interface ViewerOptions {
  /** The page's title (default: the document's title and version). */
  readonly title?: string;
}

/**
 * One self-contained HTML page showing the document with the AsyncAPI React component: its
 * standalone bundle and CSS are inlined from the installed @asyncapi/react-component, and the
 * document rides in a JSON script element, so the page needs no network and no server but the one
 * that hands it out (or none: it works from a file).
 */
export function asyncapiViewerHtml(doc: AsyncApiDocument, options: ViewerOptions = {}): string {
  const { script, css } = viewerAssets();
  const title = options.title ?? `${doc.info.title} ${doc.info.version} · AsyncAPI`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${htmlText(title)}</title>
<style>${styleText(css)}</style>
</head>
<body>
<div id="asyncapi"></div>
<script id="asyncapi-document" type="application/json">${jsonForScript(doc)}</script>
<script>${scriptText(script)}</script>
<script>
AsyncApiStandalone.render(
  {
    schema: JSON.parse(document.getElementById("asyncapi-document").textContent),
    config: { show: { sidebar: true } },
  },
  document.getElementById("asyncapi"),
);
</script>
</body>
</html>
`;
}
