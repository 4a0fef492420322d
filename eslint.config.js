import js from "@eslint/js";
import tseslint from "typescript-eslint";
import layers from "./eslint.layers.js";

export default tseslint.config(
  { ignores: ["dist/**", "var/**", "node_modules/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "off",
    },
  },
  {
    // Type-aware rules where the store and queue ports are used: a forgotten `await` on a port call fails lint.
    files: ["src/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "scripts/**/*.ts"],
    ignores: ["src/web/client/**"],
    languageOptions: {
      parserOptions: { project: "./tsconfig.check.json", tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          // node:test's test()/describe() return promises the runner itself awaits.
          allowForKnownSafeCalls: [
            {
              from: "package",
              package: "node:test",
              name: ["test", "describe", "it", "suite", "before", "after"],
            },
          ],
        },
      ],
      // An async callback where a plain one is expected (forEach, filter) loses its promise.
      "@typescript-eslint/no-misused-promises": [
        "error",
        { checksVoidReturn: { arguments: true, attributes: false } },
      ],
      "@typescript-eslint/await-thenable": "error",
    },
  },
  ...layers,
);
