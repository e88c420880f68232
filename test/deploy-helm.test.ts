// The Helm chart (deploy/helm), checked with the real helm (test/helm-support.ts): `helm lint
// --strict`, and `helm template` with the defaults and with each value, every rendered object
// validated against the Kubernetes API schemas (the ServiceMonitor, a CRD, by hand). What the pods
// would read is given to the app itself: the options and mappings ConfigMaps, the init container's
// script joining the Secret's credentials into the options. Skipped, with the reason, where helm
// cannot be fetched (no network).
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { parse } from 'yaml'
import { loadMappings } from '../sources/mappings.js'
import { packageInfo } from '../support/package.js'
import { resolveConfig } from '../config/resolve.js'
import { resolveAuthOptions } from '../http/plugins/auth/options.js'
import { resolveRateLimitOptions } from '../http/plugins/rate-limit/options.js'
import { buildServer, configFromEnvironment } from '../server.js'
import { CHART, Helm, MAIN_THREAD_MIB, byKind, validateObjects, mebibytes, one, threadsFor, toolsFor, type K8sObject, type ToolRun, type Values } from './helm-support.js'
import { kustomized } from './deploy-kustomized.js'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { DeployTools } from './deploy-tools.js'
import { placedBlocks } from './readme-support.js'
import { untracked } from './startup-support.js'

/**
 * Options as start-up resolves them (app.ts): resolveConfig, then what the auth and rate-limit
 * plugins make, as they are registered, of what it hands them. Throws the ConfigError start-up would.
 */
function resolvedAtStart(options: unknown) {
  const config = resolveConfig(options)
  return { config, auth: config.auth === null ? null : resolveAuthOptions(config.auth), rateLimit: config.rateLimit === false ? false : resolveRateLimitOptions(config.rateLimit) }
}

/**
 * helm, each distinct run (arguments and values) made once for the file: several tests render the
 * same values (the defaults six times), and helm's output is a function of the chart and them.
 */
class RunOnce extends Helm {
  static readonly #runs = new Map<string, Promise<ToolRun>>()

  override run(args: readonly string[], values: Values = {}): Promise<ToolRun> {
    const key = JSON.stringify([args, values])
    let run = RunOnce.#runs.get(key)
    if (run === undefined) {
      run = super.run(args, values)
      RunOnce.#runs.set(key, run)
    }
    return run
  }
}

/** Runs `body` with helm, or skips `t` with the reason helm cannot be had. */
function withHelm(body: (t: Test, helm: Helm, tools: DeployTools) => Promise<void>): (t: Test) => Promise<void> {
  return async (t) => {
    const tools = await toolsFor(t)
    if (tools !== undefined) await body(t, new RunOnce(tools), tools)
  }
}

const configMapsOf = (objects: readonly K8sObject[]): Record<string, Record<string, string>> =>
  Object.fromEntries(byKind(objects, 'ConfigMap').map((object) => [object.metadata.name, object.data as Record<string, string>]))

const podOf = (objects: readonly K8sObject[]): K8sObject => one(objects, 'Deployment').spec.template.spec
const containerOf = (objects: readonly K8sObject[]): K8sObject => podOf(objects).containers[0]
const optionsOf = (objects: readonly K8sObject[]): Record<string, any> => {
  const [options] = byKind(objects, 'ConfigMap').filter((object) => object.metadata.name.endsWith('-options'))
  return JSON.parse(options!.data['options.json'] as string) as Record<string, any>
}

