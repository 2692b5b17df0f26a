/**
 * What HashiCorp's go-tfe does with an audit-trail answer: `json.Unmarshal` into `AuditTrailList`
 * (audit_trail.go), with Go's encoding/json rules for each field type. A field Go cannot decode
 * is an error there, so it is one here: a `version` of 0 (a number into a string), a timestamp
 * without a zone (time.Time reads RFC 3339), a `meta` that is not an object (a map), a page
 * number that is not an integer. JSON null decodes into anything (it leaves the zero value).
 * @see https://github.com/hashicorp/go-tfe/blob/main/audit_trail.go
 */
type GoType = 'string' | '*string' | 'int' | 'time.Time' | 'map[string]interface{}' | { struct: Record<string, GoType> } | { slice: GoType }

const AuditTrail: GoType = {
  struct: {
    id: 'string',
    version: 'string',
    type: 'string',
    timestamp: 'time.Time',
    auth: { struct: { accessor_id: 'string', description: 'string', type: 'string', impersonator_id: '*string', organization_id: 'string' } },
    request: { struct: { id: 'string' } },
    resource: { struct: { id: 'string', type: 'string', action: 'string', meta: 'map[string]interface{}' } }
  }
}

export const AuditTrailList: GoType = {
  struct: {
    pagination: { struct: { current_page: 'int', prev_page: 'int', next_page: 'int', total_pages: 'int', total_count: 'int' } },
    data: { slice: AuditTrail }
  }
}

/** time.Time's UnmarshalJSON: RFC 3339, a zone required, any fraction of a second. */
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** The errors json.Unmarshal would return for `value` decoded into `type` (none: it decodes). */
export function goDecodeErrors (value: unknown, type: GoType = AuditTrailList, path = ''): string[] {
  if (value === null) return []
  const wrong = (want: string) => [`${path || '.'}: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go value of type ${want}`]
  if (type === 'string' || type === '*string') return typeof value === 'string' ? [] : wrong('string')
  if (type === 'int') return typeof value === 'number' && Number.isSafeInteger(value) ? [] : wrong('int')
  if (type === 'time.Time') return typeof value === 'string' && RFC_3339.test(value) && !Number.isNaN(Date.parse(value)) ? [] : wrong('time.Time')
  const isObject = typeof value === 'object' && !Array.isArray(value)
  if (type === 'map[string]interface{}') return isObject ? [] : wrong('map[string]interface {}')
  if ('slice' in type) return Array.isArray(value) ? value.flatMap((item, i) => goDecodeErrors(item, type.slice, `${path}[${i}]`)) : wrong('slice')
  if (!isObject) return wrong('struct')
  // unknown members are ignored, as encoding/json does
  return Object.entries(type.struct).flatMap(([name, field]) => goDecodeErrors((value as Record<string, unknown>)[name], field, `${path}.${name}`))
}
