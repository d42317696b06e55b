// `s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true` store URLs. Every query
// parameter is documented; any other is rejected (a typo must not be silently ignored).
import { errors } from './errors.js';

/** The query parameters an `s3:` URL may carry. */
export const S3_URL_PARAMS: readonly string[] = [
  'endpoint',
  'region',
  'forcePathStyle',
  'indexShards',
  'acceptLostUpdates',
];

/** What an `s3:` URL asks for. */
export interface ParsedS3Url {
  bucket: string;
  prefix: string;
  endpoint: string | undefined;
  region: string | undefined;
  forcePathStyle: boolean | undefined;
  indexShards: number | undefined;
  acceptLostUpdates: boolean;
}

function booleanParam(name: string, value: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw errors.invalid(`openStore(s3:): ${name} must be true or false, got "${value}"`);
}

/**
 * Reads an `s3:` URL: the host is the bucket, the path the key prefix. Credentials never
 * come from the URL (a user or password in it is `invalid_argument`): the AWS SDK's
 * default chain reads them (environment, profile, instance role). Throws
 * `invalid_argument` for an unknown or repeated parameter, a bad value, no bucket.
 */
export function parseS3Url(url: URL): ParsedS3Url {
  if (url.username !== '' || url.password !== '') {
    throw errors.invalid(
      'openStore(s3:): credentials do not belong in the URL (use the AWS environment or profile)',
    );
  }
  if (url.hash !== '') throw errors.invalid('openStore(s3:): a URL fragment is not an option');
  const bucket = decodeURIComponent(url.hostname);
  if (bucket === '')
    throw errors.invalid('openStore(s3:): the URL names no bucket (s3://bucket/prefix)');
  const seen = new Set<string>();
  for (const key of url.searchParams.keys()) {
    if (!S3_URL_PARAMS.includes(key)) {
      throw errors.invalid(
        `openStore(s3:): unknown URL option "${key}" (known: ${S3_URL_PARAMS.join(', ')})`,
      );
    }
    if (seen.has(key)) throw errors.invalid(`openStore(s3:): URL option "${key}" is given twice`);
    seen.add(key);
  }
  const p = url.searchParams;
  const shards = p.get('indexShards');
  const pathStyle = p.get('forcePathStyle');
  return {
    bucket,
    prefix: decodeURIComponent(url.pathname.replace(/^\/+/, '')),
    endpoint: p.get('endpoint') ?? undefined,
    region: p.get('region') ?? undefined,
    forcePathStyle: pathStyle === null ? undefined : booleanParam('forcePathStyle', pathStyle),
    indexShards: shards === null ? undefined : Number(shards),
    acceptLostUpdates:
      p.has('acceptLostUpdates') &&
      booleanParam('acceptLostUpdates', p.get('acceptLostUpdates') ?? ''),
  };
}
