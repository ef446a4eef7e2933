/**
 * The review console: one HTML page with its style and a plain ES module inline — no build step,
 * no framework, no third-party script. It talks only to `/api` with the bearer token the operator
 * signs in with (kept in `sessionStorage`, so it ends with the tab). Every value from the store is
 * inserted as text (`textContent`), never as markup.
 */
const style = `
:root { --fg:#1d232b; --muted:#66707c; --line:#dde2e8; --accent:#2456c8; --mem:#e8f0ff; --auth:#f1f3f5; --warn:#b4441b; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, sans-serif; color:var(--fg); background:#fafbfc; }
header { display:flex; gap:16px; align-items:center; padding:10px 18px; border-bottom:1px solid var(--line); background:#fff; }
header h1 { font-size:16px; margin:0; }
nav button { border:0; background:none; padding:6px 10px; cursor:pointer; color:var(--muted); border-radius:6px; }
nav button.active { background:var(--mem); color:var(--accent); font-weight:600; }
main { padding:18px; max-width:1200px; }
.who { margin-left:auto; color:var(--muted); font-size:12px; }
form.inline { display:flex; flex-wrap:wrap; gap:8px; align-items:end; margin-bottom:12px; }
label { display:flex; flex-direction:column; font-size:12px; color:var(--muted); gap:2px; }
input, select { font:inherit; padding:5px 7px; border:1px solid var(--line); border-radius:6px; background:#fff; }
button.act { font:inherit; padding:5px 10px; border:1px solid var(--line); border-radius:6px; background:#fff; cursor:pointer; }
button.primary { background:var(--accent); color:#fff; border-color:var(--accent); }
button.danger { color:var(--warn); }
table { border-collapse:collapse; width:100%; background:#fff; border:1px solid var(--line); }
th, td { text-align:left; padding:6px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:12px; color:var(--muted); font-weight:600; }
tr.row { cursor:pointer; } tr.row:hover { background:#f5f8ff; }
.pill { display:inline-block; padding:0 7px; border-radius:9px; font-size:12px; background:var(--auth); }
.pill.pending { background:#fff4d6; } .pill.confirmed { background:#e3f6e8; } .pill.rejected { background:#fde4e1; }
.split { display:grid; grid-template-columns: 1fr 380px; gap:16px; }
.card { background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px 14px; margin-bottom:12px; }
.card h3 { margin:0 0 8px; font-size:14px; }
dl { display:grid; grid-template-columns:max-content 1fr; gap:3px 10px; margin:0; font-size:13px; }
dt { color:var(--muted); } dd { margin:0; word-break:break-word; }
.chain { display:flex; flex-wrap:wrap; gap:6px; align-items:center; font-size:12px; }
.chip { display:inline; padding:1px 4px; border-radius:4px; white-space:pre-wrap; }
.chip.authored { background:var(--auth); } .chip.memory { background:var(--mem); outline:1px solid #b9cdf5; }
.prefix { font-family: ui-monospace, monospace; font-size:12.5px; white-space:pre-wrap; background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px; }
.bar { height:10px; background:var(--auth); border-radius:5px; overflow:hidden; min-width:160px; }
.bar > span { display:block; height:100%; background:var(--accent); }
.error { color:var(--warn); margin:8px 0; }
.empty { color:var(--muted); padding:10px; }
#login { max-width:420px; margin:80px auto; }
`

