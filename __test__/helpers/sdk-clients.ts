// The official `openai` and `@anthropic-ai/sdk` clients the tests drive, pointed at a loopback
// origin (the scripted upstream, or a proxy in front of it): a test key, no retries (a refused
// request must fail the test, not be sent again).
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'

/** An `openai` client for `origin` (requests go to `<origin>/v1/...`), sending `defaultHeaders` if given. */
export const openaiAt = (origin: string, defaultHeaders?: Record<string, string>): OpenAI =>
  new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'sk-test', maxRetries: 0, ...(defaultHeaders === undefined ? {} : { defaultHeaders }) })

/** An `@anthropic-ai/sdk` client for `origin`, sending `defaultHeaders` if given. */
export const anthropicAt = (origin: string, defaultHeaders?: Record<string, string>): Anthropic =>
  new Anthropic({ baseURL: origin, apiKey: 'sk-ant-test', maxRetries: 0, ...(defaultHeaders === undefined ? {} : { defaultHeaders }) })
