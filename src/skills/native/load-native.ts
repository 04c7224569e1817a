// PLACEHOLDER written by the lead so the app runs while the owner writes the real module; the owner overwrites this file.
import type { Logger } from 'pino';
import type { SkillRegistry } from '../registry.js';
export async function loadNativeSkills(_dir: string, _r: SkillRegistry, _l: Logger): Promise<number> { return 0; }