function tempDirectory(t: Test): string {
  const directory = mkdtempSync(join(tmpdir(), 'mapper-service-helm-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  return directory
}

/** A process run to its end, without tap's process-info hooks. */
function exec(command: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(...untracked(command, args), { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/**
 * What the pod's init container does with these objects: the script of the options ConfigMap run
 * by node over the ConfigMap's options.json and a directory holding the Secret's keys (the chart's
 * Secret, or `secret` for an existingSecret), writing the options the service reads.
 */
async function initContainer(t: Test, objects: readonly K8sObject[], secret?: Record<string, string>): Promise<{ options: Record<string, any>; stdout: string }> {
  const pod = podOf(objects)
  const [init] = pod.initContainers
  const volumes = Object.fromEntries(pod.volumes.map((volume: K8sObject) => [volume.name, volume]))
  const mounts = Object.fromEntries(init.volumeMounts.map((mount: K8sObject) => [mount.mountPath, mount.name]))
  const root = tempDirectory(t)
  // Each volume of the init container as a directory of its own, at the path it is mounted on.
  const at = (path: string): string => join(root, path)
  for (const [path, name] of Object.entries(mounts)) {
    mkdirSync(at(path), { recursive: true })
    const volume = volumes[name]
    if (volume.configMap !== undefined) {
      for (const [key, text] of Object.entries(configMapsOf(objects)[volume.configMap.name]!)) writeFileSync(join(at(path), key), text)
    } else if (volume.secret !== undefined) {
      const rendered = byKind(objects, 'Secret').find((object) => object.metadata.name === volume.secret.secretName)
      const data = rendered === undefined ? secret ?? {} : Object.fromEntries(Object.entries(rendered.data as Record<string, string>).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]))
      for (const [key, text] of Object.entries(data)) writeFileSync(join(at(path), key), text)
    }
  }
  const [command, ...args] = init.command as string[]
  t.equal(command, 'node')
  const result = await exec(process.execPath, args.map((arg) => (arg.startsWith('/') ? at(arg) : arg)))
  t.equal(result.code, 0, `the init container succeeds: ${result.stderr}`)
  const output = containerOf(objects).env.find((env: { name: string }) => env.name === 'OPTIONS_FILE').value as string
  return { options: JSON.parse(readFileSync(at(output), 'utf8')) as Record<string, any>, stdout: result.stdout }
}

const STANDARD_LABELS = ['helm.sh/chart', 'app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/version', 'app.kubernetes.io/managed-by']

t.test('helm lint --strict: the chart with its defaults and with every value set', withHelm(async (t, helm) => {
  const defaults = await helm.lint()
  t.equal(defaults.code, 0, `lint passes with the defaults: ${defaults.stdout}${defaults.stderr}`)
  const everything = await helm.lint({
    nameOverride: 'mapper',
    imagePullSecrets: [{ name: 'registry' }],
    resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '2', memory: '1Gi' } },
    extraEnv: [{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://collector:4318' }],
    nodeSelector: { 'kubernetes.io/arch': 'amd64' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'mapper', effect: 'NoSchedule' }],
    affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
    redis: { url: 'redis://:pw@redis:6379/0' },
    auth: { secret: 'a-shared-secret-of-at-least-32-characters' },
    store: { url: 'postgres://mapper:pw@postgres:5432/mapper' },
    hpa: { enabled: false },
    replicaCount: 3,
    serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
  })
  t.equal(everything.code, 0, `lint passes with every value: ${everything.stdout}${everything.stderr}`)
  t.notMatch(`${defaults.stdout}${everything.stdout}`, /\[(WARNING|ERROR)\]/, 'no warnings')
}))

t.test('default values: the kustomize objects, valid against the API schemas, served by the app', withHelm(async (t, helm, tools) => {
  const objects = await helm.template('mapper')
  t.strictSame(objects.map((object) => object.kind).sort(), ['ConfigMap', 'ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service'])
  validateObjects(t, objects)

  const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string; name: string }
  t.equal(chart.appVersion, packageInfo().version, 'appVersion is the package version')
  t.equal(chart.name, packageInfo().name)

  // The same pod as `kubectl kustomize deploy/` (test/deploy.test.ts checks that one).
  const reference = await kustomized(tools)
  const deployment = one(objects, 'Deployment')
  const pod = podOf(objects)
  const referencePod = podOf(reference)
  const container = containerOf(objects)
  const referenceContainer = containerOf(reference)
  t.equal(container.image, `${packageInfo().name}:${packageInfo().version}`, 'the image defaults to the appVersion')
  for (const key of ['ports', 'env', 'volumeMounts', 'lifecycle', 'readinessProbe', 'livenessProbe', 'resources', 'securityContext', 'imagePullPolicy']) {
    t.same(container[key], referenceContainer[key], `container ${key} as in deploy/deployment.yaml`)
  }
  t.same(pod.securityContext, referencePod.securityContext, 'pod security context')
  t.equal(pod.terminationGracePeriodSeconds, referencePod.terminationGracePeriodSeconds)
  t.equal(pod.initContainers, undefined, 'no credentials: no init container')
  t.equal(deployment.spec.replicas, undefined, 'with the autoscaler on, it owns the replica count')

  const hpa = one(objects, 'HorizontalPodAutoscaler')
  const referenceHpa = one(reference, 'HorizontalPodAutoscaler')
  t.same({ ...hpa.spec, scaleTargetRef: undefined }, { ...referenceHpa.spec, scaleTargetRef: undefined })
  t.equal(hpa.spec.scaleTargetRef.name, deployment.metadata.name)
  t.same(one(objects, 'Service').spec.ports, one(reference, 'Service').spec.ports)

  // The mappings ConfigMap is mounted whole: kubelet then updates it in place, and the watch reloads.
  const volumes = Object.fromEntries(pod.volumes.map((volume: K8sObject) => [volume.name, volume]))
  const configMaps = configMapsOf(objects)
  t.ok(configMaps[volumes.mappings.configMap.name], 'the mappings volume is the mappings ConfigMap')
  t.ok(configMaps[volumes.options.configMap.name], 'the options volume is the options ConfigMap')
  t.equal(volumes.mappings.configMap.items, undefined, 'no items: every key is a file, and updates reach the pod')
  t.notOk(container.volumeMounts.some((mount: { subPath?: string }) => mount.subPath !== undefined), 'no subPath (it would freeze the files)')
  const mappingsData = configMaps[volumes.mappings.configMap.name]!
  const referenceMappings = byKind(reference, 'ConfigMap').find((object) => object.metadata.name === referencePod.volumes.find((v: K8sObject) => v.name === 'mappings').configMap.name)!
  t.same(mappingsData, referenceMappings.data, 'the same mapping files as the kustomization')
  const options = optionsOf(objects)
  const referenceOptionsMap = byKind(reference, 'ConfigMap').find((object) => object.metadata.name === referencePod.volumes.find((v: K8sObject) => v.name === 'options').configMap.name)!
  t.same(resolvedAtStart(options), resolvedAtStart(JSON.parse(referenceOptionsMap.data['options.json'] as string)), 'the same options as the kustomization, once resolved')

  // What the pod would read: the ConfigMaps as files, served by the app, both probes answering.
  const directory = tempDirectory(t)
  for (const [file, text] of Object.entries(mappingsData)) writeFileSync(join(directory, file), text)
  const app = await buildServer({ options: { ...options, logging: { level: 'silent' }, underPressure: false }, mappings: await loadMappings(directory) })
  t.teardown(() => app.close())
  for (const probe of [container.readinessProbe, container.livenessProbe]) {
    t.equal((await app.inject({ method: 'GET', url: probe.httpGet.path })).statusCode, 200, `${probe.httpGet.path} answers 200`)
  }

  t.match(await helm.notes('mapper'), /reload/, 'the notes say how mappings reload')
}))

t.test('standard labels, name overrides and the 63-character limit', withHelm(async (t, helm) => {
  // Helm takes release names of up to 53 characters: with the chart's name, 68.
  const long = `r${'x'.repeat(52)}`
  // The six renders side by side (helm is a process each), checked in turn.
  const [objects, sameName, overridden, full, truncated, dashed] = await Promise.all([
    helm.template('mapper', { serviceMonitor: { enabled: true, labels: { release: 'prometheus' } } }),
    helm.template('mapper-service'),
    helm.template('prod', { nameOverride: 'maps' }),
    helm.template('prod', { fullnameOverride: 'mapper' }),
    helm.template(long),
    helm.template('prod', { fullnameOverride: `${'a'.repeat(62)}-b` }),
  ])
  for (const object of objects) {
    for (const label of STANDARD_LABELS) t.ok(object.metadata.labels[label], `${object.kind} has ${label}`)
    t.equal(object.metadata.labels['app.kubernetes.io/instance'], 'mapper')
    t.equal(object.metadata.labels['app.kubernetes.io/managed-by'], 'Helm')
    t.equal(object.metadata.labels['app.kubernetes.io/version'], packageInfo().version)
    t.match(object.metadata.name, /^mapper-mapper-service(-mappings|-options)?$/, `${object.kind}: <release>-<chart>`)
  }
  const deployment = one(objects, 'Deployment')
  const selector = deployment.spec.selector.matchLabels as Record<string, string>
  t.strictSame(selector, { 'app.kubernetes.io/name': 'mapper-service', 'app.kubernetes.io/instance': 'mapper' }, 'the selector: name and instance only, which never change')
  t.match(deployment.spec.template.metadata.labels, selector, 'the pods carry the selector labels')
  for (const label of STANDARD_LABELS) t.ok(deployment.spec.template.metadata.labels[label], `pods have ${label}`)
  t.strictSame(one(objects, 'Service').spec.selector, selector, 'the Service selects the pods')
  t.strictSame(one(objects, 'PodDisruptionBudget').spec.selector.matchLabels, selector, 'the budget counts the pods')
  t.strictSame(one(objects, 'ServiceMonitor').spec.selector.matchLabels, selector, 'the ServiceMonitor selects the Service')
  t.equal(one(objects, 'ServiceMonitor').metadata.labels.release, 'prometheus', 'extra labels for the Prometheus selector')

  const named = sameName.map((object) => object.metadata.name as string)
  t.ok(named.every((name) => /^mapper-service(-mappings|-options)?$/.test(name)), 'a release named after the chart: not repeated')
  t.equal(one(overridden, 'Deployment').metadata.name, 'prod-maps')
  t.equal(one(overridden, 'Deployment').spec.selector.matchLabels['app.kubernetes.io/name'], 'maps', 'nameOverride is the name label too')
  t.strictSame(full.map((object) => object.metadata.name as string).sort(), ['mapper', 'mapper', 'mapper', 'mapper', 'mapper-mappings', 'mapper-options'])

  for (const object of truncated.filter((o) => ['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'].includes(o.kind))) {
    t.equal(object.metadata.name, `${long}-mapper-se`, `${object.kind}: cut to 63 characters`)
  }
  validateObjects(t, truncated)
  t.equal(one(dashed, 'Deployment').metadata.name, 'a'.repeat(62), 'a name cut before a dash loses the dash')
}))

t.test('extraEnv: OTEL_* and REQUEST_ALLOW_HOSTS reach the container; the chart\'s own variables are refused', withHelm(async (t, helm) => {
  const extraEnv = [
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability:4318' },
    { name: 'OTEL_SERVICE_NAME', value: 'mapper' },
    { name: 'REQUEST_ALLOW_HOSTS', value: 'catalogue.internal,10.0.4.12' },
    { name: 'OTEL_EXPORTER_OTLP_HEADERS', valueFrom: { secretKeyRef: { name: 'otel', key: 'headers' } } },
  ]
  const objects = await helm.template('mapper', { extraEnv })
  validateObjects(t, objects)
  const env = containerOf(objects).env as K8sObject[]
  t.strictSame(env.map((entry) => entry.name), ['PORT', 'MAPPINGS', 'OPTIONS_FILE', ...extraEnv.map((entry) => entry.name)], "after the chart's own, in the order given")
  t.strictSame(env.slice(3), extraEnv, 'as given, valueFrom included')
  // The four renders side by side (helm is a process each), checked in turn.
  const names = ['PORT', 'MAPPINGS', 'OPTIONS', 'OPTIONS_FILE']
  const refusals = await Promise.all(names.map((name) => helm.refusal({ extraEnv: [{ name, value: 'x' }] })))
  for (const [index, name] of names.entries()) {
    t.match(refusals[index], new RegExp(`extraEnv: ${name} is set by the chart`), `${name} refused`)
  }
}))

t.test('credentials: in a Secret, never in a ConfigMap, joined into the options by the init container', withHelm(async (t, helm) => {
  const url = 'redis://:a-redis-password@redis-master.cache:6379/0'
  const secret = 'a-shared-secret-of-at-least-32-characters'
  const objects = await helm.template('prod', { redis: { url }, auth: { secret }, options: { auth: { issuer: 'https://issuer.example' }, rateLimit: { max: 600, timeWindow: 1000 } } })
  t.strictSame(objects.map((object) => object.kind).sort(), ['ConfigMap', 'ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Secret', 'Service'])
  validateObjects(t, objects)
  const rendered = one(objects, 'Secret')
  t.equal(rendered.type, 'Opaque')
  t.strictSame(Object.keys(rendered.data).sort(), ['auth-secret', 'redis-url'])
  t.equal(Buffer.from(rendered.data['redis-url'], 'base64').toString(), url)
  t.equal(Buffer.from(rendered.data['auth-secret'], 'base64').toString(), secret)
  for (const configMap of byKind(objects, 'ConfigMap')) {
    const text = JSON.stringify(configMap)
    t.notOk(text.includes('a-redis-password') || text.includes(secret), `no credential in ConfigMap ${configMap.metadata.name}`)
  }
  t.notOk(JSON.stringify(one(objects, 'Deployment')).includes('a-redis-password'), 'nor in the Deployment')

  const pod = podOf(objects)
  t.equal(pod.volumes.find((volume: K8sObject) => volume.name === 'credentials').secret.secretName, rendered.metadata.name)
  t.same(pod.volumes.find((volume: K8sObject) => volume.name === 'config').emptyDir, { medium: 'Memory', sizeLimit: '1Mi' }, 'the joined options in memory only')
  t.notOk(containerOf(objects).volumeMounts.some((mount: K8sObject) => mount.name === 'credentials'), 'the service container does not mount the Secret')
  t.equal(pod.initContainers[0].image, containerOf(objects).image, 'the init container is the service image (node)')

  const { options, stdout } = await initContainer(t, objects)
  t.same(options.rateLimit, { max: 600, timeWindow: 1000, redis: url }, "rateLimit.redis joined, the options' max and timeWindow kept")
  t.same(options.auth, { issuer: 'https://issuer.example', secret }, 'auth.secret joined, the rest of options.auth kept')
  t.match(stdout, /with redis-url as rateLimit.redis and auth-secret as auth.secret/, 'the init container says what it joined')
  const resolved = resolvedAtStart(options)
  t.same(resolved.rateLimit, { max: 600, timeWindow: 1000, redis: url }, 'what the app resolves')
  t.equal(resolved.auth?.strategy, 'secret')

  // As before the Secret: rate limiting on with its defaults when the options leave it off.
  for (const rateLimit of [undefined, true]) {
    const joined = (await initContainer(t, await helm.template('prod', { redis: { url }, options: { rateLimit } }))).options
    t.same(joined.rateLimit, { redis: url }, `options.rateLimit ${String(rateLimit)}: on, with the defaults`)
  }

  const annotations = async (values: Values): Promise<Record<string, string>> => one(await helm.template('prod', values), 'Deployment').spec.template.metadata.annotations
  // The renders side by side (helm is a process each), checked in turn.
  const [plain, redis, otherRedis, inOptions, redisInOptions, twoStrategies] = await Promise.all([
    annotations({}),
    annotations({ redis: { url } }),
    annotations({ redis: { url: 'redis://other:6379/0' } }),
    helm.refusal({ options: { auth: { secret } } }),
    helm.refusal({ options: { rateLimit: { redis: url } } }),
    helm.refusal({ auth: { secret }, options: { auth: { jwksUri: 'https://issuer.example/jwks' } } }),
  ])
  t.equal(plain['checksum/credentials'], undefined)
  t.not(redis['checksum/credentials'], otherRedis['checksum/credentials'], 'another Redis rolls the pods')
  t.equal(redis['checksum/options'], plain['checksum/options'], 'the options themselves unchanged')

  t.match(inOptions, /options\.auth\.secret would be written into a ConfigMap/)
  t.match(redisInOptions, /options\.rateLimit\.redis would be written into a ConfigMap/)
  t.match(twoStrategies, /exactly one key strategy/)
}))

t.test('existingSecret: the user\'s Secret is used and none is rendered', withHelm(async (t, helm) => {
  const objects = await helm.template('prod', { existingSecret: 'mapper-credentials', options: { rateLimit: { max: 50 } } })
  validateObjects(t, objects)
  t.equal(byKind(objects, 'Secret').length, 0, 'no Secret of the chart')
  const pod = podOf(objects)
  t.equal(pod.volumes.find((volume: K8sObject) => volume.name === 'credentials').secret.secretName, 'mapper-credentials')
  t.equal(one(objects, 'Deployment').spec.template.metadata.annotations['checksum/credentials'], undefined, 'its content is not known to the chart')
  const url = 'redis://:pw@redis:6379/0'
  // A key written with an editor ends with a line break, which is not part of the credential.
  const { options } = await initContainer(t, objects, { 'redis-url': `${url}\n` })
  t.same(options.rateLimit, { max: 50, redis: url }, 'its redis-url joined')
  t.equal(options.auth, undefined, 'no auth-secret key: no auth')
  const none = await initContainer(t, objects, {})
  t.same(none.options, optionsOf(objects), 'a Secret without either key: the options as they are')
  t.match(none.stdout, /no redis-url nor auth-secret/)
  t.match(await helm.notes('prod', { existingSecret: 'mapper-credentials' }), /rollout restart deployment\/prod-mapper-service/, 'the notes say how to apply a change of it')
  t.match(await helm.refusal({ existingSecret: 'mine', redis: { url } }), /existingSecret and redis\.url or auth\.secret/)

  // Options it cannot read: one line for `kubectl logs <pod> -c options`, no stack trace.
  const directory = tempDirectory(t)
  const script = join(directory, 'credentials.mjs')
  writeFileSync(script, configMapsOf(objects)['prod-mapper-service-options']!['credentials.mjs']!)
  writeFileSync(join(directory, 'options.json'), '{ "rateLimit": ')
  const broken = await exec(process.execPath, [script, join(directory, 'options.json'), directory, join(directory, 'out.json')])
  t.equal(broken.code, 1)
  t.match(broken.stderr, /^options: .*options\.json: .*JSON.*\n$/, `one line: ${broken.stderr}`)
  t.equal(broken.stderr.split('\n').length, 2, 'and nothing else')
}))

const envOf = (objects: readonly K8sObject[], name: string): K8sObject | undefined => (containerOf(objects).env as K8sObject[]).find((entry) => entry.name === name)

/**
 * What the service makes of a pod's environment at start (configFromEnvironment, as the image's
 * entry point): the options file written from the options ConfigMap, the mappings from theirs, and
 * STORE_URL as the kubelet would set it from the Secret's key.
 */
async function startedWith(t: Test, objects: readonly K8sObject[], storeUrl: string | undefined) {
  const directory = tempDirectory(t)
  const pod = podOf(objects)
  const mappings = configMapsOf(objects)[pod.volumes.find((volume: K8sObject) => volume.name === 'mappings').configMap.name]!
  mkdirSync(join(directory, 'mappings'))
  for (const [file, text] of Object.entries(mappings)) writeFileSync(join(directory, 'mappings', file), text)
  writeFileSync(join(directory, 'options.json'), JSON.stringify(optionsOf(objects)))
  const env: Record<string, string> = { PORT: '3333', MAPPINGS: join(directory, 'mappings'), OPTIONS_FILE: join(directory, 'options.json') }
  if (storeUrl !== undefined) env.STORE_URL = storeUrl
  const config = await configFromEnvironment(env, () => {})
  return resolveConfig(config.options)
}

t.test('store.url: in the Secret as store-url, STORE_URL from it, never in a ConfigMap; nothing of the store when empty', withHelm(async (t, helm) => {
  const url = 'postgres://mapper:a-store-password@postgres.db:5432/mapper'
  const redisUrl = 'redis://:a-redis-password@redis-master.cache:6379/0'
  // The renders side by side (helm is a process each), checked in turn.
  const [objects, withRedis, plain, redisOnly] = await Promise.all([
    helm.template('prod', { store: { url }, options: { store: { keepVersions: 5 } } }),
    helm.template('prod', { store: { url }, redis: { url: redisUrl }, options: { rateLimit: { max: 50 } } }),
    helm.template('prod'),
    helm.template('prod', { redis: { url: redisUrl } }),
  ])
  t.strictSame(objects.map((object) => object.kind).sort(), ['ConfigMap', 'ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Secret', 'Service'])
  validateObjects(t, objects)
  const secret = one(objects, 'Secret')
  t.strictSame(Object.keys(secret.data), ['store-url'], 'the store URL alone')
  t.equal(secret.data['store-url'], Buffer.from(url).toString('base64'), 'store-url: the URL, base64')
  t.strictSame((containerOf(objects).env as K8sObject[]).map((entry) => entry.name), ['PORT', 'MAPPINGS', 'OPTIONS_FILE', 'STORE_URL'])
  t.strictSame(envOf(objects, 'STORE_URL'), { name: 'STORE_URL', valueFrom: { secretKeyRef: { name: secret.metadata.name, key: 'store-url' } } }, "STORE_URL from the chart's Secret, not optional")
  const pod = podOf(objects)
  t.equal(pod.initContainers, undefined, 'no credential to join into the options: no init container')
  t.notOk(pod.volumes.some((volume: K8sObject) => volume.secret !== undefined), 'nor a Secret volume')
  for (const object of objects.filter((object) => object.kind !== 'Secret')) {
    t.notOk(JSON.stringify(object).includes('a-store-password'), `no password in ${object.kind} ${object.metadata.name}`)
  }
  t.same(optionsOf(objects).store, { keepVersions: 5 }, 'the rest of options.store stays in the options')
  t.same((await startedWith(t, objects, url)).store, { url, keepVersions: 5, maxMappings: 1000, resyncMs: 30000 }, 'the store the service resolves: STORE_URL joined to options.store')

  // Beside redis.url: one Secret with both keys; the init container joins redis-url and leaves store-url to STORE_URL.
  validateObjects(t, withRedis)
  t.strictSame(Object.keys(one(withRedis, 'Secret').data).sort(), ['redis-url', 'store-url'])
  t.strictSame(envOf(withRedis, 'STORE_URL')!.valueFrom.secretKeyRef, { name: one(withRedis, 'Secret').metadata.name, key: 'store-url' })
  const { options } = await initContainer(t, withRedis)
  t.same(options.rateLimit, { max: 50, redis: redisUrl }, 'redis-url joined as before')
  t.equal(options.store, undefined, 'the store URL is not written into the options file')
  t.notOk(JSON.stringify(options).includes('a-store-password'))

  // Empty (the default): no Secret, no STORE_URL; the service starts without a store.
  t.equal(byKind(plain, 'Secret').length, 0, 'no Secret')
  t.equal(envOf(plain, 'STORE_URL'), undefined, 'no STORE_URL')
  t.equal(one(plain, 'Deployment').spec.template.metadata.annotations['checksum/credentials'], undefined)
  t.equal((await startedWith(t, plain, undefined)).store, null, 'no store: the write namespace answers 404')
  t.strictSame(Object.keys(one(redisOnly, 'Secret').data), ['redis-url'], 'redis.url alone: no store-url key')
  t.equal(envOf(redisOnly, 'STORE_URL'), undefined, 'nor STORE_URL')

  // The notes: where writes go, and that they are open with authentication off.
  const [notes, notesWithAuth, notesPlain] = await Promise.all([
    helm.notes('prod', { store: { url } }),
    helm.notes('prod', { store: { url }, options: { auth: { jwksUri: 'https://issuer.example/jwks' }, mappings: { write: { claims: { sub: ['publish-pipeline'] } } } } }),
    helm.notes('prod'),
  ])
  t.match(notes, /PUT and DELETE \/mappings\/\{id\} write to the store of store\.url/)
  t.match(notes, /anyone who reaches the Service can write\s+mappings/, 'authentication off: said')
  t.notMatch(notes, /a-store-password/, 'the notes never show the URL')
  t.notMatch(notesWithAuth, /anyone who reaches/, 'with options.auth: not said')
  t.notMatch(notesPlain, /Managed mappings/, 'no store: nothing of it')
}))

t.test('store.url with existingSecret, the checksum, and the values refused', withHelm(async (t, helm) => {
  const url = 'postgres://mapper:a-store-password@postgres.db:5432/mapper'
  const existing = await helm.template('prod', { existingSecret: 'mapper-credentials' })
  validateObjects(t, existing)
  t.strictSame(envOf(existing, 'STORE_URL'), { name: 'STORE_URL', valueFrom: { secretKeyRef: { name: 'mapper-credentials', key: 'store-url', optional: true } } }, 'existingSecret: STORE_URL from its key store-url, which it may lack')
  const { options } = await initContainer(t, existing, { 'store-url': url })
  t.equal(options.store, undefined, 'the init container leaves store-url alone')
  t.match(await helm.notes('prod', { existingSecret: 'mapper-credentials' }), /keys redis-url, auth-secret, store-url/)

  const annotations = async (values: Values): Promise<Record<string, string>> => one(await helm.template('prod', values), 'Deployment').spec.template.metadata.annotations
  const redisUrl = 'redis://:pw@redis:6379/0'
  // The renders side by side (helm is a process each), checked in turn.
  const [store, otherStore, redis, redisAndStore] = await Promise.all([
    annotations({ store: { url } }),
    annotations({ store: { url: 'postgres://mapper:another-password@postgres.db:5432/mapper' } }),
    annotations({ redis: { url: redisUrl } }),
    annotations({ redis: { url: redisUrl }, store: { url } }),
  ])
  t.ok(store['checksum/credentials'], 'store.url alone: a checksum of the Secret')
  t.not(store['checksum/credentials'], otherStore['checksum/credentials'], 'another store URL rolls the pods')
  t.not(redisAndStore['checksum/credentials'], redis['checksum/credentials'], 'a store URL added beside redis.url rolls the pods')
  t.equal(redis['checksum/credentials'], createHash('sha256').update(`${redisUrl}\n`).digest('hex'), 'without store.url, the checksum of the chart before it: an upgrade rolls no pod')
  t.equal(store['checksum/options'], one(await helm.template('prod'), 'Deployment').spec.template.metadata.annotations['checksum/options'], 'the options themselves unchanged')

  // A file: store with one pod renders; the refusals, side by side, checked in turn.
  const single = await helm.template('prod', { store: { url: 'file:///tmp/mapping-store' }, hpa: { enabled: false }, replicaCount: 1 })
  t.equal(one(single, 'Deployment').spec.replicas, 1, 'a file: store with one pod and no autoscaler renders')
  t.equal(byKind(single, 'PodDisruptionBudget').length, 0)
  const [inOptions, inExtraEnv, fileWithHpa, fileWithReplicas, withExisting, storeOptionsAlone, notAStore] = await Promise.all([
    helm.refusal({ options: { store: { url } } }),
    helm.refusal({ extraEnv: [{ name: 'STORE_URL', value: url }] }),
    helm.refusal({ store: { url: 'file:///tmp/mapping-store' } }),
    helm.refusal({ store: { url: 'file:///tmp/mapping-store' }, hpa: { enabled: false }, replicaCount: 2 }),
    helm.refusal({ existingSecret: 'mapper-credentials', store: { url } }),
    helm.refusal({ options: { store: { keepVersions: 5 } } }),
    helm.refusal({ store: { url: 'mysql://mapper:a-store-password@db/mapper' } }),
  ])
  t.match(inOptions, /options\.store\.url would be written into a ConfigMap \(with its password\): give it as store\.url/)
  t.match(inExtraEnv, /extraEnv: STORE_URL is set by the chart/)
  t.match(fileWithHpa, /store\.url: a file: store is a directory on one pod's disk and serves one instance, and hpa\.enabled runs several pods/)
  t.match(fileWithReplicas, /store\.url: a file: store is a directory on one pod's disk and serves one instance, and replicaCount is 2/)
  t.match(withExisting, /existingSecret and store\.url: with existingSecret the store's URL is its key store-url/)
  t.match(storeOptionsAlone, /options\.store without store\.url/)
  t.match(notAStore, /store\.url: the service takes a postgres:\/\/ URL/)
  for (const refusal of [inOptions, inExtraEnv, withExisting, notAStore]) t.notMatch(refusal, /a-store-password/, 'no refusal shows the URL')
  const storeOptions = await helm.template('prod', { existingSecret: 'mapper-credentials', options: { store: { keepVersions: 5 } } })
  t.same(optionsOf(storeOptions).store, { keepVersions: 5 }, 'options.store with existingSecret renders: the URL may be its key store-url')
}))

t.test('mappings: text, written as given, key order kept; a YAML object is refused', withHelm(async (t, helm) => {
  // Pairings in non-alphabetical order: they run, and the output's keys come, in this order.
  const ordered = ['$id: ordered', 'mapping:', '  /zulu: /a', '  /alpha: /z', '  /mike: /m', ''].join('\n')
  const json = '{ "$id": "json", "mapping": { "/b": "/b", "/a": "/a" } }'
  const objects = await helm.template('prod', { mappings: { 'echo.json': null, 'ordered.yaml': ordered, 'json.json': json } })
  const data = configMapsOf(objects)['prod-mapper-service-mappings']!
  t.strictSame(Object.keys(data).sort(), ['json.json', 'ordered.yaml'], 'null removed the default echo.json')
  t.equal(data['ordered.yaml'], ordered, 'written as given')
  t.equal(data['json.json'], json)
  t.strictSame(Object.keys((parse(data['ordered.yaml']!) as { mapping: object }).mapping), ['/zulu', '/alpha', '/mike'], 'the pairings in written order')

  const directory = tempDirectory(t)
  for (const [file, text] of Object.entries(data)) writeFileSync(join(directory, file), text)
  const app = await buildServer({ options: { logging: { level: 'silent' }, underPressure: false }, mappings: await loadMappings(directory) })
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'POST', url: '/map/ordered', payload: { input: { a: 1, z: 2, m: 3 } } })
  t.equal(response.statusCode, 200)
  t.strictSame(Object.keys(response.json() as object).filter((key) => !['valid', 'errors'].includes(key)), ['zulu', 'alpha', 'mike'], 'the output keys in written order')

  t.match(await helm.refusal({ mappings: { 'nested.yaml': { $id: 'nested', mapping: { '/b': '/b', '/a': '/a' } } } }), /mappings\.nested\.yaml: give the document as text/, 'an object would lose its order: refused')
  t.match(await helm.refusal({ mappings: { 'notes.txt': 'x' } }), /the service reads \.json, \.yaml and \.yml files/)

  // --set-file, as the values file documents, reads the file as text.
  const file = join(directory, 'ordered.yaml')
  const fromFile = await helm.template('prod', {}, ['--set-file', `mappings.from-file\\.yaml=${file}`])
  t.equal(configMapsOf(fromFile)['prod-mapper-service-mappings']!['from-file.yaml'], ordered)
}))

t.test('values: autoscaler off, replicas, image, pull secrets, placement, options, ServiceMonitor', withHelm(async (t, helm) => {
  const placement = {
    imagePullSecrets: [{ name: 'registry' }],
    nodeSelector: { 'kubernetes.io/arch': 'amd64' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'mapper', effect: 'NoSchedule' }],
    affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'mapper-service' } } } }] } },
  }
  const objects = await helm.template('prod', {
    ...placement,
    hpa: { enabled: false },
    replicaCount: 3,
    image: { repository: 'registry.example/mapper-service', tag: '9.9.9' },
    options: { logging: { level: 'warn' }, health: null, rateLimit: { max: 50 } },
    serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'kube-prometheus' } },
  })
  t.strictSame(objects.map((object) => object.kind).sort(), ['ConfigMap', 'ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service', 'ServiceMonitor'], 'no autoscaler')
  validateObjects(t, objects)
  const deployment = one(objects, 'Deployment')
  t.equal(deployment.spec.replicas, 3, 'replicaCount applies without the autoscaler')
  t.equal(containerOf(objects).image, 'registry.example/mapper-service:9.9.9')
  t.equal(deployment.metadata.labels['app.kubernetes.io/version'], '9.9.9', 'the version label is the image tag')
  const pod = podOf(objects)
  for (const [key, value] of Object.entries(placement)) t.strictSame(pod[key], value, `${key} as given`)
  const defaults = podOf(await helm.template('prod'))
  for (const key of Object.keys(placement)) t.equal(defaults[key], undefined, `no ${key} by default`)

  const options = optionsOf(objects)
  t.same(options, { logging: { level: 'warn' }, rateLimit: { max: 50 }, isolation: { threads: 1 } }, 'the options as given (health removed), worker threads added')
  t.doesNotThrow(() => resolvedAtStart(options))
  const checksum = (objects: readonly K8sObject[]): string => one(objects, 'Deployment').spec.template.metadata.annotations['checksum/options']
  t.not(checksum(objects), checksum(await helm.template('prod')), 'new options roll the pods')

  // ServiceMonitor is a CRD: its shape (monitoring.coreos.com/v1) checked by hand.
  const monitor = one(objects, 'ServiceMonitor')
  const service = one(objects, 'Service')
  t.equal(monitor.apiVersion, 'monitoring.coreos.com/v1')
  t.equal(monitor.metadata.name, 'prod-mapper-service')
  t.strictSame(Object.keys(monitor.spec).sort(), ['endpoints', 'selector'])
  for (const [label, value] of Object.entries(monitor.spec.selector.matchLabels as Record<string, string>)) {
    t.equal(service.metadata.labels[label], value, `the ServiceMonitor selects the Service by ${label}`)
  }
  t.equal(monitor.spec.endpoints.length, 1)
  const [endpoint] = monitor.spec.endpoints
  t.equal(endpoint.port, service.spec.ports[0].name, 'scrapes the named Service port')
  t.equal(endpoint.path, '/metrics')
  t.equal(endpoint.interval, '15s')
}))

