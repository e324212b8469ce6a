/**
 * Arrow IPC stream serialization into caller-provided memory. `tableToIPC` collects the stream's
 * chunks and joins them into a fresh ArrayBuffer (~the size of all column data), which is what
 * triggered a major GC on every file; here the chunks are joined into the writer's arena instead.
 */
import * as arrow from 'apache-arrow';
import type { Allocator } from './memory.ts';

/** Collects the writer's output chunks instead of queueing them. */
class ChunkSink extends arrow.AsyncByteQueue {
  readonly chunks: Uint8Array[] = [];
  byteLength = 0;
  override write(value: Uint8Array | ArrayBufferView | ArrayBuffer): void {
    const chunk =
      value instanceof Uint8Array
        ? value
        : ArrayBuffer.isView(value)
          ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
          : new Uint8Array(value);
    if (chunk.byteLength === 0) return;
    this.chunks.push(chunk);
    this.byteLength += chunk.byteLength;
  }
}

/** The Arrow IPC stream (schema, one record batch, end-of-stream) of `batch`, in `alloc`'s memory. */
export function recordBatchToIpcStream(batch: arrow.RecordBatch, alloc: Allocator): Uint8Array {
  const sink = new ChunkSink();
  const writer = new arrow.RecordBatchStreamWriter();
  writer.reset(sink, batch.schema);
  writer.write(batch);
  writer.finish();
  const out = alloc.bytes(sink.byteLength);
  let at = 0;
  for (const c of sink.chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
