import type { Logger } from 'pino';
import { loadPersonas, type Persona } from './personas.js';

/** Persona files → an immutable map swapped whole on reload (a change applies to the next request). */
export class PersonaRegistry {
  private map: ReadonlyMap<string, Persona> = new Map();

  constructor(
    private readonly dirs: string[],
    private readonly logger: Logger,
  ) {}

  reload(): void {
    this.map = loadPersonas(this.dirs, this.logger);
  }

  get(name: string): Persona | undefined {
    return this.map.get(name);
  }

  /** Sorted by name by code point. */
  list(): Persona[] {
    return [...this.map.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
