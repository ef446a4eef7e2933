/**
 * The PostgreSQL schema names Engram accepts, as a rule that loads nothing else: the CLI checks a
 * `--pg-schema` while it reads the command line, before any PostgreSQL code is loaded.
 *
 * @since 0.1.0
 */

const schemaNamePattern = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * True for schema names Engram accepts: lowercase ASCII letters, digits and `_`, starting with a
 * letter or `_`, at most 63 characters (PostgreSQL's identifier limit) — names that never need
 * quoting.
 *
 * @since 0.1.0
 * @category schemas
 */
export const isSchemaName = (name: string): boolean => schemaNamePattern.test(name)
