import net from 'node:net';

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}
