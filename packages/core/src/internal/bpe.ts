/**
 * OpenAI's byte-pair encodings from `gpt-tokenizer`, loaded on first use: the tables (a few MB,
 * about half a second to parse) are a dynamic import, so importing `@engram/core` costs nothing
 * until a projection first counts tokens. Text that spells a special token (`<|endoftext|>`) is
 * counted as ordinary text: a count never fails.
 *
 * @internal
 */
export type Encoding = "o200k_base" | "cl100k_base"

const asText = { disallowedSpecial: new Set<string>() }
const loaded = new Map<Encoding, Promise<(text: string) => number>>()

/** The token count of `encoding`, its tables loaded once per process. */
export const load = (encoding: Encoding): Promise<(text: string) => number> => {
  let counter = loaded.get(encoding)
  if (counter === undefined) {
    counter = (encoding === "o200k_base"
      ? import("gpt-tokenizer/encoding/o200k_base")
      : import("gpt-tokenizer/encoding/cl100k_base")).then((bpe) => (text: string) =>
        text === "" ? 0 : bpe.countTokens(text, asText)
      )
    loaded.set(encoding, counter)
  }
  return counter
}
