// The dispatchers the plugin sends through when the deployment gives none: one keep-alive Agent
// shared by every plugin instance, and ones whose connector refuses private destinations, one per
// `allowHosts` list. All are built on first use, so importing the plugin opens nothing.
import { Agent, type Dispatcher } from 'undici'
import { guardedConnector } from './private-network.js'

let openAgent: Agent | undefined
const guardedAgents = new Map<string, Agent>()

/** The shared Agent for a policy; undici never follows redirects through any of them. */
export function sharedAgent(denyPrivateNetworks: boolean, allowHosts: ReadonlySet<string>): Dispatcher {
  if (!denyPrivateNetworks) return (openAgent ??= new Agent())
  const key = [...allowHosts].sort().join(',')
  let agent = guardedAgents.get(key)
  if (agent === undefined) {
    agent = new Agent({ connect: guardedConnector(allowHosts) })
    guardedAgents.set(key, agent)
  }
  return agent
}
