/**
 * The import-graph check behind `npm run lint:cycles` (dependency-cruiser). It reads imports the
 * way TypeScript emits them: an `import type` (or an import of types only) is not a load-time
 * edge, every other import is.
 */
/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-value-cycle",
      severity: "error",
      comment: "A value-level import cycle makes load order decide which module sees the other half-initialised. " +
        "An internal/ body imports only types from its public module; move shared values into their own module.",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] }, dependencyTypesNot: ["type-only"] }
    },
    {
      name: "no-foreign-internal",
      severity: "error",
      comment: "A package's internal/ folder is closed: import the public module instead.",
      from: { path: "^packages/([^/]+)/" },
      to: { path: "^packages/([^/]+)/src/internal/", pathNot: "^packages/$1/" }
    },
    {
      name: "core-imports-effect-only",
      severity: "error",
      comment: "@engram/core holds schemas, pure functions and service interfaces: effect only (ARCHITECTURE.md), " +
        "@noble/hashes behind core's Sha256 module (decision 0045), snowball-stemmers behind the " +
        "tokenizer's internal/stemming module (decision 0049), gpt-tokenizer behind the token estimator's " +
        "internal/bpe module, imported dynamically (decision 0070), and unhomoglyph (Unicode's confusables table) " +
        "behind the poisoning screen's internal/confusables module (decision 0131), and chrono-node (an English " +
        "date parser) behind StatedTime's internal/statedTime module (decision 0176).",
      from: { path: "^packages/core/src/" },
      to: {
        pathNot:
          "^(packages/core/src/|node_modules/effect/)|^node_modules/(@noble/hashes|snowball-stemmers|gpt-tokenizer|unhomoglyph|chrono-node)/"
      }
    },
    {
      name: "migrate-imports-core-only",
      severity: "error",
      comment: "@engram/migrate copies between any two backends through core's interfaces: core and effect only, " +
        "so a store package can depend on it without pulling in another backend (decision 0043).",
      from: { path: "^packages/migrate/src/" },
      to: { pathNot: "^(packages/migrate/src/|packages/core/src/|node_modules/effect/)" }
    },
    {
      name: "store-sql-imports-core-only",
      severity: "error",
      comment: "@engram/store-sql is the floor the SQL stores share (decision 0162): core, effect and @effect/sql's " +
        "client interface only, no driver and no backend, so standing on it pulls in no other store.",
      from: { path: "^packages/store-sql/src/" },
      to: { pathNot: "^(packages/store-sql/src/|packages/core/src/|node_modules/effect/|node_modules/@effect/sql/)" }
    },
    {
      name: "stores-import-core-store-sql-and-their-driver (store-sqlite)",
      severity: "error",
      comment: "A SQL store depends on core, the SQL floor (@engram/store-sql) and its own driver: never on " +
        "@engram/migrate or another backend (decisions 0043, 0162).",
      from: { path: "^packages/store-sqlite/src/" },
      to: {
        pathNot: "^(packages/store-sqlite/src/|packages/core/src/|packages/store-sql/src/|node_modules/effect/|" +
          "node_modules/@effect/(sql|experimental)/|node_modules/(@effect/sql-sqlite-node|sqlite-vec)/)",
        dependencyTypesNot: ["core"]
      }
    },
    {
      name: "stores-import-core-store-sql-and-their-driver (store-pg)",
      severity: "error",
      comment: "A SQL store depends on core, the SQL floor (@engram/store-sql) and its own driver: never on " +
        "@engram/migrate or another backend (decisions 0043, 0162).",
      from: { path: "^packages/store-pg/src/" },
      to: {
        pathNot: "^(packages/store-pg/src/|packages/core/src/|packages/store-sql/src/|node_modules/effect/|" +
          "node_modules/@effect/(sql|experimental)/|node_modules/(@effect/sql-pg)/)",
        dependencyTypesNot: ["core"]
      }
    },
    {
      name: "console-imports-types-only",
      severity: "error",
      comment: "The console (packages/server/src/console) is browser code, bundled on its own: it imports its own " +
        "modules, and from anywhere else (the API's schemas, core, runtime) only types, which leave nothing in the " +
        "bundle (decision 0160).",
      from: { path: "^packages/server/src/console/" },
      to: { pathNot: "^packages/server/src/console/", dependencyTypesNot: ["type-only"] }
    },
    {
      name: "nothing-imports-the-console",
      severity: "error",
      comment: "The console's modules run in the browser: the server serves their bundle and imports none of them.",
      from: { pathNot: "^packages/server/src/console/" },
      to: { path: "^packages/server/src/console/" }
    },
    {
      name: "embedder-local-imports-core-and-its-encoder",
      severity: "error",
      comment: "@engram/embedder-local is an Embeddings provider: core's interfaces, effect, @effect/ai's EmbeddingModel " +
        "and the encoder's packages (@energetic-ai/*), nothing of the runtime or a store (decision 0152).",
      from: { path: "^packages/embedder-local/src/" },
      to: {
        pathNot: "^(packages/embedder-local/src/|packages/core/src/|node_modules/effect/|node_modules/@effect/ai/)|" +
          "^node_modules/@energetic-ai/"
      }
    },
    {
      name: "encoder-only-through-embedder-local",
      severity: "error",
      comment: "TensorFlow.js and the encoder's weights load only in @engram/embedder-local (decision 0152): " +
        "nothing else may pull 28 MB into a process.",
      from: { pathNot: "^packages/embedder-local/src/" },
      to: { path: "^node_modules/@energetic-ai/" }
    },
    {
      name: "sha256-only-through-core",
      severity: "error",
      comment: "One SHA-256: @noble/hashes is imported by core's Sha256 module and nothing else (decision 0045).",
      from: { pathNot: "^packages/core/src/Sha256\\.ts$" },
      to: { path: "^node_modules/@noble/hashes/" }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^packages/[^/]+/dist/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      conditionNames: ["engram-source", "import", "types", "default"],
      exportsFields: ["exports"],
      extensions: [".ts", ".js"]
    }
  }
}
