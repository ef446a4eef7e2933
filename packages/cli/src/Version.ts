/**
 * The version `engram --version` prints. Its own module, importing nothing: `bin.ts` answers a
 * bare `engram --version` from it without loading the command tree.
 *
 * @since 0.1.0
 */

/**
 * The version `engram --version` prints.
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION = "0.1.0"
