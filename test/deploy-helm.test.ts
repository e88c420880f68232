// The Helm chart (deploy/helm), rendered by the subset renderer of helm-support.ts (no helm binary
// here): every object validated against the Kubernetes API schemas (the ServiceMonitor, a CRD, by
// hand), equivalent to the kustomize manifests, its options and mappings accepted by the app, and
// the values (HPA, ServiceMonitor, image, options, mappings, redis) doing what they say.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Service } from 'kubernetes-models/v1/Service'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { loadMappings } from '../config/mappings.js'
import { packageInfo } from '../config/package.js'
import { resolveConfig } from '../config/resolve.js'
import { buildServer } from '../server.js'
import { renderChart, renderTemplate } from './helm-support.js'

const root = packageInfo().root
const CHART = join(root, 'deploy', 'helm')
const kustomize = (file: string): Record<string, any> => parseAllDocuments(readFileSync(join(root, 'deploy', file), 'utf8'))[0]!.toJS() as Record<string, any>

const VALIDATORS: Record<string, (object: never) => { validate(): void }> = {
  ConfigMap: (object) => new ConfigMap(object),
  Service: (object) => new Service(object),
  Deployment: (object) => new Deployment(object),
  HorizontalPodAutoscaler: (object) => new HorizontalPodAutoscaler(object),
}

const byKind = (objects: Array<Record<string, any>>, kind: string): Array<Record<string, any>> => objects.filter((object) => object.kind === kind)

