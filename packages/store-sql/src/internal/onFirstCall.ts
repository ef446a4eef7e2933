/**
 * A function made on its first call: a Schema parser is compiled when it is made, so a module
 * that made its parsers at load would make every process importing it pay for them (decision 0107,
 * as core's own `internal/onFirstCall.ts`).
 *
 * @internal
 */
export const onFirstCall = <F extends (...args: Array<any>) => any>(make: () => F): F => {
  let made: F | undefined
  return ((...args: Parameters<F>): ReturnType<F> => (made ??= make())(...args)) as F
}
