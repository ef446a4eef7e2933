#!/usr/bin/env node
/**
 * The `engram` executable.
 *
 * A bare `engram --version` is answered here, before anything else loads; every other command line
 * loads the runner (`Cli.main`), whose commands in turn load only what they use.
 *
 * @since 0.1.0
 */
import type * as ExitType from "effect/Exit"
import { VERSION } from "./Version.js"

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  const [NodeContext, NodeRuntime, Cause, Effect, Exit, Option, Cli, { CliFailure, ExitCode }] = await Promise.all([
    import("@effect/platform-node/NodeContext"),
    import("@effect/platform-node/NodeRuntime"),
    import("effect/Cause"),
    import("effect/Effect"),
    import("effect/Exit"),
    import("effect/Option"),
    import("./Cli.js"),
    import("./CliError.js")
  ])

  const exitCodeOf = <A, E>(exit: ExitType.Exit<A, E>): number => {
    if (Exit.isSuccess(exit)) return ExitCode.ok
    if (Cause.isInterruptedOnly(exit.cause)) return 130
    return Option.match(Cause.failureOption(exit.cause), {
      onNone: () => ExitCode.refused,
      onSome: (failure) => (failure instanceof CliFailure ? failure.exitCode : ExitCode.refused)
    })
  }

  Cli.main(process.argv).pipe(
    Effect.provide(NodeContext.layer),
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown: (exit, onExit) => onExit(exitCodeOf(exit))
    })
  )
}
