import { closeSync, createReadStream, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { createGunzip } from 'node:zlib'

// The pre-initialised data directory travels as a gzipped ustar archive: written at build time
// and unpacked on a first start, streaming, without holding ~28 MB of mostly empty pages.

const BLOCK = 512

/**
 * Writes a tarball's files under `directory` as they come out of gunzip, never holding the whole
 * (mostly empty pages, ~28 MB unpacked). Regular files and directories only, as writeTar makes them.
 * PG_VERSION goes last, so an interrupted copy leaves a directory PGlite does not take for a
 * database (it runs initdb over it).
 */
export async function extractSnapshot (tarball: string, directory: string): Promise<void> {
  const root = resolve(directory)
  mkdirSync(root, { recursive: true })
  let header = Buffer.alloc(0)
  let file: { fd: number, left: number, padding: number } | undefined
  let pgVersion: { path: string, chunks: Buffer[] } | undefined
  let ended = false
  for await (const chunk of createReadStream(tarball).pipe(createGunzip()) as AsyncIterable<Buffer>) {
    let at = 0
    while (at < chunk.length && !ended) {
      if (file !== undefined) {
        const n = Math.min(file.left + file.padding, chunk.length - at)
        const data = Math.min(n, file.left)
        if (data > 0) {
          if (file.fd >= 0) writeSync(file.fd, chunk, at, data)
          else pgVersion!.chunks.push(chunk.subarray(at, at + data))
        }
        file.left -= data
        file.padding -= n - data
        at += n
        if (file.left === 0 && file.padding === 0) {
          if (file.fd >= 0) closeSync(file.fd)
          file = undefined
        }
        continue
      }
      const take = Math.min(BLOCK - header.length, chunk.length - at)
      header = Buffer.concat([header, chunk.subarray(at, at + take)])
      at += take
      if (header.length < BLOCK) continue
      const block = header
      header = Buffer.alloc(0)
      if (block.every((byte) => byte === 0)) { ended = true; break }
      const name = field(block, 0, 100)
      const size = parseInt(field(block, 124, 12).trim() || '0', 8)
      const type = String.fromCharCode(block[156]!)
      const path = resolve(root, name)
      if (path !== root && !path.startsWith(root + sep)) throw new Error(`snapshot entry outside the data directory: ${name}`)
      if (type === '5') {
        mkdirSync(path, { recursive: true })
      } else if (type === '0' || type === '\0') {
        const padding = (BLOCK - (size % BLOCK)) % BLOCK
        let fd = -1
        if (relative(root, path) === 'PG_VERSION') pgVersion = { path, chunks: [] }
        else {
          mkdirSync(dirname(path), { recursive: true })
          fd = openSync(path, 'w')
        }
        file = { fd, left: size, padding }
        if (size + padding === 0) {
          if (fd >= 0) closeSync(fd)
          file = undefined
        }
      } else {
        throw new Error(`unexpected entry in the snapshot: ${name} (type ${type})`)
      }
    }
  }
  if (file !== undefined || !ended) throw new Error(`the snapshot ${tarball} is cut short`)
  if (pgVersion !== undefined) writeFileSync(pgVersion.path, Buffer.concat(pgVersion.chunks))
}

function field (block: Buffer, offset: number, length: number): string {
  const end = block.indexOf(0, offset)
  return block.toString('utf8', offset, end === -1 || end > offset + length ? offset + length : end)
}

/** A ustar archive of a directory tree: directories and regular files, names relative to it. */
export function writeTar (directory: string): Buffer {
  const blocks: Buffer[] = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      const stat = statSync(path)
      const entry = relative(directory, path).split(sep).join('/')
      if (stat.isDirectory()) {
        blocks.push(tarHeader(entry + '/', 0, '5', 0o700))
        walk(path)
      } else if (stat.isFile()) {
        const data = readFileSync(path)
        blocks.push(tarHeader(entry, data.length, '0', 0o600), data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK))
      } else {
        throw new Error(`not a file or a directory: ${path}`)
      }
    }
  }
  walk(directory)
  blocks.push(Buffer.alloc(2 * BLOCK))
  return Buffer.concat(blocks)
}

function tarHeader (name: string, size: number, type: '0' | '5', mode: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`name too long for the snapshot tarball: ${name}`)
  const header = Buffer.alloc(BLOCK)
  const octal = (value: number, offset: number, length: number) => header.write(value.toString(8).padStart(length - 1, '0') + '\0', offset, length, 'ascii')
  header.write(name, 0, 100, 'utf8')
  octal(mode, 100, 8)
  octal(0, 108, 8) // uid
  octal(0, 116, 8) // gid
  octal(size, 124, 12)
  octal(0, 136, 12) // mtime: the same bytes from every build
  header.write(type, 156, 1, 'ascii')
  header.write('ustar\u000000', 257, 8, 'ascii')
  header.fill(' ', 148, 156)
  let sum = 0
  for (const byte of header) sum += byte
  header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii')
  return header
}
