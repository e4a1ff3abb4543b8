// `toolgate keygen`: a new ed25519 key pair for signed receipts, from the OS CSPRNG (the Rust
// core generates it), and how to give it to a gate.
// Exit codes: 0 printed, 2 usage error.
import { generateKeyPair } from '../receipt'
import { parseOrHelp, UsageError, usageFailure, useColor } from './args'

const USAGE = 'toolgate keygen [--format pretty|json|env]   a new receipt signing key pair'

const HELP = `toolgate keygen — a new key pair for signed receipts (ed25519)

Usage:
  toolgate keygen [--format pretty|json|env]

Prints a new key pair from the operating system's CSPRNG:
  privateKey   the 32-byte ed25519 seed, base64url: the gate's signing key. Keep it secret
               (whoever holds it can sign receipts); store it in your secret manager
  publicKey    the verifying key, base64url: give it to tool servers, for
               verifyReceipt(receipt, publicKey) and requireReceipt(handler, { publicKey })
  kid          the key id receipts carry in their JWS header

Give the private key to the gate through an environment variable:
  TOOLGATE_KEY=<privateKey>   and in the config:   "receipts": { "privateKeyEnv": "TOOLGATE_KEY" }
(or "privateKeyFile": a file holding it, relative to the config file). A gate with a receipts
block and no key generates one at start, which tool servers cannot know in advance.

Flags:
  --format FORMAT    pretty (default): the three values and how to use them
                     json: one JSON object { privateKey, publicKey, kid }
                     env: one line TOOLGATE_KEY=<privateKey> (for an env file)
  --help, -h         this text

Exit codes: 0 printed, 2 usage error.

Examples:
  toolgate keygen
  toolgate keygen --format env >> .env.local
  toolgate keygen --format json > receipt-key.json && jq -r .publicKey receipt-key.json
`

function run(argv: string[]): number {
  try {
    const flags = parseOrHelp(argv, { values: { format: '`pretty`, `json` or `env`' }, switches: ['help'], aliases: { h: 'help' } }, HELP)
    if (flags === undefined) return 0
    const { values } = flags
    const format = values.format ?? 'pretty'
    if (format !== 'pretty' && format !== 'json' && format !== 'env') throw new UsageError(`--format must be \`pretty\`, \`json\` or \`env\`, got \`${format}\``)
    const k = generateKeyPair()
    if (format === 'json') {
      process.stdout.write(JSON.stringify(k) + '\n')
    } else if (format === 'env') {
      process.stdout.write(`TOOLGATE_KEY=${k.privateKey}\n`)
    } else {
      const color = useColor()
      const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s)
      const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[0m` : s)
      process.stdout.write(
        `${bold('toolgate keygen')} ${dim('— a new receipt key pair (ed25519)')}\n` +
          `  privateKey  ${k.privateKey}   ${dim('secret: the gate signs receipts with it')}\n` +
          `  publicKey   ${k.publicKey}   ${dim('public: tool servers verify receipts with it')}\n` +
          `  kid         ${k.kid}\n\n` +
          `${bold('use it')}\n` +
          `  run the gate with   TOOLGATE_KEY=${k.privateKey}\n` +
          `  and in its config   "receipts": { "privateKeyEnv": "TOOLGATE_KEY" }\n` +
          `  tool servers        verifyReceipt(receipt, '${k.publicKey}')\n`,
      )
    }
    return 0
  } catch (err) {
    return usageFailure('toolgate keygen', err)
  }
}

/** `toolgate keygen`. */
export const command = { usage: USAGE, run }
