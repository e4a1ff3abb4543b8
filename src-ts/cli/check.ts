// PLACEHOLDER: `toolgate check` is being written now; until then it says so and exits 2.

/** `toolgate check`. */
export const command = {
  usage: 'toolgate check --schema schema.json --input call.json --tool-name NAME   decide one recorded call',
  run(_argv: string[]): number {
    process.stderr.write('toolgate check: not available in this build yet\n')
    return 2
  },
}
