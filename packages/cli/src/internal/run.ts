/**
 * The runner of every command line but a bare `--version`: `Cli.main` with the three platform
 * services `@effect/cli` asks for (file system, path, terminal), not all of `NodeContext` — its
 * command executor and worker pool pull in code no command uses.
 *
 * Loaded by `bin.ts` with one dynamic import, so the bundle has one entry point for the whole
 * start-up path: each separate `import()` is an entry of its own, and esbuild splits the modules
 * that several entries share into chunks, each a file Node resolves, reads and links (decision 0119).
 *
 * @internal
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Cli from "../Cli.js"
import { CliFailure, ExitCode } from "../CliError.js"

const exitCodeOf = <A, E>(exit: Exit.Exit<A, E>): number => {
  if (Exit.isSuccess(exit)) return ExitCode.ok
  if (Cause.isInterruptedOnly(exit.cause)) return 130
  return Option.match(Cause.failureOption(exit.cause), {
    onNone: () => ExitCode.refused,
    onSome: (failure) => (failure instanceof CliFailure ? failure.exitCode : ExitCode.refused)
  })
}

/** Runs the command line `argv` (`process.argv`) and exits with its exit code. */
export const run = (argv: ReadonlyArray<string>): void =>
  Cli.main(argv).pipe(
    Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)),
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown: (exit, onExit) => onExit(exitCodeOf(exit))
    })
  )
