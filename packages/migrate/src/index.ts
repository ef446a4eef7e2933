/**
 * @engram/migrate — copying a whole Engram store from one backend to another: memory records with
 * their lifecycle and promotion rows (`StoreMigration`), sessions and the injection log
 * (`SessionMigration`), resumable and verified by digest. The store packages open each side
 * (`SqliteMigration.open`, `PgMigration.open`); `engram migrate` runs the copy.
 *
 * @since 0.1.0
 */
export * as SessionMigration from "./SessionMigration.js"
export * as StoreMigration from "./StoreMigration.js"
