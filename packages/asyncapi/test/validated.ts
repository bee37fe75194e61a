import { type AsyncAPIDocumentInterface, DiagnosticSeverity, Parser } from "@asyncapi/parser";

const parser = new Parser();

/** What @asyncapi/parser finds wrong in a document: its diagnostics of error severity. */
export async function parserErrors(text: string): Promise<string[]> {
  const { diagnostics } = await parser.parse(text);
  return diagnostics
    .filter((d) => d.severity === DiagnosticSeverity.Error)
    .map((d) => `${d.code} at ${d.path.join(".")}: ${d.message}`);
}

/**
 * The document as @asyncapi/parser reads it, after checking the parser found no error in it: the
 * real validator of the AsyncAPI 3.1.0 schema and of every binding's schema. Its model resolves
 * every `$ref`, so a test reading through it also proves the references land.
 */
export async function validated(text: string): Promise<AsyncAPIDocumentInterface> {
  const { document, diagnostics } = await parser.parse(text);
  const errors = diagnostics
    .filter((d) => d.severity === DiagnosticSeverity.Error)
    .map((d) => `${d.code} at ${d.path.join(".")}: ${d.message}`);
  if (errors.length > 0)
    throw new Error(`@asyncapi/parser refused the document:\n${errors.join("\n")}`);
  if (document === undefined) throw new Error("the parser gave no document and no error");
  return document;
}
