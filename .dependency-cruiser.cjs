// The layering rules the package READMEs state, checked by `pnpm run check:layers` (dependency-cruiser
// over packages/ and examples/, src and tests). Each rule is a sentence of a README: change both
// together. Workspace packages resolve to their source (the `@ruststream/source` condition), as in
// the tests and the typecheck, so an import of `@ruststream/file` is seen as one of packages/file.

// The broker packages, and the template a new one is copied from: as a file of the workspace, and
// as the name of a package an import could not resolve (one not among the importer's dependencies).
const brokers = "(file|redis|kafka|pulsar|postgres|broker-template)";
const broker = `^(?:packages|examples)/${brokers}/`;
const brokerName = `^@ruststream/(?:example-)?${brokers}(?:/|$)`;

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "core-imports-nothing-outside-itself",
      comment:
        "@ruststream/core has no runtime dependency (core/README.md): its src imports only itself and Node's own modules. The msgpack and cbor entries are the two exceptions, each an opt-in subpath whose library is an optional peer (the next two rules).",
      severity: "error",
      from: {
        path: "^packages/core/src/",
        pathNot: "^packages/core/src/codec/(?:msgpack|cbor)\\.ts$",
      },
      to: { pathNot: "^packages/core/src/", dependencyTypesNot: ["core", "type-only"] },
    },
    {
      name: "core-msgpack-entry-imports-only-its-peer",
      comment: "@ruststream/core/msgpack imports @msgpack/msgpack (an optional peer) and core.",
      severity: "error",
      from: { path: "^packages/core/src/codec/msgpack\\.ts$" },
      to: {
        pathNot: ["^packages/core/src/", "/node_modules/@msgpack/msgpack/"],
        dependencyTypesNot: ["core", "type-only"],
      },
    },
    {
      name: "core-cbor-entry-imports-only-its-peer",
      comment: "@ruststream/core/cbor imports cbor-x (an optional peer) and core.",
      severity: "error",
      from: { path: "^packages/core/src/codec/cbor\\.ts$" },
      to: {
        pathNot: ["^packages/core/src/", "/node_modules/cbor-x/"],
        dependencyTypesNot: ["core", "type-only"],
      },
    },
    {
      name: "core-imports-no-workspace-package",
      comment:
        "Every other package is written against @ruststream/core; core imports none of them, not even a type.",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: {
        path: ["^(?:packages|examples|tooling|docs)/", "^@ruststream/"],
        pathNot: ["^packages/core/", "^@ruststream/core(?:/|$)"],
      },
    },
    {
      name: "broker-imports-no-other-broker",
      comment:
        "A broker package is written against @ruststream/core (and tested with @ruststream/testing): it never imports another broker package, in src or in its tests.",
      severity: "error",
      from: { path: broker },
      to: {
        path: [broker, brokerName],
        pathNot: ["^(?:packages|examples)/$1/", "^@ruststream/(?:example-)?$1(?:/|$)"],
      },
    },
    {
      name: "nothing-imports-broker-ts-back",
      comment:
        "In a broker package broker.ts imports the rest and only index.ts imports broker.ts (core's README, 'One layout for a broker package'): a mode or the publisher declares the host interface it needs instead.",
      severity: "error",
      from: { path: `${broker}src/`, pathNot: `${broker}src/index\\.ts$` },
      to: { path: "^(?:packages|examples)/$1/src/broker\\.ts$" },
    },
    {
      name: "file-wire-imports-only-names-above-it",
      comment:
        "In @ruststream/file, wire/ imports nothing above it but names.ts (file/README.md, layout).",
      severity: "error",
      from: { path: "^packages/file/src/wire/" },
      to: { path: "^packages/file/src/", pathNot: "^packages/file/src/(?:wire/|names\\.ts$)" },
    },
    {
      name: "testing-entry-imports-no-vitest",
      comment:
        "@ruststream/testing's main entry (TestApp) imports nothing from vitest, so it runs under any test runner and loads from CommonJS; only the conformance entry needs vitest (testing/README.md).",
      severity: "error",
      from: {
        path: "^packages/testing/src/",
        pathNot: "^packages/testing/src/(?:conformance/|conformance\\.ts$|conformanceEntry\\.ts$)",
      },
      to: { path: "/node_modules/(?:vitest|@vitest/[^/]+)/" },
    },
    {
      name: "no-cycle-in-src",
      comment:
        "Imports inside a package's src/ go one way: no cycle, type-only imports included (a cycle of types still ties the files together). A cycle through two packages' src is caught here too.",
      severity: "error",
      from: { path: "^(?:packages|examples)/[^/]+/src/" },
      to: { circular: true },
    },
    {
      name: "no-unresolved-import",
      comment:
        "An import this check cannot resolve is one it cannot judge (and one Node would not load). The bin scripts are the exception: they import the build (dist/), which the check does not need.",
      severity: "error",
      from: { pathNot: "^packages/[^/]+/bin/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Built output and a package's own node_modules links are not source.
    exclude: { path: "^(?:packages|examples)/[^/]+/(?:dist|node_modules)/" },
    // Type-only imports are seen (marked `type-only`): the cycle rule counts them.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["@ruststream/source", "import", "require", "node", "default"],
      mainFields: ["module", "main", "types"],
    },
  },
};
