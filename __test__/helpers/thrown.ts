// The error a call throws, for the tests that check how toolgate refuses a host's mistake (a bad
// config, a wrong option, a sync call on remote state): a `ToolGateError`, with its stable code.
import { expect } from 'vitest'

import { ToolGateError } from '../../src-ts/index'

/** The `ToolGateError` `f` throws; the test fails when `f` throws anything else, or returns. */
export function thrownToolGateError(f: () => unknown): ToolGateError {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(ToolGateError)
    return e as ToolGateError
  }
  throw new Error('expected a ToolGateError')
}

/** The `E_CONFIG` error `f` throws; the test fails on any other outcome. */
export function thrownConfigError(f: () => unknown): ToolGateError {
  const e = thrownToolGateError(f)
  expect(e.code).toBe('E_CONFIG')
  return e
}
