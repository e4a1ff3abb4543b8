// Helpers for the config-reload tests of both proxies: write a config file as deploy tools do,
// and wait for what a running proxy logs.
import { renameSync, writeFileSync } from 'node:fs'

/** Writes the config atomically (as editors and deploy tools do: a new file renamed over the old). */
export function writeConfig(file: string, config: unknown): void {
  writeFileSync(`${file}.tmp`, typeof config === 'string' ? config : JSON.stringify(config))
  renameSync(`${file}.tmp`, file)
}

/** Waits until `pred()` holds, checked every 20 ms; rejects naming `what` after 10 s. */
export async function until(pred: () => boolean, what: string): Promise<void> {
  const t = Date.now()
  while (!pred()) {
    if (Date.now() - t > 10_000) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
