// Test helpers for identity: an issuer's key set served on loopback (node:http, counting its
// fetches, keys swappable for rotation), real key pairs made by jose, and tokens signed with
// them — plus the forged ones an attacker would send (`alg: none`, HS256 signed with the
// issuer's public key as the HMAC secret).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

import { exportJWK, exportSPKI, generateKeyPair, SignJWT, base64url, type JWK, type JWTPayload, type CryptoKey } from 'jose'

/** The issuer and audience the tests' tokens carry. */
export const ISSUER = 'https://idp.toolgate.test/'
export const AUDIENCE = 'https://api.toolgate.test'

/** A signing key of the test issuer. */
export interface IssuerKey {
  alg: 'EdDSA' | 'ES256' | 'RS256' | 'ES384'
  kid: string
  privateKey: CryptoKey
  /** The public JWK (with `kid`, `alg`, `use: sig`) as a JWKS lists it. */
  jwk: JWK
  /** The public key as PEM SPKI. */
  pem: string
}

/** A new key pair for `alg`. */
export async function issuerKey(alg: IssuerKey['alg'], kid = `${alg.toLowerCase()}-${Math.random().toString(36).slice(2, 8)}`): Promise<IssuerKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg.startsWith('RS') ? { modulusLength: 2048 } : {}) })
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }
  return { alg, kid, privateKey, jwk, pem: await exportSPKI(publicKey) }
}

/** Options of {@link sign}: claims beyond the defaults, and header or time overrides. */
export interface SignOptions {
  sub?: string | null
  iss?: string
  aud?: string | string[]
  /** Seconds from now (negative: past); `null` leaves `exp` out. Default 300. */
  expIn?: number | null
  /** Seconds from now for `nbf`. */
  nbfIn?: number
  /** Seconds from now for `iat` (default 0: issued now). */
  iatIn?: number
  /** The `kid` header (default the key's; `null` leaves it out). */
  kid?: string | null
}

/** A token signed by `key` for {@link ISSUER} / {@link AUDIENCE}, subject `alice` unless given. */
export async function sign(key: IssuerKey, claims: JWTPayload = {}, o: SignOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const header: { alg: string; kid?: string; typ: string } = { alg: key.alg, typ: 'JWT' }
  const kid = o.kid === undefined ? key.kid : o.kid
  if (kid !== null) header.kid = kid
  const jwt = new SignJWT({ ...claims }).setProtectedHeader(header).setIssuer(o.iss ?? ISSUER).setAudience(o.aud ?? AUDIENCE)
  if (claims.iat === undefined) jwt.setIssuedAt(now + (o.iatIn ?? 0)) // an `iat` among the claims is sent as given
  if (o.sub !== null) jwt.setSubject(o.sub ?? 'alice')
  if (o.expIn !== null) jwt.setExpirationTime(now + (o.expIn ?? 300))
  if (o.nbfIn !== undefined) jwt.setNotBefore(now + o.nbfIn)
  return jwt.sign(key.privateKey)
}

const enc = (v: unknown) => base64url.encode(JSON.stringify(v))

/** An unsecured token (`alg: none`, empty signature) with valid-looking claims. */
export function noneToken(claims: JWTPayload = {}): string {
  const now = Math.floor(Date.now() / 1000)
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ iss: ISSUER, aud: AUDIENCE, sub: 'mallory', iat: now, exp: now + 300, ...claims })}.`
}

/** The key-confusion forgery: HS256 with the issuer's public key text as the HMAC secret. */
export async function hmacWithPublicKey(secret: string, kid: string, claims: JWTPayload = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ roles: ['admin'], ...claims })
    .setProtectedHeader({ alg: 'HS256', kid, typ: 'JWT' })
    .setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('mallory').setIssuedAt(now).setExpirationTime(now + 300)
    .sign(new TextEncoder().encode(secret))
}

/** A key set served on loopback. */
export interface JwksServer {
  /** `http://127.0.0.1:<port>/jwks.json` */
  url: string
  /** How many times the key set was fetched. */
  fetches(): number
  /** Replace the served keys (rotation). */
  setKeys(keys: JWK[]): void
  /** Answer every fetch with this status and body instead (outage, garbage, a huge document). */
  breakWith(status: number, body: string): void
  /** Serve the keys again after {@link breakWith}. */
  heal(): void
  close(): Promise<void>
}

/** Serves `{ keys }` at `/jwks.json` on 127.0.0.1. */
export async function startJwks(keys: JWK[]): Promise<JwksServer> {
  let served = keys
  let broken: { status: number; body: string } | undefined
  let count = 0
  const server = createServer((req, res) => {
    if (req.url !== '/jwks.json') {
      res.writeHead(404).end()
      return
    }
    count++
    const body = broken?.body ?? JSON.stringify({ keys: served })
    res.writeHead(broken?.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    fetches: () => count,
    setKeys: (k) => {
      served = k
    },
    breakWith: (status, body) => {
      broken = { status, body }
    },
    heal: () => {
      broken = undefined
    },
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
