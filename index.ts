// mapper-service: the Fastify plugin (default export), `buildServer` for a standalone instance,
// `loadMappings` for the mapping sources the environment can name, `Reloader` for hot reload, and
// the type of the `mapper` decorator through which a host calls the served mappings.
export { default, mapperService, type MapperServiceOptions } from './app.js'
export type { MapperHandle } from './service/mapping-service.js'
export { buildServer, startFromEnvironment, DEFAULT_PORT, type BuildConfig } from './server.js'
export { loadMappings, type MappingEntry, type MappingsInput, type MappingsMember } from './sources/mappings.js'
export { resolveConfig, ConfigError, type ServiceConfig } from './config/resolve.js'
export { Reloader, RELOAD_CHANNEL, type MappingsSource, type ReloadOutcome } from './service/reloader.js'
export type { Options } from './config/options-schema.js'
