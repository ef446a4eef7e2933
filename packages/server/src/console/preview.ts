/**
 * The projection preview: what the projection would add to the next model call for a query, with
 * its budget per section — the projection a native turn of the server's agent gets, byte for
 * byte. Nothing is recorded.
 */
import { api } from "./client.js"
import { el, form } from "./dom.js"
import type { Go } from "./router.js"
import { budgetChart, errorBox, scopeField, scopes } from "./widgets.js"

/** `#/preview?q=&scope=`: the projection for a query and its budget chart; nothing is recorded. */
export const previewView = async (main: HTMLElement, params: URLSearchParams, go: Go): Promise<void> => {
  const q = params.get("q") || ""
  const scope = params.get("scope") || scopes()[0]!
  const query = form(
    { class: "inline" },
    (data) => go("#/preview?" + new URLSearchParams({ q: String(data.get("q")), scope: String(data.get("scope")) })),
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
    const { projection } = await api.projection(new URLSearchParams({ q, scope }))
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
