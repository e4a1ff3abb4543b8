// The CLI's one flag parser (src-ts/cli/args.ts, over node:util parseArgs), as every subcommand
// uses it: errors name the flag, a dash-word is never a value, flags are given once unless they
// repeat, an optional value is only ever `=value`, and `--` ends the flags only where allowed.
import { describe, expect, it } from 'vitest'
import { parseFlags, UsageError, type FlagSpec } from '../src-ts/cli/args'

const spec: FlagSpec = {
  values: { config: 'a config file', input: 'a file path, or - for stdin' },
  repeatable: { role: 'a role of the caller' },
  optional: { accept: 'tool names' },
  switches: ['help', 'watch'],
  aliases: { h: 'help' },
}
const fails = (argv: string[], s: FlagSpec = spec) => {
  try {
    parseFlags(argv, s)
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError)
    return (e as Error).message
  }
  throw new Error(`parsed ${JSON.stringify(argv)}`)
}

describe('parseFlags', () => {
  it('reads values, repeats, switches, aliases and optional values', () => {
    const p = parseFlags(['--config', 'a.json', '--role=x', '--role', 'y', '-h', '--input', '-', '--accept=a,b', '--accept=c'], spec)
    expect(p.values).toEqual({ config: 'a.json', input: '-' })
    expect(p.lists).toEqual({ role: ['x', 'y'] })
    expect([...p.switches]).toEqual(['help'])
    expect(p.optional).toEqual({ accept: ['a,b', 'c'] })
    // alone, the optional flag means "every": a following word is not its value, and wins over `=` forms
    expect(fails(['--accept', 'word'])).toMatch(/unexpected argument `word`/)
    expect(parseFlags(['--accept=a', '--accept'], spec).optional).toEqual({ accept: true })
  })

  it('names the flag in every error', () => {
    expect(fails(['--config'])).toBe('--config needs a value: a config file')
    expect(fails(['--config', '--watch'])).toBe('--config needs a value: a config file')
    expect(fails(['--config='])).toBe('--config needs a value: a config file')
    expect(fails(['--role', '-x'])).toBe('--role needs a value: a role of the caller')
    expect(fails(['--config', 'a', '--config=b'])).toMatch(/^--config is given twice; give it once/)
    expect(fails(['--watch=yes'])).toMatch(/^--watch takes no value/)
    expect(fails(['--accept='])).toBe('--accept= needs tool names')
    expect(fails(['--nope=1'])).toMatch(/^unknown flag `--nope` \(expected one of --config, --input, --role, --accept, --help, --watch\)/)
    expect(fails(['-x'])).toMatch(/^unknown flag `-x`/)
    expect(fails(['-help'])).toMatch(/^unknown flag/)
    expect(fails(['stray'])).toMatch(/^unexpected argument `stray`/)
    expect(fails(['--', 'node'])).toMatch(/^unexpected argument `--`/)
  })

  it('keeps the words after -- as they are, with rest', () => {
    const p = parseFlags(['--watch', '--', 'node', 'server.js', '--config', 'x'], { ...spec, rest: true })
    expect(p.rest).toEqual(['node', 'server.js', '--config', 'x'])
    expect(p.values).toEqual({})
    // an inline value may start with a dash; `__proto__` and friends are unknown flags, not keys
    expect(parseFlags(['--config=-odd'], spec).values.config).toBe('-odd')
    expect(fails(['--__proto__', 'x'])).toMatch(/^unknown flag `--__proto__`/)
    expect(fails(['--toString'])).toMatch(/^unknown flag `--toString`/)
  })
})
