/**
 * The sessions views: every session the token may see, newest first, with its turns and the
 * scopes it read → a session's stored calls → one call rebuilt byte for byte from its trajectory,
 * each memory fragment linked to its record and to its explain verdict for that call, and the
 * call's budget per section as a chart that shows what was shed.
 */
import type * as Answers from "./answers.js"
import { api } from "./client.js"
import { el, link } from "./dom.js"
import { budgetChart, errorBox, idText, memoryHref, table } from "./widgets.js"

const sessionHref = (id: string) => "#/session/" + encodeURIComponent(id)
const callHref = (id: string, turn: number | string, call: number | string) =>
  "#/call/" + encodeURIComponent(id) + "/" + turn + "/" + call
const explainHref = (memoryId: string, sessionId: string, c: Answers.InspectedCall) =>
  "#/explain/" + encodeURIComponent(memoryId) + "?session=" + encodeURIComponent(sessionId) + "&turn=" + c.turn +
  "&call=" + c.call

/** `#/sessions`: every session the token may see, newest first. */
export const sessionsView = async (main: HTMLElement): Promise<void> => {
  main.append(
    el("h1", { tabindex: "-1", text: "Sessions" }),
    el("p", {
      class: "muted",
      text: "Newest first. A session shows when every stored call of it read only your token's scopes."
    })
  )
  try {
    const { sessions } = await api.sessions()
    main.append(
      sessions.length === 0
        ? el("p", { class: "empty", text: "No session has stored calls or history yet." })
        : el(
          "div",
          { "data-testid": "sessions" },
          table<Answers.SessionRow>(
            [
              ["session", (s) => link(sessionHref(s.sessionId), s.sessionId, { "data-testid": "open-session" })],
              ["last call", (s) => s.lastCallAt ? s.lastCallAt.slice(0, 16).replace("T", " ") : "—"],
              ["turns", (s) => String(s.turns)],
              ["messages", (s) => String(s.messages)],
              ["stored calls", (s) => String(s.calls)],
              ["scopes read", (s) => s.scopes.join(", ") || "—"]
            ],
            sessions,
            (s) => ({ "data-session": s.sessionId })
          )
        )
    )
  } catch (e) {
    main.append(errorBox(e))
  }
}

/** `#/session/<id>`: a session's stored calls and how each rebuilt. */
export const sessionView = async (main: HTMLElement, sessionId: string): Promise<void> => {
  main.append(
    el("h1", { tabindex: "-1", text: "Session " + sessionId }),
    el("p", {}, link("#/sessions", "All sessions"))
  )
  try {
    const { calls } = await api.inspect(sessionId)
    main.append(
      calls.length === 0
        ? el("p", { class: "empty", text: "This session has no stored calls." })
        : el(
          "div",
          { "data-testid": "calls" },
          table<Answers.InspectedCall>(
            [
              [
                "call",
                (c) =>
                  link(callHref(sessionId, c.turn, c.call), "turn " + c.turn + ", call " + c.call, {
                    "data-testid": "open-call"
                  })
              ],
              [
                "rebuilt",
                (c) =>
                  c.verified
                    ? "byte for byte"
                    : c.redacted.length
                    ? "redacted (" + c.redacted.length + " forgotten)"
                    : "differs"
              ],
              ["fragments", (c) => String(c.fragments.length)],
              ["memories", (c) => String(new Set(c.fragments.flatMap((f) => f.memoryIds)).size)],
              ["budget", (c) => c.budget.usedChars + " chars, " + c.budget.shed.length + " shed"]
            ],
            calls,
            (c) => ({ "data-call": c.turn + "." + c.call })
          )
        )
    )
  } catch (e) {
    main.append(errorBox(e))
  }
}

/** The fragments of one prompt message, in order. */
interface MessageGroup {
  readonly message: number
  readonly role: string
  readonly fragments: Array<Answers.Fragment>
}

/** The request's messages, each with its fragments in order: the text is exactly what was sent. */
const messages = (c: Answers.InspectedCall, sessionId: string): Array<HTMLElement> => {
  const groups: Array<MessageGroup> = []
  for (const f of c.fragments) {
    const last = groups[groups.length - 1]
    if (last && last.message === f.message) last.fragments.push(f)
    else groups.push({ message: f.message, role: f.role, fragments: [f] })
  }
  return groups.map((g) =>
    el(
      "section",
      { class: "message", "data-message": String(g.message), "data-role": g.role },
      el("h3", { text: g.role + " message" }),
      el(
        "pre",
        { "data-testid": "message-text" },
        g.fragments.map((f) =>
          f.memoryIds.length
            ? el("a", {
              class: "chip memory",
              href: explainHref(f.memoryIds[0]!, sessionId, c),
              "data-ids": f.memoryIds.join(" "),
              title: f.label + " · memory " + f.memoryIds.join(", ") + " — open its explain verdict for this call",
              text: f.text
            })
            : el("span", { class: "chip authored", title: f.label, text: f.text })
        )
      )
    )
  )
}

/** `#/call/<session>/<turn>/<call>`: one stored call rebuilt, its budget chart and its messages as sent. */
export const callView = async (main: HTMLElement, sessionId: string, turn: string, call: string): Promise<void> => {
  main.append(
    el("h1", { tabindex: "-1", text: "Stored call: " + sessionId + ", turn " + turn + ", call " + call }),
    el("p", {}, link(sessionHref(sessionId), "All calls of " + sessionId))
  )
  try {
    const { calls } = await api.inspect(sessionId, "?turn=" + turn + "&call=" + call)
    const c = calls[0]
    if (!c) {
      main.append(el("p", { class: "empty", text: "No such stored call." }))
      return
    }
    const memoryIds = [...new Set(c.fragments.flatMap((f) => f.memoryIds))]
    main.append(el(
      "div",
      { "data-testid": "call", "data-call": c.turn + "." + c.call },
      el("p", {
        "data-testid": "verified",
        role: "status",
        text: c.verified
          ? "Rebuilt byte for byte: the rebuild hashes to what was sent."
          : c.redacted.length
          ? "Redacted since: " + c.redacted.join(", ") + " forgotten (their text is gone from the record)."
          : "The rebuild differs from what was recorded."
      }),
      el(
        "section",
        { class: "card", "aria-labelledby": "h-budget" },
        el("h2", { id: "h-budget", text: "Budget per section" }),
        budgetChart(c.sections, c.budget)
      ),
      el(
        "section",
        { class: "card", "aria-labelledby": "h-frag" },
        el("h2", { id: "h-frag", text: "Memories in this call" }),
        memoryIds.length === 0
          ? el("p", { class: "empty", text: "No memory reached this call." })
          : (() => {
            // The first ten in view; a long list (150 recalled ids) folds behind its count.
            const item = (id: string) =>
              el(
                "li",
                {},
                link(memoryHref(id), idText(id), { title: id }),
                " · ",
                link(explainHref(id, sessionId, c), "why here", { "data-testid": "explain-link" })
              )
            return [
              el("ul", {}, memoryIds.slice(0, 10).map(item)),
              memoryIds.length > 10
                ? el(
                  "details",
                  { "data-testid": "more-memories" },
                  el("summary", { text: (memoryIds.length - 10) + " more of " + memoryIds.length + " memories" }),
                  el("ul", {}, memoryIds.slice(10).map(item))
                )
                : null
            ]
          })()
      ),
      el(
        "section",
        { "aria-labelledby": "h-req" },
        el("h2", { id: "h-req", text: "The request, as sent" }),
        messages(c, sessionId)
      )
    ))
  } catch (e) {
    main.append(errorBox(e))
  }
}
