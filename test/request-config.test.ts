// Construction (request-plugin.md §2): every config key is checked by createRequest itself, and a
// wrong value throws at once with a message naming the key and what it must be.
import t from 'tap'
import { Agent } from 'undici'
import { createRequest, DEFAULTS } from '../extensions/request/index.js'
import { resolvePolicy } from '../extensions/request/config.js'

const INVALID: Array<[string, Record<string, unknown>, string]> = [
  ['timeoutMs zero', { timeoutMs: 0 }, 'timeoutMs must be an integer from 1 to 2147483647'],
  ['timeoutMs fractional', { timeoutMs: 1.5 }, 'timeoutMs must be an integer from 1 to 2147483647'],
  ['timeoutMs null', { timeoutMs: null }, 'timeoutMs must be an integer from 1 to 2147483647'],
  ['timeoutMs too large', { timeoutMs: 2 ** 31 }, 'timeoutMs must be an integer from 1 to 2147483647'],
  ['redirect always', { redirect: 'always' }, 'Unsupported redirect mode always: only "refuse" and "follow" are implemented'],
  ['redirect manual', { redirect: 'manual' }, 'Unsupported redirect mode manual: only "refuse" and "follow" are implemented'],
  ['redirect boolean', { redirect: true }, 'Unsupported redirect mode true: only "refuse" and "follow" are implemented'],
  ['maxRedirects negative', { maxRedirects: -1 }, 'maxRedirects must be an integer from 0 to 20'],
  ['maxRedirects 21', { maxRedirects: 21 }, 'maxRedirects must be an integer from 0 to 20'],
  ['maxRedirects NaN', { maxRedirects: Number.NaN }, 'maxRedirects must be an integer from 0 to 20'],
  ['maxRedirects string', { maxRedirects: '2' }, 'maxRedirects must be an integer from 0 to 20'],
  ['redirectHttpsUpgrade string', { redirectHttpsUpgrade: 'yes' }, 'redirectHttpsUpgrade must be a boolean'],
  ['allowHeaders false', { allowHeaders: false }, 'allowHeaders must be true or a list of header names'],
  ['allowHeaders string', { allowHeaders: 'x-api-key' }, 'allowHeaders must be true or a list of header names'],
  ['allowHeaders bad name', { allowHeaders: ['x api key'] }, 'allowHeaders must be true or a list of header names'],
  ['checkUrl string', { checkUrl: 'refuse-private' }, 'checkUrl must be a function'],
  ['denyPrivateNetworks string', { denyPrivateNetworks: 'true' }, 'denyPrivateNetworks must be a boolean'],
  ['allowHosts string', { allowHosts: 'internal.example', denyPrivateNetworks: true }, 'allowHosts must be a list of host names or IP addresses'],
  ['allowHosts with a port', { allowHosts: ['127.0.0.1:8080'], denyPrivateNetworks: true }, 'allowHosts entry "127.0.0.1:8080" is not a host name or IP address (no scheme, port, path or credentials)'],
  ['allowHosts with a scheme', { allowHosts: ['http://internal'], denyPrivateNetworks: true }, 'allowHosts entry "http://internal" is not a host name or IP address (no scheme, port, path or credentials)'],
  ['allowHosts with a path', { allowHosts: ['internal/x'], denyPrivateNetworks: true }, 'allowHosts entry "internal/x" is not a host name or IP address (no scheme, port, path or credentials)'],
  ['allowHosts with credentials', { allowHosts: ['user@internal'], denyPrivateNetworks: true }, 'allowHosts entry "user@internal" is not a host name or IP address (no scheme, port, path or credentials)'],
  ['allowHosts empty entry', { allowHosts: [''], denyPrivateNetworks: true }, 'allowHosts entry "" is not a host name or IP address (no scheme, port, path or credentials)'],
  ['allowHosts number', { allowHosts: [127], denyPrivateNetworks: true }, 'allowHosts entry 127 is not a host name or IP address (no scheme, port, path or credentials)'],
  ['allowHosts without denyPrivateNetworks', { allowHosts: ['127.0.0.1'] }, 'allowHosts lists exceptions to denyPrivateNetworks, which must then be true'],
  ['allowedProtocols empty', { allowedProtocols: [] }, 'allowedProtocols must be a non-empty list drawn from "http:" and "https:"'],
  ['allowedProtocols file:', { allowedProtocols: ['http:', 'file:'] }, 'allowedProtocols must be a non-empty list drawn from "http:" and "https:"'],
  ['allowedProtocols without colon', { allowedProtocols: ['https'] }, 'allowedProtocols must be a non-empty list drawn from "http:" and "https:"'],
  ['maxResponseBytes zero', { maxResponseBytes: 0 }, 'maxResponseBytes must be a positive integer'],
  ['maxResponseBytes Infinity', { maxResponseBytes: Number.POSITIVE_INFINITY }, 'maxResponseBytes must be a positive integer'],
  ['maxBytesInFlight below maxResponseBytes', { maxResponseBytes: 2048, maxBytesInFlight: 1024 }, 'maxBytesInFlight must be an integer of at least maxResponseBytes (2048)'],
  ['maxBytesInFlight not an integer', { maxBytesInFlight: 1.5e8 + 0.5 }, 'maxBytesInFlight must be an integer of at least maxResponseBytes (10485760)'],
  ['dispatcher object', { dispatcher: {} }, 'dispatcher must be an undici Dispatcher (an object with dispatch and request methods)'],
  ['unknown key', { redirectSameOrigin: true }, 'redirectSameOrigin is not a request config key (known keys: timeoutMs, redirect, maxRedirects, redirectHttpsUpgrade, allowHeaders, checkUrl, denyPrivateNetworks, allowHosts, allowedProtocols, maxResponseBytes, maxBytesInFlight, dispatcher)'],
  ['typo', { maxRedirect: 3 }, /^maxRedirect is not a request config key/ as unknown as string],
]

