/** The public face: the plugin (default export), buildApp, migrate, applySeed and their types. */
import teamAccess from './plugin.js'

export default teamAccess
export type { TeamAccessOptions } from './plugin.js'
export type { Caller } from './auth/caller.js'
export type { Authenticate } from './auth/authentication.js'
export type { Database } from './db/database.js'
export type { DatabaseLocation, PoolUsage } from './db/connect.js'
export { connect } from './db/connect.js'
export { registerPoolMetrics } from './metrics.js'
export { buildApp, API_PREFIX } from './app.js'
export { loadConfig, type Config } from './config.js'
export { migrate } from './db/migrate.js'
export { applySeed, formatSeedSummary, SeedError, type ApplySeedOptions, type SeedChanges, type SeedSummary } from './db/seed.js'
