// The layering rules the package READMEs state, checked by `pnpm run check:layers` (dependency-cruiser
// over packages/, examples/ and tooling/, src and tests). Each rule is a sentence of a README: change
// both together. Workspace packages resolve to their source (the `@ruststream/source` condition), as in
// the tests and the typecheck, so an import of `@ruststream/file` is seen as one of packages/file.

// The broker packages, and the template a new one is copied from: as a file of the workspace, and
// as the name of a package an import could not resolve (one not among the importer's dependencies).
const brokers = "(file|redis|kafka|pulsar|rabbitmq|nats|postgres|broker-template)";
const broker = `^(?:packages|examples)/${brokers}/`;
const brokerName = `^@ruststream/(?:example-)?${brokers}(?:/|$)`;

// @ruststream/core's own layers (core/README.md, "Inside core"), from the bottom: the model (the files
// of src/ itself, and src/codec/), the broker contract and the bases (src/broker/), the memory broker
// (src/memory/) and the runtime (src/runtime/); the two entries, index.ts and brokerEntry.ts, stand
// above them all.
const coreEntry = "^packages/core/src/(?:index|brokerEntry)\\.ts$";
const coreModel = ["^packages/core/src/[^/]+\\.ts$", "^packages/core/src/codec/"];

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
      name: "core-model-imports-no-layer-above-it",
      comment:
        "Core's model (messages, headers, errors, marks, clock, deliveries, sources, subscriptions, publishers, capabilities, the Logger, codecs) imports nothing of the contract and bases, the memory broker, the runtime or the entries (core/README.md, 'Inside core').",
      severity: "error",
      from: { path: coreModel, pathNot: coreEntry },
      to: { path: ["^packages/core/src/(?:broker|memory|runtime)/", coreEntry] },
    },
    {
      name: "core-contract-and-bases-import-only-the-model",
      comment:
        "The broker contract and the shared bases (core/src/broker/) import only core's model: never the runtime, nor the memory broker built on them, nor an entry (core/README.md, 'Inside core').",
      severity: "error",
      from: { path: "^packages/core/src/broker/" },
      to: { path: ["^packages/core/src/(?:memory|runtime)/", coreEntry] },
    },
    {
      name: "core-memory-broker-imports-no-runtime",
      comment:
        "The memory broker is a broker like any other, built on the contract and the bases: it never imports the runtime, nor an entry (core/README.md, 'Inside core').",
      severity: "error",
      from: { path: "^packages/core/src/memory/" },
      to: { path: ["^packages/core/src/runtime/", coreEntry] },
    },
    {
      name: "core-runtime-imports-no-memory-broker",
      comment:
        "The runtime runs every broker through the contract alike: it never imports the memory broker, nor an entry (core/README.md, 'Inside core').",
      severity: "error",
      from: { path: "^packages/core/src/runtime/" },
      to: { path: ["^packages/core/src/memory/", coreEntry] },
    },
    {
      name: "published-src-imports-no-tooling",
      comment:
        "What is published never depends on the repository's tooling (README.md, 'Repository layout'): a package's or an example's src imports nothing of tooling/; their tests may (tooling/testkit is what they share).",
      severity: "error",
      from: { path: "^(?:packages|examples)/[^/]+/src/" },
      to: { path: ["^tooling/", "^@ruststream/tooling-"] },
    },
    {
      name: "broker-imports-no-other-broker",
      comment:
        "A broker package is written against @ruststream/core (and tested with @ruststream/testing): it never imports another broker package, in src or in its tests. One exception: the PostgreSQL outbox's live tests (packages/postgres/test/outbox/), whose relay publishes to another broker, through that broker's package.",
      severity: "error",
      from: { path: broker, pathNot: "^packages/postgres/test/outbox/" },
      to: {
        path: [broker, brokerName],
        pathNot: ["^(?:packages|examples)/$1/", "^@ruststream/(?:example-)?$1(?:/|$)"],
      },
    },
    {
      name: "nestjs-imports-no-broker",
      comment:
        "@ruststream/nestjs serves a Nest application's handlers from any broker through @ruststream/core alone (nestjs/README.md): its src imports no broker package; its tests do, to run a real application on each.",
      severity: "error",
      from: { path: "^packages/nestjs/src/" },
      to: { path: [broker, brokerName] },
    },
    {
      name: "nothing-imports-the-broker-or-its-connection-back",
      comment:
        "In a broker package broker.ts imports connection.ts, connection.ts imports the rest, and nothing else imports either but index.ts (core's README, 'One layout for a broker package'): a mode, the publisher or the reply inbox declares the host interface it needs instead.",
      severity: "error",
      from: { path: `${broker}src/`, pathNot: `${broker}src/(?:index|broker)\\.ts$` },
      to: { path: "^(?:packages|examples)/$1/src/(?:broker|connection)\\.ts$" },
    },
    {
      name: "core-memory-imports-its-broker-and-connection-back-nowhere",
      comment:
        "The memory broker keeps the same layout (core's README, 'One layout for a broker package'): memoryBroker.ts imports memoryConnection.ts, which imports the rest of memory/; nothing in memory/ imports either back.",
      severity: "error",
      from: {
        path: "^packages/core/src/memory/",
        pathNot: "^packages/core/src/memory/memoryBroker\\.ts$",
      },
      to: { path: "^packages/core/src/memory/memory(?:Broker|Connection)\\.ts$" },
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
        "Imports inside a package's src/ (a tooling package's too) go one way: no cycle, type-only imports included (a cycle of types still ties the files together). A cycle through two packages' src is caught here too.",
      severity: "error",
      from: { path: "^(?:packages|examples|tooling)/[^/]+/src/" },
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
    // Built output and a package's own node_modules links are not source; nor are the templates
    // `@ruststream/create` builds from examples/ (git ignores them; they are checked as examples/).
    exclude: {
      path: [
        "^(?:packages|examples|tooling)/[^/]+/(?:dist|node_modules)/",
        "^packages/create/templates/",
      ],
    },
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
