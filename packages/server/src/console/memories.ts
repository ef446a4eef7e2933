/**
 * The memories views: the sortable, paged list with totals; one record with its history chain,
 * placements, explain verdicts and the write actions (confirm, reject, edit as a supersede,
 * expire, forget with an in-page confirmation); the create form (operator source) and the
 * tombstones.
 */
import type * as Answers from "./answers.js"
import { api, messageOf, writable } from "./client.js"
import { type Child, el, form, link, nodes } from "./dom.js"
import { explainPanel } from "./explain.js"
import type { Go } from "./router.js"
import {
  announce,
  type Column,
  errorBox,
  idText,
  KINDS,
  memoryHref,
  options,
  orShow,
  pill,
  placementText,
  scopeField,
  scopes,
  shortId,
  statePills,
  table,
  trustText
} from "./widgets.js"

/** The lifecycle states, kinds and delivery policies the forms offer, typed against the API's literals. */
const STATES: ReadonlyArray<Answers.Lifecycle> = [
  "pending",
  "confirmed",
  "rejected",
  "superseded",
  "expired",
  "invalidated"
]
const DELIVERY: ReadonlyArray<Answers.DeliveryPolicy> = ["retrieved", "always", "on_demand"]
const SORTS: ReadonlyArray<readonly [Answers.BrowseSort, string]> = [
  ["created", "created"],
  ["id", "id"],
  ["content", "content"],
  ["label", "label"],
  ["kind", "kind"],
  ["source", "source"],
  ["trust", "trust"],
  ["state", "state"]
]

/** A form field's text ("" when it is absent). */
const field = (data: FormData, name: string): string => String(data.get(name) ?? "")

