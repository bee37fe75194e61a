import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { guideOrder } from "../src/pages.js";
import { extractSnippets, type Snippet } from "../src/snippets.js";

const run = promisify(execFile);
const docs = join(dirname(fileURLToPath(import.meta.url)), "..");
// Inside the workspace, so the snippets resolve @ruststream/* through docs/node_modules.
const dir = join(docs, ".cache", "snippets");

interface Written extends Snippet {
  readonly file: string;
  /** A block that imports vitest is a test file: vitest runs it; any other runs as a script. */
  readonly isTest: boolean;
}

function writeSnippets(): Written[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const written: Written[] = [];
  for (const name of guideOrder) {
    const page = `docs/guide/${name}`;
    for (const snippet of extractSnippets(page, readFileSync(join(docs, "guide", name), "utf8"))) {
      const isTest = /from "vitest"/.test(snippet.code);
      const file = join(
        dir,
        `${name.replace(/\.md$/, "")}-${snippet.line}${isTest ? ".test" : ""}.ts`,
      );
      // `export {}` keeps every block a module of its own, as a file of a service is.
      writeFileSync(file, `${snippet.code}export {};\n`);
      written.push({ ...snippet, file, isTest });
    }
  }
  // Exactly `tsc --strict --noEmit`, on the module settings a Node service uses.
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        lib: ["ES2023", "DOM"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        customConditions: ["@ruststream/source"],
        types: ["node"],
        skipLibCheck: true,
      },
      include: ["*.ts"],
    }),
  );
  writeFileSync(
    join(dir, "vitest.config.mjs"),
    `export default { resolve: { conditions: ["@ruststream/source"] }, ssr: { resolve: { conditions: ["@ruststream/source"] } }, test: { include: ["*.test.ts"] } };\n`,
  );
  return written;
}

const snippets = writeSnippets();
const runnable = snippets.filter((s) => s.noRun === undefined);
console.log(
  `docs snippets: ${snippets.length} TypeScript blocks compiled, ${runnable.length} of them run (${snippets.length - runnable.length} marked no-run)`,
);

/** `path(line,col): error ...` from tsc, told as the guide page and line the block came from. */
function where(output: string): string {
  return output.replace(/^(\S+?\.ts)\((\d+),(\d+)\)/gm, (whole, file: string, line: string) => {
    const snippet = snippets.find((s) => s.file.endsWith(file.replace(/^.*\//, "/")));
    return snippet === undefined
      ? whole
      : `${snippet.page}:${snippet.line + Number(line)} (block at line ${snippet.line})`;
  });
}

describe("the guides' TypeScript blocks", () => {
  test("the guides hold TypeScript blocks, and some of them run", () => {
    expect(snippets.length).toBeGreaterThan(10);
    expect(runnable.length).toBeGreaterThan(5);
  });

  test("every block type-checks under tsc --strict --noEmit", async () => {
    const tsc = join(docs, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], {
      cwd: dir,
    }).then(
      () => "",
      (error: { stdout?: string; stderr?: string }) =>
        `${error.stdout ?? ""}${error.stderr ?? ""}` || String(error),
    );
    expect(where(result), "tsc's errors, by guide page and line").toBe("");
  });

  test.each(
    runnable.map((s) => [`${s.page}:${s.line}`, s] as const),
  )("%s runs to its end", async (_name, snippet) => {
    // A fresh working folder per block, so the stream files a block writes start empty.
    const cwd = mkdtempSync(join(tmpdir(), "ruststream-docs-"));
    const args = snippet.isTest
      ? [
          join(docs, "node_modules", "vitest", "vitest.mjs"),
          "run",
          "--config",
          join(dir, "vitest.config.mjs"),
          "--root",
          dir,
          snippet.file,
        ]
      : [
          join(docs, "node_modules", "tsx", "dist", "cli.mjs"),
          "--conditions=@ruststream/source",
          snippet.file,
        ];
    try {
      await run(process.execPath, args, { cwd, timeout: 90_000 });
    } catch (error) {
      const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
      throw new Error(
        `${snippet.page}:${snippet.line} failed when run (mark it \`ts no-run: <reason>\` only if it cannot run without a broker server):\n${stderr}${stdout}`,
      );
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe("reading blocks", () => {
  test("a no-run marker carries its reason", () => {
    const [block] = extractSnippets("p.md", "```ts no-run: needs Redis\nlet a = 1;\n```\n");
    expect(block?.noRun).toBe("needs Redis");
    expect(block?.line).toBe(1);
  });

  test("a marker without a reason, an unknown marker and a `typescript` block are refused", () => {
    expect(() => extractSnippets("p.md", "```ts no-run\nx\n```\n")).toThrow(/give the reason/);
    expect(() => extractSnippets("p.md", "```ts skip\nx\n```\n")).toThrow(/p\.md:1/);
    expect(() => extractSnippets("p.md", "\n```typescript\nx\n```\n")).toThrow(/p\.md:2/);
  });

  test("other languages are not TypeScript blocks", () => {
    expect(extractSnippets("p.md", "```sh\nnpm test\n```\n")).toEqual([]);
  });
});
