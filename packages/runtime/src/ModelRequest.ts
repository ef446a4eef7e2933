/**
 * The model-visible request of one model call, composed from its three layers — and attributed,
 * byte by byte, to where it came from.
 *
 * ```text
 * system     the stable prefix (the built agent's sections, joined by a blank line)
 * …          the session history as stored (legacy context frames stripped)
 * user       the turn's operator input
 * user       the turn's projection             ← composed for this turn, never stored
 * assistant  the turn's tool rounds so far     (assistant tool calls, tool results)
 * tool
 * ```
 *
 * The projection sits right after the operator input that opened the turn, and stays there for
 * every call of the turn: what precedes it is the conversation exactly as stored (a provider can
 * cache it), the model reads the freshest derived context just before it starts answering, and a
 * tool round appends after it without moving it. On the next turn the old projection is gone and
 * a new one follows the new input, so a session never carries more than one.
 *
 * {@link compose} is pure: the same prefix, stored messages and projection always give the same
 * prompt, byte for byte. The live agent loop and {@link Replay} both build requests through it.
 *
 * @since 0.1.0
 */
import * as Prompt from "@effect/ai/Prompt"
import { ProjectionLayout, PromptFragment, SessionStore } from "@engram/core"

/**
 * Where a fragment of a request came from:
 *
 * - `prefix`: the stable prefix (authored by the agent's author, or a promoted memory);
 * - `history`: a stored message of an earlier turn;
 * - `operator`: the operator input that opened this turn;
 * - `projection`: the projected context of this turn (never stored);
 * - `turn`: an assistant or tool message of this turn's earlier rounds.
 *
 * @since 0.1.0
 * @category models
 */
export type FragmentSource = "prefix" | "history" | "operator" | "projection" | "turn"

/**
 * One attributed slice of a request. `message` is the index of the prompt message it belongs to;
 * `label` names the part (a prefix section's name, a projection section's label, or the stored
 * message's kind); `memoryIds` lists the memories its bytes came from (empty for authored and
 * conversational text).
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestFragment {
  readonly message: number
  readonly role: Prompt.Message["role"]
  readonly source: FragmentSource
  readonly label: string
  readonly text: string
  readonly memoryIds: ReadonlyArray<string>
}

/**
 * A composed request: the prompt as the model receives it, its attribution, and how many stored
 * legacy context frames were stripped from it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelRequest {
  readonly prompt: Prompt.Prompt
  readonly fragments: ReadonlyArray<RequestFragment>
  readonly strippedFrames: number
}

/**
 * What a request is composed from.
 *
 * - `prefix`: the built agent's stable prefix.
 * - `history`: the session's stored messages from before this turn (legacy frames are stripped).
 * - `input`: the operator message that opened the turn.
 * - `rounds`: the turn's stored assistant and tool messages so far (empty on the first call).
 * - `projection`: the turn's projection.
 * - `cacheHints`: provider options marking a prompt-cache breakpoint (see {@link CACHE_HINTS}),
 *   put on the two messages that end a cacheable run: the system message (the end of the stable
 *   prefix) and the turn's operator input (the rolling boundary: everything up to it is the
 *   stored conversation, and is the history of the next turn). Never on the projection or after
 *   it. Absent: no hints.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestInput {
  readonly prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>
  readonly history: ReadonlyArray<SessionStore.SessionMessage>
  readonly input: SessionStore.OperatorMessage
  readonly rounds: ReadonlyArray<SessionStore.SessionMessage>
  readonly projection: ProjectionLayout.ProjectedContext
  readonly cacheHints?: Prompt.ProviderOptions | undefined
}

/**
 * The default cache hints: Anthropic's ephemeral cache control, which `@effect/ai-anthropic`
 * sends as `cache_control` on the marked system block and user message. Other providers ignore
 * the `anthropic` key (OpenAI caches long shared prefixes by itself, without hints).
 *
 * @since 0.1.0
 * @category constants
 */
export const CACHE_HINTS: Prompt.ProviderOptions = { anthropic: { cacheControl: { type: "ephemeral" } } }

const withOptions = (message: Prompt.Message, options: Prompt.ProviderOptions): Prompt.Message => {
  switch (message.role) {
    case "system":
      return Prompt.systemMessage({ content: message.content, options })
    case "user":
      return Prompt.userMessage({ content: message.content, options })
    case "assistant":
      return Prompt.assistantMessage({ content: message.content, options })
    case "tool":
      return Prompt.toolMessage({ content: message.content, options })
  }
}

// ---------------------------------------------------------------------------------------------
// The projection, attributed by section
// ---------------------------------------------------------------------------------------------

/**
 * A slice of a projection's text: a section's block (its tags included) with the memories it
 * delivered, or `envelope` — the `<injected_memory>` tags, the framing line and the blank lines
 * between blocks.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProjectionSlice {
  readonly label: ProjectionLayout.SectionLabel | "envelope"
  readonly text: string
  readonly memoryIds: ReadonlyArray<string>
}

const sectionOpen: ReadonlyMap<string, ProjectionLayout.SectionLabel> = new Map(
  ProjectionLayout.SECTION_ORDER.map((label) => [`<${label}>`, label] as const)
)

/**
 * Cuts a projection's text into per-section slices whose texts, joined, are exactly the text.
 * Section tags can be recognised line by line because the composer neutralizes every tag-like
 * sequence in its inputs: only the composer writes a tag alone on its line.
 *
 * @since 0.1.0
 * @category attribution
 */