t.test('PodDisruptionBudget: whenever more than one pod runs', withHelm(async (t, helm) => {
  const budget = async (values: Values): Promise<K8sObject | undefined> => byKind(await helm.template('prod', values), 'PodDisruptionBudget')[0]
  // The renders side by side (helm is a process each), checked in turn.
  const [two, one, keepsTwo, downToOne, off, minAvailable] = await Promise.all([
    budget({ hpa: { enabled: false }, replicaCount: 2 }),
    budget({ hpa: { enabled: false }, replicaCount: 1 }),
    budget({ hpa: { minReplicas: 2 }, replicaCount: 1 }),
    budget({ hpa: { minReplicas: 1 } }),
    budget({ podDisruptionBudget: { enabled: false } }),
    budget({ podDisruptionBudget: { minAvailable: '50%' } }),
  ])
  t.ok(two, 'replicaCount 2: a budget')
  t.strictSame(two!.spec, { maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'mapper-service', 'app.kubernetes.io/instance': 'prod' } } })
  t.doesNotThrow(() => new PodDisruptionBudget(two as never).validate())
  t.equal(one, undefined, 'one pod: none (it would block every drain)')
  t.ok(keepsTwo, 'the autoscaler keeps two: a budget, whatever replicaCount says')
  t.equal(downToOne, undefined, 'the autoscaler may go down to one: none')
  t.equal(off, undefined, 'turned off')
  t.strictSame(minAvailable!.spec.minAvailable, '50%', 'minAvailable instead')
  t.equal(minAvailable!.spec.maxUnavailable, undefined, 'not both')
}))