/** The list: filters and sort live in the address, so a view can be linked and goes back. */
export const memoriesView = async (main: HTMLElement, params: URLSearchParams, go: Go): Promise<void> => {
  const q = params.get("q") || ""
  const sort = params.get("sort") || (q ? "score" : "created")
  const order = params.get("order") || (sort === "created" || sort === "score" ? "desc" : "asc")
  const offset = Number(params.get("offset") || 0)
  const limit = Number(params.get("limit") || 25)
  const navigate = (changes: Readonly<Record<string, string | number | null>>) => {
    const next = new URLSearchParams(params)
    for (const [k, v] of Object.entries(changes)) {
      if (v === "" || v === null || v === undefined) next.delete(k)
      else next.set(k, String(v))
    }
    go("#/memories?" + next)
  }
  const filters = form(
    { class: "inline", role: "search", "data-testid": "filters" },
    (data) => {
      navigate({
        q: field(data, "q").trim(),
        scope: field(data, "scope"),
        kind: field(data, "kind"),
        state: field(data, "state"),
        flagged: data.get("flagged") ? "true" : "",
        offset: 0,
        sort: "",
        order: ""
      })
    },
    el(
      "label",
      {},
      "search",
      el("input", { name: "q", type: "search", "data-testid": "search", value: q, placeholder: "words…" })
    ),
    scopeField(params.get("scope")),
    el("label", {}, "kind", el("select", { name: "kind" }, options(KINDS, params.get("kind"), "any"))),
    el(
      "label",
      {},
      "state",
      el("select", { name: "state", "data-testid": "state" }, options(STATES, params.get("state"), "any"))
    ),
    el(
      "label",
      { class: "check" },
      el("input", { type: "checkbox", name: "flagged", value: "true", checked: params.get("flagged") === "true" }),
      "flagged only"
    ),
    el("button", { class: "primary", type: "submit", "data-testid": "apply", text: "Apply" }),
    writable() ? link("#/new", "New memory", { "data-testid": "new-memory" }) : null
  )
  const results = el("div", { "data-testid": "results" }, el("p", { class: "muted", text: "Loading…" }))
  main.append(el("h1", { tabindex: "-1", text: "Memories" }), filters, results)

  const query = new URLSearchParams({ sort, order, offset: String(offset), limit: String(limit) })
  for (const key of ["q", "scope", "kind", "state", "flagged"]) {
    const value = params.get(key)
    if (value) query.set(key, value)
  }
  try {
    const page = await api.browse(query)
    const sortHeader = ([key, title]: readonly [string, string]): Column<Answers.BrowseRow> => {
      const active = sort === key
      return [
        el("button", {
          type: "button",
          "data-sort": key,
          "aria-label": "sort by " + title,
          onclick: () => navigate({ sort: key, order: active && order === "asc" ? "desc" : "asc", offset: 0 }),
          text: title + (active ? (order === "asc" ? " ▲" : " ▼") : "")
        }),
        () => null,
        { "aria-sort": active ? (order === "asc" ? "ascending" : "descending") : "none" }
      ]
    }
    const heads = new Map(SORTS.map(([key, title]) => [key, sortHeader([key, title])]))
    const col = (key: Answers.BrowseSort, cell: (row: Answers.BrowseRow) => Child): Column<Answers.BrowseRow> => {
      const [head, , attributes] = heads.get(key)!
      return [head, cell, attributes]
    }
    const first = page.total === 0 ? 0 : page.offset + 1
    const last = page.offset + page.rows.length
    const columns: Array<Column<Answers.BrowseRow>> = [
      col("id", (r) => shortId(r.record.id)),
      col("content", (r) => link(memoryHref(r.record.id), r.record.content, { "data-testid": "open" })),
      col("label", (r) => r.record.label || "—"),
      col("kind", (r) => r.record.kind),
      col("source", (r) => r.record.sourceType),
      col("trust", (r) => trustText(r.trustTier)),
      col("state", (r) => el("span", {}, statePills(r.state, r.flagged))),
      col("created", (r) => r.record.createdAt.slice(0, 16).replace("T", " "))
    ]
    if (q) columns.push(["score", (r) => r.score === null ? "" : r.score.toFixed(2)])
    results.replaceChildren(...nodes(
      el("p", {
        "data-testid": "total",
        "aria-live": "polite",
        text: page.total === 0
          ? "No memories match."
          : "Showing " + first + "–" + last + " of " + page.total +
            (page.truncated ? " (the store holds more than one browse reads: narrow the filters)" : "")
      }),
      page.total === 0 ? null : table(
        columns,
        page.rows,
        (r) => ({ "data-id": r.record.id, "data-state": r.state }),
        "memories, sorted by " + sort + " " + (order === "asc" ? "ascending" : "descending")
      ),
      el(
        "nav",
        { class: "pager", "aria-label": "pages" },
        el("button", {
          type: "button",
          "data-testid": "prev",
          disabled: page.offset === 0,
          text: "Previous",
          onclick: () => navigate({ offset: Math.max(0, page.offset - limit) })
        }),
        el("button", {
          type: "button",
          "data-testid": "next",
          disabled: last >= page.total,
          text: "Next",
          onclick: () => navigate({ offset: page.offset + limit })
        }),
        el(
          "label",
          {},
          "per page",
          el(
            "select",
            { name: "limit", onchange: (e) => navigate({ limit: (e.target as HTMLSelectElement).value, offset: 0 }) },
            [10, 25, 50, 100].map((n) => el("option", { value: String(n), text: String(n), selected: n === limit }))
          )
        )
      )
    ))
  } catch (e) {
    results.replaceChildren(errorBox(e))
  }
}

/** The record's attributes the detail view lists, with their titles, in this order. */
const ATTRS: ReadonlyArray<readonly [keyof Answers.MemoryRecordJson, string]> = [
  ["kind", "kind"],
  ["label", "label"],
  ["sourceType", "source"],
  ["scope", "scope"],
  ["deliveryPolicy", "delivery"],
  ["reviewState", "review"],
  ["createdAt", "created"],
  ["validFrom", "valid from"],
  ["validTo", "valid until"],
  ["expiresAt", "expires"],
  ["invalidatedAt", "invalidated"],
  ["invalidationReason", "why"],
  ["epoch", "epoch"],
  ["domain", "domain"]
]

/** Provenance tags (from-session:, from-turns:) link to the session they came from. */
const tagNodes = (tags: ReadonlyArray<string>): Child => {
  if (tags.length === 0) return "—"
  const session = tags.find((t) => t.startsWith("from-session:"))
  return el(
    "span",
    {},
    tags.map((t) =>
      t === session
        ? el("a", { class: "pill", href: "#/session/" + encodeURIComponent(t.slice("from-session:".length)), text: t })
        : pill(t)
    )
  )
}

