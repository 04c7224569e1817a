/**
 * The table of built-in implementations a SKILL.md may name: `builtin:<module>.<Function>`.
 * Each entry is a factory so an implementation reads configuration from the same environment
 * its requirements were checked against.
 */
import type { NativeImpl } from '../types.js';
import { httpProbe } from './builtins/http-probe.js';
import { makeQueryPromql } from './builtins/query-promql.js';
import { systemInfo } from './builtins/system-info.js';

export type BuiltinFactory = (env: NodeJS.ProcessEnv) => NativeImpl;

export const BUILTINS: Readonly<Record<string, BuiltinFactory>> = Object.freeze({
  'builtin:system.SystemInfo': () => systemInfo,
  'builtin:http.Probe': () => httpProbe,
  'builtin:prometheus.InstantQuery': makeQueryPromql,
});

/** The implementation behind an `impl` reference, or undefined when no builtin has that name. */
export function resolveBuiltin(ref: string, env: NodeJS.ProcessEnv): NativeImpl | undefined {
  const factory = Object.hasOwn(BUILTINS, ref) ? BUILTINS[ref] : undefined;
  return factory?.(env);
}
