import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // Native addons are safest in forked workers.
    pool: 'forks',
    testTimeout: 60_000,
  },
})
