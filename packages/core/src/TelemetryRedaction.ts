/**
 * Removing forgotten memories' text from what the telemetry store holds. When a memory is
 * forgotten (`MemoryStore.forget`), every stored trajectory entry that held its text is rewritten
 * (`Trajectory.redactEntry`: a message keeps its position, a blob gets the hash of its new body),
 * and every prompt snapshot that referred to a changed entry is re-pointed at it, its full text
 * scrubbed, and lists the memory in `redacted`. {@link planForget} decides what changes and
 * {@link redactSnapshot} rewrites one snapshot; both are pure, and every backend's
 * `TelemetryStore.forgetMemories` runs them.
 *
 * @since 0.1.0
 */
import * as PromptSnapshot from "./PromptSnapshot.js"
import * as Trajectory from "./Trajectory.js"

/**
 * The redactions of a set of stored entries: each changed entry (before and after), and per
 * session the blobs that got a new hash and the message positions that changed, with the ids
 * whose text each held.
 *
 * @since 0.1.0
 * @category forgetting
 */
export interface ForgetPlan<K> {
  readonly changed: ReadonlyArray<{
    readonly key: K
    readonly sessionId: string
    readonly before: Trajectory.TrajectoryEntry
    readonly after: Trajectory.TrajectoryEntry
  }>
  readonly blobs: ReadonlyMap<
    string,
    ReadonlyMap<string, { readonly hash: string; readonly ids: ReadonlyArray<string> }>
  >
  readonly messages: ReadonlyMap<string, ReadonlyMap<number, ReadonlyArray<string>>>
}

/**
 * Plans the redaction of stored entries (each keyed by the backend's row key). Pure; every
 * backend forgets with it and {@link redactSnapshot}.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const planForget = <K>(
  entries: ReadonlyArray<{ readonly key: K; readonly sessionId: string; readonly entry: Trajectory.TrajectoryEntry }>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): ForgetPlan<K> => {
  const changed: Array<ForgetPlan<K>["changed"][number]> = []
  const blobs = new Map<string, Map<string, { hash: string; ids: ReadonlyArray<string> }>>()
  const messages = new Map<string, Map<number, ReadonlyArray<string>>>()
  for (const { entry, key, sessionId } of entries) {
    const redacted = Trajectory.redactEntry(entry, forgotten)
    if (redacted === undefined) continue
    changed.push({ key, sessionId, before: entry, after: redacted.entry })
    if (entry._tag === "Message") {
      const m = messages.get(sessionId) ?? new Map()
      m.set(entry.seq, redacted.ids)
      messages.set(sessionId, m)
    } else {
      const b = blobs.get(sessionId) ?? new Map()
      b.set(entry.hash, { hash: redacted.entry.hash, ids: redacted.ids })
      blobs.set(sessionId, b)
    }
  }
  return { changed, blobs, messages }
}

/**
 * The snapshot re-pointed at the redacted entries of `plan`, its full text scrubbed, listing the
 * forgotten memories it was affected by in `redacted` — or `undefined` when nothing it refers to
 * changed. Pure.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const redactSnapshot = (
  snapshot: PromptSnapshot.PromptSnapshot,
  plan: ForgetPlan<unknown>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): PromptSnapshot.PromptSnapshot | undefined => {
  const ids = new Set<string>()
  const blobs = plan.blobs.get(snapshot.sessionId)
  const remap = (hash: string | null) => {
    const to = hash === null ? undefined : blobs?.get(hash)
    if (to === undefined) return hash
    for (const id of to.ids) ids.add(id)
    return to.hash
  }
  const prefix = remap(snapshot.prefix.hash)
  const projection = remap(snapshot.projection.hash)
  for (const [seq, held] of plan.messages.get(snapshot.sessionId) ?? []) {
    if (seq < snapshot.messages.count) { for (const id of held) ids.add(id) }
  }
  let fullText = snapshot.fullText
  if (fullText !== null) {
    const scrubbed = Trajectory.scrubText(fullText.text, forgotten)
    if (scrubbed.ids.length > 0) {
      fullText = { ...fullText, text: scrubbed.text }
      for (const id of scrubbed.ids) ids.add(id)
    }
  }
  if (ids.size === 0) return undefined
  return new PromptSnapshot.PromptSnapshot({
    ...snapshot,
    prefix: { ...snapshot.prefix, hash: prefix },
    projection: { ...snapshot.projection, hash: projection },
    fullText,
    redacted: [...new Set([...snapshot.redacted, ...ids])].sort()
  }, { disableValidation: true })
}