export const sliceProjection = (projection: ProjectionLayout.ProjectedContext): ReadonlyArray<ProjectionSlice> => {
  const slices: Array<ProjectionSlice> = []
  const push = (label: ProjectionSlice["label"], text: string) => {
    const last = slices[slices.length - 1]
    if (last !== undefined && last.label === label) {
      slices[slices.length - 1] = { ...last, text: last.text + text }
    } else {
      const memoryIds = label === "envelope" ? [] : projection.section(label)?.memoryIds ?? []
      slices.push({ label, text, memoryIds })
    }
  }
  let current: ProjectionLayout.SectionLabel | undefined
  for (const line of projection.text.split(/(?<=\n)/)) {
    const bare = line.endsWith("\n") ? line.slice(0, -1) : line
    const opened = sectionOpen.get(bare)
    if (current === undefined && opened !== undefined) current = opened
    push(current ?? "envelope", line)
    if (current !== undefined && bare === `</${current}>`) current = undefined
  }
  return slices
}

// ---------------------------------------------------------------------------------------------
// Composing
// ---------------------------------------------------------------------------------------------

const json = (value: unknown): string => JSON.stringify(value) ?? "null"

interface Converted {
  readonly prompt: Prompt.Message
  readonly text: string
}

const toMessage = (message: SessionStore.SessionMessage): Converted | undefined => {
  switch (message._tag) {
    case "OperatorMessage":
      return { prompt: Prompt.userMessage({ content: [Prompt.textPart({ text: message.text })] }), text: message.text }
    case "AssistantMessage": {
      const content: Array<Prompt.AssistantMessagePart> = []
      const lines: Array<string> = []
      if (message.text !== "") {
        content.push(Prompt.textPart({ text: message.text }))
        lines.push(message.text)
      }
      for (const call of message.toolCalls) {
        content.push(
          Prompt.toolCallPart({ id: call.id, name: call.name, params: call.params, providerExecuted: false })
        )
        lines.push(`→ ${call.name}(${json(call.params)}) [${call.id}]`)
      }
      return content.length === 0 ? undefined : { prompt: Prompt.assistantMessage({ content }), text: lines.join("\n") }
    }
    case "ToolMessage": {
      if (message.results.length === 0) return undefined
      return {
        prompt: Prompt.toolMessage({
          content: message.results.map((result) =>
            Prompt.toolResultPart({
              id: result.id,
              name: result.name,
              isFailure: result.isFailure,
              result: result.result,
              providerExecuted: false
            })
          )
        }),
        text: message.results
          .map((result) =>
            `← ${result.name}${result.isFailure ? " (failed)" : ""}: ${json(result.result)} [${result.id}]`
          )
          .join("\n")
      }
    }
  }
}

/**
 * Composes the request of one model call: the stable prefix as the system message, the stored
 * history (legacy frames stripped), the turn's operator input, the projection (left out when
 * empty), then the turn's rounds so far — with every fragment attributed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compose = (input: RequestInput): ModelRequest => {
  const messages: Array<Prompt.Message> = []
  const fragments: Array<RequestFragment> = []
  const add = (
    message: Prompt.Message,
    parts: ReadonlyArray<Omit<RequestFragment, "message" | "role">>
  ) => {
    const index = messages.length
    messages.push(message)
    for (const part of parts) fragments.push({ message: index, role: message.role, ...part })
  }

  if (input.prefix.length > 0) {
    const parts: Array<Omit<RequestFragment, "message" | "role">> = []
    input.prefix.forEach((section, s) => {
      section.fragments.forEach((fragment, f) => {
        parts.push({
          source: "prefix",
          label: section.name,
          // Sections are joined by a blank line; it is carried by the first fragment of the next one.
          text: s > 0 && f === 0 ? `\n\n${fragment.text}` : fragment.text,
          memoryIds: fragment.source === "memory" ? fragment.memoryIds : []
        })
      })
    })
    add(Prompt.systemMessage({ content: PromptFragment.joinPrompt(input.prefix) }), parts)
  }

  const addStored = (message: SessionStore.SessionMessage, source: FragmentSource) => {
    const converted = toMessage(message)
    if (converted !== undefined) {
      add(converted.prompt, [{ source, label: message._tag, text: converted.text, memoryIds: [] }])
    }
  }

  const history = SessionStore.modelView(input.history)
  for (const message of history.messages) addStored(message, "history")
  const inputIndex = messages.length
  addStored(input.input, "operator")
  const hints = input.cacheHints
  if (hints !== undefined) {
    // The end of the stable prefix, and the rolling boundary: both before the projection.
    if (input.prefix.length > 0) messages[0] = withOptions(messages[0]!, hints)
    if (messages.length > inputIndex) messages[inputIndex] = withOptions(messages[inputIndex]!, hints)
  }
  if (!input.projection.isEmpty) {
    add(
      Prompt.userMessage({ content: [Prompt.textPart({ text: input.projection.text })] }),
      sliceProjection(input.projection).map((slice) => ({ source: "projection", ...slice }))
    )
  }
  const rounds = SessionStore.modelView(input.rounds)
  for (const message of rounds.messages) addStored(message, "turn")

  return {
    prompt: Prompt.fromMessages(messages),
    fragments,
    strippedFrames: history.stripped + rounds.stripped + (SessionStore.isLegacyContextFrame(input.input) ? 1 : 0)
  }
}

/**
 * The distinct memory ids a request carries, in first-seen order.
 *
 * @since 0.1.0
 * @category attribution
 */
export const memoryIdsOf = (request: Pick<ModelRequest, "fragments">): ReadonlyArray<string> => {
  const ids = new Set<string>()
  for (const fragment of request.fragments) for (const id of fragment.memoryIds) ids.add(id)
  return [...ids]
}
