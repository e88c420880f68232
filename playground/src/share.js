// Sharing and keeping the page's state (the mapping, the input, their formats, the registered
// mapping on show): in the URL's fragment, deflated and base64url-encoded (a fragment is never
// sent to a server), and in localStorage for the next visit of the same browser.

const STORAGE_KEY = 'mapper-service-playground:session'
const FRAGMENT_KEY = 's'
/** A state larger than this (encoded) is kept in localStorage but not put in the URL. */
export const MAX_FRAGMENT_CHARS = 100_000

function toBase64Url(bytes) {
  let binary = ''
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i])
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64Url(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

async function through(bytes, transform) {
  const stream = new Blob([bytes]).stream().pipeThrough(transform)
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

/** The state as a fragment value: deflate-raw, then base64url. */
export async function encodeState(state) {
  const bytes = new TextEncoder().encode(JSON.stringify(state))
  return toBase64Url(await through(bytes, new CompressionStream('deflate-raw')))
}

/** The state a fragment value holds; throws when it is not one this page wrote. */
export async function decodeState(text) {
  const bytes = await through(fromBase64Url(text), new DecompressionStream('deflate-raw'))
  const state = JSON.parse(new TextDecoder().decode(bytes))
  if (state === null || typeof state !== 'object' || state.v !== 1) throw new Error('not a playground state')
  return state
}

/** The encoded state in a fragment (`#s=…`), or undefined. */
export function stateInFragment(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''))
  return params.get(FRAGMENT_KEY) ?? undefined
}

/** The page's URL holding the state: the current one with its fragment replaced. */
export function linkFor(encoded) {
  const url = new URL(window.location.href)
  url.hash = `${FRAGMENT_KEY}=${encoded}`
  return url.href
}

export function saveSession(state) {
  try {
    window.localStorage.setItem(STORAGE_KEY, JSON.stringify(state))
  } catch {
    // Storage off or full: the session is simply not kept.
  }
}

export function loadSession() {
  try {
    const text = window.localStorage.getItem(STORAGE_KEY)
    if (text === null) return undefined
    const state = JSON.parse(text)
    return state !== null && typeof state === 'object' && state.v === 1 ? state : undefined
  } catch {
    return undefined
  }
}
