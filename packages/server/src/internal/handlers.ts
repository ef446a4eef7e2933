import * as Layer from "effect/Layer"
import { layerAccess } from "./handlers/access.js"
import { layerComposition } from "./handlers/composition.js"
import { layerMemories } from "./handlers/memories.js"
import { layerSessions } from "./handlers/sessions.js"
import type { ServerConfig } from "./handlers/shared.js"

export { authorization } from "./handlers/access.js"
export type { ServerConfig } from "./handlers/shared.js"

/** The handlers of every group (one module per `EngramApi` group), over the stores, the projection and the agent config. */
export const layerHandlers = (config: ServerConfig) =>
  Layer.mergeAll(layerMemories(config), layerComposition(config), layerSessions, layerAccess)
