// The layers of docs/architecture.md, enforced: a file may import only from its own layer and the layers
// below it. `npm run lint` fails on a wrong-direction import (test/unit/architecture.test.ts proves it).
import boundaries from "eslint-plugin-boundaries";

/** Bottom to top. Each layer may import itself and what `allow` lists. */
const LAYERS = [
  // Vocabularies and response types shared with the web client: imports nothing of ours.
  { type: "shared", pattern: "src/shared", allow: [] },
  // Pure algorithms and their data types.
  { type: "engine", pattern: "src/engine", allow: ["shared"] },
  // Rules and records; no storage.
  { type: "domain", pattern: "src/domain", allow: ["engine", "shared"] },
  // Use cases and the ports they own (src/app/ports).
  { type: "app", pattern: "src/app", allow: ["domain", "engine", "shared"] },
  // Adapters implementing the ports.
  { type: "adapter", pattern: ["src/store", "src/queue"], allow: ["app", "domain", "engine", "shared"] },
  // Settings read from the environment (used by the translators and the composition root).
  { type: "config", pattern: "src/config", allow: ["domain", "shared"] },
  // Translators: HTTP, job messages, command line.
  { type: "api", pattern: "src/api", allow: ["app", "domain", "engine", "shared", "config"] },
  { type: "jobs", pattern: "src/jobs", allow: ["app", "domain", "engine", "shared"] },
  // The composition root: builds the adapters and hands them to the use cases.
  {
    type: "main",
    pattern: "src/main",
    allow: ["api", "jobs", "app", "adapter", "domain", "engine", "shared", "config"],
  },
  {
    type: "cli",
    pattern: "src/cli",
    allow: ["api", "jobs", "main", "app", "adapter", "domain", "engine", "shared", "config"],
  },
  // The browser bundle: only the shared vocabulary of the server.
  { type: "web-client", pattern: "src/web/client", allow: ["shared"] },
];

/** Patterns match whole paths from the repository root: every element is a folder and its files. */
const element = ({ type, pattern }) => ({
  type,
  pattern: [pattern].flat().map((p) => `${p}/**`),
  partialMatch: false,
});

const layerRule = {
  "boundaries/dependencies": [
    "error",
    {
      default: "disallow",
      message: "{{from.type}} must not import {{to.type}} (layers: docs/architecture.md)",
      policies: LAYERS.map(({ type, allow }) => ({
        from: { element: { type } },
        allow: { to: { element: { type: [type, ...allow] } } },
      })),
    },
  ],
};

export default [
  {
    files: ["src/**/*.ts"],
    plugins: { boundaries },
    settings: {
      "boundaries/elements": LAYERS.map(element),
      "boundaries/include": ["src/**/*.ts"],
      "import/resolver": {
        typescript: {
          project: ["tsconfig.check.json", "src/web/client/tsconfig.json"],
          noWarnOnMultipleProjects: true,
        },
      },
    },
    rules: {
      ...layerRule,
      // The boundaries rule does not see `import("…").T` type expressions: forbid them, so every
      // dependency is an import statement the layer rule checks.
      "no-restricted-syntax": [
        "error",
        { selector: "TSImportType", message: "use an import statement (the layer rule checks those)" },
      ],
    },
  },
];
