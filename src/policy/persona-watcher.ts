// PLACEHOLDER written by the lead so the app runs while the owner writes the real module; the owner overwrites this file.
import type { Logger } from 'pino';
import type { PersonaRegistry } from './persona-registry.js';
export function watchPersonas(_d: string[], _p: PersonaRegistry, _l: Logger, _ms: number): { ready: Promise<void>; close(): Promise<void> } { return { ready: Promise.resolve(), close: async () => {} }; }
