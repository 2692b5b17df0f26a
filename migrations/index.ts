import type { Migration } from 'kysely'
import * as m0001 from './0001_initial.js'
import * as m0002 from './0002_workspace_access_counts.js'
import * as m0003 from './0003_count_triggers_lock_team.js'
import * as m0004 from './0004_seed_grants.js'
import * as m0005 from './0005_row_team_visibility.js'
import * as m0006 from './0006_policy_overrides.js'
import * as m0007 from './0007_audit_events.js'
import * as m0008 from './0008_managed_by.js'
import * as m0009 from './0009_directory_api.js'
import * as m0010 from './0010_own_schema.js'
import * as m0011 from './0011_projects.js'
import * as m0012 from './0012_workspaces_and_people.js'
import * as m0013 from './0013_mirror.js'
import * as m0014 from './0014_organization_grant_teams.js'

/** Every migration, by name; names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_workspace_access_counts': m0002,
  '0003_count_triggers_lock_team': m0003,
  '0004_seed_grants': m0004,
  '0005_row_team_visibility': m0005,
  '0006_policy_overrides': m0006,
  '0007_audit_events': m0007,
  '0008_managed_by': m0008,
  '0009_directory_api': m0009,
  '0010_own_schema': m0010,
  '0011_projects': m0011,
  '0012_workspaces_and_people': m0012,
  '0013_mirror': m0013,
  '0014_organization_grant_teams': m0014
}