const script = `
const $ = (sel, root = document) => root.querySelector(sel)
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = value
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value)
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value === true ? "" : value)
  }
  for (const child of children.flat(Infinity)) if (child !== null && child !== undefined) node.append(child)
  return node
}
const state = { token: sessionStorage.getItem("engram-token"), access: null, tab: "memories", selected: null }

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { authorization: "Bearer " + state.token, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined
  })
  const json = await response.json().catch(() => ({}))
  if (response.status === 401) { signOut(json.message); throw new Error(json.message) }
  if (!response.ok) throw new Error(json.message || ("HTTP " + response.status))
  return json
}

function signOut(message) {
  sessionStorage.removeItem("engram-token")
  state.token = null
  state.access = null
  render(message)
}

function scopeSelect(name = "scope") {
  return el("label", {}, "scope", el("select", { name, "data-testid": "scope" },
    state.access.scopes.map((s) => el("option", { value: s, text: s }))))
}

const pill = (text) => el("span", { class: "pill " + text, text })

function render(message) {
  const root = $("#app")
  root.replaceChildren()
  if (!state.token || !state.access) {
    root.append(loginForm(message))
    return
  }
  const tabs = [["memories", "Memories"], ["pending", "Pending review"], ["agent", "Agent"], ["prompt", "Prompt inspector"]]
  root.append(
    el("header", {},
      el("h1", { text: "Engram console" }),
      el("nav", {}, tabs.map(([id, title]) =>
        el("button", { class: state.tab === id ? "active" : "", "data-testid": "tab-" + id, text: title,
          onclick: () => { state.tab = id; render() } }))),
      el("span", { class: "who", "data-testid": "who",
        text: state.access.label + " · " + state.access.scopes.join(", ") + (state.access.readOnly ? " · read-only" : "") }),
      el("button", { class: "act", text: "Sign out", onclick: () => signOut() })),
    el("main", { id: "view" }))
  const view = $("#view")
  if (state.tab === "memories") memoriesView(view)
  if (state.tab === "pending") pendingView(view)
  if (state.tab === "agent") agentView(view)
  if (state.tab === "prompt") promptView(view)
}

function loginForm(message) {
  const input = el("input", { type: "password", name: "token", placeholder: "egm_…", "data-testid": "token", autocomplete: "off" })
  const error = el("div", { class: "error", "data-testid": "login-error", text: message || "" })
  return el("div", { id: "login", class: "card" },
    el("h3", { text: "Sign in to the Engram console" }),
    el("p", { text: "Paste a token from: engram token create --scope <scope>" }),
    el("form", { class: "inline", onsubmit: async (event) => {
      event.preventDefault()
      state.token = input.value.trim()
      try {
        state.access = await api("GET", "/api/access")
        sessionStorage.setItem("engram-token", state.token)
        render()
      } catch (e) { error.textContent = e.message }
    } }, input, el("button", { class: "act primary", type: "submit", "data-testid": "login", text: "Sign in" })),
    error)
}

function recordRows(records, onPick) {
  if (records.length === 0) return el("div", { class: "empty", "data-testid": "empty", text: "No memories." })
  return el("table", { "data-testid": "records" },
    el("tr", {}, ["id", "content", "kind", "scope", "review", "created"].map((h) => el("th", { text: h }))),
    records.map((r) => el("tr", { class: "row", "data-id": r.id, onclick: () => onPick(r.id) },
      el("td", { text: r.id }), el("td", { text: r.content }), el("td", { text: r.kind }), el("td", { text: r.scope }),
      el("td", {}, pill(r.reviewState), r.invalidatedAt ? pill("superseded") : null), el("td", { text: r.createdAt.slice(0, 19) }))))
}

function memoriesView(view) {
  const results = el("div", { "data-testid": "results" })
  const detail = el("div", { "data-testid": "detail" })
  const form = el("form", { class: "inline", "data-testid": "filters", onsubmit: (e) => { e.preventDefault(); load() } },
    el("label", {}, "search", el("input", { name: "q", "data-testid": "search", placeholder: "words…" })),
    scopeSelect(),
    el("label", {}, "kind", el("select", { name: "kind" }, ["", "profile", "standing", "fact", "decision", "note", "episode", "reference", "legacy"].map((k) => el("option", { value: k, text: k || "any" })))),
    el("label", {}, "review", el("select", { name: "review" }, ["", "pending", "confirmed", "rejected"].map((k) => el("option", { value: k, text: k || "any" })))),
    el("label", {}, "superseded", el("select", { name: "includeSuperseded" }, el("option", { value: "", text: "hide" }), el("option", { value: "true", text: "show" }))),
    el("button", { class: "act primary", type: "submit", "data-testid": "apply", text: "Apply" }))
  view.append(form, el("div", { class: "split" }, results, detail))
  async function load() {
    const data = new FormData(form)
    const params = new URLSearchParams()
    for (const key of ["scope", "kind", "review", "includeSuperseded"]) if (data.get(key)) params.set(key, data.get(key))
    const q = String(data.get("q") || "").trim()
    try {
      const records = q
        ? (await api("GET", "/api/memories/search?" + params + "&q=" + encodeURIComponent(q))).hits.map((h) => h.record)
        : (await api("GET", "/api/memories?" + params)).records
      results.replaceChildren(recordRows(records, (id) => showDetail(id, detail, load)))
    } catch (e) { results.replaceChildren(el("div", { class: "error", text: e.message })) }
  }
  load()
}

async function showDetail(id, detail, reload) {
  try {
    const { record, history, promotions } = await api("GET", "/api/memories/" + encodeURIComponent(id))
    const act = (label, run, cls = "") => state.access.readOnly ? null :
      el("button", { class: "act " + cls, "data-testid": "detail-" + label.toLowerCase(), text: label,
        onclick: async () => { try { await run(); await reload(); } catch (e) { alert(e.message) } } })
    const attrs = ["id", "content", "kind", "label", "tags", "sourceType", "scope", "deliveryPolicy", "reviewState", "createdAt", "expiresAt", "invalidatedAt", "invalidationReason", "supersedes", "supersededBy", "epoch"]
    detail.replaceChildren(
      el("div", { class: "card" }, el("h3", { text: "Attributes" }),
        el("dl", {}, attrs.filter((k) => record[k] !== undefined).map((k) => [el("dt", { text: k }), el("dd", { text: Array.isArray(record[k]) ? record[k].join(", ") : String(record[k]) })]))),
      el("div", { class: "card" }, el("h3", { text: "History" }),
        el("div", { class: "chain", "data-testid": "history" }, history.map((link, i) => [i > 0 ? "→" : null,
          el("span", { class: "pill", title: link.state === "forgotten" ? "forgotten at " + link.tombstone.forgottenAt + " by " + link.tombstone.forgottenBy : link.state,
            text: link.state === "forgotten" ? "(" + link.id + " forgotten)" : link.id })]))),
      el("div", { class: "card" }, el("h3", { text: "Where it composes" }),
        promotions.length === 0 ? el("div", { class: "empty", text: "No promotion row: reaches prompts only through recall." }) :
          el("dl", { "data-testid": "placements" }, promotions.map((p) => [el("dt", { text: p.specKey }),
            el("dd", { text: p.placement ? p.placement.section + " / " + p.placement.key + " (" + p.tier + ")" : "declined" })]))),
      el("div", { class: "card" },
        record.reviewState !== "confirmed" ? act("Confirm", () => api("POST", "/api/memories/" + id + "/review", { state: "confirmed" }), "primary") : null, " ",
        record.reviewState !== "rejected" ? act("Reject", () => api("POST", "/api/memories/" + id + "/review", { state: "rejected" })) : null, " ",
        act("Expire", () => api("POST", "/api/memories/" + id + "/expire")), " ",
        act("Forget", async () => { if (confirm("Forget " + id + " for good?")) { await api("DELETE", "/api/memories/" + id); detail.replaceChildren() } }, "danger")))
  } catch (e) { detail.replaceChildren(el("div", { class: "error", text: e.message })) }
}

function pendingView(view) {
  const list = el("div", { "data-testid": "pending" })
  view.append(el("p", { text: "Memories waiting for an operator. Guarded sections compose only confirmed memories." }), list)
  async function load() {
    try {
      const rows = []
      for (const scope of state.access.scopes) {
        rows.push(...(await api("GET", "/api/memories?review=pending&scope=" + encodeURIComponent(scope))).records)
      }
      if (rows.length === 0) return list.replaceChildren(el("div", { class: "empty", "data-testid": "empty", text: "Nothing waits for review." }))
      list.replaceChildren(el("table", {}, el("tr", {}, ["id", "content", "kind", "label", "scope", ""].map((h) => el("th", { text: h }))),
        rows.map((r) => el("tr", { "data-id": r.id },
          el("td", { text: r.id }), el("td", { text: r.content }), el("td", { text: r.kind }), el("td", { text: r.label || "" }), el("td", { text: r.scope }),
          el("td", {}, state.access.readOnly ? null : [
            el("button", { class: "act primary", "data-testid": "confirm", text: "Confirm", onclick: () => review(r.id, "confirmed") }), " ",
            el("button", { class: "act", "data-testid": "reject", text: "Reject", onclick: () => review(r.id, "rejected") })])))))
    } catch (e) { list.replaceChildren(el("div", { class: "error", text: e.message })) }
  }
  async function review(id, to) {
    try { await api("POST", "/api/memories/" + id + "/review", { state: to }); await load() } catch (e) { alert(e.message) }
  }
  load()
}

function agentView(view) {
  const out = el("div", { "data-testid": "agent" })
  const form = el("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); load() } }, scopeSelect(),
    el("button", { class: "act primary", type: "submit", text: "Compose" }))
  view.append(form, out)
  async function load() {
    try {
      const scope = new FormData(form).get("scope")
      const agent = await api("GET", "/api/agent?scope=" + encodeURIComponent(scope))
      const prefix = el("div", { class: "prefix", "data-testid": "prefix" })
      if (agent.prefix.length === 0) prefix.append(el("span", { class: "empty", text: "The prefix is empty: nothing authored, nothing composed." }))
      for (const section of agent.prefix) {
        prefix.append(el("div", { "data-section": section.name },
          section.fragments.map((f) => el("span", { class: "chip " + f.source, "data-source": f.source,
            "data-ids": f.source === "memory" ? f.memoryIds.join(" ") : null,
            title: f.source === "memory" ? "memory " + f.memoryIds.join(", ") : "authored", text: f.text }))))
      }
      out.replaceChildren(
        el("p", { text: "Spec " + (agent.spec || "none") + " · composed " + agent.composedIds.length + " memories · blue chips come from memory (hover for ids), grey are authored." }),
        prefix,
        el("div", { class: "card" }, el("h3", { text: "Overlay report" }),
          (agent.report?.outcomes || []).length === 0 ? el("div", { class: "empty", text: "No placed memories." }) :
          el("table", { "data-testid": "report" }, el("tr", {}, ["record", "status", "reason", "address"].map((h) => el("th", { text: h }))),
            agent.report.outcomes.map((o) => el("tr", { "data-id": o.recordId },
              el("td", { text: o.recordId }), el("td", { text: o.status }), el("td", { text: o.reason || "" }),
              el("td", { text: o.address ? o.address.section + " / " + o.address.key : "" }))))))
    } catch (e) { out.replaceChildren(el("div", { class: "error", text: e.message })) }
  }
  load()
}

function promptView(view) {
  const out = el("div", { "data-testid": "projection" })
  const form = el("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); load() } },
    el("label", {}, "query", el("input", { name: "q", "data-testid": "query", placeholder: "what the operator asks…", required: true })),
    scopeSelect(),
    el("button", { class: "act primary", type: "submit", "data-testid": "inspect", text: "Inspect" }))
  view.append(el("p", { text: "What the projection would add to the next model call for this query (nothing is recorded)." }), form, out)
  async function load() {
    const data = new FormData(form)
    const params = new URLSearchParams({ q: data.get("q"), scope: data.get("scope") })
    try {
      const { projection } = await api("GET", "/api/projection?" + params)
      out.replaceChildren(
        el("p", { "data-testid": "budget-use", text: budgetUse(projection.budget) }),
        budgetTable(projection.sections, projection.budget),
        el("div", { class: "prefix", text: projection.text || "(nothing projected)" }))
    } catch (e) { out.replaceChildren(el("div", { class: "error", text: e.message })) }
  }
  storedCalls(view)
}

// A budget is in tokens or in chars (or unbounded); what it uses is reported in both.
function budgetUse(b) {
  return b.budgetTokens != null ? "used " + b.usedTokens + " of " + b.budgetTokens + " tokens (" + b.usedChars + " chars)"
    : b.budgetChars != null ? "used " + b.usedChars + " of " + b.budgetChars + " chars (" + b.usedTokens + " tokens)"
    : "used " + b.usedTokens + " tokens (" + b.usedChars + " chars) of an unbounded budget"
}

// Each bar measures its section in the budget's unit.
function budgetTable(sections, budget) {
  const inTokens = budget.budgetTokens != null
  const limit = inTokens ? budget.budgetTokens : budget.budgetChars
  const unit = inTokens ? " tokens" : " chars"
  return el("table", { "data-testid": "sections" }, el("tr", {}, ["section", "status", "budget", "tokens", "chars", "items", "ids"].map((h) => el("th", { text: h }))),
    sections.map((s) => {
      const size = inTokens ? s.tokens : s.chars
      return el("tr", { "data-section": s.label },
        el("td", { text: s.label }), el("td", { text: s.status }),
        el("td", {}, el("div", { class: "bar", title: size + " / " + (limit ?? "∞") + unit },
          el("span", { style: "width:" + (limit ? Math.min(100, (100 * size) / limit) : 100).toFixed(1) + "%" }))),
        el("td", { text: String(s.tokens) }), el("td", { text: String(s.chars) }), el("td", { text: String(s.items) }), el("td", { text: s.memoryIds.join(", ") }))
    }))
}

function storedCalls(view) {
  const out = el("div", { "data-testid": "stored-calls" })
  const form = el("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); load() } },
    el("label", {}, "session", el("input", { name: "session", "data-testid": "session", placeholder: "a session id", required: true })),
    el("label", {}, "turn", el("input", { name: "turn", "data-testid": "turn", size: 4 })),
    el("button", { class: "act primary", type: "submit", "data-testid": "load-calls", text: "Show stored calls" }))
  view.append(el("h3", { text: "Stored calls" }),
    el("p", { text: "What the model was sent on a session's stored calls, rebuilt from its trajectory." }), form, out)
  async function load() {
    const data = new FormData(form)
    const params = new URLSearchParams()
    if (data.get("turn")) params.set("turn", data.get("turn"))
    try {
      const { calls } = await api("GET", "/api/sessions/" + encodeURIComponent(data.get("session")) + "/inspect?" + params)
      out.replaceChildren(...(calls.length === 0 ? [el("div", { class: "empty", text: "no stored call matches" })] : calls.map((c) =>
        el("div", { class: "card", "data-call": c.turn + "." + c.call },
          el("h3", { text: "turn " + c.turn + ", call " + c.call + " — " + (c.verified ? "rebuilt byte for byte" : c.redacted.length > 0 ? "redacted: " + c.redacted.join(", ") + " forgotten" : "differs from what was recorded") }),
          el("div", { class: "prefix" }, c.fragments.map((f, i) => [
            i === 0 || c.fragments[i - 1].message !== f.message ? el("b", { text: (i === 0 ? "" : "\\n\\n") + "[" + f.role + "]\\n" }) : null,
            el("span", { class: "chip " + (f.memoryIds.length ? "memory" : "authored"), title: f.role + " · " + f.label + (f.memoryIds.length ? " · " + f.memoryIds.join(", ") : ""), text: f.text })])),
          budgetTable(c.sections, c.budget)))))
    } catch (e) { out.replaceChildren(el("div", { class: "error", text: e.message })) }
  }
}

if (state.token) {
  api("GET", "/api/access").then((access) => { state.access = access; render() }, () => render())
} else {
  render()
}
`

/** The whole page, served at `/`. */
export const consolePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Engram console</title>
<style>${style}</style>
</head>
<body>
<div id="app"></div>
<script type="module">${script}</script>
</body>
</html>`
