/**
 * Addresses: every view has one in the page's hash (`#/memories?q=…`, `#/memory/<id>`,
 * `#/explain/<id>?session=…`, `#/review`, `#/sessions`, `#/session/<id>`,
 * `#/call/<session>/<turn>/<call>`, `#/agent`, `#/preview`, `#/new`, `#/tombstones`), so the back
 * button works and a view can be linked.
 */

/** Opens the view at `hash`; with `replace`, in place of the current history entry. */
export type Go = (hash: string, replace?: boolean) => void

/** An address taken apart: the view, its path arguments and its query. */
export interface Address {
  readonly view: string
  readonly args: ReadonlyArray<string>
  readonly params: URLSearchParams
}

/** The address in `hash` (`#/<view>/<arg>…?<query>`); the memories list when it names no view. */
export const parse = (hash: string): Address => {
  const raw = hash.replace(/^#\/?/, "")
  const [path = "", query] = raw.split("?")
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent)
  return { view: parts[0] || "memories", args: parts.slice(1), params: new URLSearchParams(query || "") }
}
