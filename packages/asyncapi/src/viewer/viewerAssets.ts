import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** The viewer's script and style sheet, as @asyncapi/react-component ships them. */
export interface ViewerAssets {
  /** The standalone bundle (React and the AsyncAPI parser inside): defines `AsyncApiStandalone`. */
  readonly script: string;
  readonly css: string;
}

const component = "@asyncapi/react-component";
let cached: ViewerAssets | undefined;

/**
 * Reads the standalone bundle and its CSS from the installed package, once per process: the page
 * carries them inline, so it loads nothing from a CDN or anywhere else.
 */
export function viewerAssets(): ViewerAssets {
  if (cached !== undefined) return cached;
  const require = createRequire(import.meta.url);
  let script: string;
  let css: string;
  try {
    script = readFileSync(require.resolve(`${component}/browser/standalone/index.js`), "utf8");
    css = readFileSync(require.resolve(`${component}/styles/default.min.css`), "utf8");
  } catch (error) {
    throw new Error(
      `the AsyncAPI viewer needs ${component}'s standalone bundle and styles, and they could not be read (${(error as Error).message}): install ${component} beside @ruststream/asyncapi (it is a dependency of it, so reinstalling should bring it)`,
      { cause: error },
    );
  }
  cached = { script, css };
  return cached;
}
