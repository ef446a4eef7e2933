// ESLint runs one rule: formatting by dprint with the Effect monorepo's settings (2 spaces,
// width 120, no semicolons, double quotes). `npm run lint` checks, `npm run lint:fix` rewrites.
// Import cycles are checked by dependency-cruiser (`npm run lint:cycles`, decision 0031).
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default [
  { ignores: ["**/dist/**", "**/node_modules/**", "**/.engram/**", "coverage/**"] },
  {
    files: ["**/*.ts", "**/*.mts"],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: "module" },
    plugins: { "@effect": effect },
    rules: {
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            lineWidth: 120,
            semiColons: "asi",
            quoteStyle: "alwaysDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force"
          }
        }
      ]
    }
  }
]
