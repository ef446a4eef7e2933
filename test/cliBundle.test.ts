/**
 * The executable's build (scripts/cliBundle.ts): a rebuild replaces the chunks of the one before.
 * Chunk names carry content hashes, so without that every rebuild would leave the old chunks
 * beside the new ones and `npm run pack` would ship them in the CLI's tarball.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { bundleCli } from "../scripts/cliBundle.js"
import { bundleDir } from "./support/bundle.js"

const outdir = bundleDir("cli-bundle")
afterAll(() => NodeFs.rmSync(outdir, { recursive: true, force: true }))

describe("bundleCli", () => {
  it("writes exactly the files of this build: an earlier build's chunks are gone", { timeout: 120_000 }, async () => {
    const stale = NodePath.join(outdir, "chunks", "Stale-OLDHASH.js")
    NodeFs.mkdirSync(NodePath.dirname(stale), { recursive: true })
    NodeFs.writeFileSync(stale, "export {}\n")
    const written = await bundleCli(outdir)
    const chunks = NodeFs.readdirSync(NodePath.join(outdir, "chunks")).map((file) => `chunks/${file}`).sort()
    const expected = written.map(([file]) => NodePath.relative(outdir, NodePath.resolve(file)))
      .filter((file) => file.startsWith("chunks/")).sort()
    expect(NodeFs.existsSync(stale)).toBe(false)
    expect(chunks).toEqual(expected)
  })
})
