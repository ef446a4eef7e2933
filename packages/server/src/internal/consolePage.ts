/** The console page (placeholder until the console lands). */
export const consolePage = `<!doctype html><html><head><title>Engram console</title></head><body></body></html>`
