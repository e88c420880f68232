// `kubectl kustomize deploy/`, run once per process: test/deploy.test.ts checks what it renders and
// test/deploy-helm.test.ts compares the chart's defaults with it, and the suite runs both files in
// one process (test/groups/index.ts). Each caller gets a copy of its own, so neither sees what the
// other does with the objects.
import type { DeployTools } from './deploy-tools.js'
import { kustomize, type K8sObject } from './helm-support.js'

let rendered: Promise<K8sObject[]> | undefined

/** kustomize(tools) of deploy/, the objects copied for the caller. */
export async function kustomized(tools: DeployTools): Promise<K8sObject[]> {
  rendered ??= kustomize(tools)
  return structuredClone(await rendered)
}
