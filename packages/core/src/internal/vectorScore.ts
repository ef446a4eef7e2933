/**
 * Vector similarities are rounded to six decimals before they are ranked, on every backend: the
 * same vectors summed in 32-bit (sqlite-vec) or 64-bit floats differ in the last bits, and the
 * id breaks the ties that rounding makes, so every backend returns the same top k.
 *
 * @internal
 */
export const SCORE_DECIMALS = 6

export const roundScore = (score: number): number => Math.round(score * 1e6) / 1e6
