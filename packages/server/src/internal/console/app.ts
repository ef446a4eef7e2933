/**
 * The console's entry module (`/console/app.js`): sign-in, the navigation and the router. Every
 * view has an address (`#/memories?q=…`, `#/memory/<id>`, `#/explain/<id>?session=…`,
 * `#/review`, `#/sessions`, `#/session/<id>`, `#/call/<session>/<turn>/<call>`, `#/agent`,
 * `#/preview`, `#/new`, `#/tombstones`), so the back button works and a view can be linked.
 */
export const app = String.raw`
import { $, el, api, state, writable } from "./dom.js"
import { memoriesView, memoryView, createView, tombstonesView } from "./memories.js"
import { reviewView } from "./review.js"
import { sessionsView, sessionView, callView } from "./sessions.js"
import { explainView } from "./explain.js"
import { agentView } from "./agent.js"
import { previewView } from "./preview.js"

const TABS = [["memories", "Memories"], ["review", "Review"], ["sessions", "Sessions"], ["agent", "Agent"], ["preview", "Preview"], ["tombstones", "Tombstones"]]
const SECTION = { memory: "memories", explain: "memories", new: "memories", session: "sessions", call: "sessions" }

function go(hash, replace = false) {
  if (location.hash === hash) render()
  else if (replace) { history.replaceState(null, "", hash); render() }
  else location.hash = hash
}

function parse() {
  const raw = location.hash.replace(/^#\/?/, "")
  const [path, query] = raw.split("?")
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent)
  return { view: parts[0] || "memories", args: parts.slice(1), params: new URLSearchParams(query || "") }
}

function loginForm(message) {
  const input = el("input", { id: "token", type: "password", name: "token", placeholder: "egm_…", "data-testid": "token", autocomplete: "off", required: true })
  const error = el("p", { class: "error", role: "alert", "data-testid": "login-error", text: message || "" })
  return el("main", { id: "login", class: "card" },
    el("h1", { text: "Sign in to the Engram console" }),
    el("p", { text: "Paste a token from: engram token create --scope <scope>" }),
    el("form", { class: "inline", onsubmit: async (event) => {
      event.preventDefault()
      state.token = input.value.trim()
      try {
        state.access = await api("GET", "/api/access")
        sessionStorage.setItem("engram-token", state.token)
        render()
      } catch (e) { error.textContent = e.message }
    } }, el("label", { for: "token" }, "access token", input), el("button", { class: "primary", type: "submit", "data-testid": "login", text: "Sign in" })),
    error)
}

function signOut() {
  sessionStorage.removeItem("engram-token")
  state.token = null
  state.access = null
  render()
}

let rendering = 0
async function render(message) {
  const root = $("#app")
  if (!state.token || !state.access) { root.replaceChildren(loginForm(message)); return }
  const { view, args, params } = parse()
  const section = SECTION[view] || view
  const main = el("main", { id: "view", tabindex: "-1" })
  root.replaceChildren(
    el("a", { class: "skip", href: "#view", text: "Skip to content", onclick: (e) => { e.preventDefault(); main.focus() } }),
    el("header", {},
      el("p", { class: "brand", text: "Engram console" }),
      el("nav", { "aria-label": "views" }, el("ul", {}, TABS.map(([id, title]) => el("li", {},
        el("a", { href: "#/" + id, "data-testid": "tab-" + id, "aria-current": section === id ? "page" : null, text: title }))))),
      el("span", { class: "who", "data-testid": "who", text: state.access.label + " · " + state.access.scopes.join(", ") + (state.access.readOnly ? " · read-only" : "") }),
      el("button", { type: "button", text: "Sign out", onclick: signOut })),
    el("div", { id: "status", class: "status" + (state.flash ? " " + state.flash.kind : ""), role: "status", "aria-live": "polite", "data-testid": "status", text: state.flash ? state.flash.message : "" }),
    main)
  state.flash = null
  const mine = ++rendering
  try {
    if (view === "memories") await memoriesView(main, params, go)
    else if (view === "memory") await memoryView(main, args[0], go)
    else if (view === "new") createView(main, params, go)
    else if (view === "tombstones") await tombstonesView(main)
    else if (view === "review") await reviewView(main, params, go)
    else if (view === "sessions") await sessionsView(main)
    else if (view === "session") await sessionView(main, args[0])
    else if (view === "call") await callView(main, args[0], args[1], args[2])
    else if (view === "explain") explainView(main, args[0], params, go)
    else if (view === "agent") await agentView(main, params, go)
    else if (view === "preview") await previewView(main, params, go)
    else main.append(el("h1", { text: "No such view" }))
  } finally {
    if (mine === rendering) {
      const heading = main.querySelector("h1")
      if (heading && document.activeElement === document.body) heading.focus({ preventScroll: true })
      document.title = (heading ? heading.textContent + " · " : "") + "Engram console"
      main.dataset.ready = "true"
    }
  }
}

window.addEventListener("hashchange", () => render())
window.addEventListener("engram-signed-out", (e) => render(e.detail))
if (state.token) api("GET", "/api/access").then((access) => { state.access = access; render() }, () => render())
else render()
`
