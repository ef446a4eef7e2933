/**
 * The shape of a content-derived placement key (`Routing.contentKey`): `c-` and 16 hex digits.
 * Slugs never contain `-`, so no label folds to one. Shared by routing (which makes them) and the
 * Background renderer (which never shows them).
 *
 * @internal
 */
export const CONTENT_KEY = /^c-[0-9a-f]{16}$/
