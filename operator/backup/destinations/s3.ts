// An S3-compatible bucket as an ObjectStore, through the AWS SDK v3 (@aws-sdk/client-s3): AWS S3, Google Cloud
// Storage's S3 interoperability and self-hosted stores. Credentials are always handed in (never the SDK's default
// chain, which would ask the instance metadata service), path-style and a CA bundle are the spec's, and the SDK's
// errors become DestinationErrors that say which of unreachable, credentials, bucket or object it was.
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { Agent } from 'node:https';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { S3Destination } from '../../api/types.js';
import { DestinationError, type DestinationCause, type ObjectStore } from './store.js';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface S3StoreOptions {
  /** The destination's name (messages). */
  name: string;
  spec: S3Destination;
  /** Where `spec` is written in the SvcCluster (messages); default spec.backup.destinations[].s3. */
  field?: string;
  credentials: S3Credentials;
  /** PEM CA bundle (spec.caBundle, or the caSecret's ca.crt). */
  ca?: string;
  /** Per request: connecting and waiting for an answer. Default 10 s. */
  timeoutMs?: number;
  /** Files larger than this go up in parts of this size (S3 takes at most 5 GiB in one PUT). Default 64 MiB. */
  partBytes?: number;
}

/** S3's smallest part (all but the last) and its most parts per upload. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;

const CREDENTIAL_CODES = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'InvalidToken', 'ExpiredToken', 'Forbidden', 'InvalidClientTokenId']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** Where a destination's s3 is written unless told otherwise. */
export const DESTINATIONS_FIELD = 'spec.backup.destinations[].s3';

/** The cause of an SDK error and what to do about it (`field`: where the destination is written in the spec). */
export function classify(e: unknown, what: string, field = DESTINATIONS_FIELD): { cause: DestinationCause; message: string } {
  const err = e as { name?: string; Code?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number }; cause?: { code?: string } };
  const code = err.Code ?? err.name ?? '';
  const errno = err.code ?? err.cause?.code ?? '';
  const status = err.$metadata?.httpStatusCode;
  const said = err.message || code || String(e);
  if (code === 'NoSuchBucket') return { cause: 'BucketMissing', message: `the bucket does not exist (${said}); create it, or fix ${field}.bucket` };
  if (code === 'NoSuchKey' || (status === 404 && code === 'NotFound')) return { cause: 'ObjectMissing', message: `${what}: no such object` };
  if (CREDENTIAL_CODES.has(code) || status === 403) return { cause: 'CredentialsRefused', message: `the credentials were refused (${code || status}: ${said}); check the access key and secret in credentialsSecret (locally the AWS_* variables or the secrets folder)` };
  if (NETWORK_CODES.has(errno) || NETWORK_CODES.has(code) || code === 'TimeoutError' || code === 'RequestTimeout' || /socket hang up|timed? ?out|ECONNREFUSED|getaddrinfo/i.test(said)) {
    return { cause: 'Unreachable', message: `the endpoint cannot be reached (${errno || code}: ${said}); check ${field}.endpoint and that the store is up` };
  }
  return { cause: 'Failed', message: `${what} failed (${code || status || 'error'}: ${said})` };
}

/** The SDK, loaded on first use: every svc-operator command would otherwise pay for loading it. */
let sdkModule: Promise<typeof import('@aws-sdk/client-s3')> | undefined;
const loadSdk = () => (sdkModule ??= import('@aws-sdk/client-s3'));

/** The bucket of an S3 destination. */
export class S3Store implements ObjectStore {
  readonly label: string;
  private readonly config: S3ClientConfig;
  private client?: S3Client;
  private readonly bucket: string;
  private readonly field: string;
  private readonly partBytes: number;

