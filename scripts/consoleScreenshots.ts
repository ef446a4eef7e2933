/**
 * Screenshots of every console view for docs/guides/console.md, taken on the seeded store the
 * browser test uses (test/support/consoleStore.ts) in Debian's Chromium:
 *
 *   npm run console:screenshots        # writes docs/guides/console/*.png
 *
 * Set ENGRAM_CHROMIUM to use another Chromium binary.
 */
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { launch, signIn, visit } from "../test/support/consoleBrowser.js"
import { SESSION, SHED_TURN, startSeededConsole } from "../test/support/consoleStore.js"

const out = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../docs/guides/console")

const main = async () => {
  mkdirSync(out, { recursive: true })
  const seeded = await startSeededConsole()
  const browser = await launch()
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
    page.setDefaultTimeout(60_000)
    const shoot = async (name: string) => {
      await page.screenshot({ path: Path.join(out, `${name}.png`), fullPage: true })
      console.log(`docs/guides/console/${name}.png`)
    }
    // One forgotten memory, so the tombstones view has a row: written after the session, so its
    // stored calls stay byte-exact.
    const headers = { authorization: `Bearer ${seeded.token}`, "content-type": "application/json" }
    const note = await (await fetch(`${seeded.base}/api/memories`, {
      method: "POST",
      headers,
      body: JSON.stringify({ content: "A note written by mistake", kind: "note", sourceType: "operator" })
    })).json() as { record: { id: string } }
    await fetch(`${seeded.base}/api/memories/${note.record.id}`, { method: "DELETE", headers })
    await page.goto(seeded.base + "/")
    await page.getByTestId("token").waitFor()
    await shoot("sign-in")
    await signIn(page, seeded.base, seeded.token)
    await shoot("memories")
    const lessons = seeded.ids.get("French lessons are on Tuesday evenings")!
    await visit(page, `#/memory/${seeded.successor}`)
    await page.locator("[data-testid=explain] p").first().waitFor()
    await shoot("memory")
    await visit(page, `#/explain/${lessons}?session=${SESSION}`)
    await page.locator("[data-testid=explain] li[data-call]").first().waitFor()
    await shoot("explain")
    await visit(page, "#/review")
    await page.locator("[data-testid=queue] tbody tr").first().focus()
    await page.keyboard.press("x")
    await shoot("review")
    await visit(page, "#/new")
    await shoot("create")
    await visit(page, `#/memory/${seeded.ids.get("The exam is in June")}`)
    await page.getByTestId("detail-forget").click()
    await shoot("forget")
    await visit(page, "#/tombstones")
    await shoot("tombstones")
    await visit(page, "#/sessions")
    await shoot("sessions")
    // The call whose projection shed recalled memories: its chart shows the shed part of the bar.
    await visit(page, `#/call/${SESSION}/${SHED_TURN}/0`)
    await shoot("call")
    await visit(page, "#/agent")
    await shoot("agent")
    await visit(page, `#/preview?q=${encodeURIComponent("when are the French lessons")}&scope=project%3Aa`)
    await shoot("preview")
    await page.setViewportSize({ width: 375, height: 760 })
    await visit(page, "#/review")
    await shoot("review-phone")
  } finally {
    await browser.close()
    await seeded.stop()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