/**
 * How often the record's value was said again (decision 0174), each session a link to it; null
 * when never.
 */
const corroborationNodes = (c: Answers.MemoryRecordJson["corroboration"]): Child =>
  c === undefined ? null : [
    "said again " + (c.count === 1 ? "once" : c.count + " times"),
    c.sessions.length > 0
      ? [
        " in ",
        c.sessions.map((s, i) => [
          i > 0 ? ", " : "",
          el("a", { href: "#/session/" + encodeURIComponent(s), text: s })
        ])
      ]
      : "",
    " · last " + c.lastAt.slice(0, 16).replace("T", " ")
  ]

/** One link of the history chain: the record it names, or that it was forgotten or is missing. */
const historyEntry = (h: Answers.HistoryLink, current: string): Child => {
  if (h.state === "stored" && h.record) {
    return [
      h.id === current
        ? el("strong", { text: "this memory" })
        : link(memoryHref(h.id), "open " + idText(h.id), { "data-testid": "history-link" }),
      " ",
      statePills(
        h.record.invalidatedAt ? (h.record.supersededBy ? "superseded" : "invalidated") : h.record.reviewState,
        false
      ),
      el("div", { text: h.record.content })
    ]
  }
  if (h.state === "forgotten" && h.tombstone) {
    return [
      el("span", {
        text: idText(h.id) + " forgotten " + h.tombstone.forgottenAt.slice(0, 16) + " by " + h.tombstone.forgottenBy
      })
    ]
  }
  return [el("span", { text: idText(h.id) + " missing" })]
}

/** `#/memory/<id>`: one record, its history, where it composes, its verdicts and its actions. */
export const memoryView = async (main: HTMLElement, id: string, go: Go): Promise<void> => {
  main.append(el("h1", { tabindex: "-1", text: "Memory" }))
  const answer = await orShow(main, api.detail(id))
  if (answer === undefined) return
  const { history, promotions, record } = answer
  const actions = el("div", { class: "toolbar", "data-testid": "actions" })
  const panel = el("div", { "data-testid": "action-panel" })
  const reload = () => go(memoryHref(record.id), true)
  const button = (testid: string) => actions.querySelector<HTMLButtonElement>("[data-testid=" + testid + "]")!
  const run = (target: HTMLButtonElement, work: () => Promise<void>) => async () => {
    target.disabled = true
    try {
      await work()
    } catch (e) {
      announce(messageOf(e), "error")
      target.disabled = false
    }
  }
  if (writable()) {
    const add = (label: string, testid: string, cls: string, work: () => Promise<void>) => {
      const target = el("button", { type: "button", class: cls, "data-testid": testid, text: label })
      target.addEventListener("click", run(target, work))
      actions.append(target)
    }
    if (answer.state === "pending" || answer.state === "rejected") {
      add("Confirm", "detail-confirm", "primary", async () => {
        await api.review(record.id, { state: "confirmed" })
        announce("Confirmed " + record.id)
        reload()
      })
    }
    if (answer.state === "pending" || answer.state === "confirmed") {
      add("Reject", "detail-reject", "", async () => {
        await api.review(record.id, { state: "rejected" })
        announce("Rejected " + record.id)
        reload()
      })
    }
    if (answer.state !== "superseded" && answer.state !== "invalidated") {
      add("Edit", "detail-edit", "", async () => {
        panel.replaceChildren(editForm(record, go))
        button("detail-edit").disabled = false
        panel.querySelector("textarea")?.focus()
      })
    }
    if (answer.state !== "superseded" && answer.state !== "invalidated" && answer.state !== "expired") {
      add("Expire", "detail-expire", "", async () => {
        await api.expire(record.id)
        announce("Expired " + record.id)
        reload()
      })
    }
    add("Forget…", "detail-forget", "danger", async () => {
      button("detail-forget").disabled = false
      panel.replaceChildren(forgetConfirm(record))
      panel.querySelector<HTMLButtonElement>("[data-testid=forget-confirm]")?.focus()
    })
  }
  main.append(
    el(
      "div",
      { class: "card", "data-testid": "detail", "data-id": record.id, "data-state": answer.state },
      el("p", { class: "prefix", "data-testid": "content", text: record.content }),
      el("p", {}, statePills(answer.state, answer.flagged), " ", pill("trust " + trustText(answer.trustTier))),
      el(
        "dl",
        {},
        el("dt", { text: "id" }),
        el("dd", {}, shortId(record.id), " ", el("code", { text: record.id })),
        ATTRS.filter(([k]) => record[k] !== undefined).map((
          [k, title]
        ) => [el("dt", { text: title }), el("dd", { "data-attr": k, text: String(record[k]) })]),
        record.corroboration
          ? [
            el("dt", { text: "corroborated" }),
            el("dd", { "data-attr": "corroboration" }, corroborationNodes(record.corroboration))
          ]
          : null,
        el("dt", { text: "tags" }),
        el("dd", {}, tagNodes(record.tags))
      ),
      actions.childElementCount ? actions : null,
      panel
    ),
    el(
      "div",
      { class: "grid" },
      el(
        "section",
        { class: "card", "aria-labelledby": "h-history" },
        el("h2", { id: "h-history", text: "History" }),
        el(
          "ol",
          { class: "chain", "data-testid": "history" },
          history.map((h) =>
            el(
              "li",
              { "aria-current": h.id === record.id ? "true" : null, "data-id": h.id, "data-link-state": h.state },
              historyEntry(h, record.id)
            )
          )
        )
      ),
      el(
        "section",
        { class: "card", "aria-labelledby": "h-place" },
        el("h2", { id: "h-place", text: "Where it composes" }),
        el("p", { "data-testid": "placements", text: placementText(promotions) })
      )
    ),
    el(
      "section",
      { class: "card", "aria-labelledby": "h-explain" },
      el("h2", { id: "h-explain", text: "Explain: why it was or was not delivered" }),
      explainPanel(record.id, new URLSearchParams(), go)
    )
  )
}

