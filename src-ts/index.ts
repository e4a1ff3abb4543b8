/**
 * toolgate: the gate between an LLM agent and its tools.
 * @packageDocumentation
 */
export { ToolGate, defineConfig } from './gate'
export { Caller, type CallerOption } from './context'
export { PreparedTools } from './prepared-tools'
export { GateState, type GateStateOptions } from './state'
export { ToolGateError, type ToolGateErrorCode } from './errors'
export { ToolCallStream, STREAM_DIALECTS, type StreamOptions } from './stream'
export { verifyReceipt, type ReceiptClaims, type ReceiptExpectation } from './receipt'
export { normalizeToolSchemas, type ToolInputSchema, type ToolConfigInput, type ToolGateConfigInput, type ZodSchemaLike, type AiSdkSchemaLike, type StandardJsonSchemaLike } from './schema-input'
export { requireReceipt, RECEIPT_HEADER, RECEIPT_META, type HttpRequestLike, type HttpResponseLike, type McpHandlerExtra, type RequireReceiptOptions } from './require-receipt'
export type {
  AuditConfig,
  CallContext,
  Dialect,
  EngineAnswer,
  EngineRequest,
  IdentityConfig,
  JwtIdentityConfig,
  LoopConfig,
  PersonaConfig,
  PolicyConfig,
  PolicyEngine,
  PolicyRule,
  ProxyConfig,
  RateLimitConfig,
  RedisStateConfig,
  ResourcesConfig,
  StateConfig,
  ToolGateOptions,
  FilterToolsOptions,
  GuardOptions,
  ProviderExecutedCall,
  TurnRefusal,
  TurnCall,
  TurnReport,
  Flag,
  FlagCode,
  Outcome,
  Reason,
  ToolConfig,
  ToolGateConfig,
  Verdict,
} from './types'
export type * from './dialects/index'
