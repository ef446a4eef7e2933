/**
 * Building the page's nodes. Every value from the store goes in as text (`textContent`, or a text
 * node), never as markup, and attributes are set one by one: nothing the server sends is parsed
 * as HTML.
 */

/** What an attribute may be given: text, a flag (`true` sets it empty, `false` leaves it out), or nothing. */
export type AttributeValue = string | boolean | null | undefined

/** An event listener, set with an `on…` key (`onclick`, `onsubmit`, `onchange`). */
export type Listener = (event: Event) => void | Promise<void>

/**
 * An element's attributes: `text` becomes its text content, `on…` keys its listeners, and every
 * other key an attribute.
 */
export interface Attributes {
  readonly [name: string]: AttributeValue | Listener
}

/** What an element may hold: nodes, text, and nested lists of either; `null`, `undefined` and `false` are left out. */
export type Child = Node | string | null | undefined | false | ReadonlyArray<Child>

/** The first element under `root` matching `selector`. */
export const $ = (selector: string, root: ParentNode = document): Element | null => root.querySelector(selector)

const appendAll = (node: Node, child: Child): void => {
  if (child === null || child === undefined || child === false) return
  if (typeof child === "string") node.appendChild(document.createTextNode(child))
  else if (child instanceof Node) node.appendChild(child)
  else for (const each of child) appendAll(node, each)
}

/** An element with its attributes and children; every string goes in as text. */
export const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === "function") node.addEventListener(key.slice(2), value)
    else if (key === "text") node.textContent = value === true ? "" : value
    else node.setAttribute(key, value === true ? "" : value)
  }
  appendAll(node, children)
  return node
}

/**
 * The nodes of `children`, flattened, with `null`, `undefined` and `false` left out: what
 * `append` and `replaceChildren` take (given `null` they would print "null").
 */
export const nodes = (...children: ReadonlyArray<Child>): Array<Node> => {
  const fragment = document.createDocumentFragment()
  appendAll(fragment, children)
  return [...fragment.childNodes]
}

/**
 * A form that stays on the page: sending it calls `submit` with its fields instead of loading
 * another page.
 */
export const form = (
  attributes: Attributes,
  submit: (data: FormData) => void | Promise<void>,
  ...children: ReadonlyArray<Child>
): HTMLFormElement => {
  const node: HTMLFormElement = el("form", {
    ...attributes,
    onsubmit: (event) => {
      event.preventDefault()
      return submit(new FormData(node))
    }
  }, ...children)
  return node
}

/** A link. */
export const link = (href: string, text: string, attributes: Attributes = {}): HTMLAnchorElement =>
  el("a", { href, ...attributes, text })