const editForm = (record: Answers.MemoryRecordJson, go: Go): HTMLFormElement => {
  const edit = form(
    { "data-testid": "edit-form" },
    async (data) => {
      const label = field(data, "label").trim()
      const body: Answers.WriteInput = {
        content: field(data, "content"),
        kind: field(data, "kind") as Answers.MemoryKind,
        sourceType: "operator",
        scope: record.scope,
        deliveryPolicy: record.deliveryPolicy,
        ...(label ? { label } : {}),
        ...(record.tags.length ? { tags: record.tags } : {})
      }
      try {
        const { successor } = await api.supersede(record.id, body)
        announce("Saved as " + successor.id + "; " + record.id + " is kept as superseded in its history")
        go(memoryHref(successor.id))
      } catch (err) {
        announce(messageOf(err), "error")
      }
    },
    el("h2", { text: "Edit (the old text stays in the history as superseded)" }),
    el(
      "label",
      {},
      "content",
      el("textarea", { name: "content", required: true, "data-testid": "edit-content", text: record.content })
    ),
    el(
      "div",
      { class: "toolbar" },
      el("label", {}, "label", el("input", { name: "label", value: record.label || "" })),
      el(
        "label",
        {},
        "kind",
        el(
          "select",
          { name: "kind" },
          KINDS.map((k) => el("option", { value: k, text: k, selected: k === record.kind }))
        )
      ),
      el("button", { class: "primary", type: "submit", "data-testid": "edit-save", text: "Save edit" }),
      el("button", { type: "button", text: "Cancel", onclick: () => edit.remove() })
    )
  )
  return edit
}

const forgetConfirm = (record: Answers.MemoryRecordJson): HTMLDivElement => {
  const box: HTMLDivElement = el(
    "div",
    { class: "confirm-box", role: "alertdialog", "aria-labelledby": "forget-title", "aria-describedby": "forget-text" },
    el("h2", { id: "forget-title", text: "Forget this memory for good?" }),
    el("p", {
      id: "forget-text",
      text:
        "Its text is removed from the store and from every stored prompt; only a tombstone (id, scope, when, by whom) stays. This cannot be undone."
    }),
    el(
      "div",
      { class: "toolbar" },
      el("button", {
        type: "button",
        class: "danger",
        "data-testid": "forget-confirm",
        text: "Forget " + idText(record.id),
        onclick: async () => {
          try {
            const { tombstones } = await api.forget(record.id)
            const t = tombstones[0]!
            box.replaceChildren(
              el("p", {
                class: "status ok",
                role: "status",
                "data-testid": "forget-result",
                text: "Forgotten: " + record.id + " at " + t.forgottenAt + " by " + t.forgottenBy + "."
              }),
              link("#/tombstones", "See the tombstones")
            )
            announce("Forgot " + record.id)
          } catch (e) {
            announce(messageOf(e), "error")
          }
        }
      }),
      el("button", { type: "button", "data-testid": "forget-cancel", text: "Cancel", onclick: () => box.remove() })
    )
  )
  return box
}

