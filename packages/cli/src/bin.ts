#!/usr/bin/env node
/**
 * The `engram` executable.
 *
 * A bare `engram --version` is answered here, before anything else loads; every other command line
 * loads the runner (`Cli.main`), whose commands in turn load only what they use. The runner gets
 * the three platform services `@effect/cli` asks for (file system, path, terminal), not all of
 * `NodeContext`: its command executor and worker pool pull in code no command uses. TurboFan waits
 * for the first CPU-second (`internal/startupTiering.ts`, decision 0107).
 *
 * @since 0.1.0
 */
import type * as ExitType from "effect/Exit"
import { holdBackOptimization } from "./internal/startupTiering.js"
import { VERSION } from "./Version.js"

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  holdBackOptimization()
  const [NodeFileSystem, NodePath, NodeTerminal, NodeRuntime, Cause, Effect, Exit, Layer, Option, Cli, {
    CliFailure,
    ExitCode
  }] = await Promise.all([
    import("@effect/platform-node/NodeFileSystem"),
    import("@effect/platform-node/NodePath"),
    import("@effect/platform-node/NodeTerminal"),
    import("@effect/platform-node/NodeRuntime"),
    import("effect/Cause"),
    import("effect/Effect"),
    import("effect/Exit"),
    import("effect/Layer"),
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
    Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)),
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown: (exit, onExit) => onExit(exitCodeOf(exit))
    })
  )
}
