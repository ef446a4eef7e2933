/**
 * The console's session and its client for the HTTP API: the signed-in token (kept in the tab's
 * `sessionStorage`, so it ends with the tab), who it is, and one function per route the console
 * calls, each typed with the route's answer (`answers.ts`).
 */
import type * as Answers from "./answers.js"

/** A message for the status line, carried across a re-render. */
export interface Flash {
  readonly message: string
  readonly kind: string
}

/** The signed-in session: the token, what the server said it is, and a message waiting to be shown. */
export interface Session {
  token: string | null
  access: Answers.Access | null
  flash: Flash | null
}

/** The tab's session. */
export const state: Session = { token: sessionStorage.getItem("engram-token"), access: null, flash: null }

/** Whether the signed-in token may write. */
export const writable = (): boolean => state.access !== null && !state.access.readOnly

/** The message of a failed request, as the page shows it. */
export const messageOf = (error: unknown): string => error instanceof Error ? error.message : String(error)

/**
 * Sends one request with the token. A 401 signs the tab out (the `engram-signed-out` event
 * carries the server's message); any other failure rejects with the server's message. The
 * answer is the JSON the route's schema encoded: the page reads it as that type without decoding
 * it again (decoding would ship the schemas' code to the browser).
 */
const request = async <A>(method: string, path: string, body?: unknown): Promise<A> => {
  const response = await fetch(path, {
    method,
    headers: { authorization: "Bearer " + state.token, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : null
  })
  const json: { readonly message?: string } = await response.json().catch(() => ({}))
  if (response.status === 401) {
    sessionStorage.removeItem("engram-token")
    state.token = null
    state.access = null
    window.dispatchEvent(new CustomEvent<string | undefined>("engram-signed-out", { detail: json.message }))
  }
  if (!response.ok) throw new Error(json.message || ("HTTP " + response.status))
  return json as A
}

const memory = (id: string) => "/api/memories/" + encodeURIComponent(id)

/** The routes the console calls. */
export const api = {
  access: () => request<Answers.Access>("GET", "/api/access"),
  browse: (query: URLSearchParams | string) => request<Answers.BrowsePage>("GET", "/api/memories/browse?" + query),
  detail: (id: string) => request<Answers.Detail>("GET", memory(id)),
  create: (body: Answers.WriteInput) => request<Answers.Created>("POST", "/api/memories", body),
  review: (id: string, body: Answers.ReviewBody) => request<Answers.RecordAnswer>("POST", memory(id) + "/review", body),
  reviewMany: (body: Answers.BulkReviewBody) => request<Answers.RecordsAnswer>("POST", "/api/memories/review", body),
  supersede: (id: string, body: Answers.WriteInput) =>
    request<Answers.Superseded>("POST", memory(id) + "/supersede", body),
  expire: (id: string) => request<Answers.RecordAnswer>("POST", memory(id) + "/expire"),
  forget: (id: string) => request<Answers.Forgotten>("DELETE", memory(id)),
  tombstones: (scope: string) =>
    request<Answers.Forgotten>("GET", "/api/tombstones?scope=" + encodeURIComponent(scope)),
  explain: (id: string, query: URLSearchParams) =>
    request<Answers.Explanation>("GET", memory(id) + "/explain?" + query),
  sessions: () => request<Answers.Sessions>("GET", "/api/sessions"),
  inspect: (sessionId: string, query = "") =>
    request<Answers.Inspected>("GET", "/api/sessions/" + encodeURIComponent(sessionId) + "/inspect" + query),
  agent: (scope: string) => request<Answers.Agent>("GET", "/api/agent?scope=" + encodeURIComponent(scope)),
  projection: (query: URLSearchParams) => request<Answers.Projection>("GET", "/api/projection?" + query)
}
