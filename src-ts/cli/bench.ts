// PLACEHOLDER: `toolgate bench` is being written now; until then it says so and exits 2.

/** `toolgate bench`. */
export const command = {
  usage: 'toolgate bench --corpus-dir DIR    run a corpus of recorded calls; correctness and latency',
  run(_argv: string[]): number {
    process.stderr.write('toolgate bench: not available in this build yet\n')
    return 2
  },
}
