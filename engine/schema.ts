// The JSON Schema (draft 2020-12) of a mapping document, assembled from the keyword records: each
// record gives its operand's fragment, this file gives the language's structure around them — the
// three document forms, pairings, descriptors — with the same form rules as engine/document.ts and
// the same traversal as validation. The schema may accept more than validation (it is an editor's
// aid: completion, hovers, red squiggles), never less: whatever validates clean must also pass here.
import { DOCUMENT_MEMBERS, KEYWORDS } from './keywords/index.js'
import mappingKeyword from './keywords/structure/mapping.js'
import { published } from './keywords/grammar.js'
import type { KeywordRecord } from './keywords/record.js'

type Schema = Record<string, unknown>

const TRUTHY: Schema = { not: { enum: [false, null, 0, ''] } }

/** A slash pointer: `/` tokens, `~` only as `~0` / `~1`, and no `..` token (PTR-9, PTR-10). */
const SLASH_POINTER = '^(?:/(?:[^~]|~[01])*)?$'
const DOT_DOT_TOKEN = '(?:^|/)\\.\\.(?:/|$)'

/** An object with `name` (Ajv's strict mode wants every required key declared beside it). */
const has = (name: string, schema: unknown = true): Schema => ({ required: [name], properties: { [name]: schema } })

/** The keys whose presence at the top of an object makes it a descriptor (document.ts). */
const keywordNames = (): string[] => KEYWORDS.map((record) => record.name)

/** The keywords whose truthy operand stands for the whole descriptor (`standsAlone`): the keys beside them are never read. */
const ALONE: readonly KeywordRecord[] = (KEYWORDS as readonly KeywordRecord[]).filter((record) => record.standsAlone === true)

/** An object one of those keywords stands for. */
const standsAlone = (): Schema => ({ anyOf: ALONE.map((record) => has(record.name, TRUTHY)) })

/** An object with a keyword at its top: a descriptor, in a document's place or a pairing value's (document.ts documentForm). */
const hasKeyword = (): Schema => ({ anyOf: keywordNames().map((name) => has(name)) })

function describe(record: KeywordRecord): Schema {
  const { description, ...rest } = published(record.schema)
  const tier = record.tier === 'core' ? '' : ` (${record.tier} tier)`
  return { ...rest, description: `${description}${tier}` }
}

/** The members of a single mapping document the editor offers at the top (descriptions only: the forms decide the rules). */
function documentMembers(): Schema {
  const members: Schema = {}
  for (const record of DOCUMENT_MEMBERS) members[record.name] = { description: record.schema.description }
  members.mappings = { description: 'A compound document: mappings by any name, each registered by its own $id; the last one is the entry.' }
  return members
}

function keywordObject(): Schema {
  const records = KEYWORDS as readonly KeywordRecord[]
  const properties: Schema = {}
  for (const record of records) properties[record.name] = describe(record)
  const beside = records.flatMap((record) => (record.objectSchema === undefined ? [] : [record.objectSchema]))
  return {
    type: 'object',
    description: 'A keyword object: the value pipeline of one descriptor. Keys outside the catalogue are options of a registered plugin (or inert).',
    // A keyword that stands for the whole descriptor (`$ref`): the keys beside it are never read.
    if: standsAlone(),
    then: { properties: Object.fromEntries(ALONE.map((record) => [record.name, describe(record)])) },
    else: { properties, ...(beside.length === 0 ? {} : { allOf: beside }) },
  }
}

/** The JSON Schema of a mapping document (single, compound, or a bare pairing map). */
export function mappingSchema(): Schema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Mapper mapping document',
    description:
      'A mapping document: a keyword object (usually $id and mapping), a compound document (mappings), or a bare pairing map (target pointer → descriptor).',
    type: 'object',
    properties: documentMembers(),
    if: has('mappings', TRUTHY),
    then: { $ref: '#/$defs/compound' },
    else: {
      if: hasKeyword(),
      then: { $ref: '#/$defs/keywordObject' },
      else: { $ref: '#/$defs/pairings' },
    },
    $defs: {
      truthy: TRUTHY,
      pointer: {
        type: 'string',
        description: 'A JSON Pointer (RFC 6901), optionally in its #fragment form; no .. tokens.',
        anyOf: [{ pattern: '^#' }, { pattern: SLASH_POINTER }],
        not: { pattern: DOT_DOT_TOKEN },
      },
      compound: {
        type: 'object',
        required: ['mappings'],
        // Validation reads these beside `mappings`, and nothing else.
        properties: {
          ...Object.fromEntries(DOCUMENT_MEMBERS.filter((record) => record.documentMember === 'compound').map((record) => [record.name, describe(record)])),
          mappings: {
            type: 'object',
            description: 'Mappings by any name, each registered by its own $id; the last one is the entry.',
            additionalProperties: { $ref: '#/$defs/keywordObject' },
          },
        },
      },
      pairings: {
        type: 'object',
        description: 'Pairings: target pointer → descriptor, in written order.',
        propertyNames: { $ref: '#/$defs/pointer' },
        additionalProperties: { $ref: '#/$defs/descriptor' },
      },
      pairingValue: {
        type: ['object', 'string'],
        if: { type: 'object', ...standsAlone() },
        then: { properties: Object.fromEntries(ALONE.map((record) => [record.name, { type: 'string', description: 'The registered mapping whose pairings are used.' }])) },
        else: {
          // The descriptor rule of a pairing value (document.ts pairingValueForm): a truthy `mapping`.
          if: { type: 'object', ...has(mappingKeyword.name, TRUTHY) },
          then: { $ref: '#/$defs/keywordObject' },
          else: { if: { type: 'object' }, then: { $ref: '#/$defs/pairings' } },
        },
      },
      descriptor: {
        type: ['string', 'object', 'array'],
        description: 'A descriptor: a JSON Pointer or mapping id string, a keyword object, or a list of variants.',
        if: { type: 'array' },
        then: { items: { $ref: '#/$defs/readDescriptor' } },
        else: { $ref: '#/$defs/readDescriptor' },
      },
      readDescriptor: {
        type: ['string', 'object'],
        if: { type: 'string' },
        then: { $ref: '#/$defs/stringDescriptor' },
        else: { $ref: '#/$defs/keywordObject' },
      },
      stringDescriptor: {
        type: 'string',
        description: 'A JSON Pointer into the source (/a/b), a relative reference (../a), or a registered mapping id.',
        not: { pattern: '^#' },
        if: { pattern: '^/' },
        then: { $ref: '#/$defs/pointer' },
      },
      keywordObject: keywordObject(),
    },
  }
}
