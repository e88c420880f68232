// mapper-service/engine: the Mapper mapping language. Pure TypeScript, no I/O.
export { MAX_DOCUMENT_DEPTH, entryOf, idOf, membersOf } from './document.js'
export { Mapper, type MapperDocuments, type Prepared, type ValidateOptions } from './mapper.js'
export { CompiledMapping, type Explained, type Extra, type RunOptions } from './compiled-mapping.js'
export type { MappingEntry, MappingsInput, MappingsMember } from './mappings-input.js'
export type { Slicing } from './steps.js'
export { evaluate, evaluateMapping, extend } from './evaluate.js'
export { MAX_ELEMENTS, MAX_TRACES, type BranchTrace, type Explanation, type PairingTrace, type PluginTiming, type StageTrace, type TraceStage } from './explain/trace.js'
export { BudgetExceeded, DEFAULT_LIMITS, largeOutputBytes, LARGE_OUTPUT_BYTES, MAX_EVALUATION_DEPTH, MAX_OUTPUT_DEPTH, measure, noteLargeOutput, noteSize, resolveLimits, SharedBudget, weighUpTo, type Budget, type Limits, type Size } from './budget.js'
export { enableLinearRegExp, LinearEngineUnavailable, linearRegExp, NonLinearPattern } from './linear-regexp.js'
export { staticExpansion } from './validation/expansion.js'
export {
  countExamples,
  describeDifference,
  describeFailure,
  differences,
  exampleDiagnostics,
  runExamples,
  type Difference,
  type Example,
  type ExampleEvaluator,
  type ExampleOptions,
  type ExampleResult,
} from './examples.js'
export { mappingSchema } from './schema.js'
export { inferOutput, MAX_INFERRED_PAIRINGS, outputSchema, renderAlt, renderOutput, renderAlts, defsRef, type InferredOutput, type JsonSchema, type MappingLookup, type OutputSchemaOptions, type RefOf } from './output-schema.js'
export type { Alt, Inferred, Property } from './output-types.js'
export { boundReport, validate, type ValidationReport, type Diagnostic } from './validation/validate.js'
export { REPORT_LIMITS, type Omitted, type ReportLimits } from './validation/bounds.js'
export { DocumentError } from './errors.js'
export { KEYWORDS, isKeyword, type KeywordRecord, type OperandIssue, type Stage, type Tier } from './keywords/index.js'
export type {
  CompoundDocument,
  Descriptor,
  DescriptorObject,
  Document,
  EngineOptions,
  Environment,
  Envelope,
  ErrorObject,
  EvaluationContext,
  Extensions,
  Initializer,
  JsonValue,
  MappingDocument,
  PairingMap,
  Plugin,
  PluginOptionIssue,
  ScopeOverrides,
  Transformer,
} from './types.js'
export { screenPattern, PATTERN_LENGTH_LIMIT, PATTERN_QUANTIFIER_LIMIT, PATTERN_RANGE_LIMIT, type PatternVerdict } from './validation/pattern-screen.js'
export { parsePointer, readPointer, escapeToken, EvaluationError } from './pointer.js'
export { isObject, jsonMemberText, jsonNestsDeeper } from './values.js'
