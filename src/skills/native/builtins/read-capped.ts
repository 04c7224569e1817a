/** Reads a fetch body up to a byte cap, then stops the download (never buffers more). */
export interface CappedBody {
  bytes: Buffer;
  /** Bytes read, at most the cap. */
  length: number;
  truncated: boolean;
}

export async function readCapped(body: ReadableStream<Uint8Array> | null, cap: number): Promise<CappedBody> {
  if (!body) return { bytes: Buffer.alloc(0), length: 0, truncated: false };
  const reader = body.getReader();
  const chunks: Buffer[] = [];
  let length = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = cap - length;
      if (value.byteLength > room) {
        chunks.push(Buffer.from(value.buffer, value.byteOffset, room));
        length += room;
        truncated = true;
        break;
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      length += value.byteLength;
    }
  } finally {
    // Stops the transfer when truncated; a no-op once the stream is done.
    await reader.cancel().catch(() => undefined);
  }
  return { bytes: Buffer.concat(chunks, length), length, truncated };
}
