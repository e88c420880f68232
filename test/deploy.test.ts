// The container and Kubernetes files, checked against the app itself (no container engine runs
// here): Kubernetes objects validated against the API schemas, probes on real routes, ports and
// images matching the package, the image's health check command run against a real server.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Service } from 'kubernetes-models/v1/Service'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { Mapper } from '../engine/index.js'
import { resolveConfig } from '../config/resolve.js'
import { buildServer, DEFAULT_PORT } from '../server.js'
import { packageInfo } from '../config/package.js'
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
  const config = manifest('configmap.yaml')
  t.doesNotThrow(() => new Deployment(deployment as never).validate(), 'Deployment')
  t.doesNotThrow(() => new Service(service as never).validate(), 'Service')
  t.doesNotThrow(() => new HorizontalPodAutoscaler(hpa as never).validate(), 'HorizontalPodAutoscaler')
  t.doesNotThrow(() => new ConfigMap(config as never).validate(), 'ConfigMap')

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
  t.equal(service.spec.ports[0].targetPort, 'http')
  t.equal(hpa.spec.scaleTargetRef.name, deployment.metadata.name)
  t.equal(hpa.spec.scaleTargetRef.kind, 'Deployment')

  // Config comes from the ConfigMap: the mounted mappings and options are what the app accepts.
  const env = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]))
  const mounts = Object.fromEntries(container.volumeMounts.map((m: { name: string; mountPath: string }) => [m.name, m.mountPath]))
  t.equal(env.MAPPINGS, mounts.mappings)
  t.ok(env.OPTIONS_FILE.startsWith(`${mounts.options}/`))
  for (const volume of pod.volumes.filter((v: { configMap?: unknown }) => v.configMap)) t.equal(volume.configMap.name, config.metadata.name)
  t.doesNotThrow(() => resolveConfig(JSON.parse(config.data['options.json'])), 'options.json is valid options')
  const mapper = new Mapper()
  for (const [key, text] of Object.entries(config.data as Record<string, string>)) {
    if (key === 'options.json') continue
    t.same(mapper.validate(JSON.parse(text)).errors, [], `${key} is a valid mapping`)
  }
  const kustomization = parse(read('deploy/kustomization.yaml')) as { resources: string[] }
  t.same([...kustomization.resources].sort(), ['configmap.yaml', 'deployment.yaml', 'hpa.yaml', 'service.yaml'])
})

t.test('Dockerfile: Node 20 slim, dependencies cached before the source, non-root, port, node health check', async (t) => {
  // One entry per instruction: a line ending in a backslash goes on on the next.
  const lines = read('Dockerfile')
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
  const froms = lines.filter((l) => l.startsWith('FROM '))
  t.ok(froms.every((l) => /^FROM node:24-slim\b/.test(l)), 'every stage is node:24-slim')
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

t.test('docker-compose.yml: the service, its health check, a bind-mounted mappings directory, OPTIONS, Redis for the rate limits', async (t) => {
  const compose = parse(read('docker-compose.yml')) as { services: Record<string, any> }
  const service = compose.services['mapper-service']
  t.equal(service.build, '.')
  t.equal(service.image, image)
  t.same(service.ports, [`${DEFAULT_PORT}:${DEFAULT_PORT}`])
  const mount = service.volumes.find((v: { type: string }) => v.type === 'bind')
  t.equal(mount.source, './mappings')
  t.equal(service.environment.MAPPINGS, mount.target)
  const options = resolveConfig(JSON.parse(service.environment.OPTIONS))
  // Rate limits counted in the compose file's own Redis, which the service waits for.
  const rateLimit = options.rateLimit
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
