// A reference hop for bench/http-proxy.bench.ts: a node:http relay between the client and the
// upstream that gates nothing: it reads the request body whole and JSON.parse's it (as any proxy
// that looks at `tools` must), forwards it over a keep-alive connection, and pipes the answer
// back as it arrives (streams stay live). What it adds is what any extra Node HTTP hop costs, so
// the bench can tell that apart from what toolgate proxy adds on top.
//
//   node bench/http-relay-server.mjs --upstream http://127.0.0.1:PORT [--via http|fetch]
//
// --via http (default): node:http `request` over a keep-alive Agent. --via fetch: the global
// `fetch` (undici, keep-alive by default), the answer's web stream written on as it arrives —
// the same client toolgate proxy uses upstream, so the difference between the two is fetch's.
//
// Prints `listening on http://127.0.0.1:PORT` to stdout when ready.
import { Agent, createServer, request } from 'node:http'

const at = process.argv.indexOf('--upstream')
if (at < 0 || !process.argv[at + 1]) {
  process.stderr.write('usage: node bench/http-relay-server.mjs --upstream http://127.0.0.1:PORT\n')
  process.exit(2)
}
const upstream = new URL(process.argv[at + 1])
const viaAt = process.argv.indexOf('--via')
const via = viaAt < 0 ? 'http' : process.argv[viaAt + 1]
if (via !== 'http' && via !== 'fetch') {
  process.stderr.write('--via takes http or fetch\n')
  process.exit(2)
}
const agent = new Agent({ keepAlive: true })
/** Request headers not forwarded (hop-by-hop, or recomputed). */
const DROP = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'accept-encoding'])

function badGateway(res, err) {
  res.writeHead(502, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { message: `upstream: ${err.message}`, type: 'upstream_error', param: null, code: null } }))
}

/** Forwards with fetch, writing the answer's chunks as they arrive. */
async function viaFetch(req, res, body) {
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => !DROP.has(k) && typeof v === 'string'))
  const up = await fetch(`${upstream.origin}${req.url}`, { method: req.method, headers, body })
  res.writeHead(up.status, Object.fromEntries([...up.headers].filter(([k]) => !DROP.has(k) && k !== 'content-encoding')))
  for await (const chunk of up.body ?? []) res.write(chunk)
  res.end()
}

const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    try {
      JSON.parse(body.toString('utf8'))
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end('{"error":{"message":"request body is not JSON","type":"invalid_request_error","param":null,"code":null}}')
      return
    }
    if (via === 'fetch') {
      viaFetch(req, res, body).catch((err) => badGateway(res, err))
      return
    }
    const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) }
    const up = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers)
      ur.pipe(res)
    })
    up.on('error', (err) => badGateway(res, err))
    up.end(body)
  })
})
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`)
})
