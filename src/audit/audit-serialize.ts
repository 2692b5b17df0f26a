import type { AuditEvent, AuditTrailDocument } from '../../schemas/audit.js'
import { pageNumbers } from '../jsonapi/document.js'
import type { PageRequest } from '../jsonapi/pagination.js'
import type { AuditEventRow } from './audit-repository.js'

/**
 * A stored event as HCP Terraform serves it (DESIGN §8), in the types go-tfe's `AuditTrail`
 * decodes: `version` a string, `timestamp` with its zone, `meta` an object. A token's caller is
 * a "Client"; a seed file is the "System", which has no accessor id.
 */
export function toEvent (row: AuditEventRow): AuditEvent {
  return {
    id: row.id,
    version: '0',
    type: 'Resource',
    timestamp: row.timestamp,
    auth: {
      accessor_id: row.accessor_id,
      description: row.accessor_description,
      type: row.accessor_kind === 'system' ? 'System' : row.accessor_kind === 'mirror' ? 'Mirror' : 'Client',
      impersonator_id: null,
      organization_id: row.organization_id
    },
    request: { id: row.request_id },
    // a workspace's team access (the team's row, add/update/remove_team); anything else, a workspace's own
    // create/update/destroy included, is named by its resource id and meta
    resource: row.resource_type === 'workspace' && row.team_id !== null
      ? {
          id: row.workspace_id!,
          type: 'workspace',
          action: row.action,
          meta: row.permissions === null ? { team: row.team_name! } : { team: row.team_name!, permissions: row.permissions }
        }
      : { id: row.resource_id!, type: row.resource_type, action: row.action, meta: row.meta ?? {} }
  }
}

/** A page of the trail: plain JSON with a top-level `pagination` (snake_case), not JSON:API. */
export function auditTrail (events: AuditEvent[], page: PageRequest, total: number): AuditTrailDocument {
  const { totalPages, prev, next } = pageNumbers(page, total)
  return {
    data: events,
    pagination: { current_page: page.number, prev_page: prev, next_page: next, total_pages: totalPages, total_count: total }
  }
}
