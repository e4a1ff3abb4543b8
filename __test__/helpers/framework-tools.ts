// The tool set and policy the LangChain and OpenAI Agents adapter tests gate, each wrapped in its
// framework's own `tool(...)`: `get_weather` (anyone), `read_file` (analysts, under reports/), and
// `send_email` (analysts; it writes, so it asks for confirmation). Every run is recorded in `ran`.
import { z } from 'zod'

import type { PolicyConfig } from '../../src-ts/index'

/** `get_weather` arguments: a city and 1 to 14 days. */
export const weatherParams = z.object({ city: z.string(), days: z.number().int().min(1).max(14) })
/** `read_file` arguments. */
export const fileParams = z.object({ path: z.string() })
/** `send_email` arguments. */
export const mailParams = z.object({ to: z.string(), body: z.string() })

/** What the tools ran with, in order (clear it between tests). */
export const ran: { tool: string; args: unknown }[] = []

/** The three tools' bodies, as the framework calls them with parsed arguments. */
export const bodies = {
  get_weather: async ({ city, days }: z.infer<typeof weatherParams>): Promise<string> => {
    ran.push({ tool: 'get_weather', args: { city, days } })
    return `${city}: sunny for ${days} days`
  },
  read_file: async ({ path }: z.infer<typeof fileParams>): Promise<string> => {
    ran.push({ tool: 'read_file', args: { path } })
    return `contents of ${path}`
  },
  send_email: async ({ to }: z.infer<typeof mailParams>): Promise<string> => {
    ran.push({ tool: 'send_email', args: { to } })
    return `sent to ${to}`
  },
}

/** What the framework's tools cannot say: `read_file`'s action and resource, `send_email` writes. */
export const OVERRIDES = { read_file: { action: 'read', resource: 'file:{path*}' }, send_email: { writes: true } }

/** Anyone may ask the weather; analysts may read reports and send mail. */
export const POLICY: PolicyConfig = {
  rules: [
    { effect: 'allow', tools: ['get_weather'] },
    { effect: 'allow', roles: ['analyst'], tools: ['read_file'], resources: ['file:reports/**'] },
    { effect: 'allow', roles: ['analyst'], tools: ['send_email'] },
  ],
}
