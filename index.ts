// mapper-service: the Fastify plugin (default export), `buildServer` for a standalone instance,
// and `loadMappings` for the mapping sources the environment can name.
export { default, mapperService, type MapperServiceOptions } from './app.js'
export { buildServer, startFromEnvironment, DEFAULT_PORT, type BuildConfig } from './server.js'
export { loadMappings, type MappingEntry, type MappingsInput } from './config/mappings.js'
export { resolveConfig, ConfigError, type ServiceConfig } from './config/resolve.js'
export type { Options } from './schemas/options.js'