t.test('isolation.threads follows the CPU limit, and the threads fit in the memory limit', withHelm(async (t, helm) => {
  const threads = async (values: Values): Promise<unknown> => optionsOf(await helm.template('prod', values)).isolation?.threads
  type Resources = Parameters<typeof threadsFor>[0]
  const resources = (limits: Record<string, string | number>): { resources: Resources } => ({ resources: { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '2Gi', ...limits } } })
  t.equal(await threads({}), 1, 'no CPU limit: from requests.cpu (250m), at least one')
  // The five limits rendered side by side (helm is a process each), checked in turn.
  const limits = ([['2', 2], [4, 4], ['2500m', 2], ['500m', 1], ['1.5', 1]] as const).map(([cpu, expected]) => ({ cpu, expected, values: resources({ cpu }) }))
  const rendered = await Promise.all(limits.map(({ values }) => threads(values)))
  for (const [index, { cpu, expected, values }] of limits.entries()) {
    t.equal(rendered[index], expected, `limits.cpu ${cpu}: ${expected}`)
    t.equal(expected, threadsFor(values.resources), 'the rule test/deploy.test.ts holds the kustomization to')
  }
  t.equal(await threads({ ...resources({ cpu: '4' }), options: { isolation: { threads: 2 } } }), 2, 'options.isolation.threads given: kept')
  t.equal(optionsOf(await helm.template('prod', { options: { isolation: false } })).isolation, false, 'isolation off: left off')
  const options = optionsOf(await helm.template('prod', { ...resources({ cpu: '3' }), options: { isolation: { memoryMb: 128, queue: 10 } } }))
  t.same(options.isolation, { threads: 3, memoryMb: 128, queue: 10 }, 'the rest of options.isolation kept')
  const isolation = resolveConfig(options).isolation
  t.equal(isolation === false ? false : isolation.threads, 3, 'what the app resolves')

  // threads × memoryMb + 128 MiB within limits.memory, in whatever unit it is written.
  t.ok(1 * 256 + MAIN_THREAD_MIB <= mebibytes('512Mi'), 'the defaults fit')
  t.equal(await threads({ resources: { limits: { cpu: '2', memory: '0.625Gi' } } }), 2, '2 × 256 + 128 = 640 MiB: fits 0.625Gi exactly')
  // The four refusals side by side, checked in turn.
  const [tooSmall, tooLarge, notCpu, notMemory] = await Promise.all([
    helm.refusal({ resources: { limits: { cpu: '2', memory: '512Mi' } } }),
    helm.refusal({ options: { isolation: { threads: 1, memoryMb: 512 } } }),
    helm.refusal({ resources: { limits: { cpu: 'two', memory: '1Gi' } } }),
    helm.refusal({ resources: { limits: { memory: '1 GB' } } }),
  ])
  t.match(tooSmall, /options\.isolation: 2 threads × 256 MiB \(memoryMb\) \+ 128 MiB for the main thread do not fit in resources\.limits\.memory \(512Mi\)/)
  t.match(tooLarge, /1 thread × 512 MiB/)
  t.match(notCpu, /resources\.limits\.cpu: "two" is not a CPU quantity/)
  t.match(notMemory, /resources\.limits\.memory: "1 GB" is not a memory quantity/)
}))