/** `#/new`: the create form (source operator); a read-only token gets a sentence instead. */
export const createView = (main: HTMLElement, go: Go): void => {
  main.append(el("h1", { tabindex: "-1", text: "New memory" }))
  if (!writable()) {
    main.append(el("p", { class: "muted", text: "This token is read-only: it cannot write memories." }))
    return
  }
  const create = form(
    { class: "card", "data-testid": "create-form" },
    async (data) => {
      const label = field(data, "label").trim()
      const tags = field(data, "tags").split(",").map((t) => t.trim()).filter(Boolean)
      const body: Answers.WriteInput = {
        content: field(data, "content"),
        kind: field(data, "kind") as Answers.MemoryKind,
        sourceType: "operator",
        scope: field(data, "scope"),
        deliveryPolicy: field(data, "delivery") as Answers.DeliveryPolicy,
        ...(label ? { label } : {}),
        ...(tags.length ? { tags } : {})
      }
      try {
        const { record } = await api.create(body)
        announce("Created " + record.id)
        go(memoryHref(record.id))
      } catch (err) {
        announce(messageOf(err), "error")
      }
    },
    el("p", { class: "muted", text: "Written with source operator: trust tier 3, confirmed on creation." }),
    el("label", {}, "content", el("textarea", { name: "content", required: true, "data-testid": "create-content" })),
    el(
      "div",
      { class: "toolbar" },
      el(
        "label",
        {},
        "kind",
        el(
          "select",
          { name: "kind", "data-testid": "create-kind" },
          KINDS.map((k) => el("option", { value: k, text: k, selected: k === "fact" }))
        )
      ),
      el("label", {}, "label", el("input", { name: "label", "data-testid": "create-label" })),
      el("label", {}, "tags (comma-separated)", el("input", { name: "tags" })),
      scopeField(scopes()[0] ?? null, "scope", false),
      el(
        "label",
        {},
        "delivery",
        el("select", { name: "delivery" }, DELIVERY.map((d) => el("option", { value: d, text: d })))
      ),
      el("button", { class: "primary", type: "submit", "data-testid": "create-save", text: "Create" })
    )
  )
  main.append(create)
}

/** `#/tombstones`: what was forgotten in the token's scopes, newest first. */
export const tombstonesView = async (main: HTMLElement): Promise<void> => {
  main.append(
    el("h1", { tabindex: "-1", text: "Tombstones" }),
    el("p", { class: "muted", text: "What was forgotten: the id, scope, when and by whom — never the text." })
  )
  try {
    const rows: Array<Answers.Tombstone> = []
    for (const scope of scopes()) rows.push(...(await api.tombstones(scope)).tombstones)
    rows.sort((a, b) => b.forgottenAt.localeCompare(a.forgottenAt))
    main.append(
      rows.length === 0 ? el("p", { class: "empty", text: "Nothing was forgotten." }) : el(
        "div",
        { "data-testid": "tombstones" },
        table<Answers.Tombstone>(
          [
            ["id", (t) => shortId(t.memoryId)],
            ["scope", (t) => t.scope],
            ["forgotten", (t) => t.forgottenAt.slice(0, 19).replace("T", " ")],
            ["by", (t) => t.forgottenBy],
            [
              "chain",
              (t) =>
                [
                  t.supersedes ? "after " + idText(t.supersedes) : "",
                  t.supersededBy ? " before " + idText(t.supersededBy) : ""
                ]
                  .join("") || "—"
            ]
          ],
          rows,
          (t) => ({ "data-id": t.memoryId })
        )
      )
    )
  } catch (e) {
    main.append(errorBox(e))
  }
}