t.test('default values: the kustomize objects, valid against the API schemas', async (t) => {
  const { objects, files } = renderChart(CHART, 'mapper')
  t.strictSame(objects.map((object) => object.kind).sort(), ['ConfigMap', 'ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Service'])
  for (const object of objects) t.doesNotThrow(() => VALIDATORS[object.kind]!(object as never).validate(), `${object.kind} ${object.metadata.name}`)

  const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string; name: string }
  t.equal(chart.appVersion, packageInfo().version, 'appVersion is the package version')
  t.equal(chart.name, packageInfo().name)

  const [deployment] = byKind(objects, 'Deployment')
  const reference = kustomize('deployment.yaml')
  const pod = deployment!.spec.template.spec
  const referencePod = reference.spec.template.spec
  const [container] = pod.containers
  const [referenceContainer] = referencePod.containers
  t.equal(container.image, `${packageInfo().name}:${packageInfo().version}`, 'the image defaults to the appVersion')
  for (const key of ['ports', 'env', 'volumeMounts', 'readinessProbe', 'livenessProbe', 'resources', 'securityContext', 'imagePullPolicy']) {
    t.same(container[key], referenceContainer[key], `container ${key} as in deploy/deployment.yaml`)
  }
  t.same(pod.securityContext, referencePod.securityContext, 'pod security context')
  t.equal(pod.terminationGracePeriodSeconds, referencePod.terminationGracePeriodSeconds)
  t.equal(deployment!.spec.replicas, undefined, 'with the autoscaler on, it owns the replica count')
  t.same(deployment!.spec.selector.matchLabels, deployment!.spec.template.metadata.labels)

  const [service] = byKind(objects, 'Service')
  t.same(service!.spec.ports, kustomize('service.yaml').spec.ports)
  t.same(service!.spec.selector, deployment!.spec.template.metadata.labels, 'the Service selects the pods')
  const [hpa] = byKind(objects, 'HorizontalPodAutoscaler')
  t.same({ ...hpa!.spec, scaleTargetRef: { ...hpa!.spec.scaleTargetRef, name: 'x' } }, { ...kustomize('hpa.yaml').spec, scaleTargetRef: { ...kustomize('hpa.yaml').spec.scaleTargetRef, name: 'x' } })
  t.equal(hpa!.spec.scaleTargetRef.name, deployment!.metadata.name)

  // The mappings ConfigMap is mounted whole: kubelet then updates it in place, and the watch reloads.
  const volumes = Object.fromEntries(pod.volumes.map((volume: Record<string, any>) => [volume.name, volume]))
  const configMaps = Object.fromEntries(byKind(objects, 'ConfigMap').map((object) => [object.metadata.name, object]))
  t.ok(configMaps[volumes.mappings.configMap.name], 'the mappings volume is the mappings ConfigMap')
  t.ok(configMaps[volumes.options.configMap.name], 'the options volume is the options ConfigMap')
  t.equal(volumes.mappings.configMap.items, undefined, 'no items: every key is a file, and updates reach the pod')
  t.notOk(container.volumeMounts.some((mount: { subPath?: string }) => mount.subPath !== undefined), 'no subPath (it would freeze the files)')
  const referenceData = kustomize('configmap.yaml').data as Record<string, string>
  const mappingsData = configMaps[volumes.mappings.configMap.name].data as Record<string, string>
  const optionsData = configMaps[volumes.options.configMap.name].data as Record<string, string>
  t.same(JSON.parse(mappingsData['echo.json']!), JSON.parse(referenceData['echo.json']!), 'the same echo mapping')
  t.same(JSON.parse(optionsData['options.json']!), JSON.parse(referenceData['options.json']!), 'the same options')
  t.match(files['NOTES.txt'], /reload/, 'the notes say how mappings reload')

  // What the pod would read: the ConfigMaps as files, served by the app, both probes answering.
  const directory = mkdtempSync(join(tmpdir(), 'mapper-service-helm-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  for (const [file, text] of Object.entries(mappingsData)) writeFileSync(join(directory, file), text)
  const options = { ...(JSON.parse(optionsData['options.json']!) as object), logging: { level: 'silent' as const } }
  t.doesNotThrow(() => resolveConfig(options), 'options.json is valid options')
  const app = await buildServer({ options, mappings: await loadMappings(directory) })
  t.teardown(() => app.close())
  for (const probe of [container.readinessProbe, container.livenessProbe]) {
    t.equal((await app.inject({ method: 'GET', url: probe.httpGet.path })).statusCode, 200, `${probe.httpGet.path} answers 200`)
  }
})

t.test('values: autoscaler off, ServiceMonitor on, image, options and mappings', async (t) => {
  const ordered = '{ "$id": "ordered", "mapping": { "/z": "/a", "/a": "/z" } }'
  const { objects } = renderChart(CHART, 'prod', {
    hpa: { enabled: false },
    replicaCount: 3,
    image: { repository: 'registry.example/mapper-service', tag: '9.9.9' },
    options: { logging: { level: 'warn' }, health: null, rateLimit: { max: 50 } },
    mappings: { 'echo.json': null, 'ordered.json': ordered, 'nested.yaml': { $id: 'nested', mapping: { '/b': '/b', '/a': '/a' } } },
    serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'kube-prometheus' } },
  })
  t.strictSame(objects.map((object) => object.kind).sort(), ['ConfigMap', 'ConfigMap', 'Deployment', 'Service', 'ServiceMonitor'], 'no autoscaler')
  for (const object of objects.filter((o) => o.kind !== 'ServiceMonitor')) t.doesNotThrow(() => VALIDATORS[object.kind]!(object as never).validate(), object.kind)

  const [deployment] = byKind(objects, 'Deployment')
  t.equal(deployment!.spec.replicas, 3, 'replicaCount applies without the autoscaler')
  t.equal(deployment!.spec.template.spec.containers[0].image, 'registry.example/mapper-service:9.9.9')
  const defaults = byKind(renderChart(CHART, 'prod').objects, 'Deployment')[0]!
  t.not(deployment!.spec.template.metadata.annotations['checksum/options'], defaults.spec.template.metadata.annotations['checksum/options'], 'new options roll the pods')

  const configMaps = Object.fromEntries(byKind(objects, 'ConfigMap').map((object) => [object.metadata.name, object.data as Record<string, string>]))
  t.same(JSON.parse(configMaps['prod-options']!['options.json']!), { logging: { level: 'warn' }, rateLimit: { max: 50 } })
  t.doesNotThrow(() => resolveConfig(JSON.parse(configMaps['prod-options']!['options.json']!)))
  t.equal(configMaps['prod-mappings']!['ordered.json'], ordered, 'a document given as text is written as it is')
  t.same(JSON.parse(configMaps['prod-mappings']!['nested.yaml']!), { $id: 'nested', mapping: { '/a': '/a', '/b': '/b' } })
  t.strictSame(Object.keys(configMaps['prod-mappings']!).sort(), ['nested.yaml', 'ordered.json'], 'values merge as helm merges them: null removed the default echo.json')

  // ServiceMonitor is a CRD: its shape (monitoring.coreos.com/v1) checked by hand.
  const [monitor] = byKind(objects, 'ServiceMonitor')
  const [service] = byKind(objects, 'Service')
  t.equal(monitor!.apiVersion, 'monitoring.coreos.com/v1')
  t.equal(monitor!.metadata.name, 'prod')
  t.equal(monitor!.metadata.labels.release, 'kube-prometheus', 'extra labels for the Prometheus selector')
  t.strictSame(Object.keys(monitor!.spec).sort(), ['endpoints', 'selector'])
  for (const [label, value] of Object.entries(monitor!.spec.selector.matchLabels as Record<string, string>)) {
    t.equal(service!.metadata.labels[label], value, `the ServiceMonitor selects the Service by ${label}`)
  }
  t.equal(monitor!.spec.endpoints.length, 1)
  const [endpoint] = monitor!.spec.endpoints
  t.equal(endpoint.port, service!.spec.ports[0].name, 'scrapes the named Service port')
  t.equal(endpoint.path, '/metrics')
  t.match(endpoint.interval, /^\d+(ms|s|m|h)$/, 'a Prometheus duration')
  t.equal(endpoint.interval, '15s')
})

