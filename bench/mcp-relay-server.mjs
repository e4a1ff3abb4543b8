// A reference hop for bench/mcp-proxy.bench.ts: a process between an MCP client and a stdio
// server that does no gating, so the bench can tell what any extra Node process in the path
// costs from what toolgate mcp-proxy adds on top.
//
//   node bench/mcp-relay-server.mjs pipe  -- <server command…>   bytes piped both ways
//   node bench/mcp-relay-server.mjs lines -- <server command…>   each newline-delimited message
//                                                               JSON.parse'd and re-serialized
import { spawn } from 'node:child_process'

const mode = process.argv[2]
const dash = process.argv.indexOf('--')
if ((mode !== 'pipe' && mode !== 'lines') || dash < 0 || dash === process.argv.length - 1) {
  process.stderr.write('usage: node bench/mcp-relay-server.mjs pipe|lines -- <server command…>\n')
  process.exit(2)
}
const [cmd, ...args] = process.argv.slice(dash + 1)
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] })
child.on('exit', (code) => process.exit(code ?? 1))
process.stdin.on('end', () => child.stdin.end())

/** Copies `from` to `to`, one parsed and re-serialized JSON message per line. */
function relayLines(from, to) {
  let buf = ''
  from.setEncoding('utf8')
  from.on('data', (d) => {
    buf += d
    let nl
    let out = ''
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      if (line.trim() !== '') out += JSON.stringify(JSON.parse(line)) + '\n'
    }
    if (out !== '') to.write(out)
  })
}

if (mode === 'pipe') {
  process.stdin.pipe(child.stdin)
  child.stdout.pipe(process.stdout)
} else {
  relayLines(process.stdin, child.stdin)
  relayLines(child.stdout, process.stdout)
}