  constructor(o: S3StoreOptions) {
    this.bucket = o.spec.bucket;
    this.field = o.field ?? DESTINATIONS_FIELD;
    this.partBytes = Math.max(MIN_PART_BYTES, o.partBytes ?? 64 * 1024 * 1024);
    this.label = `"${o.name}" (s3://${o.spec.bucket}${o.spec.prefix ? `/${o.spec.prefix}` : ''}${o.spec.endpoint ? ` at ${o.spec.endpoint}` : ''})`;
    const timeout = o.timeoutMs ?? 10_000;
    this.config = {
      region: o.spec.region ?? 'us-east-1',
      ...(o.spec.endpoint ? { endpoint: o.spec.endpoint } : {}),
      forcePathStyle: o.spec.forcePathStyle ?? false,
      credentials: o.credentials,
      // one retry: a store that is down is reported, and the operator's own backoff tries the step again
      maxAttempts: 2,
      // checksums only where the API requires them: several S3-compatible stores refuse the newer trailing ones
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: timeout, requestTimeout: timeout, ...(o.ca ? { httpsAgent: new Agent({ ca: o.ca, keepAlive: true }) } : {}) },
    };
  }

  /** The SDK and this store's client (made on first use). */
  private async sdk(): Promise<{ m: typeof import('@aws-sdk/client-s3'); c: S3Client }> {
    const m = await loadSdk();
    this.client ??= new m.S3Client(this.config);
    return { m, c: this.client };
  }

  private fail(e: unknown, what: string): never {
    const c = classify(e, what, this.field);
    throw new DestinationError(this.label, c.cause, c.message, { cause: e });
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const { m, c } = await this.sdk();
        const r = await c.send(new m.ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
        for (const o of r.Contents ?? []) if (o.Key) keys.push(o.Key);
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
    } catch (e) {
      this.fail(e, `listing ${prefix}`);
    }
    return keys.sort();
  }

  async putFile(key: string, file: string): Promise<void> {
    const size = statSync(file).size;
    try {
      const { m, c } = await this.sdk();
      if (size <= this.partBytes) {
        await c.send(new m.PutObjectCommand({ Bucket: this.bucket, Key: key, Body: createReadStream(file), ContentLength: size, ContentType: 'application/octet-stream' }));
        return;
      }
      await this.putParts(m, c, key, file, size);
    } catch (e) {
      this.fail(e, `uploading ${key}`);
    }
  }

  /** A multipart upload, one part at a time from the file; aborted on failure so no stored parts are left behind. */
  private async putParts(m: typeof import('@aws-sdk/client-s3'), c: S3Client, key: string, file: string, size: number): Promise<void> {
    const partBytes = Math.max(this.partBytes, Math.ceil(size / MAX_PARTS));
    const { UploadId } = await c.send(new m.CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: 'application/octet-stream' }));
    const parts: { ETag?: string; PartNumber: number }[] = [];
    try {
      for (let start = 0, n = 1; start < size; start += partBytes, n++) {
        const length = Math.min(partBytes, size - start);
        const body = createReadStream(file, { start, end: start + length - 1 });
        const r = await c.send(new m.UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId, PartNumber: n, Body: body, ContentLength: length }));
        parts.push({ ETag: r.ETag, PartNumber: n });
      }
      await c.send(new m.CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
    } catch (e) {
      await c.send(new m.AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId })).catch(() => undefined);
      throw e;
    }
  }

  async put(key: string, body: Buffer, contentType = 'application/json'): Promise<void> {
    try {
      const { m, c } = await this.sdk();
      await c.send(new m.PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }));
    } catch (e) {
      this.fail(e, `uploading ${key}`);
    }
  }

  async get(key: string): Promise<Buffer> {
    try {
      const { m, c } = await this.sdk();
      const r = await c.send(new m.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Buffer.from(await r.Body!.transformToByteArray());
    } catch (e) {
      this.fail(e, `reading ${key}`);
    }
  }

  async getFile(key: string, file: string): Promise<void> {
    try {
      const { m, c } = await this.sdk();
      const r = await c.send(new m.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      await pipeline(r.Body as Readable, createWriteStream(file));
    } catch (e) {
      this.fail(e, `downloading ${key}`);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      const { m, c } = await this.sdk();
      await c.send(new m.DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (e) {
      this.fail(e, `deleting ${key}`);
    }
  }

  close(): void {
    this.client?.destroy();
  }
}