t.test('redis.url: rate limits shared by every pod, through options.rateLimit.redis', async (t) => {
  const url = 'redis://:a-password@redis-master.cache:6379/0'
  const options = (overrides: Record<string, unknown>): Record<string, any> => {
    const { objects } = renderChart(CHART, 'prod', overrides)
    const configMap = byKind(objects, 'ConfigMap').find((object) => object.metadata.name === 'prod-options')!
    t.doesNotThrow(() => new ConfigMap(configMap as never).validate())
    return JSON.parse(configMap.data['options.json'] as string) as Record<string, any>
  }
  const defaults = options({})
  t.equal(defaults.rateLimit, undefined, 'empty by default: no shared limits, the options as given')
  t.same(options({ redis: { url } }).rateLimit, { redis: url }, 'rate limiting on with its defaults when the options leave it off')
  t.same(options({ redis: { url }, options: { rateLimit: true } }).rateLimit, { redis: url }, 'rateLimit: true, the same')
  const both = options({ redis: { url }, options: { rateLimit: { max: 600, timeWindow: 1000 } } })
  t.same(both.rateLimit, { max: 600, timeWindow: 1000, redis: url }, "the options' max and timeWindow kept")
  t.same(resolveConfig(both).rateLimit, { max: 600, timeWindow: 1000, redis: url }, 'what the app resolves')
  t.same({ ...both, rateLimit: undefined }, { ...defaults, rateLimit: undefined }, 'the rest of the options untouched')

  const annotations = (overrides: Record<string, unknown>) => byKind(renderChart(CHART, 'prod', overrides).objects, 'Deployment')[0]!.spec.template.metadata.annotations
  t.equal(annotations({})['checksum/redis'], undefined)
  t.not(annotations({ redis: { url } })['checksum/redis'], annotations({ redis: { url: 'redis://other:6379/0' } })['checksum/redis'], 'another Redis rolls the pods')
  t.equal(annotations({ redis: { url } })['checksum/options'], annotations({})['checksum/options'])
})

t.test('the renderer refuses what it does not implement, instead of guessing', async (t) => {
  const context = { Values: { a: { b: 1 } }, Release: { Name: 'r' }, Chart: {} }
  t.equal(renderTemplate('x: {{ .Values.a.b }}', context), 'x: 1')
  t.equal(renderTemplate('a\n  {{- if .Values.a }}\nyes\n{{- else }}\nno\n{{- end }}', context), 'a\nyes')
  t.equal(renderTemplate('{{- $m := dict "k" 1 }}{{- if .Values.a }}{{- $m = .Values.a }}{{- $_ := set $m "c" 2 }}{{- end }}{{ toJson $m }}', { ...context, Values: { a: { b: 1 } } }), '{"b":1,"c":2}', 'assignment in a block reaches the outer variable')
  t.equal(renderTemplate('{{- $m := deepCopy .Values.a }}{{- $_ := set $m "b" 3 }}{{ toJson $m }} {{ .Values.a.b }}', context), '{"b":3} 1', 'deepCopy leaves the values alone')
  t.throws(() => renderTemplate('{{ if .Values.a }}{{ $x := 1 }}{{ end }}{{ $x }}', context), /undefined variable \$x/, 'a variable ends with its block')
  t.throws(() => renderTemplate('{{ $y = 1 }}', context), /undefined variable \$y/)
  t.throws(() => renderTemplate('{{ include "x" . }}', context), /outside the supported subset/)
  t.throws(() => renderTemplate('{{ .Values.missing }}', context), /missing/)
  t.throws(() => renderTemplate('{{ .Values.a }}', context), /not a scalar/)
  t.throws(() => renderTemplate('{{ lower .Release.Name }}', context), /unsupported function lower/)
  t.throws(() => renderTemplate('{{ if .Values.a }}', context), /without its/)
})
