// The model APIs whose request bodies toolgate fits to a caller (`tools` filtered, `tool_choice`
// fitted: request-tools.ts, request-tool-choice.ts) and whose answers the HTTP proxy guards
// (proxy/http/): one name for the three, in its own module so that all of them can import it.

/** The request dialects whose bodies carry a `tools` list the gate filters: the OpenAI Chat Completions and Responses APIs and the Anthropic Messages API. */
export type RequestDialect = 'openai' | 'openai-responses' | 'anthropic'
