// The container and Kubernetes files, checked against the app itself (no container engine runs
// here): Kubernetes objects validated against the API schemas, as written and as the real
// `kubectl kustomize deploy/` renders them (test/helm-support.ts; skipped with the reason where
// kubectl cannot be fetched), probes on real routes, ports and images matching the package, the
// image's health check command run against a real server.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { Mapper } from '../engine/index.js'
import { loadMappings } from '../sources/mappings.js'
import { resolveConfig } from '../config/resolve.js'
import { resolveRateLimitOptions } from '../http/plugins/rate-limit/options.js'
import { buildServer, DEFAULT_PORT } from '../server.js'
import { packageInfo } from '../support/package.js'
import { MAIN_THREAD_MIB, byKind, validateObjects, mebibytes, one, threadsFor, toolsFor, type K8sObject } from './helm-support.js'
import { kustomized } from './deploy-kustomized.js'
import { untracked } from './startup-support.js'

const root = packageInfo().root
const read = (path: string): string => readFileSync(join(root, path), 'utf8')
const image = `${packageInfo().name}:${packageInfo().version}`

/**
 * The app as the image runs it, built once for the probes of the manifests and the image's health
 * check. Load shedding off: on a busy machine the event-loop delay alone would answer the probes
 * 503, and whether the routes answer is what is checked here.
 */
const app = await buildServer({ options: { logging: { level: 'silent' }, underPressure: false } })
t.teardown(() => app.close())

function manifest(file: string): Record<string, any> {
  const documents = parseAllDocuments(read(join('deploy', file)))
  t.equal(documents.length, 1, `${file} holds one object`)
  return documents[0]!.toJS() as Record<string, any>
}

t.test('Kubernetes manifests validate against the API schemas and match the app', async (t) => {
  const deployment = manifest('deployment.yaml')
  const service = manifest('service.yaml')
  const hpa = manifest('hpa.yaml')
  const pdb = manifest('pdb.yaml')
  validateObjects(t, [deployment, service, hpa, pdb])

  const pod = deployment.spec.template.spec
  const [container] = pod.containers
  t.equal(container.image, image, 'the image is this package at its version')
  t.same(container.ports, [{ name: 'http', containerPort: DEFAULT_PORT }])
  t.equal(container.env.find((e: { name: string }) => e.name === 'PORT').value, String(DEFAULT_PORT))
  t.equal(container.readinessProbe.httpGet.path, '/health/mapping')
  t.equal(container.livenessProbe.httpGet.path, '/health')
  for (const probe of [container.readinessProbe, container.livenessProbe]) {
    t.equal((await app.inject({ method: 'GET', url: probe.httpGet.path })).statusCode, 200, `${probe.httpGet.path} is a route of the app`)
    t.equal(probe.httpGet.port, 'http')
  }
  t.ok(container.resources.requests.cpu && container.resources.requests.memory, 'resource requests')
  t.equal(pod.securityContext.runAsNonRoot, true)
  t.equal(container.securityContext.allowPrivilegeEscalation, false)
  t.same(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels)
  t.same(service.spec.selector, deployment.spec.template.metadata.labels, 'the Service selects the pods')
  t.same(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels, 'the budget counts the pods')
  t.equal(service.spec.ports[0].targetPort, 'http')
  t.equal(hpa.spec.scaleTargetRef.name, deployment.metadata.name)
  t.equal(hpa.spec.scaleTargetRef.kind, 'Deployment')
  t.ok(hpa.spec.minReplicas > 1, 'the autoscaler keeps more than one pod, so a budget of one unavailable leaves one serving')

  // The generated ConfigMaps' files: options the app accepts, mappings it registers.
  t.doesNotThrow(() => resolveConfig(JSON.parse(read('deploy/options.json'))), 'options.json is valid options')
  const mapper = new Mapper()
  for (const file of readdirSync(join(root, 'deploy', 'mappings'))) {
    t.same(mapper.validate(JSON.parse(read(join('deploy', 'mappings', file)))).errors, [], `${file} is a valid mapping`)
  }
  const kustomization = parse(read('deploy/kustomization.yaml')) as { resources: string[]; configMapGenerator: Array<{ name: string; files: string[] }> }
  t.same([...kustomization.resources].sort(), ['deployment.yaml', 'hpa.yaml', 'pdb.yaml', 'service.yaml'])
  const generated = Object.fromEntries(kustomization.configMapGenerator.map((generator) => [generator.name, generator.files]))
  t.same(generated['mapper-service-options'], ['options.json'])
  t.same([...generated['mapper-service-mappings']!].sort(), readdirSync(join(root, 'deploy', 'mappings')).map((file) => `mappings/${file}`).sort(), 'every file of deploy/mappings/ is listed')
})

