/**
 * The environment an eval turn runs in: the projection (its defaults: the settings under test are
 * the agent's own, `EvalOptions.projection` in each family's agent config), the scripted model,
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

export const scriptedTurnLayer = (_options: EvalOptions, script: ScriptedModel.Script) =>
  Layer.mergeAll(
    ContextProjection.layer,
    ScriptedModel.layer(script),
    PromptObserver.layerCapture
  ).pipe(Layer.provideMerge(Layer.merge(SessionStore.layerMemory, TelemetryStore.layerMemory)))
