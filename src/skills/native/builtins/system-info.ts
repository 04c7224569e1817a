/** `system_info`: what an operator checks first on a host: OS, uptime, load, memory. */
import os from 'node:os';
import type { NativeImpl } from '../../types.js';

function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export const systemInfo: NativeImpl = async () => {
  const total = os.totalmem();
  const free = os.freemem();
  const [l1 = 0, l5 = 0, l15 = 0] = os.loadavg();
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    os: { platform: process.platform, type: os.type(), release: os.release(), arch: os.arch() },
    uptime_seconds: Math.floor(os.uptime()),
    // Always zeros on Windows, which has no load average.
    load_average: { '1m': round(l1), '5m': round(l5), '15m': round(l15) },
    cpus: { count: cpus.length, model: cpus[0]?.model.trim() ?? null },
    memory: {
      total_bytes: total,
      free_bytes: free,
      used_bytes: total - free,
      used_percent: total > 0 ? round(((total - free) / total) * 100, 1) : 0,
    },
  };
};
