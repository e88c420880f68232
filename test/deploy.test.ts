// The container and Kubernetes files, checked against the app itself (no container engine runs
// here): Kubernetes objects validated against the API schemas, as written and as the real
// `kubectl kustomize deploy/` renders them (test/helm-support.ts; skipped with the reason where
// kubectl cannot be fetched), probes on real routes, ports and images matching the package, the
// image's health check command run against a real server.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { Mapper } from '../engine/index.js'
import { loadMappings } from '../sources/mappings.js'
import { resolveConfig } from '../config/resolve.js'
import { resolveRateLimitOptions } from '../http/plugins/rate-limit/options.js'
import { buildServer, configFromEnvironment, DEFAULT_PORT } from '../server.js'
import { packageInfo } from '../support/package.js'
import { MAIN_THREAD_MIB, byKind, validateObjects, mebibytes, one, threadsFor, toolsFor, type K8sObject } from './helm-support.js'
import { kustomized } from './deploy-kustomized.js'
import { placedBlocks } from './readme-support.js'
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
  // The image serves HTML and XML bodies, rateLimit.redis and a PostgreSQL store without a derived image: the optional
  // cheerio, ioredis and pg, at their peer ranges.
  for (const name of ['cheerio', 'ioredis', 'pg']) {
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

t.test('Dockerfile: the build stage copies everything npm run build reads, and the image takes the built page', async (t) => {
  const text = read('Dockerfile').replace(/\\\n\s*/g, '')
  const stages = text.split(/\nFROM /)
  const build = stages.find((stage) => /^\S+ AS build\b/.test(stage))
  t.ok(build !== undefined, 'a build stage')
  const copied = new Set([...build!.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(/\s+/)))
  const buildIndex = build!.indexOf('RUN npm run build')
  t.ok(buildIndex > 0, 'the build stage runs npm run build')
  const before = new Set([...build!.slice(0, buildIndex).matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(/\s+/)))
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts
  // What the build reads: tsconfig.build.json's folders and the scripts the build runs, with what they bundle.
  const tsconfig = JSON.parse(read('tsconfig.build.json')) as { include: string[] }
  const needed = [...tsconfig.include.filter((path) => path !== '*.ts'), '*.ts', 'tsconfig.json', 'tsconfig.build.json']
  for (const [, script] of scripts.build!.matchAll(/node (\S+\.mjs)/g)) needed.push(script!.split('/')[0]!)
  needed.push('playground')
  for (const path of new Set(needed)) t.ok(before.has(path) || before.has(`${path}/`), `${path} is copied before npm run build`)
  t.ok(copied.size > 0)
  const final = stages.at(-1)!
  t.match(final, /^COPY --from=build --chown=node:node \/app\/playground \.\/playground$/m, 'the image takes the page with its built script from the build stage')
  t.notMatch(final, /^COPY --chown=node:node playground /m, 'not the unbuilt folder')
})

t.test('the malloc settings: the image and npm start / npm run dev run the service with the same ones', async (t) => {
  const settings = (text: string): Record<string, string> => Object.fromEntries([...text.matchAll(/\b(MALLOC_\w+)=(\d+)/g)].map((match) => [match[1]!, match[2]!]))
  const image = settings(read('Dockerfile'))
  t.same(image, { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' }, 'the image maps allocations of 128 KiB and more at a fixed threshold')
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts
  for (const name of ['start', 'dev']) t.same(settings(scripts[name]!), image, `npm ${name === 'start' ? 'start' : 'run dev'} sets them too`)
  t.ok(read('README.md').includes('MALLOC_MMAP_THRESHOLD_=131072'), 'the README says so, for other ways of running it')
})

t.test('jemalloc: the image installs and preloads it, and npm start / npm run dev preload it where the system has it', async (t) => {
  const dockerfile = read('Dockerfile')
  const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.match(final, /apt-get install -y --no-install-recommends libjemalloc2/, 'the last stage installs Debian\'s libjemalloc2')
  t.match(final, /ln -s "\$\(find \/usr\/lib -name libjemalloc\.so\.2 \| head -n 1\)" \/usr\/local\/lib\/libjemalloc\.so\.2/, 'at one path on every architecture')
  t.match(final, /LD_PRELOAD=\/usr\/local\/lib\/libjemalloc\.so\.2/, 'and preloads it')
  t.ok(final.indexOf('LD_PRELOAD') < final.indexOf('USER node'), 'for the service\'s user too')
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts
  for (const name of ['start', 'dev']) {
    t.match(scripts[name], /exec env \$\{J:\+LD_PRELOAD=\$J\} node /, `npm ${name === 'start' ? 'start' : 'run dev'} preloads it when found`)
    // The script's own shell decides: with a jemalloc on the machine it is preloaded, without one nothing is.
    const script = scripts[name]!.replace(/exec env (\$\{J:\+LD_PRELOAD=\$J\}) node .*$/, 'env $1 sh -c \'printf %s "$LD_PRELOAD"; printf "|%s" "$OPTIONS"\'')
    const found = execFileSync('sh', ['-c', script], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })
    const [preload, options] = found.split('|')
    const installed = ['/usr/local/lib/libjemalloc.so.2', '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2', '/usr/lib/libjemalloc.so.2'].some((path) => existsSync(path))
    if (installed) t.match(preload, /libjemalloc\.so\.2$/, `npm ${name}: this machine's jemalloc`)
    else t.equal(preload, '', `npm ${name}: no jemalloc here, nothing preloaded`)
    if (name === 'dev') t.match(options, /"playground":true/, 'npm run dev still exports OPTIONS')
  }
  t.ok(read('README.md').includes('libjemalloc2'), 'the README says so')
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

/** docker-compose.yml as compose reads it: `<<: *anchor` merged (YAML 1.1 merge keys, which the yaml package applies when asked). */
const composeFile = (): { services: Record<string, any>; volumes?: Record<string, unknown> } => parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, any>; volumes?: Record<string, unknown> }

/** Compose's `${NAME:-default}` interpolation, done as compose does it. */
const interpolate = (text: string, env: Record<string, string>): string => text.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, fallback: string) => env[name] || fallback)

/** The host port a `address:host:container` entry publishes on. */
const hostPort = (entry: string): number => Number(entry.split(':').at(-2))

t.test('docker-compose.yml, profile postgres: two replicas on one PostgreSQL; the default services unchanged', async (t) => {
  const text = read('docker-compose.yml')
  const compose = composeFile()
  const services = compose.services
  // Without a profile: the service and Redis, nothing of the store.
  t.strictSame(Object.keys(services).filter((name) => services[name].profiles === undefined), ['mapper-service', 'redis'], '`docker compose up` starts what it did')
  const reference = services['mapper-service']
  t.strictSame(Object.keys(reference.depends_on), ['redis'], 'mapper-service waits for Redis only')
  t.equal(reference.environment.STORE_URL, undefined, 'mapper-service has no store')
  // Compose interpolates every service, whatever the profile: a required variable (`${X:?…}`,
  // `${X?…}`) of the profile would stop the default `docker compose up` as well.
  t.notMatch(text, /\$\{\w+:?\?/, 'no required variable')
  t.strictSame(
    Object.keys(services).filter((name) => services[name].profiles !== undefined).map((name) => [name, services[name].profiles]),
    [['postgres', ['postgres']], ['mapper-a', ['postgres']], ['mapper-b', ['postgres']]],
    'the profile: PostgreSQL and two replicas'
  )

  const postgres = services.postgres
  t.equal(postgres.image, 'postgres:16-alpine')
  t.equal(postgres.ports, undefined, 'PostgreSQL is not published outside the compose network')
  t.equal(interpolate(postgres.environment.POSTGRES_PASSWORD, { POSTGRES_PASSWORD: 'given' }), 'given', 'its password from POSTGRES_PASSWORD')
  t.equal(interpolate(postgres.environment.POSTGRES_PASSWORD, {}), '', 'with no default (the image refuses to start without one)')
  const data = postgres.volumes.find((volume: { target: string }) => volume.target === '/var/lib/postgresql/data')
  t.equal(data?.type, 'volume', 'its data in a volume')
  t.ok(Object.hasOwn(compose.volumes ?? {}, data?.source), `a named volume, ${data?.source}, declared at the top level`)
  t.strictSame(postgres.healthcheck.test, ['CMD', 'pg_isready', '-h', '127.0.0.1', '-U', postgres.environment.POSTGRES_USER, '-d', postgres.environment.POSTGRES_DB], 'ready once it answers on TCP, as the replicas reach it')

  const password = 'a1b2c3d4'
  const published: number[] = []
  for (const name of ['mapper-a', 'mapper-b']) {
    const replica = services[name]
    t.equal(replica.build, '.')
    t.equal(replica.image, image)
    const url = new URL(interpolate(replica.environment.STORE_URL, { POSTGRES_PASSWORD: password }))
    t.equal(url.protocol, 'postgres:', `${name}: STORE_URL is a PostgreSQL store`)
    t.ok(services[url.hostname]?.image?.startsWith('postgres:'), `${name}: STORE_URL names the ${url.hostname} service`)
    t.equal(url.port, '5432')
    t.equal(url.username, postgres.environment.POSTGRES_USER, 'its user')
    t.equal(url.pathname, `/${postgres.environment.POSTGRES_DB}`, 'its database')
    t.equal(url.password, password, 'the password of POSTGRES_PASSWORD')
    t.equal(replica.depends_on.postgres.condition, 'service_healthy', `${name} waits for PostgreSQL to be ready`)
    t.equal(replica.depends_on.redis.condition, 'service_healthy', `${name} waits for Redis too`)
    const { STORE_URL: _store, ...rest } = replica.environment as Record<string, string>
    t.strictSame(rest, reference.environment, `${name}: otherwise the environment of mapper-service`)
    t.strictSame(replica.volumes, reference.volumes, `${name}: the same mappings`)
    t.strictSame(replica.healthcheck, reference.healthcheck, `${name}: the same health check`)
    // Authentication is off (OPTIONS has no auth): anyone who reaches a replica can write mappings,
    // so it is published on the host's loopback, written out, not through MAPPER_PUBLISH_ADDRESS.
    t.equal(replica.ports.length, 1)
    t.match(replica.ports[0], /^127\.0\.0\.1:\d+:3333$/, `${name}: published on loopback only`)
    published.push(hostPort(replica.ports[0]))
    // What the service makes of this environment at start: the store of STORE_URL.
    const env = Object.fromEntries(Object.entries(replica.environment as Record<string, string>).map(([key, value]) => [key, interpolate(value, { POSTGRES_PASSWORD: password })]))
    const config = await configFromEnvironment({ ...env, MAPPINGS: join(root, replica.volumes[0].source) }, () => {})
    const resolved = resolveConfig(config.options)
    t.equal(resolved.store?.url, url.href, `${name}: the service resolves STORE_URL as its store`)
    t.equal(resolved.auth, null, `${name}: authentication off, as the comment says`)
  }
  t.equal(new Set([DEFAULT_PORT, ...published]).size, 3, `each replica on a host port of its own: ${published.join(', ')}`)
  t.match(text, /anyone who\s+#?\s*can reach them can write/, 'the file says that anyone who can reach the replicas can write mappings')
})

/** Why the README's curl session cannot run here, or false. */
const curlMissing = await new Promise<string | false>((resolve) => spawn('bash', ['-c', 'command -v curl'], { stdio: 'ignore' }).on('close', (code) => resolve(code === 0 ? false : 'curl is not installed (Debian: apt-get install curl)')))

/** The README's two replicas on one PostgreSQL (section "Deploying"): the commands and the curl session, once README.md has them. */
const replicaBlocks = placedBlocks().filter((block) => block.first.startsWith('export POSTGRES_PASSWORD') || block.first.startsWith('$ curl -s -X PUT localhost:3334/'))

t.test("Deploying: the README's two replicas on one PostgreSQL name the compose file's profile and ports, and its session answers as shown", { skip: replicaBlocks.length === 0 ? 'README.md has no "two replicas on one PostgreSQL" blocks yet' : false }, async (t) => {
  t.equal(replicaBlocks.length, 2, 'the commands and the session')
  const [commands, session] = replicaBlocks as [typeof replicaBlocks[0], typeof replicaBlocks[0]]
  for (const block of replicaBlocks) t.equal(block.section, 'Deploying', `line ${block.line} is under "Deploying"`)
  const services = composeFile().services
  t.match(commands.code, /docker compose --profile postgres up --build/)
  t.ok(Object.values(services).some((service) => service.profiles?.includes('postgres')), 'the profile is the compose file\'s')
  const steps = session.code.replace(/\n$/, '').split('\n').reduce<Array<{ command: string; output: string[] }>>((all, line) => {
    if (line.startsWith('$ ')) all.push({ command: line.slice(2), output: [] })
    else all.at(-1)!.output.push(line)
    return all
  }, [])
  const replicaPorts = ['mapper-a', 'mapper-b'].map((name) => hostPort(services[name].ports[0]))
  const used = steps.map((step) => Number(/localhost:(\d+)\//.exec(step.command)?.[1]))
  t.ok(used.every((port) => replicaPorts.includes(port)), `each request goes to a replica: ${used.join(', ')}`)
  t.equal(new Set(used).size, 2, 'the write on one, the mapping on the other')

  if (curlMissing !== false) {
    if (process.env.MAPPER_REQUIRE_SYSTEM_SERVICES === '1') t.fail(`MAPPER_REQUIRE_SYSTEM_SERVICES=1 and ${curlMissing}`)
    else t.comment(`${curlMissing}: the session is not run`)
    return
  }
  // The answers, from one service with a directory store standing for both replicas (the replicas'
  // sharing is the PostgreSQL store's, test/store-postgres.test.ts).
  const directory = mkdtempSync(join(tmpdir(), 'mapper-service-compose-store-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const served = await buildServer({ mappings: await loadMappings(join(root, 'mappings')), options: { logging: { level: 'silent' }, underPressure: false, isolation: false, store: { url: `file://${directory}` } } })
  t.teardown(() => served.close())
  await served.listen({ host: '127.0.0.1', port: 0 })
  const port = (served.server.address() as { port: number }).port
  for (const step of steps) {
    const command = step.command.replace(/localhost:\d+\//g, `localhost:${port}/`)
    const ran = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn('bash', ['-c', command], { timeout: 30000, stdio: ['ignore', 'pipe', 'ignore'] })
      let stdout = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
      child.on('close', (code) => resolve({ code, stdout }))
    })
    t.equal(ran.code, 0, step.command)
    t.equal(ran.stdout.trimEnd(), step.output.join('\n'), `${step.command}: the output shown`)
  }
})
