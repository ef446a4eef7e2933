// ESLint runs formatting by dprint with the Effect monorepo's settings (2 spaces, width 120, no
// semicolons, double quotes) and, in library code, one rule for reading the time.
// `npm run lint` checks, `npm run lint:fix` rewrites.
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
  },
  {
    // One clock: library code reads the time from Effect's Clock (`DateTime.now`, or
    // `Clock.currentTimeMillis` for a duration), so TestClock controls it.
    files: ["packages/*/src/**/*.ts"],
    // The console runs in the browser, which has no Effect Clock: it reads the page's clock.
    ignores: ["packages/server/src/console/**"],
    rules: {
      "no-restricted-properties": ["error", {
        object: "Date",
        property: "now",
        message: "Read the time from Effect's Clock: DateTime.now, or Clock.currentTimeMillis for a duration."
      }],
      "no-restricted-syntax": ["error", {
        selector: "NewExpression[callee.name='Date'][arguments.length=0]",
        message: "Read the time from Effect's Clock: DateTime.now (or DateTime.toDate of it)."
      }]
    }
  }
]
