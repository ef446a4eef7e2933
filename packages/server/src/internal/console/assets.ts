/**
 * The review console, as the files the server serves: the page at `/` (markup only — no inline
 * script or style, so the strict content security policy holds), its style sheet and one ES
 * module per view under `/console/`. No build step, no framework, no third-party script. It
 * talks only to `/api` with the bearer token the operator signs in with (kept in
 * `sessionStorage`, so it ends with the tab). Every value from the store is inserted as text.
 */
import { agent } from "./agent.js"
import { app } from "./app.js"
import { dom } from "./dom.js"
import { explain } from "./explain.js"
import { memories } from "./memories.js"
import { preview } from "./preview.js"
import { review } from "./review.js"
import { sessions } from "./sessions.js"
import { style } from "./style.js"

/** The page, served at `/`. */
export const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Engram console</title>
<link rel="stylesheet" href="/console/console.css">
<script type="module" src="/console/app.js"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>`

const javascript = "text/javascript; charset=utf-8"

/** The files under `/console/`, by name, with their content type. */
export const files: ReadonlyMap<string, { readonly contentType: string; readonly body: string }> = new Map([
  ["console.css", { contentType: "text/css; charset=utf-8", body: style }],
  ["app.js", { contentType: javascript, body: app }],
  ["dom.js", { contentType: javascript, body: dom }],
  ["memories.js", { contentType: javascript, body: memories }],
  ["review.js", { contentType: javascript, body: review }],
  ["sessions.js", { contentType: javascript, body: sessions }],
  ["explain.js", { contentType: javascript, body: explain }],
  ["agent.js", { contentType: javascript, body: agent }],
  ["preview.js", { contentType: javascript, body: preview }]
])
