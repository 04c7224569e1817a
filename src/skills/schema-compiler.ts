import { Ajv, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext the default import is module.exports, which is the plugin.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const OPTIONS: Options = {
  useDefaults: true,
  allErrors: true,
  strict: false,
  // Never register a skill's schema by its `$id`: two skills may share one and must not collide.
  addUsedSchema: false,
};

let draft07: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

// One shared instance per draft: a fresh Ajv per skill costs ~6 ms and keeps its own
// compiled meta-schema alive for as long as the skill lives.
function instanceFor(schema: Record<string, unknown>): Ajv | Ajv2020 {
  if (uses2020(schema)) {
    if (!draft2020) {
      draft2020 = new Ajv2020(OPTIONS);
      addFormats(draft2020);
    }
    return draft2020;
  }
  if (!draft07) {
    draft07 = new Ajv(OPTIONS);
    addFormats(draft07);
  }
  return draft07;
}

/** True when the schema's `$schema` names draft 2020-12. */
export function uses2020(schema: Record<string, unknown>): boolean {
  const id = schema.$schema;
  return typeof id === 'string' && id.includes('/draft/2020-12/');
}

export type CompileResult = { ok: true; validate: ValidateFunction } | { ok: false; error: string };

/**
 * Compiles a JSON Schema (draft-07 by default, 2020-12 when `$schema` says so).
 * The validator applies defaults and reports every error.
 */
export function compileSchema(schema: Record<string, unknown>): CompileResult {
  const ajv = instanceFor(schema);
  try {
    return { ok: true, validate: ajv.compile(schema) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    // The validator keeps what it needs; drop ajv's cache entry so hot reloads do not leak.
    ajv.removeSchema(schema);
  }
}