t.test('kubectl kustomize deploy/: no replicas beside the autoscaler, ConfigMaps mounted whole, a preStop, worker threads sized to the pod', async (t) => {
  const tools = await toolsFor(t)
  if (tools === undefined) return
  const objects = await kustomized(tools)
  t.strictSame(objects.map((object) => object.kind).sort(), ['ConfigMap', 'ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service'])
  validateObjects(t, objects)

  const deployment = one(objects, 'Deployment')
  t.equal(deployment.spec.replicas, undefined, 'no replicas: the autoscaler owns the count, an apply does not set it back')
  t.equal(one(objects, 'HorizontalPodAutoscaler').spec.scaleTargetRef.name, deployment.metadata.name)
  const pod = deployment.spec.template.spec
  const [container] = pod.containers
  t.strictSame(container.lifecycle, { preStop: { exec: { command: ['sleep', '5'] } } }, 'a preStop delay')
  t.ok(pod.terminationGracePeriodSeconds >= 5 + 10, "the grace period covers the delay and the service's 10 s drain")

  // Every ConfigMap volume names a rendered ConfigMap (the options one by its hashed name) and
  // mounts it whole: no items (a new key would never be mounted), no subPath (frozen files).
  const configMaps = Object.fromEntries(byKind(objects, 'ConfigMap').map((object) => [object.metadata.name, object as K8sObject]))
  const volumes = Object.fromEntries(pod.volumes.map((volume: K8sObject) => [volume.name, volume]))
  for (const name of ['mappings', 'options']) {
    t.ok(configMaps[volumes[name].configMap.name], `the ${name} volume is a rendered ConfigMap`)
    t.equal(volumes[name].configMap.items, undefined, `${name}: mounted whole, no items`)
  }
  t.notOk(container.volumeMounts.some((mount: { subPath?: string }) => mount.subPath !== undefined), 'no subPath')
  t.match(volumes.options.configMap.name, /^mapper-service-options-[a-z0-9]+$/, 'the options ConfigMap carries a hash of its content: a change rolls the pods')
  t.equal(volumes.mappings.configMap.name, 'mapper-service-mappings', 'the mappings ConfigMap keeps its name: updated in place, reloaded without a restart')

  // What the pod reads: the mappings directory as files, the options through OPTIONS_FILE.
  const env = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]))
  const mounts = Object.fromEntries(container.volumeMounts.map((m: { name: string; mountPath: string }) => [m.name, m.mountPath]))
  t.equal(env.MAPPINGS, mounts.mappings)
  t.equal(env.OPTIONS_FILE, `${mounts.options}/options.json`)
  const mappings = configMaps[volumes.mappings.configMap.name]!.data as Record<string, string>
  t.strictSame(Object.keys(mappings).sort(), readdirSync(join(root, 'deploy', 'mappings')).sort(), 'one key per file of deploy/mappings/')
  const options = JSON.parse(configMaps[volumes.options.configMap.name]!.data['options.json'] as string) as Record<string, any>
  const resolved = resolveConfig(options)

  // Worker threads set, not left to the node's core count, and their heaps within the memory limit.
  t.equal(typeof options.isolation?.threads, 'number', 'isolation.threads is set explicitly')
  t.equal(options.isolation.threads, threadsFor(container.resources), 'one thread per whole core of the CPU limit (else request), at least one: the rule of the chart')
  const isolation = resolved.isolation
  t.ok(isolation !== false, 'isolation on')
  if (isolation !== false) {
    const needed = isolation.threads * isolation.memoryMb + MAIN_THREAD_MIB
    t.ok(needed <= mebibytes(container.resources.limits.memory), `threads × memoryMb + ${MAIN_THREAD_MIB} MiB (${needed} MiB) within limits.memory (${container.resources.limits.memory})`)
  }

  // Served by the app as the pod would run it.
  const directory = mkdtempSync(join(tmpdir(), 'mapper-service-kustomize-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  for (const [file, text] of Object.entries(mappings)) writeFileSync(join(directory, file), text)
  const served = await buildServer({ options: { ...options, logging: { level: 'silent' }, underPressure: false }, mappings: await loadMappings(directory) })
  t.teardown(() => served.close())
  t.equal((await served.inject({ method: 'GET', url: container.readinessProbe.httpGet.path })).statusCode, 200, 'the readiness probe answers 200 with these mappings and options')
})

