// The MCP proxy's table of client requests in flight to the server, by id: what each one was (its
// method, a `tools/list` page, its caller), so the server's answer is routed and read as what
// was asked. Ids are the client's, kept by type and value as JSON-RPC compares them.
import type { CallContext } from '../../types'
import type { RpcId } from './jsonrpc-lines'

/** What the proxy remembers of a client request in flight to the server. */
export interface PendingRequest {
  method: string
  /** A `tools/list` for a later page (its answer adds to the tools, not replaces them). */
  cursor: boolean
  /** A `tools/list`: the caller who sent it, whom its answer is filtered for (`filterList`). */
  ctx?: CallContext
}

/** The entry of every forwarded `tools/call` (one object, shared). */
export const CALL: PendingRequest = Object.freeze({ method: 'tools/call', cursor: false })

/**
 * Client requests in flight, by id. Number and string ids are kept apart (client and server ids
 * of the same value but different types are different ids), each by its own value: no key
 * string is made per request.
 */
export class PendingRequests {
  readonly #num = new Map<number, PendingRequest>()
  readonly #str = new Map<string, PendingRequest>()

  get size(): number {
    return this.#num.size + this.#str.size
  }

  get(id: RpcId): PendingRequest | undefined {
    return typeof id === 'number' ? this.#num.get(id) : this.#str.get(id)
  }

  set(id: RpcId, p: PendingRequest): void {
    if (typeof id === 'number') this.#num.set(id, p)
    else this.#str.set(id, p)
  }

  delete(id: RpcId): void {
    if (typeof id === 'number') this.#num.delete(id)
    else this.#str.delete(id)
  }

  /** Every id in flight, and empties the table. */
  drain(): RpcId[] {
    const ids: RpcId[] = [...this.#num.keys(), ...this.#str.keys()]
    this.#num.clear()
    this.#str.clear()
    return ids
  }
}
