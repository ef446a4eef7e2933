/**
 * The console's entry module (`/console/app.js`, bundled with everything it imports): sign-in,
 * the navigation, and rendering the view the address names.
 */
import { agentView } from "./agent.js"
import { api, messageOf, state } from "./client.js"
import { $, el, form } from "./dom.js"
import { explainView } from "./explain.js"
import { createView, memoriesView, memoryView, tombstonesView } from "./memories.js"
import { previewView } from "./preview.js"
import { reviewView } from "./review.js"
import { parse } from "./router.js"
import { callView, sessionsView, sessionView } from "./sessions.js"

const TABS: ReadonlyArray<readonly [id: string, title: string]> = [
  ["memories", "Memories"],
  ["review", "Review"],
  ["sessions", "Sessions"],
  ["agent", "Agent"],
  ["preview", "Preview"],
  ["tombstones", "Tombstones"]
]

/** The tab each view that has no tab of its own belongs to. */
const SECTION: Readonly<Record<string, string>> = {
  memory: "memories",
  explain: "memories",
  new: "memories",
  session: "sessions",
  call: "sessions"
}

const go = (hash: string, replace = false): void => {
  if (location.hash === hash) void render()
  else if (replace) {
    history.replaceState(null, "", hash)
    void render()
  } else location.hash = hash
}

const loginForm = (message?: string) => {
  const input = el("input", {
    id: "token",
    type: "password",
    name: "token",
    placeholder: "egm_…",
    "data-testid": "token",
    autocomplete: "off",
    required: true
  })
  const error = el("p", { class: "error", role: "alert", "data-testid": "login-error", text: message || "" })
  return el(
    "main",
    { id: "login", class: "card" },
    el("h1", { text: "Sign in to the Engram console" }),
    el("p", { text: "Paste a token from: engram token create --scope <scope>" }),
    form(
      { class: "inline" },
      async () => {
        state.token = input.value.trim()
        try {
          state.access = await api.access()
          sessionStorage.setItem("engram-token", state.token)
          void render()
        } catch (e) {
          error.textContent = messageOf(e)
        }
      },
      el("label", { for: "token" }, "access token", input),
      el("button", { class: "primary", type: "submit", "data-testid": "login", text: "Sign in" })
    ),
    error
  )
}

const signOut = () => {
  sessionStorage.removeItem("engram-token")
  state.token = null
  state.access = null
  void render()
}

/** Which render is the latest: an earlier one that finishes late leaves the page alone. */
let rendering = 0

const render = async (message?: string): Promise<void> => {
  const root = $("#app")!
  if (!state.token || !state.access) {
    root.replaceChildren(loginForm(message))
    return
  }
  const access = state.access
  const { args, params, view } = parse(location.hash)
  const section = SECTION[view] || view
  const main = el("main", { id: "view", tabindex: "-1" })
  root.replaceChildren(
    el("a", {
      class: "skip",
      href: "#view",
      text: "Skip to content",
      onclick: (e) => {
        e.preventDefault()
        main.focus()
      }
    }),
    el(
      "header",
      {},
      el("p", { class: "brand", text: "Engram console" }),
      el(
        "nav",
        { "aria-label": "views" },
        el(
          "ul",
          {},
          TABS.map(([id, title]) =>
            el(
              "li",
              {},
              el("a", {
                href: "#/" + id,
                "data-testid": "tab-" + id,
                "aria-current": section === id ? "page" : null,
                text: title
              })
            )
          )
        )
      ),
      el("span", {
        class: "who",
        "data-testid": "who",
        text: access.label + " · " + access.scopes.join(", ") + (access.readOnly ? " · read-only" : "")
      }),
      el("button", { type: "button", text: "Sign out", onclick: signOut })
    ),
    el("div", {
      id: "status",
      class: "status" + (state.flash ? " " + state.flash.kind : ""),
      role: "status",
      "aria-live": "polite",
      "data-testid": "status",
      text: state.flash ? state.flash.message : ""
    }),
    main
  )
  state.flash = null
  const mine = ++rendering
  try {
    if (view === "memories") await memoriesView(main, params, go)
    else if (view === "memory") await memoryView(main, args[0]!, go)
    else if (view === "new") createView(main, go)
    else if (view === "tombstones") await tombstonesView(main)
    else if (view === "review") await reviewView(main, params, go)
    else if (view === "sessions") await sessionsView(main)
    else if (view === "session") await sessionView(main, args[0]!)
    else if (view === "call") await callView(main, args[0]!, args[1]!, args[2]!)
    else if (view === "explain") explainView(main, args[0]!, params, go)
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

window.addEventListener("hashchange", () => void render())
window.addEventListener("engram-signed-out", (e) => void render((e as CustomEvent<string | undefined>).detail))
if (state.token) {
  api.access().then((access) => {
    state.access = access
    void render()
  }, () => void render())
} else void render()
