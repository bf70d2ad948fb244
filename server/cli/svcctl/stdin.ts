// Reading standard input line by line (txn, put without a value, passwords).
import { createInterface } from 'node:readline';

/** A reader returning one line per call, or null at the end of input. */
export function lineReader(input: NodeJS.ReadableStream): () => Promise<string | null> {
  const rl = createInterface({ input, terminal: false, crlfDelay: Infinity });
  const it = rl[Symbol.asyncIterator]();
  let done = false;
  return async () => {
    if (done) return null;
    const r = await it.next();
    if (r.done) {
      done = true;
      rl.close();
      return null;
    }
    return r.value;
  };
}

/** All of standard input. */
export async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of input) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8');
}
