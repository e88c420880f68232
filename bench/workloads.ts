// The three workloads of the engine benchmark (docs/spec/performance.md §1): for each, the
// mapping document, its input, an equivalent JSONata expression and the hand-written JavaScript
// function that is the practical limit. Inputs are generated from a fixed seed, so every run
// measures the same data.
//
// What "identical output" means here: every contender produces the engine's whole envelope —
// the output's keys, then `valid` and `errors` — so the engine is not credited for skipping work
// the others do. The benchmark compares the three after a JSON round trip (which drops the
// sequence markers JSONata attaches to its arrays) with a deep strict equality.
//
// The hand-written functions also implement the documents' validators (`required`, `type`) and
// short-circuit on the first failure as the engine does, so the baseline does the same work; the
// benchmark checks that on one invalid input per validating workload. JSONata has no validators:
// its expressions transform only and always report `valid: true`, which is all the benchmark
// inputs need.
import type { Envelope, MappingDocument } from '../engine/index.js'

export type WorkloadName = 'small' | 'wide' | 'array'

export interface Workload {
  readonly name: WorkloadName
  readonly document: MappingDocument
  readonly input: unknown
  /** A JSONata expression giving the same envelope on `input`. */
  readonly jsonata: string
  /** The transform written by hand. */
  readonly handwritten: (input: unknown) => Envelope
  /** An input the document rejects, to check the hand-written validators (engine vs hand-written only). */
  readonly invalidInput?: unknown
}

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value)

/** ECMAScript Number() as `as: number` applies it, with non-finite results written as null. */
function asNumber(value: unknown): unknown {
  if (value === undefined) return undefined
  const n = typeof value === 'number' ? value : Number(value)
  return Number.isFinite(n) ? n : null
}

/** `find: { eq: { idType: doi }, pointer: /value }` written by hand. */
function findDoi(ids: unknown): unknown {
  if (ids === null || typeof ids !== 'object') return ids
  const members = Array.isArray(ids) ? ids : [ids]
  for (const member of members) {
    if (member !== null && typeof member === 'object' && (member as Json).idType === 'doi') {
      return (member as Json).value
    }
  }
  return undefined
}

