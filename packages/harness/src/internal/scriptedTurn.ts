/**
 * The environment an eval turn runs in: the projection settings under test, the scripted model,
 * a capture of every request the model receives, and in-memory session and telemetry stores.
 * One definition for every eval family, so each family measures the same runtime.
 *
 * @internal
 */
import { ContextProjection, SessionStore, TelemetryStore } from "@engram/core"
import { PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Layer from "effect/Layer"
import type { EvalOptions } from "../Eval.js"

export const scriptedTurnLayer = (options: EvalOptions, script: ScriptedModel.Script) =>
  Layer.mergeAll(
    ContextProjection.layerSettings(options.projection ?? {}),
    ScriptedModel.layer(script),
    PromptObserver.layerCapture
  ).pipe(Layer.provideMerge(Layer.merge(SessionStore.layerMemory, TelemetryStore.layerMemory)))
