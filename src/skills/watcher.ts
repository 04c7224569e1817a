// PLACEHOLDER written by the lead so the app runs while the owner writes the real module; the owner overwrites this file.
import type { Logger } from 'pino';
import type { SkillRegistry } from './registry.js';
export interface SkillWatcherOptions { roots: string[]; registry: SkillRegistry; logger: Logger; pollMs: number }
export interface SkillWatcher { ready: Promise<void>; close(): Promise<void> }
export function watchSkills(_o: SkillWatcherOptions): SkillWatcher { return { ready: Promise.resolve(), close: async () => {} }; }