/** A seeded 32-bit generator (mulberry32): the same sequence on every run and machine. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// ---------------------------------------------------------------------------------------------
// small: worked example 1 of docs/spec/language.md (§16.1), verbatim.

const citationDocument: MappingDocument = {
  $id: 'bench-small',
  mapping: {
    '/citation/title': '/title',
    '/citation/doi': { source: '/ids', find: { eq: { idType: 'doi' }, pointer: '/value' }, required: true },
    '/citation/year': { first: ['/issued/year', '/created/year'], as: 'number' },
    '/citation/authors': {
      source: '/contributors',
      each: {
        '/family': '/surname',
        '/given': { source: '/forename', default: '' },
      },
    },
    '/citation/source': { constant: 'import' },
  },
}

export const citationInput = {
  title: 'On Mapping',
  ids: [
    { idType: 'issn', value: '2049-3630' },
    { idType: 'doi', value: '10.1000/xyz123' },
  ],
  issued: { year: '2024' },
  contributors: [{ surname: 'Hopper', forename: 'Grace' }, { surname: 'Noether' }],
}

const citationJsonata = `{
  "citation": {
    "title": title,
    "doi": (ids[idType = "doi"])[0].value,
    "year": $number($exists(issued.year) ? issued.year : created.year),
    "authors": [contributors.{ "family": surname, "given": $exists(forename) ? forename : "" }],
    "source": "import"
  },
  "valid": true,
  "errors": []
}`

function mapAuthor(contributor: unknown): Json {
  const author: Json = {}
  const source = isRecord(contributor) ? contributor : undefined
  const family = source?.surname
  if (family !== undefined) author.family = family
  const given = source?.forename
  author.given = given !== undefined ? given : ''
  return author
}

function citation(input: unknown): Envelope {
  const record = isRecord(input) ? input : undefined
  const out: Json = {}
  const title = record?.title
  if (title !== undefined) out.title = title
  const doi = findDoi(record?.ids)
  if (doi === undefined) return { valid: false, errors: [{ source: '/ids', required: true, message: 'required value' }] }
  out.doi = doi
  // `first`: the first read that is not undefined (null counts as found).
  const issued = record?.issued
  let year = isRecord(issued) ? issued.year : undefined
  if (year === undefined) {
    const created = record?.created
    year = isRecord(created) ? created.year : undefined
  }
  year = asNumber(year)
  if (year !== undefined) out.year = year
  const contributors = record?.contributors
  if (Array.isArray(contributors)) out.authors = contributors.map(mapAuthor)
  else if (isRecord(contributors)) out.authors = mapAuthor(contributors)
  else if (contributors !== undefined) out.authors = contributors
  out.source = 'import'
  return { citation: out, valid: true, errors: [] }
}

// ---------------------------------------------------------------------------------------------
// wide: 200 pairings /f<i> ← { source: /f<i>, type, default, as }. The declared type alternates
// (string for even i, number for odd i) and `as` converts to the other type, so every pairing
// validates and then coerces; the default is a value of the declared type. A field is absent
// from the input when i % 29 === 7 (seven of them), so `default` fires there.

export const WIDE_FIELDS = 200

interface WideField {
  readonly key: string
  readonly pointer: string
  readonly type: 'string' | 'number'
  readonly fallback: string | number
  readonly as: 'string' | 'number'
  readonly absent: boolean
}

const wideFields: readonly WideField[] = Array.from({ length: WIDE_FIELDS }, (_, i) => {
  const isString = i % 2 === 0
  return {
    key: `f${i}`,
    pointer: `/f${i}`,
    type: isString ? 'string' : 'number',
    fallback: isString ? String(1000 + i) : 1000 + i,
    as: isString ? 'number' : 'string',
    absent: i % 29 === 7,
  } as const
})

const wideDocument: MappingDocument = {
  $id: 'bench-wide',
  mapping: Object.fromEntries(
    wideFields.map((f) => [f.pointer, { source: f.pointer, type: f.type, default: f.fallback, as: f.as }])
  ),
}

function wideInput(): Json {
  const next = seeded(0x5eed_0002)
  const input: Json = {}
  for (const f of wideFields) {
    if (f.absent) continue
    const n = Math.floor(next() * 100_000) / 4 // quarters: exact in binary, short in decimal
    input[f.key] = f.type === 'string' ? String(n) : n
  }
  return input
}

const wideJsonata = `{
${wideFields
  .map((f) => {
    const fallback = typeof f.fallback === 'string' ? JSON.stringify(f.fallback) : String(f.fallback)
    return `  "${f.key}": $${f.as}($exists(${f.key}) ? ${f.key} : ${fallback})`
  })
  .join(',\n')},
  "valid": true,
  "errors": []
}`

function wide(input: unknown): Envelope {
  const record = isRecord(input) ? input : undefined
  const out: Json = {}
  for (let i = 0; i < wideFields.length; i++) {
    const f = wideFields[i]!
    let value = record?.[f.key]
    // eslint-disable-next-line valid-typeof -- f.type is one of typeof's names, from the workload's field list
    if (value !== undefined && typeof value !== f.type) {
      return {
        valid: false,
        errors: [{ source: f.pointer, value, type: f.type, message: `must be a ${f.type}` }],
      }
    }
    if (value === undefined) value = f.fallback
    out[f.key] = f.as === 'number' ? asNumber(value) : String(value)
  }
  ;(out as Envelope).valid = true
  ;(out as Envelope).errors = []
  return out as Envelope
}

// ---------------------------------------------------------------------------------------------
// array: { records: [n records] } of 12 fields each, mapped with `each` over /records, 8 pairings
// per element: 5 pointer reads (two of them two levels deep), find, default, as: number. One
// record in ten has no doi (so `find` misses and the key is left out) and one in seven no
// language (so `default` fires).

export const ARRAY_RECORDS = 10_000

const recordMapping = {
  '/id': '/id',
  '/title': '/title',
  '/kind': '/type',
  '/year': '/issued/year',
  '/publisher': '/publisher/name',
  '/doi': { source: '/ids', find: { eq: { idType: 'doi' }, pointer: '/value' } },
  '/language': { source: '/language', default: 'und' },
  '/pages': { source: '/pages', as: 'number' },
} as const

const arrayDocument: MappingDocument = {
  $id: 'bench-array',
  mapping: { '/records': { source: '/records', each: recordMapping } },
}

const WORDS = ['mapping', 'pointer', 'record', 'graph', 'schema', 'index', 'stream', 'value', 'tree', 'query']
const TYPES = ['journal-article', 'book-chapter', 'dataset', 'report', 'proceedings-article']
const STATUSES = ['published', 'accepted', 'draft']
const LANGUAGES = ['en', 'de', 'fr', 'es', 'nl']
const PUBLISHERS = ['Acme Press', 'Open Letters', 'North Academic', 'Blue Quarto', 'Lindqvist & Sons']
const PLACES = ['London', 'Berlin', 'Lyon', 'Utrecht', 'Boston']

/** `count` records; the first k of a larger set equal the set of k (one sequential generator). */
export function arrayInput(count: number): { records: Json[] } {
  const next = seeded(0x5eed_0003)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!
  const int = (below: number): number => Math.floor(next() * below)
  const records: Json[] = new Array(count)
  for (let i = 0; i < count; i++) {
    const ids: Json[] = [{ idType: 'issn', value: `${1000 + int(9000)}-${1000 + int(9000)}` }]
    if (i % 10 === 9) {
      ids.push({ idType: 'isbn', value: `978-${int(1e9)}` })
    } else {
      if (next() < 0.5) ids.push({ idType: 'isbn', value: `978-${int(1e9)}` })
      ids.splice(int(ids.length + 1), 0, { idType: 'doi', value: `10.${1000 + int(9000)}/rec.${i}` })
    }
    const record: Json = {
      id: `rec-${i}`,
      title: `${pick(WORDS)} ${pick(WORDS)} ${i}`,
      type: pick(TYPES),
      status: pick(STATUSES),
      pages: String(1 + int(600)),
      volume: 1 + int(60),
      issue: 1 + int(12),
      issued: { year: String(1990 + int(35)), month: 1 + int(12) },
      publisher: { name: pick(PUBLISHERS), place: pick(PLACES) },
      ids,
      subjects: [pick(WORDS), pick(WORDS)],
    }
    if (i % 7 !== 3) record.language = pick(LANGUAGES)
    records[i] = record
  }
  return { records }
}

