/**
 * Text safe inside a `<script>` element: its content ends at the first `</script`, whatever the
 * JavaScript around it means, so every one is written `<\/script`, which means the same in a
 * string, a template, a regular expression and a comment.
 */
export function scriptText(code: string): string {
  return code.replace(/<\/(script)/gi, "<\\/$1");
}

/** Likewise for a `<style>` element; `\/` is an escaped `/` in CSS. */
export function styleText(css: string): string {
  return css.replace(/<\/(style)/gi, "<\\/$1");
}

/**
 * A value as JSON that cannot end the `<script type="application/json">` holding it: every `<`,
 * `>` and `&` is a `\u` escape, which `JSON.parse` reads back as the same character, and so are
 * the two line separators older JavaScript refuses in strings.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Text for an HTML element or attribute. */
export function htmlText(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}