t.test('Dockerfile: Node 24 slim pinned to a minor, dependencies cached before the source, non-root, port, node health check', async (t) => {
  // One entry per instruction: a line ending in a backslash goes on on the next.
  const lines = read('Dockerfile')
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
  const froms = lines.filter((l) => l.startsWith('FROM '))
  const bases = froms.map((l) => l.split(/\s+/)[1])
  t.equal(new Set(bases).size, 1, `every stage on the same base: ${bases.join(', ')}`)
  t.match(bases[0], /^node:24\.\d+-slim$/, 'Node 24 slim, pinned to a minor (node:24.<minor>-slim)')
  const readme = read('README.md')
  t.ok(readme.includes(`\`${bases[0]}\``), 'the README names the pinned base, and says how to update it')
  const firstCopy = lines.findIndex((l) => l.startsWith('COPY '))
  const install = lines.findIndex((l) => l.startsWith('RUN npm ci'))
  const firstSource = lines.findIndex((l) => /^COPY (engine|\*\.ts)/.test(l))
  t.match(lines[firstCopy], /^COPY package\.json package-lock\.json/)
  t.ok(install > firstCopy && install < firstSource, 'npm ci runs before any source is copied')
  // The image serves HTML and XML bodies and rateLimit.redis without a derived image: the optional
  // cheerio and ioredis, at their peer ranges.
  for (const name of ['cheerio', 'ioredis']) {
    const at = lines.findIndex((l) => l.startsWith('RUN npm install') && l.includes(`"${name}@`))
    t.ok(at > install && at < firstSource, `${name} is installed in the dependencies stage`)
    t.match(lines[at], /^RUN npm install --save-prod --omit=dev /, `${name}: without the dev dependencies`)
    t.ok(lines[at]!.includes(`"${name}@$(node -p 'require("./package.json").peerDependencies.${name}')"`), `${name}: at the peer range of package.json`)
  }
  const final = lines.slice(lines.lastIndexOf(froms[froms.length - 1]!))
  t.ok(final.includes('USER node'), 'runs as node')
  t.ok(final.includes(`EXPOSE ${DEFAULT_PORT}`))
  const cmd = final.filter((l) => l.startsWith('CMD [')).at(-1)
  t.ok(cmd !== undefined && (JSON.parse(cmd.slice(4)) as string[]).at(-1) === 'dist/bin/mapper-service.js', 'runs the compiled entry point')
  const healthcheck = read('Dockerfile').match(/HEALTHCHECK[\s\S]*?CMD (\[.*\])/)
  t.ok(healthcheck, 'HEALTHCHECK present')
  const command = JSON.parse(healthcheck![1]!) as string[]
  t.equal(command[0], 'node', 'the health check uses node itself')
  t.match(command[2], /\/health\/mapping/)

  // Run the image's exact health check command against a real server on 127.0.0.1.
  const healthy = app
  await healthy.listen({ port: 0, host: '127.0.0.1' })
  const port = (healthy.server.address() as { port: number }).port
  // Asynchronous, so this process's own server can answer the probe.
  const run = (): Promise<number | null> =>
    new Promise((resolve) => {
      // The command as it is, without tap's process-info hooks (untracked), which no container has.
      const child = spawn(...untracked(command[0]!, command.slice(1)), { env: { ...process.env, PORT: String(port) }, timeout: 10000, stdio: 'ignore' })
      child.on('close', (code) => resolve(code))
    })
  t.equal(await run(), 0, 'exit 0 when the canary answers')
  await healthy.close()
  const failing = await buildServer({ options: { logging: { level: 'silent' }, health: { mapping: 'not-registered' } } })
  await failing.listen({ port, host: '127.0.0.1' })
  t.equal(await run(), 1, 'exit 1 when the canary fails (503)')
  await failing.close()
  t.equal(await run(), 1, 'exit 1 when nothing listens')
})