t.test('a wrong config value throws at construction, naming the key', async (t) => {
  for (const [name, config, message] of INVALID) {
    t.throws(() => createRequest(config as never), { message }, name)
  }
  t.throws(() => createRequest(null as never), { message: 'request config must be an object' })
  t.throws(() => createRequest([] as never), { message: 'request config must be an object' })
})

t.test('denyPrivateNetworks cannot be promised on a foreign dispatcher', async (t) => {
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.close())
  t.throws(() => createRequest({ denyPrivateNetworks: true, dispatcher }), {
    message: "denyPrivateNetworks cannot be combined with a custom dispatcher: the check runs in the connector of the plugin's own Agent",
  })
  t.type(createRequest({ dispatcher }), 'function', 'a custom dispatcher alone is fine')
})

t.test('defaults: no config, an empty config and explicit undefined values give the documented policy', async (t) => {
  const expected = {
    timeoutMs: 10000,
    redirect: 'refuse',
    maxRedirects: 2,
    redirectHttpsUpgrade: true,
    allowHeaders: null,
    checkUrl: undefined,
    denyPrivateNetworks: false,
    allowHosts: new Set(),
    allowedProtocols: ['http:', 'https:'],
    maxResponseBytes: 10485760,
    maxBytesInFlight: 67108864,
    dispatcher: undefined,
  }
  t.same(resolvePolicy(undefined), expected)
  t.same(resolvePolicy({}), expected)
  t.same(resolvePolicy({ timeoutMs: undefined, redirect: undefined }), expected)
  t.equal(DEFAULTS.maxResponseBytes, 10485760)
  t.type(createRequest(), 'function')
})

t.test('valid values are accepted and normalized', async (t) => {
  const policy = resolvePolicy({
    timeoutMs: 1,
    redirect: 'follow',
    maxRedirects: 20,
    redirectHttpsUpgrade: false,
    allowHeaders: ['X-Api-Key', 'Accept'],
    checkUrl: () => {},
    denyPrivateNetworks: true,
    allowedProtocols: ['HTTPS:'],
    maxResponseBytes: 1,
  })
  t.same([...policy.allowHeaders!], ['x-api-key', 'accept'])
  t.same(policy.allowedProtocols, ['https:'])
  t.equal(policy.maxRedirects, 20)
  t.same([...resolvePolicy({ allowHeaders: [] }).allowHeaders!], [], '[] forwards none')
  const hosts = resolvePolicy({ denyPrivateNetworks: true, allowHosts: ['Internal.Example', '2130706433', '[::1]', '::FFFF:127.0.0.1', 'internal.example'] }).allowHosts
  t.same([...hosts], ['internal.example', '127.0.0.1', '::1', '::ffff:7f00:1'], 'allowHosts in the WHATWG URL host form, without brackets, once each')
  t.ok(Object.isFrozen(policy), 'the policy cannot be changed after construction')
})
