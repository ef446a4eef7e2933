/**
 * A function made on its first call. A Schema decoder, encoder or guard (`Schema.decodeUnknownEither`
 * and the like) compiles its parser when it is made; a module that makes its parsers at load makes
 * every process that imports it pay for parsers it may never call (the CLI's start-up, decision
 * 0107). Wrapped, the parser is compiled on the first call and reused after.
 *
 * @internal
 */
export const onFirstCall = <F extends (...args: Array<any>) => any>(make: () => F): F => {
  let made: F | undefined
  return ((...args: Parameters<F>): ReturnType<F> => (made ??= make())(...args)) as F
}
