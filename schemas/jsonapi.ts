import { Type, type Static } from '@sinclair/typebox'

// The JSON:API envelope pieces shared by every document we serve.

export const ErrorObject = Type.Object({
  status: Type.String({ description: 'The HTTP status, as a string.' }),
  title: Type.String({ description: 'A short, fixed summary of the problem.' }),
  detail: Type.Optional(Type.String({ description: 'What exactly is wrong.' })),
  source: Type.Optional(Type.Union([
    Type.Object({ pointer: Type.String({ description: 'JSON pointer to the offending member of the request body.' }) }),
    Type.Object({ parameter: Type.String({ description: 'The offending query parameter.' }) })
  ]))
}, { $id: 'ErrorObject' })

export const ErrorDocument = Type.Object({
  errors: Type.Array(ErrorObject, { minItems: 1 })
}, { $id: 'ErrorDocument', description: 'A JSON:API error document.' })

const nullablePage = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description })

export const PaginationMeta = Type.Object({
  'current-page': Type.Integer({ description: 'This page, from 1.' }),
  'page-size': Type.Integer({ description: 'Rows per page.' }),
  'prev-page': nullablePage('The previous page, or null on the first.'),
  'next-page': nullablePage('The next page, or null on the last.'),
  'total-pages': Type.Integer({ description: 'How many pages there are (at least 1).' }),
  'total-count': Type.Integer({ description: 'How many rows there are in all.' })
}, { $id: 'PaginationMeta' })

const nullableLink = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

export const PaginationLinks = Type.Object({
  self: Type.String({ description: 'This page.' }),
  first: Type.String({ description: 'The first page.' }),
  prev: nullableLink('The previous page, or null.'),
  next: nullableLink('The next page, or null.'),
  last: Type.String({ description: 'The last page.' })
}, { $id: 'PaginationLinks', description: 'Absolute URLs that keep the filter.' })

export type ErrorDocument = Static<typeof ErrorDocument>
export type PaginationMeta = Static<typeof PaginationMeta>
export type PaginationLinks = Static<typeof PaginationLinks>