const arrayJsonata = `{
  "records": [records.{
    "id": id,
    "title": title,
    "kind": type,
    "year": issued.year,
    "publisher": publisher.name,
    "doi": (ids[idType = "doi"])[0].value,
    "language": $exists(language) ? language : "und",
    "pages": $number(pages)
  }],
  "valid": true,
  "errors": []
}`

function mapRecord(element: unknown): Json {
  const out: Json = {}
  if (!isRecord(element)) return out
  const id = element.id
  if (id !== undefined) out.id = id
  const title = element.title
  if (title !== undefined) out.title = title
  const kind = element.type
  if (kind !== undefined) out.kind = kind
  const issued = element.issued
  const year = isRecord(issued) ? issued.year : undefined
  if (year !== undefined) out.year = year
  const publisher = element.publisher
  const name = isRecord(publisher) ? publisher.name : undefined
  if (name !== undefined) out.publisher = name
  const doi = findDoi(element.ids)
  if (doi !== undefined) out.doi = doi
  const language = element.language
  out.language = language !== undefined ? language : 'und'
  const pages = asNumber(element.pages)
  if (pages !== undefined) out.pages = pages
  return out
}

function array(input: unknown): Envelope {
  const records = isRecord(input) ? input.records : undefined
  const out: Json = {}
  if (Array.isArray(records)) {
    const mapped = new Array(records.length)
    for (let i = 0; i < records.length; i++) mapped[i] = mapRecord(records[i])
    out.records = mapped
  } else if (isRecord(records)) {
    out.records = mapRecord(records)
  } else if (records !== undefined) {
    out.records = records
  }
  ;(out as Envelope).valid = true
  ;(out as Envelope).errors = []
  return out as Envelope
}

// ---------------------------------------------------------------------------------------------

export const DOCUMENTS: readonly MappingDocument[] = [citationDocument, wideDocument, arrayDocument]

export function workloads(records = ARRAY_RECORDS): Record<WorkloadName, Workload> {
  const invalidWide = wideInput()
  invalidWide.f40 = 40 // declared a string
  return {
    small: {
      name: 'small',
      document: citationDocument,
      input: citationInput,
      jsonata: citationJsonata,
      handwritten: citation,
      invalidInput: { ...citationInput, ids: [{ idType: 'issn', value: '2049-3630' }] },
    },
    wide: {
      name: 'wide',
      document: wideDocument,
      input: wideInput(),
      jsonata: wideJsonata,
      handwritten: wide,
      invalidInput: invalidWide,
    },
    array: {
      name: 'array',
      document: arrayDocument,
      input: arrayInput(records),
      jsonata: arrayJsonata,
      handwritten: array,
    },
  }
}
