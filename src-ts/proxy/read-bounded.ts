// Reading a whole body of bounded size from a stream: the proxies' request bodies and upstream
// answers. One reader, so every body is bounded the same way.
import type { Readable } from 'node:stream'

/** The stream closed before its end: the body is not whole. */
export class BodyCut extends Error {}

/**
 * Reads `stream` to its end, at most `limit` bytes. Past the limit it stops listening, does
 * `onOver` to the stream (`'pause'`: leave the rest unread; `'resume'`: let the rest drain
 * unread; `'destroy'`: close it) and answers `'too_large'`. Rejects with the stream's error, or
 * with {@link BodyCut} (`cutMessage`) when it closes before its end.
 */
export function readBounded(stream: Readable, limit: number, onOver: 'pause' | 'resume' | 'destroy', cutMessage: string): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const done = () => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onError)
      stream.off('close', onClose)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) {
        chunks.push(chunk)
        return
      }
      done()
      if (onOver === 'destroy') stream.destroy()
      else stream[onOver]()
      resolve('too_large')
    }
    const onEnd = () => {
      done()
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
    }
    const onError = (err: Error) => {
      done()
      reject(err)
    }
    const onClose = () => onError(new BodyCut(cutMessage))
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
    stream.on('close', onClose)
  })
}
