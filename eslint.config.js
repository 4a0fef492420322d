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
  ...layers,
);
