/**
 * The projection preview: what the projection would add to the next model call for a query, with
 * its budget per section — the projection a native turn of the server's agent gets, byte for
 * byte, as of a date when one is given. Nothing is recorded.
 */
import { api } from "./client.js"
import { el, form } from "./dom.js"
import type { Go } from "./router.js"
import { budgetChart, errorBox, scopeField, scopes } from "./widgets.js"

/** A `YYYY-MM-DD` date as the instant the projection reads as of: that day's start, UTC. */
const asOfInstant = (date: string): string => date + "T00:00:00.000Z"

/**
 * `#/preview?q=&scope=&asOf=`: the projection for a query and its budget chart; nothing is
 * recorded. With `asOf` (a date), the values valid on that day (decision 0175).
 */
export const previewView = async (main: HTMLElement, params: URLSearchParams, go: Go): Promise<void> => {
  const q = params.get("q") || ""
  const scope = params.get("scope") || scopes()[0]!
  const asOf = params.get("asOf") || ""
  const query = form(
    { class: "inline" },
    (data) => {
      const next = new URLSearchParams({ q: String(data.get("q")), scope: String(data.get("scope")) })
      if (data.get("asOf")) next.set("asOf", String(data.get("asOf")))
      go("#/preview?" + next)
    },
    el(
      "label",
      {},
      "query",
      el("input", {
        name: "q",
        "data-testid": "query",
        value: q,
        placeholder: "what the operator asks…",
        required: true
      })
    ),
    scopeField(scope, "scope", false),
    el("label", {}, "as of", el("input", { name: "asOf", type: "date", "data-testid": "as-of", value: asOf })),
    el("button", { class: "primary", type: "submit", "data-testid": "inspect", text: "Preview" })
  )
  main.append(
    el("h1", { tabindex: "-1", text: "Projection preview" }),
    el("p", {
      class: "muted",
      text: "What the projection would add to the next model call for this query (nothing is recorded)."
    }),
    query
  )
  if (!q) return
  // Composing takes a moment on a large store: say so at once rather than show a blank page.
  const loading = el(
    "p",
    { class: "muted", role: "status", "data-testid": "loading" },
    el("progress", { "aria-label": "composing the projection" }),
    " Composing the projection for “" + q + "”…"
  )
  main.append(loading)
  try {
    const { projection } = await api.projection(
      new URLSearchParams({ q, scope, ...(asOf ? { asOf: asOfInstant(asOf) } : {}) })
    )
    loading.remove()
    main.append(el(
      "div",
      { "data-testid": "projection" },
      budgetChart(projection.sections, projection.budget),
      el("pre", { class: "prefix", "data-testid": "projection-text", text: projection.text || "(nothing projected)" })
    ))
  } catch (e) {
    loading.remove()
    main.append(errorBox(e))
  }
}
