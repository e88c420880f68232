// The real helm and kubectl (test/deploy-tools.ts) run against deploy/: `helm template` and
// `helm lint --strict` of the chart with given values, `helm install --dry-run=client` for its
// notes, and `kubectl kustomize` of the manifests, their output parsed with the `yaml` package.
// Where the tools cannot be had, a test is skipped with the reason, or fails with it when
// MAPPER_REQUIRE_SYSTEM_SERVICES=1 (.ci/run sets it).
import { execFile } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'
import { parse } from 'yaml'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Secret } from 'kubernetes-models/v1/Secret'
import { Service } from 'kubernetes-models/v1/Service'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { cacheDirectory, deployTools, type DeployTools } from './deploy-tools.js'
import { ROOT } from './startup-support.js'

export const CHART = join(ROOT, 'deploy', 'helm')
export const KUSTOMIZATION = join(ROOT, 'deploy')

export type K8sObject = Record<string, any>

export interface ToolRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

interface Planned {
  plan(count: number, comment?: string): void
  fail(message: string): void
}

/**
 * helm and kubectl, or undefined once `t` has been skipped with the reason why they cannot be had
 * (failed instead under MAPPER_REQUIRE_SYSTEM_SERVICES=1, where they must run).
 */
export async function toolsFor(t: Planned): Promise<DeployTools | undefined> {
  const { tools, reason } = await deployTools()
  if (tools !== undefined) return tools
  if (process.env.MAPPER_REQUIRE_SYSTEM_SERVICES === '1') t.fail(`MAPPER_REQUIRE_SYSTEM_SERVICES=1 and helm and kubectl cannot be had: ${reason}`)
  else t.plan(0, `skipped: ${reason}`)
  return undefined
}

/** `command` with only PATH from this environment and `env`; `input`, when given, is its standard input. */
function run(command: string, args: readonly string[], env: Record<string, string> = {}, input?: string): Promise<ToolRun> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd: ROOT, timeout: 60_000, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr: stderr || (error?.message ?? '') })
    })
    child.stdin!.end(input ?? '')
  })
}

/** The objects of a multi-document YAML stream (helm's and kustomize's output), empty documents left out. */
export function objectsOf(text: string): K8sObject[] {
  return text
    .split(/^---\s*$/m)
    .map((document) => parse(document) as K8sObject | null)
    .filter((object): object is K8sObject => object !== null && typeof object === 'object')
}

export const byKind = (objects: readonly K8sObject[], kind: string): K8sObject[] => objects.filter((object) => object.kind === kind)

/** The one object of a kind; throws when there are none or several. */
export function one(objects: readonly K8sObject[], kind: string): K8sObject {
  const found = byKind(objects, kind)
  if (found.length !== 1) throw new Error(`${found.length} objects of kind ${kind}, not one`)
  return found[0]!
}

/** Values as helm reads them: an object (written out as YAML) or a values file's exact text. */
export type Values = Record<string, unknown> | string

/**
 * helm, kept away from the user's own configuration and caches. Go's collector is off (GOGC=off):
 * a run lives a tenth of a second and allocates some 50 MB, and collecting cost a fifth of its CPU.
 */
export class Helm {
  readonly #env: Record<string, string>
  constructor(private readonly tools: DeployTools) {
    const home = join(cacheDirectory(), 'helm-home')
    this.#env = { HOME: home, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data'), GOGC: 'off' }
    mkdirSync(home, { recursive: true })
  }

