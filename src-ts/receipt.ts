// Receipts, verified (docs/proof.md): the check runs in the Rust core (ed25519 strict
// verification, RFC 8785 argument digest); this only converts.
import { ToolGateError } from './errors'
import { native } from './native'

/** A receipt key pair as the core generates it (base64url): the signing seed, the verifying key and its key id. */
export interface ReceiptKeyPair {
  /** The 32-byte ed25519 seed: the gate's signing key. Secret. */
  privateKey: string
  /** The verifying key, for {@link verifyReceipt}. */
  publicKey: string
  /** The key id receipts carry in their JWS header. */
  kid: string
}

/** A new key pair (ed25519 seed from the OS CSPRNG, in the Rust core), for `toolgate keygen`. */
export function generateKeyPair(): ReceiptKeyPair {
  return JSON.parse(native().generateReceiptKey()) as ReceiptKeyPair
}

/** The claims of a verified receipt. */
export interface ReceiptClaims {
  /** Format version (1). */
  v: number
  /** The caller's subject, when there was one. */
  sub?: string
  tool: string
  action?: string
  resource?: string
  callId?: string
  /** base64url SHA-256 of the RFC 8785 canonical JSON of the exact arguments allowed. */
  args: string
  /** Issued at, Unix seconds. */
  iat: number
  /** Expires at, Unix seconds. */
  exp: number
  /** Unique receipt id (for replay caches). */
  jti: string
}

/** What a receipt must say, beyond being genuine and unexpired. */
export interface ReceiptExpectation {
  tool?: string
  /** The arguments the tool is about to run with (compared by digest, key order irrelevant). */
  arguments?: unknown
  sub?: string
}

/**
 * Verifies a receipt (`verdict.receipt`) against the gate's `publicKey`: the EdDSA signature, the
 * format version, the expiry (60 s clock-skew allowance) and, when `expect` names them, the tool,
 * the arguments and the subject. Returns the claims; throws `ToolGateError` `E_RECEIPT` whose
 * `reason` says why (`malformed`, `unsupported_alg`, `unknown_version`, `wrong_key`,
 * `bad_signature`, `expired`, `not_yet_valid`, `wrong_tool`, `wrong_arguments`, `wrong_subject`,
 * `bad_public_key`).
 */
export function verifyReceipt(receipt: string, publicKey: string, expect?: ReceiptExpectation, now: number = Date.now()): ReceiptClaims {
  if (typeof receipt !== 'string' || typeof publicKey !== 'string') {
    throw new ToolGateError('E_RECEIPT', 'malformed: a receipt and a public key are strings', { reason: 'malformed' })
  }
  let e = ''
  if (expect !== undefined) {
    try {
      e = JSON.stringify(expect)
    } catch (err) {
      throw new ToolGateError('E_RECEIPT', `wrong_arguments: the expected arguments cannot be read as JSON (${(err as Error).message})`, { reason: 'wrong_arguments' })
    }
  }
  try {
    return JSON.parse(native().verifyReceipt(receipt, publicKey, e, now)) as ReceiptClaims
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    const reason = /^([a-z_]+):/.exec(message)?.[1] ?? 'malformed'
    throw new ToolGateError('E_RECEIPT', message, { cause: err, reason })
  }
}
