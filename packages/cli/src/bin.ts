#!/usr/bin/env node
/**
 * The `engram` executable.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Cli from "./Cli.js"
import { CliFailure, ExitCode } from "./CliError.js"

const exitCodeOf = <A, E>(exit: Exit.Exit<A, E>): number => {
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
