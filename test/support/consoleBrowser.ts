/// <reference lib="dom" />
/**
 * Driving the console in Debian's Chromium (playwright-core, no browser download) for the
 * browser test and the screenshot script: launching, signing in, the accessibility check (axe-core,
 * evaluated in the page over the DevTools protocol, which the page's content security policy does
 * not govern) and the overflow check.
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { type Browser, chromium, type Page } from "playwright-core"

export const chromiumPath = process.env.ENGRAM_CHROMIUM ??
  ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path)) ?? "/usr/bin/chromium"

export const launch = (): Promise<Browser> => {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium not found at ${chromiumPath}: apt-get install -y chromium (or set ENGRAM_CHROMIUM)`)
  }
  return chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-gpu"] })
}

/** Signs in on the login form and waits for the memories list. */
export const signIn = async (page: Page, base: string, token: string) => {
  await page.goto(base + "/#/memories")
  await page.getByTestId("token").fill(token)
  await page.getByTestId("login").click()
  await page.getByTestId("who").waitFor()
  await page.getByTestId("total").waitFor()
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

/** The serious and critical axe violations of the page as it is now (WCAG 2 A and AA rules). */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as {
      axe: {
        run: (
          context: Document,
          options: unknown
        ) => Promise<
          {
            violations: Array<
              { id: string; impact: string | null; help: string; nodes: Array<{ target: Array<string> }> }
            >
          }
        >
      }
    }).axe
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa"] } })
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((node) => node.target.join(" "))
    }))
  })
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
}

/** How much wider than the viewport the page is (0: no horizontal overflow). */
export const overflow = (page: Page): Promise<number> =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

/** Runs `act` and waits for the view it leads to have rendered (`main#view[data-ready]`). */
export const settle = async (page: Page, act: () => Promise<unknown>) => {
  await page.evaluate(() => document.querySelector("main#view")?.removeAttribute("data-ready"))
  await act()
  await page.locator("main#view[data-ready=true]").waitFor()
}

/** Opens a view by its address (`#/review`, `#/memory/<id>`…). */
export const visit = (page: Page, hash: string) =>
  settle(page, () =>
    page.evaluate((h) => {
      // The same address again re-renders the view, as the console's own links do.
      if (location.hash === h) window.dispatchEvent(new HashChangeEvent("hashchange"))
      else location.hash = h
    }, hash))
