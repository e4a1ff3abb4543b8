// A minimal loopback stand-in for a model API, for bench/http-proxy.bench.ts: it answers every
// POST at once with a fixed recorded response, chosen by the request body's `model`, as JSON or
// (for `"stream": true`) as server-sent events. It does no other work, so what a client measures
// through it is the client, the network stack and whatever sits in between.
//
//   node bench/chat-upstream-server.mjs <responses.json>
//
// responses.json: { "<model>": { "json": "<body text>", "sse": ["<first part>", "<rest>"] } }.
// A stream's first part is written at once; the rest follows after `tailMs` (the file's top-level
// "tailMs", default 0), so a proxy that held the text back until the end would show it in the
// client's time to first text byte. Prints `listening on http://127.0.0.1:PORT` to stdout when
// ready; answers 404 to an unknown model, 400 to a body that is not JSON.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const file = process.argv[2]
if (!file) {
  process.stderr.write('usage: node bench/chat-upstream-server.mjs <responses.json>\n')
  process.exit(2)
}
const { tailMs = 0, ...responses } = JSON.parse(readFileSync(file, 'utf8'))
let n = 0

const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    let body
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end('{"error":{"message":"We could not parse the JSON body of your request.","type":"invalid_request_error","param":null,"code":null}}')
      return
    }
    const r = responses[body?.model]
    const id = `req_${++n}`
    if (r === undefined) {
      res.writeHead(404, { 'content-type': 'application/json', 'x-request-id': id })
      res.end(JSON.stringify({ error: { message: `The model \`${body?.model}\` does not exist`, type: 'invalid_request_error', param: null, code: 'model_not_found' } }))
      return
    }
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': id })
      res.write(r.sse[0])
      if (tailMs > 0) setTimeout(() => res.end(r.sse[1]), tailMs)
      else res.end(r.sse[1])
      return
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': id })
    res.end(r.json)
  })
})
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`)
})