  /**
   * `helm <args> -f -`, the values on standard input: an object as JSON (which is YAML, and what
   * helm turns its YAML into), a values file's text as it is. No temporary file per run.
   */
  run(args: readonly string[], values: Values = {}): Promise<ToolRun> {
    return run(this.tools.helm, [...args, '-f', '-'], this.#env, typeof values === 'string' ? values : JSON.stringify(values))
  }

  /** `helm template <release> deploy/helm`: the objects, or an Error with helm's message. */
  async template(release: string, values: Values = {}, args: readonly string[] = []): Promise<K8sObject[]> {
    const result = await this.run(['template', release, CHART, ...args], values)
    if (result.code !== 0) throw new Error(`helm template failed (exit ${result.code}): ${result.stderr.trim()}`)
    return objectsOf(result.stdout)
  }

  /** helm's message when the chart refuses to render these values (its first line); throws when it renders. */
  async refusal(values: Values): Promise<string> {
    const result = await this.run(['template', 'refused', CHART], values)
    if (result.code === 0) throw new Error('helm template rendered, where a refusal was expected')
    return result.stderr.trim().split('\n')[0]!
  }

  /** `helm lint --strict deploy/helm`. */
  lint(values: Values = {}): Promise<ToolRun> {
    return this.run(['lint', '--strict', CHART], values)
  }

  /** The notes `helm install` prints (NOTES.txt), from a client-side dry run. */
  async notes(release: string, values: Values = {}): Promise<string> {
    const result = await this.run(['install', release, CHART, '--dry-run=client'], values)
    if (result.code !== 0) throw new Error(`helm install --dry-run=client failed: ${result.stderr.trim()}`)
    const at = result.stdout.indexOf('\nNOTES:\n')
    if (at === -1) throw new Error('helm install printed no NOTES')
    return result.stdout.slice(at + '\nNOTES:\n'.length)
  }
}

/** `kubectl kustomize <directory>`: the objects, or an Error with kubectl's message. */
export async function kustomize(tools: DeployTools, directory = KUSTOMIZATION): Promise<K8sObject[]> {
  const result = await run(tools.kubectl, ['kustomize', directory], { HOME: join(cacheDirectory(), 'kubectl-home'), KUBECONFIG: '/dev/null' })
  if (result.code !== 0) throw new Error(`kubectl kustomize failed (exit ${result.code}): ${result.stderr.trim()}`)
  return objectsOf(result.stdout)
}

/** A Kubernetes CPU quantity (2, 1.5, "500m") in cores. */
export function cores(quantity: string | number): number {
  const text = String(quantity)
  const match = /^(\d+(?:\.\d+)?)(m?)$/.exec(text)
  if (match === null) throw new Error(`not a CPU quantity: ${text}`)
  return Number(match[1]) / (match[2] === 'm' ? 1000 : 1)
}

const MEMORY_UNITS: Record<string, number> = { '': 1, k: 1e3, Ki: 1024, M: 1e6, Mi: 1024 ** 2, G: 1e9, Gi: 1024 ** 3, T: 1e12, Ti: 1024 ** 4 }

/** A Kubernetes memory quantity (512Mi, 1Gi, 1G, 536870912) in MiB. */
export function mebibytes(quantity: string | number): number {
  const text = String(quantity)
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(text)
  if (match === null) throw new Error(`not a memory quantity: ${text}`)
  return (Number(match[1]) * MEMORY_UNITS[match[2] ?? '']!) / 1024 ** 2
}

/**
 * The rule both deployments follow: one worker thread per whole core of the CPU limit (else the
 * request), at least one; and what the threads' heaps and 128 MiB for the main thread need.
 */
export function threadsFor(resources: { limits?: Record<string, string | number>; requests?: Record<string, string | number> }): number {
  const cpu = resources.limits?.cpu ?? resources.requests?.cpu ?? 1
  return Math.max(1, Math.floor(cores(cpu)))
}

export const MAIN_THREAD_MIB = 128

/** The Kubernetes schemas (kubernetes-models) of the kinds the chart and the kustomization render. */
const VALIDATORS: Record<string, (object: never) => { validate(): void }> = {
  ConfigMap: (object) => new ConfigMap(object),
  Secret: (object) => new Secret(object),
  Service: (object) => new Service(object),
  Deployment: (object) => new Deployment(object),
  HorizontalPodAutoscaler: (object) => new HorizontalPodAutoscaler(object),
  PodDisruptionBudget: (object) => new PodDisruptionBudget(object),
}

/** Every rendered object valid against its kind's schema (a ServiceMonitor is a CRD: not checked). */
export function validateObjects(t: Test, objects: readonly K8sObject[]): void {
  for (const object of objects.filter((o) => o.kind !== 'ServiceMonitor')) {
    t.doesNotThrow(() => VALIDATORS[object.kind]!(object as never).validate(), `${object.kind} ${object.metadata.name} is valid`)
  }
}
