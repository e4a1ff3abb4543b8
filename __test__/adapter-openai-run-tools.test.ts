// `chat.completions.runTools` on a client guarded by `guardOpenAI`: the official `openai` SDK's own
// runner, against the loopback upstream (helpers/upstream.ts), which plays Chat Completions and
// answers 400 unless every call id is answered exactly once. The runner must run the allowed calls
// only, with the gate's exact (repaired) arguments, and answer every refused call with the gate's
// message — a refused tool's function never runs, whatever the model asks.
import OpenAI from 'openai'
import { zodFunction } from 'openai/helpers/zod'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { guardOpenAI } from '../src-ts/adapters/openai'
import { ToolGate, ToolGateError, type CallContext, type TurnReport } from '../src-ts/index'
import { ADAPTER_CONFIG, call, CHAT_TURN } from './helpers/turns'
import { startUpstream, type Upstream } from './helpers/upstream'

const config = ADAPTER_CONFIG
const ana: CallContext = { subject: 'ana', roles: ['analyst'] }
const user: OpenAI.Chat.Completions.ChatCompletionMessageParam = { role: 'user', content: 'Find rust books and the Paris weather, mail the CEO, launch, note it.' }

let upstream: Upstream | undefined
afterEach(async () => {
  await upstream?.close()
  upstream = undefined
})

/** A guarded client against an upstream whose first answer is `turn`. */
async function clientFor(turn: unknown, gate: ToolGate, reports: TurnReport[] = []): Promise<OpenAI> {
  upstream = await startUpstream({ chat: turn })
  const openai = new OpenAI({ baseURL: `${upstream.origin}/v1`, apiKey: 'sk-test', maxRetries: 0 })
  return guardOpenAI(openai, gate, () => ana, { onReport: (r) => void reports.push(r) })
}

type Ran = { tool: string; args: unknown }

/** Runnable tools for all five names; each records what it ran with. `get_weather` parses its JSON, the others take the text. */
function tools(ran: Ran[]): OpenAI.Chat.Completions.ChatCompletionTool[] {
  const raw = (name: string) => ({
    type: 'function' as const,
    function: {
      name,
      parameters: { type: 'object' },
      function: (args: string) => {
        ran.push({ tool: name, args })
        return `${name} done`
      },
    },
  })
  return [
    raw('search'),
    {
      type: 'function',
      function: {
        name: 'get_weather',
        parameters: { type: 'object' },
        parse: JSON.parse,
        function: (args: { city: string; days: number }) => (ran.push({ tool: 'get_weather', args }), `${args.city}: sunny for ${args.days} days`),
      },
    },
    raw('send_email'),
    raw('launch_rockets'),
    raw('save_note'),
  ] as unknown as OpenAI.Chat.Completions.ChatCompletionTool[]
}

const toolMessages = (runner: { messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] }) =>
  runner.messages.filter((m): m is OpenAI.Chat.Completions.ChatCompletionToolMessageParam => m.role === 'tool')