t.test('the malloc settings: the image and npm start / npm run dev run the service with the same ones', async (t) => {
  const settings = (text: string): Record<string, string> => Object.fromEntries([...text.matchAll(/\b(MALLOC_\w+)=(\d+)/g)].map((match) => [match[1]!, match[2]!]))
  const image = settings(read('Dockerfile'))
  t.same(image, { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' }, 'the image maps allocations of 128 KiB and more at a fixed threshold')
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts
  for (const name of ['start', 'dev']) t.same(settings(scripts[name]!), image, `npm ${name === 'start' ? 'start' : 'run dev'} sets them too`)
  t.ok(read('README.md').includes('MALLOC_MMAP_THRESHOLD_=131072'), 'the README says so, for other ways of running it')
})

t.test('docker-compose.yml: the service, its health check, a bind-mounted mappings directory, OPTIONS, Redis for the rate limits', async (t) => {
  const compose = parse(read('docker-compose.yml')) as { services: Record<string, any> }
  const service = compose.services['mapper-service']
  t.equal(service.build, '.')
  t.equal(service.image, image)
  // Published on the host's loopback unless MAPPER_PUBLISH_ADDRESS says otherwise (compose's
  // ${VAR:-default} interpolation, done here as compose does it).
  const interpolate = (text: string, env: Record<string, string>): string => text.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, fallback: string) => env[name] || fallback)
  t.same(service.ports.map((port: string) => interpolate(port, {})), [`127.0.0.1:${DEFAULT_PORT}:${DEFAULT_PORT}`], 'loopback only by default')
  t.same(service.ports.map((port: string) => interpolate(port, { MAPPER_PUBLISH_ADDRESS: '0.0.0.0' })), [`0.0.0.0:${DEFAULT_PORT}:${DEFAULT_PORT}`], 'every interface when asked')
  const mount = service.volumes.find((v: { type: string }) => v.type === 'bind')
  t.equal(mount.source, './mappings')
  t.equal(service.environment.MAPPINGS, mount.target)
  const options = resolveConfig(JSON.parse(service.environment.OPTIONS))
  // Rate limits counted in the compose file's own Redis, which the service waits for: the URL as
  // the rate-limit plugin resolves it when it is registered.
  const rateLimit = options.rateLimit === false ? false : resolveRateLimitOptions(options.rateLimit)
  t.ok(rateLimit !== false && rateLimit.redis !== undefined, 'OPTIONS share the rate limits in Redis')
  const redisUrl = new URL(rateLimit === false ? 'redis://none' : rateLimit.redis!)
  const redis = compose.services[redisUrl.hostname]
  t.ok(redis, `rateLimit.redis names the ${redisUrl.hostname} service`)
  t.match(redis.image, /^redis:/)
  t.same(redis.command.slice(0, 5), ['redis-server', '--save', '', '--appendonly', 'no'], 'no persistence: counters are worth one window')
  t.equal(redis.ports, undefined, 'Redis is not published outside the compose network')
  t.equal(redisUrl.port === '' ? '6379' : redisUrl.port, '6379', "Redis's own port")
  t.equal(service.depends_on[redisUrl.hostname].condition, 'service_healthy')
  t.same(redis.healthcheck.test, ['CMD', 'redis-cli', 'ping'])
  t.equal(service.healthcheck.test[1], 'node')
  t.match(service.healthcheck.test.join(' '), /\/health\/mapping/)
  const dockerignore = read('.dockerignore').split('\n')
  t.ok(dockerignore.includes('node_modules') && dockerignore.includes('dist'), '.dockerignore keeps build output and modules out')
})