t.test('preStop: the pod keeps serving while it leaves the endpoints; the grace period covers it', withHelm(async (t, helm) => {
  const pod = podOf(await helm.template('prod'))
  t.strictSame(pod.containers[0].lifecycle, { preStop: { exec: { command: ['sleep', '5'] } } })
  t.equal(pod.terminationGracePeriodSeconds, 20, '5 s, the service\'s 10 s drain, and a margin')
  const longer = podOf(await helm.template('prod', { preStopSleepSeconds: 12 }))
  t.strictSame(longer.containers[0].lifecycle.preStop.exec.command, ['sleep', '12'])
  t.equal(longer.terminationGracePeriodSeconds, 27)
  const none = podOf(await helm.template('prod', { preStopSleepSeconds: 0 }))
  t.equal(none.containers[0].lifecycle, undefined, '0: no preStop')
  t.equal(none.terminationGracePeriodSeconds, 15)
}))

t.test("the README's Helm values, verbatim, lint and render", withHelm(async (t, helm) => {
  const readme = readFileSync(join(CHART, '..', '..', 'README.md'), 'utf8')
  const block = /```yaml\n(# my-values\.yaml[\s\S]*?)```/.exec(readme)
  t.ok(block, 'the README has the my-values.yaml example')
  const values = block![1]!
  const lint = await helm.lint(values)
  t.equal(lint.code, 0, `lint --strict passes with it: ${lint.stdout}${lint.stderr}`)
  const objects = await helm.template('mapper', values)
  validateObjects(t, objects)
  t.ok(byKind(objects, 'Secret').length + (podOf(objects).volumes.some((volume: K8sObject) => volume.secret !== undefined) ? 1 : 0) > 0, 'its credentials go through a Secret')
  const directory = tempDirectory(t)
  const mappings = configMapsOf(objects)[podOf(objects).volumes.find((volume: K8sObject) => volume.name === 'mappings').configMap.name]!
  for (const [file, text] of Object.entries(mappings)) writeFileSync(join(directory, file), text)
  t.ok((await loadMappings(directory)).length > 0, 'its mappings load')
  const { options } = await initContainer(t, objects)
  t.doesNotThrow(() => resolvedAtStart(options), 'its options, credentials joined, resolve')
}))

/** The README's store values (section "Helm", first line `# store-values.yaml`), once README.md has them. */
const storeValues = placedBlocks().find((block) => block.first.startsWith('# store-values.yaml'))

t.test("the README's store values (Helm), verbatim, lint and render", { skip: storeValues === undefined ? 'README.md has no `# store-values.yaml` block yet' : false }, withHelm(async (t, helm) => {
  const values = storeValues!.code
  const lint = await helm.lint(values)
  t.equal(lint.code, 0, `lint --strict passes with it: ${lint.stdout}${lint.stderr}`)
  const objects = await helm.template('mapper', values)
  validateObjects(t, objects)
  const url = (parse(values) as { store: { url: string } }).store.url
  t.equal(Buffer.from(one(objects, 'Secret').data['store-url'], 'base64').toString(), url, 'its store.url is the Secret\'s store-url')
  t.equal(envOf(objects, 'STORE_URL')!.valueFrom.secretKeyRef.key, 'store-url', 'and STORE_URL')
  const resolved = await startedWith(t, objects, url)
  t.equal(resolved.store?.url, url, 'the service resolves its store')
  t.ok(resolved.auth !== null && resolved.mappings.write.claims !== undefined, 'writes behind authentication, with claims')
}))
