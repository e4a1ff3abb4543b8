// A reference hop for bench/http-proxy.bench.ts: a node:http relay between the client and the
// upstream that gates nothing: it reads the request body whole and JSON.parse's it (as any proxy
// that looks at `tools` must), forwards it over a keep-alive connection, and pipes the answer
// back as it arrives (streams stay live). What it adds is what any extra Node HTTP hop costs, so
// the bench can tell that apart from what toolgate proxy adds on top.
//
//   node bench/http-relay-server.mjs --upstream http://127.0.0.1:PORT
//
// Prints `listening on http://127.0.0.1:PORT` to stdout when ready.
import { Agent, createServer, request } from 'node:http'

const at = process.argv.indexOf('--upstream')
if (at < 0 || !process.argv[at + 1]) {
  process.stderr.write('usage: node bench/http-relay-server.mjs --upstream http://127.0.0.1:PORT\n')
  process.exit(2)
}
const upstream = new URL(process.argv[at + 1])
const agent = new Agent({ keepAlive: true })

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
    const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) }
    const up = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers)
      ur.pipe(res)
    })
    up.on('error', (err) => {
      res.writeHead(502, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: `upstream: ${err.message}`, type: 'upstream_error', param: null, code: null } }))
    })
    up.end(body)
  })
})
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`)
})