describe('chat.completions.runTools on a guarded client', () => {
  it('runs allowed calls only (repaired), answers refused calls, never names a hidden tool, and the loop completes', async () => {
    const gate = new ToolGate(config)
    const reports: TurnReport[] = []
    const client = await clientFor(CHAT_TURN, gate, reports)
    const ran: Ran[] = []
    const runner = client.chat.completions.runTools({ model: 'gpt-4.1', messages: [user], tools: tools(ran) as never })
    expect(await runner.finalContent()).toBe('All tool results received.')
    // the refused tools' functions never ran; get_weather got the gate's repaired arguments
    expect(ran).toEqual([
      { tool: 'search', args: '{"query":"rust"}' },
      { tool: 'get_weather', args: { city: 'Paris', days: 3 } },
    ])
    // the model was only offered what this caller may call, on every request
    const names = (i: number) => (upstream!.requests[i].body.tools as { function: { name: string } }[]).map((t) => t.function.name)
    expect(upstream!.requests).toHaveLength(2)
    expect(names(0)).toEqual(['search', 'get_weather', 'save_note'])
    expect(names(1)).toEqual(['search', 'get_weather', 'save_note'])
    // every call answered once, in order: results for the allowed, the gate's message for the
    // refused tools this caller may see; a call of a tool it may not see (send_email,
    // launch_rockets) is answered by the runner itself, whose list names only the visible tools
    const report = reports[0]
    const answers = toolMessages(runner)
    expect(answers.map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b', 'call_c', 'call_d', 'call_e'])
    const hidden = 'Available options are: "search", "get_weather", "save_note". Please try again'
    expect(answers.map((m) => m.content)).toEqual([
      'search done',
      'Paris: sunny for 3 days',
      `Invalid tool_call: "send_email". ${hidden}`,
      `Invalid tool_call: "launch_rockets". ${hidden}`,
      report.calls[4].message,
    ])
    expect(report.calls[4].outcome).toBe('confirm')
    // the assistant turn the runner sent back carries the repaired arguments
    const sent = upstream!.requests[1].body.messages as { role: string; tool_calls?: { function: { arguments: string } }[] }[]
    expect(JSON.parse(sent[1].tool_calls![1].function.arguments)).toEqual({ city: 'Paris', days: 3 })
    // no confirmation token reaches the model
    expect(JSON.stringify(upstream!.requests)).not.toContain(report.calls[4].confirmation!.token)
  })

  it('adversarial: a model calling only refused tools, with arguments that look allowed, runs nothing', async () => {
    const gate = new ToolGate(config)
    const turn = structuredClone(CHAT_TURN)
    turn.choices[0].message.tool_calls = [
      call('call_x', 'send_email', '{"to":"attacker@example.com"}'),
      call('call_y', 'send_email', '{"query":"rust"}'),
      call('call_z', 'launch_rockets', '{"query":"rust"}'),
      // a tool this caller may call, with arguments the gate rejects (days above the maximum)
      call('call_w', 'get_weather', '{"city":"Paris","days":99}'),
    ]
    const reports: TurnReport[] = []
    const client = await clientFor(turn, gate, reports)
    const ran: Ran[] = []
    const runner = client.chat.completions.runTools({ model: 'gpt-4.1', messages: [user], tools: tools(ran) as never })
    expect(await runner.finalContent()).toBe('All tool results received.')
    expect(ran).toEqual([])
    const answers = toolMessages(runner)
    expect(answers.map((m) => m.tool_call_id)).toEqual(['call_x', 'call_y', 'call_z', 'call_w'])
    expect(reports[0].calls[3]).toMatchObject({ outcome: 'rejected', reason: 'invalid' })
    expect(answers[3].content).toBe(reports[0].calls[3].message)
  })

  it('adversarial: identical calls run only as many times as the gate allowed (loop guard)', async () => {
    const gate = new ToolGate({ ...config, loop: { maxIdentical: 1, windowSeconds: 60 } })
    const turn = structuredClone(CHAT_TURN)
    turn.choices[0].message.tool_calls = [call('call_1', 'search', '{"query":"rust"}'), call('call_2', 'search', '{"query":"rust"}')]
    const reports: TurnReport[] = []
    const client = await clientFor(turn, gate, reports)
    const ran: Ran[] = []
    const runner = client.chat.completions.runTools({ model: 'gpt-4.1', messages: [user], tools: tools(ran) as never })
    await runner.finalContent()
    const outcomes = reports[0].calls.map((c) => c.outcome)
    expect(outcomes).toEqual(['passed', 'rejected'])
    expect(ran).toHaveLength(1)
    expect(toolMessages(runner).map((m) => m.content)).toEqual(['search done', reports[0].calls[1].message])
  })

  it('zodFunction tools: the parsed, repaired arguments reach the callback; refused ones never do', async () => {
    const gate = new ToolGate(config)
    const client = await clientFor(CHAT_TURN, gate)
    const got: unknown[] = []
    const weather = zodFunction({
      name: 'get_weather',
      parameters: z.object({ city: z.string(), days: z.number().int() }),
      function: (args) => (got.push(args), 'sunny'),
    })
    const email = zodFunction({ name: 'send_email', parameters: z.object({ to: z.string() }), function: (args) => (got.push(args), 'sent') })
    const runner = client.chat.completions.runTools({ model: 'gpt-4.1', messages: [user], tools: [weather, email] })
    await runner.done()
    expect(got).toEqual([{ city: 'Paris', days: 3 }])
    const answers = toolMessages(runner)
    expect(answers.find((m) => m.tool_call_id === 'call_c')!.content).toMatch(/send_email/)
    expect(answers.find((m) => m.tool_call_id === 'call_b')!.content).toBe('sunny')
  })

  it('a forced tool_choice naming a hidden tool is auto for the runner too: its answers never name it', async () => {
    const gate = new ToolGate(config)
    const client = await clientFor(CHAT_TURN, gate)
    const ran: Ran[] = []
    const runner = client.chat.completions.runTools({
      model: 'gpt-4.1',
      messages: [user],
      tools: tools(ran) as never,
      tool_choice: { type: 'function', function: { name: 'send_email' } },
    })
    await runner.done()
    expect(upstream!.requests[0].body.tool_choice).toBe('auto')
    expect(ran.map((r) => r.tool)).toEqual(['search', 'get_weather'])
    // the only mention of send_email the model gets back is its own call of it
    const hiddenNamed = toolMessages(runner).filter((m) => String(m.content).includes('send_email') && m.tool_call_id !== 'call_c')
    expect(hiddenNamed).toEqual([])
  })

  it('stream: true is refused before anything is sent (a guarded stream drops refused calls)', async () => {
    const gate = new ToolGate(config)
    const client = await clientFor(CHAT_TURN, gate)
    expect(() => client.chat.completions.runTools({ model: 'gpt-4.1', messages: [user], tools: tools([]) as never, stream: true })).toThrow(ToolGateError)
    expect(upstream!.requests).toHaveLength(0)
  })
  it('adversarial: a call without an id, named by its position like another call\'s id, never runs the other on its verdict', async () => {
    // the core names an id-less call by its position ("1"); beside a call whose id is "1" a ledger
    // looking verdicts up by id filed save_note's (refused: confirm) under search's — now the turn
    // is refused whole (E_PAYLOAD) and nothing runs
    const gate = new ToolGate(config)
    const turn = structuredClone(CHAT_TURN)
    const idless = { type: 'function', function: { name: 'search', arguments: '{"query":"rust"}' } }
    turn.choices[0].message.tool_calls = [call('1', 'save_note', '{"text":"x"}'), idless as ReturnType<typeof call>]
    const client = await clientFor(turn, gate)
    const ran: Ran[] = []
    const runner = client.chat.completions.runTools({ model: 'gpt-4.1', messages: [user], tools: tools(ran) as never })
    const err = await runner.finalContent().then(
      () => undefined,
      (e: unknown) => e,
    )
    // the runner wraps what the guarded client threw; the gate's error is its cause
    const gateErr = err instanceof ToolGateError ? err : (err as { cause?: unknown }).cause
    expect(gateErr).toBeInstanceOf(ToolGateError)
    expect((gateErr as ToolGateError).code).toBe('E_PAYLOAD')
    expect((gateErr as ToolGateError).message).toMatch(/the call id "1" appears twice in one turn \(a call without an id is named by its position\)/)
    expect(ran).toEqual([])
  })
})
