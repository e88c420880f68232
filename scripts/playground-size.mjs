// `npm run playground:size`: what the playground costs a browser. Prints the bundle's size (as
// built, and gzip-compressed at the default level and at level 9), then loads the page from the
// compiled service (dist/, so `npm run build` first) in Debian's Chromium (/usr/bin/chromium, or
// CHROMIUM_PATH), cold each time (a new browser context, no cache), and prints the median, lowest
// and highest of:
//   - interactive: from navigation to the page's `playground-ready` mark (editors made, its
//     configuration, the language's schema and the deployment's names read; keys are answered);
//   - first output: to `playground-first-output` (the sample mapping validated, mapped and shown).
// The service listens on 127.0.0.1 only; the page asks nothing of another origin.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync, constants } from 'node:zlib'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const BUNDLE = join(ROOT, 'playground', 'build', 'playground.js')
const SERVER = join(ROOT, 'dist', 'server.js')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const RUNS = Number(process.env.RUNS ?? 7)

function fail(message) {
  process.stderr.write(`playground-size: ${message}\n`)
  process.exit(1)
}

if (!existsSync(BUNDLE) || !existsSync(SERVER)) fail('the service is not built (dist/ or playground/build/ is missing): run `npm run build` first')
if (!existsSync(CHROMIUM)) fail(`Chromium is not installed at ${CHROMIUM} (Debian: apt-get install chromium), or set CHROMIUM_PATH`)

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`
const bundle = readFileSync(BUNDLE)
const gzip = gzipSync(bundle).length
const gzip9 = gzipSync(bundle, { level: constants.Z_BEST_COMPRESSION }).length
process.stdout.write(`bundle: ${kib(bundle.length)} (${bundle.length} bytes), gzip ${kib(gzip)} (${gzip} bytes; level 9: ${gzip9} bytes)\n`)

const { chromium } = await import('playwright-core')
const { default: pino } = await import('pino')
const { buildServer } = await import(SERVER)
const app = await buildServer({ options: { host: '127.0.0.1', map: { explicit: true, explain: true }, playground: true }, mappings: [], logger: pino({ level: 'silent' }) })
const origin = await app.listen({ port: 0, host: '127.0.0.1' })
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
const interactive = []
const firstOutput = []
try {
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const outside = []
    page.on('request', (request) => {
      if (!request.url().startsWith(`${origin}/`)) outside.push(request.url())
    })
    await page.goto(`${origin}/playground`)
    await page.waitForFunction(() => performance.getEntriesByName('playground-first-output').length > 0, undefined, { timeout: 30_000 })
    const marks = await page.evaluate(() => ({
      ready: performance.getEntriesByName('playground-ready')[0].startTime,
      output: performance.getEntriesByName('playground-first-output')[0].startTime,
    }))
    if (outside.length > 0) fail(`the page asked another origin: ${outside.join(', ')}`)
    // The first load warms the service's compiled plans and the disk cache of the machine: not counted.
    if (run > 0) {
      interactive.push(marks.ready)
      firstOutput.push(marks.output)
    }
    await context.close()
  }
} finally {
  await browser.close()
  await app.close()
}

const summary = (values) => {
  const sorted = values.slice().sort((a, b) => a - b)
  return `median ${Math.round(sorted[Math.floor(sorted.length / 2)])} ms (${Math.round(sorted[0])}–${Math.round(sorted[sorted.length - 1])} ms)`
}
process.stdout.write(`time to interactive (Chromium, cold, ${interactive.length} loads after one warm-up): ${summary(interactive)}\n`)
process.stdout.write(`time to the first output: ${summary(firstOutput)}\n`)
