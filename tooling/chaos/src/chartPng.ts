// The chart as a PNG: the SVG laid out and drawn by headless Chromium (the same browser the other
// tests that look at pages use), so the picture is what a browser shows, not a renderer of our own.
import { launchHeadless } from "@ruststream/tooling-browser";

/** Draws `svg` (an `<svg width height>` document) and writes it to `path` as a PNG. */
export async function writeChartPng(svg: string, path: string): Promise<void> {
  const size = /<svg[^>]*width="(\d+)"[^>]*height="(\d+)"/.exec(svg);
  if (size === null) throw new Error("the chart's SVG has no width and height");
  const browser = await launchHeadless("the chaos chart");
  try {
    const page = await browser.newPage({
      viewport: { width: Number(size[1]), height: Number(size[2]) },
    });
    // A block, so no line box adds its descender below the picture.
    await page.setContent(
      `<!doctype html><style>body{margin:0}svg{display:block}</style><body>${svg}</body>`,
    );
    await page.screenshot({ path, fullPage: true });
  } finally {
    await browser.close();
  }
}
