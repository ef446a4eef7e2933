// ESLint runs formatting by dprint with the Effect monorepo's settings (2 spaces, width 120, no
// semicolons, double quotes) and, in library code, one rule for reading the time.
// `npm run lint` checks, `npm run lint:fix` rewrites.
// Import cycles are checked by dependency-cruiser (`npm run lint:cycles`, decision 0031).
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

const noNewDate = {
  selector: "NewExpression[callee.name='Date'][arguments.length=0]",
  message: "Read the time from Effect's Clock: DateTime.now (or DateTime.toDate of it)."
}

// Requirements in the type (decision 0164): what changes a result is required by the layer or
// passed as an argument, never looked up when present.
const noServiceOption = {
  selector: "CallExpression[callee.object.name='Effect'][callee.property.name='serviceOption']",
  message: "Require the service in the type (or take it as an argument): an optional look-up hides a " +
    "requirement that changes the result (decision 0164)."
}

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
      "no-restricted-syntax": ["error", noNewDate, noServiceOption]
    }
  },
  {
    // The one look-up kept (decision 0164): whether a statement runs inside a transaction, read as
    // Effect's own SQL clients read it; it changes no result (SQLite: how a transaction begins and
    // retries; PostgreSQL: whether an injection row may commit without waiting, decision 0227).
    files: ["packages/store-sql/src/SqlTransaction.ts"],
    rules: { "no-restricted-syntax": ["error", noNewDate] }
  }
]
