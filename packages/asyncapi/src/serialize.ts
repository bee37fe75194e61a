import { stringify } from "yaml";
import type { AsyncApiDocument } from "./document.js";

/** The document as JSON, indented for people and diffs. */
export function asyncapiJson(doc: AsyncApiDocument): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * The document as YAML. Repeated objects stay written out in full (no anchors and aliases), so
 * the YAML says what the JSON says to a reader that knows no aliases.
 */
export function asyncapiYaml(doc: AsyncApiDocument): string {
  return stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 });
}
