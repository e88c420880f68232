// The dispatchers the plugin sends through when the deployment gives none: one keep-alive Agent
// shared by every plugin instance, and one whose connector refuses private destinations. Both are
// built on first use, so importing the plugin opens nothing.
import { Agent, type Dispatcher } from 'undici'
import { guardedConnector } from './private-network.js'

let openAgent: Agent | undefined
let guardedAgent: Agent | undefined

/** The shared Agent for a policy; undici never follows redirects through either of them. */
export function sharedAgent(denyPrivateNetworks: boolean): Dispatcher {
  if (denyPrivateNetworks) return (guardedAgent ??= new Agent({ connect: guardedConnector() }))
  return (openAgent ??= new Agent())
}
